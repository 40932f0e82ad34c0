//! Starting a process the way `posix_spawn` does — `clone(CLONE_VM | CLONE_VFORK)`, the child
//! sharing our memory until it execs — but with the steps `posix_spawn` cannot do here: join
//! a cgroup, lead a new session with a controlling terminal, place extra descriptors.
//!
//! Why not std's `Command`: any `pre_exec` hook (the only way to join a cgroup before exec)
//! makes std `fork`, which copies the page tables of the whole supervisor: ~100 µs more per
//! call here, 30 % of a one-shot `true` (`cargo xtask bench`, `containment_true`); glibc 2.36
//! has no `posix_spawnattr_setcgroup_np`.
//!
//! Why `clone3(CLONE_INTO_CGROUP)` (cgroup v2, x86_64): moving a process into a cgroup by
//! writing `cgroup.procs` takes the kernel's threadgroup lock for writing, which waits for an
//! RCU grace period when none was taken recently — measured here: 27 µs back to back, but
//! 4.5–5.8 ms for a call after 200 ms of quiet, which is how agents call. A child created
//! inside the cgroup never migrates (60–280 µs for a whole fork, less with `CLONE_VM`). The
//! shared-stack clone3 needs a few lines of assembly (the child starts on its own stack);
//! elsewhere, and for the v1 freezer, the child joins by writing `0` to `cgroup.procs`.
//!
//! The child runs on its own stack in our address space while we are suspended: it only makes
//! system calls on data prepared beforehand (no allocation, no locks, no panics), and reports
//! a failure by storing the errno and the step in shared memory before `_exit(127)`.

use std::ffi::{CString, c_int, c_void};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::oneshot::ExitStatus;

/// What the child does between the clone and the exec.
pub(crate) struct ChildPlan<'a> {
    /// The program's path (already looked up in `PATH`).
    pub(crate) path: CString,
    pub(crate) argv: Vec<CString>,
    pub(crate) envp: Vec<CString>,
    pub(crate) cwd: CString,
    /// Descriptors that become the child's 0, 1, 2, then 3, 4, … (in order).
    pub(crate) fds: Vec<RawFd>,
    /// Write `0` here first (a cgroup's `cgroup.procs`): the child and all it starts join it.
    pub(crate) join: Option<RawFd>,
    /// A cgroup v2 directory to create the child in (`CLONE_INTO_CGROUP`), where supported;
    /// `join` is the fallback.
    pub(crate) cgroup_dir: Option<RawFd>,
    /// Take fd 0 (a PTY slave) as the controlling terminal of the child's new session; else
    /// the session has none.
    pub(crate) session_with_tty: bool,
    /// More cgroups to join (the call's resource limits): `0` is written to each.
    pub(crate) extra_joins: Vec<RawFd>,
    /// Resource limits set with `setrlimit`.
    pub(crate) rlimits: &'a [(libc::__rlimit_resource_t, libc::rlimit)],
    /// The sandbox, entered last before the exec.
    pub(crate) sandbox: Option<&'a crate::sandbox::Prepared>,
    /// Start it in a PID namespace of its own (`pidns.rs`): the containment where no cgroup
    /// can be made.
    pub(crate) pid_namespace: bool,
}

/// The step of the child's setup that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Join = 1,
    Group = 2,
    Fds = 3,
    Tty = 4,
    Chdir = 5,
    Exec = 6,
    Limits = 7,
    Sandbox = 8,
    /// Making the call's PID namespace (`pidns.rs`).
    Namespace = 9,
}

/// A started child: its pid, and its exit status once waited for.
#[derive(Debug)]
pub(crate) struct Process {
    pid: i32,
    status: Option<ExitStatus>,
    /// The init of its PID namespace, which reaps it and passes its status on.
    init: Option<crate::pidns::Init>,
}

impl Process {
    pub(crate) fn id(&self) -> u32 {
        self.pid as u32
    }

