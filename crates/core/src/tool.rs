//! The pipeline: request → validate → plan → policy → run → shape → result. Each step once.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_exec_executor::{CancelToken, SandboxMode};
use agent_exec_normalize::apply_head_tail;
use agent_exec_policy::{Context, Decision, Policy, Verdict};
use agent_exec_protocol::MAX_WAIT_MS;
use agent_exec_remote::Target as RemoteTarget;
use agent_exec_sink::{
    ArtifactInfo, ArtifactStore, Capture, Direction, StreamTotals, View, ViewPart,
};
use serde_json::Value;

use crate::config::{Config, SandboxOrigin};
use crate::ending::classify;
use crate::parts::Note;
use crate::plan::{Mode, Plan};
use crate::policy::{Approver, CommandPolicy};
use crate::progress::Observer;
use crate::render::{self, CallText};
use crate::runner::{Ran, Runner};
use agent_exec_executor::jobs::{Job, JobError, JobOutput, JobStatus, YieldWait};
use agent_exec_executor::{Wait, WaitedOn};
use agent_exec_protocol::Request;
use agent_exec_protocol::{
    ArtifactId, Details, JobId, JobSummary, Outcome, PolicyDetails, RawStreams, StreamBytes,
    ToolResult, Truncation,
};
use agent_exec_protocol::{ArtifactRead, JobInput, JobList, JobOutputRequest, OutputMode};

/// The agent bash tool. Cheap to clone (its sessions, jobs and artifact store are shared by
/// the clones); calls may run concurrently from any thread.
#[derive(Clone)]
pub struct Tool {
    runner: Arc<Runner>,
    policy: Arc<dyn CommandPolicy>,
    approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("config", &self.runner.config)
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

/// Whether an `ask` verdict may run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approval {
    /// Ask the approver (none: `needs_approval`).
    Ask,
    /// A human already approved this request (it came back `needs_approval` before).
    Given,
}

impl Tool {
    /// A tool with `config`, the default policy (the hardline guard only), and no approver.
    pub fn new(config: Config) -> Tool {
        Tool::new_with_policy(config, Arc::new(Policy::permissive()))
    }

    /// A tool with `config` and `policy` (the default one is never built: for a process that
    /// makes one tool and runs one call, as `agent-exec run`, its construction is not free).
    pub fn new_with_policy(config: Config, policy: Arc<dyn CommandPolicy>) -> Tool {
        Tool {
            runner: Arc::new(Runner::new(config)),
            policy,
            approver: None,
        }
    }

    /// Replaces the policy (of this handle; clones made before keep theirs).
    #[must_use]
    pub fn with_policy(mut self, policy: Arc<dyn CommandPolicy>) -> Tool {
        self.policy = policy;
        self
    }

    /// Sets the approver asked on `ask` verdicts.
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Tool {
        self.approver = Some(approver);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.runner.config
    }

    /// One paragraph for the model (an MCP server's `instructions`, a system prompt): where its
    /// commands run, what they may write and reach, and what a blocked access looks like.
    pub fn sandbox_summary(&self) -> String {
        render::sandbox_summary(&self.runner.config)
    }

    pub(crate) fn runner(&self) -> &Runner {
        &self.runner
    }

    /// The artifact store, when it could be opened.
    pub fn artifacts(&self) -> Option<&ArtifactStore> {
        self.runner.store.as_deref()
    }

    /// Runs one request to the end. Blocks the calling thread; `cancel` ends it early.
    pub fn execute(&self, request: &Request, cancel: &CancelToken) -> ToolResult {
        self.call(request, cancel, Approval::Ask, None, None)
    }

    /// [`execute`](Self::execute), showing the output to `observer` as it arrives (for live
    /// progress displays).
    pub fn execute_observed(
        &self,
        request: &Request,
        cancel: &CancelToken,
        observer: &Observer,
    ) -> ToolResult {
        self.call(request, cancel, Approval::Ask, Some(observer), None)
    }

    /// [`execute`](Self::execute), handing `on_progress` the call's progress while it runs, on
    /// the schedule of [`report_progress`](crate::report_progress) (at most every 250 ms when
    /// the output changed, at least every 5 s), from a thread of its own. For async callers,
    /// [`Tool::start`] with [`RunOptions::with_progress`](crate::RunOptions::with_progress)
    /// streams the same updates.
    pub fn execute_reporting(
        &self,
        request: &Request,
        cancel: &CancelToken,
        on_progress: &(dyn Fn(&crate::Progress) + Sync),
    ) -> ToolResult {
        let observer = Observer::new();
        let finished = CancelToken::new();
        std::thread::scope(|scope| {
            // No thread (out of them), no progress: the call itself still runs.
            let _reporter = std::thread::Builder::new()
                .name("agent-exec-progress".into())
                .spawn_scoped(scope, || {
                    crate::report_progress(&observer, &finished, |update| {
                        on_progress(&update);
                        true
                    })
                });
            // Before the scope joins the reporter, even if the call panics.
            let _finished = crate::progress::CancelOnDrop(finished.clone());
            self.execute_observed(request, cancel, &observer)
        })
    }

    /// Runs a request a human has approved after it came back `needs_approval`: an `ask`
    /// verdict no longer stops it (a `deny`, and the hardline guard, still do).
    pub fn execute_approved(&self, request: &Request, cancel: &CancelToken) -> ToolResult {
        self.call(request, cancel, Approval::Given, None, None)
    }

    /// Runs a request given as JSON.
    pub fn execute_json(&self, value: serde_json::Value, cancel: &CancelToken) -> ToolResult {
        match Request::from_value(value) {
            Ok(request) => self.execute(&request, cancel),
            Err(e) => ToolResult::invalid(e.0, self.runner.workdir_text()),
        }
    }

