//! The sandbox: what a call's processes may read, write and reach, enforced by the kernel.
//!
//! Everything is prepared in the parent — a Landlock ruleset (as a descriptor), the seccomp
//! programs, the mounts of a private mount namespace — and entered by the child between the
//! clone and the exec ([`Prepared::enter`], called from `process.rs`). The child only makes
//! system calls on that prepared data, so the same spawn path that starts every process (a
//! piped command, a PTY, a job, a session shell) confines it, and nothing it starts can leave:
//! Landlock domains, seccomp filters and mount namespaces are inherited and cannot be dropped.
//! No re-executed helper is needed (an extra exec costs ~0.6 ms a call here).
//!
//! - **Files** (Landlock): everything readable except `/dev` (only the harmless devices) and
//!   the deny-read paths; writable only the writable roots (`workspace-write`) and a private
//!   temporary directory (`TMPDIR`), so a write to `/tmp` itself fails. Landlock resolves every
//!   path it checks — symlinks, `..`, `/proc/self/root` — and refuses links and renames that
//!   would give a file more access than it has.
//! - **Namespaces**: a user namespace mapping only our own ids (so even root keeps no
//!   capability over the host: no modules, raw devices, clocks, or other processes' `/proc`
//!   files) and a mount namespace where every mount is read-only but the writable roots and the temporary directory — so
//!   no `chmod`, `chown`, `utime` or `setxattr` reaches a file outside them either (Landlock
//!   governs opening files, not their metadata). `.git/hooks` and `.git/config` under a
//!   writable root are bound read-only, and `.git` itself is pinned by a bind mount, so it
//!   cannot be renamed away and replaced.
//! - **Network** (seccomp): `off` refuses every `socket(2)` — IPv4, IPv6, netlink, packet and
//!   Unix alike (a Unix socket could reach a host service such as a container engine: Landlock
//!   here cannot tell a path inside the sandbox from one outside); `socketpair(2)` still works.
//!   With allowed hosts, TCP sockets may be made but Landlock lets them connect only to the
//!   port of agent-exec's proxy ([`proxy`]), which checks the host.
//! - **Escapes** (seccomp + Landlock): mounts, namespaces, `chroot`, modules, `io_uring` (it
//!   makes sockets past seccomp), `bpf`, `open_by_handle_at`, keyrings, clocks and reboot are
//!   refused; signals and ptrace reach only processes of the same sandbox; abstract Unix
//!   sockets made outside it cannot be reached.

pub mod proxy;
mod seccomp;

use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccomp::Rule;

/// How much a call may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum SandboxMode {
    /// No sandbox.
    #[default]
    Off,
    /// The workspace, the writable roots and a private temporary directory are writable.
    WorkspaceWrite,
    /// Only a private temporary directory is writable.
    ReadOnly,
}

impl SandboxMode {
    /// The contract's name: `off`, `workspace-write`, `read-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }

    /// The mode of a contract name.
    pub fn parse(name: &str) -> Option<SandboxMode> {
        match name {
            "off" => Some(SandboxMode::Off),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "read-only" => Some(SandboxMode::ReadOnly),
            _ => None,
        }
    }
}

/// Whether a sandboxed call may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum NetworkMode {
    /// No sockets (but the allowed hosts, through the proxy).
    #[default]
    Off,
    /// Unrestricted.
    On,
}

impl NetworkMode {
    /// The contract's name: `off` or `on`.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::Off => "off",
            NetworkMode::On => "on",
        }
    }
}

/// What a sandboxed call may do. Paths should be absolute; missing ones are skipped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SandboxSpec {
    /// Never [`SandboxMode::Off`] where a spec is used.
    pub mode: SandboxMode,
    /// The workspace root (writable in `workspace-write`).
    pub workspace: PathBuf,
    /// More writable roots (in `workspace-write`).
    pub writable: Vec<PathBuf>,
    /// Paths no process of the call may read.
    pub deny_read: Vec<PathBuf>,
    /// The network.
    pub network: NetworkMode,
    /// With the network off, hosts (`HOST` or `HOST:PORT`) reachable through the proxy.
    pub allow_hosts: Vec<String>,
}

