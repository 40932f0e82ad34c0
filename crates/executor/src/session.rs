//! Persistent shell sessions: cwd, exports, functions, aliases and options persist between calls.
//!
//! A session is `bash --noprofile --norc -c DRIVER` in its own containment group (see
//! [`crate::containment`]: the shell and everything it starts), with stdout and stderr on one
//! pipe to us (as `2>&1`: a command's output comes back in the order it was written) plus two
//! more pipes: a **control pipe** (we write, the shell reads) and a **status pipe** (the shell
//! writes, we read), passed as fds 3 and 4 and moved by the driver to 253 and 254, out of a
//! command's way. The driver keeps copies of fds 1 and 2 (both the output pipe) and of
//! `/dev/null` (opened read-write: it is also where the driver's own trace goes, without an
//! `open` per call) on 250, 251 and 252.
//!
//! Protocol: a command arrives as a header of 21 bytes, `A` (ASCII: the length in bytes is the
//! length in characters in any locale) or `B` (anything else: read with `LC_ALL=C` so the count
//! is in bytes) and the length right-aligned in 20, followed by the command; each is one
//! `read -N` (a header read up to a newline would take a `read(2)` per byte; bash's `read -N`
//! takes at most 2^31 − 1, which no request line comes near). The driver
//! `eval`s it in the shell itself (so `cd`, exports, functions, aliases and options persist),
//! then restores its fds 0, 1 and 2 from 252, 250 and 251 (so a command's `exec >/dev/null`
//! ends with it), and writes `S <status> <pwd>` on the status pipe; `J <status> <pwd>`, the pids
//! of `jobs -p`, and `E` when the command left background jobs (`$!` changed), which we then
//! end. The restore comes before the status: a shell that cannot restore exits before it
//! answers, so the next command is never sent to a shell about to exit. Output never
//! carries markers: binary output, output without a final newline or output that looks like a
//! status line comes back exact. The end of a command is that one status record, whichever
//! descriptors it wrote to: everything its foreground wrote is in the output pipe before it.
//! Restoring fds with `exec` after the call costs fewer system calls than redirecting each
//! `eval` (measured: 38 → ~25 per round trip), the ASCII frame spares two locale switches, and
//! the fixed header (one `read(2)`, not one per byte) with `case` and `[[` for `[` took a fifth
//! off the driver's own time per call here. A shell that cannot restore its descriptors (a
//! command closed 250–254), or read a whole frame, exits 249 and the next call starts a fresh
//! one, saying so.
//!
//! See `sessions-and-containment.md` for the experiments behind this design.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_exec_sink::{Sink, Stream};

use crate::cancel::CancelToken;
use crate::child::Child;
use crate::containment::{self, CallGroup, Containment, GroupKind};
use crate::env::{EnvConfig, build_env};
use crate::outcome::{ExecOutcome, Stop};
use crate::pump::{DrainLimits, Pump};
use crate::spawn::{Io, Launch, SpawnError, spawn};
use crate::spec::{ExecSpec, Program};
use crate::status::ExitStatus;
use crate::supervise::{Finish, Report, Watch, pidfd, supervise};
use crate::sys;
use crate::wait::wait_until;
use crate::waiting::{InputWatch, OnWaiting};

const DRIVER: &str = r#"exec 250>&1 251>&2 252<>/dev/null 253<&3 254>&4 3<&- 4>&- 0<&252 2>/dev/null
shopt -s expand_aliases 2>/dev/null
set -o pipefail
[ -n "${AGENT_EXEC_RC_SNAPSHOT-}" ] && [ -r "$AGENT_EXEC_RC_SNAPSHOT" ] && . "$AGENT_EXEC_RC_SNAPSHOT" >/dev/null 2>&1
unset AGENT_EXEC_RC_SNAPSHOT
exec 2>&251
__agent_exec_bg=${!-}
__agent_exec_flags=
while builtin read -r -u 253 -N 21 __agent_exec_len; do
  case $__agent_exec_len in
  A*) IFS= builtin read -r -u 253 -N "${__agent_exec_len:1}" __agent_exec_cmd || builtin exit 249;;
  *) LC_ALL=C IFS= builtin read -r -u 253 -N "${__agent_exec_len:1}" __agent_exec_cmd || builtin exit 249;;
  esac
  case $__agent_exec_flags in *x*) __agent_exec_cmd="set -x
