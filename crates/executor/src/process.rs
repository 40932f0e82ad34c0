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
//! The child runs on its own stack ([`Stack`]: mapped, with a guard page below it) in our
//! address space while we are suspended. So that it cannot allocate, lock or panic, it is a
//! small interpreter: the parent turns the [`ChildPlan`] into a list of plain-data [`Op`]s
//! before the clone (every string, pointer array and descriptor made then), and the child runs
//! them in order with system calls only, reporting a failure by storing the errno and the
//! failed op's [`Step`] in shared memory before it exits with 127.

use crate::stack::{Stack, VFORK};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::io;
use std::os::fd::{BorrowedFd, IntoRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use rustix::io::Errno;
use rustix::process::{Resource, Rlimit, Signal};

use crate::status::ExitStatus;

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
    pub(crate) rlimits: &'a [(Resource, Rlimit)],
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

/// One thing the child does, on data the parent prepared: the child's whole program is a
/// list of these, run in order (see [`program`]). Plain data only — borrowed descriptors,
/// strings and pointer arrays that outlive the child's use of them.
#[derive(Clone, Copy)]
enum Op<'a> {
    /// Writes `0` to a cgroup's `cgroup.procs`: the child, and all it starts, join it. `call`:
    /// the call's own cgroup, skipped when the child was created inside it (fails as
    /// [`Step::Join`]); else a limit's cgroup ([`Step::Limits`]).
    JoinCgroup {
        procs: BorrowedFd<'a>,
        call: bool,
    },
    /// `setrlimit`.
    SetRlimit(Resource, Rlimit),
    /// `setsid`: always a session of its own (see [`program`]).
    NewSession,
    /// Places `fds` as the child's 0, 1, 2, … (at most eight), and marks every other
    /// descriptor close-on-exec (one by one up to `limit` where `close_range` cannot).
    PlaceFds {
        fds: &'a [BorrowedFd<'a>],
        limit: u32,
    },
    /// Takes fd 0 (a PTY slave) as the controlling terminal.
    TakeTerminal,
    /// Enters the sandbox ([`crate::sandbox::Prepared::enter`]).
    EnterSandbox {
        sandbox: &'a crate::sandbox::Prepared,
        user_entered: bool,
    },
    Chdir(&'a CStr),
    /// Default dispositions for every handled signal and SIGPIPE, an empty mask, then
    /// `execve`: only returns on failure.
    Exec {
        path: &'a CStr,
        argv: *const *const c_char,
        envp: *const *const c_char,
    },
}

impl Op<'_> {
    /// The step reported when this op fails.
    fn step(&self) -> Step {
        match self {
            Op::JoinCgroup { call: true, .. } => Step::Join,
            Op::JoinCgroup { call: false, .. } | Op::SetRlimit(..) => Step::Limits,
            Op::NewSession => Step::Group,
            Op::PlaceFds { .. } => Step::Fds,
            Op::TakeTerminal => Step::Tty,
            Op::EnterSandbox { .. } => Step::Sandbox,
            Op::Chdir(_) => Step::Chdir,
            Op::Exec { .. } => Step::Exec,
        }
    }
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
        self.wait_with(false)
    }

    /// Waits for it to exit.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.wait_with(true)? {
                return Ok(status);
            }
        }
    }

    /// The init of its PID namespace, if it has one.
    pub(crate) fn init(&self) -> Option<&crate::pidns::Init> {
        self.init.as_ref()
    }

    fn wait_with(&mut self, block: bool) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        if let Some(init) = &self.init {
            self.status = init.try_status(block)?;
            return Ok(self.status);
        }
        let pid = rustix::process::Pid::from_raw(self.pid).expect("a child's pid is positive");
        let options = if block {
            rustix::process::WaitOptions::empty()
        } else {
            rustix::process::WaitOptions::NOHANG
        };
        match rustix::process::waitpid(Some(pid), options) {
            Ok(Some((_, status))) => {
                self.status = ExitStatus::from_wait(status.as_raw());
                Ok(self.status)
            }
            Ok(None) | Err(Errno::INTR) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// Everything the child reads (prepared by the parent) and writes (its failure).
struct Shared<'a> {
    ops: &'a [Op<'a>],
    errno: AtomicI32,
    step: AtomicI32,
    /// The child was created in its cgroup: no join of the call's cgroup.
    created_inside: AtomicBool,
}

