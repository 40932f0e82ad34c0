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
//! - **Files** (Landlock, `rules.rs`): everything readable except `/dev` (only the harmless
//!   devices) and the deny-read paths; writable only the writable roots (`workspace-write`)
//!   and a private temporary directory (`TMPDIR`, `tmp.rs`), so a write to `/tmp` itself fails.
//!   Landlock resolves every path it checks — symlinks, `..`, `/proc/self/root` — and refuses
//!   links and renames that would give a file more access than it has.
//! - **Namespaces** (`namespaces.rs`): a user namespace (so even root keeps no capability over
//!   the host), a mount namespace with a read-only view of everything but the writable roots
//!   (no `chmod`, `chown`, `utime` outside them either) and git's hooks and config read-only,
//!   and with the network off a network namespace with only its own loopback — the allowed
//!   hosts are reached through agent-exec's proxy (`proxy.rs`) listening inside it.
//! - **System calls** (`seccomp.rs`): mounts, namespaces, `chroot`, modules, `io_uring`, `bpf`,
//!   `open_by_handle_at`, keyrings, clocks, reboot, terminal input injection and (network off)
//!   Unix sockets are refused; Landlock scopes signals, ptrace and abstract Unix sockets to the
//!   sandbox.

mod error;
mod gitdirs;
mod mounts;
mod namespaces;
mod proxy;
mod rules;
mod seccomp;
mod sockets;
mod tmp;

/// Removes this process's private temporary directories (at a normal exit, once every call
/// has ended).
pub(crate) fn remove_temp_at_exit() {
    tmp::remove_at_exit();
}

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rustix::io::Errno;

pub(crate) use error::{PrepareError, fail};
pub use error::{Remedy, Unenforceable};

/// How much a call may write: the contract's modes, defined once in `agent-exec-protocol`.
pub use agent_exec_protocol::SandboxMode;

/// Whether a sandboxed call may use the network.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
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
    /// Writable roots that are toolchains' caches (in `workspace-write`): walked for git
    /// directories to protect only a few levels down (see `gitdirs.rs`), and a host socket
    /// in one is hidden (`sockets.rs`).
    pub caches: Vec<PathBuf>,
    /// Paths no process of the call may read (nor write, remove or replace; their directory
    /// stays writable). Denied through every mount that shows them.
    pub deny_read: Vec<PathBuf>,
    /// Paths inside the writable roots that stay read-only (and cannot be removed or
    /// replaced): the artifact store, say, when it lies in the workspace.
    pub read_only: Vec<PathBuf>,
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
                .chain(self.caches.iter().cloned())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The writable roots whose git directories are protected: all but the caches.
    fn walked_roots(&self) -> Vec<PathBuf> {
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

    /// Why a sandbox cannot be enforced here, if it cannot: what is missing (the way on is
    /// the [`Unenforceable::remedy`], which `agent-exec-core`'s render words for the model).
    pub fn unenforceable(&self) -> Option<Unenforceable> {
        if self.landlock_abi < LANDLOCK_ABI {
            let found = if self.landlock_abi > 0 {
                format!("ABI {}", self.landlock_abi)
            } else {
                "missing".to_owned()
            };
            return Some(Unenforceable::new(
                format!(
                    "the kernel's Landlock is {found} but the sandbox needs ABI {LANDLOCK_ABI} (Linux 6.12 or newer, with `landlock` in the `lsm=` boot list)"
                ),
                Remedy::GoWithout,
            ));
        }
        if !self.seccomp {
            return Some(Unenforceable::new(
                "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)".to_owned(),
                Remedy::GoWithout,
            ));
        }
        if !self.user_namespaces {
            return Some(Unenforceable::new(
                "user namespaces are disabled here and the sandbox needs one (for its read-only view of the file system)".to_owned(),
                Remedy::EnableUserNamespaces,
            ));
        }
        None
    }
}