impl SandboxSpec {
    /// The roots a process of the call may write (besides its private temporary directory).
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        match self.mode {
            SandboxMode::WorkspaceWrite => std::iter::once(self.workspace.clone())
                .chain(self.writable.iter().cloned())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// What this kernel offers for sandboxing, detected once per process.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Support {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i32,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// User namespaces can be made (the sandbox needs one).
    pub user_namespaces: bool,
    /// We run as root.
    pub root: bool,
}

/// The Landlock ABI the sandbox needs: 6 (Linux 6.12) scopes signals and abstract sockets.
const LANDLOCK_ABI: i32 = 6;

impl Support {
    /// One line: `landlock ABI 7, seccomp, user namespaces`.
    pub fn describe(&self) -> String {
        let mut parts = vec![if self.landlock_abi > 0 {
            format!("landlock ABI {}", self.landlock_abi)
        } else {
            "no landlock".to_owned()
        }];
        parts.push(
            if self.seccomp {
                "seccomp"
            } else {
                "no seccomp"
            }
            .to_owned(),
        );
        parts.push(
            if self.user_namespaces {
                "user namespaces"
            } else {
                "no user namespaces"
            }
            .to_owned(),
        );
        parts.join(", ")
    }

    /// Why a sandbox cannot be enforced here, if it cannot (what is missing, how to proceed).
    pub fn missing(&self) -> Option<String> {
        if self.landlock_abi < LANDLOCK_ABI {
            return Some(format!(
                "the kernel's Landlock is {} but the sandbox needs ABI {LANDLOCK_ABI} (Linux 6.12 or newer, with `landlock` in the `lsm=` boot list); run with --sandbox off to go without",
                if self.landlock_abi > 0 {
                    format!("ABI {}", self.landlock_abi)
                } else {
                    "missing".to_owned()
                }
            ));
        }
        if !self.seccomp {
            return Some(
                "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER); run with --sandbox off to go without".to_owned(),
            );
        }
        if !self.user_namespaces {
            return Some(
                "user namespaces are disabled here and the sandbox needs one (for its read-only view of the file system); enable them (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone=1) or run with --sandbox off".to_owned(),
            );
        }
        None
    }
}

/// What this kernel offers (probed on first use).
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        // SAFETY: the version query of landlock_create_ruleset takes no pointer.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32, // LANDLOCK_CREATE_RULESET_VERSION
            )
        };
        let seccomp = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp_filters:")));
        let read_number = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
        };
        // SAFETY: plain getter.
        let root = unsafe { libc::geteuid() } == 0;
        let unprivileged_ok = read_number("/proc/sys/kernel/unprivileged_userns_clone")
            .unwrap_or(1)
            != 0
            && read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").unwrap_or(0)
                == 0;
        let user_namespaces = read_number("/proc/sys/user/max_user_namespaces").unwrap_or(0) > 0
            && (root || unprivileged_ok);
        Support {
            landlock_abi: abi.max(0) as i32,
            seccomp,
            user_namespaces,
            root,
        }
    })
}

/// A step of the child's mount namespace setup.
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

/// What every call of one spec shares, made once and reused for [`REUSE`]: the Landlock
/// ruleset, the seccomp programs, and the namespaces, held by descriptors — a user namespace
/// and, owned by it, the mount namespace with the read-only view. A call's child joins them
/// with two `setns(2)`: copying the mount table and tearing it down again at exit cost
/// ~0.4 ms a call here, joining costs microseconds.
#[derive(Debug)]
struct Shared {
    ruleset: OwnedFd,
    filter: Vec<seccomp::Instruction>,
    user_ns: OwnedFd,
    mount_ns: OwnedFd,
}