    /// The exit status, if it has exited (reaps it).
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_with(libc::WNOHANG)
    }

    /// Waits for it to exit.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.wait_with(0)? {
                return Ok(status);
            }
        }
    }

    /// The init of its PID namespace, if it has one.
    pub(crate) fn init(&self) -> Option<&crate::pidns::Init> {
        self.init.as_ref()
    }

    fn wait_with(&mut self, flags: c_int) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        if let Some(init) = &self.init {
            self.status = init.try_status(flags & libc::WNOHANG == 0)?;
            return Ok(self.status);
        }
        let mut raw = 0;
        // SAFETY: waitpid on our own child, with a valid out-pointer.
        let r = unsafe { libc::waitpid(self.pid, &raw mut raw, flags) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(None)
            } else {
                Err(e)
            };
        }
        if r == 0 {
            return Ok(None);
        }
        self.status = ExitStatus::from_wait(raw);
        Ok(self.status)
    }
}

/// Everything the child reads (prepared by the parent) and writes (its failure).
struct Shared<'a> {
    plan: &'a ChildPlan<'a>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    /// The parent's signal mask before it blocked everything (restored in the parent; the
    /// child starts its program with an empty mask, as std does).
    mask: libc::sigset_t,
    errno: AtomicI32,
    step: AtomicI32,
    /// The child was created in its cgroup: no `join` write.
    created_inside: bool,
    /// The child starts in the sandbox's user namespace already (`pidns.rs` entered it).
    user_entered: bool,
    /// [`crate::sys::descriptor_limit`], read before the clone.
    fd_limit: u32,
}

/// The vfork child's stack. 64 KiB is far more than the system calls below need.
const STACK: usize = 64 * 1024;

/// Starts the child. On failure, the error and the step that failed.
pub(crate) fn spawn(plan: &ChildPlan) -> Result<Process, (io::Error, Step)> {
    let null_terminated = |v: &[CString]| {
        v.iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect::<Vec<_>>()
    };
    let mut shared = Shared {
        plan,
        argv: null_terminated(&plan.argv),
        envp: null_terminated(&plan.envp),
        // SAFETY: sigset_t is plain data, filled below.
        mask: unsafe { std::mem::zeroed() },
        errno: AtomicI32::new(0),
        step: AtomicI32::new(0),
        created_inside: false,
        user_entered: false,
        fd_limit: crate::sys::descriptor_limit(),
    };
    let mut stack = vec![0u8; STACK];
    // SAFETY: the stack grows down from its 16-byte-aligned top; it outlives the child's use
    // of it (CLONE_VFORK: we resume only once the child has exec'd or exited).
    let top = unsafe {
        let end = stack.as_mut_ptr().add(STACK);
        end.sub(end as usize % 16)
    };
    // Block every signal across the clone: a handler of ours must never run in the child,
    // which shares our memory. The child resets every handled signal to its default, then
    // unblocks all signals right before exec.
    // SAFETY: sigset operations on local data.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&raw mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const all, &raw mut shared.mask);
        if plan.pid_namespace {
            let user = plan.sandbox.map(crate::sandbox::Prepared::user_namespace);
            shared.user_entered = user.is_some();
            let started =
                crate::pidns::spawn(user, shared.fd_limit, child, top, (&raw mut shared).cast());
            libc::pthread_sigmask(
                libc::SIG_SETMASK,
                &raw const shared.mask,
                std::ptr::null_mut(),
            );
            drop(stack);
            return match started {
                // Refused (a container's filter, namespaces off): the call falls back to
                // the process group. Anything else (out of descriptors, processes, the
                // user namespace quota) fails the call: falling back would let a command
                // that exhausts a quota escape every later call's containment.
                Err(e) if crate::pidns::refused(&e) => Err((e, Step::Namespace)),
                Err(e) => Err((e, Step::Group)),
                Ok((init, command)) => {
                    let failure = child_failure(&shared);
                    match (command, failure) {
                        (Some(pid), None) => Ok(Process {
                            pid,
                            status: None,
                            init: Some(init),
                        }),
                        (_, Some(failed)) => Err(failed),
                        (None, None) => Err((
                            io::Error::other("the command in its PID namespace was not found"),
                            Step::Exec,
                        )),
                    }
                }
            };
        }
        let inside = plan.cgroup_dir.map(|dir| {
            shared.created_inside = true;
            clone_into_cgroup(dir, stack.as_mut_ptr(), top, (&raw mut shared).cast())
        });
        let (pid, err) = match inside {
            Some(Ok(pid)) => (pid, None),
            Some(Err(e)) if out_of_resources(&e) => (-1, Some(e)),
            // Not supported here (kernel, architecture) or not allowed (a cgroup we may create
            // but not create children in): create it, then join — the join decides, and a
            // failed join falls back to the next mechanism (`spawn.rs`).
            _ => {
                shared.created_inside = false;
                let pid = libc::clone(
                    child,
                    top.cast(),
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                    (&raw mut shared).cast(),
                );
                (pid, (pid < 0).then(io::Error::last_os_error))
            }
        };
        libc::pthread_sigmask(
            libc::SIG_SETMASK,
            &raw const shared.mask,
            std::ptr::null_mut(),
        );
        if let Some(err) = err {
            return Err((err, Step::Exec));
        }
        pid
    };
    drop(stack);
    let mut process = Process {
        pid,
        status: None,
        init: None,
    };
    if let Some(failed) = child_failure(&shared) {
        let _ = process.wait();
        return Err(failed);
    }
    Ok(process)
}