/// The home directory of the account we run as, from the password database (`$HOME` may
/// name another: the credentials under the account's own home must stay unreadable too).
pub fn account_home() -> Option<PathBuf> {
    let uid = nix::unistd::Uid::from_raw(rustix::process::geteuid().as_raw());
    let dir = nix::unistd::User::from_uid(uid).ok()??.dir;
    dir.is_absolute().then_some(dir)
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
        let root = rustix::process::geteuid().is_root();
        let unprivileged_ok = read_number("/proc/sys/kernel/unprivileged_userns_clone")
            .unwrap_or(1)
            != 0
            && read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").unwrap_or(0)
                == 0;
        let user_namespaces = read_number("/proc/sys/user/max_user_namespaces").unwrap_or(0) > 0
            && (root || unprivileged_ok)
            && user_namespace_works();
        Support {
            landlock_abi: abi.max(0) as i32,
            seccomp,
            user_namespaces,
            root,
        }
    })
}

/// Whether a user and mount namespace can be made and our ids mapped in it, tried by a
/// throwaway child: the sysctls do not tell everything (a container's seccomp profile refuses
/// `unshare` whatever they say).
fn user_namespace_works() -> bool {
    let maps = namespaces::id_maps();
    crate::pids::child_succeeds(|| {
        use rustix::fs::{Mode, OFlags};
        use rustix::thread::UnshareFlags;
        let write = |(path, content): &(std::ffi::CString, Vec<u8>)| {
            let flags = OFlags::WRONLY | OFlags::CLOEXEC;
            rustix::fs::open(path.as_c_str(), flags, Mode::empty())
                .and_then(|fd| rustix::io::write(&fd, content))
                .is_ok()
        };
        // SAFETY: a throwaway forked child, which exits right after without running the
        // parent's exit handlers: no one else's namespaces or descriptors change.
        unsafe {
            let made = rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS)
                .is_ok()
                && maps.iter().all(write);
            libc::_exit(i32::from(!made))
        }
    })
}

/// What every call of one spec shares, made once and reused for [`REUSE`]: the Landlock
/// ruleset, the seccomp program, the namespaces (see `namespaces.rs`), the temporary area and,
/// with allowed hosts, the proxy serving the network namespace.
#[derive(Debug)]
struct Shared {
    ruleset: OwnedFd,
    /// What each call's own Landlock layer grants (see `rules::call_layer`).
    write_grants: rules::WriteGrants,
    filter: Vec<seccomp::Instruction>,
    namespaces: namespaces::Namespaces,
    area: tmp::Area,
    /// Serving the network namespace while the spec's calls may use it.
    proxy: Option<proxy::Proxy>,
}

/// A sandbox ready to enter: made by the parent, entered by the child (see the module doc).
/// Dropping it gives the call's private temporary directory back.
#[derive(Debug)]
pub(crate) struct Prepared {
    shared: Arc<Shared>,
    tmp: PathBuf,
    /// The call's own Landlock layer: its `TMPDIR` and no other call's.
    call_layer: OwnedFd,
    /// The call's containment ends every process it starts (a cgroup, a PID namespace): its
    /// temporary directory may serve a later call. Set once it is started.
    pub(crate) contained_exactly: bool,
    /// Variables the confined process gets (`TMPDIR`, the proxy's).
    pub(crate) env: Vec<(OsString, OsString)>,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        self.shared
            .area
            .give_back(std::mem::take(&mut self.tmp), self.contained_exactly);
    }
}

/// Whether this kernel enforces `spec` here: `Err` with the reason when it refuses what every
/// sandbox of these writable roots needs (no Landlock, no user namespace, a root it cannot make
/// writable — `/` in a container, say). A failure that depends on what the roots hold is not
/// reported here: the call itself fails on it (closed). The work is what the call does first
/// (and is kept for it: see [`REUSE`]), so asking costs nothing more.
pub fn enforceable(spec: &SandboxSpec) -> Result<(), Unenforceable> {
    if let Some(missing) = support().unenforceable() {
        return Err(missing);
    }
    match shared(spec) {
        Err(e) if e.refused_by_kernel => Err(Unenforceable::new(
            e.reason,
            e.remedy.unwrap_or(Remedy::GoWithout),
        )),
        _ => Ok(()),
    }
}

