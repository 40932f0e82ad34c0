//! Background jobs: commands that keep running while the agent works, read incrementally.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_exec_sink::{Capture, OutputSink, Sink, Stream, TailBuffer};

use crate::cancel::CancelToken;
use crate::oneshot::run_with;
use crate::outcome::ExecOutcome;
use crate::spawn::Io;
use crate::spec::ExecSpec;
use crate::waiting::{OnWaiting, Wait, WaitSlot, WaitedOn};

/// Output kept for the prompt of a job waiting for input: its last bytes.
const PROMPT_BYTES: u64 = 4096;

/// Bounds of the job registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct JobLimits {
    /// Most jobs running at once. Default: 32.
    pub max_live: usize,
    /// Bytes of recent output each job keeps in memory. Default: 256 KiB.
    pub ring_bytes: usize,
    /// How long a finished job stays readable. Default: 1 hour.
    pub keep_finished: Duration,
    /// Most finished jobs kept (the oldest go first). Default: 128.
    pub max_finished: usize,
}

impl Default for JobLimits {
    fn default() -> Self {
        JobLimits {
            max_live: 32,
            ring_bytes: 256 * 1024,
            keep_finished: Duration::from_hours(1),
            max_finished: 128,
        }
    }
}

/// Errors of job operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// No job has that id.
    #[error("no job with id {id}")]
    NotFound {
        /// The id asked for.
        id: String,
        /// Ids known.
        known: Vec<String>,
    },
    /// Too many jobs are running.
    #[error("{0} background jobs are already running (the limit)")]
    TooMany(usize),
    /// No thread could be started for the job (the process is out of threads or memory).
    #[error("could not start a thread for the job: {0}")]
    NoThread(String),
    /// The job cannot take input.
    #[error("job {id} cannot take input")]
    NoInput {
        /// The job.
        id: String,
        /// Why.
        why: NoInput,
    },
}

/// Why a job cannot take input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoInput {
    /// It has ended.
    Ended(Box<ExecOutcome>),
    /// Its input was closed (by an earlier `eof`).
    Closed,
    /// It stopped reading its input (the write failed with this reason).
    NotReading(String),
}

/// How long [`Job::input`] waits for a job that is slow to read before it reports what it
/// could not take.
const INPUT_WAIT: Duration = Duration::from_secs(1);

/// What [`Job::input`] delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputTaken {
    /// Bytes of the data written (all of it, or what the job took before its input filled up).
    pub written: usize,
    /// The input was closed (`eof`, and all the data was written).
    pub closed: bool,
}

/// State of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobStatus {
    /// Still running.
    Running,
    /// Ended.
    Finished(ExecOutcome),
}

#[derive(Debug)]
struct JobState {
    ring: TailBuffer,
    read_offset: u64,
    stdout_bytes: u64,
    stderr_bytes: u64,
    status: JobStatus,
    /// The capture of its output while it runs: the window so far, the artifact it spills to.
    spill: Option<OutputSink>,
    capture: Option<Capture>,
    finished_at: Option<Instant>,
}

/// One background job.
#[derive(Debug)]
pub struct Job {
    /// Its id, once it is seen (a call that may yield gets one when it yields).
    id: std::sync::OnceLock<String>,
    /// The command it runs.
    pub command: String,
    state: Mutex<JobState>,
    changed: Condvar,
    /// Where its input goes: the stdin pipe, or the PTY master.
    stdin: Mutex<Option<File>>,
    /// It runs under a pseudo-terminal.
    pty: bool,
    /// What a process of it is blocked on, its output idle (kept by its supervise loop).
    waiting: Arc<WaitSlot>,
    cancel: CancelToken,
    started: Instant,
    /// Its timeout, from its start: a call that yielded keeps the one it was started with.
    /// `None`: a background job, which runs until it ends or is killed.
    timeout: Option<Duration>,
    /// Where the registry holds it while nobody sees it.
    key: u64,
}

