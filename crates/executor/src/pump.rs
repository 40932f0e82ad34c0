//! Moving output from a command's pipes into a sink, in arrival order, without threads.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use agent_exec_sink::{Sink, Stream};

use crate::sys::{self, ReadState};

/// Size of one read. Large reads keep syscalls few on floods.
const READ_SIZE: usize = 256 * 1024;
/// Reads per stream per wakeup, so one flooding stream cannot starve the other.
const ROUNDS: usize = 4;

/// Bounds on draining pipes still held open by background children after the main process exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The two output pipes of a command, read into a sink.
pub(crate) struct Pump<'a, S: Sink + ?Sized> {
    fds: [Option<RawFd>; 2],
    sink: &'a mut S,
    buf: Vec<u8>,
    /// The sink asked to stop.
    pub(crate) stopped: bool,
    pub(crate) last_data: Instant,
}

impl<'a, S: Sink + ?Sized> Pump<'a, S> {
    pub(crate) fn new(stdout: Option<RawFd>, stderr: Option<RawFd>, sink: &'a mut S) -> Self {
        for fd in [stdout, stderr].into_iter().flatten() {
            let _ = sys::set_nonblocking(fd);
            sys::grow_pipe(fd, 1 << 20);
        }
        Pump {
            fds: [stdout, stderr],
            sink,
            buf: vec![0; READ_SIZE],
            stopped: false,
            last_data: Instant::now(),
        }
    }

    /// A pump over descriptors that are already non-blocking (a session's long-lived pipes).
    /// `buf` is a read buffer to reuse (empty: allocated on first data).
    pub(crate) fn prepared(
        stdout: Option<RawFd>,
        stderr: Option<RawFd>,
        sink: &'a mut S,
        buf: Vec<u8>,
    ) -> Self {
        Pump {
            fds: [stdout, stderr],
            sink,
            buf,
            stopped: false,
            last_data: Instant::now(),
        }
    }

    /// The read buffer, for the next pump over the same pipes.
    pub(crate) fn take_buf(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
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
                // Allocated on first use: a session round trip with no output never needs it.
                self.buf = vec![0; READ_SIZE];
            }
            let sink = &mut *self.sink;
            let stopped = &mut self.stopped;
            let mut got = false;
            let state = sys::read_available(fd, &mut self.buf, ROUNDS, |chunk| {
                got = true;
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
