//! The result of one tool call (contract §3): typed here, the JSON exactly as the contract says.

use std::fmt;

use crate::vocab::{Decision, Direction, TruncatedBy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
    /// Still running when the call yielded (`yield_ms`): it goes on as the background job
    /// `job_id` — read it with `job_output`, type into it with `job_input`, end it with
    /// `job_kill`. Not an error.
    Running,
}

impl Outcome {
    /// The contract's name (`exit_nonzero`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::ExitNonzero => "exit_nonzero",
            Outcome::Signaled => "signaled",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::Denied => "denied",
            Outcome::NeedsApproval => "needs_approval",
            Outcome::InvalidRequest => "invalid_request",
            Outcome::SpawnFailed => "spawn_failed",
            Outcome::Running => "running",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `diff` when the output is a diff (contract §3), else `plain`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StreamKind {
    /// Anything else.
    #[default]
    Plain,
    /// `git diff|show|whatchanged`, `git log … -p`, `diff`.
    Diff,
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
        )]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_owned())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

string_id!(
    /// A background job (`"1"`): what `job_output`, `job_input` and `job_kill` take.
    JobId
);
string_id!(
    /// A spilled full output: `artifact://ID`.
    ArtifactId
);

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Truncation {
    /// Which part was kept.
    #[schemars(with = "String")]
    pub direction: Direction,
    /// The byte or the line budget.
    #[schemars(with = "String")]
    pub truncated_by: TruncatedBy,
    /// Bytes of the raw stream.
    pub total_bytes: u64,
    /// Lines of the raw stream.
    pub total_lines: u64,
    /// Bytes shown.
    pub output_bytes: u64,
    /// Lines shown.
    pub output_lines: u64,
    /// First and last raw line shown (`[0, 0]` when none is).
    pub shown_range: [u64; 2],
    /// Every shown range, in order (more than one for `both` and `smart`).
    pub shown_ranges: Vec<[u64; 2]>,
    /// Salient lines kept from the elided middle (`smart`).
    pub salient_lines: u64,
    /// The artifact with the full output; null only if it could not be written.
    pub artifact_id: Option<ArtifactId>,
    /// The artifact stopped at its cap before the end of the output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub artifact_capped: bool,
}

/// What the compact view folded (`view: "compact"`, the default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Folded {
    /// Lines folded into markers.
    pub lines: u64,
    /// Bytes of text folded.
    pub bytes: u64,
    /// The artifact with the raw output; null only if it could not be written.
    pub artifact_id: Option<ArtifactId>,
}

/// The policy's verdict, when it decided something other than a silent allow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PolicyDetails {
    /// `allow`, `ask` or `deny`.
    #[schemars(with = "String")]
    pub decision: Decision,
    /// The rule that decided.
    pub rule: Option<String>,
    /// Why, for the model.
    pub reason: String,
}

