//! The tool: request → validate → normalize → policy → execute → shape → result.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_exec_executor::{
    CancelToken, ExecOutcome, ExecSpec, ExitStatus, Program, SpawnError, signal_name,
};
use agent_exec_normalize::{apply_head_tail, is_diff_command, merge_limits, normalize};
use agent_exec_policy::{Context, Decision, Policy, Verdict};
use agent_exec_sink::{
    ArtifactStore, Capture, Direction, OutputSink, Sink, SinkConfig, Stream, TruncatedBy, View,
};

use crate::config::Config;
use crate::policy::{Approver, CommandPolicy};
use crate::render::{TextParts, render};
use crate::request::{Request, Target, Validated};
use crate::result::{Details, Outcome, PolicyDetails, ToolResult, Truncation};

/// The agent bash tool. Cheap to share (`Arc`); calls may run concurrently.
pub struct Tool {
    pub(crate) config: Config,
    policy: Arc<dyn CommandPolicy>,
    approver: Option<Arc<dyn Approver>>,
    pub(crate) store: Option<Arc<ArtifactStore>>,
    store_error: Option<String>,
    pub(crate) services: crate::services::Services,
}

/// What a command's output is turned into, before the text is rendered.
pub(crate) struct Shaping<'a> {
    pub(crate) validated: &'a Validated,
    pub(crate) command: &'a str,
    pub(crate) head: Option<usize>,
    pub(crate) tail: Option<usize>,
    pub(crate) cwd: String,
    pub(crate) session: Option<String>,
    pub(crate) notes: Vec<String>,
}

impl Tool {
    /// A tool with `config`, the default policy (the hardline guard only), and no approver.
    pub fn new(config: Config) -> Tool {
        let (store, store_error) = match ArtifactStore::open(&config.artifacts_dir) {
            Ok(s) => (Some(Arc::new(s.with_retention(config.retention))), None),
            Err(e) => (None, Some(format!("artifacts are disabled: {e}"))),
        };
        Tool {
            services: crate::services::Services::new(&config),
            config,
            policy: Arc::new(Policy::permissive()),
            approver: None,
            store,
            store_error,
        }
    }

    /// Replaces the policy.
    #[must_use]
    pub fn with_policy(mut self, policy: Arc<dyn CommandPolicy>) -> Tool {
        self.policy = policy;
        self
    }

