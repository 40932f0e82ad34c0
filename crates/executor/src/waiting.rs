//! Is a call waiting for input? One answer for one-shot PTY calls (a prompt nobody can answer
//! ends the call early) and background jobs (`job_output` says so).
//!
//! A call waits for input when one of its processes is blocked on its input — the call's
//! pseudo-terminal (by `/dev/tty` too), or the pipe a job's stdin reads — as
//! `/proc/<pid>/task/<tid>/syscall` shows: a `read`/`readv` of a descriptor that is that
//! input, or a `poll`/`ppoll`/`select`/`pselect6`/`epoll_wait` for it to become readable
//! **with no timeout** (a wait with a timeout wakes by itself: `top` refreshing, a "continuing
//! in 10 s" countdown). The descriptors a poll or select waits on are read from the process's
//! memory, an epoll's from `/proc/<pid>/fdinfo`. Whatever cannot be read (a process that is
//! not ours to inspect, one that just ended) counts as not waiting.
//!
//! Caveat: a blocking `read` with an alarm set (`read -t 10` in bash) looks like any other read.

use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::containment::CallGroup;

/// How long a one-shot PTY call's output must have been idle, with a process of it blocked
/// reading the terminal, before the call is ended as waiting for input. Default of
/// [`ExecSpec::prompt_idle`](crate::ExecSpec::prompt_idle).
pub const PROMPT_IDLE: Duration = Duration::from_secs(5);

/// How long a background job's output must have been idle, blocked on its input, before
/// [`JobOutput::waiting_for_input`](crate::jobs::JobOutput::waiting_for_input) says so.
pub const JOB_WAITING_IDLE: Duration = Duration::from_secs(1);

/// How soon the processes are looked at again while the output stays idle; the interval
/// doubles after each look that finds no wait, up to [`RECHECK_MAX`], so a quiet call costs
/// little (the process-group fallback scans `/proc`).
const RECHECK: Duration = Duration::from_millis(500);
/// The longest interval between two looks.
const RECHECK_MAX: Duration = Duration::from_secs(2);
/// Threads of one process looked at (a JVM has dozens; its reader is among the first).
const MAX_THREADS: usize = 64;
/// Descriptors of one poll or select looked at.
const MAX_FDS: u64 = 1024;

/// The `/dev/tty` device (major 5, minor 0): in the call's session, its own terminal.
const DEV_TTY: u64 = 0x500;

/// What a call's input is, as the kernel names files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputEnd {
    /// The call's pseudo-terminal: its slave's device number.
    Terminal { rdev: u64 },
    /// The pipe a job's stdin reads.
    Pipe { dev: u64, ino: u64 },
}

fn fstat(fd: &OwnedFd) -> Option<rustix::fs::Stat> {
    rustix::fs::fstat(fd).ok()
}

impl InputEnd {
    /// The terminal whose slave end is `slave`.
    pub(crate) fn terminal(slave: &OwnedFd) -> Option<InputEnd> {
        fstat(slave).map(|st| InputEnd::Terminal { rdev: st.st_rdev })
    }

