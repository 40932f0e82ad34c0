//! Runs plans: one-shot calls, persistent sessions and background jobs. Takes a [`Plan`] and
//! hands back what happened, typed; the pipeline (`tool.rs`) shapes it and `render.rs` writes
//! the words.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_exec_executor::jobs::{
    Attached, Job, JobBody, JobError, JobOutput, JobRegistry, JobStatus,
};
use agent_exec_executor::session::{RcSnapshotError, Session, SessionConfig};
use agent_exec_executor::{
    CancelToken, ExecOutcome, OnWaiting, PreparedShells, SandboxMode, SandboxSpec,
};
use agent_exec_normalize::shell_word;
use agent_exec_sink::{ArtifactStore, Capture, OutputSink, SinkConfig};

use crate::config::Config;
use crate::parts::{NotRun, Note};
use crate::plan::{Lines, Mode, Plan};
use crate::progress::{Observed, Observer};

/// What running a plan came to.
pub(crate) enum Ran {
    /// The command ran (or its program could not be started).
    Executed {
        exec: ExecOutcome,
        capture: Box<Capture>,
        /// The working directory (a session's after the command).
        cwd: PathBuf,
        notes: Vec<Note>,
    },
    /// Nothing ran.
    NotRun { why: NotRun, cwd: PathBuf },
}

#[derive(Debug)]
enum RcSnapshot {
    NotYet,
    Made(PathBuf),
    /// Not made (said once, in the note of the call that tried).
    Failed,
}

/// The longest a user's `~/.bashrc` may take to snapshot (or the call's timeout, if shorter).
const RC_SNAPSHOT_LIMIT: Duration = Duration::from_secs(10);

/// What a call's run gave besides its outcome: what ran (or why nothing did), and the working
/// directory.
pub(crate) type RanParts = (Result<(ExecOutcome, Vec<Note>), NotRun>, PathBuf);

/// A session slot, and what ends its running command from another thread.
struct Handle {
    slot: Mutex<Slot>,
    /// The job a call of this session yielded as: the session is busy until it ends.
    yielded: Mutex<Option<Arc<Job>>>,
    /// Read and written without waiting for the slot (a running call holds it).
    closing: Mutex<Closing>,
}

/// Whether the session was closed, and the live shell's closer (see `Session::closer`).
#[derive(Default)]
struct Closing {
    closed: bool,
    closer: Option<CancelToken>,
}

struct Slot {
    session: Option<Session>,
    last_used: Instant,
    /// Why the previous shell ended, told by the next call.
    ended: Option<agent_exec_executor::session::SessionEnd>,
    cwd: PathBuf,
}

/// Wakes the waiters of a condition variable when dropped.
struct NotifyOnDrop<'a>(&'a std::sync::Condvar);

impl Drop for NotifyOnDrop<'_> {
    fn drop(&mut self) {
        self.0.notify_all();
    }
}

/// Runs plans; owns the configuration, the artifact store, the sessions and the jobs.
pub(crate) struct Runner {
    pub(crate) config: Config,
    pub(crate) store: Option<Arc<ArtifactStore>>,
    pub(crate) store_error: Option<String>,
    sessions: Mutex<HashMap<String, Arc<Handle>>>,
    /// Signalled when a session's call ends or a session is closed: a call waiting for room
    /// under `--max-sessions` looks again.
    session_freed: std::sync::Condvar,
    /// Calls waiting for room under `--max-sessions` (at most twice the limit: each holds a
    /// server worker, which `session_close` and the other calls need too).
    session_waiters: std::sync::atomic::AtomicUsize,
    jobs: JobRegistry,
    session_config: SessionConfig,
    /// Each session's cwd after its last call (read without waiting for a running call).
    cwds: Mutex<HashMap<String, PathBuf>>,
    /// The rc snapshot, made on first use.
    rc: Mutex<RcSnapshot>,
    /// Shells started ahead of one-shot calls (off unless configured).
    prepared: PreparedShells,
    /// What the runs of calls that yielded gave besides their outcome, by job id.
    yielded_parts: Mutex<HashMap<String, Arc<Mutex<Option<RanParts>>>>>,
    /// The connections to remote targets.
    pub(crate) remotes: agent_exec_remote::Remotes,
    /// Each sandbox mode's spec (it follows from the configuration alone) and whether the
    /// kernel enforces it, made once: a call reuses them instead of building and hashing a
    /// spec of many paths.
    sandboxes: Mutex<HashMap<SandboxMode, SandboxOf>>,
    /// When the sessions were last looked at for idle expiry.
    last_sweep: Mutex<Instant>,
}

