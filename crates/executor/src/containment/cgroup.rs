//! Control groups as containment groups: found at run time, one per call, reused.
//!
//! The kernel keeps every descendant of a process in its cgroup, whatever it does (`setsid`,
//! double fork, a scrubbed environment), so a cgroup per call is the one exact answer to "which
//! processes did this call start". Detected, never assumed (`machine-facts.md`):
//! - **cgroup v2** where our own cgroup (or one we may write below) takes a child: a kill is one
//!   write to `cgroup.kill`.
//! - **cgroup v1** `freezer` hierarchy (root only): freeze → kill every member → thaw, so nothing
//!   can fork while it is being killed.
//!
//! Layout: `<our cgroup>/agent-exec-<pid>-<pid namespace>/c<N>`. The per-process directory is what the watchdog
//! ends when we die (see `watchdog.rs`); directories left by a dead `agent-exec` are ended and
//! removed when the next one starts. Empty call cgroups go back to a pool instead of being
//! removed: `mkdir` + `rmdir` cost ~45 µs a call here, a pooled one costs nothing.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fs::OFlags;
use rustix::process::{Pid, Signal, kill_process};

use crate::wait::{KILLED_WAIT, wait_until};

/// Which cgroup interface a hierarchy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// The unified hierarchy, with `cgroup.kill`.
    V2,
    /// The v1 `freezer` controller.
    V1Freezer,
}

/// The per-process directory under which every call's cgroup is made.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    pub(crate) version: Version,
    pub(crate) dir: PathBuf,
}

/// The environment variable that forces a containment mechanism for the whole process:
/// `auto` (default), `cgroup2`, `cgroup1` or `pgroup`.
pub const CONTAINMENT_VAR: &str = "AGENT_EXEC_CONTAINMENT";

/// The hierarchies to try by default, in order: from `AGENT_EXEC_CONTAINMENT`, else v2 then v1.
pub(crate) fn default_order() -> &'static [Version] {
    match std::env::var(CONTAINMENT_VAR).as_deref() {
        Ok("cgroup2" | "v2") => &[Version::V2],
        Ok("cgroup1" | "v1") => &[Version::V1Freezer],
        Ok("pgroup" | "pidns" | "none" | "off") => &[],
        _ => &[Version::V2, Version::V1Freezer],
    }
}

/// The default base of this process: the first hierarchy of [`default_order`] that works.
pub(crate) fn default_base() -> Option<&'static Base> {
    default_order().iter().find_map(|&v| base(v))
}

static UNJOINABLE_V2: AtomicBool = AtomicBool::new(false);
static UNJOINABLE_V1: AtomicBool = AtomicBool::new(false);

fn unjoinable(version: Version) -> &'static AtomicBool {
    match version {
        Version::V2 => &UNJOINABLE_V2,
        Version::V1Freezer => &UNJOINABLE_V1,
    }
}

/// A child could not join a cgroup of `version` (a subtree we may create in but not move
/// into): later calls use the next mechanism instead of failing the same way.
pub(crate) fn mark_unjoinable(version: Version) {
    unjoinable(version).store(true, Ordering::SeqCst);
}

/// This process's directory in the `version` hierarchy, made on first use; `None` where no
/// cgroup can be made there.
pub(crate) fn base(version: Version) -> Option<&'static Base> {
    static V2: OnceLock<Option<Base>> = OnceLock::new();
    static V1: OnceLock<Option<Base>> = OnceLock::new();
    let cell = match version {
        Version::V2 => &V2,
        Version::V1Freezer => &V1,
    };
    if unjoinable(version).load(Ordering::SeqCst) {
        return None;
    }
    cell.get_or_init(|| make_base(version)).as_ref()
}

/// The directory a process's calls get in the `version` hierarchy (the watchdog computes it
/// for its supervisor: it shares the supervisor's cgroups).
pub(crate) fn process_dir(version: Version, pid: i32) -> Option<PathBuf> {
    Some(own_cgroup_dir(version)?.join(format!("agent-exec-{}", crate::sys::process_name(pid))))
}

