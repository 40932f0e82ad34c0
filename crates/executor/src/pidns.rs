//! Containment without a cgroup: the call in a PID namespace of its own, through an
//! unprivileged user namespace (or the sandbox's). Where no cgroup can be made — any non-root
//! user on a machine without a delegated cgroup subtree — a process group and a marker
//! variable cannot hold a process that calls `setsid` and scrubs its environment (`setsid env
//! -i sleep 60 &`). A PID namespace can: every process started in it stays in it, and when its
//! first process (its init) is killed the kernel kills all the others.
//!
//! ```text
//!  supervisor ──clone(VM|VFORK)──▶ helper: enter a user namespace (a new one mapping only our
//!      ▲                           ids, or the sandbox's), unshare(NEWPID),
//!      │ (child of the supervisor,  clone(VM|PARENT) the init, wait for its word, exit
//!      │  CLONE_PARENT)            ▼
//!      └────────────────────────  init (pid 1 inside): vfork-clone the command (process.rs's
//!                                 child, as every spawn), say so, close every descriptor but
//!                                 the status pipe, then reap until the namespace is empty —
//!                                 writing the command's wait status to the pipe when it ends.
//! ```
//!
//! The init shares our memory (no page tables copied, as for every spawn here) but runs after
//! the supervisor resumes: from then on it only makes raw system calls on its own stack and
//! prepared data — no libc wrapper, which would write `errno` into the thread-local block of the
//! supervisor thread whose registers it inherited. The supervisor reads the command's status
//! from the pipe ([`Init::try_status`]), finds the command's processes by their namespace
//! ([`Init::members`]) and ends them all by killing the init ([`Init::end`]).

use std::ffi::{CString, c_int, c_void};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use rustix::io::Errno;
use rustix::process::Signal;
use rustix::thread::{UnshareFlags, unshare_unsafe};

use crate::status::ExitStatus;

/// The init of a call's PID namespace, as the supervisor holds it.
#[derive(Debug)]
pub(crate) struct Init {
    /// Its pid (here; 1 inside).
    pid: i32,
    /// The PID namespace (device, inode of `/proc/<init>/ns/pid`).
    namespace: (u64, u64),
    /// The command's wait status arrives here (4 bytes), once.
    status: OwnedFd,
    /// Its stack, in our memory, while it runs.
    stack: Option<crate::stack::Stack>,
    reaped: bool,
}

/// What the helper and the init read and write, in our memory.
pub(crate) struct Launch<'a> {
    /// The sandbox's user namespace to enter; else a new one is made with `id_maps`.
    pub(crate) user: Option<BorrowedFd<'a>>,
    /// `(path, content)`: setgroups, uid_map, gid_map of the new user namespace.
    id_maps: Vec<(CString, Vec<u8>)>,
    init_top: *mut u8,
    /// The command's clone: its entry, stack top and argument (process.rs's `child`).
    pub(crate) child: extern "C" fn(*mut c_void) -> c_int,
    pub(crate) child_top: *mut u8,
    pub(crate) child_arg: *mut c_void,
    /// The init's word to the helper: written once the command is started (or failed).
    ready: (BorrowedFd<'a>, RawFd),
    /// Our word to the init once we know the command's pid here: until then it reaps nothing,
    /// so the command is still among its children even if it has already exited.
    go: RawFd,
    /// One past the highest descriptor the init may have inherited.
    fd_limit: u32,
    /// The status pipe's write end (the init's) and read end (ours).
    status_write: RawFd,
    /// The step that failed (`FAILED_*`) and its errno, or the command's pid inside.
    failed: AtomicI32,
    errno: AtomicI32,
    init_pid: AtomicI32,
    command_pid: AtomicI32,
}

const FAILED_USER: i32 = 1;
const FAILED_IDS: i32 = 2;
const FAILED_PID: i32 = 3;
const FAILED_INIT: i32 = 4;

/// Set when making a PID namespace failed after the probe said it would work.
static UNAVAILABLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether calls can be contained this way here: probed once, by a throwaway child making a
/// user namespace and a PID namespace (sysctls do not tell everything: a container's seccomp
/// profile refuses `unshare` whatever they say).
pub(crate) fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !UNAVAILABLE.load(Ordering::Relaxed) && *AVAILABLE.get_or_init(probe)
}

