//! The result of one tool call (contract §3).

use serde::{Deserialize, Serialize};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Exit 0 (or 141, a reader closing the pipe early).
    Success,
    /// A non-zero exit code.
    ExitNonzero,
    /// Killed by a signal it did not get from us.
    Signaled,
    /// The deadline passed; the command was ended.
    Timeout,
    /// The call was cancelled; the command was ended.
    Cancelled,
    /// The policy refused it; nothing ran.
    Denied,
    /// The policy wants a human to approve it; nothing ran.
    NeedsApproval,
    /// The request was malformed; nothing ran.
    InvalidRequest,
    /// The program could not be started.
    SpawnFailed,
}

impl Outcome {
    /// The exit status `agent-exec run` uses for this outcome (contract §6), given the
    /// command's exit code or signal when it has one.
    pub fn cli_exit_code(self, exit_code: Option<i32>, signal: Option<i32>) -> i32 {
        match self {
            Outcome::Success => 0,
            Outcome::ExitNonzero => exit_code.map_or(1, |c| if c == 0 { 1 } else { c & 0xff }),
            Outcome::Signaled => 128 + signal.unwrap_or(0),
            Outcome::Timeout => 124,
            Outcome::Cancelled => 130,
            Outcome::Denied | Outcome::NeedsApproval => 126,
            Outcome::InvalidRequest => 2,
            Outcome::SpawnFailed => 127,
        }
    }
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Content {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The model-ready text.
    pub text: String,
}

/// What was cut, when anything was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// `tail`, `head`, `both` or `smart`.
    pub direction: String,
    /// `bytes` or `lines`.
    pub truncated_by: String,
    /// Bytes of the raw stream.
    pub total_bytes: u64,
    /// Lines of the raw stream.
    pub total_lines: u64,
    /// Bytes shown.
    pub output_bytes: u64,
    /// Lines shown.
    pub output_lines: u64,
    /// First and last raw line shown.
    pub shown_range: [u64; 2],
    /// Every shown range, in order (more than one for `both` and `smart`).
    pub shown_ranges: Vec<[u64; 2]>,
    /// Salient lines kept from the elided middle (`smart`).
    pub salient_lines: u64,
    /// The artifact with the full output; null only if it could not be written.
    pub artifact_id: Option<String>,
    /// The artifact stopped at its cap before the end of the output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub artifact_capped: bool,
}

/// The policy's verdict, when it decided something other than a silent allow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDetails {
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    /// The rule that decided.
    pub rule: Option<String>,
    /// Why, for the model.
    pub reason: String,
}

/// Structured details of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Details {
    /// How the call ended.
    pub outcome: Outcome,
    /// Exit code, when the process exited.
    pub exit_code: Option<i32>,
    /// Signal number, when a signal killed it.
    pub signal: Option<i32>,
    /// Whether the outcome is `success`.
    pub success: bool,
    /// The deadline passed.
    pub timed_out: bool,
    /// The call was cancelled.
    pub cancelled: bool,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Working directory (the session's cwd after the call, in a session).
    pub cwd: String,
    /// `diff` or `plain`.
    pub stream_kind: String,
    /// Raw stdout bytes.
    pub stdout_bytes: u64,
    /// Raw stderr bytes.
    pub stderr_bytes: u64,
    /// What was cut.
    pub truncation: Option<Truncation>,
    /// Background job id.
    pub job_id: Option<String>,
    /// Session name.
    pub session: Option<String>,
    /// The policy's verdict, when not a plain allow.
    pub policy: Option<PolicyDetails>,
    /// Background processes still running when the command ended, which were stopped.
    #[serde(default)]
    pub processes_stopped: u64,
    /// Problems that did not stop the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Details {
    /// Details of a call that ran nothing.
    pub fn empty(outcome: Outcome, cwd: String) -> Self {
        Details {
            outcome,
            exit_code: None,
            signal: None,
            success: outcome == Outcome::Success,
            timed_out: false,
            cancelled: false,
            duration_ms: 0,
            cwd,
            stream_kind: "plain".into(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncation: None,
            job_id: None,
            session: None,
            policy: None,
            processes_stopped: 0,
            warnings: Vec::new(),
        }
    }
}

/// The result of a tool call: model-ready text plus structured details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// One text block.
    pub content: Vec<Content>,
    /// False only for `success`.
    pub is_error: bool,
    /// Structured details.
    pub details: Details,
}

impl ToolResult {
    /// A result with `text` and `details`; `is_error` follows the outcome.
    pub fn new(text: String, details: Details) -> Self {
        ToolResult {
            content: vec![Content {
                kind: "text".into(),
                text,
            }],
            is_error: details.outcome != Outcome::Success,
            details,
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.content.first().map_or("", |c| c.text.as_str())
    }

    /// The `agent-exec run` exit status for this result.
    pub fn cli_exit_code(&self) -> i32 {
        self.details
            .outcome
            .cli_exit_code(self.details.exit_code, self.details.signal)
    }

    /// An `invalid_request` result.
    pub fn invalid(message: impl Into<String>, cwd: String) -> Self {
        ToolResult::new(message.into(), Details::empty(Outcome::InvalidRequest, cwd))
    }
}