    /// The pipe `end` belongs to (either end: they share the inode).
    pub(crate) fn pipe(end: &OwnedFd) -> Option<InputEnd> {
        fstat(end).map(|st| InputEnd::Pipe {
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }

    /// Whether descriptor `fd` of process `pid` is this input.
    fn is_fd(self, pid: i32, fd: u64) -> bool {
        let Ok(meta) = fs::metadata(format!("/proc/{pid}/fd/{fd}")) else {
            return false;
        };
        match self {
            InputEnd::Terminal { rdev } => {
                use std::os::unix::fs::FileTypeExt;
                meta.file_type().is_char_device() && (meta.rdev() == rdev || meta.rdev() == DEV_TTY)
            }
            InputEnd::Pipe { dev, ino } => meta.dev() == dev && meta.ino() == ino,
        }
    }
}

/// Whether a process of `group` is blocked on `input` (see the module docs). The one test,
/// for calls and jobs alike.
pub(crate) fn waiting_for_input(group: &CallGroup, input: InputEnd) -> bool {
    group
        .members(None)
        .into_iter()
        .any(|pid| process_waits(pid, input))
}

fn process_waits(pid: i32, input: InputEnd) -> bool {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks
        .filter_map(|t| t.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .take(MAX_THREADS)
        .any(|tid| thread_waits(pid, tid, input))
}

/// The system call a thread is blocked in, and its arguments: `/proc/<pid>/task/<tid>/syscall`
/// is `NR 0xARG0 … 0xARG5 0xSP 0xPC` then (`running`, or `-1 …` outside a system call otherwise).
fn blocked_syscall(pid: i32, tid: i32) -> Option<(i64, [u64; 6])> {
    let text = fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let nr: i64 = fields.next()?.parse().ok()?;
    let mut args = [0u64; 6];
    for a in &mut args {
        *a = u64::from_str_radix(fields.next()?.trim_start_matches("0x"), 16).ok()?;
    }
    Some((nr, args))
}

#[allow(non_upper_case_globals)] // libc's names of the system calls, as patterns
fn thread_waits(pid: i32, tid: i32, input: InputEnd) -> bool {
    let Some((nr, a)) = blocked_syscall(pid, tid) else {
        return false;
    };
    // An `int` timeout of -1 (or any negative) waits for ever.
    let forever = |t: u64| (t as u32 as i32) < 0;
    // The system calls that wait for input, by number (libc's table of them).
    use libc::{SYS_epoll_pwait, SYS_epoll_pwait2, SYS_ppoll, SYS_pselect6, SYS_read, SYS_readv};
    #[cfg(target_arch = "x86_64")]
    use libc::{SYS_epoll_wait, SYS_poll, SYS_select};
    match nr {
        SYS_read | SYS_readv => input.is_fd(pid, a[0]),
        SYS_ppoll => a[2] == 0 && polls(pid, a[0], a[1], input),
        SYS_pselect6 => a[4] == 0 && selects(pid, a[0], a[1], input),
        SYS_epoll_pwait => forever(a[3]) && epolls(pid, a[0], input),
        SYS_epoll_pwait2 => a[3] == 0 && epolls(pid, a[0], input),
        #[cfg(target_arch = "x86_64")]
        SYS_poll => forever(a[2]) && polls(pid, a[0], a[1], input),
        #[cfg(target_arch = "x86_64")]
        SYS_select => a[4] == 0 && selects(pid, a[0], a[1], input),
        #[cfg(target_arch = "x86_64")]
        SYS_epoll_wait => forever(a[3]) && epolls(pid, a[0], input),
        _ => false,
    }
}

/// `len` bytes of process `pid`'s memory at `addr`.
fn memory(pid: i32, addr: u64, len: u64) -> Option<Vec<u8>> {
    if addr == 0 {
        return None;
    }
    let file = fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0; usize::try_from(len).ok()?];
    file.read_exact_at(&mut buf, addr).ok()?;
    Some(buf)
}

/// A `poll` on `nfds` `struct pollfd`s at `addr` waits for `input` to be readable.
fn polls(pid: i32, addr: u64, nfds: u64, input: InputEnd) -> bool {
    const POLLIN: i16 = 0x1;
    let n = nfds.min(MAX_FDS);
    let Some(raw) = memory(pid, addr, n * 8) else {
        return false;
    };
    raw.chunks_exact(8).any(|p| {
        let fd = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
        let events = i16::from_ne_bytes([p[4], p[5]]);
        fd >= 0 && events & POLLIN != 0 && input.is_fd(pid, fd as u64)
    })
}

/// A `select` on descriptors below `nfds` with the read set at `addr` waits for `input`.
fn selects(pid: i32, nfds: u64, addr: u64, input: InputEnd) -> bool {
    let n = nfds.min(MAX_FDS);
    let Some(set) = memory(pid, addr, n.div_ceil(8)) else {
        return false;
    };
    (0..n).any(|fd| set[(fd / 8) as usize] & (1 << (fd % 8)) != 0 && input.is_fd(pid, fd))
}

/// An epoll `epfd` of process `pid` waits for `input` to be readable: its `fdinfo` lists
/// `tfd: N events: MASK …` per registered descriptor.
fn epolls(pid: i32, epfd: u64, input: InputEnd) -> bool {
    const EPOLLIN: u32 = 0x1;
    let Ok(info) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
        return false;
    };
    info.lines().any(|line| {
        let mut words = line.split_ascii_whitespace();
        if words.next() != Some("tfd:") {
            return false;
        }
        let fd = words.next().and_then(|w| w.parse::<u64>().ok());
        let events = match (words.next(), words.next()) {
            (Some("events:"), Some(mask)) => u32::from_str_radix(mask, 16).ok(),
            _ => None,
        };
        matches!((fd, events), (Some(fd), Some(e)) if e & EPOLLIN != 0 && input.is_fd(pid, fd))
    })
}

/// What the supervise loop does about a call waiting for input.
#[derive(Debug, Clone)]
pub(crate) enum OnWaiting {
    /// End the call ([`Stop::WaitingForInput`](crate::Stop::WaitingForInput)): a one-shot
    /// call, which nobody can answer.
    Stop,
    /// Say so in a flag (a job's), kept up to date while it runs.
    Flag(Arc<AtomicBool>),
}

/// A call's input, watched from the supervise loop.
#[derive(Debug)]
pub(crate) struct InputWatch {
    input: InputEnd,
    /// How long the output must have been idle before the processes are looked at.
    idle: Duration,
    on: OnWaiting,
    next_check: Option<Instant>,
    interval: Duration,
}

impl InputWatch {
    pub(crate) fn new(input: InputEnd, idle: Duration, on: OnWaiting) -> InputWatch {
        InputWatch {
            input,
            idle,
            on,
            next_check: None,
            interval: RECHECK,
        }
    }

