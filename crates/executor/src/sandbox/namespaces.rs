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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use super::{PrepareError, fail};

/// A step of the mount namespace's setup.
#[derive(Debug)]
enum MountStep {
    /// `mount(2)`.
    Mount {
        source: Option<CString>,
        target: CString,
        flags: libc::c_ulong,
    },
    /// `mount_setattr(2)` of the mounts at and below `target`: set or clear read-only.
    ReadOnly { target: CString, read_only: bool },
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
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// The port the proxy listens on inside a network namespace (its own loopback: any will do).
pub(super) const PROXY_PORT: u16 = 3128;

/// How a spec's namespaces are made.
pub(super) struct NamespacePlan {
    /// `(path, content)` written once the user namespace exists: setgroups, uid_map, gid_map.
    id_maps: Vec<(CString, Vec<u8>)>,
    mounts: Vec<MountStep>,
    /// A network namespace of its own (the network is off).
    network: bool,
    /// Make the proxy's listening socket in it.
    proxy: bool,
    /// `lo`, to bring up.
    loopback: libc::ifreq,
    /// 127.0.0.1:[`PROXY_PORT`].
    proxy_addr: libc::sockaddr_in,
}

/// The namespaces, held by descriptors.
#[derive(Debug)]
pub(super) struct Namespaces {
    pub(super) user: OwnedFd,
    pub(super) mount: OwnedFd,
    pub(super) network: Option<OwnedFd>,
    /// The proxy's listening socket, inside `network`.
    pub(super) proxy_listener: Option<OwnedFd>,
}

impl NamespacePlan {
    pub(super) fn new(writable: &[PathBuf], tmp_area: &Path, network: bool, proxy: bool) -> Self {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let c = |s: &str| CString::new(s).expect("no NUL");
        // SAFETY: plain data, filled below.
        let mut loopback: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in loopback.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        loopback.ifr_ifru.ifru_flags =
            (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as i16;
        NamespacePlan {
            id_maps: vec![
                (c("/proc/self/setgroups"), b"deny".to_vec()),
                (c("/proc/self/uid_map"), format!("{uid} {uid} 1\n").into()),
                (c("/proc/self/gid_map"), format!("{gid} {gid} 1\n").into()),
            ],
            mounts: mount_steps(writable, tmp_area),
            network,
            proxy,
            loopback,
            proxy_addr: libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: PROXY_PORT.to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
                },
                sin_zero: [0; 8],
            },
        }
    }
}

