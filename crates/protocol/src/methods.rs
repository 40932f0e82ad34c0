//! The parameters of the server methods beyond `exec` (contract §7).

use serde::{Deserialize, Serialize};

use crate::result::JobId;

/// The longest a `job_output` waits (`wait_ms`): 10 minutes.
pub const MAX_WAIT_MS: u64 = 600_000;

/// `job_output` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JobOutputRequest {
    /// The job.
    #[serde(deserialize_with = "crate::lenient::id")]
    #[schemars(with = "String")]
    pub job_id: JobId,
    /// `new` (default): the output since the last read; `all`: everything held.
    #[serde(default, deserialize_with = "crate::lenient::choice_or_default")]
    pub mode: OutputMode,
    /// Wait up to this many milliseconds (at most 600000) for new output or the job's end.
    /// Default: 0, no wait.
    #[serde(default, deserialize_with = "crate::lenient::uint_or_zero")]
    #[schemars(range(max = MAX_WAIT_MS))]
    pub wait_ms: u64,
    /// The remote target it lives on. Default: the operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

impl JobOutputRequest {
    /// The output of `job` since the last read, without waiting.
    pub fn new(job: impl Into<JobId>) -> Self {
        JobOutputRequest {
            job_id: job.into(),
            mode: OutputMode::New,
            wait_ms: 0,
            target: None,
        }
    }

    /// Everything held, not just what is new.
    #[must_use]
    pub fn all(mut self) -> Self {
        self.mode = OutputMode::All;
        self
    }

    /// Wait up to `wait` for new output or the job's end.
    #[must_use]
    pub fn wait(mut self, wait: std::time::Duration) -> Self {
        self.wait_ms = wait.as_millis().try_into().unwrap_or(u64::MAX);
        self
    }
}

/// Which output `job_output` returns.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum OutputMode {
    /// Since the last read.
    #[default]
    New,
    /// Everything held.
    All,
}

/// `job_input` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JobInput {
    /// The job.
    #[serde(deserialize_with = "crate::lenient::id")]
    #[schemars(with = "String")]
    pub job_id: JobId,
    /// Text to write.
    #[serde(default, deserialize_with = "crate::lenient::text_or_empty")]
    pub data: String,
    /// Append a newline. Default: true (but `eof` with empty `data` sends nothing: it only
    /// closes the input).
    #[serde(
        default = "yes",
        deserialize_with = "crate::lenient::flag_default_true"
    )]
    pub enter: bool,
    /// Close the job's stdin afterwards. Default: false.
    #[serde(default, deserialize_with = "crate::lenient::flag")]
    pub eof: bool,
    /// Then wait up to this many milliseconds (at most 600000) for what the job answers (its
    /// output once quiet, its end, or its next prompt) and return it. Default: 0, no wait.
    #[serde(default, deserialize_with = "crate::lenient::uint_or_zero")]
    #[schemars(range(max = MAX_WAIT_MS))]
    pub yield_ms: u64,
    /// The remote target it lives on. Default: the operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

impl JobInput {
    /// Types `data` and Enter into `job`.
    pub fn line(job: impl Into<JobId>, data: impl Into<String>) -> Self {
        JobInput {
            job_id: job.into(),
            data: data.into(),
            enter: true,
            eof: false,
            yield_ms: 0,
            target: None,
        }
    }

    /// Then wait up to `wait` for the job's answer and return it.
    #[must_use]
    pub fn then_read(mut self, wait: std::time::Duration) -> Self {
        self.yield_ms = wait.as_millis().try_into().unwrap_or(u64::MAX);
        self
    }

    /// Without the newline.
    #[must_use]
    pub fn without_enter(mut self) -> Self {
        self.enter = false;
        self
    }

    /// Closes the job's stdin afterwards.
    #[must_use]
    pub fn then_eof(mut self) -> Self {
        self.eof = true;
        self
    }
}

fn yes() -> bool {
    true
}

/// `job_kill` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JobKill {
    /// The job.
    #[serde(deserialize_with = "crate::lenient::id")]
    #[schemars(with = "String")]
    pub job_id: JobId,
    /// The remote target it lives on. Default: the operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

/// `session_close` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SessionClose {
    /// The session's name.
    pub session: String,
    /// The remote target it lives on. Default: the operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

/// `job_list` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JobList {
    /// Only the jobs still running. Default: false, every job held (finished ones are kept an
    /// hour).
    #[serde(
        default,
        deserialize_with = "crate::lenient::flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub running: bool,
    /// The remote target it lives on. Default: the operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

/// `artifact_read` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ArtifactRead {
    /// The artifact: `ID` or `artifact://ID`.
    pub id: String,
    /// Byte offset to read from. Default: 0.
    #[serde(default, deserialize_with = "crate::lenient::uint")]
    pub offset: Option<u64>,
    /// Most bytes to return. Default and most: the output window's size.
    #[serde(default, deserialize_with = "crate::lenient::positive_uint")]
    pub limit: Option<u64>,
    /// A regular expression: return the matching lines of the whole output, numbered, instead
    /// of a byte range (`offset` and `limit` are then not used).
    #[serde(default, deserialize_with = "crate::lenient::text")]
    pub grep: Option<String>,
    /// With `grep`: lines of context around each match. Default: 0.
    #[serde(default, deserialize_with = "crate::lenient::positive_uint")]
    pub context: Option<u64>,
    /// The remote target it lives on. Default: the operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

impl ArtifactRead {
    /// Bytes of `id` from the start.
    pub fn new(id: impl Into<String>) -> Self {
        ArtifactRead {
            id: id.into(),
            offset: None,
            limit: None,
            grep: None,
            context: None,
            target: None,
        }
    }

    /// From byte `offset`, at most `limit` bytes.
    #[must_use]
    pub fn range(mut self, offset: u64, limit: Option<u64>) -> Self {
        self.offset = Some(offset);
        self.limit = limit;
        self
    }

    /// The lines matching `pattern`, with `context` lines around each.
    #[must_use]
    pub fn grep(mut self, pattern: impl Into<String>, context: u64) -> Self {
        self.grep = Some(pattern.into());
        self.context = Some(context);
        self
    }
}
