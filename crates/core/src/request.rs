//! The request of one tool call (contract §1) and its validation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

/// One tool call. Unknown fields are rejected, naming the field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Shell command, run by the configured shell (`bash -o pipefail -c`; `sh -c` where there is no bash).
    #[serde(default)]
    pub command: Option<String>,
    /// Alternative to `command`: a program run directly, no shell. Exactly one of `command` / `executable`.
    #[serde(default)]
    pub executable: Option<String>,
    /// Arguments of `executable`.
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    /// Working directory; relative paths resolve against the tool's working directory (the
    /// session's cwd in a session).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Extra environment variables, applied after environment hardening.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Timeout in seconds (default 120), clamped to [1, 3600].
    #[serde(default, deserialize_with = "lenient_int")]
    #[schemars(extend("default" = 120, "minimum" = 1, "maximum" = 3600))]
    pub timeout: Option<i64>,
    /// Timeout in milliseconds, instead of `timeout`; same clamp.
    #[serde(default, deserialize_with = "lenient_int")]
    #[schemars(extend("minimum" = 1000, "maximum" = 3_600_000))]
    pub timeout_ms: Option<i64>,
    /// Keep the first N lines of the output (wins over a `| head` in the command).
    #[serde(default)]
    pub head: Option<u64>,
    /// Keep the last N lines of the output (wins over a `| tail` in the command).
    #[serde(default)]
    pub tail: Option<u64>,
    /// Start as a background job and return its `job_id` at once.
    #[serde(default)]
    pub run_in_background: bool,
    /// Run inside the persistent shell session of that name (cd, exports, functions persist).
    #[serde(default)]
    pub session: Option<String>,
    /// Run under a pseudo-terminal; output rendered to plain text.
    #[serde(default)]
    pub pty: bool,
}

/// Any JSON number (negative, huge, fractional) as an integer, saturating, so the clamp — not
/// a type error — decides what an out-of-range timeout means.
fn lenient_int<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v: Option<serde_json::Number> = Option::deserialize(d)?;
    Ok(v.map(|n| {
        n.as_i64().unwrap_or_else(|| {
            if n.as_u64().is_some() {
                i64::MAX
            } else {
                n.as_f64().map_or(0, |f| f as i64)
            }
        })
    }))
}

/// What to run, once validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A shell command line.
    Shell(String),
    /// A program and its arguments.
    Program(String, Vec<String>),
}

/// A request that passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// What to run.
    pub target: Target,
    /// The resolved working directory (absolute). `None` in a session without an explicit cwd.
    pub cwd: Option<PathBuf>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Timeout after clamping.
    pub timeout: Duration,
    /// Whole seconds or fractional, for the timeout banner.
    pub timeout_label: String,
    /// Explicit head.
    pub head: Option<usize>,
    /// Explicit tail.
    pub tail: Option<usize>,
    /// Background job.
    pub background: bool,
    /// Session name.
    pub session: Option<String>,
    /// PTY mode.
    pub pty: bool,
}

/// Longest timeout accepted, in seconds.
pub const MAX_TIMEOUT_SECS: i64 = 3600;

/// A request problem, written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidRequest(pub String);

fn label(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{:.1}", d.as_secs_f64())
    }
}

impl Request {
    /// Parses a request from JSON, with errors naming the field.
    pub fn from_json(text: &str) -> Result<Request, InvalidRequest> {
        serde_json::from_str(text).map_err(|e| InvalidRequest(format!("invalid request: {e}")))
    }

    /// Parses a request from a JSON value.
    pub fn from_value(value: serde_json::Value) -> Result<Request, InvalidRequest> {
        serde_json::from_value(value).map_err(|e| InvalidRequest(format!("invalid request: {e}")))
    }