/// The child's program, in order: join the cgroups, set the limits, lead a new session, place
/// the descriptors (nothing else crosses the exec), take the terminal, enter the sandbox,
/// enter the cwd, reset the signals, exec.
fn program<'a>(
    plan: &'a ChildPlan<'a>,
    fds: &'a [BorrowedFd<'a>],
    argv: &'a [*const c_char],
    envp: &'a [*const c_char],
    user_entered: bool,
) -> Vec<Op<'a>> {
    let borrow = borrow_plan_fd;
    let mut ops = Vec::with_capacity(16);
    ops.extend(plan.join.map(|fd| Op::JoinCgroup {
        procs: borrow(fd),
        call: true,
    }));
    ops.extend(plan.extra_joins.iter().map(|&fd| Op::JoinCgroup {
        procs: borrow(fd),
        call: false,
    }));
    ops.extend(plan.rlimits.iter().map(|&(r, l)| Op::SetRlimit(r, l)));
    // Always a session of its own: without a PTY the child then has no controlling terminal
    // at all, so `/dev/tty` fails (ENXIO) instead of reaching the operator's terminal, and no
    // process of the call can take the operator's foreground process group to read what is
    // typed there. The session leader's pid is also its group id, which containment signals.
    ops.push(Op::NewSession);
    ops.push(Op::PlaceFds {
        fds,
        limit: crate::sys::descriptor_limit(),
    });
    if plan.session_with_tty {
        ops.push(Op::TakeTerminal);
    }
    // The sandbox first: its mounts change what a path (the cwd included) resolves to.
    if let Some(sandbox) = plan.sandbox {
        ops.push(Op::EnterSandbox {
            sandbox,
            user_entered,
        });
    }
    ops.push(Op::Chdir(&plan.cwd));
    ops.push(Op::Exec {
        path: &plan.path,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
    });
    ops
}

/// At most this many descriptors are placed (0, 1, 2 and a session's 3, 4 are).
const MAX_PLACED: usize = 8;

/// A descriptor of the plan, borrowed for the child's program: the plan's descriptors are held
/// open by `spawn`'s caller until it returns, after the child has exec'd or exited, and the
/// program (with every borrow) is gone by then.
fn borrow_plan_fd<'a>(fd: RawFd) -> BorrowedFd<'a> {
    crate::sys::borrow(fd)
}

