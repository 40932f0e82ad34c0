//! Is a call waiting for input? One answer for one-shot calls (a wait nobody can answer ends
//! the call early), calls that may yield and background jobs (`job_output` says so).
//!
//! Two kinds of wait, both read from what the kernel says a process is blocked on — never from
//! program names:
//! - **For its input** ([`WaitedOn::Input`]): a process blocked on the call's own input — its
//!   pseudo-terminal (by `/dev/tty` too), or the pipe a job's stdin reads. Input can answer it
//!   (`job_input`).
//! - **For a terminal it does not have** ([`WaitedOn::Terminal`]): in a call without a
//!   terminal (stdin `/dev/null`, output on a pipe), a process blocked reading a terminal
//!   device, or reading its own output pipe (`vim` takes its keys from fd 2 when stdin is not a
//!   terminal, and fd 2 is that pipe's write end). Nothing can ever answer it.
//!
//! Blocked means what `/proc/<pid>/task/<tid>/syscall` shows: a `read`/`readv` of such a
//! descriptor, or a `poll`/`ppoll`/`select`/`pselect6`/`epoll_wait` for it to become readable.
//! A wait for input counts only **with no timeout** (a wait with a timeout wakes by itself:
//! `top` refreshing, a "continuing in 10 s" countdown); a wait for a terminal counts with a
//! timeout too (`vim` wakes every few seconds to save its swap file, and waits again), since
//! the output must have been idle first and no key can ever come. The descriptors a poll or
//! select waits on are read from the process's memory, an epoll's from `/proc/<pid>/fdinfo`.
//! Whatever cannot be read (a process that is not ours to inspect, one that just ended) counts
//! as not waiting.
//!
//! Caveat: a blocking `read` with an alarm set (`read -t 10` in bash) looks like any other read.

use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::Arc;
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

/// What a process of a call was found waiting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitedOn {
    /// The call's own input (its terminal, or a job's stdin pipe): input can answer it.
    Input,
    /// A terminal the call does not have: nothing can answer it.
    Terminal,
}

/// A process of a call blocked waiting for input (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Wait {
    /// The process.
    pub pid: i32,
    /// Its name, as the kernel keeps it (`/proc/<pid>/comm`: at most 15 bytes).
    pub program: String,
    /// Its parent's name, when the parent is of the same call (`git` for the `vim` it opened).
    pub parent: Option<String>,
    /// What it waits on.
    pub on: WaitedOn,
    /// The descriptor it waits on.
    pub fd: u64,
}

/// What a call is watched for: its input, and — without a terminal — the terminal it lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Watched {
    /// Its input, when it has one to answer with.
    pub(crate) input: Option<InputEnd>,
    /// The call has no terminal and these are its output pipes (one shared, or stdout's and
    /// stderr's): a read of one, or of any terminal device, waits for keys that cannot come.
    pub(crate) no_terminal: Option<[Option<InputEnd>; 2]>,
}

impl Watched {
    /// A call on pipes: its input (a job's stdin pipe, if any) and its output pipes.
    pub(crate) fn pipes(
        input: Option<&OwnedFd>,
        stdout: Option<&OwnedFd>,
        stderr: Option<&OwnedFd>,
    ) -> Watched {
        Watched {
            input: input.and_then(InputEnd::pipe),
            no_terminal: Some([
                stdout.and_then(InputEnd::pipe),
                stderr.and_then(InputEnd::pipe),
            ]),
        }
    }

    /// A call under the pseudo-terminal whose slave end is `slave`.
    pub(crate) fn terminal(slave: &OwnedFd) -> Watched {
        Watched {
            input: InputEnd::terminal(slave),
            no_terminal: None,
        }
    }
}

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

    /// Whether a file (a descriptor's, as `/proc/<pid>/fd/<n>` shows it) is this input.
    fn matches(self, meta: &fs::Metadata) -> bool {
        match self {
            InputEnd::Terminal { rdev } => {
                use std::os::unix::fs::FileTypeExt;
                meta.file_type().is_char_device() && (meta.rdev() == rdev || meta.rdev() == DEV_TTY)
            }
            InputEnd::Pipe { dev, ino } => meta.dev() == dev && meta.ino() == ino,
        }
    }
}

/// Terminal devices a process reads keys from: the virtual consoles (4:0–63), `/dev/tty` and
/// `/dev/console` (5:0, 5:1), the pseudo-terminal slaves (136–143). Not a pseudo-terminal's
/// master (`/dev/ptmx`, 5:2): its reader is the program relaying a terminal it made (`script`,
/// `expect`, `unbuffer`), waiting for its child's output; nor a serial line (4:64 and up), whose
/// reader waits for a device's data.
fn is_terminal_device(rdev: u64) -> bool {
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    matches!((major, minor), (4, 0..=63) | (5, 0 | 1) | (136..=143, _))
}