/// A sandbox mode's spec and the kernel's answer to it.
#[derive(Clone)]
struct SandboxOf {
    spec: Option<Arc<SandboxSpec>>,
    /// `None` until asked (only a default sandbox is asked).
    enforceable: Option<Result<(), agent_exec_executor::sandbox::Unenforceable>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A session's shell is made for its name, its extra environment and its sandbox: a call
/// that differs in either gets a shell of its own.
fn session_key(name: &str, env: &[(String, String)], sandbox: Option<&SandboxSpec>) -> String {
    let mut key = name.to_owned();
    if let Some(sandbox) = sandbox {
        key.push('\0');
        key.push_str(sandbox.mode.as_str());
    }
    for (k, v) in env {
        key.push('\0');
        key.push_str(k);
        key.push('=');
        key.push_str(v);
    }
    key
}

impl Runner {
    pub(crate) fn new(mut config: Config) -> Self {
        // Its own read of the environment, at its first command: not one a clone of its
        // configuration made before (`EnvConfig::inherited`).
        config.env.inherited = agent_exec_executor::env::InheritedCache::default();
        // Made once, so the sandbox can hold it read-only (`Config::held_read_only`).
        if config.sandbox.mode != Some(agent_exec_executor::SandboxMode::Off) {
            let _ = std::fs::create_dir_all(&config.sessions.cache_dir);
        }
        let (store, store_error) = match ArtifactStore::open(&config.artifacts_dir) {
            Ok(s) => (Some(Arc::new(s.with_retention(config.retention))), None),
            Err(e) => (None, Some(format!("artifacts are disabled: {e}"))),
        };
        Runner {
            sessions: Mutex::new(HashMap::new()),
            session_freed: std::sync::Condvar::new(),
            session_waiters: std::sync::atomic::AtomicUsize::new(0),
            jobs: JobRegistry::new(config.jobs),
            session_config: SessionConfig {
                shell: config.shell.clone(),
                env: config.env.clone(),
                extra_env: Vec::new(),
                rc_snapshot: None,
                prefix: config.sessions.command_prefix.clone(),
                containment: agent_exec_executor::Containment::default(),
                sandbox: None,
                limits: agent_exec_executor::Limits::default(),
                prompt_idle: config.prompt_idle,
            },
            cwds: Mutex::new(HashMap::new()),
            rc: Mutex::new(RcSnapshot::NotYet),
            prepared: PreparedShells::new(config.prepared_shells),
            yielded_parts: Mutex::new(HashMap::new()),
            remotes: agent_exec_remote::Remotes::new({
                let mut settings = config.remote.settings.clone();
                settings.serve_args.extend(config.far_side_args());
                settings
            }),
            store,
            store_error,
            sandboxes: Mutex::new(HashMap::new()),
            last_sweep: Mutex::new(Instant::now()),
            config,
        }
    }

    /// The plan of a validated call, with the sandbox of its mode.
    pub(crate) fn plan(&self, validated: crate::validate::Validated) -> Plan {
        let sandbox = self.sandbox_of(validated.sandbox).spec;
        Plan::new(validated, &self.config, sandbox)
    }