/// Starts the child. On failure, the error and the step that failed.
pub(crate) fn spawn(plan: &ChildPlan) -> Result<Process, (io::Error, Step)> {
    let null_terminated = |v: &[CString]| {
        v.iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect::<Vec<_>>()
    };
    let (argv, envp) = (null_terminated(&plan.argv), null_terminated(&plan.envp));
    // In a PID namespace inside the sandbox, the init starts in its user namespace already.
    let user = plan
        .sandbox
        .filter(|_| plan.pid_namespace)
        .map(crate::sandbox::Prepared::user_namespace);
    let fds: Vec<BorrowedFd<'_>> = plan.fds[..plan.fds.len().min(MAX_PLACED)]
        .iter()
        .map(|&fd| borrow_plan_fd(fd))
        .collect();
    let ops = program(plan, &fds, &argv, &envp, user.is_some());
    let mut shared = Shared {
        ops: &ops,
        errno: AtomicI32::new(0),
        step: AtomicI32::new(0),
        created_inside: AtomicBool::new(false),
    };
    let stack = Stack::new().map_err(|e| (e, Step::Exec))?;
    let top = stack.top();
    // Block every signal across the clone: a handler of ours must never run in the child,
    // which shares our memory. The child resets every handled signal to its default, then
    // unblocks all signals right before exec.
    let mut mask = SigSet::empty();
    let _ = pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut mask),
    );
    let restore_mask = || {
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&mask), None);
    };
    let arg: *mut c_void = (&raw mut shared).cast();
    if plan.pid_namespace {
        let fd_limit = crate::sys::descriptor_limit();
        let started = crate::pidns::spawn(user, fd_limit, child, top, arg);
        restore_mask();
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
        shared.created_inside.store(true, Ordering::Relaxed);
        clone_into_cgroup(dir, stack.bottom(), top, arg)
    });
    let (pid, err) = match inside {
        Some(Ok(pid)) => (pid, None),
        Some(Err(e)) if out_of_resources(&e) => (-1, Some(e)),
        // Not supported here (kernel, architecture) or not allowed (a cgroup we may create
        // but not create children in): create it, then join — the join decides, and a
        // failed join falls back to the next mechanism (`spawn.rs`).
        _ => {
            shared.created_inside.store(false, Ordering::Relaxed);
            // SAFETY: the child runs `child` on `stack` (ours, alive until it has exec'd or
            // exited: CLONE_VFORK suspends us meanwhile) and only runs the prepared ops.
            let pid = unsafe { libc::clone(child, top.cast(), VFORK | libc::SIGCHLD, arg) };
            (pid, (pid < 0).then(io::Error::last_os_error))
        }
    };
    restore_mask();
    drop(stack);
    if let Some(err) = err {
        return Err((err, Step::Exec));
    }
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

/// The child, between the clone and the exec: runs the prepared ops. System calls only — no
/// allocation, no locks, no panics: it shares our memory while we are suspended.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Shared`, alive while the parent is suspended.
    let shared = unsafe { &*arg.cast::<Shared<'_>>() };
    for op in shared.ops {
        if let Err(errno) = run(op, shared) {
            shared
                .errno
                .store(errno.raw_os_error().max(1), Ordering::SeqCst);
            shared.step.store(op.step() as i32, Ordering::SeqCst);
            // Returning ends the child (the clone's entry exits with it) without running any
            // destructor: they are the parent's.
            return 127;
        }
    }
    // The last op execs; reaching here means it was not there.
    127
}

/// One op of the child ([`child`]).
fn run(op: &Op<'_>, shared: &Shared<'_>) -> Result<(), Errno> {
    match *op {
        Op::JoinCgroup { call: true, .. } if shared.created_inside.load(Ordering::Relaxed) => {}
        Op::JoinCgroup { procs, .. } => {
            rustix::io::write(procs, b"0")?;
        }
        Op::SetRlimit(resource, limit) => rustix::process::setrlimit(resource, limit)?,
        Op::NewSession => {
            rustix::process::setsid()?;
        }
        Op::PlaceFds { fds, limit } => {
            // Every source first moves above the targets (so placing one never clobbers
            // another), then lands on its target.
            let mut moved = [0 as RawFd; MAX_PLACED];
            for (i, fd) in fds.iter().enumerate() {
                let copy = rustix::io::fcntl_dupfd_cloexec(fd, crate::sys::CHILD_FD_FLOOR)?;
                moved[i] = copy.into_raw_fd();
            }
            raw::place(&moved[..fds.len()], limit)?;
        }
        Op::TakeTerminal => rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?,
        Op::EnterSandbox {
            sandbox,
            user_entered,
        } => sandbox.enter(user_entered)?,
        Op::Chdir(dir) => rustix::process::chdir(dir)?,
        Op::Exec { path, argv, envp } => return Err(raw::exec(path, argv, envp)),
    }
    Ok(())
}

/// The child's system calls that take raw descriptors or touch signal dispositions: the one
/// place its `unsafe` lives.
mod raw {
    use std::ffi::{CStr, c_char};
    use std::os::fd::RawFd;

    use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
    use rustix::io::Errno;
    use rustix::process::Signal;

    /// errno, as libc's wrappers below left it.
    fn last_errno() -> Errno {
        Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }

