//! One command, start to end: spawn in its own containment group, capture, time out or cancel
//! with TERM → grace → KILL, drain, and leave no survivors.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Instant;

use agent_exec_sink::Sink;

use crate::cancel::CancelToken;
use crate::child::Child;
use crate::containment::{self, CallGroup};
use crate::env::build_env;
use crate::pump::Pump;
use crate::sandbox::Prepared;
use crate::spawn::{Io, Launch, SpawnError, Spawned, raw, spawn};
use crate::supervise::{Finish, Watch, pidfd, supervise};
use crate::waiting::{InputWatch, OnWaiting, Watched};

use crate::outcome::ExecOutcome;
use crate::spec::ExecSpec;

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
    run_piped(spec, sink, cancel, OnWaiting::Stop)
}

/// [`run`], with what a wait for a terminal the call lacks does (`on_waiting`).
pub(crate) fn run_piped<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
    on_waiting: OnWaiting,
) -> ExecOutcome {
    let io = Io::Pipes {
        stdin: false,
        output: spec.output,
    };
    run_with(spec, sink, cancel, io, on_waiting, &mut |_| {})
}

/// Like [`run`], but the command's stdin, stdout and stderr are a new pseudo-terminal
/// ([`ExecSpec::pty_size`]; `TERM=xterm-256color`), and it leads its own session. Output
/// arrives as one stream (stdout), raw: a sink renders it (`SinkConfig::terminal`). Nobody
/// types into the terminal: a call blocked reading it with its output idle for
/// [`ExecSpec::prompt_idle`] is ended ([`Stop::WaitingForInput`](crate::Stop::WaitingForInput)).
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
    if let Err(unavailable) = group.set_limits(&spec.limits) {
        on_spawn(None);
        let _ = sink.finish();
        return ExecOutcome::spawn_failed(SpawnError::LimitUnavailable(unavailable), start);
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
    let call = Call::new(spawned, group);
    supervise_call(spec, sink, cancel, start, call, on_waiting)
}

/// A started call: its main process (owned, with its group), its output pipes made ready to
/// read (non-blocking, grown) and the pidfd of its main process — done at spawn, or ahead of
/// time for a prepared shell.
pub(crate) struct Call {
    child: Child,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    /// The sandbox it runs in: kept until the call is over (its temporary directory).
    sandbox: Option<Prepared>,
    pidfd: Option<OwnedFd>,
    /// What it may wait on, watched for a wait nobody answers.
    watched: Watched,
}

impl Call {
    /// Takes `spawned` (its input already taken), started in `group`: readies its pipes and
    /// opens its pidfd.
    pub(crate) fn new(spawned: Spawned, group: CallGroup) -> Call {
        for fd in [&spawned.stdout, &spawned.stderr].into_iter().flatten() {
            crate::pump::ready_output_pipe(fd.as_raw_fd());
        }
        Call {
            pidfd: pidfd(&spawned.child),
            child: Child::new(spawned.child, group),
            stdout: spawned.stdout,
            stderr: spawned.stderr,
            sandbox: spawned.sandbox,
            watched: spawned.watched,
        }
    }

    /// Its main process, owned.
    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

/// The rest of a one-shot call once its main process runs: supervise to its exit, drain, end
/// the survivors, count. Shared by fresh spawns and prepared shells. `on_waiting`: what a wait
/// for input (or for a terminal it lacks) does.
pub(crate) fn supervise_call<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
    start: Instant,
    call: Call,
    on_waiting: OnWaiting,
) -> ExecOutcome {
    let Call {
        mut child,
        stdout,
        stderr,
        sandbox,
        pidfd,
        watched,
    } = call;
    let input = InputWatch::new(watched, on_waiting.idle(spec.prompt_idle), on_waiting);
    let mut pump = Pump::new(raw(stdout.as_ref()), raw(stderr.as_ref()), sink);
    let (process, group) = child.parts();
    let mut watch = Watch {
        child: process,
        pidfd: pidfd.as_ref(),
        group,
        deadline: spec.timeout.map(|t| start + t),
        grace: spec.grace,
        cancel,
        close: None,
        spare_on_sink_stop: None,
        input,
    };
    let supervised = supervise(&mut watch, &mut pump, None);
    let waited = watch.input.take().and_then(|i| i.found);
    // Waited for (or its status lost to another's wait): its pid is no longer ours to keep.
    child.release();
    let group = child.group();
    let mut outcome = ExecOutcome {
        status: match supervised.finish {
            Finish::Exited(status) => Some(status),
            Finish::Reported => None,
        },
        stop: supervised.stop,
        containment: Some(group.kind()),
        waited,
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
    drop(sandbox);
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
