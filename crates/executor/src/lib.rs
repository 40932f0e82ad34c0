//! The only crate that starts processes.
//!
//! [`run`] executes one command in its own process group with a hardened environment
//! (stdin `/dev/null`), pumps stdout and stderr into an [`agent_exec_sink::Sink`] in arrival
//! order from a single poll loop, ends it on timeout or cancellation with TERM → grace →
//! KILL, drains pipes still held by background children within a bound, and then ends every
//! process the command started (see [`containment`]).
//!
//! ```no_run
//! use agent_exec_executor::{run, CancelToken, ExecSpec};
//! use agent_exec_sink::{OutputSink, SinkConfig};
//!
//! let mut sink = OutputSink::new(SinkConfig::default(), None);
//! let outcome = run(&ExecSpec::shell("echo hi", "/tmp"), &mut sink, &CancelToken::new());
//! assert_eq!(sink.finish_capture().view.text, "hi\n");
//! # let _ = outcome;
//! ```
#![deny(missing_docs)]

mod cancel;
pub mod containment;
mod direct;
pub mod env;
pub mod jobs;
mod oneshot;
mod pty;
mod pump;
pub mod session;
mod sys;

pub use cancel::CancelToken;
pub use oneshot::{ExecOutcome, ExecSpec, ExitStatus, Program, run, run_async};
pub use pty::run_pty;
pub use pump::DrainLimits;

/// The conventional name of a signal (`SIGKILL`), or `SIG<n>` when unknown.
pub fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map_or_else(|_| format!("SIG{signal}"), |s| s.as_str().to_owned())
}
