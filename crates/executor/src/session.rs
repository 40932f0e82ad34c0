//! Persistent shell sessions: cwd, exports, functions, aliases and options persist between calls.
//!
//! A session is `bash --noprofile --norc -c DRIVER` in its own process group, with stdout and
//! stderr on pipes to us plus two more pipes: a **control pipe** (we write, the shell reads) and
//! a **status pipe** (the shell writes, we read), passed as fds 3 and 4 and moved by the driver
//! to 253 and 254, out of a command's way. The driver keeps copies of the output pipes and of
//! `/dev/null` on 250, 251 and 252.
//!
//! Protocol: a command arrives as `A<len>\n` (ASCII: the length in bytes is the length in
//! characters in any locale) or `B<len>\n` (anything else: read with `LC_ALL=C` so the count is
//! in bytes) followed by the command, read with `read -N` in one go. The driver `eval`s it in the
//! shell itself (so `cd`, exports, functions, aliases and options persist), then restores its
//! fds 0, 1 and 2 from 252, 250 and 251 (so a command's `exec >/dev/null` ends with it), and
//! writes `S <status> <pwd>` on the status pipe; `J <status> <pwd>`, the pids of `jobs -p`, and
//! `E` when the command left background jobs (`$!` changed), which we then end. Output never
//! carries markers: binary output, output without a final newline or output that looks like a
//! status line comes back exact. Restoring fds with `exec` after the call costs fewer system
//! calls than redirecting each `eval` (measured: 38 → ~25 per round trip), and the ASCII frame
//! spares two locale switches. A shell that cannot restore its descriptors (a command closed
//! 250–254) exits 249 and the next call starts a fresh one, saying so.
//!
//! See `sessions-and-containment.md` for the experiments behind this design.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_exec_sink::Sink;
use nix::sys::signal::Signal;

use crate::cancel::CancelToken;
use crate::containment::{self, MARKER_VAR};
use crate::env::{EnvConfig, build_env};
use crate::oneshot::{ExecOutcome, ExitStatus, exit_status};
use crate::pump::{DrainLimits, Pump};
use crate::sys;

const DRIVER: &str = r#"exec 250>&1 251>&2 252</dev/null 253<&3 254>&4 3<&- 4>&- 0<&252 2>/dev/null
shopt -s expand_aliases 2>/dev/null
set -o pipefail
[ -n "${AGENT_EXEC_RC_SNAPSHOT-}" ] && [ -r "$AGENT_EXEC_RC_SNAPSHOT" ] && . "$AGENT_EXEC_RC_SNAPSHOT" >/dev/null 2>&1
unset AGENT_EXEC_RC_SNAPSHOT
exec 2>&251
__agent_exec_bg=${!-}
__agent_exec_flags=
while IFS= builtin read -r -u 253 __agent_exec_len; do
  if [ "${__agent_exec_len:0:1}" = A ]; then
    IFS= builtin read -r -u 253 -N "${__agent_exec_len:1}" __agent_exec_cmd
  else
    LC_ALL=C IFS= builtin read -r -u 253 -N "${__agent_exec_len:1}" __agent_exec_cmd
  fi
  case $__agent_exec_flags in *x*) __agent_exec_cmd="set -x
$__agent_exec_cmd";; esac
  for __agent_exec_once in 1; do builtin eval "$__agent_exec_cmd"; done
  { __agent_exec_status=$? __agent_exec_flags=$-; set +x; } 2>/dev/null
  exec 0<&252 1>&250 2>&251 || builtin exit 249
  if [ "${!-}" = "$__agent_exec_bg" ]; then
    builtin printf 'S %s %s\0' "$__agent_exec_status" "$PWD" >&254 || builtin exit 249
  else
    __agent_exec_bg=${!-}
    { builtin printf 'J %s %s\0' "$__agent_exec_status" "$PWD"; builtin jobs -p; builtin printf 'E\0'; } >&254 || builtin exit 249
  fi
done
"#;

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
}