/// Whether `e` (from [`spawn`]) says the kernel refuses these namespaces here, rather than
/// a passing shortage.
pub(crate) fn refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(e) if matches!(
            Errno::from_raw_os_error(e),
            Errno::PERM | Errno::ACCESS | Errno::INVAL | Errno::NOSYS
        )
    )
}

/// Making a PID namespace failed: from now on calls use the process group.
pub(crate) fn mark_unavailable() {
    UNAVAILABLE.store(true, Ordering::Relaxed);
}

fn probe() -> bool {
    crate::pids::child_succeeds(|| {
        // SAFETY: in a throwaway forked child, which exits at once (without the parent's exit
        // handlers): no one else's namespaces change.
        unsafe {
            let made = unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWPID).is_ok();
            libc::_exit(i32::from(!made))
        }
    })
}

/// Starts the command in a PID namespace of its own: `child(child_arg)` on `child_top`, as a
/// vfork child of the namespace's init. Called with every signal blocked, under the spawn
/// lock. Returns the init and the command's pid here (`None` when the command failed before
/// its exec: its own record says why).
pub(crate) fn spawn(
    user: Option<BorrowedFd<'_>>,
    fd_limit: u32,
    child: extern "C" fn(*mut c_void) -> c_int,
    child_top: *mut u8,
    child_arg: *mut c_void,
) -> io::Result<(Init, Option<i32>)> {
    let (ready_r, ready_w) = crate::sys::pipe()?;
    let (status_r, status_w) = crate::sys::pipe()?;
    let (go_r, go_w) = crate::sys::pipe()?;
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    let c = |s: &str| CString::new(s).expect("no NUL");
    // The stacks of the helper and the init (only system calls and a loop run on them).
    let init_stack = crate::stack::Stack::new()?;
    let helper_stack = crate::stack::Stack::new()?;
    let mut launch = Launch {
        user,
        id_maps: vec![
            (c("/proc/self/setgroups"), b"deny".to_vec()),
            (c("/proc/self/uid_map"), format!("{uid} {uid} 1\n").into()),
            (c("/proc/self/gid_map"), format!("{gid} {gid} 1\n").into()),
        ],
        init_top: init_stack.top(),
        child,
        child_top,
        child_arg,
        ready: (ready_r.as_fd(), ready_w.as_raw_fd()),
        go: go_r.as_raw_fd(),
        fd_limit,
        status_write: status_w.as_raw_fd(),
        failed: AtomicI32::new(0),
        errno: AtomicI32::new(0),
        init_pid: AtomicI32::new(0),
        command_pid: AtomicI32::new(0),
    };
    // SAFETY: the helper shares our memory and we are suspended until it exits (CLONE_VFORK);
    // it only makes system calls on `launch`, which outlives it.
    let helper = unsafe {
        libc::clone(
            helper_main,
            helper_stack.top().cast(),
            crate::stack::VFORK | libc::SIGCHLD,
            (&raw mut launch).cast(),
        )
    };
    if helper < 0 {
        return Err(io::Error::last_os_error());
    }
    // Our own child, which has exited (vfork).
    let _ = waitpid(nix::unistd::Pid::from_raw(helper), None);
    drop(helper_stack);
    let init_pid = launch.init_pid.load(Ordering::SeqCst);
    let failed = launch.failed.load(Ordering::SeqCst);
    if init_pid > 0 {
        crate::pids::supervise_pid(init_pid);
    }
    let init = (init_pid > 0).then(|| Init {
        pid: init_pid,
        namespace: namespace_of(init_pid).unwrap_or((0, 0)),
        status: status_r,
        stack: Some(init_stack),
        reaped: false,
    });
    if failed != 0 {
        drop(init); // kills and reaps it
        // The errno as it is ([`refused`] reads it); the step's name goes to the caller's
        // message ("a PID namespace of its own").
        return Err(io::Error::from_raw_os_error(
            launch.errno.load(Ordering::SeqCst).max(1),
        ));
    }
    let init = init.ok_or_else(|| io::Error::other("the PID namespace's init did not start"))?;
    // The command is the init's first child (still there: the init reaps nothing before our
    // word); its pid here is read from the init's children.
    let inside = launch.command_pid.load(Ordering::SeqCst);
    let command = children(init_pid)
        .into_iter()
        .find(|&pid| pid_inside(pid) == Some(inside));
    crate::sys::write_all(&go_w, b"g")?;
    Ok((init, command))
}

