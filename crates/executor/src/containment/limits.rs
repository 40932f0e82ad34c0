//! Resource limits of one call: processes, memory and CPU time for all its processes together,
//! through cgroups of the v1 `pids`, `memory` and `cpuacct` hierarchies where they are mounted
//! (the child joins them before it execs, as it joins its containment cgroup); file size, and
//! the fallbacks where no cgroup can be made, through rlimits set in the child.
//!
//! Memory counts the kernel's socket buffers too (`memory.kmem.tcp.limit_in_bytes`, which v1
//! keeps apart from `memory.limit_in_bytes`): a call cannot hold the host's TCP memory in
//! full loopback buffers. Two limits are not kernel-enforced kills but watched by the
//! supervise loop ([`Watcher`], every [`WATCH_EVERY`]): the call's whole CPU time
//! (`cpuacct.usage`, all its processes, ended or not — `RLIMIT_CPU` alone is per process, so
//! ten sequential children could each use the limit) and a refused socket buffer allocation
//! (`memory.kmem.tcp.failcnt`). Either ends the call with its `limit_hit`.
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

use rustix::process::{Resource, Rlimit, Signal};

use crate::status::ExitStatus;

use super::cgroup;

/// Limits of one call. `None`: no limit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(default)]
#[non_exhaustive]
pub struct Limits {
    /// Processes and threads the call may have at once.
    pub procs: Option<u64>,
    /// Bytes of memory of all its processes together, socket buffers included.
    pub memory: Option<u64>,
    /// CPU time of all its processes together (where the `cpuacct` controller is available;
    /// else of each process).
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

/// A limit kept more loosely than asked, as this machine can (no cgroup controller for it): a
/// warning of the call (its text: `agent-exec-core`'s render, which matches every variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitFallback {
    /// The process limit counts all of this user's processes (`RLIMIT_NPROC`).
    ProcsPerUser,
    /// The memory limit is each process's address space (`RLIMIT_AS`).
    MemoryPerProcess,
    /// The CPU limit is each process's CPU time (`RLIMIT_CPU`).
    CpuPerProcess,
}

/// A limit this machine cannot enforce at all (its text: `agent-exec-core`'s render, which
/// matches every variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum LimitUnavailable {
    /// No cgroup `pids` controller, and root is exempt from `RLIMIT_NPROC`.
    #[error("the process limit needs the cgroup `pids` controller, which is not available here")]
    Procs,
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
    /// A watched limit that ended the call ([`Watcher::exceeded`]), for [`LimitGroup::hit`].
    tripped: std::sync::Mutex<Option<LimitKind>>,
    /// The event counters (OOM kills, refused forks) already reported: a session's shell
    /// lives through many commands, each told only of its own.
    reported: std::sync::Mutex<(u64, u64)>,
    pub(crate) rlimits: Vec<(Resource, Rlimit)>,
    /// How a limit is kept more loosely than asked, where no cgroup could carry it.
    pub(crate) fallbacks: Vec<LimitFallback>,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

static PIDS: OnceLock<Option<PathBuf>> = OnceLock::new();
static MEMORY: OnceLock<Option<PathBuf>> = OnceLock::new();
static CPUACCT: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The v1 controllers limits use, each with this process's directory in it.
const CONTROLLERS: [(&str, &OnceLock<Option<PathBuf>>); 3] =
    [("pids", &PIDS), ("memory", &MEMORY), ("cpuacct", &CPUACCT)];

/// How often the supervise loop looks at the watched limits.
pub(crate) const WATCH_EVERY: Duration = Duration::from_millis(50);

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
    for (_, cell) in CONTROLLERS {
        if let Some(Some(dir)) = cell.get() {
            remove_emptied(dir, 1, Duration::ZERO);
        }
    }
}

/// Whether [`cleanup`] left no limit directory of this process.
pub(crate) fn nothing_left() -> bool {
    CONTROLLERS
        .into_iter()
        .all(|(_, cell)| !matches!(cell.get(), Some(Some(dir)) if dir.exists()))
}

/// Removes the limit directories of a dead `supervisor` (its watchdog calls this once the
/// supervisor's processes are ended: the directories empty as they are reaped).
pub(crate) fn remove_for(supervisor: i32) {
    for (controller, _) in CONTROLLERS {
        let Some(dir) = cgroup::own_v1_dir(controller)
            .map(|d| {
                d.join(format!(
                    "agent-exec-{}",
                    crate::sys::process_name(supervisor)
                ))
            })
            .filter(|d| d.is_dir())
        else {
            continue;
        };
        remove_emptied(&dir, 100, Duration::from_millis(10));
    }
}

