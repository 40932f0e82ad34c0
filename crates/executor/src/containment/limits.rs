//! Resource limits of one call: processes and memory for all its processes together, through
//! cgroups of the v1 `pids` and `memory` hierarchies where they are mounted (the child joins
//! them before it execs, as it joins its containment cgroup); CPU time and file size, and the
//! fallbacks where no cgroup can be made, through rlimits set in the child.
//!
//! The unified hierarchy carries no `pids` or `memory` controller on the machines this was
//! built on (v1 has them); where it does (systemd machines), `memory.max` and `pids.max` of the
//! call's own v2 cgroup are the place — not done yet: there the rlimit fallbacks apply.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::oneshot::ExitStatus;

use super::cgroup;

/// Limits of one call. `None`: no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Limits {
    /// Processes and threads the call may have at once.
    pub procs: Option<u64>,
    /// Bytes of memory of all its processes together.
    pub memory: Option<u64>,
    /// CPU time of each of its processes.
    pub cpu: Option<Duration>,
    /// The largest file it may write, in bytes.
    pub file_size: Option<u64>,
}

impl Limits {
    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        self.procs.is_some()
            || self.memory.is_some()
            || self.cpu.is_some()
            || self.file_size.is_some()
    }
}

/// Which limit ended or hampered a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitKind {
    /// The memory limit: the kernel killed a process.
    Memory,
    /// The process limit: a fork was refused.
    Procs,
    /// The CPU time limit: a process was killed.
    Cpu,
    /// The file size limit: a write was refused.
    FileSize,
}

impl LimitKind {
    /// The contract's name: `memory`, `procs`, `cpu`, `file_size`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Memory => "memory",
            LimitKind::Procs => "procs",
            LimitKind::Cpu => "cpu",
            LimitKind::FileSize => "file_size",
        }
    }
}

/// One controller's cgroup for a call.
#[derive(Debug)]
struct LimitCgroup {
    controller: &'static str,
    dir: PathBuf,
    /// `cgroup.procs`, opened for writing: the child writes `0` to it.
    join: File,
}

