//! The registry of owned children: pids whose exit status belongs to an owner (a `Child` of
//! `child.rs`, or a probe that waits for its own fork), which the orphan sweep
//! (`containment::reap_orphans`) must never reap.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, RwLock};

use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork};

/// Processes whose exit status belongs to an owner (a `Child` someone will wait for): never
/// reaped by the orphan sweep, or that owner would lose its child's status.
static SUPERVISED: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Held (shared) by every spawn from before the fork until its pid is in [`SUPERVISED`], and
/// (exclusive) by the orphan sweep, so a child that exits at once is never taken for an orphan.
pub(crate) static SPAWNING: RwLock<()> = RwLock::new(());

/// The owned pids.
pub(crate) fn supervised() -> MutexGuard<'static, BTreeSet<i32>> {
    SUPERVISED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks `pid` as waited for by its owner (see [`SUPERVISED`]).
pub(crate) fn supervise_pid(pid: i32) {
    supervised().insert(pid);
}

/// The owner has waited for `pid`.
pub(crate) fn release_pid(pid: i32) {
    supervised().remove(&pid);
}

/// Forks a child that runs `in_child` (system calls only: a fork of a threaded process must
/// not touch locks or memory others may hold; it must `_exit`), with every signal blocked
/// across the fork so no handler of ours runs in it, and registered as supervised before an
/// orphan sweep can take its status. The caller waits for it and calls [`release_pid`].
pub(crate) fn fork_supervised(in_child: impl FnOnce()) -> std::io::Result<i32> {
    let spawning = SPAWNING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut old = SigSet::empty();
    let _ = pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut old),
    );
    // SAFETY: the child runs only `in_child`, which makes system calls and exits.
    let forked = unsafe { fork() };
    if let Ok(ForkResult::Child) = forked {
        in_child();
        // SAFETY: leaving the child, should `in_child` return (no destructors, no atexit
        // handlers: they belong to the parent).
        unsafe { libc::_exit(127) };
    }
    // Restoring our own mask.
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    let pid = match forked {
        Ok(ForkResult::Parent { child }) => child.as_raw(),
        Ok(ForkResult::Child) => unreachable!("the child exited above"),
        Err(errno) => return Err(errno.into()),
    };
    supervise_pid(pid);
    drop(spawning);
    Ok(pid)
}

/// Whether a throwaway child running `in_child` (as for [`fork_supervised`]) exits with 0:
/// the probes of what the kernel lets us do here.
pub(crate) fn child_succeeds(in_child: impl FnOnce()) -> bool {
    let Ok(pid) = fork_supervised(in_child) else {
        return false;
    };
    let waited = waitpid(Pid::from_raw(pid), None);
    release_pid(pid);
    matches!(waited, Ok(WaitStatus::Exited(_, 0)))
}

static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`), so descendants orphaned by
/// a command are re-parented here and can be ended and reaped at once.
///
/// # Caveats
/// It is a property of the whole process: call it from a binary that owns its children (the
/// `agent-exec` CLI and servers do), not from a library embedded in someone else's process.
pub fn become_subreaper() -> std::io::Result<()> {
    // The argument is a flag that rustix spells as a pid: any pid turns it on (1, as before).
    rustix::process::set_child_subreaper(Some(rustix::process::Pid::INIT))?;
    SUBREAPER.store(true, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// Whether [`become_subreaper`] succeeded in this process.
pub fn is_subreaper() -> bool {
    SUBREAPER.load(std::sync::atomic::Ordering::SeqCst)
}
