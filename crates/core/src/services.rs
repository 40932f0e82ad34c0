//! The long-lived parts of the tool: persistent sessions and background jobs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_exec_executor::jobs::{JobError, JobRegistry, JobStatus, NoInput};
use agent_exec_executor::session::{RcSnapshotError, Session, SessionConfig, SessionEnd};
use agent_exec_executor::{CancelToken, ExecOutcome, ExitStatus, Stop, signal_name};
use agent_exec_sink::OutputSink;
use serde::Deserialize;

use crate::config::{Config, SessionSettings};
use crate::request::{Target, Validated};
use crate::result::{Details, Outcome, ToolResult};
use crate::tool::{Shaping, Tool};

/// `job_output` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobOutputRequest {
    /// The job.
    pub job_id: String,
    /// `new` (default): output since the last read; `all`: everything held.
    #[serde(default)]
    pub mode: OutputMode,
    /// Wait up to this long for new output or the job's end. Default: 0.
    #[serde(default)]
    pub wait_ms: u64,
}

/// Which output `job_output` returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputMode {
    /// Since the last read.
    #[default]
    New,
    /// Everything held.
    All,
}

/// `job_input` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobInput {
    /// The job.
    pub job_id: String,
    /// Text to write.
    #[serde(default)]
    pub data: String,
    /// Append a newline. Default: true.
    #[serde(default = "yes")]
    pub enter: bool,
    /// Close the job's stdin afterwards. Default: false.
    #[serde(default)]
    pub eof: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RcSnapshot {
    NotYet,
    Made(PathBuf),
    /// Not made, for this reason (said once, in the note of the call that tried).
    Failed(String),
}

/// The longest a user's `~/.bashrc` may take to snapshot (or the call's timeout, if shorter).
const RC_SNAPSHOT_LIMIT: Duration = Duration::from_secs(10);

/// A session slot, and what ends its running command from another thread.
struct Handle {
    slot: Mutex<Slot>,
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
    restart_note: Option<String>,
    cwd: PathBuf,
}

pub(crate) struct Services {
    sessions: Mutex<HashMap<String, Arc<Handle>>>,
    jobs: JobRegistry,
    session_config: SessionConfig,
    settings: SessionSettings,
    /// Each session's cwd after its last call (read without waiting for a running call).
    cwds: Mutex<HashMap<String, PathBuf>>,
    /// The rc snapshot, made on first use.
    rc: Mutex<RcSnapshot>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn session_key(name: &str, env: &[(String, String)]) -> String {
    let mut key = name.to_owned();
    for (k, v) in env {
        key.push('\0');
        key.push_str(k);
        key.push('=');
        key.push_str(v);
    }
    key
}

impl Services {
    pub(crate) fn new(config: &Config) -> Self {
        Services {
            sessions: Mutex::new(HashMap::new()),
            jobs: JobRegistry::new(config.jobs),
            session_config: SessionConfig {
                shell: config.shell.clone(),
                env: config.env.clone(),
                extra_env: Vec::new(),
                rc_snapshot: None,
                prefix: config.sessions.command_prefix.clone(),
                containment: agent_exec_executor::Containment::default(),
            },
            settings: config.sessions.clone(),
            cwds: Mutex::new(HashMap::new()),
            rc: Mutex::new(RcSnapshot::NotYet),
        }
    }

    /// The rc snapshot script, when enabled; made once (within `limit`), then reused. A
    /// failure is noted in `notes` by the call that tried.
    fn rc_snapshot(&self, limit: Duration, notes: &mut Vec<String>) -> Option<PathBuf> {
        if !self.settings.rc_snapshot {
            return None;
        }
        let mut rc = lock(&self.rc);
        if *rc == RcSnapshot::NotYet {
            let shell = self.session_config.shell.clone().unwrap_or_else(|| {
                agent_exec_executor::session::default_shell_path().to_path_buf()
            });
            let limit = limit.min(RC_SNAPSHOT_LIMIT);
            let made = agent_exec_executor::session::rc_snapshot(
                &shell,
                &self.settings.cache_dir,
                limit,
                self.session_config.containment,
            );
            if matches!(made, Err(RcSnapshotError::TimedOut(_))) && limit < RC_SNAPSHOT_LIMIT {
                // Cut short by this call's own timeout: a later call with more time tries again.
                notes.push(format!(
                    "[rc snapshot skipped: ~/.bashrc did not finish within this call's {} s; a later call tries again]",
                    limit.as_secs_f64()
                ));
                return None;
            }
            *rc = match made {
                Ok(path) => RcSnapshot::Made(path),
                Err(e) => {
                    let why = match &e {
                        RcSnapshotError::Spawn(s) => crate::tool::spawn_error_text(s),
                        other => other.to_string(),
                    };
                    notes.push(format!(
                        "[rc snapshot skipped: {why}; sessions start without your ~/.bashrc functions and aliases]"
                    ));
                    RcSnapshot::Failed(why)
                }
            };
        }
        match &*rc {
            RcSnapshot::Made(path) => Some(path.clone()),
            _ => None,
        }
    }

