//! The namespaces of a sandbox spec: made once by a forked child, kept by descriptor, joined
//! by every call's child with `setns(2)`.
//!
//! - a **user namespace** mapping only our own ids (so even root keeps no capability over the
//!   host: no modules, raw devices, clocks, or other processes' `/proc` files);
//! - a **mount namespace** where every mount is read-only but the writable roots and the
//!   spec's temporary area — so no `chmod`, `chown`, `utime` or `setxattr` reaches a file
//!   outside them (Landlock governs opening files, not their metadata) — with every git
//!   directory under a writable root pinned by a bind mount (a mount point cannot be renamed
//!   or removed) and its `hooks`, `config` and `commondir` bound read-only;
//! - with the network off, a **network namespace** with only its own loopback: no address of
//!   the host or beyond can be reached (TCP, UDP, raw, IPv4 or IPv6), and with allowed hosts the
//!   proxy's listening socket is made inside it, so the only way out is through the proxy.
//!
//! Making them costs a fork and ~1 ms (the network namespace most of it); joining costs
//! microseconds, where `unshare` and copying the mount table in every call's child, and tearing
//! them down at its exit, cost ~0.4 ms a call here.

use std::ffi::CString;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::net::{AddressFamily, SocketFlags, SocketType, socket_with};

use super::error::{PrepareError, fail};

/// A step of the mount namespace's setup.
#[derive(Debug)]
enum MountStep {
    /// Every mount at and below `target` made private: nothing done here propagates back.
    Private { target: CString },
    /// `source` bound onto `target` (with the mounts below it, if `recursive`).
    Bind {
        source: CString,
        target: CString,
        recursive: bool,
    },
    /// A fresh `tmpfs` (`nosuid`, `nodev`) with these options.
    Tmpfs { target: CString, options: CString },
    /// `mount_setattr(2)` of the mounts at and below `target`: these `MOUNT_ATTR_*` set and
    /// cleared.
    Attributes {
        target: CString,
        set: u64,
        clear: u64,
    },
    /// The mask file bound read-only onto a host socket (`sockets.rs`); skipped when the socket
    /// is gone since it was found (its daemon ended) or cannot be reached from the namespace,
    /// which leaves nothing to hide.
    Hide { mask: CString, target: CString },
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 1;
const MOUNT_ATTR_NOSUID: u64 = 2;
const MOUNT_ATTR_NODEV: u64 = 4;
const AT_RECURSIVE: u32 = 0x8000;

/// The port the proxy listens on inside a network namespace (its own loopback: any will do).
pub(super) const PROXY_PORT: u16 = 3128;

/// `struct ifreq` (40 bytes) as `SIOCSIFFLAGS` reads it: the interface's name, then its
/// flags at the start of the request's union.
#[repr(C)]
struct InterfaceFlags {
    name: [u8; 16],
    flags: i16,
    rest: [u8; 22],
}

/// How a spec's namespaces are made.
pub(super) struct NamespacePlan {
    /// `(path, content)` written once the user namespace exists: setgroups, uid_map, gid_map.
    id_maps: Vec<(CString, Vec<u8>)>,
    mounts: Vec<MountStep>,
    /// How many of `mounts`, from the first, depend only on the kernel and the writable roots'
    /// paths (the read-only view, the roots made writable, the private `/dev/shm`); the rest
    /// hold what the roots contain.
    kernel_steps: usize,
    /// A network namespace of its own (the network is off).
    network: bool,
    /// Make the proxy's listening socket in it.
    proxy: bool,
    /// `lo`, to bring up.
    loopback: InterfaceFlags,
    /// Where the private `/dev/shm` is mounted (where the host has one).
    shm: Option<CString>,
}

/// The namespaces, held by descriptors.
#[derive(Debug)]
pub(super) struct Namespaces {
    pub(super) user: OwnedFd,
    pub(super) mount: OwnedFd,
    pub(super) network: Option<OwnedFd>,
    /// The proxy's listening socket, inside `network`.
    pub(super) proxy_listener: Option<OwnedFd>,
    /// The private `/dev/shm` inside `mount` (an `O_PATH` descriptor, for the Landlock rule
    /// that makes it writable: the host's `/dev/shm` is another inode).
    pub(super) shm: Option<OwnedFd>,
}

/// What the mount namespace shows differently from the host.
#[derive(Debug)]
pub(super) struct MountInputs<'a> {
    /// Writable (bound read-write, `nosuid`, `nodev`).
    pub(super) writable: &'a [PathBuf],
    /// The spec's temporary area (as a writable root).
    pub(super) tmp_area: &'a Path,
    /// Paths under the writable roots that stay read-only: each becomes a read-only mount
    /// point, which also cannot be removed, renamed or replaced (deny-read paths, the artifact
    /// store).
    pub(super) read_only: &'a [PathBuf],
    /// The git directories under the writable roots (`gitdirs.rs`).
    pub(super) git: &'a super::gitdirs::GitProtection,
    /// Deny-read paths under the writable roots: each hidden under a read-only mount of an
    /// empty file or directory with no permissions (`masks`: the file, the directory).
    pub(super) masked: &'a [PathBuf],
    pub(super) masks: (&'a Path, &'a Path),
    /// The host's Unix sockets, hidden under the mask file (with the network on: `sockets.rs`).
    pub(super) sockets: &'a [PathBuf],
}

