//! The parameters of the server methods beyond `exec` (contract §7).

use serde::{Deserialize, Serialize};

use crate::result::JobId;

/// `job_output` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct JobOutputRequest {
    /// The job.
    #[schemars(with = "String")]
    pub job_id: JobId,
    /// `new` (default): output since the last read; `all`: everything held.
    #[serde(default)]
    pub mode: OutputMode,
    /// Wait up to this long (at most 10 minutes) for new output or the job's end. Default: 0.
    #[serde(default)]
    pub wait_ms: u64,
}

impl JobOutputRequest {
    /// The output of `job` since the last read, without waiting.
    pub fn new(job: impl Into<JobId>) -> Self {
        JobOutputRequest {
            job_id: job.into(),
            mode: OutputMode::New,
            wait_ms: 0,
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
    #[schemars(with = "String")]
    pub job_id: JobId,
    /// Text to write.
    #[serde(default)]
    pub data: String,
    /// Append a newline. Default: true.
    #[serde(default = "yes")]
    pub enter: bool,
    /// Close the job's stdin afterwards. Default: false.
    #[serde(default)]
    pub eof: bool,
}

impl JobInput {
    /// Types `data` and Enter into `job`.
    pub fn line(job: impl Into<JobId>, data: impl Into<String>) -> Self {
        JobInput {
            job_id: job.into(),
            data: data.into(),
            enter: true,
            eof: false,
        }
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
