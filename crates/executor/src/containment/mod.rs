//! No survivors: a containment group per call, and one way to end it.
//!
//! Every call (one-shot, PTY, background job, session shell) runs in a [`CallGroup`]:
//! - a **cgroup** of its own where one can be made (v2 with `cgroup.kill`, else the v1
//!   `freezer`; see `cgroup.rs`). The child joins it before it execs, so every descendant is in
//!   it whatever it does — `setsid`, double fork, `env -i`. Ending the call is killing the
//!   cgroup; "no survivors" is an empty cgroup; the count of survivors is exact; no `/proc`
//!   scan is ever needed. The same group will carry resource limits.
//! - else a **PID namespace** of its own, made through an unprivileged user namespace
//!   (`pidns.rs`): every process the call starts stays in it, its init reaps them, and killing
//!   the init ends them all — `setsid`, double fork and `env -i` included; its members are
//!   counted exactly by their namespace.
//! - else (user namespaces refused) the **process group + marker** fallback (`scan.rs`): the
//!   command leads its own process group and every process it starts inherits
//!   `AGENT_EXEC_CALL=<id>`; a process that leaves both escapes it (said in `warnings`).
//!
//! [`Termination`] is the one TERM → grace → KILL state machine (with SIGCONT, so stopped
//! processes can act on TERM), driven either from a supervise loop or by [`end_members`].
//!
//! When the `agent-exec` binary is a child subreaper ([`become_subreaper`]), orphans come back
//! to it and are reaped at once. [`start_watchdog`] makes the death of the whole process
//! (kill -9, OOM) end every group it made.

mod cgroup;
pub(crate) mod lifeline;
mod limits;
mod scan;
mod watchdog;

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use crate::sys;
use crate::wait::{KILLED_WAIT, wait_until};

use crate::pids::{SPAWNING, supervised};

pub use cgroup::CONTAINMENT_VAR;
pub use limits::{LimitFallback, LimitKind, LimitUnavailable, Limits};
pub(crate) use limits::{LimitGroup, WATCH_EVERY, Watcher};
pub use watchdog::start_watchdog;

pub use crate::pids::{become_subreaper, is_subreaper};
pub use scan::MARKER_VAR;

/// The mechanism that contains a call's processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupKind {
    /// A cgroup v2 of its own, ended with `cgroup.kill`.
    CgroupV2,
    /// A cgroup of the v1 `freezer` hierarchy, ended by freeze → kill → thaw.
    CgroupV1,
    /// Its process group plus the marker variable (no cgroup could be made, nor a user
    /// namespace).
    ProcessGroup,
    /// A PID namespace of its own, in an unprivileged user namespace (no cgroup could be made).
    PidNamespace,
}

/// Which containment a call asks for. Where the cgroup asked for cannot be made, the call
/// falls back to the process group; [`ExecOutcome::containment`](crate::ExecOutcome) says
/// which was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Containment {
    /// A cgroup where one can be made (v2, else v1), else the process group (the default).
    /// The environment variable `AGENT_EXEC_CONTAINMENT` (`auto`, `cgroup2`, `cgroup1`,
    /// `pgroup`) narrows the choice for the whole process.
    #[default]
    Auto,
    /// A cgroup v2.
    CgroupV2,
    /// A cgroup of the v1 freezer hierarchy.
    CgroupV1,
    /// The process group + marker only.
    ProcessGroup,
    /// A PID namespace of its own (where user namespaces are allowed), without a cgroup.
    PidNamespace,
}

static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

/// The mechanism calls of this process get by default ([`Containment::Auto`]).
pub fn default_kind() -> GroupKind {
    match cgroup::default_base().map(|b| b.version) {
        Some(cgroup::Version::V2) => GroupKind::CgroupV2,
        Some(cgroup::Version::V1Freezer) => GroupKind::CgroupV1,
        None if pid_namespaces(Containment::Auto) => GroupKind::PidNamespace,
        None => GroupKind::ProcessGroup,
    }
}

/// Whether a call of `containment` without a cgroup gets a PID namespace: where user
/// namespaces are allowed, unless `AGENT_EXEC_CONTAINMENT=pgroup` forces the plain fallback.
fn pid_namespaces(containment: Containment) -> bool {
    let wanted = match containment {
        Containment::Auto => !matches!(
            std::env::var(CONTAINMENT_VAR).as_deref(),
            Ok("pgroup" | "none" | "off")
        ),
        Containment::PidNamespace => true,
        _ => false,
    };
    wanted && crate::pidns::available()
}