/// Prepares `spec` for one process (and everything it starts).
pub(crate) fn prepare(spec: &SandboxSpec) -> Result<Prepared, PrepareError> {
    let support = support();
    if let Some(missing) = support.unenforceable() {
        return Err(PrepareError::kernel(missing));
    }
    let shared = shared(spec)?;
    let tmp = shared
        .area
        .take()
        .map_err(|e| fail("the private temporary directory", e))?;
    let call_layer = match rules::call_layer(&shared.write_grants, &tmp)
        .and_then(|fd| crate::sys::above_child_fds(fd).map_err(|e| fail("the call's layer", e)))
    {
        Ok(layer) => layer,
        Err(e) => {
            tmp::remove(&tmp);
            return Err(e);
        }
    };
    let mut env: Vec<(OsString, OsString)> = ["TMPDIR", "TMP", "TEMP"]
        .iter()
        .map(|name| (OsString::from(name), tmp.clone().into_os_string()))
        .collect();
    if shared.proxy.is_some() {
        let url = OsString::from(format!("http://127.0.0.1:{}", namespaces::PROXY_PORT));
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
    }
    Ok(Prepared {
        shared,
        tmp,
        call_layer,
        contained_exactly: false,
        env,
    })
}

/// How long what a spec's calls share is reused. The ruleset lists the entries of the
/// directories around the deny-read paths (`/`, `~`) and the mounts name the git directories
/// that exist: an entry or repository made later is covered once they are rebuilt. Building
/// them costs ~2 ms here (the ruleset a third, the child that makes the namespaces the rest).
/// A session's shell and a job keep what they started with.
const REUSE: Duration = Duration::from_secs(5);

/// The shared part of `spec`'s sandbox, made or reused.
fn shared(spec: &SandboxSpec) -> Result<Arc<Shared>, PrepareError> {
    type Cache = HashMap<SandboxSpec, (Instant, Arc<Shared>)>;
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((made, shared)) = cache.get(spec)
        && made.elapsed() < REUSE
    {
        return Ok(shared.clone());
    }
    let area = tmp::Area::new().map_err(|e| fail("the private temporary directory", e))?;
    let writable = canonical_existing(&spec.writable_roots());
    let mut deny = protected_paths(&spec.deny_read, &writable, &spec.writable_roots())?;
    let aliases = mounts::aliases(&deny).map_err(PrepareError::new)?;
    deny.extend(canonical_existing(&aliases));
    deny.sort();
    deny.dedup();
    // Under a writable root a deny-read path is hidden by a mount (`namespaces.rs`);
    // elsewhere it is left out of Landlock's read rules.
    let (masked, deny): (Vec<PathBuf>, Vec<PathBuf>) = deny
        .into_iter()
        .partition(|p| writable.iter().any(|root| p.starts_with(root)));
    let read_only = protected_paths(&spec.read_only, &writable, &spec.writable_roots())?;
    let git = gitdirs::find(
        &canonical_existing(&spec.walked_roots()),
        &canonical_existing(&spec.caches),
    )
    .map_err(PrepareError::new)?;
    let (mask_file, mask_dir) = area.masks();
    let network_off = spec.network == NetworkMode::Off;
    let proxied = network_off && !spec.allow_hosts.is_empty();
    // With the network off no Unix socket can be made at all (`seccomp.rs`).
    let sockets = if network_off {
        Vec::new()
    } else {
        // The sandbox's own sockets live in the workspace and its TMPDIR; one in a cache is a
        // daemon's (git's credential cache).
        sockets::host_sockets(&canonical_existing(&spec.walked_roots()), &area.dir)
    };
    let inputs = namespaces::MountInputs {
        writable: &writable,
        tmp_area: &area.dir,
        read_only: &read_only,
        git: &git,
        masked: &masked,
        masks: (&mask_file, &mask_dir),
        sockets: &sockets,
    };
    let plan = namespaces::NamespacePlan::new(&inputs, network_off, proxied);
    let mut namespaces = namespaces::make(&plan)?;
    let (ruleset, write_grants) =
        rules::ruleset(&writable, &area.dir, &deny, namespaces.shm.as_ref())?;
    let ruleset = crate::sys::above_child_fds(ruleset).map_err(|e| fail("the ruleset", e))?;
    let proxy = match namespaces.proxy_listener.take() {
        Some(listener) => {
            Some(proxy::serve(listener, &spec.allow_hosts).map_err(|e| fail("the proxy", e))?)
        }
        None => None,
    };
    let shared = Arc::new(Shared {
        ruleset,
        write_grants,
        filter: seccomp::filter(network_off),
        namespaces,
        area,
        proxy,
    });
    cache.retain(|_, (made, _)| made.elapsed() < REUSE);
    cache.insert(spec.clone(), (Instant::now(), shared.clone()));
    Ok(shared)
}