    /// Whether the kernel enforces `mode`'s sandbox, asked once: its answer does not change
    /// while the process runs.
    pub(crate) fn enforceable(
        &self,
        mode: SandboxMode,
    ) -> Result<(), agent_exec_executor::sandbox::Unenforceable> {
        let of = self.sandbox_of(mode);
        if let Some(answer) = of.enforceable {
            return answer;
        }
        let answer = match &of.spec {
            Some(spec) => agent_exec_executor::sandbox::enforceable(spec),
            None => Ok(()),
        };
        if let Some(of) = lock(&self.sandboxes).get_mut(&mode) {
            of.enforceable = Some(answer.clone());
        }
        answer
    }

    fn sandbox_of(&self, mode: SandboxMode) -> SandboxOf {
        lock(&self.sandboxes)
            .entry(mode)
            .or_insert_with(|| SandboxOf {
                spec: self
                    .config
                    .sandbox
                    .spec(mode, &self.config.workdir, || self.config.held_read_only())
                    .map(Arc::new),
                enforceable: None,
            })
            .clone()
    }

    /// The tool's working directory, as text.
    pub(crate) fn workdir_text(&self) -> String {
        self.config.workdir.display().to_string()
    }

    fn sink(&self, config: SinkConfig) -> OutputSink {
        OutputSink::new(config, self.store.clone())
    }

    /// The directory the policy resolves paths against: the call's, else its session's.
    pub(crate) fn policy_cwd(&self, plan: &Plan) -> PathBuf {
        plan.cwd
            .clone()
            .or_else(|| {
                plan.session()
                    .and_then(|s| lock(&self.cwds).get(s).cloned())
            })
            .unwrap_or_else(|| self.config.workdir.clone())
    }

    /// Runs a one-shot or session plan to its end.
    pub(crate) fn run(
        &self,
        plan: &Plan,
        cancel: &CancelToken,
        observer: Option<&Observer>,
    ) -> Ran {
        let mut sink = self.sink(plan.sink.clone());
        let mut observed = Observed {
            inner: &mut sink,
            observer,
        };
        let (done, cwd) = self.run_into(plan, &mut observed, cancel, None);
        match done {
            Ok((exec, notes)) => Ran::Executed {
                exec,
                capture: Box::new(sink.finish_capture()),
                cwd,
                notes,
            },
            Err(why) => Ran::NotRun { why, cwd },
        }
    }

    /// Runs a one-shot or session plan into `sink`: to its end, or — `attached`, a call that
    /// may yield, running as a job — reporting its waits to the job (which yields the call)
    /// instead of ending on them, and handing a terminal's input to the job. Returns what ran
    /// (or why nothing did) and the working directory.
    fn run_into<S: agent_exec_sink::Sink + ?Sized>(
        &self,
        plan: &Plan,
        sink: &mut S,
        cancel: &CancelToken,
        attached: Option<&Attached<'_>>,
    ) -> (Result<(ExecOutcome, Vec<Note>), NotRun>, PathBuf) {
        let on_waiting = attached.map_or(OnWaiting::Stop, Attached::on_waiting);
        match &plan.mode {
            Mode::Session(name) => self.run_in_session(name, plan, sink, cancel, on_waiting),
            Mode::OneShot { pty } => {
                let cwd = plan
                    .cwd
                    .clone()
                    .unwrap_or_else(|| self.config.workdir.clone());
                let spec = plan.spec(&self.config, &cwd);
                let exec = match (pty, attached) {
                    (true, Some(attached)) => attached.run(&spec, sink, false),
                    (true, None) => agent_exec_executor::run_pty(&spec, sink, cancel),
                    (false, _) => self.prepared.run_watched(&spec, sink, cancel, on_waiting),
                };
                (Ok((exec, Vec::new())), cwd)
            }
            Mode::Job { .. } => unreachable!("jobs are started with start_job"),
        }
    }