$__agent_exec_cmd";; esac
  for __agent_exec_once in 1; do builtin eval "$__agent_exec_cmd"; done
  { __agent_exec_status=$? __agent_exec_flags=$-; set +x; } 2>&252
  exec 0<&252 1>&250 2>&251 || builtin exit 249
  if [[ ${!-} == "$__agent_exec_bg" ]]; then
    builtin printf 'S %s %s\0' "$__agent_exec_status" "$PWD" >&254 || builtin exit 249
  else
    __agent_exec_bg=${!-}
    { builtin printf 'J %s %s\0' "$__agent_exec_status" "$PWD"; builtin jobs -p; builtin printf 'E\0'; } >&254 || builtin exit 249
  fi
done
"#;

/// How long a shell that is gone (or going) is waited for, its last output read every
/// [`SHELL_EXIT_POLL`], before its group is killed.
const SHELL_EXIT_WAIT: Duration = Duration::from_secs(2);
const SHELL_EXIT_POLL: Duration = Duration::from_millis(2);

/// The grace of what a gone shell left running, and of the throwaway shell of an rc snapshot.
const SHORT_GRACE: Duration = Duration::from_millis(200);

/// How a session's shell is started.
#[derive(Debug, Clone, Default)]
pub struct SessionConfig {
    /// The shell; `None` = `bash` from `PATH`.
    pub shell: Option<PathBuf>,
    /// Environment construction.
    pub env: EnvConfig,
    /// Extra variables of the session.
    pub extra_env: Vec<(String, String)>,
    /// A script sourced when the shell starts (see [`rc_snapshot`]).
    pub rc_snapshot: Option<PathBuf>,
    /// A prefix put before every command (`<prefix> <command>`).
    pub prefix: Option<String>,
    /// How the shell and its commands are contained. Default: [`Containment::Auto`].
    pub containment: Containment,
    /// The sandbox the shell (and so every command of the session) runs in.
    pub sandbox: Option<std::sync::Arc<crate::sandbox::SandboxSpec>>,
    /// The resource limits of the shell and everything it starts, together.
    pub limits: crate::containment::Limits,
    /// How long a command's output must be idle, with a process of it waiting for a terminal
    /// the session does not have, before the command is ended (`None`, the default: never;
    /// [`PROMPT_IDLE`](crate::PROMPT_IDLE) is what a one-shot call uses).
    pub prompt_idle: Option<Duration>,
}

/// A live session shell. Dropped without [`Session::close`], it still leaves nothing behind:
/// its child (`child.rs`) kills its group and reaps the shell.
#[derive(Debug)]
pub struct Session {
    /// The shell and its group: first, so that a dropped session ends the shell before its
    /// sandbox goes.
    child: Child,
    /// The sandbox the shell runs in (its temporary directory lives as long as the shell).
    _sandbox: Option<crate::sandbox::Prepared>,
    pidfd: Option<OwnedFd>,
    control: OwnedFd,
    status: OwnedFd,
    /// The pipe the shell's stdout and stderr share.
    output: OwnedFd,
    cwd: PathBuf,
    prefix: Option<String>,
    status_buf: Vec<u8>,
    /// Cancelled when the session is closed from another thread (see [`Session::closer`]).
    closer: CancelToken,
    /// What its commands may wait on: the terminal the shell does not have.
    watched: crate::waiting::Watched,
    prompt_idle: Option<Duration>,
}

/// Why a session's shell is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEnd {
    /// agent-exec ended it: the deadline passed, the call was cancelled, the session was
    /// closed, or the shell itself kept producing after the output window was full.
    Stopped(Stop),
    /// The shell exited by itself (`exit N`, or an `exec`ed program that ended).
    Exited(i32),
    /// A signal killed the shell (sent from outside, or by the command to its own shell).
    Killed(i32),
    /// A command closed or redirected the session's own descriptors.
    DescriptorsLost,
    /// The shell was gone before the command could be sent to it.
    Gone,
}

/// The outcome of one command in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionOutcome {
    /// As for a one-shot run; `status` is the command's (or the shell's, when it ended).
    pub exec: ExecOutcome,
    /// The shell's cwd after the command.
    pub cwd: PathBuf,
    /// Why the shell is gone, when the command ended it.
    pub ended: Option<SessionEnd>,
}

/// What the shell reported after a command.
struct Status {
    code: i32,
    cwd: PathBuf,
    jobs: Vec<i32>,
}