/// A call's limits, ready for its child: cgroups to join, rlimits to set.
#[derive(Debug, Default)]
pub(crate) struct LimitGroup {
    limits: Limits,
    cgroups: Vec<LimitCgroup>,
    /// The event counters (OOM kills, refused forks) already reported: a session's shell
    /// lives through many commands, each told only of its own.
    reported: std::sync::Mutex<(u64, u64)>,
    pub(crate) rlimits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    /// How a limit is kept more loosely than asked, where no cgroup could carry it.
    pub(crate) fallbacks: Vec<String>,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

static PIDS: OnceLock<Option<PathBuf>> = OnceLock::new();
static MEMORY: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Removes `dir` and the cgroups below it, trying `tries` times `pause` apart: their
/// processes are ended, but a zombie not yet reaped by init can hold a v1 cgroup a moment.
fn remove_emptied(dir: &Path, tries: u32, pause: Duration) {
    for _ in 0..tries {
        cgroup::remove_below(dir);
        if fs::remove_dir(dir).is_ok() {
            return;
        }
        std::thread::sleep(pause);
    }
}

/// Removes this process's (empty) limit directories, at exit.
pub(crate) fn cleanup() {
    for cell in [&PIDS, &MEMORY] {
        if let Some(Some(dir)) = cell.get() {
            remove_emptied(dir, 1, Duration::ZERO);
        }
    }
}

/// Whether [`cleanup`] left no limit directory of this process.
pub(crate) fn nothing_left() -> bool {
    [&PIDS, &MEMORY]
        .into_iter()
        .all(|cell| !matches!(cell.get(), Some(Some(dir)) if dir.exists()))
}

/// Removes the limit directories of a dead `supervisor` (its watchdog calls this once the
/// supervisor's processes are ended: the directories empty as they are reaped).
pub(crate) fn remove_for(supervisor: i32) {
    for controller in ["pids", "memory"] {
        let Some(dir) = cgroup::own_v1_dir(controller)
            .map(|d| d.join(format!("agent-exec-{supervisor}")))
            .filter(|d| d.is_dir())
        else {
            continue;
        };
        remove_emptied(&dir, 100, Duration::from_millis(10));
    }
}

/// This process's directory in the v1 hierarchy of `controller`, made on first use.
fn base(controller: &'static str) -> Option<&'static Path> {
    let cell = if controller == "pids" { &PIDS } else { &MEMORY };
    cell.get_or_init(|| {
        let parent = cgroup::own_v1_dir(controller)?;
        // Directories of dead agent-exec processes: their members died with their
        // containment cgroups; only the empty directories are left.
        for entry in fs::read_dir(&parent).ok()?.flatten() {
            if crate::sys::left_by_dead_process(&entry.file_name(), "agent-exec-") {
                remove_emptied(&entry.path(), 1, Duration::ZERO);
            }
        }
        let dir = parent.join(format!("agent-exec-{}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => Some(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Some(dir),
            Err(_) => None,
        }
    })
    .as_deref()
}

fn make_cgroup(controller: &'static str, settings: &[(&str, u64)]) -> Option<LimitCgroup> {
    let dir = base(controller)?.join(format!("l{}", NEXT.fetch_add(1, Ordering::Relaxed)));
    fs::create_dir(&dir).ok()?;
    let made = (|| -> io::Result<File> {
        for (file, value) in settings {
            let path = dir.join(file);
            // memsw exists only with swap accounting: a missing file is no failure.
            if file.contains("memsw") && !path.exists() {
                continue;
            }
            fs::write(path, value.to_string())?;
        }
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(dir.join("cgroup.procs"))
    })();
    match made {
        Ok(join) => Some(LimitCgroup {
            controller,
            dir,
            join,
        }),
        Err(_) => {
            let _ = fs::remove_dir(&dir);
            None
        }
    }
}

impl LimitGroup {
    /// Prepares `limits`; an error names a limit this machine cannot enforce.
    pub(crate) fn new(limits: &Limits) -> Result<LimitGroup, String> {
        let mut group = LimitGroup {
            limits: *limits,
            ..LimitGroup::default()
        };
        // SAFETY: plain getter.
        let root = unsafe { libc::geteuid() } == 0;
        let limit = |n: u64| libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        if let Some(n) = limits.procs {
            match make_cgroup("pids", &[("pids.max", n)]) {
                Some(cg) => group.cgroups.push(cg),
                // RLIMIT_NPROC counts the user's processes, and root is exempt from it.
                None if !root => {
                    group.rlimits.push((libc::RLIMIT_NPROC, limit(n)));
                    group.fallbacks.push(
                        "--max-procs counts all of this user's processes here (RLIMIT_NPROC): no cgroup pids controller could be used".to_owned(),
                    );
                }
                None => {
                    return Err(
                        "--max-procs needs the cgroup `pids` controller, which is not available here; run without it".to_owned(),
                    );
                }
            }
        }
        if let Some(n) = limits.memory {
            let settings = [
                ("memory.limit_in_bytes", n),
                ("memory.memsw.limit_in_bytes", n),
            ];
            match make_cgroup("memory", &settings) {
                Some(cg) => group.cgroups.push(cg),
                // Per process, not per call: the nearest the kernel offers without a cgroup.
                None => {
                    group.rlimits.push((libc::RLIMIT_AS, limit(n)));
                    group.fallbacks.push(
                        "--max-memory limits each process's address space here (RLIMIT_AS), not the call's memory: no cgroup memory controller could be used".to_owned(),
                    );
                }
            }
        }
        if let Some(cpu) = limits.cpu {
            // SIGXCPU at the limit (it ends a process that does not handle it), SIGKILL a
            // second later.
            let secs = cpu.as_secs().max(1);
            group.rlimits.push((
                libc::RLIMIT_CPU,
                libc::rlimit {
                    rlim_cur: secs,
                    rlim_max: secs + 1,
                },
            ));
        }
        if let Some(n) = limits.file_size {
            group.rlimits.push((libc::RLIMIT_FSIZE, limit(n)));
        }
        Ok(group)
    }

    /// The descriptors the child writes `0` to before it execs.
    pub(crate) fn join_fds(&self) -> Vec<RawFd> {
        self.cgroups.iter().map(|c| c.join.as_raw_fd()).collect()
    }

    /// Which limit ended or hampered the call, judged once it is over by the cgroups' event
    /// counters and by how the main process ended.
    pub(crate) fn hit(&self, status: Option<ExitStatus>) -> Option<LimitKind> {
        let counter = |controller: &str, file: &str, key: &str| {
            self.cgroups
                .iter()
                .filter(|c| c.controller == controller)
                .filter_map(|c| fs::read_to_string(c.dir.join(file)).ok())
                .flat_map(|text| {
                    text.lines()
                        .filter_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                        .collect::<Vec<_>>()
                })
                .sum::<u64>()
        };
        let ended_by = |signal: i32| {
            matches!(status, Some(ExitStatus::Signaled(s)) if s == signal)
                || matches!(status, Some(ExitStatus::Exited(c)) if c == 128 + signal)
        };
        let (oom_kills, refused_forks) = (
            counter("memory", "memory.oom_control", "oom_kill "),
            counter("pids", "pids.events", "max "),
        );
        let (seen_kills, seen_refused) = {
            let mut reported = self
                .reported
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::replace(&mut *reported, (oom_kills, refused_forks))
        };
        if oom_kills > seen_kills {
            return Some(LimitKind::Memory);
        }
        if self.limits.cpu.is_some() && ended_by(libc::SIGXCPU) {
            return Some(LimitKind::Cpu);
        }
        if self.limits.file_size.is_some() && ended_by(libc::SIGXFSZ) {
            return Some(LimitKind::FileSize);
        }
        if refused_forks > seen_refused {
            return Some(LimitKind::Procs);
        }
        None
    }
}

impl Drop for LimitCgroup {
    fn drop(&mut self) {
        // The call's processes are gone, ended with its containment group.
        remove_emptied(&self.dir, 50, Duration::from_millis(2));
    }
}
