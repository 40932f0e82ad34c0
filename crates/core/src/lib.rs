//! The agent bash tool: a [`Request`] in, a model-ready [`ToolResult`] out.
//!
//! The pipeline (contract §2): validate → plan (a trailing `| head`/`| tail` becomes a
//! structured limit) → policy (hardline guard, rules, workspace, interception) → run (one
//! shot, in a persistent session, or as a background job) → shape the details and the text.
//! Everything a caller needs is re-exported here: one dependency.
//!
//! One call, blocking:
//!
//! ```no_run
//! use agent_exec_core::{CancelToken, Config, Request, Tool};
//!
//! let tool = Tool::new(Config::default());
//! let result = tool.execute(&Request::shell("echo hello"), &CancelToken::new());
//! assert_eq!(result.text(), "hello\n");
//! ```
//!
//! The same from async code (any runtime; dropping the future cancels the command):
//!
//! ```no_run
//! # async fn f() {
//! use agent_exec_core::{Config, Request, Tool};
//!
//! let tool = Tool::new(Config::default());
//! let result = tool.run(Request::shell("cargo test").tail(50)).await;
//! println!("{}: {}", result.outcome(), result.text());
//! # }
//! ```
//!
//! The executor is Linux-only (pidfds, cgroups, `/proc`); so is this crate.
#![deny(missing_docs)]

mod call;
mod config;
mod denial;
mod ending;
mod parts;
mod plan;
mod policy;
mod progress;
mod remote;
mod render;
mod runner;
mod tool;
mod validate;

/// The wire types (`agent-exec-protocol`): the request, the result and its details, each
/// method's params and the method registry.
pub use agent_exec_protocol::{
    ArtifactId, ArtifactRead, Content, DETAIL_STRING_BYTES, Decision, Details, Direction, Effect,
    Folded, InvalidRequest, JobId, JobInput, JobKill, JobList, JobOutputRequest, JobSummary,
    LimitHit, MAX_TIMEOUT_SECS, METHODS, Method, MethodInfo, Outcome, OutputMode, PolicyDetails,
    RawStreams, Request, SandboxDetails, SessionClose, StreamBytes, StreamKind, Streams,
    TEXT_SLACK, ToolResult, TruncatedBy, Truncation, ViewStyle, Vocabulary, cut_string, json_kind,
    parse_params, request_schema, schema_for,
};
/// Remote targets: the URI, the connection settings, the engines (contract §9).
pub use agent_exec_remote::{Settings as RemoteSettings, Target as RemoteTarget};
pub use call::{AsyncApprover, Call, RunOptions};
pub use config::{
    CacheDir, Config, DENY_READ_UNDER_HOME, DEV_CACHES, FarSettingsError, RemoteConfig,
    SandboxOrigin, SandboxProfile, SandboxSettings, SessionSettings, WhenMissing,
    default_deny_read, dev_caches,
};
pub use policy::{AllowAll, Approver, CommandPolicy};
pub use progress::{Observer, Progress, report_progress};
pub use render::sandbox_unavailable_here;
pub use tool::Tool;
pub use validate::{Invocation, resolve_cwd};

/// Cancels a blocking call ([`Tool::execute`]); clones share the flag.
pub use agent_exec_executor::CancelToken;
/// Draining the pipes of background children after a command exits.
pub use agent_exec_executor::DrainLimits;
/// How long a `pty` call may wait at a prompt by default ([`Config::prompt_idle`]).
pub use agent_exec_executor::PROMPT_IDLE;
/// The environment commands get (inherit policy, hardening, overrides).
pub use agent_exec_executor::env::EnvConfig;
/// Limits of background jobs.
pub use agent_exec_executor::jobs::JobLimits;
/// Resource limits and the sandbox (contract §8).
pub use agent_exec_executor::{LimitKind, Limits, NetworkMode, SandboxMode, sandbox};
/// The policy: the parser-backed [`Policy`], its [`PolicyConfig`] (TOML), and its inputs and
/// verdicts.
pub use agent_exec_policy::{Context as PolicyContext, Policy, PolicyConfig, Verdict};
/// Artifact retention (count and bytes of the directory).
pub use agent_exec_sink::Retention;
/// The size of a `pty` call's terminal ([`Config::pty_size`]).
pub use agent_exec_sink::{TerminalSize, TerminalSizeError};
/// `tokio_util`'s token, accepted by [`RunOptions::cancel_on`].
pub use tokio_util::sync::CancellationToken;
