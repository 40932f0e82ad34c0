//! Cancellation that a blocking poll loop can wait on.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::sys;

/// How often a waiter without a descriptor (none could be made) looks at the flag.
pub(crate) const FLAG_POLL: Duration = Duration::from_millis(20);

/// Wake-up pipes of tokens that were dropped uncancelled (so never written to), kept for the
/// next token: a server makes a token per request, and a pipe made, set non-blocking and closed
/// per request was five system calls of a warm session call's ~30.
static SPARE_PIPES: std::sync::Mutex<Vec<(OwnedFd, OwnedFd)>> = std::sync::Mutex::new(Vec::new());

/// As many spare pipes as requests ever ran at once is plenty.
const MAX_SPARE_PIPES: usize = 64;

fn spare_pipes() -> std::sync::MutexGuard<'static, Vec<(OwnedFd, OwnedFd)>> {
    SPARE_PIPES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    /// The wake-up pipe, made when a waiter first needs it: a token costs no descriptor (and
    /// cannot fail) until something polls on it. `None` inside: the process was out of
    /// descriptors then; waiters fall back to looking at the flag every [`FLAG_POLL`].
    pipe: OnceLock<Option<(OwnedFd, OwnedFd)>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Cancelled: its pipe holds a byte, so it is closed rather than kept. (The last owner
        // is dropping it: no `cancel` can come in between.)
        if *self.cancelled.get_mut() {
            return;
        }
        if let Some(Some(pipe)) = self.pipe.take() {
            let mut spare = spare_pipes();
            if spare.len() < MAX_SPARE_PIPES {
                spare.push(pipe);
            }
        }
    }
}

/// How often a wait on a condition variable also looks at a [`CancelToken`] (cancelling wakes
/// only the token's own waiters).
pub const CANCEL_CHECK: Duration = Duration::from_millis(50);

/// A cancellation flag with a descriptor that becomes readable when cancelled, so a call
/// blocked in `poll` wakes at once. Clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

impl CancelToken {
    /// A fresh, uncancelled token.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Cancels: every call using this token ends its command (TERM → grace → KILL).
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::SeqCst) {
            // Pairs with the fence in `fd`: either this sees the pipe, or `fd` sees the flag.
            std::sync::atomic::fence(Ordering::SeqCst);
            self.wake();
        }
    }

    fn wake(&self) {
        if let Some(Some((_, write))) = self.inner.pipe.get() {
            let _ = sys::write_all(write, b"x");
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Waits up to `timeout` for a cancel; returns whether the token is cancelled.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        if !self.is_cancelled() {
            match self.fd() {
                Some(fd) => {
                    let _ = sys::poll_readable(&[Some(fd)], Some(timeout));
                }
                None => {
                    crate::wait::wait_until(timeout, FLAG_POLL.min(timeout), || {
                        self.is_cancelled()
                    });
                }
            }
        }
        self.is_cancelled()
    }

    /// The descriptor that becomes readable once cancelled; `None` when none could be made
    /// (out of descriptors): poll the flag instead.
    pub(crate) fn fd(&self) -> Option<RawFd> {
        let mut made = false;
        let pipe = self.inner.pipe.get_or_init(|| {
            made = true;
            if let Some(spare) = spare_pipes().pop() {
                return Some(spare);
            }
            let (read, write) = sys::pipe().ok()?;
            let _ = sys::set_nonblocking(write.as_raw_fd());
            Some((read, write))
        });
        // A cancel that came before the pipe existed wrote nothing: its maker writes for it.
        // (Only the maker: this runs on every turn of a poll loop.)
        if made {
            std::sync::atomic::fence(Ordering::SeqCst);
            if self.is_cancelled() {
                self.wake();
            }
        }
        pipe.as_ref().map(|(read, _)| read.as_raw_fd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_before_anyone_polled_still_wakes_the_poll() {
        let token = CancelToken::new();
        token.clone().cancel();
        let fd = token.fd().expect("a pipe");
        // Readable at once: the write the cancel could not make was made when the pipe was.
        assert_eq!(
            sys::poll_readable(&[Some(fd)], Some(Duration::from_secs(30))),
            vec![true]
        );
        assert!(token.wait_timeout(Duration::from_secs(30)));
    }

    #[test]
    fn a_reused_pipe_is_quiet_and_a_cancelled_one_is_never_reused() {
        // Many tokens polled and dropped uncancelled, then one cancelled: a later token's
        // descriptor is never readable before its own cancel.
        for _ in 0..4 {
            let token = CancelToken::new();
            assert!(!token.wait_timeout(Duration::from_millis(1)));
        }
        let cancelled = CancelToken::new();
        let _ = cancelled.fd();
        cancelled.cancel();
        drop(cancelled);
        for _ in 0..8 {
            let token = CancelToken::new();
            let fd = token.fd().expect("a pipe");
            assert_eq!(
                sys::poll_readable(&[Some(fd)], Some(Duration::ZERO)),
                vec![false]
            );
            token.cancel();
            assert!(token.wait_timeout(Duration::from_secs(30)));
        }
    }

    #[test]
    fn a_fresh_token_holds_no_descriptor() {
        let token = CancelToken::new();
        assert!(token.inner.pipe.get().is_none());
        assert!(!token.wait_timeout(Duration::from_millis(1)));
        assert!(token.inner.pipe.get().is_some());
    }
}