    /// Starts a one-shot or session plan that may yield as a job nobody sees yet (see
    /// [`JobRegistry::start_call`]); `None` when no job can be started (the limit of running
    /// jobs): the call then runs to its end. `ran` receives what the run gave besides its
    /// outcome, before the job ends.
    pub(crate) fn start_call(
        self: &Arc<Self>,
        plan: &Plan,
        ran: Arc<Mutex<Option<RanParts>>>,
    ) -> Option<Arc<Job>> {
        let runner = self.clone();
        let body_plan = plan.clone();
        let body: JobBody = Box::new(move |sink, attached| {
            let (done, cwd) = runner.run_into(&body_plan, sink, attached.cancel(), Some(attached));
            let exec = done
                .as_ref()
                .map_or_else(|_| ExecOutcome::default(), |(exec, _)| exec.clone());
            *lock(&ran) = Some((done, cwd));
            exec
        });
        let pty = plan.mode == (Mode::OneShot { pty: true });
        let spill = self.sink(plan.sink.clone());
        self.jobs
            .start_call(plan.shown.clone(), pty, plan.timeout, spill, body)
            .ok()
    }

    /// Forgets a call's job that ended before it yielded.
    pub(crate) fn forget_job(&self, job: &Job) {
        self.jobs.forget(job);
    }

    /// A call yielded as `job`: it is seen from now on (its id given; returned, what it
    /// captured so far, which the answer shows), a session call's session is busy with it until
    /// it ends, and what its run gives besides its outcome (`ran`) is kept for the reads of the
    /// job.
    pub(crate) fn yielded(
        &self,
        plan: &Plan,
        job: &Arc<Job>,
        ran: Arc<Mutex<Option<RanParts>>>,
    ) -> (Option<agent_exec_sink::Capture>, Option<String>) {
        let shown = self.jobs.publish(job);
        if let Mode::Session(name) = &plan.mode {
            let key = session_key(name, &plan.env, plan.sandbox.as_deref());
            if let Some(handle) = lock(&self.sessions).get(&key) {
                *lock(&handle.yielded) = Some(job.clone());
            }
        }
        let mut parts = lock(&self.yielded_parts);
        // Kept as long as the job is: those of jobs that expired go.
        parts.retain(|id, _| self.jobs.get(id).is_ok());
        parts.insert(job.id().to_owned(), ran);
        shown
    }

    /// What the run of a call that yielded as job `id` gave besides its outcome, once it ended.
    pub(crate) fn ran_of(&self, id: &str) -> Option<RanParts> {
        let parts = lock(&self.yielded_parts).get(id).cloned()?;
        let ran = lock(&parts);
        ran.as_ref().map(|(done, cwd)| (done.clone(), cwd.clone()))
    }

    /// The rc snapshot script, when enabled; made once (within `limit`), then reused. A
    /// failure is noted in `notes` by the call that tried.
    fn rc_snapshot(
        &self,
        limit: Duration,
        sandbox: Option<&SandboxSpec>,
        notes: &mut Vec<Note>,
    ) -> Option<PathBuf> {
        if !self.config.sessions.rc_snapshot {
            return None;
        }
        let mut rc = lock(&self.rc);
        if matches!(*rc, RcSnapshot::NotYet) {
            let shell = self.session_config.shell.clone().unwrap_or_else(|| {
                agent_exec_executor::session::default_shell_path().to_path_buf()
            });
            let limit = limit.min(RC_SNAPSHOT_LIMIT);
            let made = agent_exec_executor::session::rc_snapshot(
                &shell,
                &self.config.sessions.cache_dir,
                limit,
                self.session_config.containment,
                sandbox,
            );
            *rc = match made {
                Ok(path) => RcSnapshot::Made(path),
                Err(RcSnapshotError::TimedOut(_)) if limit < RC_SNAPSHOT_LIMIT => {
                    // Cut short by this call's own timeout: a later call with more time tries again.
                    notes.push(Note::RcSnapshotDeferred { limit });
                    return None;
                }
                Err(e) => {
                    notes.push(Note::RcSnapshotFailed(e));
                    RcSnapshot::Failed
                }
            };
        }
        match &*rc {
            RcSnapshot::Made(path) => Some(path.clone()),
            _ => None,
        }
    }