/// A live session shell.
#[derive(Debug)]
pub struct Session {
    child: Child,
    pgid: i32,
    marker: String,
    control: OwnedFd,
    status: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    cwd: PathBuf,
    prefix: Option<String>,
    status_buf: Vec<u8>,
    /// The output read buffer, kept between calls.
    read_buf: Vec<u8>,
}

/// The outcome of one command in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOutcome {
    /// As for a one-shot run; `status` is the command's (or the shell's, when it ended).
    pub exec: ExecOutcome,
    /// The shell's cwd after the command.
    pub cwd: PathBuf,
    /// Why the shell is gone, when the command ended it (`exit`, `exec`, a crash, a timeout…).
    pub ended: Option<String>,
}

impl Session {
    /// Starts a session shell in `cwd`.
    pub fn start(config: &SessionConfig, cwd: &Path) -> std::io::Result<Session> {
        let marker = containment::new_marker();
        let shell = config
            .shell
            .clone()
            .unwrap_or_else(|| crate::oneshot::default_shell().0.clone());
        let (control_r, control_w) = sys::pipe()?;
        let (status_r, status_w) = sys::pipe()?;
        let mut cmd = Command::new(shell);
        cmd.args(["--noprofile", "--norc", "-c", DRIVER]);
        let mut env = build_env(&config.env, &config.extra_env, false);
        env.push((MARKER_VAR.into(), marker.clone().into()));
        if let Some(rc) = &config.rc_snapshot {
            env.push(("AGENT_EXEC_RC_SNAPSHOT".into(), rc.clone().into()));
        }
        cmd.env_clear()
            .envs(env)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.process_group(0);
        let (cr, sw) = (control_r.as_raw_fd(), status_w.as_raw_fd());
        // SAFETY: fcntl, dup2 and close are async-signal-safe; the closure allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                // Copy both ends above 10 first: either may sit on 3 or 4 already, and dup2 onto
                // the same descriptor would keep its close-on-exec flag.
                let c = libc::fcntl(cr, libc::F_DUPFD, 10);
                let st = libc::fcntl(sw, libc::F_DUPFD, 10);
                if c < 0 || st < 0 || libc::dup2(c, 3) < 0 || libc::dup2(st, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(c);
                libc::close(st);
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        drop(control_r);
        drop(status_w);
        let stdout: OwnedFd = child.stdout.take().expect("piped").into();
        let stderr: OwnedFd = child.stderr.take().expect("piped").into();
        for fd in [&stdout, &stderr, &status_r] {
            sys::set_nonblocking(fd.as_raw_fd())?;
        }
        for fd in [&stdout, &stderr] {
            sys::grow_pipe(fd.as_raw_fd(), 1 << 20);
        }
        let pgid = child.id() as i32;
        containment::supervise_pid(pgid);
        Ok(Session {
            child,
            pgid,
            marker,
            control: control_w,
            status: status_r,
            stdout,
            stderr,
            cwd: cwd.to_path_buf(),
            prefix: config.prefix.clone(),
            status_buf: Vec::new(),
            read_buf: Vec::new(),
        })
    }

    /// The shell's cwd after the last command.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether the shell is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Runs `command` in the shell, pushing its output into `sink`.
    pub fn run<S: Sink + ?Sized>(
        &mut self,
        command: &str,
        sink: &mut S,
        timeout: Option<Duration>,
        grace: Duration,
        drain: DrainLimits,
        cancel: &CancelToken,
    ) -> SessionOutcome {
        let start = Instant::now();
        let mut exec = ExecOutcome::default();
        let mut pump = Pump::prepared(
            Some(self.stdout.as_raw_fd()),
            Some(self.stderr.as_raw_fd()),
            sink,
            std::mem::take(&mut self.read_buf),
        );
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
        let mut frame = format!("{kind}{}\n", full.len()).into_bytes();
        frame.extend_from_slice(full.as_bytes());
        self.status_buf.clear();
        if sys::write_all(&self.control, &frame).is_err() {
            return self.ended(pump, exec, start, "the shell had already exited".into());
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut kill_at: Option<Instant> = None;
        let mut report: Option<(i32, PathBuf, Vec<i32>)> = None;
        loop {
            let now = Instant::now();
            if kill_at.is_none() {
                let expired = deadline.is_some_and(|d| now >= d);
                if expired || cancel.is_cancelled() {
                    exec.timed_out = expired && !cancel.is_cancelled();
                    exec.cancelled = cancel.is_cancelled();
                    crate::oneshot::terminate(self.pgid, &self.marker, Signal::SIGTERM);
                    kill_at = Some(now + grace);
                }
            } else if kill_at.is_some_and(|k| now >= k) {
                crate::oneshot::terminate(self.pgid, &self.marker, Signal::SIGKILL);
                kill_at = Some(now + Duration::from_hours(1));
            }
            let wake = kill_at.or(deadline);
            let [out, err] = pump.fds();
            let cancel_fd = (!cancel.is_cancelled()).then(|| cancel.fd());
            let ready = sys::poll_readable(
                &[out, err, Some(self.status.as_raw_fd()), cancel_fd],
                wake.map(|w| w.saturating_duration_since(now)),
            );
            pump.read_ready([ready[0], ready[1]]);
            if ready[2] {
                match self.read_status() {
                    StatusRead::Complete(s) => {
                        report = Some(s);
                        break;
                    }
                    StatusRead::Partial => {}
                    StatusRead::Eof => break,
                }
            }
        }
        let Some((code, cwd, jobs)) = report else {
            // The status pipe closed: the shell is gone (exit, exec, crash, or our kill).
            let why = if exec.timed_out {
                "the previous command timed out".to_owned()
            } else if exec.cancelled {
                "the previous command was cancelled".to_owned()
            } else {
                String::new()
            };
            return self.ended(pump, exec, start, why);
        };
        // Everything the foreground wrote came before the status line.
        pump.read_now();
        // A `$!` that changed reports background jobs; a backgrounding operator or word in the
        // command catches what `jobs` cannot see (`( cmd & )`, `disown`, `setsid`). Then the
        // call's processes are ended (never the session's own shell). Scanning after every call
        // would cost more than the round trip itself.
        if !jobs.is_empty() || may_background(command) {
            let stopped =
                containment::end_survivors_except(None, &self.marker, grace, &[self.pgid]);
            exec.processes_stopped = stopped.max(jobs.len());
            pump.read_now();
        }
        let _ = drain;
        pump.finish();
        self.read_buf = pump.take_buf();
        exec.status = Some(ExitStatus::Exited(code));
        self.cwd = cwd;
        exec.duration = start.elapsed();
        SessionOutcome {
            exec,
            cwd: self.cwd.clone(),
            ended: None,
        }
    }

    fn ended<S: Sink + ?Sized>(
        &mut self,
        mut pump: Pump<'_, S>,
        mut exec: ExecOutcome,
        start: Instant,
        why: String,
    ) -> SessionOutcome {
        // Wait for the shell itself (bounded), then end anything it left.
        let until = Instant::now() + Duration::from_secs(5);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(exit_status(s)),
                Ok(None) if Instant::now() < until => {
                    pump.read_now();
                    std::thread::sleep(Duration::from_millis(2));
                }
                _ => {
                    containment::signal_group(self.pgid, Signal::SIGKILL);
                    break self.child.wait().ok().map(exit_status);
                }
            }
        };
        pump.read_now();
        if !pump.is_closed() {
            exec.drain_cut_short = !pump.drain(DrainLimits {
                idle: Duration::from_millis(50),
                max: Duration::from_millis(500),
            });
        }
        pump.finish();
        exec.processes_stopped =
            containment::end_survivors(Some(self.pgid), &self.marker, Duration::from_millis(200));
        exec.status = status;
        exec.duration = start.elapsed();
        containment::release_pid(self.pgid);
        let why = if why.is_empty() {
            match status {
                Some(ExitStatus::Exited(249)) => {
                    "a command closed or redirected the session's own descriptors".to_owned()
                }
                Some(ExitStatus::Exited(c)) => format!("the shell exited with code {c}"),
                Some(ExitStatus::Signaled(s)) => {
                    format!("the shell was killed by {}", crate::signal_name(s))
                }
                None => "the shell ended".to_owned(),
            }
        } else {
            why
        };
        SessionOutcome {
            exec,
            cwd: self.cwd.clone(),
            ended: Some(why),
        }
    }

