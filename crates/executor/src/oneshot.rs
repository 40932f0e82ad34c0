//! One command, start to end: spawn in its own group, capture, time out or cancel with
//! TERM → grace → KILL, drain, and leave no survivors.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use agent_exec_sink::Sink;
use nix::sys::signal::Signal;

use crate::cancel::CancelToken;
use crate::containment::{self, MARKER_VAR};
use crate::env::{EnvConfig, build_env};
use crate::pump::{DrainLimits, Pump};
use crate::sys;

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
            grace: Duration::from_secs(2),
            drain: DrainLimits::default(),
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

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecOutcome {
    /// How the main process ended; `None` when it could not be started.
    pub status: Option<ExitStatus>,
    /// The deadline passed and the command was ended.
    pub timed_out: bool,
    /// The call was cancelled and the command was ended.
    pub cancelled: bool,
    /// Wall time from spawn to the end of cleanup.
    pub duration: Duration,
    /// Why the program could not be started (the OS's reason).
    pub spawn_error: Option<String>,
    /// Processes still running after the main process ended (background children) that were
    /// stopped at the end of the call.
    pub processes_stopped: usize,
    /// Output pipes were still held open when the drain bound passed.
    pub drain_cut_short: bool,
    /// The sink asked to stop (it had all it could show) and the command was ended.
    pub stopped_by_sink: bool,
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

/// Builds the `Command` for `program` (no stdio, env or cwd yet).
pub(crate) fn base_command(program: &Program) -> Command {
    match program {
        Program::Shell { command, shell } => {
            let (path, is_bash) = match shell {
                Some(s) => (s.clone(), s.file_name().is_some_and(|n| n == "bash")),
                None => default_shell().clone(),
            };
            let mut cmd = Command::new(path);
            if is_bash {
                cmd.args(["-o", "pipefail"]);
            }
            cmd.arg("-c").arg(command);
            cmd
        }
        Program::Argv { program, args } => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    }
}

/// Spawns `spec` in its own process group with a marker in its environment.
pub(crate) fn spawn(
    spec: &ExecSpec,
    marker: &str,
    stdin_piped: bool,
    pty: bool,
) -> std::io::Result<Child> {
    let mut env: Vec<(OsString, OsString)> = build_env(&spec.env, &spec.extra_env, pty);
    env.push((MARKER_VAR.into(), marker.into()));
    if let Program::Shell {
        command,
        shell: None,
    } = &spec.program
        && let Some(words) = crate::direct::plain_words(command)
    {
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_os_str());
        if let Some(program) = crate::direct::resolve(words[0], path) {
            let mut cmd = Command::new(&program);
            // As the shell would: argv[0] as typed (error messages say `ls:`, not `/usr/bin/ls:`),
            // `_` the program's path, and PWD the logical cwd.
            cmd.arg0(words[0]).args(&words[1..]);
            let mut env = env.clone();
            let inherited = env
                .iter()
                .find(|(k, _)| k == "PWD")
                .map(|(_, v)| PathBuf::from(v));
            let same_dir = |a: &std::path::Path| {
                std::fs::canonicalize(a)
                    .ok()
                    .zip(std::fs::canonicalize(&spec.cwd).ok())
                    .is_some_and(|(x, y)| x == y)
            };
            let pwd = inherited
                .filter(|p| p.is_absolute() && same_dir(p))
                .unwrap_or_else(|| spec.cwd.clone());
            env.retain(|(k, _)| k != "PWD" && k != "_");
            env.push(("PWD".into(), pwd.into_os_string()));
            env.push(("_".into(), program.clone().into_os_string()));
            if let Ok(child) = configure(&mut cmd, env, spec, stdin_for(stdin_piped)).spawn() {
                return Ok(child);
            }
            // Anything unusual (a script without a shebang, a race with PATH): let the shell say it.
        }
    }
    let mut cmd = base_command(&spec.program);
    configure(&mut cmd, env, spec, stdin_for(stdin_piped)).spawn()
}