    /// The cwd of a session after its last call, if it exists. Never waits for a running call.
    pub(crate) fn session_cwd(&self, name: &str) -> Option<PathBuf> {
        lock(&self.cwds).get(name).cloned()
    }

    fn slot(&self, key: &str, cwd: PathBuf) -> Arc<Handle> {
        let mut sessions = lock(&self.sessions);
        // Idle expiry, then the bound on the number of sessions (least recently used first).
        let expired: Vec<String> = sessions
            .iter()
            .filter(|(k, s)| {
                *k != key
                    && s.slot
                        .try_lock()
                        .is_ok_and(|s| s.last_used.elapsed() > self.settings.idle_expiry)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            if let Some(s) = sessions.remove(&k) {
                close_slot(&s);
            }
        }
        if !sessions.contains_key(key) && sessions.len() >= self.settings.max_sessions.max(1) {
            let oldest = sessions
                .iter()
                .filter_map(|(k, s)| s.slot.try_lock().ok().map(|s| (k.clone(), s.last_used)))
                .min_by_key(|(_, t)| *t)
                .map(|(k, _)| k);
            if let Some(k) = oldest
                && let Some(s) = sessions.remove(&k)
            {
                close_slot(&s);
            }
        }
        sessions
            .entry(key.to_owned())
            .or_insert_with(|| {
                Arc::new(Handle {
                    slot: Mutex::new(Slot {
                        session: None,
                        last_used: Instant::now(),
                        restart_note: None,
                        cwd,
                    }),
                    closing: Mutex::new(Closing::default()),
                })
            })
            .clone()
    }

    #[allow(clippy::needless_pass_by_value)] // `shaping` is moved into the result's shaping.
    pub(crate) fn run_in_session(
        &self,
        tool: &Tool,
        validated: &Validated,
        target: &Target,
        shaping: Shaping<'_>,
        cancel: &CancelToken,
    ) -> ToolResult {
        let name = validated.session.clone().unwrap_or_default();
        let key = session_key(&name, &validated.env);
        let start_cwd = validated
            .cwd
            .clone()
            .unwrap_or_else(|| tool.config.workdir.clone());
        let started = Instant::now();
        let handle = self.slot(&key, start_cwd.clone());
        let mut slot = lock(&handle.slot);
        slot.last_used = Instant::now();
        let mut notes = Vec::new();
        let mut command = match target {
            Target::Shell(c) => c.clone(),
            Target::Program(p, args) => std::iter::once(p)
                .chain(args)
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
        };
        if let Some(cwd) = &validated.cwd {
            command = format!(
                "cd -- {} && {command}",
                shell_quote(&cwd.display().to_string())
            );
        }
        let sink_config = tool.sink_config(
            shaping.head,
            shaping.tail,
            crate::tool::both_explicit(shaping.validated),
        );
        let ensured = self.ensure_shell(&mut slot, validated, &start_cwd, &mut notes);
        if let Err(e) = ensured {
            let mut d = Details::empty(Outcome::SpawnFailed, start_cwd.display().to_string());
            d.session = Some(name.clone());
            let text = format!(
                "failed to start a session shell: {}",
                crate::tool::spawn_error_text(&e)
            );
            return ToolResult::new(text, d);
        }
        let session = slot.session.as_mut().expect("started above");
        {
            // A close that came while the shell was starting wins: nothing runs.
            let mut closing = lock(&handle.closing);
            if closing.closed {
                let mut d = Details::empty(Outcome::Cancelled, start_cwd.display().to_string());
                d.cancelled = true;
                d.session = Some(name.clone());
                return ToolResult::new(
                    "[Command cancelled]\nThe session was closed before the command could run; nothing was run.".to_owned(),
                    d,
                );
            }
            closing.closer = Some(session.closer());
        }
        // A trailing `| head` satisfied: end the command's processes, as the pipe would have,
        // keeping the shell (unless the caller asked for head explicitly).
        let mut sink_config = sink_config;
        sink_config.stop_when_head_full =
            validated.head.is_none() && shaping.head.is_some() && shaping.tail.is_none();
        let mut sink = OutputSink::new(sink_config, tool.store.clone());
        // The call's timeout holds from its start, rc snapshot included.
        let left = validated.timeout.saturating_sub(started.elapsed());
        let outcome = session.run(
            &command,
            &mut sink,
            Some(left),
            tool.config.grace,
            tool.config.drain,
            cancel,
        );
        let capture = sink.finish_capture();
        slot.cwd.clone_from(&outcome.cwd);
        lock(&self.cwds).insert(name.clone(), outcome.cwd.clone());
        if let Some(end) = outcome.ended {
            if let Some(s) = slot.session.take() {
                let _ = s.close(Duration::from_millis(100));
            }
            lock(&handle.closing).closer = None;
            notes.push(format!(
                "[session ended: {}; the next call starts a fresh shell]",
                session_end_text(end, Tense::This)
            ));
            slot.restart_note = Some(session_end_text(end, Tense::Previous));
        }
        let cwd = outcome.cwd.display().to_string();
        let mut all_notes = shaping.notes.clone();
        all_notes.extend(notes);
        tool.shape(
            &outcome.exec,
            &capture,
            Shaping {
                cwd,
                notes: all_notes,
                session: Some(name),
                ..shaping
            },
        )
    }

    /// Starts the slot's shell if it has none (or it died), noting a restart.
    fn ensure_shell(
        &self,
        slot: &mut Slot,
        validated: &Validated,
        start_cwd: &std::path::Path,
        notes: &mut Vec<String>,
    ) -> Result<(), agent_exec_executor::SpawnError> {
        if slot.session.as_mut().is_some_and(Session::is_alive) {
            return Ok(());
        }
        if let Some(note) = slot.restart_note.take() {
            notes.push(format!("[session restarted: {note}]"));
        } else if slot.session.is_some() {
            notes.push("[session restarted: the shell had ended]".to_owned());
        }
        let config = SessionConfig {
            extra_env: validated.env.clone(),
            rc_snapshot: self.rc_snapshot(validated.timeout, notes),
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

    /// Closes a session. Returns whether it existed.
    pub(crate) fn close_session(&self, name: &str) -> bool {
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
        !removed.is_empty()
    }

    pub(crate) fn start_job(
        &self,
        tool: &Tool,
        validated: &Validated,
        target: &Target,
        command: &str,
    ) -> ToolResult {
        let cwd = validated
            .cwd
            .clone()
            .unwrap_or_else(|| tool.config.workdir.clone());
        let spec = tool.spec(target, &cwd, validated);
        let spill = OutputSink::new(tool.sink_config(None, None, false), tool.store.clone());
        let cwd_text = cwd.display().to_string();
        match self
            .jobs
            .start(spec, command.to_owned(), spill, validated.pty)
        {
            Ok(job) => {
                let mut d = Details::empty(Outcome::Success, cwd_text);
                d.job_id = Some(job.id.clone());
                let text = format!(
                    "Started background job {id}: {command}\nRead its output with job_output {{\"job_id\": \"{id}\"}} (mode \"new\" or \"all\", wait_ms to wait); send input with job_input; stop it with job_kill. (As MCP tools: bash_output, bash_input, bash_kill.)",
                    id = job.id
                );
                ToolResult::new(text, d)
            }
            Err(e) => ToolResult::invalid(job_error_text(&e), cwd_text),
        }
    }

    pub(crate) fn job_output(&self, tool: &Tool, req: &JobOutputRequest) -> ToolResult {
        let job = match self.jobs.get(&req.job_id) {
            Ok(j) => j,
            Err(e) => {
                return ToolResult::invalid(
                    job_error_text(&e),
                    tool.config.workdir.display().to_string(),
                );
            }
        };
        let out = job.read(
            req.mode == OutputMode::All,
            Duration::from_millis(req.wait_ms.min(600_000)),
        );
        let mut d = Details::empty(Outcome::Success, tool.config.workdir.display().to_string());
        d.job_id = Some(job.id.clone());
        d.stdout_bytes = out.stdout_bytes;
        d.stderr_bytes = out.stderr_bytes;
        d.duration_ms = out.elapsed.as_millis() as u64;
        let state = match &out.status {
            JobStatus::Running => format!("running for {:.1}s", out.elapsed.as_secs_f64()),
            JobStatus::Finished(o) => {
                match o.status {
                    Some(ExitStatus::Exited(c)) => {
                        d.exit_code = Some(c);
                        // 141: a reader closed the pipe early (`| head`), success as for calls.
                        d.outcome = if c == 0 || c == 141 {
                            Outcome::Success
                        } else {
                            Outcome::ExitNonzero
                        };
                    }
                    Some(ExitStatus::Signaled(s)) => {
                        d.signal = Some(s);
                        d.outcome = if o.cancelled() {
                            Outcome::Cancelled
                        } else {
                            Outcome::Signaled
                        };
                    }
                    None => d.outcome = Outcome::SpawnFailed,
                }
                d.cancelled = o.cancelled();
                d.success = d.outcome == Outcome::Success;
                describe_end(o)
            }
        };
        let mut text = format!(
            "[job {} {state}; exit code: {}; stdout {} bytes, stderr {} bytes]\n",
            job.id,
            d.exit_code
                .map_or_else(|| "none".to_owned(), |c| c.to_string()),
            out.stdout_bytes,
            out.stderr_bytes
        );
        if out.dropped > 0 {
            text.push_str(&format!(
                "[{} earlier bytes were dropped from the job's buffer]\n",
                out.dropped
            ));
        }
        let clean = agent_exec_sink::sanitize(&out.bytes);
        if clean.is_empty() {
            text.push_str(if req.mode == OutputMode::All {
                "(no output)"
            } else {
                "(no new output)"
            });
        } else {
            let max = tool.config.max_bytes;
            if clean.len() > max {
                let mut start = clean.len() - max;
                while !clean.is_char_boundary(start) {
                    start += 1;
                }
                text.push_str(&format!("[... {start} earlier bytes not shown]\n"));
                text.push_str(&clean[start..]);
            } else {
                text.push_str(&clean);
            }
        }
        if let Some(id) = &out.artifact_id {
            text.push_str(&format!("\n\n[Full output: artifact://{id}]"));
        }
        if !matches!(out.status, JobStatus::Running) {
            self.jobs.forget_if_done(&job.id);
        }
        ToolResult::new(text, d)
    }

    pub(crate) fn job_input(&self, tool: &Tool, req: &JobInput) -> ToolResult {
        let cwd = tool.config.workdir.display().to_string();
        let job = match self.jobs.get(&req.job_id) {
            Ok(j) => j,
            Err(e) => return ToolResult::invalid(job_error_text(&e), cwd),
        };
        let mut data = req.data.clone().into_bytes();
        if req.enter {
            data.push(b'\n');
        }
        match job.input(&data, req.eof) {
            Ok(()) => {
                let mut d = Details::empty(Outcome::Success, cwd);
                d.job_id = Some(job.id.clone());
                let closed = if req.eof { " and closed its input" } else { "" };
                ToolResult::new(
                    format!("Sent {} bytes to job {}{closed}.", data.len(), job.id),
                    d,
                )
            }
            Err(e) => {
                let mut r = ToolResult::invalid(job_error_text(&e), cwd);
                r.details.job_id = Some(job.id.clone());
                r
            }
        }
    }

    pub(crate) fn job_kill(&self, tool: &Tool, job_id: &str) -> ToolResult {
        let cwd = tool.config.workdir.display().to_string();
        let job = match self.jobs.get(job_id) {
            Ok(j) => j,
            Err(e) => return ToolResult::invalid(job_error_text(&e), cwd),
        };
        let was_running = job.status() == JobStatus::Running;
        let status = job.kill(tool.config.grace + Duration::from_secs(5));
        let mut d = Details::empty(Outcome::Success, cwd);
        d.job_id = Some(job.id.clone());
        let text = match &status {
            JobStatus::Finished(o) => {
                if let Some(ExitStatus::Signaled(s)) = o.status {
                    d.signal = Some(s);
                }
                if let Some(ExitStatus::Exited(c)) = o.status {
                    d.exit_code = Some(c);
                }
                d.processes_stopped = o.processes_stopped as u64;
                if was_running {
                    format!("Job {} {}.", job.id, describe_end(o))
                } else {
                    format!("Job {} had already ended: it {}.", job.id, describe_end(o))
                }
            }
            JobStatus::Running => format!(
                "Job {} did not end within the wait; it was sent SIGKILL.",
                job.id
            ),
        };
        ToolResult::new(text, d)
    }

    pub(crate) fn shutdown(&self) {
        self.jobs.shutdown(Duration::from_secs(5));
        let slots: Vec<Arc<Handle>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for s in slots {
            close_slot(&s);
        }
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

/// Whether a session's end is told in the call that ended it, or in the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tense {
    This,
    Previous,
}

/// Why a session's shell is gone, for the model.
fn session_end_text(end: SessionEnd, tense: Tense) -> String {
    let which = match tense {
        Tense::This => "this",
        Tense::Previous => "the previous",
    };
    match end {
        SessionEnd::Stopped(Stop::Timeout) => format!("{which} command timed out"),
        SessionEnd::Stopped(Stop::Cancelled) => format!("{which} command was cancelled"),
        SessionEnd::Stopped(Stop::SessionClosed) => "the session was closed".to_owned(),
        SessionEnd::Stopped(_) => {
            "the shell kept writing after the output window was full, so it was ended".to_owned()
        }
        SessionEnd::Exited(c) => format!("the shell exited with code {c}"),
        SessionEnd::Killed(s) => format!("the shell was killed by {}", signal_name(s)),
        SessionEnd::DescriptorsLost => {
            "a command closed or redirected the session's own descriptors".to_owned()
        }
        SessionEnd::Gone => "the shell had already exited".to_owned(),
        _ => "the shell ended".to_owned(),
    }
}

/// "exited with code 0", "was killed: …", "could not start: …".
pub(crate) fn describe_end(o: &ExecOutcome) -> String {
    if let Some(e) = &o.spawn_error {
        return format!("could not start: {}", crate::tool::spawn_error_text(e));
    }
    let how = match o.status {
        Some(ExitStatus::Exited(c)) => format!("exited with code {c}"),
        Some(ExitStatus::Signaled(s)) => {
            format!("was terminated by signal {} ({s})", signal_name(s))
        }
        None => "ended".to_owned(),
    };
    if o.cancelled() {
        format!("was killed: {how}")
    } else {
        how
    }
}

/// A job operation's error, for the model: what went wrong and what to do next.
fn job_error_text(e: &JobError) -> String {
    match e {
        JobError::NotFound { id, known } => format!(
            "no job with id {id}; running or unread jobs: {}",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ),
        JobError::TooMany(n) => format!(
            "{n} background jobs are already running (the limit); kill one with job_kill or wait for one to finish"
        ),
        JobError::NoInput { id, why } => {
            let why = match why {
                NoInput::Ended(o) => describe_end(o),
                NoInput::Closed => "has closed its input".to_owned(),
                NoInput::NotReading(e) => format!("stopped reading its input ({e})"),
                _ => "cannot take input now".to_owned(),
            };
            format!("job {id} {why}; it cannot take input")
        }
        other => other.to_string(),
    }
}

impl Tool {
    /// `job_output`: a background job's output since the last read (or all held).
    pub fn job_output(&self, req: &JobOutputRequest) -> ToolResult {
        self.services.job_output(self, req)
    }

    /// `job_input`: writes to a background job's stdin.
    pub fn job_input(&self, req: &JobInput) -> ToolResult {
        self.services.job_input(self, req)
    }

    /// `job_kill`: ends a background job's whole tree.
    pub fn job_kill(&self, job_id: &str) -> ToolResult {
        self.services.job_kill(self, job_id)
    }

    /// `session_close`: ends a session's shell and everything it started.
    pub fn session_close(&self, name: &str) -> ToolResult {
        let cwd = self.config.workdir.display().to_string();
        if self.services.close_session(name) {
            let mut d = Details::empty(Outcome::Success, cwd);
            d.session = Some(name.to_owned());
            ToolResult::new(format!("Session {name:?} closed."), d)
        } else {
            ToolResult::invalid(format!("no session named {name:?}"), cwd)
        }
    }

    /// `artifact_read`: bytes of a spilled output.
    pub fn artifact_read(&self, id: &str, offset: u64, limit: Option<u64>) -> ToolResult {
        let cwd = self.config.workdir.display().to_string();
        let Some(store) = self.artifacts() else {
            return ToolResult::invalid(
                "artifacts are disabled: the artifact directory could not be opened",
                cwd,
            );
        };
        match store.read_bytes(id, offset, limit.or(Some(self.config.max_bytes as u64))) {
            Ok((bytes, size)) => {
                let end = offset.min(size) + bytes.len() as u64;
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if end < size {
                    text.push_str(&format!(
                        "\n\n[Showing bytes {}-{end} of {size}. Read on with offset {end}.]",
                        offset.min(size)
                    ));
                }
                ToolResult::new(text, Details::empty(Outcome::Success, cwd))
            }
            Err(e) => ToolResult::invalid(e.to_string(), cwd),
        }
    }
}