/// What the child reported before it exited, if it failed before its exec.
fn child_failure(shared: &Shared) -> Option<(io::Error, Step)> {
    let errno = shared.errno.load(Ordering::SeqCst);
    if errno == 0 {
        return None;
    }
    let step = match shared.step.load(Ordering::SeqCst) {
        1 => Step::Join,
        2 => Step::Group,
        3 => Step::Fds,
        4 => Step::Tty,
        5 => Step::Chdir,
        7 => Step::Limits,
        8 => Step::Sandbox,
        _ => Step::Exec,
    };
    Some((io::Error::from_raw_os_error(errno), step))
}

/// The child, between the clone and the exec. Only system calls on prepared data.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Shared`, alive while the parent is suspended.
    let shared = unsafe { &*arg.cast::<Shared<'_>>() };
    let plan = shared.plan;
    let fail = |step: Step| -> c_int {
        // SAFETY: reading errno and leaving the child without running any destructor.
        unsafe {
            let errno = *libc::__errno_location();
            shared.errno.store(errno.max(1), Ordering::SeqCst);
            shared.step.store(step as i32, Ordering::SeqCst);
            libc::_exit(127)
        }
    };
    // SAFETY: plain system calls on descriptors and strings the parent prepared.
    unsafe {
        if let Some(fd) = plan.join.filter(|_| !shared.created_inside)
            && libc::write(fd, b"0".as_ptr().cast(), 1) < 0
        {
            return fail(Step::Join);
        }
        for &fd in &plan.extra_joins {
            if libc::write(fd, b"0".as_ptr().cast(), 1) < 0 {
                return fail(Step::Limits);
            }
        }
        for (resource, limit) in plan.rlimits {
            if libc::setrlimit(*resource, limit) < 0 {
                return fail(Step::Limits);
            }
        }
        // Always a session of its own: without a PTY the child then has no controlling
        // terminal at all, so `/dev/tty` fails (ENXIO) instead of reaching the operator's
        // terminal, and no process of the call can take the operator's foreground process
        // group to read what is typed there. The session leader's pid is also its group id,
        // which containment signals.
        if libc::setsid() < 0 {
            return fail(Step::Group);
        }
        // Every source first moves above the targets (so placing one never clobbers another),
        // then lands on its target; dup2 clears close-on-exec on the target.
        let mut moved = [0 as RawFd; 8];
        let count = plan.fds.len().min(moved.len());
        for (i, &fd) in plan.fds.iter().take(count).enumerate() {
            moved[i] = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, crate::sys::CHILD_FD_FLOOR);
            if moved[i] < 0 {
                return fail(Step::Fds);
            }
        }
        for (target, &fd) in moved.iter().take(count).enumerate() {
            if libc::dup2(fd, target as RawFd) < 0 {
                return fail(Step::Fds);
            }
        }
        // Nothing else crosses the exec: whatever agent-exec itself inherited without
        // close-on-exec (a caller's fd 3 on a credential file, a terminal) is marked
        // close-on-exec here, in one call. Marked rather than closed: the sandbox's namespace
        // and ruleset descriptors are still used below, until the exec.
        if libc::syscall(
            libc::SYS_close_range,
            count as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        ) < 0
        {
            // Before Linux 5.11 (no CLOSE_RANGE_CLOEXEC: EINVAL; none at all before 5.9:
            // ENOSYS; or refused by a container's filter): one by one, up to the limit.
            for fd in count as RawFd..shared.fd_limit as RawFd {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        if plan.session_with_tty && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
            return fail(Step::Tty);
        }
        // The sandbox first: its mounts change what a path (the cwd included) resolves to.
        if let Some(sandbox) = plan.sandbox
            && sandbox.enter(shared.user_entered).is_err()
        {
            return fail(Step::Sandbox);
        }
        if libc::chdir(plan.cwd.as_ptr()) < 0 {
            return fail(Step::Chdir);
        }
        // Rust ignores SIGPIPE; a command must get the default (a closed reader ends `yes`).
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        // Handlers run here would run in our memory: reset every handled signal first.
        for sig in 1..=libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const empty, std::ptr::null_mut());
        libc::execve(
            plan.path.as_ptr(),
            shared.argv.as_ptr(),
            shared.envp.as_ptr(),
        );
    }
    fail(Step::Exec)
}