/// This process's directory in the v1 hierarchy of `controller`, made on first use.
fn base(controller: &'static str) -> Option<&'static Path> {
    let (_, cell) = CONTROLLERS.into_iter().find(|(c, _)| *c == controller)?;
    cell.get_or_init(|| {
        let parent = cgroup::own_v1_dir(controller)?;
        // Directories of dead agent-exec processes: their members died with their
        // containment cgroups; only the empty directories are left.
        for entry in fs::read_dir(&parent).ok()?.flatten() {
            if crate::sys::left_by_dead_process(&entry.file_name(), "agent-exec-") {
                remove_emptied(&entry.path(), 1, Duration::ZERO);
            }
        }
        let dir = parent.join(format!(
            "agent-exec-{}",
            crate::sys::process_name(std::process::id() as i32)
        ));
        // Left by a dead process under our name (an earlier PID namespace's): its limit
        // groups' names would collide with ours.
        if dir.is_dir() {
            remove_emptied(&dir, 100, Duration::from_millis(10));
        }
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
            // memsw exists only with swap accounting, kmem.tcp only in kernels with v1 kernel
            // memory accounting: a missing file is no failure.
            if (file.contains("memsw") || file.contains("kmem")) && !path.exists() {
                continue;
            }
            fs::write(path, value.to_string())?;
        }
        OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::CLOEXEC.bits() as i32)
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
    /// Prepares `limits`; an error names a limit this machine cannot enforce. `in_namespace`:
    /// the call runs in a PID namespace of its own, whose CPU time the watcher can sum without
    /// a cgroup.
    pub(crate) fn new(limits: &Limits, in_namespace: bool) -> Result<LimitGroup, LimitUnavailable> {
        let mut group = LimitGroup {
            limits: *limits,
            ..LimitGroup::default()
        };
        let root = rustix::process::geteuid().is_root();
        let limit = |n: u64| Rlimit {
            current: Some(n),
            maximum: Some(n),
        };
        if let Some(n) = limits.procs {
            match make_cgroup("pids", &[("pids.max", n)]) {
                Some(cg) => group.cgroups.push(cg),
                // RLIMIT_NPROC counts the user's processes, and root is exempt from it.
                None if !root => {
                    group.rlimits.push((Resource::Nproc, limit(n)));
                    group.fallbacks.push(LimitFallback::ProcsPerUser);
                }
                None => return Err(LimitUnavailable::Procs),
            }
        }
        if let Some(n) = limits.memory {
            let settings = [
                ("memory.limit_in_bytes", n),
                ("memory.memsw.limit_in_bytes", n),
                ("memory.kmem.tcp.limit_in_bytes", n),
            ];
            match make_cgroup("memory", &settings) {
                Some(cg) => group.cgroups.push(cg),
                // Per process, not per call: the nearest the kernel offers without a cgroup.
                None => {
                    group.rlimits.push((Resource::As, limit(n)));
                    group.fallbacks.push(LimitFallback::MemoryPerProcess);
                }
            }
        }
        if let Some(cpu) = limits.cpu {
            // The call's whole CPU time, watched; else (and besides: one process reaching the
            // limit ends at once) each process's, by the kernel.
            match make_cgroup("cpuacct", &[]) {
                Some(cg) => group.cgroups.push(cg),
                None if in_namespace => {}
                None => group.fallbacks.push(LimitFallback::CpuPerProcess),
            }
            // SIGXCPU at the limit (it ends a process that does not handle it), SIGKILL a
            // second later.
            let secs = cpu.as_secs().max(1);
            group.rlimits.push((
                Resource::Cpu,
                Rlimit {
                    current: Some(secs),
                    maximum: Some(secs + 1),
                },
            ));
        }
        if let Some(n) = limits.file_size {
            group.rlimits.push((Resource::Fsize, limit(n)));
        }
        Ok(group)
    }

    /// The descriptors the child writes `0` to before it execs.
    pub(crate) fn join_fds(&self) -> Vec<RawFd> {
        self.cgroups.iter().map(|c| c.join.as_raw_fd()).collect()
    }

    /// The watched limits of one call (or one session command), counted from now; `None` when
    /// no limit is watched. `namespaces`: the call's PID namespaces, whose CPU time counts
    /// where no `cpuacct` cgroup could be made.
    pub(crate) fn watcher<'a>(
        &'a self,
        namespaces: Option<&'a std::sync::Mutex<Vec<crate::pidns::Namespace>>>,
    ) -> Option<Watcher<'a>> {
        let file = |controller: &str, name: &str| {
            self.cgroups
                .iter()
                .find(|c| c.controller == controller)
                .map(|c| c.dir.join(name))
                .filter(|p| p.exists())
        };
        let cpu = self
            .limits
            .cpu
            .zip(file("cpuacct", "cpuacct.usage"))
            .map(|(limit, usage)| {
                let start = read_number(&usage).unwrap_or(0);
                (usage, start, limit)
            });
        let tcp = file("memory", "memory.kmem.tcp.failcnt").map(|failcnt| {
            let start = read_number(&failcnt).unwrap_or(0);
            (failcnt, start)
        });
        let namespace_cpu = match (cpu.is_none(), self.limits.cpu, namespaces) {
            (true, Some(limit), Some(namespaces)) => {
                Some((namespaces, namespace_cpu(namespaces), limit))
            }
            _ => None,
        };
        (cpu.is_some() || tcp.is_some() || namespace_cpu.is_some()).then_some(Watcher {
            group: self,
            cpu,
            tcp,
            namespace_cpu,
        })
    }

    /// Which limit ended or hampered the call, judged once it is over by the cgroups' event
    /// counters and by how the main process ended.
    pub(crate) fn hit(&self, status: Option<ExitStatus>) -> Option<LimitKind> {
        let tripped = self
            .tripped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if tripped.is_some() {
            return tripped;
        }
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
        if self.limits.cpu.is_some() && ended_by(Signal::XCPU.as_raw()) {
            return Some(LimitKind::Cpu);
        }
        if self.limits.file_size.is_some() && ended_by(Signal::XFSZ.as_raw()) {
            return Some(LimitKind::FileSize);
        }
        if refused_forks > seen_refused {
            return Some(LimitKind::Procs);
        }
        None
    }
}

