//! How a call ended: its exit status, why agent-exec stopped it, what was left behind.

use std::time::{Duration, Instant};

use crate::containment::{GroupKind, LimitFallback, LimitKind};
use crate::spawn::SpawnError;
use crate::status::ExitStatus;

/// Why agent-exec ended a call before its process ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// The deadline passed.
    Timeout,
    /// The caller cancelled.
    Cancelled,
    /// The sink had all it could show (a trailing `| head -n N` was satisfied).
    SinkFull,
    /// The session the call ran in was closed.
    SessionClosed,
    /// The call's output was idle while a process of it was blocked on input nobody could give
    /// ([`ExecSpec::prompt_idle`](crate::ExecSpec::prompt_idle)): a PTY call's prompt, or a
    /// terminal a call without one waited for ([`ExecOutcome::waited`] says which).
    WaitingForInput,
    /// A watched resource limit was passed: the call's CPU time, or its socket buffers
    /// (`ExecOutcome::limit_hit` says which).
    LimitReached,
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExecOutcome {
    /// How the main process ended; `None` when it could not be started.
    pub status: Option<ExitStatus>,
    /// Why the call was ended early, if it was.
    pub stop: Option<Stop>,
    /// Wall time from spawn to the end of cleanup.
    pub duration: Duration,
    /// Why the program could not be started.
    pub spawn_error: Option<SpawnError>,
    /// Processes still running after the main process ended (background children) that were
    /// stopped at the end of the call.
    pub processes_stopped: usize,
    /// Output pipes were still held open when the drain bound passed.
    pub drain_cut_short: bool,
    /// How the call's processes were contained.
    pub containment: Option<GroupKind>,
    /// The resource limit that ended or hampered it, if one did.
    pub limit_hit: Option<LimitKind>,
    /// Problems that did not stop it (a limit kept more loosely than asked).
    pub warnings: Vec<LimitFallback>,
    /// With [`Stop::WaitingForInput`]: the process found waiting, and on what.
    pub waited: Option<crate::waiting::Wait>,
}

impl ExecOutcome {
    /// The deadline passed and the command was ended.
    pub fn timed_out(&self) -> bool {
        self.stop == Some(Stop::Timeout)
    }

    /// The call was cancelled (or its session closed) and the command was ended.
    pub fn cancelled(&self) -> bool {
        matches!(self.stop, Some(Stop::Cancelled | Stop::SessionClosed))
    }

    /// The command was ended as it waited for input at a prompt ([`Stop::WaitingForInput`]).
    pub fn waiting_for_input(&self) -> bool {
        self.stop == Some(Stop::WaitingForInput)
    }

    /// The sink asked to stop (it had all it could show) and the command was ended.
    pub fn stopped_by_sink(&self) -> bool {
        self.stop == Some(Stop::SinkFull)
    }

    pub(crate) fn spawn_failed(error: SpawnError, start: Instant) -> ExecOutcome {
        ExecOutcome {
            spawn_error: Some(error),
            duration: start.elapsed(),
            ..ExecOutcome::default()
        }
    }
}