/// What a read of a job's output returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutput {
    /// New (or all held) raw output.
    pub bytes: Vec<u8>,
    /// How many of the last of `bytes` no earlier read returned (all of them in `new` mode).
    pub unseen: usize,
    /// Bytes that were dropped from the ring before they could be read.
    pub dropped: u64,
    /// The job's status.
    pub status: JobStatus,
    /// Raw bytes per stream so far. stdout and stderr share one pipe (or a terminal) unless
    /// the spec asked for [`OutputPipes::Separate`](crate::OutputPipes), so all the output
    /// counts here and `stderr_bytes` is 0.
    pub stdout_bytes: u64,
    /// See `stdout_bytes`.
    pub stderr_bytes: u64,
    /// Artifact of the full output, once the job ended and it overflowed the window (of its
    /// stdout, when its streams were kept apart).
    pub artifact_id: Option<String>,
    /// Artifact of its stderr, when its streams were kept apart and stderr overflowed.
    pub stderr_artifact_id: Option<String>,
    /// Time since start.
    pub elapsed: Duration,
    /// A process of the job is blocked reading its input (its terminal, or its stdin pipe) and
    /// it has written nothing for [`JOB_WAITING_IDLE`](crate::JOB_WAITING_IDLE): it waits for
    /// `job_input`.
    pub waiting_for_input: bool,
    /// What a process of it is blocked on, when it waits: its input (`waiting_for_input`), or
    /// a terminal it does not have (nothing can answer that).
    pub wait: Option<Wait>,
    /// Its timeout, from its start (`None`: a background job, which has none).
    pub timeout: Option<Duration>,
    /// When `waiting_for_input`: the last bytes of output (at most 4 KiB, raw), where its
    /// prompt is; else empty.
    pub last_output: Vec<u8>,
}

impl JobState {
    fn capture_now(&self) -> (Option<Capture>, Option<String>) {
        match &self.spill {
            Some(spill) => (Some(spill.capture()), spill.screen_now()),
            None => (self.capture.clone(), None),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where a job's output goes: its ring (what `job_output` reads) and its capture (the window,
/// the artifact), under the job's lock, so that a look while it runs sees both as one.
#[derive(Debug)]
pub struct JobSink {
    job: Arc<Job>,
}

impl Sink for JobSink {
    type Error = std::convert::Infallible;
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Self::Error> {
        let mut st = lock(&self.job.state);
        // The capture may ask to stop (a satisfied `| head` of a call that may yield).
        let more = match st.spill.as_mut() {
            Some(spill) => spill.push(stream, chunk)?,
            None => true,
        };
        st.ring.push(chunk);
        match stream {
            Stream::Stdout => st.stdout_bytes += chunk.len() as u64,
            Stream::Stderr => st.stderr_bytes += chunk.len() as u64,
        }
        drop(st);
        self.job.changed.notify_all();
        Ok(more)
    }
    fn finish(&mut self) -> Result<(), Self::Error> {
        match lock(&self.job.state).spill.as_mut() {
            Some(spill) => spill.finish(),
            None => Ok(()),
        }
    }
}

/// What the body of a job is given: its cancel token, where its waits are reported, and the
/// runs that hand their input to the job (`job_input`).
pub struct Attached<'a> {
    job: &'a Job,
    /// Told once the process exists (or failed to start).
    started: &'a Sender<()>,
}

impl Attached<'_> {
    /// Cancelled by `job_kill` (and the registry's shutdown).
    pub fn cancel(&self) -> &CancelToken {
        &self.job.cancel
    }

    /// Reports waits in the job (it is not ended by them): `job_output` says so, and a call
    /// that may yield yields.
    pub fn on_waiting(&self) -> OnWaiting {
        OnWaiting::Report(self.job.waiting.clone())
    }

    /// Runs `spec` to its end (or its timeout, if it has one), under the job's terminal when
    /// the job is a PTY one, else on pipes with a stdin pipe when `stdin` (else `/dev/null`);
    /// the terminal's master or the stdin pipe becomes the job's input.
    pub fn run<S: Sink + ?Sized>(&self, spec: &ExecSpec, sink: &mut S, stdin: bool) -> ExecOutcome {
        let io = if self.job.pty {
            Io::Pty(spec.pty_size)
        } else {
            Io::Pipes {
                stdin,
                output: spec.output,
            }
        };
        let job = self.job;
        run_with(
            spec,
            sink,
            &job.cancel,
            io,
            self.on_waiting(),
            &mut |input| {
                // Writes never block a caller: what a job does not read is reported, not
                // waited on.
                if let Some(fd) = &input {
                    let _ = crate::sys::set_nonblocking(std::os::fd::AsRawFd::as_raw_fd(fd));
                }
                *lock(&job.stdin) = input.map(File::from);
                let _ = self.started.send(());
            },
        )
    }
}

/// The body of a job: runs its command into the sink it is given.
pub type JobBody = Box<dyn FnOnce(&mut JobSink, &Attached<'_>) -> ExecOutcome + Send>;

/// How [`Job::wait_to_yield`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YieldWait {
    /// The job ended.
    Finished,
    /// A process of it waits (for input, or for a terminal it does not have).
    Waiting(Wait),
    /// The time to yield came.
    Elapsed,
    /// The caller cancelled.
    Cancelled,
}

/// The registry of background jobs of one tool or server.
#[derive(Debug, Default)]
pub struct JobRegistry {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    /// Calls that may yield, running as jobs nobody sees yet (they count as running): by key.
    unseen: Mutex<HashMap<u64, Arc<Job>>>,
    /// The next id: ids count the jobs seen, from 1.
    next: AtomicU64,
    /// The next key of an unseen job.
    next_key: AtomicU64,
    limits: JobLimits,
    /// The threads jobs run on.
    workers: crate::workers::Workers,
}

impl JobRegistry {
    /// An empty registry.
    pub fn new(limits: JobLimits) -> Self {
        JobRegistry {
            jobs: Mutex::new(HashMap::new()),
            unseen: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            next_key: AtomicU64::new(1),
            limits,
            workers: crate::workers::Workers::default(),
        }
    }

