//! The request of one tool call (contract §1): its fields, the builder, and parsing that names
//! the field at fault. What a request means (validation, the plan) is `agent-exec-core`'s.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::vocab::SandboxMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One tool call. Unknown fields are rejected, naming the field.
///
/// Build one with [`Request::shell`] or [`Request::program`] and the builder methods, or
/// parse one with [`Request::from_json`]:
///
/// ```
/// use std::time::Duration;
/// use agent_exec_protocol::Request;
///
/// let request = Request::shell("cargo test")
///     .cwd("crates/core")
///     .timeout(Duration::from_secs(300))
///     .tail(200);
/// assert_eq!(
///     serde_json::to_string(&request).unwrap(),
///     r#"{"command":"cargo test","cwd":"crates/core","timeout_ms":300000,"tail":200}"#
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Request {
    /// Shell command, run by the configured shell (`bash -o pipefail -c`; `sh -c` where there is no bash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Alternative to `command`: a program run directly, no shell. Exactly one of `command` / `executable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// Arguments of `executable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// Working directory, relative to the tool's (a session's own, in a session).
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub cwd: Option<String>,
    /// Extra environment variables, `NAME=value` each (an object of names to values is taken
    /// too).
    #[serde(
        default,
        deserialize_with = "crate::lenient::env",
        serialize_with = "crate::lenient::env_as_list",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    #[schemars(with = "Vec<String>")]
    pub env: BTreeMap<String, String>,
    /// Timeout in seconds, at most 3600: the command and all it started are ended then.
    /// Default: the operator's.
    #[serde(
        default,
        deserialize_with = "crate::lenient::nonzero_int",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout: Option<i64>,
    /// The timeout in milliseconds (with `timeout` too, the shorter holds).
    #[serde(
        default,
        deserialize_with = "crate::lenient::nonzero_int",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<i64>,
    /// Show only the first N lines of the output (wins over a `| head` in the command).
    #[serde(
        default,
        deserialize_with = "crate::lenient::positive_uint",
        skip_serializing_if = "Option::is_none"
    )]
    pub head: Option<u64>,
    /// Show only the last N lines of the output (wins over a `| tail` in the command).
    #[serde(
        default,
        deserialize_with = "crate::lenient::positive_uint",
        skip_serializing_if = "Option::is_none"
    )]
    pub tail: Option<u64>,
    /// Answer after this many milliseconds if the command still runs (sooner if it waits for
    /// input): the output so far and a job id to go on with `job_output`, `job_input` or
    /// `job_kill`; the command keeps running. 0: wait for the end. Default: the operator's.
    #[serde(
        default,
        deserialize_with = "crate::lenient::uint",
        skip_serializing_if = "Option::is_none"
    )]
    pub yield_ms: Option<u64>,
    /// `shared` (default): stdout and stderr together, in the order written; `separate`:
    /// stdout, then stderr, each cut apart.
    #[serde(
        default,
        deserialize_with = "crate::lenient::choice",
        skip_serializing_if = "Option::is_none"
    )]
    pub streams: Option<Streams>,
    /// `compact` (default): passing tests, progress and repeated build steps folded into
    /// counted markers (never errors, warnings or summaries); `raw`: the output as printed.
    #[serde(
        default,
        deserialize_with = "crate::lenient::choice",
        skip_serializing_if = "Option::is_none"
    )]
    pub view: Option<ViewStyle>,
    /// Start it as a background job and answer at once with its job id (for servers and
    /// watchers).
    #[serde(
        default,
        deserialize_with = "crate::lenient::flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub run_in_background: bool,
    /// Run it in the named persistent shell, which keeps cd, exports and functions between
    /// calls.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<String>,
    /// Run it under a pseudo-terminal (for programs that want one); output rendered as text.
    #[serde(
        default,
        deserialize_with = "crate::lenient::flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub pty: bool,
    /// Send live progress while it runs (`serve`: `exec/progress` notifications). The library
    /// streams progress through `Tool::start` or `Tool::execute_observed` (`agent-exec-core`)
    /// instead.
    #[serde(
        default,
        deserialize_with = "crate::lenient::flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub progress: bool,
    /// The sandbox of this call: the operator's mode or a stricter one (`read-only` allows
    /// writes only to $TMPDIR).
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(extend("enum" = ["off", "read-only", "workspace-write", null]))]
    pub sandbox: Option<String>,
    /// Where to run it: `ssh://[user@]host[:port]`, `docker://CONTAINER`, `podman://CONTAINER`
    /// or `kubectl://[NAMESPACE/]POD[/CONTAINER]`, one the operator allowed. Default: the
    /// operator's target, else here.
    #[serde(
        default,
        deserialize_with = "crate::lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Option<String>,
}

/// How a call's stdout and stderr reach it (`streams`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Streams {
    /// One pipe for both: the output in the order it was written (as `2>&1`).
    #[default]
    Shared,
    /// A pipe each: counted, windowed and kept apart.
    Separate,
}

/// How the output of a call is shown (`view`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ViewStyle {
    /// The lines a model does not need folded into counted markers.
    #[default]
    Compact,
    /// The output as it is.
    Raw,
}

impl std::str::FromStr for ViewStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "compact" => Ok(ViewStyle::Compact),
            "raw" => Ok(ViewStyle::Raw),
            other => Err(format!("unknown view {other:?}: use compact or raw")),
        }
    }
}

