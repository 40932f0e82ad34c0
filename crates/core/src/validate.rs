//! A request checked: what it runs, where, for how long and in which sandbox (contract §2's
//! messages). The wire type is the protocol's; what it means here is the tool's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_exec_executor::SandboxMode;
use agent_exec_protocol::{InvalidRequest, MAX_TIMEOUT_SECS, Request};

use crate::config::SandboxOrigin;

/// What to run, once validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// A shell command line.
    Shell(String),
    /// A program and its arguments.
    Program(String, Vec<String>),
}

/// A request that passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Validated {
    /// What to run.
    pub(crate) target: Invocation,
    /// The resolved working directory (absolute). `None` in a session without an explicit cwd.
    pub(crate) cwd: Option<PathBuf>,
    /// Extra environment.
    pub(crate) env: Vec<(String, String)>,
    /// Timeout after clamping.
    pub(crate) timeout: Duration,
    /// Explicit head.
    pub(crate) head: Option<usize>,
    /// Explicit tail.
    pub(crate) tail: Option<usize>,
    /// Background job.
    pub(crate) background: bool,
    /// Session name.
    pub(crate) session: Option<String>,
    /// PTY mode.
    pub(crate) pty: bool,
    /// When the call yields, if it still runs (`None`: it runs to its end).
    pub(crate) yield_after: Option<Duration>,
    /// stdout and stderr kept apart (`streams: "separate"`).
    pub(crate) separate: bool,
    /// How the output is shown, when the request says (`view`).
    pub(crate) view: Option<agent_exec_protocol::ViewStyle>,
    /// The sandbox mode of the call: the operator's, or the request's when stricter.
    pub(crate) sandbox: SandboxMode,
    /// Who set it.
    pub(crate) sandbox_origin: SandboxOrigin,
}

/// Checks the request and resolves its working directory against `base`.
pub(crate) fn validate(
    request: &Request,
    base: &Path,
    default_timeout: Duration,
    default_yield: Option<Duration>,
    (operator_sandbox, operator_origin): (SandboxMode, SandboxOrigin),
) -> Result<Validated, InvalidRequest> {
    reject_nul(request)?;
    let sandbox = match request.sandbox.as_deref() {
        None => operator_sandbox,
        Some(name) => {
            let asked = SandboxMode::parse(name).ok_or_else(|| {
                InvalidRequest(format!(
                    "sandbox must be off, read-only or workspace-write, not {name:?}"
                ))
            })?;
            if asked < operator_sandbox {
                return Err(InvalidRequest(format!(
                    "a request can only tighten the sandbox (operator: {})",
                    operator_sandbox.as_str()
                )));
            }
            asked
        }
    };
    let target = match (&request.command, &request.executable) {
        (Some(_), Some(_)) => {
            return Err(InvalidRequest(
                "give either command or executable, not both".into(),
            ));
        }
        (Some(c), None) if !c.trim().is_empty() => {
            if request.argv.is_some() {
                return Err(InvalidRequest(
                    "argv goes with executable, not with command".into(),
                ));
            }
            Invocation::Shell(c.clone())
        }
        (None, Some(e)) if !e.trim().is_empty() => {
            Invocation::Program(e.clone(), request.argv.clone().unwrap_or_default())
        }
        (None, Some(_)) => return Err(InvalidRequest("executable is empty".into())),
        _ => return Err(InvalidRequest("command is required".into())),
    };
    // Both may come (a strict caller sends every field): the shorter one holds, so that a
    // stray large value never outlasts the bound the caller also gave.
    let seconds = request
        .timeout
        .map(|s| Duration::from_secs(s.clamp(1, MAX_TIMEOUT_SECS) as u64));
    let millis = request
        .timeout_ms
        .map(|ms| Duration::from_millis(ms.clamp(1000, MAX_TIMEOUT_SECS * 1000) as u64));
    let timeout = match (seconds, millis) {
        (Some(s), Some(ms)) => s.min(ms),
        (one, other) => one.or(other).unwrap_or(default_timeout),
    };
    let cwd = match &request.cwd {
        Some(dir) if !dir.is_empty() => Some(resolve_cwd(base, dir)?),
        _ if request.session.is_some() => None,
        _ => Some(resolve_cwd(base, ".")?),
    };
    if let Some(session) = &request.session
        && session.trim().is_empty()
    {
        return Err(InvalidRequest("session name is empty".into()));
    }
    if request.pty && request.session.is_some() && !request.run_in_background {
        return Err(InvalidRequest(
            "pty is not available in a session: the session's shell keeps its state on pipes of its own. Drop `session` to run it under a terminal (one-shot, or with run_in_background for an interactive program), or drop `pty`".into(),
        ));
    }
    let separate = request.streams == Some(agent_exec_protocol::Streams::Separate);
    if separate && request.pty {
        return Err(InvalidRequest(
            "streams: \"separate\" cannot go with pty: a terminal carries stdout and stderr as one stream. Drop one of them".into(),
        ));
    }
    if separate && request.session.is_some() && !request.run_in_background {
        return Err(InvalidRequest(
            "streams: \"separate\" is not available in a session: the session's shell writes both to one pipe. Drop `session` (a one-shot call or a background job keeps them apart), or drop `streams`".into(),
        ));
    }
    let to_usize = |v: Option<u64>| v.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    // 0 asks for the end; a background job has nothing to yield.
    let yield_after = match request.yield_ms {
        Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
        None => default_yield.filter(|t| !t.is_zero()),
    }
    .filter(|_| !request.run_in_background);
    Ok(Validated {
        target,
        cwd,
        env: request
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        timeout,
        head: to_usize(request.head),
        tail: to_usize(request.tail),
        background: request.run_in_background,
        session: request.session.clone(),
        pty: request.pty,
        yield_after,
        separate,
        view: request.view,
        sandbox,
        // A mode the request names is its own, even the operator's (it fails closed).
        sandbox_origin: if request.sandbox.is_none() {
            operator_origin
        } else {
            SandboxOrigin::Request
        },
    })
}

/// No string a shell or `execve` receives may hold a NUL byte.
fn reject_nul(request: &Request) -> Result<(), InvalidRequest> {
    let nul = |field: &str, value: &str| {
        if value.contains('\0') {
            Err(InvalidRequest(format!(
                "{field} contains a NUL byte (\\0), which no shell or program can receive; remove it"
            )))
        } else {
            Ok(())
        }
    };
    nul("command", request.command.as_deref().unwrap_or_default())?;
    nul(
        "executable",
        request.executable.as_deref().unwrap_or_default(),
    )?;
    nul("cwd", request.cwd.as_deref().unwrap_or_default())?;
    nul("session", request.session.as_deref().unwrap_or_default())?;
    for a in request.argv.iter().flatten() {
        nul("argv", a)?;
    }
    for (k, v) in &request.env {
        nul("env", k)?;
        nul("env", v)?;
        if k.is_empty() || k.contains('=') {
            return Err(InvalidRequest(format!(
                "env name {k:?} is not a variable name: a name is not empty and holds no '=' (give \"NAME=value\")"
            )));
        }
    }
    Ok(())
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