    /// Drops finished jobs past their time, then the oldest finished past the count bound.
    fn expire(&self) {
        let keep = self.limits.keep_finished;
        let mut jobs = lock(&self.jobs);
        jobs.retain(|_, j| {
            lock(&j.state)
                .finished_at
                .is_none_or(|t| t.elapsed() < keep)
        });
        let mut finished: Vec<(Instant, String)> = jobs
            .iter()
            .filter_map(|(id, j)| lock(&j.state).finished_at.map(|t| (t, id.clone())))
            .collect();
        if finished.len() > self.limits.max_finished {
            finished.sort_unstable();
            let excess = finished.len() - self.limits.max_finished;
            for (_, id) in finished.into_iter().take(excess) {
                jobs.remove(&id);
            }
        }
    }

    /// Starts `spec` as a job (no timeout is applied), under a pseudo-terminal when `pty`.
    /// `spill` receives the output for the artifact and the final window.
    pub fn start(
        &self,
        spec: ExecSpec,
        command: String,
        spill: OutputSink,
        pty: bool,
    ) -> Result<Arc<Job>, JobError> {
        let body: JobBody = Box::new(move |sink, attached| {
            let mut spec = spec;
            spec.timeout = None;
            attached.run(&spec, sink, true)
        });
        let (job, started) = self.launch(command, pty, None, spill, true, body)?;
        // Return once the process exists (or failed to start), so an immediate read sees it.
        let _ = started.recv_timeout(Duration::from_secs(5));
        Ok(job)
    }

    /// Starts a call that may become a job (a `yield_ms`): `body` runs its command into the
    /// sink it is given, with the call's own `timeout`. Nobody sees the job until its caller
    /// [publishes](Self::publish) it; a caller whose call ended first [forgets](Self::forget)
    /// it.
    pub fn start_call(
        &self,
        command: String,
        pty: bool,
        timeout: Duration,
        spill: OutputSink,
        body: JobBody,
    ) -> Result<Arc<Job>, JobError> {
        self.launch(command, pty, Some(timeout), spill, false, body)
            .map(|(job, _)| job)
    }

