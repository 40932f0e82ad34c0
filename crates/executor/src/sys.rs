//! Thin, safe wrappers over the Linux calls the executor needs and std does not offer:
//! pidfds, poll, non-blocking reads, pipe sizes, and `/proc` scans. The system calls are
//! `rustix`'s; the one `unsafe` left borrows a descriptor passed by number.

use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;

/// A descriptor passed by number, borrowed. The caller holds `fd` open while the borrow
/// lives: the functions here that take a `RawFd` are called with `as_raw_fd()` of a descriptor
/// their caller owns, for the call; `process.rs` borrows the plan's for the spawn.
pub(crate) fn borrow<'a>(fd: RawFd) -> BorrowedFd<'a> {
    // SAFETY: the caller holds `fd` open while the borrow lives (above): every use in this
    // crate is one of the two kinds said.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// Opens a pidfd for `pid`: readable once the process exits. `None` where unsupported.
pub(crate) fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// The lowest descriptor a spawned child may use after placing its own 0, 1, 2, … (at most
/// eight: `process.rs`): a descriptor the child still needs then must not be one of them, or
/// placing them would replace it.
pub(crate) const CHILD_FD_FLOOR: RawFd = 10;

/// `fd`, moved to [`CHILD_FD_FLOOR`] or above if it is below (close-on-exec): for the
/// descriptors a child uses after placing its standard ones (the sandbox's namespaces and
/// Landlock layers). A sandboxed session shell, whose fds 3 and 4 are placed, once had its
/// ruleset on fd 4 in a process with few descriptors open, and failed to start.
pub(crate) fn above_child_fds(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() >= CHILD_FD_FLOOR {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, CHILD_FD_FLOOR)?)
}

/// A close-on-exec copy of `fd` (held by the caller), numbered `min` or above.
pub(crate) fn dup_cloexec(fd: RawFd, min: RawFd) -> io::Result<OwnedFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(borrow(fd), min)?)
}

/// One past the highest descriptor this process may hold (`RLIMIT_NOFILE`'s soft limit,
/// bounded): how far a descriptor-by-descriptor sweep must go where `close_range` fails.
pub(crate) fn descriptor_limit() -> u32 {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    // `None` is "unlimited".
    limit.current.unwrap_or(u64::MAX).min(1 << 20) as u32
}

/// Makes a descriptor non-blocking.
pub(crate) fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    let fd = borrow(fd);
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// Asks for a larger pipe buffer (fewer wakeups on floods); failure is harmless.
pub(crate) fn grow_pipe(fd: RawFd, bytes: i32) {
    let _ = rustix::pipe::fcntl_setpipe_size(borrow(fd), bytes as usize);
}

/// Result of reading what is available from a non-blocking descriptor.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadState {
    /// More may come.
    Open,
    /// End of file (or an error that ends the stream).
    Closed,
}

/// Reads everything available now, calling `f` per chunk. At most `max_rounds` reads, so one
/// flooding stream cannot starve the other.
pub(crate) fn read_available(
    fd: RawFd,
    buf: &mut [u8],
    max_rounds: usize,
    mut f: impl FnMut(&[u8]),
) -> ReadState {
    let fd = borrow(fd);
    for _ in 0..max_rounds {
        match rustix::io::read(fd, &mut *buf) {
            Ok(0) => return ReadState::Closed,
            Ok(n) => f(&buf[..n]),
            Err(Errno::AGAIN | Errno::INTR) => return ReadState::Open,
            // EIO is how a PTY master says the other side closed.
            Err(_) => return ReadState::Closed,
        }
    }
    ReadState::Open
}