/// A sandbox ready to enter: made by the parent, entered by the child (see the module doc).
/// Dropping it removes the call's private temporary directory.
#[derive(Debug)]
pub(crate) struct Prepared {
    shared: Arc<Shared>,
    tmp: PathBuf,
    /// Variables the confined process gets (`TMPDIR`, the proxy's).
    pub(crate) env: Vec<(OsString, OsString)>,
}

/// How the namespaces of a spec are made (in a short-lived child, see [`make_namespaces`]).
struct NamespacePlan {
    /// `(path, content)` written once the user namespace exists: setgroups, uid_map, gid_map.
    id_maps: Vec<(CString, Vec<u8>)>,
    mounts: Vec<MountStep>,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // The call's processes are gone: what they left goes, and an empty directory (what
        // most commands leave) serves the next call.
        let empty = std::fs::read_dir(&self.tmp).is_ok_and(|mut d| d.next().is_none());
        if empty {
            TMP_POOL
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(std::mem::take(&mut self.tmp));
        } else {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// Why a sandbox could not be prepared.
#[derive(Debug)]
pub(crate) struct PrepareError(pub(crate) String);

fn fail(what: &str, e: impl std::fmt::Display) -> PrepareError {
    PrepareError(format!("{what}: {e}"))
}

/// Prepares `spec` for one process (and everything it starts).
pub(crate) fn prepare(spec: &SandboxSpec) -> Result<Prepared, PrepareError> {
    let support = support();
    if let Some(missing) = support.missing() {
        return Err(PrepareError(missing));
    }
    let tmp = private_tmp().map_err(|e| fail("the private temporary directory", e))?;
    let mut env = vec![(OsString::from("TMPDIR"), tmp.clone().into_os_string())];
    let proxy_port = if spec.network == NetworkMode::Off && !spec.allow_hosts.is_empty() {
        let port = proxy::ensure(&spec.allow_hosts).map_err(|e| fail("the proxy", e))?;
        let url = OsString::from(format!("http://127.0.0.1:{port}"));
        for name in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            env.push((name.into(), url.clone()));
        }
        env.push(("NO_PROXY".into(), OsString::new()));
        env.push(("no_proxy".into(), OsString::new()));
        Some(port)
    } else {
        None
    };
    let shared = shared(spec, proxy_port)?;
    Ok(Prepared { shared, tmp, env })
}

/// How long what a spec's calls share is reused. The ruleset lists the entries of the
/// directories around the deny-read paths (`/`, `~`) and the mounts name the `.git`
/// directories that exist: an entry or repository made later is covered once they are
/// rebuilt. Building them costs ~1.5 ms here (a third of it the ruleset, most of the rest
/// the child that makes the namespaces).
const REUSE: Duration = Duration::from_secs(5);

/// The shared part of `spec`'s sandbox, made or reused.
fn shared(spec: &SandboxSpec, proxy_port: Option<u16>) -> Result<Arc<Shared>, PrepareError> {
    type Cache = HashMap<SandboxSpec, (Instant, Arc<Shared>)>;
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((made, shared)) = cache.get(spec)
        && made.elapsed() < REUSE
    {
        return Ok(shared.clone());
    }
    let tmp = tmp_base().map_err(|e| fail("the private temporary directory", e))?;
    let writable = canonical_existing(&spec.writable_roots());
    let deny = canonical_existing(&spec.deny_read);
    let ruleset = ruleset(&writable, tmp, &deny, proxy_port)?;
    let filter = filter(spec.network, proxy_port.is_some());
    // A user namespace for everyone, root included: mounts need one when we are not root,
    // and as root it takes away every capability over the host (modules, raw devices,
    // clocks, other users' processes: their /proc files become unreadable). Only our own ids
    // are mapped, as they are outside.
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let c = |s: &str| CString::new(s).expect("no NUL");
    let plan = NamespacePlan {
        id_maps: vec![
            (c("/proc/self/setgroups"), b"deny".to_vec()),
            (c("/proc/self/uid_map"), format!("{uid} {uid} 1\n").into()),
            (c("/proc/self/gid_map"), format!("{gid} {gid} 1\n").into()),
        ],
        mounts: mount_steps(&writable, tmp),
    };
    let (user_ns, mount_ns) = make_namespaces(&plan)?;
    let shared = Arc::new(Shared {
        ruleset,
        filter,
        user_ns,
        mount_ns,
    });
    cache.insert(spec.clone(), (Instant::now(), shared.clone()));
    Ok(shared)
}

/// Makes the namespaces of `plan` in a forked child and keeps them by descriptor
/// (`/proc/<child>/ns/{user,mnt}`); the child then exits.
fn make_namespaces(plan: &NamespacePlan) -> Result<(OwnedFd, OwnedFd), PrepareError> {
    use std::os::fd::FromRawFd;
    let err = |e: std::io::Error| fail("making the sandbox's namespaces", e);
    let (ready_r, ready_w) = crate::sys::pipe().map_err(err)?;
    let (release_r, release_w) = crate::sys::pipe().map_err(err)?;
    let spawning = crate::containment::SPAWNING
        .read()
        .unwrap_or_else(PoisonError::into_inner);
    // SAFETY: the child makes only system calls on data prepared above, then `_exit`s; it
    // never returns into Rust code (a fork of a threaded process may hold others' locks).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            libc::close(release_w.as_raw_fd());
            let errno: i32 = match plan.build() {
                Ok(()) => 0,
                Err(()) => *libc::__errno_location(),
            };
            libc::write(ready_w.as_raw_fd(), (&raw const errno).cast(), 4);
            let mut byte = 0u8;
            libc::read(release_r.as_raw_fd(), (&raw mut byte).cast(), 1);
            libc::_exit(0);
        }
    }
    if pid < 0 {
        return Err(err(std::io::Error::last_os_error()));
    }
    crate::containment::supervise_pid(pid);
    drop(spawning);
    drop(ready_w);
    drop(release_r);
    let mut errno = [0u8; 4];
    // SAFETY: read(2) into a local buffer.
    let got = unsafe { libc::read(ready_r.as_raw_fd(), errno.as_mut_ptr().cast(), 4) };
    let opened = match (got, i32::from_ne_bytes(errno)) {
        (4, 0) => {
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
            open("user").and_then(|user| Ok((user, open("mnt")?)))
        }
        (4, errno) => {
            let reason = std::io::Error::from_raw_os_error(errno).to_string();
            let reason = reason.split(" (os error").next().unwrap_or(&reason).to_owned();
            Err(PrepareError(format!(
                "the kernel refused to make the sandbox's user and mount namespaces ({reason}): user namespaces may be disabled (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone); run with --sandbox off to go without"
            )))
        }
        _ => Err(err(std::io::Error::last_os_error())),
    };
    drop(release_w);
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &raw mut status, 0) };
    crate::containment::release_pid(pid);
    opened
}