    fn launch(
        &self,
        command: String,
        pty: bool,
        timeout: Option<Duration>,
        spill: OutputSink,
        published: bool,
        body: JobBody,
    ) -> Result<(Arc<Job>, std::sync::mpsc::Receiver<()>), JobError> {
        self.expire();
        let running = |j: &&Arc<Job>| lock(&j.state).status == JobStatus::Running;
        let seen = lock(&self.jobs).values().filter(running).count();
        let live = seen + lock(&self.unseen).values().filter(running).count();
        if live >= self.limits.max_live {
            return Err(JobError::TooMany(self.limits.max_live));
        }
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let job = Arc::new(Job {
            id: std::sync::OnceLock::new(),
            key,
            command,
            state: Mutex::new(JobState {
                ring: TailBuffer::new(self.limits.ring_bytes),
                read_offset: 0,
                stdout_bytes: 0,
                stderr_bytes: 0,
                status: JobStatus::Running,
                spill: Some(spill),
                capture: None,
                finished_at: None,
            }),
            changed: Condvar::new(),
            stdin: Mutex::new(None),
            pty,
            waiting: Arc::new(WaitSlot::default()),
            cancel: CancelToken::new(),
            started: Instant::now(),
            timeout,
        });
        if published {
            self.publish(&job);
        } else {
            lock(&self.unseen).insert(key, job.clone());
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let thread_job = job.clone();
        let spawned = self.workers.run(
            format!("job-{key}"),
            Box::new(move || {
                let mut sink = JobSink {
                    job: thread_job.clone(),
                };
                let attached = Attached {
                    job: &thread_job,
                    started: &tx,
                };
                // A body that panics still ends its job: nothing waits on it for ever, and it
                // no longer counts as running.
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    body(&mut sink, &attached)
                }))
                .unwrap_or_default();
                let _ = tx.send(());
                let _ = sink.finish();
                *lock(&thread_job.stdin) = None;
                thread_job.waiting.clear();
                let mut st = lock(&thread_job.state);
                st.capture = st.spill.take().map(OutputSink::finish_capture);
                st.status = JobStatus::Finished(outcome);
                st.finished_at = Some(Instant::now());
                drop(st);
                thread_job.changed.notify_all();
            }),
        );
        if let Err(e) = spawned {
            lock(&self.jobs).remove(job.id());
            lock(&self.unseen).remove(&key);
            return Err(JobError::NoThread(e.to_string()));
        }
        Ok((job, rx))
    }

    /// Makes `job` seen: it gets its id, and is listed and found by it. Returns what it
    /// captured so far (see [`Job::capture_now`]), which counts as read: the answer of the call
    /// that yielded shows it, and the next read of the job starts after it.
    pub fn publish(&self, job: &Arc<Job>) -> (Option<Capture>, Option<String>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed).to_string();
        let _ = job.id.set(id.clone());
        let mut st = lock(&job.state);
        st.read_offset = st.ring.total();
        let shown = st.capture_now();
        drop(st);
        lock(&self.jobs).insert(id, job.clone());
        lock(&self.unseen).remove(&job.key);
        shown
    }

    /// Forgets an unseen job (a call that ended before it yielded: nobody ever saw it).
    pub fn forget(&self, job: &Job) {
        lock(&self.unseen).remove(&job.key);
    }

    /// The job with `id`.
    pub fn get(&self, id: &str) -> Result<Arc<Job>, JobError> {
        let jobs = lock(&self.jobs);
        jobs.get(id.trim()).cloned().ok_or_else(|| {
            let mut known: Vec<String> = jobs.keys().cloned().collect();
            known.sort_by_key(|k| k.parse::<u64>().unwrap_or(u64::MAX));
            JobError::NotFound {
                id: id.to_owned(),
                known,
            }
        })
    }

    /// Every job held (running, or finished and not yet expired), oldest first.
    pub fn list(&self) -> Vec<Arc<Job>> {
        self.expire();
        let mut jobs: Vec<Arc<Job>> = lock(&self.jobs).values().cloned().collect();
        jobs.sort_by_key(|j| j.id().parse::<u64>().unwrap_or(u64::MAX));
        jobs
    }

    /// Ends every job (TERM → grace → KILL), waiting at most `wait` for them.
    pub fn shutdown(&self, wait: Duration) {
        let jobs: Vec<Arc<Job>> = lock(&self.jobs)
            .values()
            .chain(lock(&self.unseen).values())
            .cloned()
            .collect();
        for j in &jobs {
            j.cancel.cancel();
        }
        for j in &jobs {
            j.wait_finished(wait);
        }
    }
}

