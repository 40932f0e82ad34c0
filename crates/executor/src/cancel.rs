//! Cancellation that a blocking poll loop can wait on.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sys;

#[derive(Debug)]
struct Inner {
    cancelled: AtomicBool,
    read: OwnedFd,
    write: OwnedFd,
}

/// A cancellation flag with a descriptor that becomes readable when cancelled, so a call
/// blocked in `poll` wakes at once. Clones share the flag.
#[derive(Debug, Clone)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

impl CancelToken {
    /// A fresh, uncancelled token.
    ///
    /// # Panics
    /// If the process is out of file descriptors.
    pub fn new() -> Self {
        let (read, write) =
            sys::pipe().expect("a pipe for a cancel token (out of file descriptors?)");
        let _ = sys::set_nonblocking(write.as_raw_fd());
        CancelToken {
            inner: Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                read,
                write,
            }),
        }
    }

    /// Cancels: every call using this token ends its command (TERM → grace → KILL).
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::SeqCst) {
            let _ = sys::write_all(&self.inner.write, b"x");
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Waits up to `timeout` for a cancel; returns whether the token is cancelled.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> bool {
        if !self.is_cancelled() {
            let _ = sys::poll_readable(&[Some(self.fd())], Some(timeout));
        }
        self.is_cancelled()
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.inner.read.as_raw_fd()
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}
