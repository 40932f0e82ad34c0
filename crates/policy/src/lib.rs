//! A command safety policy that understands the command.
//!
//! Substring deny-lists fail both ways: `rm -r -f /`, `r""m -rf /` or `bash -c 'rm -rf ~'`
//! walk past them while `git commit -m "fix shutdown handler"` gets blocked. This crate parses
//! the command with tree-sitter-bash, finds every simple command however it is nested
//! (pipelines, lists, subshells, `$(…)`, process substitution, function bodies, `trap`,
//! `eval`, `bash -c`, scripts fed to a shell or written earlier on the line, `xargs`, `find
//! -exec`, `parallel`, `ssh HOST CMD`, `docker exec`, git settings and environment variables
//! that run commands, inline Python/Perl/Ruby/Node/PHP/awk code), unwraps wrappers (`sudo`,
//! `env`, `timeout`, `runuser`, `poetry run`, …), resolves each word as the shell would where
//! that is static (quotes, escapes, braces, tilde forms, known variables and arrays with field
//! splitting, `set --`, `for` values, `cd` and `CDPATH`), follows symbolic links, and decides:
//!
//! 1. the **hardline guard** ([`Decision::Deny`], never overridable): recursive deletion of
//!    `/`, `~` or system trees at any depth, deleting, moving or truncating critical system
//!    files, formatting devices, writing to block devices, power commands, killing every
//!    process or PID 1, fork bombs, `crontab -r`, the host's root mounted into a container;
//! 2. **rules** from [`PolicyConfig`]: deny / ask / allow by command prefix or regex, the
//!    allow-list mode, denied environment names;
//! 3. the **workspace restriction** (`workspace_only`);
//! 4. **interception** of commands a dedicated tool does better (off by default).
//!
//! What cannot be resolved statically where it matters (a program name from an expansion,
//! a generated script piped into a shell, a recursive delete of `$DIR`) is
//! [`Decision::Ask`], never silently allowed.
//!
//! # Rule ids
//!
//! `Verdict::rule` is one of these ([`RuleId`] lists them; `RuleId::parse` reads a verdict's rule
//! back). The hardline guard, never overridable: `hardline.recursive-delete-root`,
//! `hardline.recursive-delete-home`, `hardline.recursive-delete-system`,
//! `hardline.recursive-delete-ancestor`, `hardline.find-delete`,
//! `hardline.rsync-delete`, `hardline.recursive-chmod`, `hardline.move-system`,
//! `hardline.system-file`, `hardline.device-format`, `hardline.device-write`, `hardline.sysrq`,
//! `hardline.power`, `hardline.kill-all`, `hardline.fork-bomb`, `hardline.crontab-remove`,
//! `hardline.host-root-mount`, `hardline.system-package`, `hardline.cluster-wipe`. Configured rules: `config.deny-prefix:RULE`,
//! `config.deny-regex:RULE`, `config.ask-prefix:RULE`, `config.ask-regex:RULE`,
//! `config.allow-prefix:RULE`, `config.allow-regex:RULE`, `config.allowlist`,
//! `config.denied-env`. The workspace restriction: `workspace.outside`, `workspace.unresolved`.
//! Interception: `intercept.read`, `intercept.grep`, `intercept.find`, `intercept.edit`,
//! `intercept.write`. What cannot be resolved statically (decision ask):
//! `unresolved.command-name`, `unresolved.pipe-to-shell`, `unresolved.pipe-to-interpreter`,
//! `unresolved.generated-script`, `unresolved.network-shell`, `unresolved.shell-string`, `unresolved.eval`,
//! `unresolved.xargs`, `unresolved.recursive-delete-target`, `unresolved.find-delete-target`,
//! `unresolved.rsync-delete-target`, `unresolved.recursive-chmod-target`,
//! `unresolved.move-target`, `unresolved.file-target`, `unresolved.script-path`,
//! `unresolved.device-format`, `unresolved.device-write`,
//! `unresolved.git-alias`, `unresolved.alias`, `unresolved.inline-code`,
//! `unresolved.kill-pattern`, `unresolved.mount-source`, `unresolved.power`,
//! `unresolved.too-complex`, `unresolved.too-long`, `unresolved.parse`,
//! `unresolved.analysis-failed`.
//!
//! The crate does no I/O except reading the file system's metadata — symbolic links (deletion
//! targets and the workspace restriction), whether a path is a directory (where a copy or a
//! link lands), a program directory's names (for a pattern in a program's path) — and
//! `/etc/passwd` (for `~user`); it never panics, and answers every input.
//!
//! What the policy knows about programs is data, in the tool table (`tools.rs`); what a
//! command does to files is computed once from it (`effects.rs`); every text it shows is in
//! `reasons.rs`. docs/policy.md, "Adding what the policy knows", says where each kind of
//! knowledge goes.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//! use agent_exec_policy::{Context, Decision, Policy};
//!
//! let policy = Policy::permissive();
//! let ctx = Context {
//!     cwd: Path::new("/work/project"),
//!     home: Some(Path::new("/home/dev")),
//!     env_keys: &[],
//! };
//!
//! let v = policy.check("sudo timeout 9 rm -r -f /", &ctx);
//! assert_eq!(v.decision, Decision::Deny);
//! assert_eq!(v.rule.as_deref(), Some("hardline.recursive-delete-root"));
//! assert_eq!(v.commands, ["rm -r -f /"]);
//!
//! let v = policy.check(r#"git commit -m "fix shutdown handler" && rm -rf ./dist"#, &ctx);
//! assert_eq!(v.decision, Decision::Allow);
//!
//! let v = policy.check("$CMD -rf /", &ctx);
//! assert_eq!(v.decision, Decision::Ask);
//! ```