/// Writes `bytes` to a non-blocking `file`, waiting up to `wait` in all for room; returns how
/// many went.
fn write_within(file: &mut File, bytes: &[u8], wait: Duration) -> std::io::Result<usize> {
    let until = Instant::now() + wait;
    let mut written = 0;
    while written < bytes.len() {
        match file.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero()
                    || !crate::sys::poll_writable(std::os::fd::AsRawFd::as_raw_fd(file), left)
                {
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

impl Job {
    /// Reads output: `all` = everything held, else what was not read yet. In either mode, waits
    /// up to `wait` for output no read has returned yet, for the job to end or to start
    /// waiting for input, or until `cancel` is cancelled (the reader went away: a server
    /// ending, a client that gave up).
    pub fn read(&self, all: bool, wait: Duration, cancel: Option<&CancelToken>) -> JobOutput {
        // How often a wait looks at whether the job started waiting for input (no wakeup
        // comes for that either).
        const WAITING_CHECK: Duration = Duration::from_millis(100);
        let until = Instant::now() + wait;
        let mut st = lock(&self.state);
        loop {
            let has_new = st.ring.total() > st.read_offset;
            if has_new || st.status != JobStatus::Running {
                break;
            }
            let now = Instant::now();
            if now >= until || cancel.is_some_and(CancelToken::is_cancelled) {
                break;
            }
            // It waits (already, or from now on): nothing more comes until it gets input, so
            // waiting longer only delays the answer that says so.
            if self.waiting.get().is_some() {
                break;
            }
            let slice = match cancel {
                Some(_) => (until - now).min(crate::cancel::CANCEL_CHECK),
                None => (until - now).min(WAITING_CHECK),
            };
            st = self
                .changed
                .wait_timeout(st, slice)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        let from = if all { 0 } else { st.read_offset };
        let (bytes, dropped) = st.ring.since(from);
        let bytes = bytes.to_vec();
        let unseen = usize::try_from(st.ring.total() - st.read_offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        st.read_offset = st.ring.total();
        let wait = self
            .waiting
            .get()
            .filter(|_| st.status == JobStatus::Running);
        let waiting_for_input = wait.as_ref().is_some_and(|w| w.on == WaitedOn::Input);
        let last_output = if wait.is_some() {
            let total = st.ring.total();
            st.ring.since(total.saturating_sub(PROMPT_BYTES)).0.to_vec()
        } else {
            Vec::new()
        };
        JobOutput {
            unseen,
            waiting_for_input,
            last_output,
            bytes,
            dropped,
            status: st.status.clone(),
            stdout_bytes: st.stdout_bytes,
            stderr_bytes: st.stderr_bytes,
            artifact_id: st.capture.as_ref().and_then(|c| {
                c.artifact
                    .as_ref()
                    .or(c.stream_artifacts[0].as_ref())
                    .map(|a| a.id.clone())
            }),
            stderr_artifact_id: st
                .capture
                .as_ref()
                .and_then(|c| c.stream_artifacts[1].as_ref().map(|a| a.id.clone())),
            elapsed: self.started.elapsed(),
            wait,
            timeout: self.timeout,
        }
    }

    /// Writes to the job's stdin; `eof` closes it afterwards (under a PTY: sends the
    /// terminal's end-of-file character, Ctrl-D, as a user would). Never blocks for long: when
    /// the job does not take all of `data` within a second (its input is full), the rest is
    /// not written, the input stays open, and [`InputTaken::written`] says how much went.
    pub fn input(&self, data: &[u8], eof: bool) -> Result<InputTaken, JobError> {
        if let JobStatus::Finished(o) = &lock(&self.state).status {
            return Err(JobError::NoInput {
                id: self.id().to_owned(),
                why: NoInput::Ended(Box::new(o.clone())),
            });
        }
        let mut stdin = lock(&self.stdin);
        let Some(pipe) = stdin.as_mut() else {
            return Err(JobError::NoInput {
                id: self.id().to_owned(),
                why: NoInput::Closed,
            });
        };
        // Whatever it waited for may have come: the job's loop looks again once it is idle.
        self.waiting.clear();
        let mut bytes = data.to_vec();
        if eof && self.pty {
            bytes.push(b'\x04');
        }
        let sent = match write_within(pipe, &bytes, INPUT_WAIT) {
            Ok(n) => n,
            Err(e) => {
                *stdin = None;
                return Err(JobError::NoInput {
                    id: self.id().to_owned(),
                    why: NoInput::NotReading(e.to_string()),
                });
            }
        };
        let written = sent.min(data.len());
        let closed = eof && sent == bytes.len();
        if closed {
            *stdin = None;
        }
        Ok(InputTaken { written, closed })
    }

    /// The command it runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Raw bytes of output so far: (stdout, stderr).
    pub fn output_bytes(&self) -> (u64, u64) {
        let st = lock(&self.state);
        (st.stdout_bytes, st.stderr_bytes)
    }

    /// Time since it started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether the job runs under a pseudo-terminal.
    pub fn is_pty(&self) -> bool {
        self.pty
    }

    /// Ends the job's whole tree (TERM → grace → KILL) and waits for it, at most `wait`.
    pub fn kill(&self, wait: Duration) -> JobStatus {
        self.cancel.cancel();
        self.wait_finished(wait)
    }

    fn wait_finished(&self, wait: Duration) -> JobStatus {
        let until = Instant::now() + wait;
        let mut st = lock(&self.state);
        while st.status == JobStatus::Running && Instant::now() < until {
            let left = until - Instant::now();
            st = self
                .changed
                .wait_timeout(st, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        st.status.clone()
    }

    /// The current status.
    pub fn status(&self) -> JobStatus {
        lock(&self.state).status.clone()
    }

    /// Its timeout, from its start (`None`: a background job).
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Waits, up to `until` (or until `yield_now` is cancelled: the caller yields at once), for
    /// the job to end, to wait (for input, or for a terminal it lacks), or for `cancel`; hands
    /// `on_output` what it writes meanwhile (from `*seen` on, a count of its raw bytes, moved
    /// on): a caller's live progress.
    pub fn wait_to_yield(
        &self,
        until: Instant,
        cancel: &CancelToken,
        yield_now: Option<&CancelToken>,
        seen: &mut u64,
        on_output: &mut dyn FnMut(&[u8]),
    ) -> YieldWait {
        // How often the wait looks at its cancel token and the job's wait slot (no wakeup
        // comes for either).
        const LOOK: Duration = Duration::from_millis(50);
        let mut st = lock(&self.state);
        loop {
            let (fresh, _) = st.ring.since(*seen);
            if !fresh.is_empty() {
                on_output(fresh);
            }
            *seen = st.ring.total();
            if st.status != JobStatus::Running {
                return YieldWait::Finished;
            }
            if cancel.is_cancelled() {
                return YieldWait::Cancelled;
            }
            if let Some(wait) = self.waiting.get() {
                return YieldWait::Waiting(wait);
            }
            let now = Instant::now();
            if now >= until || yield_now.is_some_and(CancelToken::is_cancelled) {
                return YieldWait::Elapsed;
            }
            st = self
                .changed
                .wait_timeout(st, (until - now).min(LOOK))
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }

    /// What it captured so far (the window, the artifact it spills to) and, under a terminal,
    /// the screen as it shows now; once it ended, the final capture.
    pub fn capture_now(&self) -> (Option<Capture>, Option<String>) {
        lock(&self.state).capture_now()
    }

    /// Its outcome and final capture, once it ended.
    pub fn finished(&self) -> Option<(ExecOutcome, Capture)> {
        let st = lock(&self.state);
        match (&st.status, &st.capture) {
            (JobStatus::Finished(o), Some(c)) => Some((o.clone(), c.clone())),
            _ => None,
        }
    }

    /// Its id: empty until it is seen ([`JobRegistry::publish`]).
    pub fn id(&self) -> &str {
        self.id.get().map_or("", String::as_str)
    }
}
