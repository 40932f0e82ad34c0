//! What to run: a program, its settings, and the shell a command line runs in.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_exec_sink::TerminalSize;

use crate::containment::{Containment, Limits};
use crate::env::EnvConfig;
use crate::pump::DrainLimits;
use crate::sandbox::SandboxSpec;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A shell command line, run by `shell -c`.
    Shell {
        /// The command line.
        command: String,
        /// The shell; `None` = `bash -o pipefail`, or `sh` where there is no bash.
        shell: Option<PathBuf>,
    },
    /// A program and its arguments, no shell.
    Argv {
        /// The program (looked up in `PATH` when it has no `/`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// How a command's stdout and stderr reach us (not under a PTY, where a terminal carries both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OutputPipes {
    /// One pipe for both, as `2>&1` (or a terminal) gives: what the command writes comes back
    /// in the order it wrote it, whichever descriptor it used. The two cannot be told apart
    /// on the way, so everything is pushed as [`Stream::Stdout`](agent_exec_sink::Stream).
    #[default]
    Shared,
    /// A pipe for each: the streams are told apart (and counted apart), but how writes to one
    /// interleave with writes to the other is lost (a reader sees two queues, not one
    /// history). For a caller that needs stdout alone (a helper whose stdout is data).
    Separate,
}

/// Between SIGTERM and SIGKILL, unless a call says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// Everything about one run.
#[derive(Debug, Clone)]
pub struct ExecSpec {
    /// What to run.
    pub program: Program,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// Environment construction.
    pub env: EnvConfig,
    /// Extra variables, applied last.
    pub extra_env: Vec<(String, String)>,
    /// Deadline for the command. Default: none.
    pub timeout: Option<Duration>,
    /// Between SIGTERM and SIGKILL. Default: 2 s.
    pub grace: Duration,
    /// Draining pipes held by background children. Default: [`DrainLimits::default`].
    pub drain: DrainLimits,
    /// How the call's processes are contained. Default: [`Containment::Auto`].
    pub containment: Containment,
    /// The sandbox its processes run in. Default: none.
    pub sandbox: Option<Arc<SandboxSpec>>,
    /// Its resource limits. Default: none.
    pub limits: Limits,
    /// The size of its pseudo-terminal, when it runs under one ([`run_pty`](crate::run_pty), a PTY job).
    /// Default: 80×24.
    pub pty_size: TerminalSize,
    /// A [`run_pty`](crate::run_pty) call whose output has been idle this long while one of its processes is
    /// blocked reading the terminal (a prompt nobody can answer) is ended, with
    /// [`Stop::WaitingForInput`](crate::Stop::WaitingForInput); `None`: never. Default: [`PROMPT_IDLE`](crate::PROMPT_IDLE).
    pub prompt_idle: Option<Duration>,
    /// One pipe for stdout and stderr, or one each (not under a PTY). Default:
    /// [`OutputPipes::Shared`].
    pub output: OutputPipes,
}

impl ExecSpec {
    /// A shell command in `cwd` with every other setting at its default.
    pub fn shell(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        ExecSpec {
            program: Program::Shell {
                command: command.into(),
                shell: None,
            },
            cwd: cwd.into(),
            env: EnvConfig::default(),
            extra_env: Vec::new(),
            timeout: None,
            grace: DEFAULT_GRACE,
            drain: DrainLimits::default(),
            containment: Containment::default(),
            sandbox: None,
            limits: Limits::default(),
            pty_size: TerminalSize::DEFAULT,
            prompt_idle: Some(crate::waiting::PROMPT_IDLE),
            output: OutputPipes::Shared,
        }
    }

    /// A program with arguments in `cwd`, no shell.
    pub fn argv(program: impl Into<String>, args: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        ExecSpec {
            program: Program::Argv {
                program: program.into(),
                args,
            },
            ..ExecSpec::shell("", cwd)
        }
    }
}

/// The default shell: `bash` from `PATH` (with `-o pipefail`), else `sh`.
pub(crate) fn default_shell() -> &'static (PathBuf, bool) {
    static SHELL: OnceLock<(PathBuf, bool)> = OnceLock::new();
    SHELL.get_or_init(|| match find_in_path("bash") {
        Some(bash) => (bash, true),
        None => (PathBuf::from("/bin/sh"), false),
    })
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