fn stdin_for(piped: bool) -> Stdio {
    if piped { Stdio::piped() } else { Stdio::null() }
}

fn configure<'a>(
    cmd: &'a mut Command,
    env: Vec<(OsString, OsString)>,
    spec: &ExecSpec,
    stdin: Stdio,
) -> &'a mut Command {
    cmd.env_clear()
        .envs(env)
        .current_dir(&spec.cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
}

pub(crate) fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitStatus::Exited(code),
        (None, Some(sig)) => ExitStatus::Signaled(sig),
        (None, None) => ExitStatus::Exited(-1),
    }
}

/// Runs `spec` to the end, pushing its output into `sink`. Blocks the calling thread.
///
/// The end of the call is the main process's exit, not EOF on its pipes: a process that closes
/// its output and keeps running is still waited for (and timed out). After it exits, pipes held
/// by background children are drained within `spec.drain`; then every process the command
/// started that is still running is ended (TERM → grace → KILL) and counted.
pub fn run<S: Sink + ?Sized>(spec: &ExecSpec, sink: &mut S, cancel: &CancelToken) -> ExecOutcome {
    run_inner(spec, sink, cancel, false, &mut |_, _| {})
}

/// [`run`] with an optional stdin pipe, handed to `on_spawn` with the process id.
pub(crate) fn run_inner<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
    stdin_pipe: bool,
    on_spawn: &mut dyn FnMut(Option<std::process::ChildStdin>, i32),
) -> ExecOutcome {
    let start = Instant::now();
    let marker = containment::new_marker();
    let mut outcome = ExecOutcome::default();
    let mut child = match spawn(spec, &marker, stdin_pipe, false) {
        Ok(child) => child,
        Err(e) => {
            outcome.spawn_error = Some(spawn_error_text(&spec.program, &e));
            let _ = sink.finish();
            outcome.duration = start.elapsed();
            return outcome;
        }
    };
    let pgid = child.id() as i32;
    on_spawn(child.stdin.take(), pgid);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut pump = Pump::new(
        stdout.as_ref().map(AsRawFd::as_raw_fd),
        stderr.as_ref().map(AsRawFd::as_raw_fd),
        sink,
    );
    follow_to_end(&mut child, &marker, spec, &mut pump, cancel, start, outcome)
}

/// The rest of a call once its process runs: supervise it to its exit, drain, end the
/// survivors, count. Shared by pipe and PTY runs.
pub(crate) fn follow_to_end<S: Sink + ?Sized>(
    child: &mut Child,
    marker: &str,
    spec: &ExecSpec,
    pump: &mut Pump<'_, S>,
    cancel: &CancelToken,
    start: Instant,
    mut outcome: ExecOutcome,
) -> ExecOutcome {
    let pgid = child.id() as i32;
    containment::supervise_pid(pgid);
    let status = supervise(child, pgid, marker, spec, pump, cancel, &mut outcome);
    containment::release_pid(pgid);
    outcome.status = Some(status);
    if !pump.is_closed() {
        outcome.drain_cut_short = !pump.drain(spec.drain);
    }
    pump.finish();
    outcome.processes_stopped = containment::end_survivors(Some(pgid), marker, spec.grace);
    outcome.duration = start.elapsed();
    outcome
}