    /// Sets the approver for `ask` verdicts.
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Tool {
        self.approver = Some(approver);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The artifact store, when it could be opened.
    pub fn artifacts(&self) -> Option<&ArtifactStore> {
        self.store.as_deref()
    }

    fn base_dir(&self) -> String {
        self.config.workdir.display().to_string()
    }

    /// Runs one request to the end. Blocks the calling thread; `cancel` ends it early.
    pub fn execute(&self, request: &Request, cancel: &CancelToken) -> ToolResult {
        self.execute_observed(request, cancel, &AtomicU64::new(0))
    }

    /// [`execute`](Self::execute), counting output bytes into `bytes` as they arrive (for live
    /// progress displays).
    pub fn execute_observed(
        &self,
        request: &Request,
        cancel: &CancelToken,
        bytes: &AtomicU64,
    ) -> ToolResult {
        let validated = match request.validate(&self.config.workdir, self.config.default_timeout) {
            Ok(v) => v,
            Err(e) => return ToolResult::invalid(e.0, self.base_dir()),
        };
        let (command, limit) = match &validated.target {
            Target::Shell(c) => {
                let n = normalize(c);
                (n.command, n.limit)
            }
            Target::Program(p, args) => (display_argv(p, args), None),
        };
        let (head, tail) = merge_limits(validated.head, validated.tail, limit);
        let original = match &validated.target {
            Target::Shell(c) => c.clone(),
            Target::Program(..) => command.clone(),
        };
        let policy_cwd = validated
            .cwd
            .clone()
            .or_else(|| {
                validated
                    .session
                    .as_ref()
                    .and_then(|s| self.services.session_cwd(s))
            })
            .unwrap_or_else(|| self.config.workdir.clone());
        if let Some(result) = self.police(&validated, &original, &policy_cwd) {
            return result;
        }
        let target = match &validated.target {
            Target::Shell(_) => Target::Shell(command.clone()),
            Target::Program(p, a) => Target::Program(p.clone(), a.clone()),
        };
        let shaping = Shaping {
            validated: &validated,
            command: &command,
            head,
            tail,
            cwd: String::new(),
            session: validated.session.clone(),
            notes: Vec::new(),
        };
        if validated.background {
            // A job has no output window for a limit to apply to: it runs the command as
            // typed, so a trailing `| head -n 3` stops its producer as the pipe does.
            return self
                .services
                .start_job(self, &validated, &validated.target, &original);
        }
        if validated.session.is_some() {
            return self
                .services
                .run_in_session(self, &validated, &target, shaping, cancel);
        }
        let cwd = validated
            .cwd
            .clone()
            .unwrap_or_else(|| self.config.workdir.clone());
        let spec = self.spec(&target, &cwd, &validated);
        let mut sink_config = self.sink_config(head, tail, both_explicit(&validated));
        // An infinite producer before `| head` must not run until its timeout: stop it once the
        // head is full, as the pipe would have (unless the caller asked for head explicitly).
        sink_config.stop_when_head_full =
            validated.head.is_none() && head.is_some() && tail.is_none();
        let mut sink = OutputSink::new(sink_config, self.store.clone());
        let mut counted = Counted {
            inner: &mut sink,
            bytes,
        };
        let outcome = if validated.pty {
            agent_exec_executor::run_pty(&spec, &mut counted, cancel)
        } else {
            agent_exec_executor::run(&spec, &mut counted, cancel)
        };
        let capture = sink.finish_capture();
        self.shape(
            &outcome,
            &capture,
            Shaping {
                cwd: cwd.display().to_string(),
                ..shaping
            },
        )
    }

    /// Applies the policy; returns a result when the command must not run.
    fn police(&self, validated: &Validated, original: &str, cwd: &Path) -> Option<ToolResult> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let env_keys: Vec<String> = validated.env.iter().map(|(k, _)| k.clone()).collect();
        let ctx = Context {
            cwd,
            home: home.as_deref(),
            env_keys: &env_keys,
        };
        let verdict = self.policy.check(&validated.target, &ctx);
        let details = |outcome: Outcome, v: &Verdict| {
            let mut d = Details::empty(outcome, cwd.display().to_string());
            d.policy = Some(policy_details(v));
            d.session.clone_from(&validated.session);
            d
        };
        match verdict.decision {
            Decision::Allow => None,
            Decision::Deny => Some(ToolResult::new(
                format!("Blocked: {}\nOriginal command: {original}", verdict.reason),
                details(Outcome::Denied, &verdict),
            )),
            Decision::Ask => {
                if self
                    .approver
                    .as_ref()
                    .is_some_and(|a| a.approve(original, &verdict))
                {
                    return None;
                }
                Some(ToolResult::new(
                    format!(
                        "Needs approval: {}\nOriginal command: {original}\nNothing was run. Ask the user to approve it, or run a command whose effect is explicit.",
                        verdict.reason
                    ),
                    details(Outcome::NeedsApproval, &verdict),
                ))
            }
        }
    }

    pub(crate) fn spec(&self, target: &Target, cwd: &Path, validated: &Validated) -> ExecSpec {
        let program = match target {
            Target::Shell(c) => Program::Shell {
                command: c.clone(),
                shell: self.config.shell.clone(),
            },
            Target::Program(p, args) => Program::Argv {
                program: p.clone(),
                args: args.clone(),
            },
        };
        ExecSpec {
            program,
            cwd: cwd.to_path_buf(),
            env: self.config.env.clone(),
            extra_env: validated.env.clone(),
            timeout: Some(validated.timeout),
            grace: self.config.grace,
            drain: self.config.drain,
            containment: agent_exec_executor::Containment::default(),
        }
    }

    /// The sink for a call with line limits `head` / `tail`.
    /// The sink for a call with line limits `head` / `tail`. With `both` (the request gave both
    /// explicitly) the first `head` and the last `tail` lines are kept, the middle elided; else
    /// a head limit comes first and a tail limit applies to what it kept, as pipes would.
    pub(crate) fn sink_config(
        &self,
        head: Option<usize>,
        tail: Option<usize>,
        both: bool,
    ) -> SinkConfig {
        let (direction, max_lines) = match (head, tail) {
            (Some(h), Some(t)) if both => (Direction::Both, Some(h.saturating_add(t))),
            (Some(h), _) => (Direction::Head, Some(h)),
            (None, Some(t)) => (Direction::Tail, Some(t)),
            (None, None) => (self.config.direction, self.config.max_lines),
        };
        SinkConfig {
            max_bytes: self.config.max_bytes,
            max_lines,
            direction,
            artifact_cap: self.config.artifact_cap,
            // A model reads lines: no fragment of a line at the edge of the window.
            align_lines: true,
            head_share: match (head, tail) {
                (Some(h), Some(t)) if both && h + t > 0 => h as f64 / (h + t) as f64,
                _ => 0.5,
            },
            ..SinkConfig::default()
        }
    }