impl Session {
    /// Starts a session shell in `cwd`.
    pub fn start(config: &SessionConfig, cwd: &Path) -> Result<Session, SpawnError> {
        let mut group = CallGroup::new(config.containment);
        group
            .set_limits(&config.limits)
            .map_err(SpawnError::LimitUnavailable)?;
        let shell = config
            .shell
            .clone()
            .unwrap_or_else(|| crate::spec::default_shell().0.clone());
        let pipes = sys::pipe().and_then(|c| Ok((c, sys::pipe()?)));
        let ((control_r, control_w), (status_r, status_w)) =
            pipes.map_err(|e| SpawnError::Program {
                program: shell.display().to_string(),
                reason: format!("no pipes for the session: {e}"),
                kind: e.kind(),
            })?;
        let mut env = build_env(&config.env, &config.extra_env, false);
        if let Some(rc) = &config.rc_snapshot {
            env.push(("AGENT_EXEC_RC_SNAPSHOT".into(), rc.clone().into()));
        }
        let program = Program::Argv {
            program: shell.display().to_string(),
            args: ["--noprofile", "--norc", "-c", DRIVER]
                .map(str::to_owned)
                .to_vec(),
        };
        let spawned = spawn(
            &Launch {
                program: &program,
                cwd,
                env,
                io: Io::SessionShell {
                    control: control_r.as_raw_fd(),
                    status: status_w.as_raw_fd(),
                },
                sandbox: config.sandbox.as_deref(),
            },
            &mut group,
        )?;
        drop(control_r);
        drop(status_w);
        let watched = spawned.watched;
        let output = spawned.stdout.expect("the session's output is piped");
        crate::pump::ready_output_pipe(output.as_raw_fd());
        let _ = sys::set_nonblocking(status_r.as_raw_fd());
        let pidfd = pidfd(&spawned.child);
        Ok(Session {
            child: Child::new(spawned.child, group),
            _sandbox: spawned.sandbox,
            pidfd,
            control: control_w,
            status: status_r,
            output,
            cwd: cwd.to_path_buf(),
            prefix: config.prefix.clone(),
            status_buf: Vec::new(),
            closer: CancelToken::new(),
            watched,
            prompt_idle: config.prompt_idle,
        })
    }

    /// The shell's cwd after the last command.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// How the session's processes are contained.
    pub fn containment(&self) -> GroupKind {
        self.child.group().kind()
    }

    /// Whether the shell is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// A handle that ends the session from another thread: cancelling it ends a running command
    /// at once (its outcome says [`Stop::SessionClosed`]) and the shell with it.
    pub fn closer(&self) -> CancelToken {
        self.closer.clone()
    }