    pub(crate) fn call(
        &self,
        request: &Request,
        cancel: &CancelToken,
        approval: Approval,
        observer: Option<&Observer>,
        yield_now: Option<&CancelToken>,
    ) -> ToolResult {
        let target = match self.target_of(request.target.as_deref()) {
            Ok(target) => target,
            Err(refused) => return ToolResult::invalid(refused, self.runner.workdir_text()),
        };
        if let Some(target) = target {
            return self.remote_exec(request, &target, cancel, approval, observer);
        }
        let config = &self.runner.config;
        let validated = match crate::validate::validate(
            request,
            &config.workdir,
            config.default_timeout,
            config.yield_after,
            config.sandbox.operator_mode(),
        ) {
            Ok(v) => v,
            Err(e) => return ToolResult::invalid(e.0, self.runner.workdir_text()),
        };
        let mode = validated.sandbox;
        let mut plan = self.runner.plan(validated);
        // Where the kernel refuses the default sandbox (a container that cannot make `/`
        // writable in a namespace, a seccomp profile without namespaces), the default is off.
        if plan.sandbox_origin == SandboxOrigin::Default
            && plan.sandbox.is_some()
            && let Err(why) = self.runner.enforceable(mode)
        {
            crate::config::default_refused(render::sandbox_unenforceable(&why));
            plan.sandbox = None;
        }
        if let Some(refused) = self.police(&plan, approval) {
            return refused;
        }
        if cancel.is_cancelled() {
            let mut d = Details::empty(Outcome::Cancelled, self.runner.workdir_text());
            d.cancelled = true;
            return ToolResult::new(render::cancelled_before_run(), d);
        }
        match plan.mode {
            Mode::Job { pty } => {
                let started = self.start_job(&plan, pty);
                // Cancelled while it started: nobody will learn its id, so it must not run on.
                if cancel.is_cancelled()
                    && let Some(job) = &started.details.job_id
                {
                    let _ = self.job_kill(job.as_str());
                }
                started
            }
            Mode::OneShot { .. } | Mode::Session(_) => match plan.yield_after {
                Some(after) => self.call_yielding(&plan, after, cancel, observer, yield_now),
                None => {
                    let ran = self.runner.run(&plan, cancel, observer);
                    self.shape(&plan, ran)
                }
            },
        }
    }

    /// Applies the policy; returns a result when the command must not run.
    pub(crate) fn police(&self, plan: &Plan, approval: Approval) -> Option<ToolResult> {
        let cwd = self.runner.policy_cwd(plan);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let env_keys: Vec<String> = plan.env.iter().map(|(k, _)| k.clone()).collect();
        let ctx = Context {
            cwd: &cwd,
            home: home.as_deref(),
            env_keys: &env_keys,
        };
        let verdict = self.policy.check(&plan.checked, &ctx);
        let refused = |outcome: Outcome, text: String, v: &Verdict| {
            let mut d = Details::empty(outcome, cwd.display().to_string());
            d.policy = Some(policy_details(v));
            d.session = plan.session().map(str::to_owned);
            ToolResult::new(text, d)
        };
        match verdict.decision {
            Decision::Deny => Some(refused(
                Outcome::Denied,
                render::blocked(&verdict.reason, &plan.shown),
                &verdict,
            )),
            Decision::Ask
                if approval == Approval::Given
                    || self
                        .approver
                        .as_ref()
                        .is_some_and(|a| a.approve(&plan.shown, &verdict)) =>
            {
                None
            }
            Decision::Ask => Some(refused(
                Outcome::NeedsApproval,
                render::needs_approval(&verdict.reason, &plan.shown),
                &verdict,
            )),
            Decision::Allow => None,
        }
    }