/// Building a request.
impl Request {
    /// A shell command line (`bash -o pipefail -c COMMAND`).
    pub fn shell(command: impl Into<String>) -> Request {
        Request {
            command: Some(command.into()),
            ..Request::default()
        }
    }

    /// A command given as words, as a command line gives them (`agent-exec run -- WORDS`):
    /// one word is a shell line as it stands (`'ls | wc -l'`); several are joined with spaces,
    /// each quoted where a shell would otherwise read it differently, so they reach the
    /// program intact (`sh -c 'echo hi'` stays three words; `FOO=1 env` stays an assignment).
    pub fn from_words<I, S>(words: I) -> Request
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let words: Vec<S> = words.into_iter().collect();
        let line = match words.as_slice() {
            [one] => one.as_ref().to_owned(),
            many => {
                // Leading `NAME=value` words stay assignments, whatever their value holds.
                let mut assigning = true;
                many.iter()
                    .map(|w| {
                        let w = w.as_ref();
                        match agent_exec_normalize::assignment_word(w).filter(|_| assigning) {
                            Some(a) => a,
                            None => {
                                assigning = false;
                                agent_exec_normalize::shell_word(w)
                            }
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        };
        Request::shell(line)
    }

    /// A program run directly, no shell.
    pub fn program<I, S>(program: impl Into<String>, args: I) -> Request
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Request {
            executable: Some(program.into()),
            argv: Some(args.into_iter().map(Into::into).collect()),
            ..Request::default()
        }
    }

    /// Working directory; relative to the tool's (or the session's) working directory.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<String>) -> Request {
        self.cwd = Some(dir.into());
        self
    }

    /// An extra environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Request {
        self.env.insert(key.into(), value.into());
        self
    }

    /// The timeout (clamped to 1 s ..= 1 h when the call runs).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Request {
        self.timeout = None;
        self.timeout_ms = Some(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX));
        self
    }

    /// Keep the first `lines` lines of the output.
    #[must_use]
    pub fn head(mut self, lines: u64) -> Request {
        self.head = Some(lines);
        self
    }

    /// Keep the last `lines` lines of the output.
    #[must_use]
    pub fn tail(mut self, lines: u64) -> Request {
        self.tail = Some(lines);
        self
    }

    /// Answer after `after` if the command still runs: it goes on as a background job (see
    /// [`Request::yield_ms`]).
    #[must_use]
    pub fn yield_after(mut self, after: Duration) -> Request {
        self.yield_ms = Some(u64::try_from(after.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// Run under a pseudo-terminal.
    #[must_use]
    pub fn pty(mut self) -> Request {
        self.pty = true;
        self
    }

    /// stdout and stderr kept apart (see [`Request::streams`]).
    #[must_use]
    pub fn separate_streams(mut self) -> Request {
        self.streams = Some(Streams::Separate);
        self
    }

    /// The output as it is, nothing folded (see [`Request::view`]).
    #[must_use]
    pub fn raw_view(mut self) -> Request {
        self.view = Some(ViewStyle::Raw);
        self
    }

    /// Run in the persistent shell session `name`.
    #[must_use]
    pub fn in_session(mut self, name: impl Into<String>) -> Request {
        self.session = Some(name.into());
        self
    }

    /// Start as a background job.
    #[must_use]
    pub fn in_background(mut self) -> Request {
        self.run_in_background = true;
        self
    }

    /// Run under a pseudo-terminal.
    #[must_use]
    pub fn with_pty(mut self) -> Request {
        self.pty = true;
        self
    }

    /// Run in a stricter sandbox than the operator's (a looser one is refused).
    #[must_use]
    pub fn in_sandbox(mut self, mode: SandboxMode) -> Request {
        self.sandbox = Some(mode.as_str().to_owned());
        self
    }

    /// Run on a remote target (`docker://agent-1`; one the operator allowed).
    #[must_use]
    pub fn on_target(mut self, target: impl Into<String>) -> Request {
        self.target = Some(target.into());
        self
    }
}

/// Longest timeout accepted, in seconds.
pub const MAX_TIMEOUT_SECS: i64 = 3600;

/// A request problem, written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidRequest(pub String);

impl Request {
    /// Parses a request from JSON, with errors naming the field.
    pub fn from_json(text: &str) -> Result<Request, InvalidRequest> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| InvalidRequest(format!("invalid request: {e}")))?;
        Request::from_value(value)
    }

    /// Parses a request from a JSON value (an object), with errors naming the field.
    pub fn from_value(value: serde_json::Value) -> Result<Request, InvalidRequest> {
        if !value.is_object() {
            return Err(InvalidRequest(format!(
                "invalid request: a request is a JSON object such as {{\"command\": \"ls\"}}, not {}",
                crate::lenient::json_kind(&value)
            )));
        }
        crate::lenient::parse_params(value)
            .map_err(|e| InvalidRequest(format!("invalid request: {e}")))
    }
}

/// The JSON Schema of [`Request`].
pub fn request_schema() -> serde_json::Value {
    schema_for::<Request>()
}

/// `T`'s JSON Schema (2020-12) in the standard's own terms: the `format`s schemars adds for
/// Rust's integer types (`uint64`, `int32`, …) are not JSON Schema's and are dropped (the
/// `minimum` that says "unsigned" stays), so strict validators (Ajv's strict mode) compile it
/// and clients do not warn about unknown formats.
pub fn schema_for<T: schemars::JsonSchema>() -> serde_json::Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with_transform(schemars::transform::RestrictFormats::default())
        .into_generator()
        .into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or_default()
}