    /// The session's slot, made if new. When the session is new, the limit is reached and
    /// every session is running a command (none can be closed to make room), waits for one
    /// to end — until `until` or `cancel` — rather than refusing: a burst of calls on new
    /// sessions is slowed down, not failed. At most twice `--max-sessions` calls wait at once;
    /// past that a call is refused at once. `Err(limit)`: no room came in time.
    fn slot(
        &self,
        key: &str,
        cwd: &Path,
        until: Instant,
        cancel: &CancelToken,
    ) -> Result<Arc<Handle>, usize> {
        use std::sync::atomic::Ordering;
        /// Counts a waiting call while it waits.
        struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let limit = self.config.sessions.max_sessions.max(1);
        let mut waiting = None;
        let mut sessions = lock(&self.sessions);
        loop {
            match self.slot_in(&mut sessions, key, cwd) {
                Some(handle) => return Ok(handle),
                None => {
                    if waiting.is_none() {
                        if self.session_waiters.fetch_add(1, Ordering::SeqCst) >= 2 * limit {
                            self.session_waiters.fetch_sub(1, Ordering::SeqCst);
                            return Err(limit);
                        }
                        waiting = Some(Waiting(&self.session_waiters));
                    }
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() || cancel.is_cancelled() {
                        return Err(limit);
                    }
                    sessions = self
                        .session_freed
                        .wait_timeout(sessions, left.min(agent_exec_executor::CANCEL_CHECK))
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0;
                }
            }
        }
    }