#![deny(missing_docs)]

mod command;
mod config;
mod disk;
mod effects;
mod fallback;
mod flags;
mod hardline;
mod inline;
mod intercept;
mod nested;
mod parse;
mod paths;
mod reasons;
mod rule;
mod rules;
mod tools;
mod unwrap;
mod walk;
mod words;
mod workspace;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use config::{ConfigError, Interception, PolicyConfig, Rules};
pub use rule::RuleId;

use command::Io;
use command::{Class, Cmd, Finding};
use reasons::Reason;
use walk::Walker;

/// Commands longer than this are not analysed (the decision is `ask`).
const MAX_COMMAND_BYTES: usize = 256 * 1024;
/// Commands longer than this are analysed on a thread with [`LARGE_COMMAND_STACK`].
const LARGE_COMMAND_BYTES: usize = 2048;
/// Stack for analysing long commands (deep nesting recurses in the parser).
const LARGE_COMMAND_STACK: usize = 256 << 20;

/// What to do with a command: allow, ask or deny (the contract's words, defined once in
/// `agent-exec-protocol`).
pub use agent_exec_protocol::Decision;

/// The policy's answer for one command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// Why, written for the model reading it; it reads well after `Blocked: `.
    pub reason: String,
    /// The stable id of the rule that decided (`hardline.recursive-delete-root`,
    /// `config.deny-prefix:git push`, `workspace.outside`, `intercept.read`, …); `None` when
    /// no rule matched.
    pub rule: Option<String>,
    /// Every simple command found, resolved words joined by spaces, after unwrapping.
    pub commands: Vec<String>,
}

/// Where the command runs.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The working directory (absolute).
    pub cwd: &'a Path,
    /// The home directory, for `~` and `$HOME`; without it they still count as the home
    /// directory for the hardline guard.
    pub home: Option<&'a Path>,
    /// Names of the extra environment variables the request sets (checked against
    /// `denied_env`).
    pub env_keys: &'a [String],
}

/// A compiled policy: built once, reused for every call; `Send + Sync`.
#[derive(Debug)]
pub struct Policy {
    config: PolicyConfig,
    rules: rules::Compiled,
    /// Verdicts of checks that did not look at the file system, by what they were given:
    /// the same line in the same context gets the same verdict without a parse and a walk
    /// (a warm session's `true` spent a fifth of its server time there).
    remembered: Mutex<HashMap<Remembered, Verdict>>,
}