    /// Runs `command` in the shell, pushing its output into `sink`.
    ///
    /// When the sink stops (a `| head` satisfied) or the command waits for a terminal the
    /// session does not have (`on_waiting`: [`OnWaiting::Stop`]), the command's processes are
    /// ended and the shell is kept; on the deadline, a cancel or a close, the shell ends too.
    #[allow(clippy::too_many_arguments)] // each is one of the call's settings
    pub fn run<S: Sink + ?Sized>(
        &mut self,
        command: &str,
        sink: &mut S,
        timeout: Option<Duration>,
        grace: Duration,
        drain: DrainLimits,
        cancel: &CancelToken,
        on_waiting: OnWaiting,
    ) -> SessionOutcome {
        let start = Instant::now();
        let mut pump = Pump::new(Some(self.output.as_raw_fd()), None, sink);
        // Output left by an earlier command's background processes is not this command's.
        pump.discard_now();
        let full = match &self.prefix {
            Some(p) => format!("{p} {command}"),
            None => command.to_owned(),
        };
        // `A`: plain ASCII, whose length in characters is its length in bytes in any locale.
        // `B`: anything else, read with `LC_ALL=C` so the count is in bytes (that switch of
        // locale costs a round trip, so ASCII commands skip it).
        let kind = if full.is_ascii() { 'A' } else { 'B' };
        let mut frame = format!("{kind}{:>20}", full.len()).into_bytes();
        frame.extend_from_slice(full.as_bytes());
        self.status_buf.clear();
        if self.closer.is_cancelled() || sys::write_all(&self.control, &frame).is_err() {
            let exec = ExecOutcome {
                stop: self.closer.is_cancelled().then_some(Stop::SessionClosed),
                ..ExecOutcome::default()
            };
            return self.ended(pump, exec, start, None);
        }
        let status_fd = self.status.as_raw_fd();
        let (status_buf, status) = (&mut self.status_buf, &self.status);
        let mut read_report = || read_status(status, status_buf);
        let shell = self.child.pid();
        let (child, group) = self.child.parts();
        let mut watch = Watch {
            child,
            pidfd: self.pidfd.as_ref(),
            group,
            deadline: timeout.map(|t| start + t),
            grace,
            cancel,
            close: Some(&self.closer),
            spare_on_sink_stop: Some(shell),
            input: InputWatch::new(self.watched, on_waiting.idle(self.prompt_idle), on_waiting),
        };
        let supervised = supervise(&mut watch, &mut pump, Some((status_fd, &mut read_report)));
        let waited = watch.input.take().and_then(|i| i.found);
        let mut exec = ExecOutcome {
            stop: supervised.stop,
            waited,
            containment: Some(self.child.group().kind()),
            ..ExecOutcome::default()
        };
        let report = match supervised.finish {
            Finish::Reported => parse_status(&self.status_buf),
            Finish::Exited(status) => {
                exec.status = Some(status);
                None
            }
        };
        let Some(report) = report else {
            return self.ended(pump, exec, start, supervised.termination);
        };
        // Everything the foreground wrote came before the status line.
        pump.read_now();
        // Processes the command left running are ended (never the shell): with a cgroup, its
        // members other than the shell (one read); in the fallback, a `$!` that changed or a
        // backgrounding word in the command says when a `/proc` scan is worth its cost.
        let group = self.child.group();
        let worth_a_look = !matches!(
            group.kind(),
            GroupKind::ProcessGroup | GroupKind::PidNamespace
        ) || !report.jobs.is_empty()
            || may_background(command)
            || supervised.termination.is_some();
        if worth_a_look {
            let ongoing = supervised.termination;
            let stopped = containment::end_members(group, Some(self.child.pid()), grace, ongoing);
            // Ended by the sink's stop, those were the command's own processes. (`jobs -p`
            // lists finished jobs too: only the group's live members are counted.)
            exec.processes_stopped = if exec.stop.is_some() { 0 } else { stopped };
            // What the processes wrote last, also one that ended by itself before the look.
            pump.read_now();
        }
        let _ = drain;
        pump.finish();
        exec.status = Some(ExitStatus::Exited(report.code));
        exec.limit_hit = group.limit_hit(exec.status);
        exec.warnings.clone_from(&group.limits.fallbacks);
        self.cwd = report.cwd;
        exec.duration = start.elapsed();
        SessionOutcome {
            exec,
            cwd: self.cwd.clone(),
            ended: None,
        }
    }

    /// The shell is gone (or going): wait for it (bounded), collect the last output, end
    /// whatever it left, and say why.
    fn ended<S: Sink + ?Sized>(
        &mut self,
        mut pump: Pump<'_, S>,
        mut exec: ExecOutcome,
        start: Instant,
        ongoing: Option<containment::Termination>,
    ) -> SessionOutcome {
        // Its last output is collected while it is waited for.
        let mut status = Ok(None);
        wait_until(SHELL_EXIT_WAIT, SHELL_EXIT_POLL, || {
            status = self.child.try_wait();
            let waiting = matches!(status, Ok(None));
            if waiting {
                pump.read_now();
            }
            !waiting
        });
        let status = match status {
            Ok(Some(s)) => Some(s),
            _ => self.child.kill_and_wait(),
        };
        self.child.release();
        pump.read_now();
        if !pump.is_closed() {
            exec.drain_cut_short = !pump.drain(DrainLimits {
                idle: Duration::from_millis(50),
                max: Duration::from_millis(500),
            });
        }
        pump.finish();
        let group = self.child.group();
        let stopped = containment::end_members(group, None, SHORT_GRACE, ongoing);
        exec.processes_stopped = if exec.stop.is_some() { 0 } else { stopped };
        exec.status = exec.status.or(status);
        exec.containment = Some(group.kind());
        exec.duration = start.elapsed();
        let why = match (exec.stop, exec.status) {
            (Some(stop), _) => SessionEnd::Stopped(stop),
            (None, Some(ExitStatus::Exited(249))) => SessionEnd::DescriptorsLost,
            (None, Some(ExitStatus::Exited(c))) => SessionEnd::Exited(c),
            (None, Some(ExitStatus::Signaled(s))) => SessionEnd::Killed(s),
            (None, None) => SessionEnd::Gone,
        };
        SessionOutcome {
            exec,
            cwd: self.cwd.clone(),
            ended: Some(why),
        }
    }

