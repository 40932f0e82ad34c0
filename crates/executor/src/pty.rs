//! Running a command under a pseudo-terminal, for programs that behave differently on one.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::Instant;

use agent_exec_sink::Sink;

use crate::cancel::CancelToken;
use crate::containment::{self, MARKER_VAR};
use crate::env::build_env;
use crate::oneshot::{ExecOutcome, ExecSpec, base_command};
use crate::pump::Pump;

/// Like [`run`](crate::run), but the command's stdin, stdout and stderr are a new
/// pseudo-terminal (80×24 is what a program asks sees; `TERM=xterm-256color`), and it leads its
/// own session. Output arrives as one stream (stdout); escape sequences are removed by the sink.
pub fn run_pty<S: Sink + ?Sized>(
    spec: &ExecSpec,
    sink: &mut S,
    cancel: &CancelToken,
) -> ExecOutcome {
    let start = Instant::now();
    let marker = containment::new_marker();
    let mut outcome = ExecOutcome::default();
    let pty = match nix::pty::openpty(None, None) {
        Ok(p) => p,
        Err(e) => {
            outcome.spawn_error = Some(format!("failed to open a pseudo-terminal: {e}"));
            let _ = sink.finish();
            return outcome;
        }
    };
    let master: OwnedFd = pty.master;
    let slave: OwnedFd = pty.slave;
    let mut cmd = base_command(&spec.program);
    let mut env = build_env(&spec.env, &spec.extra_env, true);
    env.push((MARKER_VAR.into(), marker.clone().into()));
    let stdio = |fd: &OwnedFd| fd.try_clone().map(Stdio::from);
    let (Ok(i), Ok(o), Ok(e)) = (stdio(&slave), stdio(&slave), stdio(&slave)) else {
        outcome.spawn_error = Some("failed to set up the pseudo-terminal's descriptors".into());
        let _ = sink.finish();
        return outcome;
    };
    cmd.env_clear()
        .envs(env)
        .current_dir(&spec.cwd)
        .stdin(i)
        .stdout(o)
        .stderr(e);
    // SAFETY: setsid and ioctl are async-signal-safe; no allocation happens in the closure.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            outcome.spawn_error = Some(format!("failed to start the command: {e}"));
            let _ = sink.finish();
            return outcome;
        }
    };
    drop(cmd);
    drop(slave);
    let mut pump = Pump::new(Some(master.as_raw_fd()), None, sink);
    crate::oneshot::follow_to_end(&mut child, &marker, spec, &mut pump, cancel, start, outcome)
}