    /// Turns what ran into the result: details, then the text.
    fn shape(&self, plan: &Plan, ran: Ran) -> ToolResult {
        let config = &self.runner.config;
        let (exec, capture, cwd, mut notes) = match ran {
            Ran::NotRun { why, cwd } => {
                let outcome = why.outcome();
                let text = render::not_run(&why, config.vocabulary);
                let mut d = Details::empty(outcome, cwd.display().to_string());
                d.cancelled = outcome == Outcome::Cancelled;
                d.session = plan.session().map(str::to_owned);
                d.sandbox = plan.sandbox.as_deref().map(crate::ending::sandbox_details);
                return ToolResult::new(text, d);
            }
            Ran::Executed {
                exec,
                capture,
                cwd,
                notes,
            } => (exec, capture, cwd, notes),
        };
        let Shown {
            view,
            truncation,
            stderr,
            stderr_truncation,
            ..
        } = Shown::of(&capture, plan, config.direction);
        let lines = plan.lines;
        let ending = classify(&exec);
        if ending.sigpipe && ending.outcome == Outcome::Success && !exec.stopped_by_sink() {
            notes.push(Note::SigPipe {
                exit_code: ending.exit_code,
            });
        }
        if exec.stopped_by_sink() {
            notes.push(Note::StoppedAtHead {
                lines: lines.head.unwrap_or(0),
            });
        }
        if exec.processes_stopped > 0 {
            notes.push(Note::ProcessesStopped(exec.processes_stopped));
        }
        match &exec.waited {
            Some(wait) if wait.on == WaitedOn::Terminal => {
                notes.push(Note::WaitingForTerminal(wait.clone()));
            }
            _ if exec.waiting_for_input() => notes.push(Note::WaitingForInput {
                prompt: render::prompt_of(&capture.view.text()),
            }),
            _ => {}
        }
        let mut warnings = capture.warnings.clone();
        warnings.extend(exec.warnings.iter().map(|f| render::limit_fallback(*f)));
        if capture.view.truncated
            && let Some(e) = &self.runner.store_error
        {
            warnings.push(e.clone());
        }
        notes.extend(warnings.iter().cloned().map(Note::Warning));
        // Names only: the model learns what it lacks, and reads it in the text when the command
        // or its output names one.
        // The window's text, made once and only when a check below reads it.
        let shown = std::cell::OnceCell::new();
        let output = || shown.get_or_init(|| view.text()).as_str();
        // A name the request's own `env` sets reached the command: not withheld from it.
        let withheld: Vec<String> = config
            .env
            .inherited()
            .withheld
            .iter()
            .filter(|name| !plan.env.iter().any(|(set, _)| set == *name))
            .cloned()
            .collect();
        if !withheld.is_empty() {
            let warning = render::withheld_secrets(&withheld);
            if withheld
                .iter()
                .any(|name| plan.shown.contains(name.as_str()) || output().contains(name.as_str()))
            {
                notes.push(Note::Warning(warning.clone()));
            }
            warnings.push(warning);
        }
        // For the operator, not the model (it cannot change it): in the details only.
        if exec.containment == Some(agent_exec_executor::GroupKind::ProcessGroup) {
            warnings.push(render::PROCESS_GROUP_ONLY.to_owned());
        }
        if plan.sandbox.is_none()
            && let Some(why) = config.sandbox.default_unavailable()
        {
            warnings.push(why);
        }
        let limit_hit = exec.limit_hit.map(crate::ending::limit_hit);
        let denial = match &plan.sandbox {
            Some(spec) if ending.outcome != Outcome::Success && exec.spawn_error.is_none() => {
                crate::denial::detect(spec, output()).map(|d| {
                    let roots = match spec.mode {
                        SandboxMode::WorkspaceWrite => std::iter::once(spec.workspace.clone())
                            .chain(config.sandbox.writable.iter().cloned())
                            .collect(),
                        _ => Vec::new(),
                    };
                    render::denial_text(&d, spec, plan.sandbox_origin, &roots)
                })
            }
            _ => None,
        };
        let folded = view.folded.as_ref().map(|f| agent_exec_protocol::Folded {
            lines: f.lines,
            bytes: f.bytes,
            artifact_id: capture
                .artifact
                .as_ref()
                .map(|a| agent_exec_protocol::ArtifactId(a.id.clone())),
        });
        let text = render::call_text(&CallText {
            vocabulary: self.runner.config.vocabulary,
            ending,
            timeout: plan.timeout,
            view: &view,
            folded: folded.as_ref(),
            spawn_error: exec.spawn_error.as_ref(),
            truncation: truncation.as_ref(),
            max_bytes: plan.sink.max_bytes,
            // A tail applied to what a head kept is the limit the model sees.
            max_lines: match (lines.head, lines.tail, lines.both) {
                (Some(_), Some(t), false) => Some(t),
                _ => plan.sink.max_lines,
            },
            notes: &notes,
            stopped_early: exec.stopped_by_sink(),
            limit: limit_hit.map(|hit| render::limit_text(hit, &config.limits)),
            denial,
            waited: exec.waiting_for_input().then(|| {
                let on = exec.waited.as_ref().map_or(WaitedOn::Input, |w| w.on);
                (config.prompt_idle.unwrap_or_default(), on)
            }),
            stderr: stderr.map(|v| (v, stderr_truncation.as_ref())),
        });
        let details = Details {
            outcome: ending.outcome,
            exit_code: ending.exit_code,
            signal: ending.signal,
            success: ending.outcome == Outcome::Success,
            timed_out: ending.outcome == Outcome::Timeout,
            cancelled: exec.cancelled(),
            duration_ms: exec.duration.as_millis() as u64,
            cwd: cwd.display().to_string(),
            stream_kind: plan.stream_kind,
            stdout_bytes: capture.totals.stdout.bytes,
            stderr_bytes: capture.totals.stderr.bytes,
            truncation,
            folded,
            stderr_truncation,
            job_id: None,
            session: plan.session().map(str::to_owned),
            policy: None,
            processes_stopped: exec.processes_stopped as u64,
            warnings,
            sandbox: plan.sandbox.as_deref().map(crate::ending::sandbox_details),
            limit_hit,
            running: None,
            jobs: None,
            target: None,
            next_offset: None,
            timeout_ms: None,
        };
        let mut result = ToolResult::new(text, details);
        if plan.separate {
            let totals = [capture.totals.stdout, capture.totals.stderr];
            let stream = |i: usize| StreamBytes {
                held: capture.stream_raw[i].clone(),
                artifact: capture.stream_artifacts[i].as_ref().map(|a| a.path.clone()),
                capped: capture.stream_artifacts[i]
                    .as_ref()
                    .is_some_and(|a| a.capped),
                total: totals[i].bytes,
            };
            result.streams = Some(RawStreams {
                stdout: stream(0),
                stderr: stream(1),
            });
        }
        result
    }

