//! Remote targets (contract §9): calls run by `agent-exec serve` on another machine or in a
//! container, reached through the engine's own client — `ssh`, `docker exec -i`,
//! `podman exec -i`, `kubectl exec -i` — whose stdio carries the same newline-delimited
//! JSON-RPC a local client speaks.
//!
//! - [`Target`]: the URI (`ssh://[user@]host[:port]`, `docker://CONTAINER`,
//!   `podman://CONTAINER`, `kubectl://[NAMESPACE/]POD[/CONTAINER]`).
//! - [`Transport`]: "a command that yields a stdio pipe to a program over there", one
//!   implementation per engine, built on the engine's client (never a reimplementation).
//! - [`Remotes`]: one connection per target, spawned through the executor like a session
//!   shell (its own containment group: when agent-exec dies, the watchdog ends the client, the
//!   far side's input closes, and `serve --end-on-eof` ends everything it ran), multiplexing
//!   calls by JSON-RPC id, reused across calls, reopened when it drops.
//!
//! The far side does the work — policy, sandbox, limits, window, artifacts, sessions, jobs —
//! exactly as it would locally; this crate only carries calls and their answers
//! (`agent-exec-core` turns them into results).
#![deny(missing_docs)]

mod connection;
mod target;
mod transport;

pub use connection::{Answer, RemoteError, Remotes, Settings};
pub use target::{Target, TargetError, pattern_matches};
pub use transport::{Container, Invocation, Kubectl, Ssh, Transport};