    /// [`slot`](Self::slot) without waiting: `None` when there is no room.
    fn slot_in(
        &self,
        sessions: &mut HashMap<String, Arc<Handle>>,
        key: &str,
        cwd: &Path,
    ) -> Option<Arc<Handle>> {
        let settings = &self.config.sessions;
        // Idle expiry, then the bound on the number of sessions (least recently used first).
        // A handle held outside the map belongs to a call about to use it: never closed here.
        // The sweep looks at every session: at most every quarter of the expiry (and every
        // second), not on every call — with 1,000 idle sessions it was most of a warm call.
        let sweep = {
            let mut last = lock(&self.last_sweep);
            let due = last.elapsed() >= (settings.idle_expiry / 4).min(Duration::from_secs(1));
            if due {
                *last = Instant::now();
            }
            due
        };
        let expired: Vec<String> = sessions
            .iter()
            .take_while(|_| sweep)
            .filter(|(k, s)| {
                *k != key
                    && Arc::strong_count(s) == 1
                    && s.slot
                        .try_lock()
                        .is_ok_and(|s| s.last_used.elapsed() > settings.idle_expiry)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            if let Some(s) = sessions.remove(&k) {
                close_slot(&s);
            }
        }
        if !sessions.contains_key(key) && sessions.len() >= settings.max_sessions.max(1) {
            let oldest = sessions
                .iter()
                .filter(|(_, s)| Arc::strong_count(s) == 1)
                .filter_map(|(k, s)| s.slot.try_lock().ok().map(|s| (k.clone(), s.last_used)))
                .min_by_key(|(_, t)| *t)
                .map(|(k, _)| k);
            match oldest {
                Some(k) => {
                    if let Some(s) = sessions.remove(&k) {
                        close_slot(&s);
                    }
                }
                None => return None,
            }
        }
        Some(
            sessions
                .entry(key.to_owned())
                .or_insert_with(|| {
                    Arc::new(Handle {
                        slot: Mutex::new(Slot {
                            session: None,
                            last_used: Instant::now(),
                            ended: None,
                            cwd: cwd.to_path_buf(),
                        }),
                        closing: Mutex::new(Closing::default()),
                        yielded: Mutex::new(None),
                    })
                })
                .clone(),
        )
    }

    fn run_in_session<S: agent_exec_sink::Sink + ?Sized>(
        &self,
        name: &str,
        plan: &Plan,
        sink: &mut S,
        cancel: &CancelToken,
        on_waiting: OnWaiting,
    ) -> (Result<(ExecOutcome, Vec<Note>), NotRun>, PathBuf) {
        let key = session_key(name, &plan.env, plan.sandbox.as_deref());
        let start_cwd = plan
            .cwd
            .clone()
            .unwrap_or_else(|| self.config.workdir.clone());
        let started = Instant::now();
        // Declared before the handle, so dropped after it: the call's end frees its session.
        let _freed = NotifyOnDrop(&self.session_freed);
        let handle = match self.slot(&key, &start_cwd, started + plan.timeout, cancel) {
            Ok(handle) => handle,
            Err(limit) => return (Err(NotRun::SessionsFull(limit)), start_cwd),
        };
        // A call of this session that yielded still runs in it: this one is refused at once,
        // rather than held until that command ends (a dev server: its whole timeout).
        let mut slot = match lock_slot(&handle, name, cancel) {
            Ok(slot) => slot,
            Err(why) => return (Err(why), start_cwd),
        };
        slot.last_used = Instant::now();
        if cancel.is_cancelled() {
            // Cancelled while it waited for the session's previous command: it never starts.
            return (Err(NotRun::Cancelled), start_cwd);
        }
        let mut notes = Vec::new();
        let mut command = plan.shell_line();
        if let Some(cwd) = &plan.cwd {
            command = format!(
                "cd -- {} && {command}",
                shell_word(&cwd.display().to_string())
            );
        }
        if let Err(e) = self.ensure_shell(&mut slot, plan, &start_cwd, &mut notes) {
            return (Err(NotRun::ShellStartFailed(e)), start_cwd);
        }
        let session = slot.session.as_mut().expect("started above");
        {
            // A close that came while the shell was starting wins: nothing runs.
            let mut closing = lock(&handle.closing);
            if closing.closed {
                return (Err(NotRun::Closed), start_cwd);
            }
            closing.closer = Some(session.closer());
        }
        // A satisfied trailing `| head` ends the command's processes, as the pipe would have,
        // and keeps the shell.
        // The call's timeout holds from its start, rc snapshot included.
        let left = plan.timeout.saturating_sub(started.elapsed());
        let outcome = session.run(
            &command,
            sink,
            Some(left),
            self.config.grace,
            self.config.drain,
            cancel,
            on_waiting,
        );
        slot.cwd.clone_from(&outcome.cwd);
        lock(&self.cwds).insert(name.to_owned(), outcome.cwd.clone());
        if let Some(end) = outcome.ended {
            if let Some(s) = slot.session.take() {
                let _ = s.close(Duration::from_millis(100));
            }
            lock(&handle.closing).closer = None;
            notes.push(Note::SessionEnded(end));
            slot.ended = Some(end);
        }
        (Ok((outcome.exec, notes)), outcome.cwd)
    }

    /// Starts the slot's shell if it has none (or it died), noting a restart.
    fn ensure_shell(
        &self,
        slot: &mut Slot,
        plan: &Plan,
        start_cwd: &Path,
        notes: &mut Vec<Note>,
    ) -> Result<(), agent_exec_executor::SpawnError> {
        if slot.session.as_mut().is_some_and(Session::is_alive) {
            return Ok(());
        }
        if let Some(end) = slot.ended.take() {
            notes.push(Note::SessionRestarted(Some(end)));
        } else if slot.session.is_some() {
            notes.push(Note::SessionRestarted(None));
        }
        let config = SessionConfig {
            extra_env: plan.env.clone(),
            prompt_idle: self.config.prompt_idle,
            sandbox: plan.sandbox.clone(),
            limits: self.config.limits,
            rc_snapshot: self.rc_snapshot(plan.timeout, plan.sandbox.as_deref(), notes),
            ..self.session_config.clone()
        };
        let cwd = if slot.session.is_some() || slot.cwd.is_dir() {
            slot.cwd.clone()
        } else {
            start_cwd.to_path_buf()
        };
        slot.session = Some(Session::start(&config, &cwd)?);
        Ok(())
    }

    /// `session_close`: ends a session's shell and everything it started; whether there was
    /// one.
    pub(crate) fn session_close(&self, name: &str) -> bool {
        // Take the slots out under the map lock; close them after it is released, so other
        // sessions never wait for this one's running command.
        let removed: Vec<Arc<Handle>> = {
            let mut sessions = lock(&self.sessions);
            let keys: Vec<String> = sessions
                .keys()
                .filter(|k| k.split('\0').next() == Some(name))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| sessions.remove(k)).collect()
        };
        lock(&self.cwds).remove(name);
        for s in &removed {
            close_slot(s);
        }
        self.session_freed.notify_all();
        !removed.is_empty()
    }