    /// A one-shot or session call that may yield: it runs as a job nobody sees, waited on until
    /// it ends (answered as any call), waits (for input, or for a terminal it lacks), or
    /// `after` passes — then it is published and the answer says `running`, with what it
    /// printed so far and its job id. Its containment, output stream, artifact and timeout are
    /// the job's from the start: nothing changes hands when it yields.
    fn call_yielding(
        &self,
        plan: &Plan,
        after: Duration,
        cancel: &CancelToken,
        observer: Option<&Observer>,
        yield_now: Option<&CancelToken>,
    ) -> ToolResult {
        let parts = Arc::new(std::sync::Mutex::new(None));
        let Some(job) = self.runner.start_call(plan, parts.clone()) else {
            // No room for another job: the call runs to its end.
            let ran = self.runner.run(plan, cancel, observer);
            return self.shape(plan, ran);
        };
        // A yield far off (`Call::into_job` decides instead) never overflows the clock.
        let now = std::time::Instant::now();
        let until = now
            .checked_add(after)
            .unwrap_or(now + Duration::from_secs(u64::from(u32::MAX)));
        let mut seen = 0;
        let waited = job.wait_to_yield(until, cancel, yield_now, &mut seen, &mut |bytes| {
            if let Some(observer) = observer {
                observer.record(agent_exec_sink::Stream::Stdout, bytes);
            }
        });
        match waited {
            YieldWait::Waiting(_) | YieldWait::Elapsed => {
                let wait = match waited {
                    YieldWait::Waiting(wait) => Some(wait),
                    _ => None,
                };
                let (capture, screen) = self.runner.yielded(plan, &job, parts);
                let screen = screen.as_deref();
                return self.yielded(plan, &job, capture.as_ref(), screen, wait.as_ref());
            }
            YieldWait::Cancelled => {
                job.kill(self.runner.config.grace + JOB_KILL_SLACK);
            }
            YieldWait::Finished => {}
        }
        let finished = job.finished();
        if finished.is_some() {
            self.runner.forget_job(&job);
        }
        // (Killed and still not ended within the grace — a process that ignores KILL in an
        // uninterruptible wait — it stays in the registry, unseen: counted, and ended at
        // shutdown. The call answers cancelled.)
        let parts = parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let ran = match (parts, finished) {
            (Some((Ok((exec, notes)), cwd)), Some((_, capture))) => Ran::Executed {
                exec,
                capture: Box::new(capture),
                cwd,
                notes,
            },
            (Some((Err(why), cwd)), _) => Ran::NotRun { why, cwd },
            _ => Ran::NotRun {
                why: crate::parts::NotRun::Cancelled,
                cwd: self.runner.policy_cwd(plan),
            },
        };
        self.shape(plan, ran)
    }

    /// The answer of a call that yielded as `job`, showing `capture` (what it captured so far)
    /// and, under a terminal, its `screen` as it shows now.
    fn yielded(
        &self,
        plan: &Plan,
        job: &Job,
        capture: Option<&Capture>,
        screen: Option<&str>,
        wait: Option<&Wait>,
    ) -> ToolResult {
        let config = &self.runner.config;
        let empty = Capture::default();
        let shown = Shown::of(capture.unwrap_or(&empty), plan, config.direction);
        let mut output = render::view_text(&shown.view);
        if let Some(screen) = screen {
            // A terminal's current screen is not in the view until the end.
            if !output.is_empty() && !screen.is_empty() {
                output.push('\n');
            }
            output.push_str(screen);
        }
        let stderr = shown.stderr.map(render::view_text);
        let prompt = wait
            .filter(|w| w.on == WaitedOn::Input)
            .and_then(|_| render::prompt_of(&output));
        let elapsed = job.elapsed();
        let text = render::yielded(&render::Yielded {
            vocabulary: self.runner.config.vocabulary,
            id: job.id(),
            shown: &plan.shown,
            output: &output,
            truncation: shown.truncation.as_ref(),
            stderr: stderr.as_deref(),
            stderr_truncation: shown.stderr_truncation.as_ref(),
            max_bytes: shown.max_bytes,
            elapsed,
            timeout: plan.timeout,
            wait,
            prompt: prompt.as_deref(),
        });
        let cwd = self.runner.policy_cwd(plan);
        let mut d = Details::empty(Outcome::Running, cwd.display().to_string());
        d.job_id = Some(JobId(job.id().to_owned()));
        d.running = Some(true);
        d.duration_ms = elapsed.as_millis() as u64;
        d.timeout_ms = Some(plan.timeout.as_millis() as u64);
        d.stream_kind = plan.stream_kind;
        let (stdout_bytes, stderr_bytes) = job.output_bytes();
        d.stdout_bytes = stdout_bytes;
        d.stderr_bytes = stderr_bytes;
        d.truncation = shown.truncation;
        d.stderr_truncation = shown.stderr_truncation;
        d.session = plan.session().map(str::to_owned);
        d.sandbox = plan.sandbox.as_deref().map(crate::ending::sandbox_details);
        ToolResult::new(text, d)
    }

    /// `job_output`: a background job's output since the last read (or all held).
    pub fn job_output(&self, req: &JobOutputRequest) -> ToolResult {
        self.job_output_cancellable(req, None)
    }

    /// [`job_output`](Self::job_output) whose wait (`wait_ms`) ends early once `cancel` is
    /// cancelled.
    pub fn job_output_cancellable(
        &self,
        req: &JobOutputRequest,
        cancel: Option<&CancelToken>,
    ) -> ToolResult {
        let never = CancelToken::new();
        if let Some(r) = self.forward(
            req.target.as_deref(),
            "job_output",
            params_of(req),
            cancel.unwrap_or(&never),
        ) {
            return r;
        }
        let job = match self.runner.job(req.job_id.as_str()) {
            Ok(job) => job,
            Err(e) => return self.job_refused(&e),
        };
        let all = req.mode == OutputMode::All;
        let wait = Duration::from_millis(req.wait_ms.min(MAX_WAIT_MS));
        let (out, clean) = self.runner.read_job(&job, all, wait, cancel);
        self.job_read(&job, &out, &clean, all)
    }