/// The CPU time of every process the namespaces ran.
fn namespace_cpu(namespaces: &std::sync::Mutex<Vec<crate::pidns::Namespace>>) -> Duration {
    namespaces
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .map(crate::pidns::Namespace::cpu_time)
        .sum()
}

fn read_number(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The limits the kernel does not end a call for by itself, looked at by the supervise loop.
#[derive(Debug)]
pub(crate) struct Watcher<'a> {
    group: &'a LimitGroup,
    /// `cpuacct.usage` (ns), its value when the call began, and the limit.
    cpu: Option<(PathBuf, u64, Duration)>,
    /// `memory.kmem.tcp.failcnt`, and its value when the call began.
    tcp: Option<(PathBuf, u64)>,
    /// Without a `cpuacct` cgroup: the call's PID namespaces, their CPU time when the call
    /// began, and the limit.
    namespace_cpu: Option<(
        &'a std::sync::Mutex<Vec<crate::pidns::Namespace>>,
        Duration,
        Duration,
    )>,
}

impl Watcher<'_> {
    /// The limit the call has gone past, if any (remembered for [`LimitGroup::hit`]).
    pub(crate) fn exceeded(&self) -> Option<LimitKind> {
        let over_cpu = self.cpu.as_ref().is_some_and(|(usage, start, limit)| {
            read_number(usage)
                .is_some_and(|now| now.saturating_sub(*start) >= limit.as_nanos() as u64)
        }) || self
            .namespace_cpu
            .is_some_and(|(namespaces, start, limit)| {
                namespace_cpu(namespaces).saturating_sub(start) >= limit
            });
        let over_tcp = self
            .tcp
            .as_ref()
            .is_some_and(|(failcnt, start)| read_number(failcnt).is_some_and(|n| n > *start));
        let kind = if over_cpu {
            LimitKind::Cpu
        } else if over_tcp {
            LimitKind::Memory
        } else {
            return None;
        };
        *self
            .group
            .tripped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(kind);
        Some(kind)
    }
}

impl Drop for LimitCgroup {
    fn drop(&mut self) {
        // The call's processes are gone, ended with its containment group.
        remove_emptied(&self.dir, 50, Duration::from_millis(2));
    }
}
