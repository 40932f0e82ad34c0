//! The policy step of the pipeline: a trait so embedders can bring their own, and an approver
//! for `ask` verdicts.

use agent_exec_policy::{Context, Decision, Policy, Verdict};

use crate::validate::Invocation;

/// Decides whether a command may run. Implemented by [`agent_exec_policy::Policy`].
pub trait CommandPolicy: Send + Sync {
    /// The verdict on `target`.
    fn check(&self, target: &Invocation, ctx: &Context<'_>) -> Verdict;
}

impl CommandPolicy for Policy {
    fn check(&self, target: &Invocation, ctx: &Context<'_>) -> Verdict {
        match target {
            Invocation::Shell(command) => Policy::check(self, command, ctx),
            Invocation::Program(program, args) => self.check_argv(program, args, ctx),
        }
    }
}

/// Allows everything (for embedders that police commands elsewhere).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl CommandPolicy for AllowAll {
    fn check(&self, _: &Invocation, _: &Context<'_>) -> Verdict {
        Verdict {
            decision: Decision::Allow,
            reason: "no policy".into(),
            rule: None,
            commands: Vec::new(),
        }
    }
}

/// Asked when the policy says `ask`. Without one, the outcome is `needs_approval`.
pub trait Approver: Send + Sync {
    /// Whether `command` may run, given the policy's verdict.
    fn approve(&self, command: &str, verdict: &Verdict) -> bool;
}