    /// Makes `moved[i]` the child's descriptor `i` (dup2 clears close-on-exec on it), then
    /// marks every descriptor above them close-on-exec.
    pub(super) fn place(moved: &[RawFd], limit: u32) -> Result<(), Errno> {
        /// `close_range(2)`'s flag: mark the range close-on-exec (Linux 5.11).
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        let first = moved.len() as libc::c_uint;
        // SAFETY: system calls on descriptor numbers, no memory passed. Replacing the child's
        // low descriptors is the point; the rest are only marked.
        unsafe {
            for (target, &fd) in moved.iter().enumerate() {
                if libc::dup2(fd, target as RawFd) < 0 {
                    return Err(last_errno());
                }
            }
            // Nothing else crosses the exec: whatever agent-exec itself inherited without
            // close-on-exec (a caller's fd 3 on a credential file, a terminal) is marked
            // close-on-exec here, in one call. Marked rather than closed: the sandbox's
            // namespace and ruleset descriptors are still used, until the exec.
            let all = libc::c_uint::MAX;
            if libc::syscall(libc::SYS_close_range, first, all, CLOSE_RANGE_CLOEXEC) < 0 {
                // Before Linux 5.11 (no CLOSE_RANGE_CLOEXEC: EINVAL; none at all before 5.9:
                // ENOSYS; or refused by a container's filter): one by one, up to the limit.
                for fd in first..limit {
                    libc::fcntl(fd as RawFd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
        }
        Ok(())
    }

    /// Resets the signals, then `execve`; returns only on failure, with why.
    pub(super) fn exec(
        path: &CStr,
        argv: *const *const c_char,
        envp: *const *const c_char,
    ) -> Errno {
        // SAFETY: sigaction queries into a local, then default dispositions (no handler of
        // ours can run here); `argv` and `envp` are null-terminated arrays of the plan's
        // strings, alive until the parent resumes (after this exec or the child's exit).
        unsafe {
            // Handlers run here would run in our memory: every handled signal goes back to its
            // default first. So does SIGPIPE, which Rust ignores: a command must get the
            // default (a closed reader ends `yes`).
            for sig in 1..=libc::SIGRTMAX() {
                let mut old: libc::sigaction = std::mem::zeroed();
                let queried = libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0;
                let (default, ignored) = (libc::SIG_DFL, libc::SIG_IGN);
                if sig == Signal::PIPE.as_raw()
                    || queried && old.sa_sigaction != default && old.sa_sigaction != ignored
                {
                    libc::signal(sig, default);
                }
            }
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
            libc::execve(path.as_ptr(), argv, envp);
        }
        last_errno()
    }
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

/// `clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP)`: the child starts on `stack` inside
/// the cgroup `dir` and runs [`child`]; we resume once it has exec'd or exited.
#[cfg(target_arch = "x86_64")]
fn clone_into_cgroup(dir: RawFd, base: *mut u8, top: *mut u8, arg: *mut c_void) -> io::Result<i32> {
    let args = CloneArgs {
        flags: VFORK as u64 | CLONE_INTO_CGROUP,
        exit_signal: Signal::CHILD.as_raw() as u64,
        stack: base as u64,
        stack_size: top as u64 - base as u64,
        cgroup: dir as u64,
        ..CloneArgs::default()
    };
    let entry: extern "C" fn(*mut c_void) -> c_int = child;
    let ret: i64;
    // SAFETY: the parent returns from the syscall with every register but rax, rcx and r11
    // intact. The child starts with rsp at the top of `stack` (16-byte aligned, so the call
    // below meets the ABI), calls `child`, which execs or returns the exit code its only
    // thread then exits with (as glibc's `clone` does). The parent is suspended (CLONE_VFORK)
    // meanwhile.
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
    matches!(
        e.raw_os_error().map(Errno::from_raw_os_error),
        Some(Errno::AGAIN | Errno::NOMEM)
    )
}

#[cfg(not(target_arch = "x86_64"))]
fn clone_into_cgroup(_: RawFd, _: *mut u8, _: *mut u8, _: *mut c_void) -> io::Result<i32> {
    Err(rustix::io::Errno::NOSYS.into())
}
