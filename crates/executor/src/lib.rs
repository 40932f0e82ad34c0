//! The only crate that starts processes.
//!
//! Every process a call starts goes through one lifecycle (see `ARCHITECTURE.md`):
//! **spawn** (`spawn.rs`: one path for pipes, PTYs, background jobs, session shells and the rc
//! snapshot, each in its own containment group — a cgroup where one can be made, see
//! [`containment`]), **supervise** (`supervise.rs`: one poll loop over the output pipe — a
//! command's stdout and stderr share one, so its output keeps the order it was written —, the
//! main process's pidfd, the cancel token and, for sessions, the status pipe), **terminate**
//! (one TERM → grace → KILL state machine for timeouts, cancels, a full sink, a closed session
//! and the end-of-call sweep) and **account** (a typed [`ExecOutcome`]: how it ended, why it was
//! stopped, how many processes were left and ended). Text for the model is written by the
//! caller (`agent-exec-core`), never here.
//!
//! What to run is `spec.rs`, how it ended `outcome.rs`. Every started child is owned by one
//! type (`child.rs`): dropped, it kills its group, reaps it (bounded) and gives up its pid in
//! the registry of owned children (`pids.rs`), which the orphan sweep respects. Every bounded
//! wait goes through `wait.rs`.
//!
//! ```no_run
//! use agent_exec_executor::{run, CancelToken, ExecSpec};
//! use agent_exec_sink::{OutputSink, SinkConfig};
//!
//! let mut sink = OutputSink::new(SinkConfig::default(), None);
//! let outcome = run(&ExecSpec::shell("echo hi", "/tmp"), &mut sink, &CancelToken::new());
//! assert_eq!(sink.finish_capture().view.text(), "hi\n");
//! # let _ = outcome;
//! ```
//!
//! Linux only: pidfds, cgroups, `/proc`, `PR_SET_CHILD_SUBREAPER`.
#![deny(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!(
    "agent-exec-executor runs on Linux only (pidfds, cgroups, /proc, PR_SET_CHILD_SUBREAPER); \
     agent-exec-sink, agent-exec-normalize and agent-exec-policy build on any platform"
);

mod cancel;
pub mod channel;
mod child;
pub mod containment;
mod direct;
pub mod env;
pub mod jobs;
mod oneshot;
mod outcome;
mod pidns;
mod pids;
pub mod prepared;
mod process;
mod pump;
pub mod sandbox;
pub mod session;
mod spawn;
mod spec;
mod stack;
mod status;
mod supervise;
mod sys;
mod wait;
mod waiting;
mod workers;

pub use cancel::{CANCEL_CHECK, CancelToken};
pub use containment::{Containment, GroupKind, LimitFallback, LimitKind, LimitUnavailable, Limits};
pub use oneshot::{run, run_async, run_pty};
pub use outcome::{ExecOutcome, Stop};
pub use prepared::{PreparedSettings, PreparedShells, PreparedStats};
pub use pump::DrainLimits;
pub use sandbox::{NetworkMode, SandboxMode, SandboxSpec};
pub use spawn::SpawnError;
pub use spec::{DEFAULT_GRACE, ExecSpec, OutputPipes, Program};
pub use status::ExitStatus;
pub use waiting::{JOB_WAITING_IDLE, OnWaiting, PROMPT_IDLE, Wait, WaitSlot, WaitedOn};

/// The conventional name of a signal (`SIGKILL`), or `SIG<n>` when unknown.
pub fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map_or_else(|_| format!("SIG{signal}"), |s| s.as_str().to_owned())
}