/// The helper: enters a user namespace, makes the PID namespace and clones its init. Runs
/// while the supervisor is suspended (vfork). Returning ends it (glibc's `clone` exits with
/// the value).
extern "C" fn helper_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the supervisor's `Launch`, alive while it is suspended.
    let launch = unsafe { &*arg.cast::<Launch<'_>>() };
    if let Err((step, errno)) = helper(launch, arg) {
        launch.errno.store(errno.raw_os_error(), Ordering::SeqCst);
        launch.failed.store(step, Ordering::SeqCst);
    }
    0
}

/// [`helper_main`]'s steps; on failure, the step (`FAILED_*`) and why.
fn helper(launch: &Launch<'_>, arg: *mut c_void) -> Result<(), (i32, Errno)> {
    use rustix::fs::{Mode, OFlags};
    use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};
    let at = |step: i32| move |e: Errno| (step, e);
    match launch.user {
        Some(fd) => {
            move_into_link_name_space(fd, Some(LinkNameSpaceType::User))
                .map_err(at(FAILED_USER))?;
        }
        None => {
            // SAFETY: the helper's own user namespace (it shares no descriptor table: no
            // CLONE_FILES); the supervisor's stays as it was.
            unsafe { unshare_unsafe(UnshareFlags::NEWUSER) }.map_err(at(FAILED_USER))?;
            for (path, content) in &launch.id_maps {
                let flags = OFlags::WRONLY | OFlags::CLOEXEC;
                let fd = rustix::fs::open(path.as_c_str(), flags, Mode::empty())
                    .map_err(at(FAILED_IDS))?;
                rustix::io::write(&fd, content).map_err(at(FAILED_IDS))?;
            }
        }
    }
    // SAFETY: as above: only the helper's children are born in the new PID namespace.
    unsafe { unshare_unsafe(UnshareFlags::NEWPID) }.map_err(at(FAILED_PID))?;
    // The init is the supervisor's child (CLONE_PARENT), so the supervisor reaps it.
    // SAFETY: the init runs `init_main` on its own stack (alive while the `Init` that holds it
    // lives), reading `launch` only until it says "ready".
    let init = unsafe {
        libc::clone(
            init_main,
            launch.init_top.cast(),
            libc::CLONE_VM | libc::CLONE_PARENT | libc::SIGCHLD,
            arg,
        )
    };
    if init < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        return Err((FAILED_INIT, Errno::from_raw_os_error(errno)));
    }
    launch.init_pid.store(init, Ordering::SeqCst);
    while rustix::io::read(launch.ready.0, &mut [0u8; 1]) == Err(Errno::INTR) {}
    Ok(())
}