    /// The answer of a read of `job` (`job_output`, and `job_input` with `yield_ms`).
    fn job_read(&self, job: &Job, out: &JobOutput, clean: &str, all: bool) -> ToolResult {
        let mut d = Details::empty(Outcome::Success, self.runner.workdir_text());
        d.job_id = Some(JobId(job.id().to_owned()));
        d.stdout_bytes = out.stdout_bytes;
        d.stderr_bytes = out.stderr_bytes;
        d.duration_ms = out.elapsed.as_millis() as u64;
        d.running = Some(out.status == JobStatus::Running);
        d.timeout_ms = out.timeout.map(|t| t.as_millis() as u64);
        let ended = match &out.status {
            JobStatus::Running => None,
            JobStatus::Finished(o) => {
                let ending = classify(o);
                d.set_outcome(ending.outcome);
                d.exit_code = ending.exit_code;
                d.signal = ending.signal;
                d.cancelled = o.cancelled();
                d.timed_out = o.timed_out();
                d.processes_stopped = o.processes_stopped as u64;
                d.limit_hit = o.limit_hit.map(crate::ending::limit_hit);
                Some(o)
            }
        };
        // A call that yielded: what its run gave besides its outcome, once it ended — why it
        // ran nothing (a session that could not be had), and its notes.
        let (not_run, notes) = match ended.and(self.runner.ran_of(job.id())) {
            Some((Err(why), _)) => {
                d.set_outcome(why.outcome());
                (Some(why), Vec::new())
            }
            Some((Ok((_, notes)), _)) => (None, notes),
            None => (None, Vec::new()),
        };
        let prompt = render::prompt_of(&agent_exec_sink::sanitize(&out.last_output));
        let text = render::job_output(&render::JobRead {
            vocabulary: self.runner.config.vocabulary,
            id: job.id(),
            ended,
            elapsed: out.elapsed,
            stdout_bytes: out.stdout_bytes,
            stderr_bytes: out.stderr_bytes,
            dropped: out.dropped,
            output: clean,
            all,
            max_bytes: self.runner.config.max_bytes,
            artifact: out.artifact_id.as_deref(),
            stderr_artifact: out.stderr_artifact_id.as_deref(),
            wait: out.wait.as_ref(),
            prompt: prompt.as_deref(),
            timeout: out.timeout,
            not_run: not_run.as_ref(),
            notes: &notes,
        });
        // A finished job stays readable (`mode: "all"`) until it expires.
        ToolResult::new(text, d)
    }

    /// Starts a background job: it runs the command as typed, with no output window.
    fn start_job(&self, plan: &Plan, pty: bool) -> ToolResult {
        let (started, cwd) = self.runner.start_job(plan, pty);
        let cwd = cwd.display().to_string();
        match started {
            Ok(job) => {
                let mut d = Details::empty(Outcome::Success, cwd);
                d.job_id = Some(JobId(job.id().to_owned()));
                d.sandbox = plan.sandbox.as_deref().map(crate::ending::sandbox_details);
                ToolResult::new(
                    render::job_started(job.id(), &plan.shown, self.runner.config.vocabulary),
                    d,
                )
            }
            Err(e) => ToolResult::invalid(
                render::job_error_text(&e, self.runner.config.vocabulary),
                cwd,
            ),
        }
    }

    /// A job method's answer when the job cannot be used (no such job, …).
    fn job_refused(&self, e: &JobError) -> ToolResult {
        ToolResult::invalid(
            render::job_error_text(e, self.runner.config.vocabulary),
            self.runner.workdir_text(),
        )
    }

    /// `job_input`: writes to a background job's stdin.
    pub fn job_input(&self, req: &JobInput) -> ToolResult {
        if let Some(r) = self.forward(
            req.target.as_deref(),
            "job_input",
            params_of(req),
            &CancelToken::new(),
        ) {
            return r;
        }
        let mut data = req.data.clone().into_bytes();
        // `{"data": "", "eof": true}` only closes the input: no Enter is pressed before it.
        if req.enter && !(req.eof && data.is_empty()) {
            data.push(b'\n');
        }
        let job = match self.runner.job(req.job_id.as_str()) {
            Ok(job) => job,
            Err(e) => return self.job_refused(&e),
        };
        let eof = req.eof;
        let mut d = Details::empty(Outcome::Success, self.runner.workdir_text());
        d.job_id = Some(JobId(job.id().to_owned()));
        d.running = Some(job.status() == JobStatus::Running);
        match job.input(&data, eof) {
            Ok(taken) if taken.written == data.len() && (taken.closed || !eof) => {
                let sent = render::job_input_sent(job.id(), data.len(), taken.closed);
                if req.yield_ms == 0 {
                    return ToolResult::new(sent, d);
                }
                // Then what it answers, read as job_output reads it.
                let wait = Duration::from_millis(req.yield_ms.min(MAX_WAIT_MS));
                let (out, clean) = self.runner.job_answer(&job, &data, wait);
                let mut answer = self.job_read(&job, &out, &clean, false);
                if let Some(content) = answer.content.first_mut() {
                    content.text = format!("{sent}\n{}", content.text);
                }
                answer
            }
            Ok(taken) if taken.written == data.len() => {
                // Under a terminal, the data went but the Ctrl-D that closes it did not.
                d.set_outcome(Outcome::InvalidRequest);
                ToolResult::new(render::job_input_not_closed(job.id(), data.len()), d)
            }
            Ok(taken) => {
                d.set_outcome(Outcome::InvalidRequest);
                ToolResult::new(
                    render::job_input_partial(job.id(), taken.written, data.len(), eof),
                    d,
                )
            }
            Err(e) => {
                d.set_outcome(Outcome::InvalidRequest);
                ToolResult::new(render::job_error_text(&e, self.runner.config.vocabulary), d)
            }
        }
    }