    /// Looks at the call when its output (last seen at `last_output`) has been idle long
    /// enough. Returns whether the call is to be stopped, and when to look again.
    /// `prompt_pending`: nothing was printed yet, or the output so far ends inside a line, as a
    /// prompt leaves it (`[y/N] `, `Password:`). A program relaying a terminal (`ssh`, `docker
    /// run -it`) also waits on it for ever while the far side is quiet, but what it printed
    /// last ended its line (one that has printed nothing yet cannot be told from a bare
    /// `read`).
    pub(crate) fn tick(
        &mut self,
        group: &CallGroup,
        last_output: Instant,
        prompt_pending: bool,
        now: Instant,
    ) -> (bool, Instant) {
        // An idle long enough to overflow the clock is never reached.
        let quiet_from = last_output
            .checked_add(self.idle)
            .unwrap_or(now + RECHECK_MAX);
        if now < quiet_from || !prompt_pending {
            if let OnWaiting::Flag(flag) = &self.on {
                flag.store(false, Ordering::Relaxed);
            }
            self.interval = RECHECK;
            // Only new output can make a prompt pending, and new output wakes the loop.
            let wake = if prompt_pending {
                quiet_from
            } else {
                now + RECHECK_MAX
            };
            return (false, wake);
        }
        if let Some(at) = self.next_check.filter(|&at| at > now) {
            return (false, at);
        }
        let waiting = waiting_for_input(group, self.input);
        let again = now + self.interval;
        self.next_check = Some(again);
        self.interval = if waiting {
            RECHECK
        } else {
            (self.interval * 2).min(RECHECK_MAX)
        };
        match &self.on {
            OnWaiting::Stop => (waiting, again),
            OnWaiting::Flag(flag) => {
                flag.store(waiting, Ordering::Relaxed);
                (false, again)
            }
        }
    }
}