    /// Turns an execution and its capture into the result.
    pub(crate) fn shape(
        &self,
        exec: &ExecOutcome,
        capture: &Capture,
        s: Shaping<'_>,
    ) -> ToolResult {
        let mut view = capture.view.clone();
        let both = both_explicit(s.validated);
        if let (Some(_), Some(t), false) = (s.head, s.tail, both) {
            apply_tail_to_head_view(&mut view, t, capture.totals.merged.lines);
        }
        let (exit_code, signal) = match exec.status {
            Some(ExitStatus::Exited(c)) => (Some(c), None),
            Some(ExitStatus::Signaled(n)) => (None, Some(n)),
            None => (None, None),
        };
        let sigpipe = exit_code == Some(141) || signal == Some(13);
        let (exit_code, signal) = if exec.stopped_by_sink() {
            (exit_code, None)
        } else {
            (exit_code, signal)
        };
        let outcome = if exec.spawn_error.is_some() {
            Outcome::SpawnFailed
        } else if exec.stopped_by_sink() {
            Outcome::Success
        } else if exec.cancelled() {
            Outcome::Cancelled
        } else if exec.timed_out() {
            Outcome::Timeout
        } else if exit_code == Some(0) || sigpipe {
            Outcome::Success
        } else if signal.is_some() {
            Outcome::Signaled
        } else {
            Outcome::ExitNonzero
        };
        let truncation = view.truncated.then(|| {
            truncation_details(&view, capture, s.head, s.tail, both, self.config.direction)
        });
        let mut notes = s.notes;
        if sigpipe && outcome == Outcome::Success {
            notes.push(format!(
                "[Exit {} (SIGPIPE): a reader closed the pipe early; treated as success]",
                exit_code.map_or_else(|| "by signal 13".to_owned(), |c| c.to_string())
            ));
        }
        if exec.stopped_by_sink() {
            notes.push(format!(
                "[Stopped the command once the first {} lines were captured, as `| head` would have]",
                s.head.unwrap_or(0)
            ));
        }
        if exec.processes_stopped > 0 {
            let n = exec.processes_stopped;
            notes.push(format!(
                "[Stopped {n} background process{} still running when the command ended. Use run_in_background for long-running processes.]",
                if n == 1 { "" } else { "es" }
            ));
        }
        let mut warnings = capture.warnings.clone();
        if capture.view.truncated
            && let Some(e) = &self.store_error
        {
            warnings.push(e.clone());
        }
        for w in &warnings {
            notes.push(format!("[warning: {w}]"));
        }
        let output = match &exec.spawn_error {
            Some(e) => spawn_error_text(e),
            None => view.text.clone(),
        };
        let details = Details {
            outcome,
            exit_code,
            signal,
            success: outcome == Outcome::Success,
            timed_out: exec.timed_out() && outcome == Outcome::Timeout,
            cancelled: exec.cancelled(),
            duration_ms: exec.duration.as_millis() as u64,
            cwd: s.cwd,
            stream_kind: if is_diff_command(s.command) {
                "diff".into()
            } else {
                "plain".into()
            },
            stdout_bytes: capture.totals.stdout.bytes,
            stderr_bytes: capture.totals.stderr.bytes,
            truncation,
            job_id: None,
            session: s.session,
            policy: None,
            processes_stopped: exec.processes_stopped as u64,
            warnings,
        };
        let text = render(&TextParts {
            outcome,
            timeout_label: &s.validated.timeout_label,
            output: &output,
            truncation: details.truncation.as_ref(),
            max_bytes: self.config.max_bytes,
            exit_code: if exec.spawn_error.is_some() {
                None
            } else {
                exit_code
            },
            signal: signal.map(|n| (n, signal_name(n))),
            notes: &notes,
            stopped_early: exec.stopped_by_sink(),
        });
        ToolResult::new(text, details)
    }

