//! The typed parts of an answer that the runner and the tool hand to `render.rs`, which alone
//! turns them into text: the notes after the output, and why a call ran nothing.

use std::time::Duration;

use agent_exec_executor::SpawnError;
use agent_exec_executor::session::{RcSnapshotError, SessionEnd};
use agent_exec_protocol::Outcome;

/// Something the model is told after the output, in brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Note {
    /// The rc snapshot did not finish within this call's (shorter) timeout.
    RcSnapshotDeferred { limit: Duration },
    /// The rc snapshot could not be made; said once.
    RcSnapshotFailed(RcSnapshotError),
    /// The session's shell was started afresh; `None`: it had ended unnoticed.
    SessionRestarted(Option<SessionEnd>),
    /// This call ended the session's shell.
    SessionEnded(SessionEnd),
    /// Exit 141 or SIGPIPE, counted as success.
    SigPipe { exit_code: Option<i32> },
    /// A trailing `| head -n N` was satisfied and the command stopped.
    StoppedAtHead { lines: usize },
    /// Processes still running when the command ended, which were ended.
    ProcessesStopped(usize),
    /// A `pty` call was ended as it waited for input nobody could give; the prompt is the last
    /// non-empty line it showed, if any.
    WaitingForInput { prompt: Option<String> },
    /// A call without a terminal was ended as a process of it waited for one.
    WaitingForTerminal(agent_exec_executor::Wait),
    /// A problem that did not stop the call.
    Warning(String),
}

/// Why a session call ran nothing (its text: `render::not_run`).
#[derive(Debug, Clone)]
pub(crate) enum NotRun {
    /// Every session is busy and none was freed within the call's timeout; the limit.
    SessionsFull(usize),
    /// Cancelled while it waited for the session.
    Cancelled,
    /// The session's shell could not be started.
    ShellStartFailed(SpawnError),
    /// The session was closed while its shell was starting.
    Closed,
    /// A call of the session yielded and its command still runs: the session is busy.
    SessionBusy {
        session: String,
        job: String,
        command: String,
    },
}

impl NotRun {
    /// The outcome of a call that ran nothing for this reason.
    pub(crate) fn outcome(&self) -> Outcome {
        match self {
            NotRun::SessionsFull(_) | NotRun::SessionBusy { .. } => Outcome::InvalidRequest,
            NotRun::Cancelled | NotRun::Closed => Outcome::Cancelled,
            NotRun::ShellStartFailed(_) => Outcome::SpawnFailed,
        }
    }
}