    /// Ends the shell and everything it started (TERM → grace → KILL). Returns how many
    /// processes other than the shell were running.
    pub fn close(mut self, grace: Duration) -> usize {
        let others = self.child.group().members(Some(self.child.pid())).len();
        containment::end_members(self.child.group(), None, grace, None);
        let _ = self.child.wait();
        self.child.release();
        // Orphans the close killed may be zombies of ours now that the shell is gone.
        containment::reap_orphans();
        others
    }
}

/// Reads what the status pipe holds into `buf`, until the record is complete (not one more
/// `read(2)` to learn that the pipe is empty: the shell writes nothing after it).
fn read_status(status: &OwnedFd, buf: &mut Vec<u8>) -> Report {
    let mut chunk = [0u8; 4096];
    loop {
        let mut got = false;
        let state = sys::read_available(status.as_raw_fd(), &mut chunk, 1, |c| {
            got = true;
            buf.extend_from_slice(c);
        });
        if parse_status(buf).is_some() {
            return Report::Complete;
        }
        if state == sys::ReadState::Closed {
            return Report::Closed;
        }
        if !got {
            return Report::Partial;
        }
    }
}

/// Whether a command line may leave processes running: a lone `&` (not `&&`, `>&`, `&>`, `|&`)
/// or a word that detaches (`disown`, `setsid`, `nohup`, `daemon`).
fn may_background(command: &str) -> bool {
    let b = command.as_bytes();
    let lone_amp = b.iter().enumerate().any(|(i, &c)| {
        c == b'&'
            && !matches!(
                i.checked_sub(1).map(|j| b[j]),
                Some(b'&' | b'>' | b'<' | b'|')
            )
            && !matches!(b.get(i + 1), Some(b'&' | b'>'))
    });
    lone_amp
        || ["disown", "setsid", "nohup", "daemon"]
            .iter()
            .any(|w| command.contains(w))
}

/// Parses `S <status> <pwd>\0`, or `J <status> <pwd>\0` + `<pid>\n`* + `E\0` when the command
/// left background jobs. The pwd is raw bytes (NUL is the one byte a path cannot hold).
fn parse_status(buf: &[u8]) -> Option<Status> {
    use std::os::unix::ffi::OsStringExt;
    let nul = buf.iter().position(|&b| b == 0)?;
    let head = &buf[..nul];
    let rest = &buf[nul + 1..];
    let kind = head.get(..2)?;
    let fields = &head[2..];
    let space = fields.iter().position(|&b| b == b' ')?;
    let code: i32 = std::str::from_utf8(&fields[..space]).ok()?.parse().ok()?;
    let cwd = PathBuf::from(std::ffi::OsString::from_vec(fields[space + 1..].to_vec()));
    let jobs = match kind {
        b"S " => Vec::new(),
        b"J " if rest.ends_with(b"E\0") => String::from_utf8_lossy(&rest[..rest.len() - 2])
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect(),
        _ => return None,
    };
    Some(Status { code, cwd, jobs })
}

/// The shell sessions and snapshots use when none is configured: `bash` from `PATH`, else `sh`.
pub fn default_shell_path() -> &'static Path {
    &crate::spec::default_shell().0
}

/// Why an rc snapshot could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RcSnapshotError {
    /// The rc file did not finish within the time allowed.
    #[error("~/.bashrc did not finish within {} s", .0.as_secs_f64())]
    TimedOut(Duration),
    /// The throwaway shell could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The shell ended without writing the snapshot (the rc exited, or failed).
    #[error("the shell ended without writing the snapshot ({0:?})")]
    NotWritten(Option<ExitStatus>),
    /// The cache directory could not be written.
    #[error("the cache directory could not be written: {0}")]
    Io(String),
}

/// A sink that drops everything: what `~/.bashrc` prints is never used.
struct Discard;