    /// `job_kill`: ends a background job's whole tree.
    /// On the operator's target, when there is one (another target: [`forward`](Self::forward)).
    pub fn job_kill(&self, job_id: &str) -> ToolResult {
        let params = serde_json::json!({ "job_id": job_id });
        if let Some(r) = self.forward(None, "job_kill", params, &CancelToken::new()) {
            return r;
        }
        let job = match self.runner.job(job_id) {
            Ok(job) => job,
            Err(e) => return self.job_refused(&e),
        };
        // The operation succeeded when the job is gone; the details say how it ended.
        let was_running = job.status() == JobStatus::Running;
        let status = job.kill(self.runner.config.grace + JOB_KILL_SLACK);
        let mut d = Details::empty(Outcome::Success, self.runner.workdir_text());
        d.job_id = Some(JobId(job.id().to_owned()));
        d.running = Some(status == JobStatus::Running);
        let ended = match &status {
            JobStatus::Finished(o) => {
                let ending = classify(o);
                d.exit_code = ending.exit_code;
                d.signal = ending.signal;
                d.cancelled = o.cancelled();
                d.processes_stopped = o.processes_stopped as u64;
                d.limit_hit = o.limit_hit.map(crate::ending::limit_hit);
                Some(o)
            }
            JobStatus::Running => None,
        };
        ToolResult::new(render::job_killed(job.id(), ended, was_running), d)
    }

    /// `session_close`: ends a session's shell and everything it started.
    /// On the operator's target, when there is one (another target: [`forward`](Self::forward)).
    pub fn session_close(&self, name: &str) -> ToolResult {
        let params = serde_json::json!({ "session": name });
        if let Some(r) = self.forward(None, "session_close", params, &CancelToken::new()) {
            return r;
        }
        if !self.runner.session_close(name) {
            return ToolResult::invalid(render::no_session(name), self.runner.workdir_text());
        }
        let mut d = Details::empty(Outcome::Success, self.runner.workdir_text());
        d.session = Some(name.to_owned());
        ToolResult::new(render::session_closed(name), d)
    }

    /// `job_list`: the background jobs held (running, or finished and not yet expired), or
    /// with `running` only those still running. On the target the request names, else the
    /// operator's, when there is one.
    pub fn job_list(&self, req: &JobList) -> ToolResult {
        if let Some(r) = self.forward(
            req.target.as_deref(),
            "job_list",
            params_of(req),
            &CancelToken::new(),
        ) {
            return r;
        }
        let held = self.runner.jobs();
        let jobs: Vec<JobSummary> = held
            .iter()
            .filter(|job| !req.running || matches!(job.status(), JobStatus::Running))
            .map(|job| {
                let (stdout_bytes, stderr_bytes) = job.output_bytes();
                let (status, exit_code) = match job.status() {
                    JobStatus::Running => ("running".to_owned(), None),
                    JobStatus::Finished(o) => {
                        let ending = classify(&o);
                        (ending.outcome.as_str().to_owned(), ending.exit_code)
                    }
                };
                JobSummary {
                    job_id: JobId(job.id().to_owned()),
                    command: job.command().to_owned(),
                    status,
                    exit_code,
                    stdout_bytes,
                    stderr_bytes,
                    elapsed_ms: job.elapsed().as_millis() as u64,
                }
            })
            .collect();
        let mut d = Details::empty(Outcome::Success, self.runner.workdir_text());
        let text = render::job_list(&jobs, held.len() - jobs.len());
        d.jobs = Some(jobs);
        ToolResult::new(text, d)
    }

    /// `artifact_read`: bytes of a spilled output, from `offset`, at most `limit` (default:
    /// the output window's size); with `grep`, the matching lines of the whole output (`offset`
    /// and `limit` are not used), numbered, with `context` lines around each.
    pub fn artifact_read(&self, req: &ArtifactRead) -> ToolResult {
        if let Some(r) = self.forward(
            req.target.as_deref(),
            "artifact_read",
            params_of(req),
            &CancelToken::new(),
        ) {
            return r;
        }
        let cwd = self.runner.workdir_text();
        let Some(store) = self.artifacts() else {
            return ToolResult::invalid(render::artifacts_disabled(), cwd);
        };
        let max_bytes = self.runner.config.max_bytes;
        if req.limit == Some(0) {
            return ToolResult::invalid("limit must be at least 1 (bytes to read)", cwd);
        }
        // grep reads the whole artifact: an `offset` or `limit` beside it (a strict caller
        // sends every field) is not used.
        if let Some(pattern) = &req.grep {
            let regex = match regex::Regex::new(pattern) {
                Ok(r) => r,
                Err(e) => {
                    return ToolResult::invalid(
                        format!("grep is not a valid regular expression: {e}"),
                        cwd,
                    );
                }
            };
            let context = req.context.unwrap_or(0);
            return match store.grep(&req.id, &regex, context, max_bytes) {
                Ok(hits) => ToolResult::new(
                    render::grep_hits(&hits, pattern),
                    Details::empty(Outcome::Success, cwd),
                ),
                Err(e) => ToolResult::invalid(e.to_string(), cwd),
            };
        }
        if req.context.is_some() {
            return ToolResult::invalid(
                "context goes with grep: give grep (a regular expression) too",
                cwd,
            );
        }
        // One read is at most the output window: an artifact is read in pages (contract §7).
        let offset = req.offset.unwrap_or(0);
        let page = max_bytes.max(1) as u64;
        let limit = req.limit.map_or(page, |l| l.min(page));
        // At least a whole character's bytes (4), so that even a tiny page moves on.
        match store.read_bytes(&req.id, offset, Some(limit.max(4))) {
            Ok((_, size)) if offset >= size && offset > 0 => {
                ToolResult::invalid(render::artifact_past_end(&req.id, offset, size), cwd)
            }
            Ok((bytes, size)) => {
                let from = offset;
                let more_follows = from + (bytes.len() as u64) < size;
                let most = usize::try_from(limit).unwrap_or(usize::MAX);
                let (mut text, used) = page_text(&bytes, most, more_follows);
                // A page ends at a character's end, so that the next one starts at one.
                let to = from + used as u64;
                let mut details = Details::empty(Outcome::Success, cwd);
                if to < size {
                    let capped = req.limit.is_some_and(|l| l > page);
                    text.push_str(&render::artifact_more(
                        from,
                        to,
                        size,
                        capped.then_some(page),
                    ));
                    details.next_offset = Some(to);
                }
                ToolResult::new(text, details)
            }
            Err(e) => ToolResult::invalid(e.to_string(), cwd),
        }
    }