/// Structured details of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    pub stream_kind: StreamKind,
    /// Raw bytes of output. stdout and stderr share one pipe (as `2>&1`, or a PTY), so
    /// that the output keeps the order it was written: all of it counts here — unless the call
    /// kept them apart (`streams: "separate"`): then stdout's.
    pub stdout_bytes: u64,
    /// Raw stderr bytes counted apart: 0 when stderr shares stdout's pipe (see
    /// `stdout_bytes`); stderr's with `streams: "separate"`.
    pub stderr_bytes: u64,
    /// What was cut (with `streams: "separate"`, of stdout).
    pub truncation: Option<Truncation>,
    /// What the compact view folded of an output that fit. Absent when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<Folded>,
    /// With `streams: "separate"`: what was cut of stderr. Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_truncation: Option<Truncation>,
    /// Background job id.
    pub job_id: Option<JobId>,
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
    /// The sandbox the call ran in (null: none).
    #[serde(default)]
    pub sandbox: Option<SandboxDetails>,
    /// The resource limit that ended or hampered the command (null: none).
    #[serde(default)]
    pub limit_hit: Option<LimitHit>,
    /// A background job's reads (`job_output`, `job_kill`, `job_input`): whether the job is
    /// still running. Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    /// `job_list`: the jobs held, oldest first. Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobSummary>>,
    /// The remote target the call ran on (contract §9; null: here).
    #[serde(default)]
    pub target: Option<String>,
    /// `artifact_read` of a page that more follows: the offset to read on from. Absent
    /// elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// A call that yielded (outcome `running`), and the reads of its job: its timeout in
    /// milliseconds, which holds from the call's start (`duration_ms` is the time since).
    /// Absent elsewhere (a background job has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// One background job, as `job_list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobSummary {
    /// Its id.
    pub job_id: JobId,
    /// The command it runs.
    pub command: String,
    /// `running`, or how it ended (an outcome: `success`, `exit_nonzero`, …).
    pub status: String,
    /// Its exit code, once it exited.
    pub exit_code: Option<i32>,
    /// Raw bytes of output so far (stdout and stderr: they share one pipe).
    pub stdout_bytes: u64,
    /// Raw stderr bytes counted apart: 0, as stderr shares stdout's pipe.
    pub stderr_bytes: u64,
    /// Time since it started.
    pub elapsed_ms: u64,
}

/// The sandbox of a call (contract §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxDetails {
    /// `read-only` or `workspace-write`.
    pub mode: String,
    /// `off` or `on`.
    pub network: String,
}

/// Which resource limit ended or hampered a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitHit {
    /// The memory limit: a process was killed.
    Memory,
    /// The process limit: a fork was refused.
    Procs,
    /// The CPU time limit: a process was killed.
    Cpu,
    /// The file size limit: a write was refused.
    FileSize,
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
            stream_kind: StreamKind::Plain,
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncation: None,
            stderr_truncation: None,
            folded: None,
            job_id: None,
            session: None,
            policy: None,
            processes_stopped: 0,
            warnings: Vec::new(),
            sandbox: None,
            limit_hit: None,
            running: None,
            jobs: None,
            target: None,
            next_offset: None,
            timeout_ms: None,
        }
    }

    /// Sets the outcome and what follows from it (`success`).
    pub fn set_outcome(&mut self, outcome: Outcome) {
        self.outcome = outcome;
        self.success = outcome == Outcome::Success;
    }
}

/// The result of a tool call: model-ready text plus structured details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResult {
    /// One text block.
    pub content: Vec<Content>,
    /// False only for `success` and `running` (a call that yielded).
    pub is_error: bool,
    /// Structured details.
    pub details: Details,
    /// With `streams: "separate"`, for a library caller that parses stdout: each stream's raw
    /// bytes. Not serialized (a server's client reads the artifacts).
    #[serde(skip)]
    pub streams: Option<RawStreams>,
}

/// The raw bytes of a call's stdout and stderr, kept apart (`streams: "separate"`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawStreams {
    /// Standard output.
    pub stdout: StreamBytes,
    /// Standard error.
    pub stderr: StreamBytes,
}

/// One stream's raw bytes: held, when they fit the output window, else in its artifact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamBytes {
    /// The bytes, when they were not spilled.
    pub held: Option<Vec<u8>>,
    /// The artifact holding them, when they were.
    pub artifact: Option<std::path::PathBuf>,
    /// The artifact stopped at its cap: it holds the first bytes only.
    pub capped: bool,
    /// How many bytes the stream had.
    pub total: u64,
}

impl StreamBytes {
    /// The bytes: held, or read from the artifact (while the artifact store keeps it; the
    /// first bytes only when `capped`). An error when they were not kept: no artifact could
    /// be written (the store disabled or failing; the result's warnings say why).
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        match (&self.held, &self.artifact) {
            (Some(held), _) => Ok(held.clone()),
            (None, Some(path)) => std::fs::read(path),
            (None, None) if self.total == 0 => Ok(Vec::new()),
            (None, None) => Err(std::io::Error::other(format!(
                "the stream's {} bytes were not kept: they outgrew the output window and no artifact could be written",
                self.total
            ))),
        }
    }
}