/// `struct clone_args` of `clone3(2)`, up to `cgroup` (version 2, 88 bytes).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `close_range(2)`'s flag: mark the range close-on-exec instead of closing it (Linux 5.11).
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

/// `clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP)`: the child starts on `stack` inside
/// the cgroup `dir` and runs [`child`]; we resume once it has exec'd or exited.
#[cfg(target_arch = "x86_64")]
fn clone_into_cgroup(dir: RawFd, base: *mut u8, top: *mut u8, arg: *mut c_void) -> io::Result<i32> {
    let args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK) as u64 | CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        stack: base as u64,
        stack_size: top as u64 - base as u64,
        cgroup: dir as u64,
        ..CloneArgs::default()
    };
    let entry: extern "C" fn(*mut c_void) -> c_int = child;
    let ret: i64;
    // SAFETY: the parent returns from the syscall with every register but rax, rcx and r11
    // intact. The child starts with rsp at the top of `stack` (16-byte aligned, so the call
    // below meets the ABI), calls `child`, which execs or _exits, and never comes back here;
    // should it return, the thread exits. The parent is suspended (CLONE_VFORK) meanwhile.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r13",
            "call r12",
            "mov edi, eax",
            "mov eax, 60",
            "syscall",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") &raw const args,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") entry,
            in("r13") arg,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    if ret < 0 {
        return Err(io::Error::from_raw_os_error(-ret as i32));
    }
    Ok(ret as i32)
}

/// A clone that failed for want of processes or memory: a plain clone would fail too.
fn out_of_resources(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM))
}

#[cfg(not(target_arch = "x86_64"))]
fn clone_into_cgroup(_: RawFd, _: *mut u8, _: *mut u8, _: *mut c_void) -> io::Result<i32> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}