    /// Starts a background job: it runs the command as typed, with no output window.
    pub(crate) fn start_job(
        &self,
        plan: &Plan,
        pty: bool,
    ) -> (Result<Arc<Job>, JobError>, PathBuf) {
        let cwd = plan
            .cwd
            .clone()
            .unwrap_or_else(|| self.config.workdir.clone());
        let spec = plan.spec(&self.config, &cwd);
        let mut spill_config = crate::plan::sink_config(
            &self.config,
            Lines {
                head: None,
                tail: None,
                both: false,
            },
        );
        spill_config.separate_streams = plan.separate;
        let spill = self.sink(spill_config);
        (self.jobs.start(spec, plan.shown.clone(), spill, pty), cwd)
    }

    /// The job `id`.
    pub(crate) fn job(&self, id: &str) -> Result<Arc<Job>, JobError> {
        self.jobs.get(id)
    }

    /// A job's output since the last read (or all held), as read and as shown: see
    /// [`read_visible`].
    pub(crate) fn read_job(
        &self,
        job: &Job,
        all: bool,
        wait: Duration,
        cancel: Option<&CancelToken>,
    ) -> (JobOutput, String) {
        read_visible(job, all, wait, self.config.jobs.ring_bytes, cancel)
    }

    /// What `job` answers to `sent`, sent just now, within `wait` (see [`read_answer`]).
    pub(crate) fn job_answer(&self, job: &Job, sent: &[u8], wait: Duration) -> (JobOutput, String) {
        read_answer(job, sent, wait, self.config.jobs.ring_bytes)
    }

    /// Every job held, running or finished (until it expires), oldest first.
    pub(crate) fn jobs(&self) -> Vec<Arc<Job>> {
        self.jobs.list()
    }

    pub(crate) fn shutdown(&self) {
        self.remotes.close_all();
        self.prepared.close();
        self.jobs.shutdown(Duration::from_secs(5));
        let slots: Vec<Arc<Handle>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for s in slots {
            close_slot(&s);
        }
    }
}

/// The slot of a session, once its running command ends — unless that command's call
/// yielded (the session is busy: refused at once, and so is a call that was waiting when it
/// yielded) or `cancel` comes first. A std mutex cannot be waited on with a deadline: the
/// slot is tried every few milliseconds while another call holds it.
fn lock_slot<'a>(
    handle: &'a Handle,
    name: &str,
    cancel: &CancelToken,
) -> Result<MutexGuard<'a, Slot>, NotRun> {
    const RETRY: Duration = Duration::from_millis(10);
    loop {
        let busy = lock(&handle.yielded)
            .as_ref()
            .filter(|job| job.status() == JobStatus::Running)
            .map(|job| (job.id().to_owned(), job.command.clone()));
        if let Some((job, command)) = busy {
            return Err(NotRun::SessionBusy {
                session: name.to_owned(),
                job,
                command,
            });
        }
        match handle.slot.try_lock() {
            Ok(slot) => return Ok(slot),
            Err(std::sync::TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => {}
        }
        if cancel.is_cancelled() {
            return Err(NotRun::Cancelled);
        }
        std::thread::sleep(RETRY);
    }
}