/// The canonical forms of paths the sandbox keeps from its calls (deny-read, read-only). One
/// that does not exist is skipped; one under a writable root that cannot be resolved fails
/// closed: there only a mount hides or holds it, and a call that made an ancestor unreadable
/// (`chmod 000`) would otherwise have it left bare by the next rebuild. (Ancestors are pinned,
/// so none can be renamed away: `namespaces.rs`.)
fn protected_paths(
    paths: &[PathBuf],
    writable: &[PathBuf],
    writable_as_given: &[PathBuf],
) -> Result<Vec<PathBuf>, PrepareError> {
    let mut out = Vec::new();
    for path in paths {
        match std::fs::canonicalize(path) {
            Ok(real) => out.push(real),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                let under_writable = writable
                    .iter()
                    .chain(writable_as_given)
                    .any(|root| path.starts_with(root));
                if under_writable {
                    return Err(PrepareError::new(format!(
                        "{} cannot be resolved ({e}), so the sandbox cannot keep it from the command; restore the permissions of the directories above it",
                        path.display()
                    )));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
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

/// errno as a libc wrapper left it.
fn last_errno() -> Errno {
    Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

impl Prepared {
    /// The sandbox's user namespace (for a PID namespace made inside it, `pidns.rs`).
    pub(crate) fn user_namespace(&self) -> std::os::fd::BorrowedFd<'_> {
        self.shared.namespaces.user.as_fd()
    }

    /// Enters the sandbox: the spec's namespaces (user first, unless the caller is in it
    /// already: it gives the rights to join the others), then Landlock, then seccomp. Called by the child between clone and exec: only
    /// system calls on prepared data (no allocation). Joining a mount namespace moves the cwd
    /// to its root: the caller enters the cwd after. On failure, errno says why.
    ///
    /// Only in a freshly cloned child that will exec or `_exit` next: it changes the whole
    /// process's namespaces and confinement for good.
    pub(crate) fn enter(&self, user_entered: bool) -> Result<(), Errno> {
        use rustix::thread::{LinkNameSpaceType, UnshareFlags, move_into_link_name_space};
        let shared = &*self.shared;
        let ns = &shared.namespaces;
        if !user_entered {
            move_into_link_name_space(ns.user.as_fd(), Some(LinkNameSpaceType::User))?;
        }
        // An IPC namespace of the call's own (made here, owned by the user namespace just
        // joined): no SysV object or POSIX message queue of the host's can be opened, none
        // the call makes is seen by another, and all go with the call's last process.
        // SAFETY: a new IPC namespace changes no memory or descriptor of this process.
        unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWIPC)? };
        if let Some(net) = &ns.network {
            move_into_link_name_space(net.as_fd(), Some(LinkNameSpaceType::Network))?;
        }
        move_into_link_name_space(ns.mount.as_fd(), Some(LinkNameSpaceType::Mount))?;
        // Landlock and seccomp both need no_new_privs (no setuid gain either).
        rustix::thread::set_no_new_privs(true)?;
        for layer in [&shared.ruleset, &self.call_layer] {
            // SAFETY: a system call rustix has no wrapper for, on a descriptor we hold.
            let r =
                unsafe { libc::syscall(libc::SYS_landlock_restrict_self, layer.as_raw_fd(), 0) };
            if r < 0 {
                return Err(last_errno());
            }
        }
        seccomp::install(&shared.filter)
    }
}