/// This process's directory of private temporary directories (mode 0700), made once.
fn tmp_base() -> std::io::Result<&'static Path> {
    use std::os::unix::fs::DirBuilderExt;
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    if let Some(base) = BASE.get() {
        return Ok(base);
    }
    // SAFETY: plain getter.
    let uid = unsafe { libc::geteuid() };
    let parent = std::env::temp_dir().join(format!("agent-exec-sandbox-{uid}"));
    // Those of agent-exec processes that are gone.
    for entry in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
        let dead = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
        if dead {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let base = parent.join(std::process::id().to_string());
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(&base)?;
    Ok(BASE.get_or_init(|| base))
}

/// Empty private temporary directories of finished calls, ready for the next: a `mkdir` and
/// an `rmdir` cost ~110 µs a call on this machine's disk, a tenth of a one-shot call.
static TMP_POOL: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A fresh, empty directory of ours, mode 0700: the confined process's `TMPDIR`.
fn private_tmp() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let pooled = TMP_POOL
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop();
    if let Some(dir) = pooled {
        // A command may have changed its mode.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        return Ok(dir);
    }
    let dir = tmp_base()?.join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

fn canonical_existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = paths
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Devices a confined process may use (the rest of `/dev` — disks, memory — stays out).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

fn ruleset(
    writable: &[PathBuf],
    tmp: &Path,
    deny: &[PathBuf],
    proxy_port: Option<u16>,
) -> Result<OwnedFd, PrepareError> {
    let abi = ABI::V6;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let file_only = AccessFs::from_file(abi);
    let err = |e: landlock::RulesetError| fail("the Landlock ruleset", e);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(err)?
        .scope(Scope::from_all(abi))
        .map_err(err)?;
    if proxy_port.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    let mut grant =
        |path: &Path, access: landlock::BitFlags<AccessFs>| -> Result<(), PrepareError> {
            let Ok(fd) = PathFd::new(path) else {
                return Ok(()); // gone meanwhile
            };
            let access = if path.is_dir() {
                access
            } else {
                access & file_only
            };
            created
                .as_mut()
                .add_rule(PathBeneath::new(fd, access))
                .map_err(err)?;
            Ok(())
        };
    let mut excluded: Vec<PathBuf> = deny.to_vec();
    excluded.push(PathBuf::from("/dev"));
    let mut listable = Vec::new();
    for path in beneath_except(Path::new("/"), &excluded, &mut listable) {
        grant(&path, read)?;
    }
    for dir in &listable {
        grant(dir, AccessFs::ReadDir.into())?;
    }
    for device in DEVICES {
        grant(
            Path::new(device),
            read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev,
        )?;
    }
    grant(Path::new("/dev/shm"), read)?;
    let mut listable = Vec::new();
    for root in writable.iter().map(PathBuf::as_path).chain([tmp]) {
        for path in beneath_except(root, deny, &mut listable) {
            grant(&path, all)?;
        }
    }
    if let Some(port) = proxy_port {
        created
            .as_mut()
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(err)?;
    }
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| PrepareError("Landlock made no ruleset".to_owned()))
}