/// Where our own cgroup of `version` lives in the file system.
fn own_cgroup_dir(version: Version) -> Option<PathBuf> {
    match version {
        Version::V2 => own_dir_in(None),
        Version::V1Freezer => own_dir_in(Some("freezer")),
    }
}

/// Our own cgroup in the v1 hierarchy of `controller` (`pids`, `memory`), if it is mounted.
pub(crate) fn own_v1_dir(controller: &str) -> Option<PathBuf> {
    own_dir_in(Some(controller))
}

/// Our own cgroup in the unified hierarchy (`None`) or in the v1 hierarchy of a controller.
fn own_dir_in(v1_controller: Option<&str>) -> Option<PathBuf> {
    let (mountinfo, cgroups) = mounts_and_cgroups()?;
    // mountinfo: `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS`.
    let (root, mount) = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let left: Vec<&str> = left.split(' ').collect();
        let mut right = right.split(' ');
        let fstype = right.next()?;
        let superopts = right.nth(1).unwrap_or("");
        let wanted = match v1_controller {
            None => fstype == "cgroup2",
            Some(c) => fstype == "cgroup" && superopts.split(',').any(|o| o == c),
        };
        wanted.then(|| (left.get(3).copied(), left.get(4).copied()))
    })?;
    let (root, mount) = (root?, mount?);
    // /proc/self/cgroup: `0::PATH` (v2) or `N:freezer[,…]:PATH` (v1).
    let path = cgroups.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = match v1_controller {
            None => controllers.is_empty(),
            Some(wanted) => controllers.split(',').any(|c| c == wanted),
        };
        wanted.then_some(path)
    })?;
    // The mount may show only a subtree (a container): our path is relative to its root.
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .trim_start_matches('/');
    Some(Path::new(mount).join(relative))
}

/// `/proc/self/mountinfo` and `/proc/self/cgroup`, read once: our mounts and cgroups do not
/// change, and they are looked up for every hierarchy at start (each read of a `/proc` file
/// through `read_to_string` began at 32 bytes and doubled: 8 reads a file).
fn mounts_and_cgroups() -> Option<(&'static str, &'static str)> {
    static FILES: OnceLock<Option<(String, String)>> = OnceLock::new();
    let read = |path: &str| {
        let mut text = String::with_capacity(16 << 10);
        std::io::Read::read_to_string(&mut fs::File::open(path).ok()?, &mut text).ok()?;
        Some(text)
    };
    FILES
        .get_or_init(|| Some((read("/proc/self/mountinfo")?, read("/proc/self/cgroup")?)))
        .as_ref()
        .map(|(m, c)| (m.as_str(), c.as_str()))
}

fn make_base(version: Version) -> Option<Base> {
    let parent = own_cgroup_dir(version)?;
    remove_stale(&parent, version);
    let dir = process_dir(version, std::process::id() as i32)?;
    if dir.is_dir() {
        // Our name is unique among live processes: a directory holding it was left by a dead
        // one of an earlier PID namespace (its inode and pid came round again). Its cgroups'
        // names would collide with ours: ended and removed first.
        end_tree(&dir, version, STALE_WAIT);
    }
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let base = Base { version, dir };
    // A cgroup that cannot be joined or ended is no containment: check the files we rely on.
    let probe = match version {
        Version::V2 => "cgroup.kill",
        Version::V1Freezer => "freezer.state",
    };
    match Cgroup::create(&base) {
        // The probe becomes the first pooled cgroup.
        Ok(cg) if cg.dir.join(probe).exists() => pool().push(cg),
        other => {
            if let Ok(cg) = other {
                let _ = fs::remove_dir(&cg.dir);
            }
            let _ = fs::remove_dir(&base.dir);
            return None;
        }
    }
    Some(base)
}

/// How long the processes in a directory left by a dead `agent-exec` are waited for.
const STALE_WAIT: Duration = Duration::from_secs(1);