/// The init (pid 1 of the namespace). Until it says "ready" the supervisor is suspended; after,
/// raw system calls only (see the module doc).
extern "C" fn init_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the supervisor's `Launch`; the fields read after "ready" are copied first.
    let launch = unsafe { &*arg.cast::<Launch<'_>>() };
    let (ready_w, status_w, go) = (launch.ready.1, launch.status_write, launch.go);
    let fd_limit = launch.fd_limit;
    // SAFETY: the command's clone, as process.rs makes every spawn (we are suspended until it
    // execs or exits).
    let command = unsafe {
        libc::clone(
            launch.child,
            launch.child_top.cast(),
            crate::stack::VFORK | libc::SIGCHLD,
            launch.child_arg,
        )
    };
    if command < 0 {
        // errno, read while the supervisor is still suspended.
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        launch.errno.store(errno, Ordering::SeqCst);
        launch.failed.store(FAILED_INIT, Ordering::SeqCst);
    } else {
        launch.command_pid.store(command, Ordering::SeqCst);
    }
    let byte = 0u8;
    raw::write(ready_w, (&raw const byte).cast(), 1);
    // From here the supervisor runs again: nothing of `launch` is read any more.
    if command < 0 {
        raw::exit(0);
    }
    // Hold nothing of the supervisor's (another call's pipe kept open here would never close).
    let (low, high) = (status_w.min(go) as u32, status_w.max(go) as u32);
    for (first, last) in [(0, low), (low + 1, high), (high + 1, u32::MAX)] {
        // Before Linux 5.9 (or where a filter refuses it): one by one, up to the limit.
        if first < last && raw::close_range(first, last - 1) < 0 {
            for fd in first..last.min(fd_limit) {
                raw::close(fd);
            }
        }
    }
    let mut byte = 0u8;
    raw::read(go, (&raw mut byte).cast(), 1);
    raw::close_range(go as u32, go as u32);
    let mut status: c_int = 0;
    loop {
        let reaped = raw::wait4(-1, &raw mut status);
        if reaped == i64::from(command) {
            raw::write(status_w, (&raw const status).cast(), 4);
        } else if reaped < 0 && reaped != -i64::from(Errno::INTR.raw_os_error()) {
            // No child left: the namespace is empty.
            raw::exit(0);
        }
    }
}

/// System calls made straight, without libc's wrappers (which write `errno` into the
/// thread-local block the init inherited from a running supervisor thread).
mod raw {
    use std::ffi::c_void;

    // The numbers of the few system calls the init makes.
    use libc::{SYS_close, SYS_close_range, SYS_exit_group, SYS_read, SYS_wait4, SYS_write};

    #[cfg(target_arch = "x86_64")]
    fn call4(nr: i64, a: u64, b: u64, c: u64, d: u64) -> i64 {
        let ret: i64;
        // SAFETY: the Linux x86-64 system call convention; rcx and r11 are clobbered.
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") nr => ret,
                in("rdi") a, in("rsi") b, in("rdx") c, in("r10") d,
                lateout("rcx") _, lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    #[cfg(target_arch = "aarch64")]
    fn call4(nr: i64, a: u64, b: u64, c: u64, d: u64) -> i64 {
        let ret: i64;
        // SAFETY: the Linux AArch64 system call convention.
        unsafe {
            std::arch::asm!(
                "svc 0",
                in("x8") nr,
                inlateout("x0") a => ret,
                in("x1") b, in("x2") c, in("x3") d,
                options(nostack),
            );
        }
        ret
    }

    pub(super) fn write(fd: i32, buf: *const c_void, len: usize) -> i64 {
        call4(SYS_write, fd as u64, buf as u64, len as u64, 0)
    }

    pub(super) fn read(fd: i32, buf: *mut c_void, len: usize) -> i64 {
        call4(SYS_read, fd as u64, buf as u64, len as u64, 0)
    }

    pub(super) fn close(fd: u32) -> i64 {
        call4(SYS_close, u64::from(fd), 0, 0, 0)
    }

    pub(super) fn close_range(first: u32, last: u32) -> i64 {
        call4(SYS_close_range, u64::from(first), u64::from(last), 0, 0)
    }

    pub(super) fn wait4(pid: i32, status: *mut i32) -> i64 {
        call4(SYS_wait4, i64::from(pid) as u64, status as u64, 0, 0)
    }

    pub(super) fn exit(code: i32) -> ! {
        call4(SYS_exit_group, code as u64, 0, 0, 0);
        unreachable!("exit_group returned")
    }
}

/// `(device, inode)` of `pid`'s PID namespace.
fn namespace_of(pid: i32) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(format!("/proc/{pid}/ns/pid")).ok()?;
    Some((meta.dev(), meta.ino()))
}

/// The children of `pid` (its main thread's), by their pids here.
fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// `pid`'s pid in its innermost namespace (the last of `NSpid`).
fn pid_inside(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
    line.split_whitespace().last()?.parse().ok()
}

impl Init {
    /// A descriptor that becomes readable when the command has ended (its status written, or
    /// the init gone): what a supervise loop polls instead of the command's pidfd — the
    /// command is the init's child, reaped there, so its pid may be another process's by then.
    pub(crate) fn exit_watch(&self) -> Option<OwnedFd> {
        self.status.try_clone().ok()
    }