/// What a remembered verdict was given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Remembered {
    command: String,
    cwd: PathBuf,
    home: Option<PathBuf>,
    env_keys: Vec<String>,
}

/// The most verdicts remembered (past it the memory starts again), and the most variable
/// names a remembered request sets; a remembered line is at most [`LARGE_COMMAND_BYTES`].
const REMEMBERED_VERDICTS: usize = 512;
const REMEMBERED_ENV_NAMES: usize = 16;

impl Policy {
    /// Compiles a configuration; errors name the bad rule. Relative workspace and readable
    /// roots are made absolute here, against the process's working directory, so a request's
    /// own `cwd` cannot move them.
    pub fn new(mut config: PolicyConfig) -> Result<Policy, ConfigError> {
        let rules = rules::Compiled::new(&config.rules, config.allowlist_mode)?;
        let base = std::env::current_dir().unwrap_or_else(|_| "/".into());
        for root in config
            .workspace_roots
            .iter_mut()
            .chain(config.extra_readable_roots.iter_mut())
        {
            *root = paths::normalize(&base, root);
        }
        Ok(Policy::compiled(config, rules))
    }

    fn compiled(config: PolicyConfig, rules: rules::Compiled) -> Policy {
        Policy {
            config,
            rules,
            remembered: Mutex::new(HashMap::new()),
        }
    }

    /// The default configuration: the hardline guard only (and asking about what cannot be
    /// resolved).
    pub fn permissive() -> Policy {
        let config = PolicyConfig::default();
        let rules = rules::Compiled::new(&config.rules, false)
            .expect("the default configuration has no rules to fail");
        Policy::compiled(config, rules)
    }