/// Ends and removes the directories of `agent-exec` processes that died without cleaning up
/// (their watchdog killed too, or none was started).
fn remove_stale(parent: &Path, version: Version) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if crate::sys::left_by_dead_process(&entry.file_name(), "agent-exec-") {
            end_tree(&entry.path(), version, STALE_WAIT);
        }
    }
}

/// Kills everything in the cgroups below `dir` and removes them, then `dir` itself. Used for
/// stale directories and by the watchdog; allocation-light but not async-signal-safe.
pub(crate) fn end_tree(dir: &Path, version: Version, wait: Duration) {
    let children = subdirs(dir);
    for child in &children {
        kill_dir(child, version);
    }
    let until = Instant::now() + wait;
    for child in &children {
        let left = until.saturating_duration_since(Instant::now());
        wait_until(left, Duration::from_millis(5), || {
            let empty = subtree_pids(child).is_empty();
            if !empty {
                kill_dir(child, version);
            }
            empty
        });
        remove_below(child);
        let _ = fs::remove_dir(child);
    }
    let _ = fs::remove_dir(dir);
}

/// How long a v1 cgroup is given to freeze before its members are killed anyway.
const FREEZE_WAIT: Duration = Duration::from_millis(200);

/// SIGKILL to every process in the cgroup at `dir`.
pub(crate) fn kill_dir(dir: &Path, version: Version) {
    match version {
        Version::V2 => {
            let _ = fs::write(dir.join("cgroup.kill"), b"1");
        }
        Version::V1Freezer => {
            // Frozen processes cannot fork while we collect them; SIGKILL takes effect on thaw.
            let state = dir.join("freezer.state");
            let _ = fs::write(&state, b"FROZEN");
            wait_until(FREEZE_WAIT, Duration::from_millis(1), || {
                !fs::read_to_string(&state).is_ok_and(|s| s.trim() != "FROZEN")
            });
            for pid in subtree_pids(dir).into_iter().filter_map(Pid::from_raw) {
                let _ = kill_process(pid, Signal::KILL);
            }
            let _ = fs::write(&state, b"THAWED");
        }
    }
}