    fn read_status(&mut self) -> StatusRead {
        let mut buf = [0u8; 4096];
        let mut eof = false;
        loop {
            // SAFETY: reading into a local buffer of its length.
            let n =
                unsafe { libc::read(self.status.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                self.status_buf.extend_from_slice(&buf[..n as usize]);
                continue;
            }
            if n == 0 {
                eof = true;
            }
            break;
        }
        if let Some(parsed) = parse_status(&self.status_buf) {
            return StatusRead::Complete(parsed);
        }
        if eof {
            StatusRead::Eof
        } else {
            StatusRead::Partial
        }
    }

    /// Ends the shell and everything it started (TERM → grace → KILL).
    pub fn close(mut self, grace: Duration) -> usize {
        containment::signal_group(self.pgid, Signal::SIGTERM);
        let until = Instant::now() + grace;
        while Instant::now() < until && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(2));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            containment::signal_group(self.pgid, Signal::SIGKILL);
            let _ = self.child.wait();
        }
        containment::release_pid(self.pgid);
        containment::end_survivors(Some(self.pgid), &self.marker, grace)
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

enum StatusRead {
    Complete((i32, PathBuf, Vec<i32>)),
    Partial,
    Eof,
}

/// Parses `S <status> <pwd>\0`, or `J <status> <pwd>\0` + `<pid>\n`* + `E\0` when the command
/// left background jobs. The pwd is raw bytes (NUL is the one byte a path cannot hold).
fn parse_status(buf: &[u8]) -> Option<(i32, PathBuf, Vec<i32>)> {
    use std::os::unix::ffi::OsStringExt;
    let nul = memchr_nul(buf)?;
    let head = &buf[..nul];
    let rest = &buf[nul + 1..];
    let kind = head.get(..2)?;
    let fields = &head[2..];
    let space = fields.iter().position(|&b| b == b' ')?;
    let code: i32 = std::str::from_utf8(&fields[..space]).ok()?.parse().ok()?;
    let pwd = PathBuf::from(std::ffi::OsString::from_vec(fields[space + 1..].to_vec()));
    let jobs = match kind {
        b"S " => Vec::new(),
        b"J " if rest.ends_with(b"E\0") => String::from_utf8_lossy(&rest[..rest.len() - 2])
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect(),
        _ => return None,
    };
    Some((code, pwd, jobs))
}

fn memchr_nul(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == 0)
}

/// Builds an rc snapshot for `shell`: runs the user's `~/.bashrc` once in a throwaway
/// interactive shell (stdin `/dev/null`) and captures its functions, aliases, shell options and
/// `PATH` into a script under `cache_dir`, reused while `~/.bashrc` is unchanged.
pub fn rc_snapshot(shell: &Path, cache_dir: &Path) -> std::io::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let rc = home.join(".bashrc");
    let stamp = std::fs::metadata(&rc).and_then(|m| m.modified()).ok();
    let stamp = stamp
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    std::fs::create_dir_all(cache_dir)?;
    let name = shell
        .file_name()
        .map_or_else(|| "sh".into(), |n| n.to_string_lossy().into_owned());
    let path = cache_dir.join(format!("rc-snapshot-{name}-{stamp}.sh"));
    if path.is_file() {
        return Ok(path);
    }
    let script = r#"declare -f; alias -p; shopt -p; printf 'export PATH=%q\n' "$PATH""#;
    let out = Command::new(shell)
        .args(["-i", "-c", script])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    std::fs::write(&path, &out.stdout)?;
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
