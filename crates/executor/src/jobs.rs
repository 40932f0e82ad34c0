//! Background jobs: commands that keep running while the agent works, read incrementally.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_exec_sink::{Capture, OutputSink, Sink, Stream, TailBuffer};

use crate::cancel::CancelToken;
use crate::oneshot::run_with;
use crate::outcome::ExecOutcome;
use crate::spawn::Io;
use crate::spec::ExecSpec;
use crate::waiting::OnWaiting;

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
    capture: Option<Capture>,
    finished_at: Option<Instant>,
}

/// One background job.
#[derive(Debug)]
pub struct Job {
    /// Its id.
    pub id: String,
    /// The command it runs.
    pub command: String,
    state: Mutex<JobState>,
    changed: Condvar,
    /// Where its input goes: the stdin pipe, or the PTY master.
    stdin: Mutex<Option<File>>,
    /// It runs under a pseudo-terminal.
    pty: bool,
    /// A process of it is blocked on its input, its output idle (kept by its supervise loop).
    waiting: Arc<AtomicBool>,
    cancel: CancelToken,
    started: Instant,
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
    /// Artifact of the full output, once the job ended and it overflowed the window.
    pub artifact_id: Option<String>,
    /// Time since start.
    pub elapsed: Duration,
    /// A process of the job is blocked reading its input (its terminal, or its stdin pipe) and
    /// it has written nothing for [`JOB_WAITING_IDLE`](crate::JOB_WAITING_IDLE): it waits for
    /// `job_input`.
    pub waiting_for_input: bool,
    /// When `waiting_for_input`: the last bytes of output (at most 4 KiB, raw), where its
    /// prompt is; else empty.
    pub last_output: Vec<u8>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct JobSink {
    job: Arc<Job>,
    spill: OutputSink,
}

impl Sink for JobSink {
    type Error = std::convert::Infallible;
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Self::Error> {
        let _ = self.spill.push(stream, chunk);
        let mut st = lock(&self.job.state);
        st.ring.push(chunk);
        match stream {
            Stream::Stdout => st.stdout_bytes += chunk.len() as u64,
            Stream::Stderr => st.stderr_bytes += chunk.len() as u64,
        }
        drop(st);
        self.job.changed.notify_all();
        Ok(true)
    }
    fn finish(&mut self) -> Result<(), Self::Error> {
        self.spill.finish()
    }
}

/// The registry of background jobs of one tool or server.
#[derive(Debug, Default)]
pub struct JobRegistry {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
    next: AtomicU64,
    limits: JobLimits,
}

impl JobRegistry {
    /// An empty registry.
    pub fn new(limits: JobLimits) -> Self {
        JobRegistry {
            jobs: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            limits,
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
        self.expire();
        let live = lock(&self.jobs)
            .values()
            .filter(|j| lock(&j.state).status == JobStatus::Running)
            .count();
        if live >= self.limits.max_live {
            return Err(JobError::TooMany(self.limits.max_live));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed).to_string();
        let job = Arc::new(Job {
            id: id.clone(),
            command,
            state: Mutex::new(JobState {
                ring: TailBuffer::new(self.limits.ring_bytes),
                read_offset: 0,
                stdout_bytes: 0,
                stderr_bytes: 0,
                status: JobStatus::Running,
                capture: None,
                finished_at: None,
            }),
            changed: Condvar::new(),
            stdin: Mutex::new(None),
            pty,
            waiting: Arc::new(AtomicBool::new(false)),
            cancel: CancelToken::new(),
            started: Instant::now(),
        });
        lock(&self.jobs).insert(id.clone(), job.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        let thread_job = job.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("job-{id}"))
            .spawn(move || {
                let mut sink = JobSink {
                    job: thread_job.clone(),
                    spill,
                };
                let mut spec = spec;
                spec.timeout = None;
                let io = if pty {
                    Io::Pty(spec.pty_size)
                } else {
                    Io::Pipes {
                        stdin: true,
                        output: spec.output,
                    }
                };
                let waiting = OnWaiting::Flag(thread_job.waiting.clone());
                let outcome = run_with(
                    &spec,
                    &mut sink,
                    &thread_job.cancel,
                    io,
                    waiting,
                    &mut |input| {
                        // Writes never block a caller: what a job does not read is reported,
                        // not waited on.
                        if let Some(fd) = &input {
                            let _ =
                                crate::sys::set_nonblocking(std::os::fd::AsRawFd::as_raw_fd(fd));
                        }
                        *lock(&thread_job.stdin) = input.map(File::from);
                        let _ = tx.send(());
                    },
                );
                let _ = tx.send(());
                let capture = sink.spill.capture();
                *lock(&thread_job.stdin) = None;
                thread_job.waiting.store(false, Ordering::Relaxed);
                let mut st = lock(&thread_job.state);
                st.status = JobStatus::Finished(outcome);
                st.capture = Some(capture);
                st.finished_at = Some(Instant::now());
                drop(st);
                thread_job.changed.notify_all();
            });
        if let Err(e) = spawned {
            lock(&self.jobs).remove(&id);
            return Err(JobError::NoThread(e.to_string()));
        }
        // Return once the process exists (or failed to start), so an immediate read sees it.
        let _ = rx.recv_timeout(Duration::from_secs(5));
        Ok(job)
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
        jobs.sort_by_key(|j| j.id.parse::<u64>().unwrap_or(u64::MAX));
        jobs
    }

    /// Ends every job (TERM → grace → KILL), waiting at most `wait` for them.
    pub fn shutdown(&self, wait: Duration) {
        let jobs: Vec<Arc<Job>> = lock(&self.jobs).values().cloned().collect();
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
            // It waits for input (already, or from now on): nothing more comes until it gets
            // some, so waiting longer only delays the answer that says so.
            if self.waiting.load(Ordering::Relaxed) {
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
        let waiting_for_input =
            st.status == JobStatus::Running && self.waiting.load(Ordering::Relaxed);
        let last_output = if waiting_for_input {
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
            artifact_id: st
                .capture
                .as_ref()
                .and_then(|c| c.artifact.as_ref().map(|a| a.id.clone())),
            elapsed: self.started.elapsed(),
        }
    }

    /// Writes to the job's stdin; `eof` closes it afterwards (under a PTY: sends the
    /// terminal's end-of-file character, Ctrl-D, as a user would). Never blocks for long: when
    /// the job does not take all of `data` within a second (its input is full), the rest is
    /// not written, the input stays open, and [`InputTaken::written`] says how much went.
    pub fn input(&self, data: &[u8], eof: bool) -> Result<InputTaken, JobError> {
        if let JobStatus::Finished(o) = &lock(&self.state).status {
            return Err(JobError::NoInput {
                id: self.id.clone(),
                why: NoInput::Ended(Box::new(o.clone())),
            });
        }
        let mut stdin = lock(&self.stdin);
        let Some(pipe) = stdin.as_mut() else {
            return Err(JobError::NoInput {
                id: self.id.clone(),
                why: NoInput::Closed,
            });
        };
        // Whatever it waited for may have come: the job's loop looks again once it is idle.
        self.waiting.store(false, Ordering::Relaxed);
        let mut bytes = data.to_vec();
        if eof && self.pty {
            bytes.push(b'\x04');
        }
        let sent = match write_within(pipe, &bytes, INPUT_WAIT) {
            Ok(n) => n,
            Err(e) => {
                *stdin = None;
                return Err(JobError::NoInput {
                    id: self.id.clone(),
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
}
