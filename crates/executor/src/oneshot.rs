//! One command, start to end: spawn in its own containment group, capture, time out or cancel
//! with TERM → grace → KILL, drain, and leave no survivors.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use agent_exec_sink::{Sink, TerminalSize};

use crate::cancel::CancelToken;
use crate::containment::{self, CallGroup, Containment, GroupKind, LimitKind, Limits};
use crate::env::{EnvConfig, build_env};
use crate::pump::{DrainLimits, Pump};
use crate::sandbox::SandboxSpec;
use crate::spawn::{Io, Launch, SpawnError, raw, spawn};
use crate::supervise::{Finish, Watch, pidfd, supervise};
use crate::waiting::{InputWatch, OnWaiting};

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
    /// The size of its pseudo-terminal, when it runs under one ([`run_pty`], a PTY job).
    /// Default: 80×24.
    pub pty_size: TerminalSize,
    /// A [`run_pty`] call whose output has been idle this long while one of its processes is
    /// blocked reading the terminal (a prompt nobody can answer) is ended, with
    /// [`Stop::WaitingForInput`]; `None`: never. Default: [`PROMPT_IDLE`](crate::PROMPT_IDLE).
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
            grace: Duration::from_secs(2),
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

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
}

impl ExitStatus {
    /// A `wait(2)` status: `None` for one that is neither an exit nor a death by signal
    /// (stopped, continued).
    pub(crate) fn from_wait(raw: i32) -> Option<ExitStatus> {
        if libc::WIFEXITED(raw) {
            Some(ExitStatus::Exited(libc::WEXITSTATUS(raw)))
        } else if libc::WIFSIGNALED(raw) {
            Some(ExitStatus::Signaled(libc::WTERMSIG(raw)))
        } else {
            None
        }
    }
}

/// Why agent-exec ended a call before its process ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// The deadline passed.
    Timeout,
    /// The caller cancelled.
    Cancelled,
    /// The sink had all it could show (a trailing `| head -n N` was satisfied).
    SinkFull,
    /// The session the call ran in was closed.
    SessionClosed,
    /// A PTY call's output was idle while a process of it was blocked reading the terminal:
    /// it waited for an answer nobody could give ([`ExecSpec::prompt_idle`]).
    WaitingForInput,
    /// A watched resource limit was passed: the call's CPU time, or its socket buffers
    /// (`ExecOutcome::limit_hit` says which).
    LimitReached,
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExecOutcome {
    /// How the main process ended; `None` when it could not be started.
    pub status: Option<ExitStatus>,
    /// Why the call was ended early, if it was.
    pub stop: Option<Stop>,
    /// Wall time from spawn to the end of cleanup.
    pub duration: Duration,
    /// Why the program could not be started.
    pub spawn_error: Option<SpawnError>,
    /// Processes still running after the main process ended (background children) that were
    /// stopped at the end of the call.
    pub processes_stopped: usize,
    /// Output pipes were still held open when the drain bound passed.
    pub drain_cut_short: bool,
    /// How the call's processes were contained.
    pub containment: Option<GroupKind>,
    /// The resource limit that ended or hampered it, if one did.
    pub limit_hit: Option<LimitKind>,
    /// Problems that did not stop it (a limit kept more loosely than asked).
    pub warnings: Vec<String>,
}

impl ExecOutcome {
    /// The deadline passed and the command was ended.
    pub fn timed_out(&self) -> bool {
        self.stop == Some(Stop::Timeout)
    }

    /// The call was cancelled (or its session closed) and the command was ended.
    pub fn cancelled(&self) -> bool {
        matches!(self.stop, Some(Stop::Cancelled | Stop::SessionClosed))
    }

    /// The command was ended as it waited for input at a prompt ([`Stop::WaitingForInput`]).
    pub fn waiting_for_input(&self) -> bool {
        self.stop == Some(Stop::WaitingForInput)
    }

    /// The sink asked to stop (it had all it could show) and the command was ended.
    pub fn stopped_by_sink(&self) -> bool {
        self.stop == Some(Stop::SinkFull)
    }