/// `(path, content)` to write once a user namespace exists, mapping only our own ids:
/// setgroups, uid_map, gid_map.
pub(super) fn id_maps() -> Vec<(CString, Vec<u8>)> {
    let (uid, gid) = (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    );
    let c = |s: &str| CString::new(s).expect("no NUL");
    vec![
        (c("/proc/self/setgroups"), b"deny".to_vec()),
        (c("/proc/self/uid_map"), format!("{uid} {uid} 1\n").into()),
        (c("/proc/self/gid_map"), format!("{gid} {gid} 1\n").into()),
    ]
}

/// Where the private `/dev/shm` goes.
const SHM: &str = "/dev/shm";

impl NamespacePlan {
    pub(super) fn new(mounts: &MountInputs, network: bool, proxy: bool) -> Self {
        let c = |s: &str| CString::new(s).expect("no NUL");
        let mut loopback = InterfaceFlags {
            name: [0; 16],
            flags: (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as i16,
            rest: [0; 22],
        };
        loopback.name[..2].copy_from_slice(b"lo");
        let (mounts, kernel_steps) = mount_steps(mounts);
        NamespacePlan {
            id_maps: id_maps(),
            kernel_steps,
            mounts,
            shm: Path::new(SHM).is_dir().then(|| c(SHM)),
            network,
            proxy,
            loopback,
        }
    }
}

/// How a path becomes a mount point of its own (`attributes`: `MOUNT_ATTR_*` set and cleared).
fn bind(steps: &mut Vec<MountStep>, path: &Path, attributes: Option<(u64, u64)>) {
    let Some(path) = c_path(path) else { return };
    steps.push(MountStep::Bind {
        source: path.clone(),
        target: path.clone(),
        recursive: true,
    });
    if let Some((set, clear)) = attributes {
        steps.push(MountStep::Attributes {
            target: path,
            set,
            clear,
        });
    }
}

fn c_path(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

/// The first steps of the mount namespace, which depend only on the kernel and the writable
/// roots' paths: everything read-only, the roots (and the temporary area) writable again, a
/// private `/dev/shm`. A refusal here is the machine's (see `PrepareError::refused_by_kernel`).
fn kernel_steps(inputs: &MountInputs) -> Vec<MountStep> {
    let c = c_path;
    let root = CString::new("/").expect("no NUL");
    let mut steps = vec![
        // Nothing done here propagates back to the host's mounts.
        MountStep::Private {
            target: root.clone(),
        },
        MountStep::Attributes {
            target: root,
            set: MOUNT_ATTR_RDONLY,
            clear: 0,
        },
    ];
    let writable = Some((MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, MOUNT_ATTR_RDONLY));
    for dir in inputs
        .writable
        .iter()
        .map(PathBuf::as_path)
        .chain([inputs.tmp_area])
    {
        bind(&mut steps, dir, writable);
    }
    // A private /dev/shm: POSIX shared memory and semaphores (Python's multiprocessing) work,
    // and nothing in it reaches the host's; its pages are charged to the writer's memory
    // cgroup, so `--max-memory` counts them.
    if Path::new(SHM).is_dir() {
        steps.push(MountStep::Tmpfs {
            target: c(Path::new(SHM)).expect("no NUL"),
            options: CString::new("mode=1777").expect("no NUL"),
        });
    }
    steps
}

/// The steps of the mount namespace (see the module doc): [`kernel_steps`], then those that
/// hold what the roots contain; and how many the first are.
fn mount_steps(inputs: &MountInputs) -> (Vec<MountStep>, usize) {
    let c = c_path;
    let mut steps = kernel_steps(inputs);
    let kernel = steps.len();
    let read_only = Some((MOUNT_ATTR_RDONLY, 0));
    // Every directory between a writable root and what is held below it is pinned too: a
    // directory holding a mount point can still be renamed, and a rebuild would then not find
    // the path to hold again.
    let under_writable = |p: &Path| inputs.writable.iter().any(|root| p.starts_with(root));
    let held = inputs
        .git
        .pinned
        .iter()
        .chain(&inputs.git.read_only)
        .chain(inputs.read_only)
        .chain(inputs.masked);
    let mut ancestors = std::collections::BTreeSet::new();
    for path in held {
        for ancestor in path.ancestors().skip(1) {
            if inputs
                .writable
                .iter()
                .any(|root| ancestor == root.as_path())
                || !under_writable(ancestor)
            {
                break;
            }
            ancestors.insert(ancestor.to_path_buf());
        }
    }
    // Shallow first (a BTreeSet of paths sorts a parent before its children).
    for ancestor in &ancestors {
        bind(&mut steps, ancestor, None);
    }
    // Pinned: a git directory cannot be renamed away and replaced by a fresh one.
    for git_dir in &inputs.git.pinned {
        bind(&mut steps, git_dir, None);
    }
    for path in inputs.git.read_only.iter().chain(inputs.read_only) {
        if under_writable(path) {
            bind(&mut steps, path, read_only);
        }
    }
    // A deny-read path in a writable root is hidden, not left out of Landlock's rules: "all
    // but X" by rules would leave every entry made later in X's directory unreadable (a rule
    // covers the entries that exist), and a mount point cannot be removed, renamed or
    // replaced either.
    for path in inputs.masked {
        let mask = if path.is_dir() {
            inputs.masks.1
        } else {
            inputs.masks.0
        };
        if let (Some(source), Some(target)) = (c(mask), c(path)) {
            steps.push(MountStep::Bind {
                source,
                target: target.clone(),
                recursive: false,
            });
            steps.push(MountStep::Attributes {
                target,
                set: MOUNT_ATTR_RDONLY,
                clear: 0,
            });
        }
    }
    if let Some(mask) = c(inputs.masks.0) {
        for socket in inputs.sockets {
            if let Some(target) = c(socket) {
                steps.push(MountStep::Hide {
                    mask: mask.clone(),
                    target,
                });
            }
        }
    }
    (steps, kernel)
}

/// The step of [`NamespacePlan::build`] that failed.
#[derive(Debug, Clone, Copy)]
#[repr(i32)]
enum Step {
    UserNamespace = 1,
    IdMaps = 2,
    Loopback = 3,
    ProxySocket = 4,
    /// A mount holding what the roots contain.
    Mounts = 5,
    /// One of the [`kernel_steps`].
    KernelMounts = 6,
}

impl NamespacePlan {
    /// Makes the namespaces. Run by the forked child of [`make`]: only system calls on
    /// prepared data. On failure, the step and why (and which mount step); on success, the
    /// proxy's listening descriptor and the private `/dev/shm`'s (or -1), left open for the
    /// parent to take.
    fn build(&self) -> Result<(i32, i32), (Step, Errno, usize)> {
        use rustix::mount::{MountFlags, MountPropagationFlags};
        use rustix::thread::UnshareFlags;
        let at = |step: Step| move |e: Errno| (step, e, 0);
        let mut flags = UnshareFlags::NEWUSER | UnshareFlags::NEWNS;
        if self.network {
            flags |= UnshareFlags::NEWNET;
        }
        // SAFETY: in the forked child of `make`, which exits once it has reported: no one
        // else's view of the namespaces or the descriptor table changes.
        unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(at(Step::UserNamespace))?;
        for (path, content) in &self.id_maps {
            let fd = rustix::fs::open(
                path.as_c_str(),
                OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(at(Step::IdMaps))?;
            rustix::io::write(&fd, content).map_err(at(Step::IdMaps))?;
        }
        let mut listener = -1;
        if self.network {
            let sock = socket_with(
                AddressFamily::INET,
                SocketType::DGRAM,
                SocketFlags::CLOEXEC,
                None,
            )
            .map_err(at(Step::Loopback))?;
            // SAFETY: SIOCSIFFLAGS reads the prepared `ifreq`, which outlives the call.
            let up = unsafe {
                libc::ioctl(
                    sock.as_raw_fd(),
                    libc::SIOCSIFFLAGS,
                    &raw const self.loopback,
                )
            };
            if up < 0 {
                return Err((Step::Loopback, last_errno(), 0));
            }
            drop(sock);
            if self.proxy {
                let proxy = SocketAddrV4::new(Ipv4Addr::LOCALHOST, PROXY_PORT);
                let sock = socket_with(
                    AddressFamily::INET,
                    SocketType::STREAM,
                    SocketFlags::CLOEXEC,
                    None,
                )
                .and_then(|sock| {
                    rustix::net::bind(&sock, &proxy)?;
                    rustix::net::listen(&sock, 128)?;
                    Ok(sock)
                })
                .map_err(at(Step::ProxySocket))?;
                listener = sock.into_raw_fd();
            }
        }
        for (index, step) in self.mounts.iter().enumerate() {
            let done = match step {
                MountStep::Private { target } => rustix::mount::mount_change(
                    target.as_c_str(),
                    MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
                ),
                MountStep::Bind {
                    source,
                    target,
                    recursive: true,
                } => rustix::mount::mount_bind_recursive(source.as_c_str(), target.as_c_str()),
                MountStep::Bind { source, target, .. } => {
                    rustix::mount::mount_bind(source.as_c_str(), target.as_c_str())
                }
                MountStep::Tmpfs { target, options } => rustix::mount::mount(
                    c"tmpfs",
                    target.as_c_str(),
                    c"tmpfs",
                    MountFlags::NOSUID | MountFlags::NODEV,
                    options.as_c_str(),
                ),
                MountStep::Attributes { target, set, clear } => {
                    set_attributes(target, *set, *clear)
                }
                MountStep::Hide { mask, target } => {
                    match rustix::mount::mount_bind(mask.as_c_str(), target.as_c_str()) {
                        // Gone since it was found, or in a directory this namespace's user
                        // cannot enter (another user's `0700` directory): the sandbox cannot
                        // reach it either, so there is nothing to hide.
                        Err(Errno::NOENT | Errno::NOTDIR | Errno::ACCESS) => Ok(()),
                        Err(e) => Err(e),
                        Ok(()) => set_attributes(target, MOUNT_ATTR_RDONLY, 0),
                    }
                }
            };
            if let Err(e) = done {
                let step = if index < self.kernel_steps {
                    Step::KernelMounts
                } else {
                    Step::Mounts
                };
                return Err((step, e, index));
            }
        }
        let shm = match &self.shm {
            Some(path) => rustix::fs::open(
                path.as_c_str(),
                OFlags::PATH | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_or(-1, IntoRawFd::into_raw_fd),
            None => -1,
        };
        Ok((listener, shm))
    }
}

/// errno as a libc wrapper left it.
fn last_errno() -> Errno {
    Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

/// `mount_setattr(2)` of the mounts at and below `target` (no wrapper in rustix).
fn set_attributes(target: &CString, set: u64, clear: u64) -> Result<(), Errno> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a system call on a NUL-terminated path and a local struct of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            rustix::fs::CWD.as_raw_fd(),
            target.as_ptr(),
            AT_RECURSIVE,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r < 0 { Err(last_errno()) } else { Ok(()) }
}

/// Makes the namespaces of `plan` in a forked child and keeps them by descriptor
/// (`/proc/<child>/ns/…`, the proxy's socket with `pidfd_getfd`); the child then exits.
pub(super) fn make(plan: &NamespacePlan) -> Result<Namespaces, PrepareError> {
    let err = |e: std::io::Error| fail("making the sandbox's namespaces", e);
    let (ready_r, ready_w) = crate::sys::pipe().map_err(err)?;
    let (release_r, release_w) = crate::sys::pipe().map_err(err)?;
    // The child makes only system calls on data prepared above, then `_exit`s (its signals
    // stay blocked: it only waits to be released).
    let pid = crate::pids::fork_supervised(|| {
        // Our copy of the release pipe's write end closes, so that the parent's close (or
        // death) is the release.
        // SAFETY: the forked child's own copy of the descriptor, not used again here (the
        // parent's stays open).
        unsafe { libc::close(release_w.as_raw_fd()) };
        let report: [i32; 4] = match plan.build() {
            Ok((listener, shm)) => [0, 0, listener, shm],
            Err((step, errno, index)) => [step as i32, errno.raw_os_error(), index as i32, -1],
        };
        // No allocation in the forked child (another thread may have held the allocator's
        // lock at the fork).
        let mut bytes = [0u8; 16];
        for (chunk, n) in bytes.chunks_exact_mut(4).zip(report) {
            chunk.copy_from_slice(&n.to_ne_bytes());
        }
        let _ = rustix::io::write(&ready_w, &bytes);
        let _ = rustix::io::read(&release_r, &mut [0u8; 1]);
        // SAFETY: leaving the forked child without running the parent's exit handlers.
        unsafe { libc::_exit(0) }
    })
    .map_err(err)?;
    drop(ready_w);
    drop(release_r);
    let mut bytes = [0u8; 16];
    let got = rustix::io::read(&ready_r, &mut bytes);
    let word = |i: usize| i32::from_ne_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    let report = [word(0), word(1), word(2), word(3)];
    let made = if matches!(got, Ok(16)) {
        match report {
            [0, _, listener, shm] => open_all(pid, plan, listener, shm),
            [step, errno, index, _] => Err(refused(step, errno, plan.target_of(index))),
        }
    } else {
        Err(PrepareError::new(
            "the child making the sandbox's namespaces ended without a word".to_owned(),
        ))
    };
    drop(release_w);
    // Our own child, released above.
    let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None);
    crate::pids::release_pid(pid);
    made
}

/// The namespaces of the (waiting) child `pid`, its proxy socket and its `/dev/shm`.
fn open_all(
    pid: i32,
    plan: &NamespacePlan,
    listener: i32,
    shm: i32,
) -> Result<Namespaces, PrepareError> {
    let err = |e: std::io::Error| fail("keeping the sandbox's namespaces", e);
    let open = |kind: &str| {
        let path = format!("/proc/{pid}/ns/{kind}");
        let fd = rustix::fs::open(
            path.as_str(),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| err(e.into()))?;
        // The child joins it after placing its own descriptors.
        crate::sys::above_child_fds(fd).map_err(err)
    };
    let pidfd = crate::sys::pidfd_open(pid).ok_or_else(|| err(std::io::Error::last_os_error()))?;
    let take = |fd: i32| -> Result<Option<OwnedFd>, PrepareError> {
        if fd < 0 {
            return Ok(None);
        }
        // A copy of our own (waiting) child's descriptor.
        rustix::process::pidfd_getfd(&pidfd, fd, rustix::process::PidfdGetfdFlags::empty())
            .map(Some)
            .map_err(|e| err(e.into()))
    };
    let proxy_listener = take(listener)?;
    let shm = take(shm)?;
    Ok(Namespaces {
        shm,
        user: open("user")?,
        mount: open("mnt")?,
        network: if plan.network {
            Some(open("net")?)
        } else {
            None
        },
        proxy_listener,
    })
}

impl NamespacePlan {
    /// The path mount step `index` works on (for the message of a refused one).
    fn target_of(&self, index: i32) -> Option<String> {
        let step = self.mounts.get(usize::try_from(index).ok()?)?;
        let target = match step {
            MountStep::Private { target }
            | MountStep::Bind { target, .. }
            | MountStep::Tmpfs { target, .. }
            | MountStep::Attributes { target, .. }
            | MountStep::Hide { target, .. } => target,
        };
        Some(target.to_string_lossy().into_owned())
    }
}

/// What a refused step means (at `target`, for a mount), and how to proceed.
fn refused(step: i32, errno: i32, target: Option<String>) -> PrepareError {
    let reason = std::io::Error::from_raw_os_error(errno).to_string();
    let reason = reason
        .split(" (os error")
        .next()
        .unwrap_or(&reason)
        .to_owned();
    let what = match step {
        1 => {
            "to make the sandbox's user namespace (user namespaces may be disabled: sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone)"
        }
        2 => "to map our user in the sandbox's user namespace",
        3 => "to bring up the loopback of the sandbox's network namespace",
        4 => "to open the proxy's socket in the sandbox's network namespace",
        5 => {
            "to hold what the writable roots contain in the sandbox's view (a git directory, a deny-read path, a host socket)"
        }
        _ => {
            "to make the sandbox's read-only view of the file system (a writable root on a mount it cannot make writable?)"
        }
    };
    let at = match target {
        Some(path) if step >= Step::Mounts as i32 => format!(" at {path}"),
        _ => String::new(),
    };
    let reason = format!("the kernel refused {what}{at}: {reason}");
    // A refusal, not a shortage (no namespace left, no memory): the machine cannot do it.
    let refusal = matches!(
        Errno::from_raw_os_error(errno),
        Errno::PERM | Errno::ACCESS | Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP
    );
    if step != Step::Mounts as i32 && refusal {
        PrepareError::kernel(super::error::Unenforceable::new(
            reason,
            super::error::Remedy::GoWithout,
        ))
    } else {
        PrepareError::kernel_step(reason)
    }
}
