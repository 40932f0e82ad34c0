//! What a running call has produced so far: the updates `run` shows on a terminal and the
//! async API streams (the same numbers `serve` sends as progress).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_exec_sink::{Sink, Stream, TailBuffer};

/// How much of the latest output an update carries.
const TAIL_BYTES: usize = 2048;

/// A running call's progress.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Since the call started.
    pub elapsed: Duration,
    /// Raw bytes of output so far: stdout and stderr share one pipe, so all of it counts here.
    pub stdout_bytes: u64,
    /// Raw stderr bytes counted apart: 0, as stderr shares stdout's pipe.
    pub stderr_bytes: u64,
    /// Lines so far (newlines in the raw output).
    pub lines: u64,
    /// The last whole lines of clean text, at most 2 KiB.
    pub tail: String,
}

impl Progress {
    /// The last line of output (for one-line displays), without its newline.
    pub fn last_line(&self) -> &str {
        self.tail
            .trim_end_matches('\n')
            .rsplit('\n')
            .next()
            .unwrap_or("")
    }

    /// One line for a progress display, never empty: the last line of output, or while there
    /// is none to show (a quiet `make -s`, a test runner that prints at the end), how long the
    /// command has run and how much it printed.
    pub fn message(&self) -> String {
        let line = self.last_line();
        if !line.trim().is_empty() {
            return line.to_owned();
        }
        let secs = self.elapsed.as_secs();
        let bytes = self.stdout_bytes + self.stderr_bytes;
        if bytes == 0 {
            format!("running for {secs}s, no output yet")
        } else {
            format!(
                "running for {secs}s, {} of output",
                agent_exec_sink::format_size(bytes)
            )
        }
    }
}

/// Watches a call's output as it arrives; [`snapshot`](Observer::snapshot) any time, from any
/// thread. Pass one to [`Tool::execute_observed`](crate::Tool::execute_observed).
#[derive(Debug)]
pub struct Observer {
    started: Instant,
    stdout: AtomicU64,
    stderr: AtomicU64,
    lines: AtomicU64,
    tail: Mutex<TailBuffer>,
}

impl Default for Observer {
    fn default() -> Self {
        Observer::new()
    }
}

impl Observer {
    /// An observer; its clock starts now.
    pub fn new() -> Observer {
        Observer {
            started: Instant::now(),
            stdout: AtomicU64::new(0),
            stderr: AtomicU64::new(0),
            lines: AtomicU64::new(0),
            tail: Mutex::new(TailBuffer::new(TAIL_BYTES)),
        }
    }

    /// The progress so far.
    pub fn snapshot(&self) -> Progress {
        let (clean, dropped_any) = {
            let tail = self
                .tail
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (tail.snapshot(), tail.total() > tail.bytes().len() as u64)
        };
        // Whole lines only: the first one is cut when older bytes were dropped.
        let tail = match (dropped_any, clean.find('\n')) {
            (true, Some(i)) => clean[i + 1..].to_owned(),
            _ => clean,
        };
        Progress {
            elapsed: self.started.elapsed(),
            stdout_bytes: self.stdout.load(Ordering::Relaxed),
            stderr_bytes: self.stderr.load(Ordering::Relaxed),
            lines: self.lines.load(Ordering::Relaxed),
            tail,
        }
    }

    /// Total bytes so far (a cheap check for "anything new?").
    pub fn bytes(&self) -> u64 {
        self.stdout.load(Ordering::Relaxed) + self.stderr.load(Ordering::Relaxed)
    }

    /// Takes a remote call's progress (the far side's `exec/progress` params) as its own.
    pub(crate) fn absorb(&self, update: &serde_json::Value) {
        let number = |key: &str| update.get(key).and_then(serde_json::Value::as_u64);
        if let Some(n) = number("stdout_bytes") {
            self.stdout.store(n, Ordering::Relaxed);
        }
        if let Some(n) = number("stderr_bytes") {
            self.stderr.store(n, Ordering::Relaxed);
        }
        if let Some(n) = number("lines") {
            self.lines.store(n, Ordering::Relaxed);
        }
        if let Some(tail) = update.get("tail").and_then(serde_json::Value::as_str) {
            let mut kept = TailBuffer::new(TAIL_BYTES);
            kept.push(tail.as_bytes());
            *self
                .tail
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = kept;
        }
    }

    /// Counts `chunk` of `stream` and keeps it in the tail.
    pub(crate) fn record(&self, stream: Stream, chunk: &[u8]) {
        let counter = match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        };
        counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        self.lines.fetch_add(
            memchr::memchr_iter(b'\n', chunk).count() as u64,
            Ordering::Relaxed,
        );
        self.tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(chunk);
    }
}

/// Progress is sampled this often while a call runs…
const UPDATE_EVERY: Duration = Duration::from_millis(250);
/// …and sent when the output changed, or at least this often…
const UPDATE_AT_LEAST: Duration = Duration::from_secs(5);
/// …the first one after a second even when nothing was printed, so a host's progress line
/// shows a quiet command running (as `run`'s own line on a terminal does).
const FIRST_UPDATE: Duration = Duration::from_secs(1);

/// Hands `send` the observer's progress while a call runs, on the one schedule every stream of
/// updates keeps (the async API's, `serve`'s `exec/progress`, MCP's `notifications/progress`):
/// at most every 250 ms, only when the output changed, and at least every 5 s (the first after
/// 1 s, whatever the output). Returns once
/// `finished` is cancelled or `send` returns false (nobody is listening any more); returns
/// the output's byte count at the last update sent.
pub fn report_progress(
    observer: &Observer,
    finished: &agent_exec_executor::CancelToken,
    mut send: impl FnMut(Progress) -> bool,
) -> u64 {
    let mut last_bytes = 0;
    let mut last_sent = Instant::now();
    let mut sent_any = false;
    while !finished.wait_timeout(UPDATE_EVERY) {
        let bytes = observer.bytes();
        let due = if sent_any {
            UPDATE_AT_LEAST
        } else {
            FIRST_UPDATE
        };
        if bytes != last_bytes || last_sent.elapsed() >= due {
            sent_any = true;
            if !send(observer.snapshot()) {
                break;
            }
            last_bytes = bytes;
            last_sent = Instant::now();
        }
    }
    last_bytes
}

/// Cancels its token when dropped: a reporter ends even when the call it reports on panics.
pub(crate) struct CancelOnDrop(pub(crate) agent_exec_executor::CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// A sink that shows each chunk to an observer on its way to the real sink.
pub(crate) struct Observed<'a, S> {
    pub(crate) inner: &'a mut S,
    pub(crate) observer: Option<&'a Observer>,
}

impl<S: Sink> Sink for Observed<'_, S> {
    type Error = S::Error;
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, S::Error> {
        if let Some(o) = self.observer {
            o.record(stream, chunk);
        }
        self.inner.push(stream, chunk)
    }
    fn finish(&mut self) -> Result<(), S::Error> {
        self.inner.finish()
    }
}
