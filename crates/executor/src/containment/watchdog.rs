//! The supervisor's death ends everything it started.
//!
//! [`start_watchdog`] forks a small process while the caller is still single-threaded. It holds
//! the read end of a pipe whose only write end stays in the supervisor (close-on-exec, so no
//! command inherits it). When the supervisor dies — exit, kill -9, an OOM kill, a signal it does
//! not handle — the kernel closes the write end, the watchdog reads end of file and ends every
//! group the supervisor made: the cgroups under its per-process directory (which also catches
//! `setsid`, double-fork and `env -i` escapees), or in the fallback the process groups it was
//! told about plus every process carrying the supervisor's marker prefix. Then it removes the
//! cgroup directories and exits.
//!
//! At a normal exit the supervisor closes the lifeline itself and reaps the watchdog
//! ([`end_and_reap`]): left to exit after us, it would be re-parented, and under a parent that
//! does not reap orphans (an agent that is PID 1 of its container, `sleep infinity` as init) every
//! call would leave one zombie behind.
//!
//! `PR_SET_PDEATHSIG` is not enough: it fires when the forking *thread* exits (a server's
//! request thread), and never reaches grandchildren.

use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process, kill_process_group};

use super::{cgroup, lifeline, scan};
use crate::sys;
use crate::wait::wait_until;

/// Starts the watchdog of this process (once; later calls do nothing).
///
/// # Caveats
/// Call it first thing in `main`, before any thread exists: it forks, and the child allocates.
/// It decides the containment mechanism (cgroup or process group) for the whole process.
pub fn start_watchdog() -> std::io::Result<()> {
    if lifeline::pid().is_some() {
        return Ok(());
    }
    // Made before the fork, so the default hierarchy is settled for both sides.
    let _ = cgroup::default_base();
    let (read, write) = sys::pipe()?;
    let supervisor = std::process::id() as i32;
    // SAFETY: the caller guarantees we are single-threaded, so the child may allocate.
    let pid = match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Child => {
            drop(write);
            watch(&read, supervisor);
        }
        nix::unistd::ForkResult::Parent { child } => child.as_raw(),
    };
    drop(read);
    lifeline::set(pid, write);
    Ok(())
}

/// How long the watchdog's sweep waits for the cgroups to empty, and how long it repeats the
/// marker scan.
const SWEEP_WAIT: Duration = Duration::from_secs(2);

/// The watchdog's life: wait for the supervisor to die, then end what it left. Never returns.
fn watch(pipe: &OwnedFd, supervisor: i32) -> ! {
    // Out of the supervisor's session and process group, so a signal to that group (Ctrl-C,
    // a kill of the job) does not take the watchdog with it; the signals that end the
    // supervisor are ignored here.
    // SAFETY: plain syscalls on our own process.
    let lifeline = unsafe {
        libc::setsid();
        for sig in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGPIPE,
            libc::SIGQUIT,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        // Hold nothing of the supervisor's: its stdout pipe must close when it exits.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        // The pipe moves to fd 3; everything above it closes in one call (close_range, Linux
        // 5.9): a loop over the descriptor limit would cost 20 000 system calls at every start.
        if libc::dup2(pipe.as_raw_fd(), 3) == 3 {
            libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32);
            3
        } else {
            pipe.as_raw_fd()
        }
    };
    let mut groups: BTreeSet<i32> = BTreeSet::new();
    let mut inits: BTreeSet<i32> = BTreeSet::new();
    let mut fallback_used = false;
    let mut nothing_left = false;
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reading into a local buffer of its length.
        let n = unsafe { libc::read(lifeline, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            pending.extend_from_slice(&buf[..n as usize]);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line[..end]);
                // Only the last word before our end counts.
                nothing_left = text == "=";
                if text == "!" {
                    fallback_used = true;
                } else if let Some(p) = text.strip_prefix('+').and_then(|p| p.parse().ok()) {
                    groups.insert(p);
                } else if let Some(p) = text.strip_prefix('-').and_then(|p| p.parse::<i32>().ok()) {
                    groups.remove(&p);
                } else if let Some(p) = text.strip_prefix('*').and_then(|p| p.parse().ok()) {
                    inits.insert(p);
                } else if let Some(p) = text.strip_prefix('/').and_then(|p| p.parse::<i32>().ok()) {
                    inits.remove(&p);
                }
            }
            continue;
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break;
    }
    if !nothing_left {
        for &pid in &inits {
            // SAFETY: kill takes a pid and a signal number. An init's death ends its namespace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        end_everything(supervisor, &groups, fallback_used);
    }
    // SAFETY: leaving the watchdog process.
    unsafe { libc::_exit(0) }
}

fn end_everything(supervisor: i32, groups: &BTreeSet<i32>, fallback_used: bool) {
    for version in [cgroup::Version::V2, cgroup::Version::V1Freezer] {
        if let Some(dir) = cgroup::process_dir(version, supervisor)
            && dir.is_dir()
        {
            cgroup::end_tree(&dir, version, SWEEP_WAIT);
        }
    }
    super::limits::remove_for(supervisor);
    // The fallback's groups and marked processes (a call that could not get a cgroup fell
    // back). Repeated until a sweep finds nothing, so a fork in flight during one sweep is
    // caught by the next.
    if !fallback_used {
        // Every call had a cgroup: skipping the `/proc` scan keeps an exit cheap.
        return;
    }
    let prefix = format!("{}-", crate::sys::process_name(supervisor));
    wait_until(SWEEP_WAIT, Duration::from_millis(10), || {
        let mut found = false;
        for &pgid in groups {
            if Pid::from_raw(pgid)
                .is_some_and(|pgid| kill_process_group(pgid, Signal::KILL).is_ok())
            {
                found = true;
            }
        }
        for pid in scan::marked_with_prefix(&prefix) {
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
            found = true;
        }
        !found
    });
}