    /// Ends every session and background job (the server's shutdown).
    pub fn shutdown(&self) {
        self.runner.shutdown();
    }
}

/// The text of a page of an artifact: `bytes` decoded (an invalid sequence shows as U+FFFD),
/// at most `most` bytes of text — invalid bytes triple as they are replaced — and ending at a
/// whole character (when `more_follows` them), unless that would leave nothing: a page holds
/// at least its first character (or U+FFFD). Returns it and the bytes it used.
fn page_text(bytes: &[u8], most: usize, more_follows: bool) -> (String, usize) {
    let mut text = String::new();
    let mut used = 0;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let room = most.saturating_sub(text.len());
        if valid.len() > room {
            let mut end = valid.floor_char_boundary(room);
            if end == 0 && used == 0 {
                // A page too small for its first character holds it all the same: a page
                // always moves the reader on.
                end = valid.ceil_char_boundary(1);
            }
            text.push_str(&valid[..end]);
            return (text, used + end);
        }
        text.push_str(valid);
        used += valid.len();
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        // A sequence cut by the page's end is left to the next page, unless it is all there is.
        let cut_at_end = more_follows && used + invalid.len() == bytes.len() && used > 0;
        if cut_at_end || (used > 0 && text.len() + '\u{fffd}'.len_utf8() > most) {
            return (text, used);
        }
        text.push('\u{fffd}');
        used += invalid.len();
    }
    (text, used)
}

/// A method's params as the far side reads them.
fn params_of(params: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(params).expect("method params serialize")
}

fn policy_details(v: &Verdict) -> PolicyDetails {
    PolicyDetails {
        decision: v.decision,
        rule: v.rule.clone(),
        reason: v.reason.clone(),
    }
}

/// `head` then `tail`: the sink kept the first `head` lines; keep the last `tail` of those.
fn apply_tail_to_head_view(view: &mut View, tail: usize, total_lines: u64) {
    let shown = view.text();
    let text = apply_head_tail(&shown, None, Some(tail));
    if text.len() == shown.len() {
        return;
    }
    let lines =
        text.matches('\n').count() as u64 + u64::from(!text.is_empty() && !text.ends_with('\n'));
    let last = view.shown_ranges.last().map_or(0, |r| r[1]);
    view.output_bytes = text.len() as u64;
    view.output_lines = lines;
    view.shown_ranges = if lines == 0 {
        Vec::new()
    } else {
        vec![[last + 1 - lines, last]]
    };
    view.parts = if lines == 0 {
        Vec::new()
    } else {
        vec![ViewPart::Shown {
            first_line: last + 1 - lines,
            text,
        }]
    };
    view.truncated = view.truncated || lines < total_lines;
    view.truncated_by = Some(agent_exec_sink::TruncatedBy::Lines);
}

/// The windows a result shows of a capture: the output's — stdout's, with `streams:
/// "separate"` — and then stderr's (kept apart, and not empty), each with what was cut of it.
struct Shown<'a> {
    view: View,
    truncation: Option<Truncation>,
    stderr: Option<&'a View>,
    stderr_truncation: Option<Truncation>,
    /// The budget of one window (two share the output window's).
    max_bytes: usize,
}

impl<'a> Shown<'a> {
    fn of(capture: &'a Capture, plan: &Plan, default: Direction) -> Shown<'a> {
        let (mut view, totals, artifact) = match (&capture.stdout, plan.separate) {
            (Some(stdout), true) => (
                stdout.clone(),
                capture.totals.stdout,
                capture.stream_artifacts[0].as_ref(),
            ),
            _ => (
                capture.view.clone(),
                capture.totals.merged,
                capture.artifact.as_ref(),
            ),
        };
        let lines = plan.lines;
        if let (Some(_), Some(t), false) = (lines.head, lines.tail, lines.both) {
            apply_tail_to_head_view(&mut view, t, totals.lines);
        }
        let truncation = view
            .truncated
            .then(|| truncation_details(&view, &totals, artifact, plan, default));
        let stderr = capture
            .stderr
            .as_ref()
            .filter(|_| plan.separate && capture.totals.stderr.bytes > 0);
        let stderr_truncation = stderr.filter(|v| v.truncated).map(|v| {
            let artifact = capture.stream_artifacts[1].as_ref();
            truncation_details(v, &capture.totals.stderr, artifact, plan, default)
        });
        Shown {
            view,
            truncation,
            stderr,
            stderr_truncation,
            max_bytes: plan.sink.max_bytes,
        }
    }
}

/// What was cut of a stream of `totals` shown through `view`, whose artifact is `artifact`.
fn truncation_details(
    view: &View,
    totals: &StreamTotals,
    artifact: Option<&ArtifactInfo>,
    plan: &Plan,
    default: Direction,
) -> Truncation {
    let lines = plan.lines;
    let direction = match (lines.head, lines.tail) {
        (Some(_), Some(_)) if lines.both => Direction::Both,
        (Some(_), _) => Direction::Head,
        (None, Some(_)) => Direction::Tail,
        // A smart window that shows one range is exactly a tail view: say so.
        (None, None) if default == Direction::Smart && view.shown_ranges.len() <= 1 => {
            Direction::Tail
        }
        (None, None) => default,
    };
    let shown_range = match (view.shown_ranges.first(), view.shown_ranges.last()) {
        (Some(first), Some(last)) => [first[0], last[1]],
        _ => [0, 0],
    };
    Truncation {
        direction,
        truncated_by: view
            .truncated_by
            .unwrap_or(agent_exec_sink::TruncatedBy::Bytes),
        total_bytes: totals.bytes,
        total_lines: totals.lines,
        output_bytes: view.output_bytes,
        output_lines: view.output_lines,
        shown_range,
        shown_ranges: view.shown_ranges.clone(),
        salient_lines: view.salient_lines,
        artifact_id: artifact.map(|a| ArtifactId(a.id.clone())),
        artifact_capped: artifact.is_some_and(|a| a.capped),
    }
}

/// How long `job_kill` waits for a job's tree beyond the grace between TERM and KILL.
const JOB_KILL_SLACK: Duration = Duration::from_secs(5);

/// Calls on remote targets (contract §9): checked and policed here, carried over there.
impl Tool {
    /// Where a call goes: `Ok(None)` here; why the target named cannot be used.
    pub(crate) fn target_of(&self, asked: Option<&str>) -> Result<Option<RemoteTarget>, String> {
        self.runner()
            .config
            .remote
            .resolve(asked)
            .map_err(|refused| refused.to_string())
    }