/// The trees that together cover `root` but none of `excluded`: `root` itself when nothing
/// excluded is at or below it, else its entries, expanded the same way (Landlock rules only
/// add access, so "all but X" is "each sibling of X and of its ancestors"). Symbolic links are
/// left out — a rule on one would cover its target — and directories expanded are listed in
/// `listable` (a directory's names may be read, not its excluded entries).
fn beneath_except(root: &Path, excluded: &[PathBuf], listable: &mut Vec<PathBuf>) -> Vec<PathBuf> {
    if excluded.iter().any(|x| x == root) {
        return Vec::new();
    }
    if !excluded.iter().any(|x| x.starts_with(root)) {
        return vec![root.to_path_buf()];
    }
    listable.push(root.to_path_buf());
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        out.extend(beneath_except(&entry.path(), excluded, listable));
    }
    out
}

/// The mount namespace of a confined process: every mount read-only (so no write, `chmod`,
/// `chown`, `utime` or `setxattr` reaches a file outside the writable roots — Landlock does
/// not cover metadata), the writable roots and the private temporary directory bound back
/// read-write, and under each writable root `.git` pinned by a bind mount (a mount point
/// cannot be renamed or removed) with its `hooks` and `config` bound read-only.
fn mount_steps(writable: &[PathBuf], tmp: &Path) -> Vec<MountStep> {
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
    let bind = |steps: &mut Vec<MountStep>, path: &CString, read_only: bool| {
        steps.push(MountStep::Mount {
            source: Some(path.clone()),
            target: path.clone(),
            flags: libc::MS_BIND | libc::MS_REC,
        });
        steps.push(MountStep::ReadOnly {
            target: path.clone(),
            read_only,
        });
    };
    for dir in writable.iter().map(PathBuf::as_path).chain([tmp]) {
        if let Some(dir) = c(dir) {
            bind(&mut steps, &dir, false);
        }
    }
    for root in writable {
        let git = root.join(".git");
        if !git.is_dir() || git.is_symlink() {
            continue;
        }
        let Some(git_c) = c(&git) else { continue };
        steps.push(MountStep::Mount {
            source: Some(git_c.clone()),
            target: git_c,
            flags: libc::MS_BIND,
        });
        for name in ["hooks", "config"] {
            let path = git.join(name);
            if path.is_symlink() || !path.exists() {
                continue;
            }
            if let Some(path) = c(&path) {
                bind(&mut steps, &path, true);
            }
        }
    }
    steps
}