    /// The command's exit status, once the init has written it.
    pub(crate) fn try_status(&self, block: bool) -> io::Result<Option<ExitStatus>> {
        if !block
            && !crate::sys::poll_readable(
                &[Some(self.status.as_raw_fd())],
                Some(std::time::Duration::ZERO),
            )[0]
        {
            return Ok(None);
        }
        let mut raw = [0u8; 4];
        match rustix::io::read(&self.status, &mut raw) {
            Ok(4) => Ok(ExitStatus::from_wait(i32::from_ne_bytes(raw))),
            Err(rustix::io::Errno::INTR) => Ok(None),
            Err(e) => Err(e.into()),
            // The init ended without a word (killed with its namespace): the command was too.
            Ok(_) => Ok(Some(ExitStatus::Signaled(Signal::KILL.as_raw()))),
        }
    }

    /// The namespace, as a call's containment group holds it.
    pub(crate) fn namespace(&self) -> Namespace {
        Namespace {
            init: self.pid,
            id: self.namespace,
            pidfd: crate::sys::pidfd_open(self.pid),
        }
    }
}

/// A call's PID namespace, as its containment group holds it: to find its processes and end
/// them all. Signals go through a pidfd, so a reaped init's pid reused by another process is
/// never hit.
#[derive(Debug)]
pub(crate) struct Namespace {
    init: i32,
    id: (u64, u64),
    pidfd: Option<OwnedFd>,
}

impl Namespace {
    /// Its init's pid here.
    pub(crate) fn init(&self) -> i32 {
        self.init
    }

    /// Every live process of the namespace but its init, by pid here: exact, whatever they
    /// did to their process group, session or environment.
    pub(crate) fn members(&self) -> Vec<i32> {
        crate::sys::all_pids()
            .into_iter()
            .filter(|&pid| pid != self.init && namespace_of(pid) == Some(self.id))
            .filter(|&pid| !crate::sys::proc_stat(pid).is_some_and(|s| s.zombie))
            .collect()
    }

    /// The CPU time of everything the namespace ran, ended processes included: each live
    /// process's own and its waited-for children's, and the init's waited-for children's (it
    /// waits for every orphan) — every ended process is counted once, by whoever reaped it.
    pub(crate) fn cpu_time(&self) -> std::time::Duration {
        let stat = |pid| crate::sys::proc_stat(pid);
        let init = stat(self.init).map_or(0, |s| s.cpu_ticks + s.children_cpu_ticks);
        let members: u64 = self
            .members()
            .into_iter()
            .filter_map(stat)
            .map(|s| s.cpu_ticks + s.children_cpu_ticks)
            .sum();
        let per_second = rustix::param::clock_ticks_per_second().max(1);
        std::time::Duration::from_nanos((init + members) * 1_000_000_000 / per_second)
    }

    /// Kills the init, and with it every process of the namespace (the kernel's doing).
    pub(crate) fn kill_all(&self) {
        if let Some(pidfd) = &self.pidfd {
            let _ = rustix::process::pidfd_send_signal(pidfd, Signal::KILL);
        }
    }
}

impl Drop for Init {
    fn drop(&mut self) {
        // Before it is reaped, while its pid is still ours: the watchdog must never kill a
        // recycled pid.
        crate::containment::lifeline::unregister_process(self.pid);
        let pid = nix::unistd::Pid::from_raw(self.pid);
        if !self.reaped {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        // The kernel ends the namespace's processes before the init can be reaped; one stuck
        // in uninterruptible sleep (a dead network file system) would hold it: bounded, and
        // past the bound the orphan sweep reaps it later (its stack is never freed: a killed
        // init never runs again, but its memory must stay ours until it is gone).
        let flags = WaitPidFlag::__WALL | WaitPidFlag::WNOHANG;
        for _ in 0..2000 {
            if !matches!(waitpid(pid, Some(flags)), Ok(WaitStatus::StillAlive)) {
                self.reaped = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        if !self.reaped {
            std::mem::forget(self.stack.take());
        }
        crate::pids::release_pid(self.pid);
    }
}