/// Waits for the main process while pumping output; handles the deadline and cancellation.
pub(crate) fn supervise<S: Sink + ?Sized>(
    child: &mut Child,
    pgid: i32,
    marker: &str,
    spec: &ExecSpec,
    pump: &mut Pump<'_, S>,
    cancel: &CancelToken,
    outcome: &mut ExecOutcome,
) -> ExitStatus {
    let pidfd = sys::pidfd_open(pgid);
    let deadline = spec.timeout.map(|t| Instant::now() + t);
    let mut kill_at: Option<Instant> = None;
    // Ask for the exit status only when the pidfd says the process ended (or there is no
    // pidfd): a flood of output then costs no wait4 per wakeup.
    let mut check_exit = true;
    loop {
        let exited = if check_exit {
            child.try_wait()
        } else {
            Ok(None)
        };
        match exited {
            Ok(Some(status)) => {
                pump.read_now();
                return exit_status(status);
            }
            Ok(None) => {}
            // Someone else reaped it (a foreign waitpid(-1)); its status is lost, not its end.
            Err(_) => {
                pump.read_now();
                return ExitStatus::Exited(-1);
            }
        }
        let now = Instant::now();
        if kill_at.is_none() {
            let expired = deadline.is_some_and(|d| now >= d);
            if expired || cancel.is_cancelled() || pump.stopped {
                outcome.timed_out = expired && !cancel.is_cancelled();
                outcome.cancelled = cancel.is_cancelled();
                outcome.stopped_by_sink = pump.stopped && !expired && !outcome.cancelled;
                terminate(pgid, marker, Signal::SIGTERM);
                kill_at = Some(now + spec.grace);
            }
        } else if kill_at.is_some_and(|k| now >= k) {
            terminate(pgid, marker, Signal::SIGKILL);
            kill_at = Some(now + Duration::from_hours(1));
        }
        let wake = match kill_at {
            Some(k) => Some(k),
            None => deadline,
        };
        let mut timeout = wake.map(|w| w.saturating_duration_since(now));
        if pidfd.is_none() {
            // No pidfd: poll the exit status every few milliseconds.
            timeout = Some(timeout.map_or(Duration::from_millis(5), |t| {
                t.min(Duration::from_millis(5))
            }));
        }
        let [out, err] = pump.fds();
        let cancel_fd = (!cancel.is_cancelled()).then(|| cancel.fd());
        let ready = sys::poll_readable(
            &[out, err, pidfd.as_ref().map(AsRawFd::as_raw_fd), cancel_fd],
            timeout,
        );
        pump.read_ready([ready[0], ready[1]]);
        check_exit = pidfd.is_none() || ready[2] || kill_at.is_some();
    }
}

/// Signals the group and every process that left it.
pub(crate) fn terminate(pgid: i32, marker: &str, signal: Signal) {
    containment::signal_group(pgid, signal);
    let (escaped, _) = containment::find_members(None, marker);
    containment::signal_all(&escaped, signal);
}

fn spawn_error_text(program: &Program, e: &std::io::Error) -> String {
    let name = match program {
        Program::Shell { shell, .. } => shell
            .clone()
            .unwrap_or_else(|| default_shell().0.clone())
            .display()
            .to_string(),
        Program::Argv { program, .. } => program.clone(),
    };
    let reason = match e.kind() {
        std::io::ErrorKind::NotFound => format!("{e} (is it installed and on PATH?)"),
        std::io::ErrorKind::PermissionDenied => format!("{e} (is it executable?)"),
        _ => e.to_string(),
    };
    format!("failed to start {name}: {reason}")
}

/// Runs `spec` on a dedicated thread and awaits it.
///
/// # Cancel safety
/// Dropping the returned future cancels the call: the command's whole process group, and every
/// process that left it, gets SIGTERM, then SIGKILL after the grace period. The thread finishes
/// that cleanup on its own; nothing the command started survives the drop.
pub async fn run_async<S: Sink + Send + 'static>(
    spec: ExecSpec,
    mut sink: S,
    cancel: CancelToken,
) -> (ExecOutcome, S) {
    struct CancelOnDrop(Option<CancelToken>);
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            if let Some(token) = self.0.take() {
                token.cancel();
            }
        }
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut guard = CancelOnDrop(Some(cancel.clone()));
    std::thread::spawn(move || {
        let outcome = run(&spec, &mut sink, &cancel);
        let _ = tx.send((outcome, sink));
    });
    let result = rx.await.expect("the run thread always sends its result");
    guard.0 = None;
    result
}