/// System calls no confined process needs that could widen or leave the sandbox, or reach
/// the whole machine as root.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_bpf,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_userfaultfd,
    libc::SYS_perf_event_open,
    libc::SYS_syslog,
    libc::SYS_vhangup,
];

/// The namespace flags `clone(2)` may not carry.
const NEW_NAMESPACES: u32 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWCGROUP) as u32;

/// The seccomp program for `network` (`proxied`: with allowed hosts).
fn filter(network: NetworkMode, proxied: bool) -> Vec<seccomp::Instruction> {
    const TCP: &[u32] = &[libc::AF_INET as u32, libc::AF_INET6 as u32];
    let mut rules: Vec<(i64, Rule)> = REFUSED
        .iter()
        .map(|&nr| (nr, Rule::Refuse(libc::EPERM)))
        .collect();
    rules.push((libc::SYS_clone, Rule::FlagsNone(NEW_NAMESPACES)));
    // clone3 passes its flags in memory, out of a filter's sight: ENOSYS makes libc fall back
    // to clone, whose flags are checked.
    rules.push((libc::SYS_clone3, Rule::Refuse(libc::ENOSYS)));
    if network == NetworkMode::Off {
        rules.push((
            libc::SYS_socket,
            if proxied {
                // TCP only (Landlock then lets it connect to the proxy's port alone).
                Rule::Sockets {
                    domains: TCP,
                    stream_only: true,
                }
            } else {
                Rule::Refuse(libc::EPERM)
            },
        ));
    }
    seccomp::program(&rules)
}

impl NamespacePlan {
    /// Makes the namespaces: a user namespace with our ids, a mount namespace with the
    /// read-only view. Run by the forked child of [`make_namespaces`]: only system calls on
    /// prepared data. On failure, errno says why.
    ///
    /// # Safety
    /// Only in a forked child that `_exit`s next.
    unsafe fn build(&self) -> Result<(), ()> {
        // SAFETY: system calls on prepared, NUL-terminated data.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) < 0 {
                return Err(());
            }
            for (path, content) in &self.id_maps {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(());
                }
                let written = libc::write(fd, content.as_ptr().cast(), content.len());
                libc::close(fd);
                if written < 0 {
                    return Err(());
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
                    return Err(());
                }
            }
        }
        Ok(())
    }
}

impl Prepared {
    /// Enters the sandbox: the spec's namespaces, then Landlock, then seccomp. Called by the
    /// child between clone and exec: only system calls on prepared data (no allocation).
    /// Joining a mount namespace moves the cwd to its root: the caller enters the cwd after.
    /// On failure, errno says why.
    ///
    /// # Safety
    /// Only in a freshly cloned child that will exec or `_exit` next.
    pub(crate) unsafe fn enter(&self) -> Result<(), ()> {
        let shared = &*self.shared;
        // SAFETY: system calls on prepared descriptors and data.
        unsafe {
            if libc::setns(shared.user_ns.as_raw_fd(), libc::CLONE_NEWUSER) < 0
                || libc::setns(shared.mount_ns.as_raw_fd(), libc::CLONE_NEWNS) < 0
            {
                return Err(());
            }
            // Landlock and seccomp both need no_new_privs (no setuid gain either).
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
                return Err(());
            }
            if libc::syscall(
                libc::SYS_landlock_restrict_self,
                shared.ruleset.as_raw_fd(),
                0u32,
            ) < 0
            {
                return Err(());
            }
            let prog = libc::sock_fprog {
                len: shared.filter.len() as u16,
                filter: shared.filter.as_ptr().cast_mut(),
            };
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &raw const prog,
            ) < 0
            {
                return Err(());
            }
        }
        Ok(())
    }
}
