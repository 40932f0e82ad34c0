//! The agent bash tool: a [`Request`] in, a model-ready [`ToolResult`] out.
//!
//! The pipeline (contract §2): validate → normalize (a trailing `| head`/`| tail` becomes a
//! structured limit) → policy (hardline guard, rules, workspace, interception) → execute (one
//! shot, in a persistent session, or as a background job) → shape the text and the details.
//!
//! ```no_run
//! use agent_exec_core::{Config, Request, Tool};
//! use agent_exec_executor::CancelToken;
//!
//! let tool = Tool::new(Config::default());
//! let request = Request { command: Some("echo hello".into()), ..Request::default() };
//! let result = tool.execute(&request, &CancelToken::new());
//! assert_eq!(result.text(), "hello\n");
//! ```
#![deny(missing_docs)]

mod config;
mod policy;
mod render;
mod request;
mod result;
mod services;
mod tool;

pub use config::{Config, SessionSettings};
pub use policy::{AllowAll, Approver, CommandPolicy};
pub use request::{
    InvalidRequest, MAX_TIMEOUT_SECS, Request, Target, Validated, request_schema, resolve_cwd,
};
pub use result::{Content, Details, Outcome, PolicyDetails, ToolResult, Truncation};
pub use services::{JobInput, JobOutputRequest, OutputMode};
pub use tool::Tool;