/// The steps of the mount namespace (see the module doc).
fn mount_steps(writable: &[PathBuf], tmp_area: &Path) -> Vec<MountStep> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let root = CString::new("/").expect("no NUL");
    let mut steps = vec![
        // Nothing done here propagates back to the host's mounts.
        MountStep::Mount {
            source: None,
            target: root.clone(),
            flags: libc::MS_REC | libc::MS_PRIVATE,
        },
        MountStep::ReadOnly {
            target: root,
            read_only: true,
        },
    ];
    let bind = |steps: &mut Vec<MountStep>, path: &Path, read_only: Option<bool>| {
        let Some(path) = c(path) else { return };
        steps.push(MountStep::Mount {
            source: Some(path.clone()),
            target: path.clone(),
            flags: libc::MS_BIND | libc::MS_REC,
        });
        if let Some(read_only) = read_only {
            steps.push(MountStep::ReadOnly {
                target: path,
                read_only,
            });
        }
    };
    for dir in writable.iter().map(PathBuf::as_path).chain([tmp_area]) {
        bind(&mut steps, dir, Some(false));
    }
    for root in writable {
        let dot_git = root.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            // A gitfile (worktree, submodule) says where its git directory is: it stays as is.
            Ok(m) if m.is_file() => bind(&mut steps, &dot_git, Some(true)),
            Ok(m) if m.is_dir() => {
                for git_dir in git_dirs(&dot_git) {
                    // Pinned: it cannot be renamed away and replaced by a fresh one.
                    bind(&mut steps, &git_dir, None);
                    for name in ["hooks", "config", "commondir"] {
                        let path = git_dir.join(name);
                        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_symlink()) {
                            bind(&mut steps, &path, Some(true));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    steps
}

/// A repository's git directory and those of its submodules and worktrees
/// (`.git/modules/**`, `.git/worktrees/*`): each has hooks or a config that git outside the
/// sandbox would run or read.
fn git_dirs(dot_git: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if depth > 6 {
            return;
        }
        if dir.join("HEAD").is_file() {
            out.push(dir.to_path_buf());
        }
        for sub in ["modules", "worktrees"] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    walk(&entry.path(), depth + 1, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(dot_git, 0, &mut out);
    if !out.iter().any(|d| d == dot_git) {
        out.insert(0, dot_git.to_path_buf());
    }
    out
}

/// The step of [`NamespacePlan::build`] that failed.
#[derive(Debug, Clone, Copy)]
#[repr(i32)]
enum Step {
    UserNamespace = 1,
    IdMaps = 2,
    Loopback = 3,
    ProxySocket = 4,
    Mounts = 5,
}

impl NamespacePlan {
    /// Makes the namespaces. Run by the forked child of [`make`]: only system calls on
    /// prepared data. On failure, the step, with errno saying why; on success, the proxy's
    /// listening descriptor (or -1).
    ///
    /// # Safety
    /// Only in a forked child that `_exit`s next.
    unsafe fn build(&self) -> Result<i32, Step> {
        // SAFETY: system calls on prepared, NUL-terminated data.
        unsafe {
            let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
            if self.network {
                flags |= libc::CLONE_NEWNET;
            }
            if libc::unshare(flags) < 0 {
                return Err(Step::UserNamespace);
            }
            for (path, content) in &self.id_maps {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(Step::IdMaps);
                }
                let written = libc::write(fd, content.as_ptr().cast(), content.len());
                libc::close(fd);
                if written < 0 {
                    return Err(Step::IdMaps);
                }
            }
            let mut listener = -1;
            if self.network {
                let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
                if sock < 0 || libc::ioctl(sock, libc::SIOCSIFFLAGS, &raw const self.loopback) < 0 {
                    return Err(Step::Loopback);
                }
                libc::close(sock);
                if self.proxy {
                    listener =
                        libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
                    let addr = (&raw const self.proxy_addr).cast::<libc::sockaddr>();
                    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
                    if listener < 0
                        || libc::bind(listener, addr, len) < 0
                        || libc::listen(listener, 128) < 0
                    {
                        return Err(Step::ProxySocket);
                    }
                }
            }
            for step in &self.mounts {
                let done = match step {
                    MountStep::Mount {
                        source,
                        target,
                        flags,
                    } => libc::mount(
                        source.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                        target.as_ptr(),
                        std::ptr::null(),
                        *flags,
                        std::ptr::null(),
                    ),
                    MountStep::ReadOnly { target, read_only } => {
                        let (attr_set, attr_clr) = if *read_only {
                            (MOUNT_ATTR_RDONLY, 0)
                        } else {
                            (0, MOUNT_ATTR_RDONLY)
                        };
                        let attr = MountAttr {
                            attr_set,
                            attr_clr,
                            propagation: 0,
                            userns_fd: 0,
                        };
                        libc::syscall(
                            libc::SYS_mount_setattr,
                            libc::AT_FDCWD,
                            target.as_ptr(),
                            AT_RECURSIVE,
                            &raw const attr,
                            std::mem::size_of::<MountAttr>(),
                        ) as libc::c_int
                    }
                };
                if done < 0 {
                    return Err(Step::Mounts);
                }
            }
            Ok(listener)
        }
    }
}

/// Makes the namespaces of `plan` in a forked child and keeps them by descriptor
/// (`/proc/<child>/ns/…`, the proxy's socket with `pidfd_getfd`); the child then exits.
pub(super) fn make(plan: &NamespacePlan) -> Result<Namespaces, PrepareError> {
    let err = |e: std::io::Error| fail("making the sandbox's namespaces", e);
    let (ready_r, ready_w) = crate::sys::pipe().map_err(err)?;
    let (release_r, release_w) = crate::sys::pipe().map_err(err)?;
    let spawning = crate::containment::SPAWNING
        .read()
        .unwrap_or_else(PoisonError::into_inner);
    // Signals blocked across the fork, so no handler of ours runs in the child; the child
    // never unblocks them (it only waits to be released, then exits).
    // SAFETY: sigset operations on local data.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&raw mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const all, &raw mut old);
    }
    // SAFETY: the child makes only system calls on data prepared above, then `_exit`s; it
    // never returns into Rust code (a fork of a threaded process may hold others' locks).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            libc::close(release_w.as_raw_fd());
            let report: [i32; 3] = match plan.build() {
                Ok(listener) => [0, 0, listener],
                Err(step) => [step as i32, *libc::__errno_location(), -1],
            };
            libc::write(ready_w.as_raw_fd(), report.as_ptr().cast(), 12);
            let mut byte = 0u8;
            libc::read(release_r.as_raw_fd(), (&raw mut byte).cast(), 1);
            libc::_exit(0);
        }
    }
    // SAFETY: restoring our own mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &raw const old, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    crate::containment::supervise_pid(pid);
    drop(spawning);
    drop(ready_w);
    drop(release_r);
    let mut report = [0i32; 3];
    // SAFETY: read(2) into a local buffer of 12 bytes.
    let got = unsafe { libc::read(ready_r.as_raw_fd(), report.as_mut_ptr().cast(), 12) };
    let made = if got == 12 {
        match report {
            [0, _, listener] => open_all(pid, plan, listener),
            [step, errno, _] => Err(refused(step, errno)),
        }
    } else {
        Err(PrepareError(
            "the child making the sandbox's namespaces ended without a word".to_owned(),
        ))
    };
    drop(release_w);
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &raw mut status, 0) };
    crate::containment::release_pid(pid);
    made
}

/// The namespaces of the (waiting) child `pid`, and its proxy socket.
fn open_all(pid: i32, plan: &NamespacePlan, listener: i32) -> Result<Namespaces, PrepareError> {
    let err = |e: std::io::Error| fail("keeping the sandbox's namespaces", e);
    let open = |kind: &str| {
        let path = CString::new(format!("/proc/{pid}/ns/{kind}")).expect("no NUL");
        // SAFETY: open(2) of a NUL-terminated path; the descriptor is ours.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            Err(err(std::io::Error::last_os_error()))
        } else {
            // SAFETY: a fresh descriptor.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    let proxy_listener = if listener >= 0 {
        let pidfd =
            crate::sys::pidfd_open(pid).ok_or_else(|| err(std::io::Error::last_os_error()))?;
        // SAFETY: pidfd_getfd copies a descriptor of our own child into our table.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), listener, 0) };
        if fd < 0 {
            return Err(err(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor.
        Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    } else {
        None
    };
    Ok(Namespaces {
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

/// What a refused step means, and how to proceed.
fn refused(step: i32, errno: i32) -> PrepareError {
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
        _ => {
            "to make the sandbox's read-only view of the file system (a writable root on a mount it cannot make writable?)"
        }
    };
    PrepareError(format!(
        "the kernel refused {what}: {reason}; run with --sandbox off to go without"
    ))
}