/// The processes of the cgroup at `dir` and of every cgroup below it (a command may make its
/// own: a nested agent-exec does).
fn subtree_pids(dir: &Path) -> Vec<i32> {
    let mut pids = read_pids(&dir.join("cgroup.procs"));
    for child in subdirs(dir) {
        pids.extend(subtree_pids(&child));
    }
    pids
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Removes the (empty) cgroups below `dir`, deepest first.
pub(crate) fn remove_below(dir: &Path) {
    for child in subdirs(dir) {
        remove_below(&child);
        let _ = fs::remove_dir(&child);
    }
}

fn read_pids(path: &Path) -> Vec<i32> {
    parse_pids(&fs::read(path).unwrap_or_default())
}

/// One call's cgroup.
#[derive(Debug)]
pub(crate) struct Cgroup {
    pub(crate) dir: PathBuf,
    version: Version,
    /// `cgroup.procs`, opened for writing: the child writes `0` to it before it execs.
    join: File,
    /// `cgroup.procs`, opened for reading, re-read from offset 0.
    procs: File,
    /// The directory itself (v2): children are created in it with `CLONE_INTO_CGROUP`.
    dir_fd: Option<File>,
    /// `cgroup.stat` (v2): whether a command made cgroups of its own below this one.
    stat: Option<File>,
    /// `cgroup.kill` was written. Such a cgroup is removed, never reused: on this kernel
    /// (6.18) every child later created in it with `CLONE_INTO_CGROUP` is killed at birth
    /// (the fork compares the kill sequence of the parent's cgroup with the target's).
    killed: AtomicBool,
}

static NEXT: AtomicU64 = AtomicU64::new(1);
static POOL: Mutex<Vec<Cgroup>> = Mutex::new(Vec::new());

impl Cgroup {
    fn create(base: &Base) -> io::Result<Cgroup> {
        let dir = base
            .dir
            .join(format!("c{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        fs::create_dir(&dir)?;
        let opened = (|| {
            // std opens every file close-on-exec.
            let join = OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))?;
            let procs = File::open(dir.join("cgroup.procs"))?;
            let (dir_fd, stat) = match base.version {
                Version::V2 => (
                    Some(
                        OpenOptions::new()
                            .read(true)
                            .custom_flags(OFlags::DIRECTORY.bits() as i32)
                            .open(&dir)?,
                    ),
                    Some(File::open(dir.join("cgroup.stat"))?),
                ),
                Version::V1Freezer => (None, None),
            };
            Ok(Cgroup {
                dir: dir.clone(),
                version: base.version,
                join,
                procs,
                dir_fd,
                stat,
                killed: AtomicBool::new(false),
            })
        })();
        if opened.is_err() {
            let _ = fs::remove_dir(&dir);
        }
        opened
    }

    /// An empty cgroup for a call: from the pool, or a new one.
    pub(crate) fn take(base: &Base) -> io::Result<Cgroup> {
        let mut pool = pool();
        if let Some(i) = pool.iter().rposition(|cg| cg.version == base.version) {
            return Ok(pool.swap_remove(i));
        }
        drop(pool);
        Cgroup::create(base)
    }

    /// Returns an empty cgroup to the pool (a non-empty one is ended first).
    pub(crate) fn give_back(self) {
        if !self.pids().is_empty() {
            self.kill();
            self.wait_empty(KILLED_WAIT);
            if !self.pids().is_empty() {
                // Unkillable (D state): leave it to the watchdog rather than reuse it.
                return;
            }
        }
        // Cgroups a command made below this one go with it.
        if self.version == Version::V1Freezer || self.has_descendants() {
            remove_below(&self.dir);
        }
        if self.killed.load(Ordering::SeqCst) {
            let _ = fs::remove_dir(&self.dir);
            return;
        }
        let mut pool = pool();
        // Bound the pool: as many cgroups as calls ever ran at once is plenty.
        if pool.len() < 64 {
            pool.push(self);
        } else {
            drop(pool);
            let _ = fs::remove_dir(&self.dir);
        }
    }

    /// Waits up to `bound` for the cgroup to empty. In v2 its `cgroup.events` says when
    /// (`populated 0`, notified through `poll`); in v1 its members are looked at every few
    /// milliseconds. Whether it emptied.
    fn wait_empty(&self, bound: Duration) -> bool {
        let until = Instant::now() + bound;
        if self.version == Version::V2
            && let Ok(events) = File::open(self.dir.join("cgroup.events"))
        {
            loop {
                // A read from offset 0 both gives the state and arms the notification: a
                // change after it wakes the poll below at once.
                let text = pread_all(&events);
                let populated = String::from_utf8_lossy(&text)
                    .lines()
                    .find_map(|l| l.strip_prefix("populated "))
                    .map(str::trim)
                    .map(str::to_owned);
                match populated.as_deref() {
                    Some("0") => return true,
                    Some(_) => {}
                    // Unreadable: look at the members instead.
                    None => break,
                }
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return false;
                }
                let timeout = Timespec::try_from(left).ok();
                let mut fds = [PollFd::new(&events, PollFlags::PRI)];
                if let Err(e) = poll(&mut fds, timeout.as_ref())
                    && e != rustix::io::Errno::INTR
                {
                    break;
                }
            }
        }
        let left = until.saturating_duration_since(Instant::now());
        wait_until(left, Duration::from_millis(2), || self.pids().is_empty())
    }

    pub(crate) fn version(&self) -> Version {
        self.version
    }

    /// The descriptor a child writes `0` to, to join (async-signal-safe to use after fork).
    pub(crate) fn join_fd(&self) -> RawFd {
        self.join.as_raw_fd()
    }

    /// The directory to create children in (`CLONE_INTO_CGROUP`), for v2.
    pub(crate) fn dir_fd(&self) -> Option<RawFd> {
        self.dir_fd.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// The processes (thread-group ids) in the cgroup now. Zombies are not listed. For v2 one
    /// `pread` from offset 0 on a kept descriptor (the kernel regenerates the list for it).
    pub(crate) fn pids(&self) -> Vec<i32> {
        if self.version == Version::V1Freezer {
            // v1's pid lists are cached per open file: a pread from 0 may see the old list.
            return subtree_pids(&self.dir);
        }
        let mut pids = parse_pids(&pread_all(&self.procs));
        if self.has_descendants() {
            for child in subdirs(&self.dir) {
                pids.extend(subtree_pids(&child));
            }
        }
        pids
    }

    /// Whether a command made cgroups below this one. v2: the directory's link count (2 and one
    /// per subdirectory, and every subdirectory of a cgroup is a cgroup) — an `fstat`, where
    /// `nr_descendants` of `cgroup.stat` takes a `pread` that formats every line of it (on
    /// every session call's path); `cgroup.stat` when the count cannot be read.
    fn has_descendants(&self) -> bool {
        if let Some(dir) = &self.dir_fd
            && let Ok(stat) = rustix::fs::fstat(dir)
        {
            return stat.st_nlink > 2;
        }
        self.stat.as_ref().is_some_and(|stat| {
            let text = pread_all(stat);
            String::from_utf8_lossy(&text)
                .lines()
                .find_map(|l| l.strip_prefix("nr_descendants "))
                .is_some_and(|n| n.trim() != "0")
        })
    }

    /// SIGKILL to every member, atomically where the kernel offers it.
    pub(crate) fn kill(&self) {
        if self.version == Version::V2 {
            self.killed.store(true, Ordering::SeqCst);
        }
        kill_dir(&self.dir, self.version);
    }
}

fn pool() -> std::sync::MutexGuard<'static, Vec<Cgroup>> {
    POOL.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the pooled (empty) cgroups and the per-process directory. For embedders that want
/// to leave no directory behind; the `agent-exec` binary's watchdog does this at exit.
pub(crate) fn remove_pooled() {
    let pooled: Vec<Cgroup> = std::mem::take(&mut *pool());
    for cg in pooled {
        let _ = fs::remove_dir(&cg.dir);
    }
}

/// Everything a kept descriptor of a cgroup file reads from offset 0 (the kernel regenerates
/// the content for each read from 0).
fn pread_all(file: &File) -> Vec<u8> {
    let mut buf = Vec::with_capacity(64);
    let mut chunk = [0u8; 4096];
    let mut offset = 0;
    loop {
        let n = match rustix::io::pread(file, &mut chunk, offset) {
            Ok(n) if n > 0 => n,
            _ => break,
        };
        buf.extend_from_slice(&chunk[..n]);
        // A cgroup file is a seq_file, which fills a read while its next record fits: a read
        // that left room for several more records (these are lines under 64 bytes) was the
        // end — one `pread` per look on every call's hot path, not two.
        if n + 256 <= chunk.len() {
            break;
        }
        offset += n as u64;
    }
    buf
}

fn parse_pids(buf: &[u8]) -> Vec<i32> {
    buf.split(|&b| b == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok()?.trim().parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_cgroup_is_seen_empty_as_soon_as_it_is() {
        // Where no cgroup can be made here, there is nothing to wait for.
        let Some(cg) = default_base().and_then(|b| Cgroup::take(b).ok()) else {
            return;
        };
        let mut sleeper = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("sleep starts");
        let joined = fs::write(cg.dir.join("cgroup.procs"), sleeper.id().to_string());
        if joined.is_err() {
            let _ = sleeper.kill();
            let _ = sleeper.wait();
            return;
        }
        assert!(!cg.wait_empty(Duration::from_millis(20)), "it runs");
        let start = Instant::now();
        cg.kill();
        let _ = sleeper.wait();
        assert!(cg.wait_empty(Duration::from_secs(30)));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(cg.pids().is_empty());
        cg.give_back();
    }
}