impl Sink for Discard {
    type Error = std::convert::Infallible;
    fn push(&mut self, _: Stream, _: &[u8]) -> Result<bool, Self::Error> {
        Ok(true)
    }
    fn finish(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Builds an rc snapshot for `shell`: runs the user's `~/.bashrc` once in a throwaway
/// interactive shell (stdin `/dev/null`) and writes its functions, aliases, shell options and
/// `PATH` into a script under `cache_dir`, reused while `~/.bashrc` is unchanged.
///
/// The shell runs like any call (its own containment group, ended after `timeout`). The
/// snapshot is written by the shell's own builtins to a file of ours, never taken from its
/// output: what the rc prints is dropped, so it can never be executed later. With `sandbox`
/// (the session's), the rc runs in it, with only `cache_dir` writable and the network off.
pub fn rc_snapshot(
    shell: &Path,
    cache_dir: &Path,
    timeout: Duration,
    containment: Containment,
    sandbox: Option<&crate::sandbox::SandboxSpec>,
) -> Result<PathBuf, RcSnapshotError> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let rc = home.join(".bashrc");
    let stamp = std::fs::metadata(&rc).and_then(|m| m.modified()).ok();
    let stamp = stamp
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let io_error = |e: std::io::Error| RcSnapshotError::Io(e.to_string());
    std::fs::create_dir_all(cache_dir).map_err(io_error)?;
    let name = shell
        .file_name()
        .map_or_else(|| "sh".into(), |n| n.to_string_lossy().into_owned());
    let path = cache_dir.join(format!("rc-snapshot-{name}-{stamp}.sh"));
    if path.is_file() {
        return Ok(path);
    }
    let partial = cache_dir.join(format!(
        ".rc-snapshot-{name}-{stamp}.{}.partial",
        std::process::id()
    ));
    // Written by the builtins themselves: traps the rc set (a DEBUG trap that prints a window
    // title) are cleared first, and functions that shadow the builtins used are removed (in
    // POSIX mode `unset` and `trap`, special builtins, cannot be shadowed).
    let script = r#"set -o posix; trap - DEBUG RETURN ERR; unset -f builtin declare alias shopt printf command; set +o posix; set +xvT; { builtin declare -f; builtin alias -p; builtin shopt -p; builtin printf 'export PATH=%q\n' "$PATH"; } > "$AGENT_EXEC_SNAPSHOT_OUT""#;
    let mut spec = ExecSpec::argv(
        shell.display().to_string(),
        ["-i", "-c", script].map(str::to_owned).to_vec(),
        if home.is_dir() {
            home.clone()
        } else {
            std::env::temp_dir()
        },
    );
    spec.extra_env.push((
        "AGENT_EXEC_SNAPSHOT_OUT".into(),
        partial.display().to_string(),
    ));
    spec.timeout = Some(timeout);
    spec.grace = SHORT_GRACE;
    spec.containment = containment;
    // Sessions run sandboxed run `~/.bashrc` sandboxed too (a sandboxed command may have
    // written it, when the workspace is the home): it may write only the snapshot.
    spec.sandbox = sandbox.map(|s| {
        std::sync::Arc::new(crate::sandbox::SandboxSpec {
            mode: crate::sandbox::SandboxMode::WorkspaceWrite,
            workspace: cache_dir.to_path_buf(),
            writable: Vec::new(),
            caches: Vec::new(),
            network: crate::sandbox::NetworkMode::Off,
            allow_hosts: Vec::new(),
            // The cache is held from the calls' sandbox; here it is the one thing writable.
            read_only: s
                .read_only
                .iter()
                .filter(|held| !cache_dir.starts_with(held))
                .cloned()
                .collect(),
            ..s.clone()
        })
    });
    let outcome = crate::oneshot::run(&spec, &mut Discard, &CancelToken::new());
    if let Some(e) = outcome.spawn_error {
        return Err(e.into());
    }
    if outcome.timed_out() {
        let _ = std::fs::remove_file(&partial);
        return Err(RcSnapshotError::TimedOut(timeout));
    }
    if outcome.status != Some(ExitStatus::Exited(0)) || !partial.is_file() {
        let _ = std::fs::remove_file(&partial);
        return Err(RcSnapshotError::NotWritten(outcome.status));
    }
    std::fs::rename(&partial, &path).map_err(io_error)?;
    Ok(path)
}

impl<S: Sink + ?Sized> Pump<'_, S> {
    /// Reads and drops whatever is waiting on the pipes.
    pub(crate) fn discard_now(&mut self) {
        let mut buf = [0u8; 4096];
        for fd in self.fds().into_iter().flatten() {
            let _ = sys::read_available(fd, &mut buf, 64, |_| {});
        }
    }
}