impl ToolResult {
    /// A result with `text` and `details`; `is_error` follows the outcome.
    pub fn new(text: String, details: Details) -> Self {
        ToolResult {
            content: vec![Content {
                kind: "text".into(),
                text,
            }],
            is_error: !matches!(details.outcome, Outcome::Success | Outcome::Running),
            details,
            streams: None,
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.content.first().map_or("", |c| c.text.as_str())
    }

    /// How the call ended.
    pub fn outcome(&self) -> Outcome {
        self.details.outcome
    }

    /// The text of an `artifact_read` page without the note that says where the next page
    /// starts (the bytes of the artifact, as text).
    pub fn artifact_page(&self) -> &str {
        let text = self.text();
        match self.details.next_offset {
            Some(_) => text.rfind(ARTIFACT_MORE).map_or(text, |note| &text[..note]),
            None => text,
        }
    }

    /// An `invalid_request` result.
    pub fn invalid(message: impl Into<String>, cwd: String) -> Self {
        ToolResult::new(message.into(), Details::empty(Outcome::InvalidRequest, cwd))
    }

    /// This result within the bounds of one answer (contract §7): its text at most the output
    /// window (`max_bytes`) plus [`TEXT_SLACK`] for the headers and notices around it, and
    /// every string of its details (a command, a session name, a warning echoed back) at most
    /// [`DETAIL_STRING_BYTES`]. What each method makes is bounded already; this is the one
    /// place that makes it so whatever a request echoes, so that no answer outgrows what a
    /// client takes in one message (the TypeScript SDK refuses more than 10 MiB).
    #[must_use]
    pub fn bounded(mut self, max_bytes: usize) -> ToolResult {
        let most = max_bytes.saturating_add(TEXT_SLACK);
        for block in &mut self.content {
            cut_string(&mut block.text, most);
        }
        self.details.bound_strings(DETAIL_STRING_BYTES);
        self
    }
}

/// How the note of an `artifact_read` page that more follows starts (what
/// [`ToolResult::artifact_page`] leaves out; the rest of the note is the renderer's).
pub const ARTIFACT_MORE: &str = "\n\n[Showing bytes ";

/// What an answer's text may hold beyond the output window: headers, notices and notes.
pub const TEXT_SLACK: usize = 16 * 1024;

/// The longest string in an answer's details.
pub const DETAIL_STRING_BYTES: usize = 4096;

/// Cuts `text` to at most `most` bytes (at a character boundary, with room for a note saying
/// how long it was): `… [cut: N bytes in all]`. The one cut of every bounded answer, the
/// servers' error messages included.
pub fn cut_string(text: &mut String, most: usize) {
    if text.len() <= most {
        return;
    }
    let total = text.len();
    let note = format!("… [cut: {total} bytes in all]");
    let end = text.floor_char_boundary(most.saturating_sub(note.len()));
    text.truncate(end);
    text.push_str(&note);
}

impl Details {
    /// Every string field at most `most` bytes.
    fn bound_strings(&mut self, most: usize) {
        // `cwd` is a real path (PATH_MAX bounds it): never cut into one that is not.
        for text in self
            .session
            .iter_mut()
            .chain(self.target.iter_mut())
            .chain(self.warnings.iter_mut())
        {
            cut_string(text, most);
        }
        if let Some(policy) = &mut self.policy {
            cut_string(&mut policy.reason, most);
            if let Some(rule) = &mut policy.rule {
                cut_string(rule, most);
            }
        }
        for job in self.jobs.iter_mut().flatten() {
            cut_string(&mut job.command, most);
        }
    }
}
