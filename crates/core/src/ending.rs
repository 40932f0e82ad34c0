//! How an execution ended, in the contract's words: the one classification of an executor's
//! outcome (for calls, jobs and `job_kill` alike), and the details it carries.

use agent_exec_executor::{ExecOutcome, ExitStatus, LimitKind, SandboxSpec};
use agent_exec_protocol::{LimitHit, Outcome, SandboxDetails};

/// How an execution ended, classified once for calls, jobs and `job_kill` alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ending {
    pub(crate) outcome: Outcome,
    pub(crate) exit_code: Option<i32>,
    /// The signal that ended it, unless we ended it because the output window was full.
    pub(crate) signal: Option<i32>,
    /// Exit 141 or SIGPIPE: a reader closed the pipe early; counted as success.
    pub(crate) sigpipe: bool,
}

/// The one classification of an [`ExecOutcome`] (contract §3: 141 and SIGPIPE are success; a
/// command we stopped once the window was full succeeded).
pub(crate) fn classify(exec: &ExecOutcome) -> Ending {
    let (exit_code, signal) = match exec.status {
        Some(ExitStatus::Exited(c)) => (Some(c), None),
        Some(ExitStatus::Signaled(n)) => (None, Some(n)),
        None => (None, None),
    };
    let sigpipe = exit_code == Some(141) || signal == Some(libc_sigpipe());
    let signal = if exec.stopped_by_sink() { None } else { signal };
    let outcome = if exec.spawn_error.is_some() {
        Outcome::SpawnFailed
    } else if exec.stopped_by_sink() {
        Outcome::Success
    } else if exec.cancelled() {
        Outcome::Cancelled
    } else if exec.timed_out() || exec.waiting_for_input() {
        // A prompt nobody could answer would have waited for the timeout: it is one, early.
        Outcome::Timeout
    } else if exit_code == Some(0) || sigpipe {
        Outcome::Success
    } else if signal.is_some() {
        Outcome::Signaled
    } else {
        // A non-zero code, or (rarely) no status at all: the command did not succeed.
        Outcome::ExitNonzero
    };
    Ending {
        outcome,
        exit_code,
        signal,
        sigpipe,
    }
}

/// SIGPIPE's number on Linux (every architecture agent-exec runs on).
const fn libc_sigpipe() -> i32 {
    13
}

/// The details of a sandbox spec.
pub(crate) fn sandbox_details(spec: &SandboxSpec) -> SandboxDetails {
    SandboxDetails {
        mode: spec.mode.as_str().to_owned(),
        network: spec.network.as_str().to_owned(),
    }
}

/// The contract's name of the limit an executor reports.
pub(crate) fn limit_hit(kind: LimitKind) -> LimitHit {
    match kind {
        LimitKind::Memory => LimitHit::Memory,
        LimitKind::Procs => LimitHit::Procs,
        LimitKind::Cpu => LimitHit::Cpu,
        _ => LimitHit::FileSize,
    }
}
