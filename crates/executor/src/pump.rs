//! Moving output from a command's pipe into a sink, without threads.
//!
//! A command's stdout and stderr share one pipe (see `spawn.rs`), so what arrives is in the
//! order it was written. Two pipes ([`OutputPipes::Separate`](crate::OutputPipes)) are read
//! in turn, each wakeup's data per pipe in order; across them the order of writes is lost.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use agent_exec_sink::{Sink, Stream};

use crate::sys::{self, ReadState};

/// Size of one read. Large reads keep syscalls few on floods.
const READ_SIZE: usize = 256 * 1024;
/// Reads per stream per wakeup, so one flooding stream cannot starve the other.
const ROUNDS: usize = 4;

/// Bounds on draining pipes still held open by background children after the main process exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DrainLimits {
    /// Stop after this long without data. Default: 250 ms.
    pub idle: Duration,
    /// Stop after this long in all. Default: 2 s.
    pub max: Duration,
}

impl Default for DrainLimits {
    fn default() -> Self {
        DrainLimits {
            idle: Duration::from_millis(250),
            max: Duration::from_secs(2),
        }
    }
}

/// Makes an output pipe ready for a pump: non-blocking, and grown to 1 MiB so a flooding
/// writer blocks less often and every read takes more.
pub(crate) fn ready_output_pipe(fd: RawFd) {
    let _ = sys::set_nonblocking(fd);
    sys::grow_pipe(fd, 1 << 20);
}

/// The output pipe of a command (or its two, stdout and stderr), read into a sink.
pub(crate) struct Pump<'a, S: Sink + ?Sized> {
    fds: [Option<RawFd>; 2],
    sink: &'a mut S,
    buf: Vec<u8>,
    /// The sink asked to stop.
    pub(crate) stopped: bool,
    pub(crate) last_data: Instant,
    /// Where a prompt leaves the output: nothing printed yet (a bare `read x`), or the output
    /// ends inside a line (no `\n` or `\r` last: `Continue? [y/N] `).
    pub(crate) at_prompt: bool,
}

thread_local! {
    /// A read buffer kept for the thread's next call: allocating (and zeroing) 256 KiB per call
    /// and freeing it again cost more than a small command's whole output handling.
    static SPARE_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl<S: Sink + ?Sized> Drop for Pump<'_, S> {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            let _ = SPARE_BUF.try_with(|spare| spare.set(buf));
        }
    }
}

impl<'a, S: Sink + ?Sized> Pump<'a, S> {
    /// A pump over descriptors made ready with [`ready_output_pipe`].
    pub(crate) fn new(stdout: Option<RawFd>, stderr: Option<RawFd>, sink: &'a mut S) -> Self {
        Pump {
            fds: [stdout, stderr],
            sink,
            buf: Vec::new(),
            stopped: false,
            last_data: Instant::now(),
            at_prompt: true,
        }
    }

    pub(crate) fn fds(&self) -> [Option<RawFd>; 2] {
        self.fds
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.fds.iter().all(Option::is_none)
    }

    /// Reads what is available on the streams marked ready.
    pub(crate) fn read_ready(&mut self, ready: [bool; 2]) {
        for (i, stream) in [Stream::Stdout, Stream::Stderr].into_iter().enumerate() {
            let Some(fd) = self.fds[i] else { continue };
            if !ready[i] {
                continue;
            }
            if self.buf.is_empty() {
                // Taken on first use: a call with no output never needs it.
                self.buf = SPARE_BUF
                    .try_with(std::cell::Cell::take)
                    .ok()
                    .filter(|b| b.len() == READ_SIZE)
                    .unwrap_or_else(|| vec![0; READ_SIZE]);
            }
            let sink = &mut *self.sink;
            let stopped = &mut self.stopped;
            let at_prompt = &mut self.at_prompt;
            let mut got = false;
            let state = sys::read_available(fd, &mut self.buf, ROUNDS, |chunk| {
                got = true;
                if let Some(&last) = chunk.last() {
                    *at_prompt = last != b'\n' && last != b'\r';
                }
                if !*stopped && !matches!(sink.push(stream, chunk), Ok(true)) {
                    *stopped = true;
                }
            });
            if got {
                self.last_data = Instant::now();
            }
            if state == ReadState::Closed {
                self.fds[i] = None;
            }
        }
    }

    /// Reads everything available now on both streams, without waiting.
    pub(crate) fn read_now(&mut self) {
        loop {
            let before = self.last_data;
            self.read_ready([true, true]);
            if self.last_data == before || self.is_closed() {
                break;
            }
        }
    }

    /// After the main process ended: reads until both pipes close, the streams stay idle for
    /// `limits.idle`, or `limits.max` passes. Returns whether the pipes closed by themselves.
    pub(crate) fn drain(&mut self, limits: DrainLimits) -> bool {
        let hard = Instant::now() + limits.max;
        self.last_data = Instant::now();
        while !self.is_closed() {
            let now = Instant::now();
            let idle_end = self.last_data + limits.idle;
            let until = idle_end.min(hard);
            if now >= until {
                return false;
            }
            let ready = sys::poll_readable(&self.fds, Some(until - now));
            self.read_ready([ready[0], ready[1]]);
        }
        true
    }

    pub(crate) fn finish(&mut self) {
        let _ = self.sink.finish();
    }
}