    fn spawn_failed(error: SpawnError, start: Instant) -> ExecOutcome {
        ExecOutcome {
            spawn_error: Some(error),
            duration: start.elapsed(),
            ..ExecOutcome::default()
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

/// Runs `spec` to the end, pushing its output into `sink`. Blocks the calling thread.
///
/// Its stdout and stderr share one pipe unless [`ExecSpec::output`] says otherwise: the sink
/// gets the output in the order it was written, all of it as stdout.
///
/// The end of the call is the main process's exit, not EOF on its pipes: a process that closes
/// its output and keeps running is still waited for (and timed out). After it exits, pipes held
/// by background children are drained within `spec.drain`; then every process the command
/// started that is still running is ended (TERM → grace → KILL) and counted.
pub fn run<S: Sink + ?Sized>(spec: &ExecSpec, sink: &mut S, cancel: &CancelToken) -> ExecOutcome {
    run_with(
        spec,
        sink,
        cancel,
        Io::Pipes {
            stdin: false,
            output: spec.output,
        },
        OnWaiting::Stop,
        &mut |_| {},
    )
}

/// Like [`run`], but the command's stdin, stdout and stderr are a new pseudo-terminal
/// ([`ExecSpec::pty_size`]; `TERM=xterm-256color`), and it leads its own session. Output
/// arrives as one stream (stdout), raw: a sink renders it (`SinkConfig::terminal`). Nobody
/// types into the terminal: a call blocked reading it with its output idle for
/// [`ExecSpec::prompt_idle`] is ended ([`Stop::WaitingForInput`]).
pub fn run_pty<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
) -> ExecOutcome {
    run_with(
        spec,
        sink,
        cancel,
        Io::Pty(spec.pty_size),
        OnWaiting::Stop,
        &mut |_| {},
    )
}

/// The one-shot lifecycle: spawn in a fresh group, supervise to the main process's exit,
/// drain, end the survivors, count. `on_spawn` gets the input descriptor (a stdin pipe or the
/// PTY master) when `io` has one; `on_waiting` is what happens when the call waits on that
/// input (ended after [`ExecSpec::prompt_idle`], or a job's flag kept).
pub(crate) fn run_with<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
    io: Io,
    on_waiting: OnWaiting,
    on_spawn: &mut dyn FnMut(Option<OwnedFd>),
) -> ExecOutcome {
    let start = Instant::now();
    let mut group = CallGroup::new(spec.containment);
    if let Err(reason) = group.set_limits(&spec.limits) {
        on_spawn(None);
        let _ = sink.finish();
        return ExecOutcome::spawn_failed(SpawnError::Limits { reason }, start);
    }
    let launch = Launch {
        program: &spec.program,
        cwd: &spec.cwd,
        env: build_env(&spec.env, &spec.extra_env, matches!(io, Io::Pty(_))),
        io,
        sandbox: spec.sandbox.as_deref(),
    };
    let mut spawned = match spawn(&launch, &mut group) {
        Ok(s) => s,
        Err(e) => {
            on_spawn(None);
            let _ = sink.finish();
            return ExecOutcome::spawn_failed(e, start);
        }
    };
    on_spawn(spawned.input.take());
    let idle = match on_waiting {
        OnWaiting::Stop => spec.prompt_idle,
        OnWaiting::Flag(_) => Some(crate::waiting::JOB_WAITING_IDLE),
    };
    let mut io = CallIo::fresh(&spawned);
    io.input = spawned
        .input_end
        .zip(idle)
        .map(|(end, idle)| InputWatch::new(end, idle, on_waiting));
    supervise_call(spec, sink, cancel, start, &group, spawned, io)
}

/// A call's output pipes made ready to read (non-blocking, grown), and the pidfd of its
/// main process: done at spawn, or ahead of time for a prepared shell.
pub(crate) struct CallIo {
    pidfd: Option<OwnedFd>,
    /// Its input, watched for a wait nobody answers (PTY calls and jobs).
    input: Option<InputWatch>,
}

impl CallIo {
    /// Readies `spawned`'s pipes and opens its pidfd.
    pub(crate) fn fresh(spawned: &crate::spawn::Spawned) -> CallIo {
        for fd in [&spawned.stdout, &spawned.stderr].into_iter().flatten() {
            crate::pump::ready_output_pipe(std::os::fd::AsRawFd::as_raw_fd(fd));
        }
        CallIo {
            pidfd: pidfd(&spawned.child),
            input: None,
        }
    }
}

/// The rest of a one-shot call once its main process runs in `group`: supervise to its exit,
/// drain, end the survivors, count. Shared by fresh spawns and prepared shells.
pub(crate) fn supervise_call<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
    start: Instant,
    group: &CallGroup,
    mut spawned: crate::spawn::Spawned,
    io: CallIo,
) -> ExecOutcome {
    let mut pump = Pump::new(
        raw(spawned.stdout.as_ref()),
        raw(spawned.stderr.as_ref()),
        sink,
    );
    let pidfd = io.pidfd;
    let mut watch = Watch {
        child: &mut spawned.child,
        pidfd: pidfd.as_ref(),
        group,
        deadline: spec.timeout.map(|t| start + t),
        grace: spec.grace,
        cancel,
        close: None,
        spare_on_sink_stop: None,
        input: io.input,
    };
    let supervised = supervise(&mut watch, &mut pump, None);
    containment::release_pid(spawned.child.id() as i32);
    let mut outcome = ExecOutcome {
        status: match supervised.finish {
            Finish::Exited(status) => Some(status),
            Finish::Reported => None,
        },
        stop: supervised.stop,
        containment: Some(group.kind()),
        ..ExecOutcome::default()
    };
    if !pump.is_closed() {
        outcome.drain_cut_short = !pump.drain(spec.drain);
    }
    pump.finish();
    let stragglers = containment::end_members(group, None, spec.grace, supervised.termination);
    // A call agent-exec stopped (timeout, cancel, a satisfied head) was terminated whole: a
    // process still dying of that termination was not left running by the command (as in a
    // session: `session.rs`).
    outcome.processes_stopped = if outcome.stop.is_some() {
        0
    } else {
        stragglers
    };
    outcome.limit_hit = group.limit_hit(outcome.status);
    outcome.warnings.clone_from(&group.limits.fallbacks);
    drop(spawned.sandbox.take());
    outcome.duration = start.elapsed();
    outcome
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