/// `timeout` in whole milliseconds, rounded up so a deadline is never polled as already
/// passed (as `poll(2)` takes it); `None` waits forever.
fn poll_timeout(timeout: Option<Duration>) -> Option<Timespec> {
    timeout.map(|t| {
        let ms = i32::try_from(t.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
        Timespec {
            tv_sec: i64::from(ms / 1000),
            tv_nsec: i64::from(ms % 1000) * 1_000_000,
        }
    })
}

/// Polls descriptors for readability. Returns which are ready (readable or hung up).
pub(crate) fn poll_readable(fds: &[Option<RawFd>], timeout: Option<Duration>) -> Vec<bool> {
    // A missing descriptor is left out of the poll (as a negative one is ignored by it).
    let mut pfds: Vec<PollFd<'_>> = fds
        .iter()
        .flatten()
        .map(|&fd| PollFd::from_borrowed_fd(borrow(fd), PollFlags::IN))
        .collect();
    let timeout = poll_timeout(timeout);
    if !matches!(rustix::event::poll(&mut pfds, timeout.as_ref()), Ok(n) if n > 0) {
        return vec![false; fds.len()];
    }
    let mut ready = pfds.iter().map(|p| !p.revents().is_empty());
    fds.iter()
        .map(|fd| fd.is_some() && ready.next().unwrap_or(false))
        .collect()
}

/// Waits up to `timeout` for `fd` to take a write; whether it will (an error or hang-up
/// counts: the write then reports it).
pub(crate) fn poll_writable(fd: RawFd, timeout: Duration) -> bool {
    let mut pfd = [PollFd::from_borrowed_fd(borrow(fd), PollFlags::OUT)];
    let timeout = poll_timeout(Some(timeout));
    matches!(rustix::event::poll(&mut pfd, timeout.as_ref()), Ok(n) if n > 0)
}

/// A pipe whose both ends are close-on-exec.
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// Writes all of `data` to a blocking descriptor.
pub(crate) fn write_all(fd: &impl AsFd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match rustix::io::write(fd, data) {
            Ok(n) => data = &data[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub(crate) pid: i32,
    pub(crate) ppid: i32,
    pub(crate) pgid: i32,
    pub(crate) zombie: bool,
    /// CPU time in clock ticks: its own (user + system), and that of the children it waited
    /// for (theirs, and their waited-for children's).
    pub(crate) cpu_ticks: u64,
    pub(crate) children_cpu_ticks: u64,
}

pub(crate) fn proc_stat(pid: i32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    // Fields 14–17 (utime, stime, cutime, cstime); 6 fields are read by now (3..=5 above).
    let mut ticks = fields
        .skip(8)
        .take(4)
        .map(|f| f.parse::<u64>().unwrap_or(0));
    let own = ticks.next()? + ticks.next()?;
    let children = ticks.next()? + ticks.next()?;
    Some(ProcStat {
        pid,
        ppid,
        pgid,
        zombie: state == "Z" || state == "X",
        cpu_ticks: own,
        children_cpu_ticks: children,
    })
}

/// Every process visible in `/proc`.
pub(crate) fn all_pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether `/proc/<pid>/environ` holds `needle` (a `NAME=value` entry).
pub(crate) fn environ_contains(pid: i32, needle: &[u8]) -> bool {
    environ_any(pid, |e| e == needle)
}

/// Whether `/proc/<pid>/environ` holds an entry starting with `prefix`.
pub(crate) fn environ_starts_with(pid: i32, prefix: &[u8]) -> bool {
    environ_any(pid, |e| e.starts_with(prefix))
}

fn environ_any(pid: i32, wanted: impl Fn(&[u8]) -> bool) -> bool {
    fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|&b| b == 0).any(wanted))
}

/// The name of what agent-exec process `pid` (of our PID namespace) makes for itself and
/// leaves to be cleaned up after it is gone (its cgroup and temp directories):
/// `<pid>-<PID namespace>`. The pid alone is not enough: processes of different PID
/// namespaces (an agent in a container without a cgroup namespace, `unshare --pid`) share the
/// cgroup tree and `/tmp`, and have the same small pids.
pub(crate) fn process_name(pid: i32) -> String {
    format!("{pid}-{}", base36(pid_namespace()))
}

/// `n` in base 36: the namespace's inode in 7 characters rather than 10, as the name is part
/// of every sandboxed call's `TMPDIR`, where Unix socket paths must fit in 108 bytes.
fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// The inode of our PID namespace (0 where it cannot be read).
fn pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    static INODE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *INODE.get_or_init(|| fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino()))
}

/// Whether `name` is `<prefix>`[`process_name`] of a process that no longer exists: a
/// directory an agent-exec process made for itself and left behind when it died. Names from
/// another PID namespace are never judged (their pids mean nothing here; their own processes
/// clean them up); a name without a namespace (made by an older version) counts as ours.
pub(crate) fn left_by_dead_process(name: &std::ffi::OsStr, prefix: &str) -> bool {
    let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
        return false;
    };
    let (pid, namespace) = match rest.split_once('-') {
        Some((pid, namespace)) => (pid, Some(namespace)),
        None => (rest, None),
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    if namespace.is_some_and(|ns| ns != base36(pid_namespace())) {
        return false;
    }
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Above any `pid_max` (2^22): never a live process.
    const NO_SUCH_PID: i32 = 4_194_305;

    #[test]
    fn only_our_namespace_s_dead_processes_are_judged_gone() {
        let judge = |name: &str| left_by_dead_process(std::ffi::OsStr::new(name), "agent-exec-");
        let dead = format!("agent-exec-{}", process_name(NO_SUCH_PID));
        let alive = format!("agent-exec-{}", process_name(std::process::id() as i32));
        // The same pid in another PID namespace may be a live agent-exec: left alone.
        let foreign = format!("agent-exec-{NO_SUCH_PID}-{}", base36(pid_namespace() + 1));
        let legacy = format!("agent-exec-{NO_SUCH_PID}");
        assert_eq!(
            [&dead, &alive, &foreign, &legacy, &"agent-exec-x".to_owned()].map(|n| judge(n)),
            [true, false, false, true, false]
        );
    }
}