/// Removes the empty cgroups this process keeps for reuse, and its own cgroup directory when
/// nothing else is in it. For embedders; the `agent-exec` binary's watchdog does it at exit.
pub fn cleanup() {
    cgroup::remove_pooled();
    limits::cleanup();
    for version in [cgroup::Version::V2, cgroup::Version::V1Freezer] {
        if let Some(dir) = cgroup::process_dir(version, std::process::id() as i32) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// At a normal exit, once every call, session and job has ended: [`cleanup`], and when that
/// left no cgroup directory of this process behind, the watchdog is told it has nothing to
/// end (so it exits at once rather than sweeping). Then the watchdog is ended and reaped, so
/// that it is never left a zombie to a parent that does not reap. Call it last: later calls
/// run without a watchdog.
pub fn release_at_exit() {
    cleanup();
    crate::sandbox::remove_temp_at_exit();
    let me = std::process::id() as i32;
    let left = [cgroup::Version::V2, cgroup::Version::V1Freezer]
        .into_iter()
        .any(|v| cgroup::process_dir(v, me).is_some_and(|d| d.exists()));
    if !left && limits::nothing_left() {
        lifeline::nothing_left();
    }
    lifeline::end_and_reap();
}

/// One call's processes, and how to end them.
#[derive(Debug)]
pub(crate) struct CallGroup {
    marker: String,
    cgroup: Option<cgroup::Cgroup>,
    /// The process group the call's first process leads (0 until it is spawned).
    leader: AtomicI32,
    /// Without a cgroup: its processes start in a PID namespace of their own.
    pid_namespace: bool,
    /// Those namespaces, once made (one per process spawned in the group).
    namespaces: Mutex<Vec<crate::pidns::Namespace>>,
    /// Its resource limits (cgroups to join, rlimits), if any.
    pub(crate) limits: LimitGroup,
}

impl CallGroup {
    /// A fresh group: a cgroup where one can be made, else the process-group fallback.
    pub(crate) fn new(containment: Containment) -> CallGroup {
        // The process's name carries its PID namespace: an agent-exec of an enclosing
        // namespace with the same pid never takes this call's processes for its own.
        let marker = format!(
            "{}-{}",
            crate::sys::process_name(std::process::id() as i32),
            NEXT_CALL.fetch_add(1, Ordering::Relaxed)
        );
        let base = match containment {
            Containment::Auto => cgroup::default_base(),
            Containment::CgroupV2 => cgroup::base(cgroup::Version::V2),
            Containment::CgroupV1 => cgroup::base(cgroup::Version::V1Freezer),
            Containment::ProcessGroup | Containment::PidNamespace => None,
        };
        let cgroup = base.and_then(|b| cgroup::Cgroup::take(b).ok());
        let pid_namespace = cgroup.is_none() && pid_namespaces(containment);
        // Only a process group needs the watchdog's marker scan: a PID namespace's processes
        // all die with its init, which the watchdog kills.
        if cgroup.is_none() && !pid_namespace {
            lifeline::fallback_in_use();
        }
        CallGroup {
            marker,
            pid_namespace,
            cgroup,
            leader: AtomicI32::new(0),
            namespaces: Mutex::new(Vec::new()),
            limits: LimitGroup::default(),
        }
    }

    /// Applies `limits` to the call (before its first process is spawned); an error names a
    /// limit this machine cannot enforce.
    pub(crate) fn set_limits(&mut self, limits: &Limits) -> Result<(), LimitUnavailable> {
        if limits.any() {
            self.limits = LimitGroup::new(limits, self.pid_namespace)?;
        }
        Ok(())
    }

    /// Which limit ended or hampered the call (once it is over).
    pub(crate) fn limit_hit(&self, status: Option<crate::ExitStatus>) -> Option<LimitKind> {
        self.limits.hit(status)
    }

    /// The child could not join the cgroup: this call (and, from now on, every call) uses
    /// the next mechanism. The cgroup is empty; it is removed.
    pub(crate) fn abandon_cgroup(&mut self) {
        if let Some(cg) = self.cgroup.take() {
            cgroup::mark_unjoinable(cg.version());
            let _ = std::fs::remove_dir(&cg.dir);
            let next = cgroup::default_base().and_then(|b| cgroup::Cgroup::take(b).ok());
            if next.is_none() {
                lifeline::fallback_in_use();
            }
            self.cgroup = next;
        }
    }

    pub(crate) fn kind(&self) -> GroupKind {
        match self.cgroup.as_ref().map(cgroup::Cgroup::version) {
            Some(cgroup::Version::V2) => GroupKind::CgroupV2,
            Some(cgroup::Version::V1Freezer) => GroupKind::CgroupV1,
            None if self.pid_namespace => GroupKind::PidNamespace,
            None => GroupKind::ProcessGroup,
        }
    }

    /// A PID namespace could not be made after all: this call, and every later one, uses the
    /// process group.
    pub(crate) fn abandon_pid_namespace(&mut self) {
        crate::pidns::mark_unavailable();
        self.pid_namespace = false;
        // Only the marker scan finds what a process group lets go.
        lifeline::fallback_in_use();
    }

    /// The call's watched limits (`limits::Watcher`), counted from now.
    pub(crate) fn watcher(&self) -> Option<Watcher<'_>> {
        self.limits
            .watcher(self.pid_namespace.then_some(&self.namespaces))
    }

    /// Whether its processes start in a PID namespace of their own (`pidns.rs`).
    pub(crate) fn wants_pid_namespace(&self) -> bool {
        self.pid_namespace
    }

    /// Records the PID namespace a process of the call was started in.
    pub(crate) fn add_namespace(&self, namespace: crate::pidns::Namespace) {
        lifeline::register_process(namespace.init());
        self.namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(namespace);
    }

    fn namespaces(&self) -> MutexGuard<'_, Vec<crate::pidns::Namespace>> {
        self.namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The value of [`MARKER_VAR`] for this call.
    pub(crate) fn marker(&self) -> &str {
        &self.marker
    }

    /// The descriptor the child writes `0` to before it execs, to join the cgroup.
    pub(crate) fn join_fd(&self) -> Option<RawFd> {
        self.cgroup.as_ref().map(cgroup::Cgroup::join_fd)
    }

    /// The cgroup v2 directory a child can be created in (`CLONE_INTO_CGROUP`).
    pub(crate) fn cgroup_dir_fd(&self) -> Option<RawFd> {
        self.cgroup.as_ref().and_then(cgroup::Cgroup::dir_fd)
    }

    /// Records the process group the call's first process leads.
    pub(crate) fn set_leader(&self, pgid: i32) {
        self.leader.store(pgid, Ordering::SeqCst);
        // In a PID namespace the watchdog kills its init instead (`add_namespace`).
        if self.cgroup.is_none() && !self.pid_namespace {
            lifeline::register_group(pgid);
        }
    }

    fn leader(&self) -> Option<i32> {
        Some(self.leader.load(Ordering::SeqCst)).filter(|&p| p > 0)
    }

    /// The call's live processes, except `spare`.
    pub(crate) fn members(&self, spare: Option<i32>) -> Vec<i32> {
        let namespaces = self.namespaces();
        let mut live = match &self.cgroup {
            Some(cg) => cg.pids(),
            None if !namespaces.is_empty() => namespaces
                .iter()
                .flat_map(crate::pidns::Namespace::members)
                .collect(),
            None => {
                let (live, zombies) = scan::members(self.leader(), &self.marker);
                reap(&zombies);
                live
            }
        };
        live.retain(|&p| Some(p) != spare);
        live
    }

    /// Sends `signal` to every process of the call but `spare` (and SIGCONT after it, so a
    /// stopped process can act on it).
    pub(crate) fn signal(&self, signal: Signal, spare: Option<i32>) {
        // Not in a PID namespace: the leader was reaped by the namespace's init, so its pid
        // (and group id) may be another process's by now; its members are found by namespace.
        if self.cgroup.is_none()
            && !self.pid_namespace
            && spare.is_none()
            && let Some(pgid) = self.leader()
        {
            send_group(pgid, signal);
        }
        for pid in self.members(spare) {
            send(pid, signal);
        }
    }

    /// SIGKILL to every process of the call but `spare`.
    pub(crate) fn kill(&self, spare: Option<i32>) {
        match (&self.cgroup, spare) {
            (Some(cg), None) => cg.kill(),
            (None, None) => {
                self.signal(Signal::SIGKILL, None);
                for namespace in self.namespaces().iter() {
                    namespace.kill_all();
                }
            }
            _ => self.signal(Signal::SIGKILL, spare),
        }
    }
}

impl Drop for CallGroup {
    fn drop(&mut self) {
        match self.cgroup.take() {
            Some(cg) => cg.give_back(),
            None => {
                if let Some(pgid) = self.leader().filter(|_| !self.pid_namespace) {
                    lifeline::unregister_group(pgid);
                }
                for namespace in self.namespaces().drain(..) {
                    namespace.kill_all();
                    lifeline::unregister_process(namespace.init());
                }
            }
        }
    }
}

fn send(pid: i32, signal: Signal) {
    let _ = kill(Pid::from_raw(pid), signal);
    if signal != Signal::SIGKILL {
        let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
    }
}

fn send_group(pgid: i32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pgid), signal);
    if signal != Signal::SIGKILL {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGCONT);
    }
}