    /// Carries a server method (`job_output`, `job_input`, `job_kill`, `job_list`,
    /// `artifact_read`, `session_close`) to the target its params name (`target`), or the
    /// operator's; `None` when it is for here. The params are those of the method (contract
    /// §7).
    pub fn forward(
        &self,
        target: Option<&str>,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Option<ToolResult> {
        let target = match self.target_of(target) {
            Ok(Some(t)) => t,
            Ok(None) => return None,
            Err(refused) => {
                return Some(ToolResult::invalid(refused, self.runner().workdir_text()));
            }
        };
        let mut params = params;
        if let Some(object) = params.as_object_mut() {
            object.remove("target");
        }
        // A job's output may be waited for (at most 10 minutes); the rest answer at once.
        let waits = params
            .get("wait_ms")
            .and_then(Value::as_u64)
            .map_or(Duration::ZERO, |ms| {
                Duration::from_millis(ms.min(MAX_WAIT_MS))
            });
        let answer = self.runner().remotes.call(
            &target,
            method,
            params,
            cancel,
            waits + crate::remote::NO_ANSWER_BOUND,
            &mut |_| {},
        );
        Some(crate::remote::remote_result(&target, answer, ""))
    }

    /// An `exec` on `target`: checked and policed here, run over there.
    pub(crate) fn remote_exec(
        &self,
        request: &Request,
        target: &RemoteTarget,
        cancel: &CancelToken,
        approval: Approval,
        observer: Option<&Observer>,
    ) -> ToolResult {
        let config = &self.runner().config;
        // The working directory is the far side's: it is resolved there.
        let mut here = request.clone();
        here.cwd = None;
        // The far side enforces its own default; this side only checks a request tightens it.
        let far_mode = config.sandbox.mode_of_calls(true);
        let validated = match crate::validate::validate(
            &here,
            &config.workdir,
            config.default_timeout,
            config.yield_after,
            far_mode,
        ) {
            Ok(v) => v,
            Err(e) => {
                let mut invalid = ToolResult::invalid(e.0, request.cwd.clone().unwrap_or_default());
                invalid.details.target = Some(target.to_string());
                return invalid;
            }
        };
        let plan = self.runner.plan(validated);
        if let Some(mut refused) = self.police(&plan, approval) {
            refused.details.target = Some(target.to_string());
            return refused;
        }
        let mut forwarded = request.clone();
        forwarded.target = None;
        if forwarded.timeout.is_none() && forwarded.timeout_ms.is_none() {
            forwarded.timeout_ms = i64::try_from(config.default_timeout.as_millis()).ok();
        }
        // The operator's yield is this side's: the far side keeps the job, read through here.
        if forwarded.yield_ms.is_none() {
            forwarded.yield_ms = config
                .yield_after
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        }
        forwarded.progress |= observer.is_some();
        let params = serde_json::to_value(&forwarded).expect("a request serializes");
        let answer = self.runner().remotes.call(
            target,
            "exec",
            params,
            cancel,
            plan.timeout + config.grace + crate::remote::NO_ANSWER_BOUND,
            &mut |update| {
                if let Some(observer) = observer {
                    observer.absorb(update);
                }
            },
        );
        crate::remote::remote_result(target, answer, request.cwd.as_deref().unwrap_or(""))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::page_text;

    proptest! {
        /// Pages of any bytes, of any size, each within its size (or its first character),
        /// join back into the text of the whole (an invalid sequence as U+FFFD, as one read of
        /// it all shows it).
        #[test]
        fn pages_join_into_the_text_of_the_whole(
            bytes in proptest::collection::vec(
                prop_oneof![any::<u8>(), Just(0xc3), Just(0xa9), Just(0xe2), Just(0x9c)],
                0..400,
            ),
            page in 1usize..64,
        ) {
            let mut joined = String::new();
            let mut from = 0;
            while from < bytes.len() {
                let end = (from + page.max(4)).min(bytes.len());
                let (text, used) = page_text(&bytes[from..end], page, end < bytes.len());
                prop_assert!(text.len() <= page.max(4) && used > 0);
                joined.push_str(&text);
                from += used;
            }
            prop_assert_eq!(joined, String::from_utf8_lossy(&bytes).into_owned());
        }
    }
}
