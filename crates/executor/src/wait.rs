//! Bounded waits, in one place: for a process to end (its pidfd, a notification), and for any
//! other condition, looked at every so often until a bound passes ([`wait_until`]).

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// How long processes sent SIGKILL are waited for before they are given up: a process in
/// uninterruptible sleep (D state) cannot be waited for forever. Used by the end-of-call
/// sweep, by a cgroup given back, and by a dropped `Child` (`child.rs`).
pub(crate) const KILLED_WAIT: Duration = Duration::from_secs(2);

/// Looks at `done` until it says so, every `interval`, for up to `bound` (`Duration::MAX`:
/// no bound of its own, `done` gives up itself). Whether `done` said so. `done` is always
/// looked at once, even with a zero bound.
pub(crate) fn wait_until(
    bound: Duration,
    interval: Duration,
    mut done: impl FnMut() -> bool,
) -> bool {
    let until = Instant::now().checked_add(bound);
    loop {
        if done() {
            return true;
        }
        if until.is_some_and(|until| Instant::now() >= until) {
            return false;
        }
        std::thread::sleep(interval);
    }
}

/// Waits up to `bound` for `fd` (a pidfd: readable once its process has exited) to become
/// readable; whether it did. Interrupted by a signal, it waits again for what is left.
pub(crate) fn readable(fd: impl AsFd, bound: Duration) -> bool {
    let until = Instant::now().checked_add(bound);
    loop {
        let left = until.map(|u| u.saturating_duration_since(Instant::now()));
        let timeout = left.and_then(|l| Timespec::try_from(l).ok());
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(n) => return n > 0,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_already_met_is_looked_at_once_and_a_zero_bound_still_looks() {
        let mut looks = 0;
        assert!(wait_until(Duration::ZERO, Duration::from_mins(1), || {
            looks += 1;
            true
        }));
        assert_eq!(looks, 1);
        assert!(!wait_until(
            Duration::ZERO,
            Duration::from_millis(1),
            || false
        ));
    }

    #[test]
    fn a_condition_never_met_gives_up_at_the_bound() {
        let start = Instant::now();
        assert!(!wait_until(
            Duration::from_millis(30),
            Duration::from_millis(5),
            || false
        ));
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn a_pipe_that_stays_empty_is_not_readable_and_one_written_is() {
        let (read, write) = rustix::pipe::pipe().expect("a pipe");
        assert!(!readable(&read, Duration::from_millis(10)));
        rustix::io::write(&write, b"x").expect("a write");
        assert!(readable(&read, Duration::from_secs(30)));
    }
}