/// Reaps those of `pids` that are our children and not owned by a supervisor.
fn reap(pids: &[i32]) {
    let owned = supervised().clone();
    for &pid in pids {
        if !owned.contains(&pid) {
            let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Reaps zombie children nobody owns (orphans re-parented to us as subreaper). One `waitid`
/// when there are none. Skipped while a spawn is between its fork and its registration.
pub(crate) fn reap_orphans() {
    let Ok(_exclusive) = SPAWNING.try_write() else {
        return;
    };
    loop {
        // Raw `waitid`: the pid of what it found is all that is needed, and neither rustix
        // (its status has no pid) nor nix (it fails on a death by a real-time signal) gives it
        // for every child.
        // SAFETY: siginfo_t is plain data; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: WNOWAIT only looks; info is a valid out-pointer.
        let r = unsafe {
            libc::waitid(
                libc::P_ALL,
                0,
                &raw mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: si_pid is valid for SIGCHLD-kind siginfo, which waitid fills (0 when none).
        let pid = unsafe { info.si_pid() };
        if r < 0 || pid <= 0 {
            return;
        }
        if supervised().contains(&pid) {
            break;
        }
        let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
    }
    // An owned zombie (its owner has not waited yet) hides the others from `waitid`: list our
    // children and reap the unowned zombies among them.
    let owned = supervised().clone();
    for pid in scan::children() {
        if !owned.contains(&pid) && sys::proc_stat(pid).is_some_and(|s| s.zombie) {
            let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// TERM → grace → KILL for a group, as a state machine a supervise loop can drive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Termination {
    spare: Option<i32>,
    kill_at: Instant,
    killed: bool,
}

impl Termination {
    /// Sends SIGTERM (and SIGCONT) to the group, sparing `spare`.
    pub(crate) fn begin(group: &CallGroup, spare: Option<i32>, grace: Duration) -> Termination {
        group.signal(Signal::SIGTERM, spare);
        Termination {
            spare,
            kill_at: Instant::now() + grace,
            killed: false,
        }
    }

    /// Escalates to SIGKILL once the grace period is over. Returns when to call again.
    pub(crate) fn tick(&mut self, group: &CallGroup, now: Instant) -> Instant {
        if now >= self.kill_at {
            group.kill(self.spare);
            self.killed = true;
            // Again later: in the fallback, a process forked meanwhile is only found by a scan.
            self.kill_at = now + Duration::from_millis(100);
        }
        self.kill_at
    }

    /// Whether SIGKILL was sent.
    pub(crate) fn killed(&self) -> bool {
        self.killed
    }
}

/// Ends every process of the group still running but `spare`: TERM, up to `grace`, then
/// KILL (or goes on with `ongoing`). Returns how many were running.
pub(crate) fn end_members(
    group: &CallGroup,
    spare: Option<i32>,
    grace: Duration,
    ongoing: Option<Termination>,
) -> usize {
    let live = group.members(spare);
    let count = live.len();
    if count > 0 {
        let mut termination = ongoing
            .filter(|t| t.spare == spare)
            .unwrap_or_else(|| Termination::begin(group, spare, grace));
        let mut give_up: Option<Instant> = None;
        // No bound of its own: the grace, then [`KILLED_WAIT`] once SIGKILL was sent.
        wait_until(Duration::MAX, Duration::from_millis(2), || {
            reap(&live);
            if group.members(spare).is_empty() {
                return true;
            }
            let now = Instant::now();
            termination.tick(group, now);
            // A process in uninterruptible sleep cannot be waited for forever.
            termination.killed() && now >= *give_up.get_or_insert(now + KILLED_WAIT)
        });
        reap(&live);
    }
    reap_orphans();
    count
}