    /// Runs a request given as JSON.
    pub fn execute_json(&self, value: serde_json::Value, cancel: &CancelToken) -> ToolResult {
        match Request::from_value(value) {
            Ok(request) => self.execute(&request, cancel),
            Err(e) => ToolResult::invalid(e.0, self.base_dir()),
        }
    }

    /// Ends every session and background job (the server's shutdown).
    pub fn shutdown(&self) {
        self.services.shutdown();
    }
}

/// What the model reads when a process could not be started: what failed and what to do.
pub(crate) fn spawn_error_text(e: &SpawnError) -> String {
    match e {
        SpawnError::Cwd { path, reason } => format!(
            "cannot enter the working directory {}: {reason} (choose a directory this user can enter, with cwd)",
            path.display()
        ),
        SpawnError::Program {
            program,
            reason,
            kind,
        } => {
            let hint = match kind {
                std::io::ErrorKind::NotFound => " (is it installed and on PATH?)",
                std::io::ErrorKind::PermissionDenied => " (is it executable?)",
                _ => "",
            };
            format!("failed to start {program}: {reason}{hint}")
        }
        other => other.to_string(),
    }
}

/// Counts the bytes passing to a sink, for progress displays.
struct Counted<'a, S> {
    inner: &'a mut S,
    bytes: &'a AtomicU64,
}

impl<S: Sink> Sink for Counted<'_, S> {
    type Error = S::Error;
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, S::Error> {
        self.bytes.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        self.inner.push(stream, chunk)
    }
    fn finish(&mut self) -> Result<(), S::Error> {
        self.inner.finish()
    }
}

/// The request gave both `head` and `tail`: keep both ends.
pub(crate) fn both_explicit(v: &Validated) -> bool {
    v.head.is_some() && v.tail.is_some()
}

fn display_argv(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn policy_details(v: &Verdict) -> PolicyDetails {
    let decision = match v.decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    };
    PolicyDetails {
        decision: decision.into(),
        rule: v.rule.clone(),
        reason: v.reason.clone(),
    }
}

/// `head` then `tail`: the sink kept the first `head` lines; keep the last `tail` of those.
fn apply_tail_to_head_view(view: &mut View, tail: usize, total_lines: u64) {
    let text = apply_head_tail(&view.text, None, Some(tail));
    if text.len() == view.text.len() {
        return;
    }
    let lines = agent_exec_count_lines(&text);
    let last = view.shown_ranges.last().map_or(0, |r| r[1]);
    view.output_bytes = text.len() as u64;
    view.output_lines = lines;
    view.shown_ranges = if lines == 0 {
        Vec::new()
    } else {
        vec![[last + 1 - lines, last]]
    };
    view.text = text;
    view.truncated = view.truncated || lines < total_lines;
    view.truncated_by = Some(TruncatedBy::Lines);
}

fn agent_exec_count_lines(text: &str) -> u64 {
    let nl = text.matches('\n').count() as u64;
    nl + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

fn truncation_details(
    view: &View,
    capture: &Capture,
    head: Option<usize>,
    tail: Option<usize>,
    both: bool,
    default: Direction,
) -> Truncation {
    let direction = match (head, tail) {
        (Some(_), Some(_)) if both => Direction::Both,
        (Some(_), _) => Direction::Head,
        (None, Some(_)) => Direction::Tail,
        // A smart window with nothing salient in the middle is exactly a tail view: say so.
        (None, None) if default == Direction::Smart && view.salient_lines == 0 => Direction::Tail,
        (None, None) => default,
    };
    let shown_range = match (view.shown_ranges.first(), view.shown_ranges.last()) {
        (Some(first), Some(last)) => [first[0], last[1]],
        _ => [0, 0],
    };
    Truncation {
        direction: direction.as_str().into(),
        truncated_by: match view.truncated_by {
            Some(TruncatedBy::Lines) => "lines".into(),
            _ => "bytes".into(),
        },
        total_bytes: capture.totals.merged.bytes,
        total_lines: capture.totals.merged.lines,
        output_bytes: view.output_bytes,
        output_lines: view.output_lines,
        shown_range,
        shown_ranges: view.shown_ranges.clone(),
        salient_lines: view.salient_lines,
        artifact_id: capture.artifact.as_ref().map(|a| a.id.clone()),
        artifact_capped: capture.artifact.as_ref().is_some_and(|a| a.capped),
    }
}
