//! The supervisor's side of the watchdog (`watchdog.rs`): its lifeline, what it is told
//! (process groups, a PID namespace's init, the fallback in use, nothing left) and its end at a
//! normal exit. Below everything that starts processes, which all tell it things.

use std::os::fd::OwnedFd;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::sys;
use crate::wait::wait_until;

struct Watchdog {
    pid: i32,
    /// The write end: the watchdog's lifeline, and where process groups are registered.
    /// Taken (and closed) by [`end_and_reap`].
    pipe: std::sync::Mutex<Option<OwnedFd>>,
}

static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();

/// The watchdog started as `pid`; `pipe` is the write end of its lifeline.
pub(crate) fn set(pid: i32, pipe: OwnedFd) {
    let _ = WATCHDOG.set(Watchdog {
        pid,
        pipe: std::sync::Mutex::new(Some(pipe)),
    });
}

/// The watchdog's pid, once started.
pub(crate) fn pid() -> Option<i32> {
    WATCHDOG.get().map(|w| w.pid)
}

/// Ends the watchdog and reaps it: the last step of a normal exit, once every call has ended.
/// Closing the lifeline is what our death would do; the watchdog then does its work (nothing,
/// after [`nothing_left`]; else its sweep, bounded by a few seconds) and exits, and we wait
/// for it so that no zombie of ours is left to a parent that may never reap it. Later calls
/// run unwatched.
pub(crate) fn end_and_reap() {
    let Some(w) = WATCHDOG.get() else { return };
    let lifeline = w
        .pipe
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if lifeline.is_none() {
        return;
    }
    drop(lifeline);
    // Its sweep is bounded (`SWEEP_WAIT` for the cgroups, as much for the marker scan):
    // past that, it is left rather than holding our exit.
    let pid = nix::unistd::Pid::from_raw(w.pid);
    let until = Instant::now() + EXIT_WAIT;
    if let Some(exited) = sys::pidfd_open(w.pid) {
        // Woken the moment it exits (it usually has nothing to do).
        crate::wait::readable(&exited, EXIT_WAIT);
    }
    wait_until(
        until.saturating_duration_since(Instant::now()),
        Duration::from_millis(1),
        || {
            !matches!(
                nix::sys::wait::waitpid(pid, Some(nix::sys::wait::WaitPidFlag::WNOHANG)),
                Ok(nix::sys::wait::WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR)
            )
        },
    );
}

/// How long a normal exit waits for the watchdog to end: more than its sweep takes.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// Tells the watchdog that a call runs without a cgroup (sent before its spawn): from now on,
/// our death is followed by a scan for our marker.
pub(crate) fn fallback_in_use() {
    if WATCHDOG.get().is_some() && !FALLBACK_SENT.swap(true, std::sync::atomic::Ordering::SeqCst) {
        send("!\n");
    }
}

/// Tells the watchdog that nothing is left for it to end: called at a normal exit, after
/// every call ended and this process's cgroup directories were removed. It then exits at
/// once when we do, instead of sweeping (on a small machine its sweep ran into the next
/// command's start). Not sent once a call ran without a cgroup: only a scan finds those.
pub(crate) fn nothing_left() {
    if WATCHDOG.get().is_some() && !FALLBACK_SENT.load(std::sync::atomic::Ordering::SeqCst) {
        send("=\n");
    }
}

static FALLBACK_SENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Tells the watchdog about a process group to end if we die (fallback mode only).
pub(crate) fn register_group(pgid: i32) {
    send(&format!("+{pgid}\n"));
}

/// The process group has ended.
pub(crate) fn unregister_group(pgid: i32) {
    send(&format!("-{pgid}\n"));
}

/// A process to kill if we die: the init of a call's PID namespace (its death ends them all).
pub(crate) fn register_process(pid: i32) {
    send(&format!("*{pid}\n"));
}

/// That process has been reaped.
pub(crate) fn unregister_process(pid: i32) {
    send(&format!("/{pid}\n"));
}

fn send(line: &str) {
    if let Some(w) = WATCHDOG.get()
        && let Some(pipe) = &*w
            .pipe
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        // Writes under PIPE_BUF are atomic; the watchdog reads continuously.
        let _ = sys::write_all(pipe, line.as_bytes());
    }
}