    /// Checks the request and resolves its working directory against `base`.
    pub fn validate(
        &self,
        base: &Path,
        default_timeout: Duration,
    ) -> Result<Validated, InvalidRequest> {
        self.reject_nul()?;
        let target = match (&self.command, &self.executable) {
            (Some(_), Some(_)) => {
                return Err(InvalidRequest(
                    "give either command or executable, not both".into(),
                ));
            }
            (Some(c), None) if !c.trim().is_empty() => {
                if self.argv.is_some() {
                    return Err(InvalidRequest(
                        "argv goes with executable, not with command".into(),
                    ));
                }
                Target::Shell(c.clone())
            }
            (None, Some(e)) if !e.trim().is_empty() => {
                Target::Program(e.clone(), self.argv.clone().unwrap_or_default())
            }
            (None, Some(_)) => return Err(InvalidRequest("executable is empty".into())),
            _ => return Err(InvalidRequest("command is required".into())),
        };
        let timeout = match (self.timeout, self.timeout_ms) {
            (Some(_), Some(_)) => {
                return Err(InvalidRequest(
                    "give either timeout or timeout_ms, not both".into(),
                ));
            }
            (Some(s), None) => Duration::from_secs(s.clamp(1, MAX_TIMEOUT_SECS) as u64),
            (None, Some(ms)) => {
                Duration::from_millis(ms.clamp(1000, MAX_TIMEOUT_SECS * 1000) as u64)
            }
            (None, None) => default_timeout,
        };
        let cwd = match &self.cwd {
            Some(dir) if !dir.is_empty() => Some(resolve_cwd(base, dir)?),
            _ if self.session.is_some() => None,
            _ => Some(resolve_cwd(base, ".")?),
        };
        if let Some(session) = &self.session
            && session.trim().is_empty()
        {
            return Err(InvalidRequest("session name is empty".into()));
        }
        if self.pty && self.session.is_some() && !self.run_in_background {
            return Err(InvalidRequest(
                "pty is not available in a session: the session's shell keeps its state on pipes of its own. Drop `session` to run it under a terminal (one-shot, or with run_in_background for an interactive program), or drop `pty`".into(),
            ));
        }
        let to_usize = |v: Option<u64>| v.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        Ok(Validated {
            target,
            cwd,
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            timeout,
            timeout_label: label(timeout),
            head: to_usize(self.head),
            tail: to_usize(self.tail),
            background: self.run_in_background,
            session: self.session.clone(),
            pty: self.pty,
        })
    }
}

impl Request {
    /// No string a shell or `execve` receives may hold a NUL byte.
    fn reject_nul(&self) -> Result<(), InvalidRequest> {
        let nul = |field: &str, value: &str| {
            if value.contains('\0') {
                Err(InvalidRequest(format!(
                    "{field} contains a NUL byte (\\0), which no shell or program can receive; remove it"
                )))
            } else {
                Ok(())
            }
        };
        nul("command", self.command.as_deref().unwrap_or_default())?;
        nul("executable", self.executable.as_deref().unwrap_or_default())?;
        nul("cwd", self.cwd.as_deref().unwrap_or_default())?;
        nul("session", self.session.as_deref().unwrap_or_default())?;
        for a in self.argv.iter().flatten() {
            nul("argv", a)?;
        }
        for (k, v) in &self.env {
            nul("env", k)?;
            nul("env", v)?;
        }
        Ok(())
    }
}

/// Resolves `dir` against `base` and checks it is a directory (contract §2 messages).
pub fn resolve_cwd(base: &Path, dir: &str) -> Result<PathBuf, InvalidRequest> {
    let expanded = match dir.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => std::env::var_os("HOME")
            .map_or_else(
                || PathBuf::from(dir),
                |h| PathBuf::from(h).join(rest.trim_start_matches('/')),
            ),
        _ => PathBuf::from(dir),
    };
    let path = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    let path = normalize_lexically(&path);
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() => Ok(path),
        Ok(_) => Err(InvalidRequest(format!(
            "Working directory is not a directory: {}",
            path.display()
        ))),
        Err(_) => Err(InvalidRequest(format!(
            "Working directory does not exist: {}",
            path.display()
        ))),
    }
}

fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The JSON Schema of [`Request`].
pub fn request_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Request)).unwrap_or_default()
}
