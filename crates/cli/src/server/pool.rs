//! The workers that run requests: at most `max` at once, threads started as needed and kept
//! a while for the next request, so a burst costs no more threads than the bound.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

type Task = Box<dyn FnOnce() + Send>;

/// A worker with nothing to do for this long ends.
const IDLE_EXIT: Duration = Duration::from_secs(30);

/// Why a request was not taken.
#[derive(Debug)]
pub(crate) enum Refused {
    /// `max` requests are already running or waiting.
    Busy(usize),
    /// No thread could be started (out of threads or memory).
    NoThread(std::io::Error),
}

#[derive(Default)]
struct State {
    queue: VecDeque<Task>,
    threads: usize,
    idle: usize,
    running: usize,
}

pub(crate) struct Pool {
    state: Mutex<State>,
    /// Workers wait here for tasks.
    work: Condvar,
    /// Signalled when a task ends (for [`Pool::wait_idle`]).
    done: Condvar,
    max: usize,
}

impl Pool {
    pub(crate) fn new(max: usize) -> Arc<Pool> {
        Arc::new(Pool {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            done: Condvar::new(),
            max: max.max(1),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        super::lock(&self.state)
    }

    /// The bound on requests running or waiting.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Runs `task` on a worker, or says why it cannot.
    pub(crate) fn submit(self: &Arc<Self>, task: Task) -> Result<(), Refused> {
        let mut st = self.lock();
        if st.queue.len() + st.running >= self.max {
            return Err(Refused::Busy(self.max));
        }
        if st.idle <= st.queue.len() {
            let pool = self.clone();
            let spawned = std::thread::Builder::new()
                .name("agent-exec-worker".into())
                .spawn(move || pool.work_loop());
            match spawned {
                Ok(_) => st.threads += 1,
                Err(e) => return Err(Refused::NoThread(e)),
            }
        }
        st.queue.push_back(task);
        drop(st);
        self.work.notify_one();
        Ok(())
    }

    fn work_loop(&self) {
        let mut st = self.lock();
        loop {
            if let Some(task) = st.queue.pop_front() {
                st.running += 1;
                drop(st);
                // A panic must not leave `running` counted forever (the server would never end).
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
                st = self.lock();
                st.running -= 1;
                self.done.notify_all();
                continue;
            }
            st.idle += 1;
            let (guard, waited) = self
                .work
                .wait_timeout(st, IDLE_EXIT)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            st = guard;
            st.idle -= 1;
            if waited.timed_out() && st.queue.is_empty() {
                st.threads -= 1;
                return;
            }
        }
    }

    /// Requests running or waiting.
    pub(crate) fn active(&self) -> usize {
        let st = self.lock();
        st.queue.len() + st.running
    }

    /// Waits up to `wait` for every task to end; whether they did.
    pub(crate) fn wait_idle(&self, wait: Duration) -> bool {
        let st = self.lock();
        let (st, _) = self
            .done
            .wait_timeout_while(st, wait, |st| st.queue.len() + st.running > 0)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        st.queue.len() + st.running == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn past_the_bound_a_request_is_refused_and_later_ones_run() {
        let pool = Pool::new(2);
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        for _ in 0..2 {
            let rx = release_rx.clone();
            pool.submit(Box::new(move || {
                let _ = rx.lock().unwrap().recv();
            }))
            .unwrap();
        }
        assert!(matches!(
            pool.submit(Box::new(|| {})),
            Err(Refused::Busy(2))
        ));
        release_tx.send(()).unwrap();
        release_tx.send(()).unwrap();
        assert!(pool.wait_idle(Duration::from_secs(30)));
        let (tx, rx) = mpsc::channel();
        pool.submit(Box::new(move || tx.send(7).unwrap())).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok(7));
        assert!(pool.lock().threads <= 2, "threads stay within the bound");
    }
}
