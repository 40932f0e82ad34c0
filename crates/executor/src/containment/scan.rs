//! The fallback where no cgroup can be made: a call's processes are its process group plus
//! every process carrying its marker (`AGENT_EXEC_CALL=<id>` in `/proc/<pid>/environ`).
//!
//! It misses a process that both leaves the group and scrubs its environment
//! (`setsid env -i …`); the cgroup backends do not. With the binary as child subreaper, "no
//! children and no group" proves nothing survived without scanning `/proc`.

use std::collections::BTreeSet;

use nix::sys::signal::killpg;
use nix::unistd::Pid;

use crate::pids::{is_subreaper, supervised};
use crate::sys;

/// The environment variable that marks a call's processes.
pub const MARKER_VAR: &str = "AGENT_EXEC_CALL";

fn group_exists(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None).is_ok()
}

/// Our children, live or zombie (from `/proc/self/task/*/children`, which lists the children
/// of each thread: cheaper than scanning `/proc`).
pub(crate) fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether we have a child other than the watchdog.
fn has_children() -> bool {
    let watchdog = super::lifeline::pid();
    children().into_iter().any(|p| Some(p) != watchdog)
}

/// The live processes of the call (`pgid`'s members and carriers of `marker`), and zombies of
/// ours that belonged to it.
pub(crate) fn members(pgid: Option<i32>, marker: &str) -> (Vec<i32>, Vec<i32>) {
    let grouped = pgid.is_some_and(group_exists);
    if is_subreaper() && !grouped && !has_children() {
        // Every descendant of ours is re-parented to us: no children means no survivors.
        return (Vec::new(), Vec::new());
    }
    let needle = format!("{MARKER_VAR}={marker}");
    let me = std::process::id() as i32;
    let owned: BTreeSet<i32> = supervised().clone();
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
            if stat.zombie {
                if !owned.contains(&pid) {
                    zombies.push(pid);
                }
            } else {
                live.push(pid);
            }
        }
    }
    (live, zombies)
}

/// Every live process whose marker starts with `prefix` (the watchdog's last sweep).
pub(crate) fn marked_with_prefix(prefix: &str) -> Vec<i32> {
    let needle = format!("{MARKER_VAR}={prefix}");
    sys::all_pids()
        .into_iter()
        .filter(|&pid| {
            sys::proc_stat(pid).is_some_and(|s| !s.zombie)
                && sys::environ_starts_with(pid, needle.as_bytes())
        })
        .collect()
}
