//! No survivors: finding and ending every process a call started.
//!
//! A call's processes are found two ways:
//! - its **process group** (the command leads its own group), and
//! - its **marker**: every call's environment carries `AGENT_EXEC_CALL=<id>`, inherited by
//!   every descendant, so a process that left the group (`setsid`, double fork) is still
//!   recognisable in `/proc/<pid>/environ`.
//!
//! When the process is a child subreaper ([`become_subreaper`]; the `agent-exec` binary does
//! this at start), orphaned descendants are re-parented to us instead of init: they can be
//! reaped at once (no zombies lingering for init) and, when we have no children at all, we know
//! without scanning `/proc` that nothing survived. A library embedded in another process gets
//! the marker scan without the subreaper: it works, at the cost of a `/proc` scan per call.
//! cgroups would be stronger still but need a writable delegated subtree, which this kind of
//! machine (cgroup v1, no delegation) does not offer; see ARCHITECTURE.md.

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use crate::sys;

/// The environment variable that marks a call's processes.
pub const MARKER_VAR: &str = "AGENT_EXEC_CALL";

static SUBREAPER: AtomicBool = AtomicBool::new(false);
/// Processes whose exit status belongs to a supervisor (a `Child` someone will wait for):
/// never reaped by the orphan sweep, or that supervisor would lose its child.
static SUPERVISED: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn supervised() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
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
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

/// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`), so descendants orphaned by
/// a command are re-parented here and can be ended and reaped at once.
///
/// # Caveats
/// It is a property of the whole process: call it from a binary that owns its children (the
/// `agent-exec` CLI and servers do), not from a library embedded in someone else's process.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    SUBREAPER.store(true, Ordering::SeqCst);
    Ok(())
}

/// Whether [`become_subreaper`] succeeded in this process.
pub fn is_subreaper() -> bool {
    SUBREAPER.load(Ordering::SeqCst)
}

/// A fresh marker value for one call: `<our pid>-<counter>`.
pub(crate) fn new_marker() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        NEXT_CALL.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether we have any child process at all (live or zombie).
fn has_children() -> bool {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid with WNOWAIT|WNOHANG only inspects; info is a valid out-pointer.
    let r = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &raw mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    !(r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}

fn group_exists(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None).is_ok()
}

/// The call's processes still around: members of `pgid` and carriers of `marker`.
/// Returns `(live, zombies)`.
pub(crate) fn find_members(pgid: Option<i32>, marker: &str) -> (Vec<i32>, Vec<i32>) {
    let grouped = pgid.is_some_and(group_exists);
    if is_subreaper() && !grouped && !has_children() {
        // Every descendant of ours is re-parented to us: no children means no survivors.
        return (Vec::new(), Vec::new());
    }
    let needle = format!("{MARKER_VAR}={marker}");
    let me = std::process::id() as i32;
    let owned = supervised().clone();
    let (mut live, mut zombies) = (Vec::new(), Vec::new());
    for pid in sys::all_pids() {
        if pid == me {
            continue;
        }
        let Some(stat) = sys::proc_stat(pid) else {
            continue;
        };
        let ours = pgid == Some(stat.pgid)
            || (!stat.zombie && sys::environ_contains(pid, needle.as_bytes()));
        if ours {
            if stat.zombie && owned.contains(&pid) {
                continue;
            }
            if stat.zombie {
                zombies.push(pid);
            } else {
                live.push(pid);
            }
        } else if stat.zombie && stat.ppid == me && is_subreaper() && !owned.contains(&pid) {
            // An orphan re-parented to us that already died: its marker is unreadable now.
            zombies.push(pid);
        }
    }
    (live, zombies)
}

fn reap(pid: i32) {
    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
}

fn alive(pid: i32) -> bool {
    sys::proc_stat(pid).is_some_and(|s| !s.zombie)
}

/// Sends `signal` to each process (and `SIGCONT`, so stopped ones can act on it).
pub(crate) fn signal_all(pids: &[i32], signal: Signal) {
    for &pid in pids {
        let _ = kill(Pid::from_raw(pid), signal);
        if signal != Signal::SIGKILL {
            let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
        }
    }
}

/// Sends `signal` to a process group (and `SIGCONT`).
pub(crate) fn signal_group(pgid: i32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pgid), signal);
    if signal != Signal::SIGKILL {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGCONT);
    }
}

/// Ends every process of the call that is still around: TERM, up to `grace`, then KILL.
/// Reaps those that are our children. Returns how many were running.
pub(crate) fn end_survivors(pgid: Option<i32>, marker: &str, grace: Duration) -> usize {
    end_survivors_except(pgid, marker, grace, &[])
}

/// [`end_survivors`], sparing the processes in `except` (a session's own shell).
pub(crate) fn end_survivors_except(
    pgid: Option<i32>,
    marker: &str,
    grace: Duration,
    except: &[i32],
) -> usize {
    let (mut live, zombies) = find_members(pgid, marker);
    live.retain(|p| !except.contains(p));
    for &z in &zombies {
        reap(z);
    }
    if live.is_empty() {
        return 0;
    }
    let count = live.len();
    if let Some(pgid) = pgid {
        signal_group(pgid, Signal::SIGTERM);
    }
    signal_all(&live, Signal::SIGTERM);
    let until = Instant::now() + grace;
    let mut remaining: Vec<i32> = live.clone();
    while !remaining.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
        for &pid in &remaining {
            reap(pid);
        }
        remaining.retain(|&p| alive(p));
    }
    if !remaining.is_empty() {
        if let Some(pgid) = pgid {
            signal_group(pgid, Signal::SIGKILL);
        }
        signal_all(&remaining, Signal::SIGKILL);
        let until = Instant::now() + Duration::from_secs(2);
        while !remaining.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
            for &pid in &remaining {
                reap(pid);
            }
            remaining.retain(|&p| alive(p));
        }
    }
    // Anything that died meanwhile and was re-parented to us.
    let known: HashSet<i32> = live.into_iter().collect();
    for pid in known {
        reap(pid);
    }
    count
}

/// Counts the live processes carrying `marker` or in `pgid` (for tests and diagnostics).
pub fn count_call_processes(pgid: Option<i32>, marker: &str) -> usize {
    find_members(pgid, marker).0.len()
}