/// Closes a session: a command running in it is ended at once (its call reports that the
/// session was closed), then the shell and everything it started.
fn close_slot(handle: &Handle) {
    {
        let mut closing = lock(&handle.closing);
        closing.closed = true;
        if let Some(closer) = closing.closer.take() {
            closer.cancel();
        }
    }
    if let Some(s) = lock(&handle.slot).session.take() {
        let _ = s.close(Duration::from_millis(500));
    }
}

/// A job's output once the caller has something to see (contract §7, the wait of
/// `job_output`): waits up to `wait` for output no read returned yet that shows as text, for
/// the job to end or to wait for input, or for `cancel`. Output that sanitizes to nothing (a
/// terminal's setup sequences, which a PTY program writes first; blank lines) does not end the
/// wait: in `new` mode it is kept (the reads joined, at most the job's ring of it) and the
/// wait goes on. Returns the read and its sanitized text.
fn read_visible(
    job: &Job,
    all: bool,
    wait: Duration,
    ring_bytes: usize,
    cancel: Option<&CancelToken>,
) -> (JobOutput, String) {
    let until = Instant::now() + wait;
    let mut out = job.read(all, wait, cancel);
    loop {
        let fresh = &out.bytes[out.bytes.len() - out.unseen..];
        let left = until.saturating_duration_since(Instant::now());
        if !agent_exec_sink::sanitize(fresh).trim().is_empty()
            || out.status != JobStatus::Running
            || out.waiting_for_input
            || left.is_zero()
            || cancel.is_some_and(CancelToken::is_cancelled)
        {
            let clean = agent_exec_sink::sanitize(&out.bytes);
            return (out, clean);
        }
        let more = job.read(all, left, cancel);
        out = if all {
            more
        } else {
            joined(out, more, ring_bytes)
        };
    }
}

/// Two reads of new output as one, within the job's ring: what falls out of it counts as
/// dropped.
fn joined(mut first: JobOutput, mut then: JobOutput, ring_bytes: usize) -> JobOutput {
    let mut bytes = std::mem::take(&mut first.bytes);
    bytes.extend_from_slice(&then.bytes);
    let over = bytes.len().saturating_sub(ring_bytes);
    bytes.drain(..over);
    then.dropped += first.dropped + over as u64;
    then.unseen = bytes.len();
    then.bytes = bytes;
    then
}

/// How long a job's output must stay quiet before what it printed counts as its whole answer
/// to input (`job_input` with `yield_ms`).
const ANSWER_SETTLE: Duration = Duration::from_millis(250);

/// What a job answers to `sent`, within `wait`: its first new output that shows as text — past
/// the terminal's echo of `sent`, which comes at once and is not yet the answer — and what
/// follows it until the output has been quiet for [`ANSWER_SETTLE`]; or the job's end, or its
/// next wait, or the end of `wait`. Returns the read and its sanitized text.
fn read_answer(job: &Job, sent: &[u8], wait: Duration, ring_bytes: usize) -> (JobOutput, String) {
    let until = Instant::now() + wait;
    let (mut out, mut clean) = read_visible(job, false, wait, ring_bytes, None);
    let echo = String::from_utf8_lossy(sent);
    let echo = echo.trim();
    // (All of it, or its start: a terminal may echo a long line in pieces.)
    while !echo.is_empty()
        && echo.starts_with(clean.trim())
        && out.status == JobStatus::Running
        && out.wait.is_none()
    {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let (more, _) = read_visible(job, false, left, ring_bytes, None);
        out = joined(out, more, ring_bytes);
        clean = agent_exec_sink::sanitize(&out.bytes);
    }
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if out.status != JobStatus::Running || out.wait.is_some() || left.is_zero() {
            break;
        }
        let more = job.read(false, ANSWER_SETTLE.min(left), None);
        let quiet = more.unseen == 0 && more.status == JobStatus::Running && more.wait.is_none();
        out = joined(out, more, ring_bytes);
        if quiet {
            break;
        }
    }
    let clean = agent_exec_sink::sanitize(&out.bytes);
    (out, clean)
}
