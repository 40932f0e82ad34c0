//! agent-exec's wire types (contract §1, §3, §7): the [`Request`] of a call, the
//! [`ToolResult`] and its [`Details`], each method's params, the method registry
//! ([`METHODS`]) the servers and their schemas are derived from, and the contract's small
//! words ([`Outcome`], [`Direction`], [`Decision`], [`SandboxMode`], …).
//!
//! Pure data: serde both ways (lenient where clients are: `"30"` for 30), schemars schemas in
//! JSON Schema's own terms. A client of `agent-exec serve` needs this crate only; the tool
//! that answers is `agent-exec-core`, which re-exports all of it.
//!
//! ```
//! use agent_exec_protocol::{Method, Request};
//!
//! let request = Request::from_json(r#"{"command": "ls", "timeout": "30"}"#).unwrap();
//! assert_eq!(request.timeout, Some(30));
//! assert_eq!(Method::named("job_output").unwrap().info().tool, "bash_output");
//! ```
#![deny(missing_docs)]

mod lenient;
mod methods;
mod registry;
mod request;
mod result;
mod vocab;

pub use lenient::{json_kind, parse_params};
pub use methods::{
    ArtifactRead, JobInput, JobKill, JobList, JobOutputRequest, MAX_WAIT_MS, OutputMode,
    SessionClose,
};
pub use registry::{Effect, METHODS, Method, MethodInfo, Vocabulary};
pub use request::{
    InvalidRequest, MAX_TIMEOUT_SECS, Request, Streams, ViewStyle, request_schema, schema_for,
};
pub use result::{
    ARTIFACT_MORE, ArtifactId, Content, DETAIL_STRING_BYTES, Details, Folded, JobId, JobSummary,
    LimitHit, Outcome, PolicyDetails, RawStreams, SandboxDetails, StreamBytes, StreamKind,
    TEXT_SLACK, ToolResult, Truncation, cut_string,
};
pub use vocab::{Decision, Direction, SandboxMode, TruncatedBy};