    /// The configuration this policy was built from.
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }

    /// Decides about a shell command string.
    pub fn check(&self, command: &str, ctx: &Context<'_>) -> Verdict {
        if command.trim().is_empty() {
            return Verdict {
                decision: Decision::Allow,
                reason: Reason::EmptyCommand.text(),
                rule: None,
                commands: Vec::new(),
            };
        }
        if command.len() > MAX_COMMAND_BYTES {
            return Verdict {
                decision: Decision::Ask,
                reason: Reason::TooLong {
                    bytes: command.len(),
                    max: MAX_COMMAND_BYTES,
                }
                .text(),
                rule: Some(RuleId::UnresolvedTooLong.as_str().into()),
                commands: Vec::new(),
            };
        }
        let run = || {
            let mut walker = Walker::new(ctx.cwd, ctx.home);
            walker.walk_script(command, &Io::default());
            self.decide(walker, ctx)
        };
        if command.len() > LARGE_COMMAND_BYTES {
            // Deeply nested input makes the parser and the walk recurse deep: give a long command
            // a thread with a stack that cannot run out (reserved, only touched pages are used).
            // Its verdict is not remembered (the looks are watched per thread).
            return std::thread::scope(|scope| {
                std::thread::Builder::new()
                    .stack_size(LARGE_COMMAND_STACK)
                    .spawn_scoped(scope, run)
                    .ok()
                    .and_then(|h| h.join().ok())
            })
            .unwrap_or_else(|| Verdict {
                decision: Decision::Ask,
                reason: Reason::AnalysisFailed.text(),
                rule: Some(RuleId::UnresolvedAnalysisFailed.as_str().into()),
                commands: Vec::new(),
            });
        }
        let key = (ctx.env_keys.len() <= REMEMBERED_ENV_NAMES).then(|| Remembered {
            command: command.to_owned(),
            cwd: ctx.cwd.to_path_buf(),
            home: ctx.home.map(Path::to_path_buf),
            env_keys: ctx.env_keys.to_vec(),
        });
        let remembered = || {
            self.remembered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(verdict) = key.as_ref().and_then(|key| remembered().get(key).cloned()) {
            return verdict;
        }
        let (verdict, looked) = disk::watching(run);
        if let Some(key) = key
            && !looked
        {
            let mut map = remembered();
            if map.len() >= REMEMBERED_VERDICTS {
                map.clear();
            }
            map.insert(key, verdict.clone());
        }
        verdict
    }

    /// Decides about running `program` with `args` directly, without a shell.
    pub fn check_argv(&self, program: &str, args: &[String], ctx: &Context<'_>) -> Verdict {
        let mut walker = Walker::new(ctx.cwd, ctx.home);
        let mut words = vec![words::Word::lit(program)];
        words.extend(args.iter().map(|a| words::Word::lit(a)));
        walker.emit(
            words,
            Vec::new(),
            Vec::new(),
            &Io::default(),
            command::Origin::Direct,
        );
        self.decide(walker, ctx)
    }

    fn decide(&self, walker: Walker, ctx: &Context<'_>) -> Verdict {
        let home = paths::home_path(ctx.home);
        let analysis = walker.out;
        let guard = hardline::Ctx {
            home: &home,
            start: ctx.cwd,
            links: &analysis.links,
        };
        let mut findings: Vec<Finding> = analysis.findings;
        for cmd in &analysis.rough {
            if let Some(f) = hardline::check(cmd, &guard)
                && f.class == Class::Hardline
            {
                findings.push(f);
            }
        }
        for name in ctx.env_keys {
            if let Some(f) = self.env_finding(name) {
                findings.push(f);
            }
        }
        let roots = self.config.workspace_only.then(|| {
            workspace::Roots::new(
                &self.config.workspace_roots,
                &self.config.extra_readable_roots,
                ctx.cwd,
            )
        });
        if let Some(roots) = &roots
            && let Some(f) = workspace::check_cwd(ctx.cwd, roots)
        {
            findings.push(f);
        }
        let mut allowed_by: Option<String> = None;
        for cmd in &analysis.cmds {
            findings.extend(self.check_cmd(cmd, &guard, ctx, roots.as_ref(), &mut allowed_by));
        }
        let commands: Vec<String> = analysis
            .cmds
            .iter()
            .map(Cmd::display)
            .filter(|c| !c.is_empty())
            .collect();
        // The first of the most severe findings decides.
        let best = findings
            .into_iter()
            .enumerate()
            .min_by_key(|(i, f)| (f.key(), *i))
            .map(|(_, f)| f);
        match best {
            Some(f) => Verdict {
                decision: f.decision,
                reason: f.reason,
                rule: Some(f.rule.to_string()),
                commands,
            },
            None => Verdict {
                decision: Decision::Allow,
                reason: match (&allowed_by, commands.len()) {
                    (Some(rule), _) => Reason::AllowedByRule { rule }.text(),
                    (None, 1) => Reason::NoRuleMatched.text(),
                    (None, n) => Reason::NoRuleMatchedAny { count: n }.text(),
                },
                rule: allowed_by,
                commands,
            },
        }
    }

    fn check_cmd(
        &self,
        cmd: &Cmd,
        guard: &hardline::Ctx<'_>,
        ctx: &Context<'_>,
        roots: Option<&workspace::Roots>,
        allowed_by: &mut Option<String>,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        if let Some(f) = hardline::check(cmd, guard) {
            out.push(f);
        }
        let rule = self.rules.check(cmd);
        let explicitly_allowed = match rule {
            rules::RuleMatch::Found(f) => {
                out.push(f);
                false
            }
            rules::RuleMatch::Allowed(id) => {
                if allowed_by.is_none() {
                    *allowed_by = Some(id);
                }
                true
            }
            rules::RuleMatch::None => false,
        };
        for name in &cmd.assigns {
            if let Some(f) = self.env_finding(name) {
                out.push(f);
            }
        }
        if let Some(roots) = roots
            && let Some(f) = workspace::check(cmd, roots, ctx.home, guard.links)
        {
            out.push(f);
        }
        if !explicitly_allowed && let Some(f) = intercept::check(cmd, &self.config.interception) {
            out.push(f);
        }
        out
    }

    fn env_finding(&self, name: &str) -> Option<Finding> {
        let pattern = self.rules.denied_env(name)?;
        Some(Finding::deny(
            Class::Env,
            RuleId::ConfigDeniedEnv,
            Reason::DeniedEnv { name, pattern }.text(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn policy_is_send_and_sync() {
        assert_send_sync::<Policy>();
    }
}