/// The process of `group` blocked on what `watched` names (see the module docs), if one is.
/// Waits for input count only when `input_too` (a prompt is pending). The one test, for calls
/// and jobs alike.
pub(crate) fn find_wait(group: &CallGroup, watched: Watched, input_too: bool) -> Option<Wait> {
    let members = group.members(None);
    members.iter().find_map(|&pid| {
        let on = process_waits(pid, watched, input_too)?;
        let program = comm(pid).unwrap_or_else(|| format!("process {pid}"));
        let parent = parent_of(pid)
            .filter(|p| members.contains(p))
            .and_then(comm);
        Some(Wait {
            pid,
            program,
            parent,
            on: on.0,
            fd: on.1,
        })
    })
}

/// The kernel's name of process `pid`.
fn comm(pid: i32) -> Option<String> {
    let name = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(name.trim_end_matches('\n').to_owned())
}

/// The parent of process `pid` (`/proc/<pid>/stat`'s fourth field, after the name in parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_ascii_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn process_waits(pid: i32, watched: Watched, input_too: bool) -> Option<(WaitedOn, u64)> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks
        .filter_map(|t| t.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .take(MAX_THREADS)
        .find_map(|tid| thread_waits(pid, tid, watched, input_too))
}

/// What descriptor `fd` of process `pid` is to the watch, if anything.
fn classify(pid: i32, fd: u64, watched: Watched, input_too: bool) -> Option<WaitedOn> {
    let meta = fs::metadata(format!("/proc/{pid}/fd/{fd}")).ok()?;
    if input_too && watched.input.is_some_and(|i| i.matches(&meta)) {
        return Some(WaitedOn::Input);
    }
    let outputs = watched.no_terminal?;
    use std::os::unix::fs::FileTypeExt;
    let terminal = meta.file_type().is_char_device() && is_terminal_device(meta.rdev());
    // Its own output read as its stdin: keys it looks for where a terminal would be (`vim`
    // dups fd 2 onto fd 0). Another descriptor of the pipe is watched for the reader leaving
    // (`tail -f` selects on its stdout for that), not for keys.
    let own_output = fd == 0 && outputs.iter().flatten().any(|o| o.matches(&meta));
    (terminal || own_output).then_some(WaitedOn::Terminal)
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
fn thread_waits(pid: i32, tid: i32, watched: Watched, input_too: bool) -> Option<(WaitedOn, u64)> {
    let (nr, a) = blocked_syscall(pid, tid)?;
    // An `int` timeout of -1 (or any negative) waits for ever.
    let forever = |t: u64| (t as u32 as i32) < 0;
    // What a descriptor is to the watch; a wait with a timeout counts only for a terminal.
    let on = |fd: u64, untimed: bool| {
        classify(pid, fd, watched, input_too)
            .filter(|&on| untimed || on == WaitedOn::Terminal)
            .map(|on| (on, fd))
    };
    // The system calls that wait for input, by number (libc's table of them).
    use libc::{SYS_epoll_pwait, SYS_epoll_pwait2, SYS_ppoll, SYS_pselect6, SYS_read, SYS_readv};
    #[cfg(target_arch = "x86_64")]
    use libc::{SYS_epoll_wait, SYS_poll, SYS_select};
    match nr {
        SYS_read | SYS_readv => on(a[0], true),
        SYS_ppoll => polls(pid, a[0], a[1], |fd| on(fd, a[2] == 0)),
        SYS_pselect6 => selects(pid, a[0], a[1], |fd| on(fd, a[4] == 0)),
        SYS_epoll_pwait => epolls(pid, a[0], |fd| on(fd, forever(a[3]))),
        SYS_epoll_pwait2 => epolls(pid, a[0], |fd| on(fd, a[3] == 0)),
        #[cfg(target_arch = "x86_64")]
        SYS_poll => polls(pid, a[0], a[1], |fd| on(fd, forever(a[2]))),
        #[cfg(target_arch = "x86_64")]
        SYS_select => selects(pid, a[0], a[1], |fd| on(fd, a[4] == 0)),
        #[cfg(target_arch = "x86_64")]
        SYS_epoll_wait => epolls(pid, a[0], |fd| on(fd, forever(a[3]))),
        _ => None,
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

/// What a descriptor is to the watch (`None`: nothing).
type Found = Option<(WaitedOn, u64)>;

/// A `poll` on `nfds` `struct pollfd`s at `addr`, for a descriptor `on` knows to be readable.
fn polls(pid: i32, addr: u64, nfds: u64, on: impl Fn(u64) -> Found) -> Found {
    const POLLIN: i16 = 0x1;
    let n = nfds.min(MAX_FDS);
    let raw = memory(pid, addr, n * 8)?;
    raw.chunks_exact(8).find_map(|p| {
        let fd = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
        let events = i16::from_ne_bytes([p[4], p[5]]);
        (fd >= 0 && events & POLLIN != 0)
            .then(|| on(fd as u64))
            .flatten()
    })
}

/// A `select` on descriptors below `nfds` with the read set at `addr`, for one `on` knows.
fn selects(pid: i32, nfds: u64, addr: u64, on: impl Fn(u64) -> Found) -> Found {
    let n = nfds.min(MAX_FDS);
    let set = memory(pid, addr, n.div_ceil(8))?;
    (0..n)
        .filter(|fd| set[(fd / 8) as usize] & (1 << (fd % 8)) != 0)
        .find_map(on)
}

/// An epoll `epfd` of process `pid` waiting for a descriptor `on` knows to be readable: its
/// `fdinfo` lists `tfd: N events: MASK …` per registered descriptor.
fn epolls(pid: i32, epfd: u64, on: impl Fn(u64) -> Found) -> Found {
    const EPOLLIN: u32 = 0x1;
    let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")).ok()?;
    info.lines().find_map(|line| {
        let mut words = line.split_ascii_whitespace();
        if words.next() != Some("tfd:") {
            return None;
        }
        let fd = words.next().and_then(|w| w.parse::<u64>().ok());
        let events = match (words.next(), words.next()) {
            (Some("events:"), Some(mask)) => u32::from_str_radix(mask, 16).ok(),
            _ => None,
        };
        match (fd, events) {
            (Some(fd), Some(e)) if e & EPOLLIN != 0 => on(fd),
            _ => None,
        }
    })
}

/// Where the supervise loop keeps the wait it found, for whoever reads it while the call runs
/// (a job's `job_output`, the caller of a call that may yield): `None` once output comes or
/// input is sent.
#[derive(Debug, Default)]
pub struct WaitSlot(std::sync::Mutex<Option<Wait>>);

impl WaitSlot {
    /// The wait found at the last look, if any.
    pub fn get(&self) -> Option<Wait> {
        self.lock().clone()
    }

    /// Forgets the wait (input was sent: whatever it waited for may have come).
    pub fn clear(&self) {
        *self.lock() = None;
    }

    fn set(&self, wait: Option<Wait>) {
        *self.lock() = wait;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Wait>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What the supervise loop does about a call waiting for input.
#[derive(Debug, Clone)]
pub enum OnWaiting {
    /// End the call ([`Stop::WaitingForInput`](crate::Stop::WaitingForInput)): nobody can
    /// answer it.
    Stop,
    /// Say so in a slot (a job's, or a call's that may yield), kept up to date while it runs.
    Report(Arc<WaitSlot>),
}

impl OnWaiting {
    /// How long the output must have been idle before the processes are looked at: `stop_idle`
    /// (a one-shot call's `prompt_idle`) when the wait ends the call, else
    /// [`JOB_WAITING_IDLE`].
    pub(crate) fn idle(&self, stop_idle: Option<Duration>) -> Option<Duration> {
        match self {
            OnWaiting::Stop => stop_idle,
            OnWaiting::Report(_) => Some(JOB_WAITING_IDLE),
        }
    }
}

/// A call's input, watched from the supervise loop.
#[derive(Debug)]
pub(crate) struct InputWatch {
    watched: Watched,
    /// How long the output must have been idle before the processes are looked at.
    idle: Duration,
    on: OnWaiting,
    next_check: Option<Instant>,
    interval: Duration,
    /// The wait that stopped the call ([`OnWaiting::Stop`]).
    pub(crate) found: Option<Wait>,
}

impl InputWatch {
    /// A watch of `watched`, or none when there is nothing to watch or `idle` is `None` (off).
    pub(crate) fn new(
        watched: Watched,
        idle: Option<Duration>,
        on: OnWaiting,
    ) -> Option<InputWatch> {
        if watched.input.is_none() && watched.no_terminal.is_none() {
            return None;
        }
        Some(InputWatch {
            watched,
            idle: idle?,
            on,
            next_check: None,
            interval: RECHECK,
            found: None,
        })
    }

    /// Looks at the call when its output (last seen at `last_output`) has been idle long
    /// enough. Returns whether the call is to be stopped, and when to look again.
    /// `prompt_pending`: nothing was printed yet, or the output so far ends inside a line, as a
    /// prompt leaves it (`[y/N] `, `Password:`). A program relaying a terminal (`ssh`, `docker
    /// run -it`) also waits on it for ever while the far side is quiet, but what it printed
    /// last ended its line (one that has printed nothing yet cannot be told from a bare
    /// `read`): a wait for input counts only with a prompt pending. A wait for a terminal the
    /// call does not have counts whatever was printed last.
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
        let looks_for = prompt_pending || self.watched.no_terminal.is_some();
        if now < quiet_from || !looks_for {
            if let OnWaiting::Report(slot) = &self.on {
                slot.set(None);
            }
            self.interval = RECHECK;
            // Only new output can make a prompt pending, and new output wakes the loop.
            let wake = if looks_for {
                quiet_from
            } else {
                now + RECHECK_MAX
            };
            return (false, wake);
        }
        if let Some(at) = self.next_check.filter(|&at| at > now) {
            return (false, at);
        }
        let wait = find_wait(group, self.watched, prompt_pending);
        let again = now + self.interval;
        self.next_check = Some(again);
        self.interval = if wait.is_some() {
            RECHECK
        } else {
            (self.interval * 2).min(RECHECK_MAX)
        };
        match &self.on {
            OnWaiting::Stop => {
                let stop = wait.is_some();
                self.found = wait;
                (stop, again)
            }
            OnWaiting::Report(slot) => {
                slot.set(wait);
                (false, again)
            }
        }
    }
}
