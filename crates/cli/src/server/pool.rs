//! The workers that run requests: at most `max` at once, threads started as needed and kept
//! a while for the next request, so a burst costs no more threads than the bound.
//!
//! Reading the input is a role a worker takes ([`Pool::lead`]), not a thread of its own: the
//! worker that reads a request runs it itself ([`Pool::reserve`]) after handing the reading
//! to another worker, so a request's path has no hand-off between threads (a wake-up, which
//! costs more than the rest of a warm call on a virtual machine whose idle CPUs halt).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

pub(crate) type Task = Box<dyn FnOnce() + Send>;

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
    /// The reading role, waiting for a worker to take it.
    lead: Option<Task>,
    threads: usize,
    idle: usize,
    running: usize,
}

impl State {
    fn waiting(&self) -> usize {
        self.queue.len() + usize::from(self.lead.is_some())
    }
}

/// A request counted as running (against the bound) on the thread that holds this.
pub(crate) struct Reservation {
    pool: Arc<Pool>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut st = self.pool.lock();
        st.running -= 1;
        drop(st);
        self.pool.done.notify_all();
    }
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
        self.worker_for_one_more(&mut st)
            .map_err(Refused::NoThread)?;
        st.queue.push_back(task);
        drop(st);
        self.work.notify_one();
        Ok(())
    }

    /// Counts a request the calling thread runs itself, or says why it cannot.
    pub(crate) fn reserve(self: &Arc<Self>) -> Result<Reservation, Refused> {
        let mut st = self.lock();
        if st.queue.len() + st.running >= self.max {
            return Err(Refused::Busy(self.max));
        }
        st.running += 1;
        Ok(Reservation { pool: self.clone() })
    }

    /// Hands the reading role (`lead`: reads requests until it runs one itself) to a worker.
    /// It is not a request: it is never refused as busy nor counted as active.
    pub(crate) fn lead(self: &Arc<Self>, lead: Task) -> std::io::Result<()> {
        let mut st = self.lock();
        self.worker_for_one_more(&mut st)?;
        st.lead = Some(lead);
        drop(st);
        self.work.notify_one();
        Ok(())
    }

    /// Starts a worker when none is idle for one more waiting task.
    fn worker_for_one_more(self: &Arc<Self>, st: &mut State) -> std::io::Result<()> {
        if st.idle > st.waiting() {
            return Ok(());
        }
        let pool = self.clone();
        std::thread::Builder::new()
            .name("agent-exec-worker".into())
            .spawn(move || pool.work_loop())?;
        st.threads += 1;
        Ok(())
    }

    fn work_loop(&self) {
        let mut st = self.lock();
        loop {
            if let Some(lead) = st.lead.take() {
                drop(st);
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(lead));
                st = self.lock();
                continue;
            }
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
            if waited.timed_out() && st.waiting() == 0 {
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
    fn the_reading_role_runs_beside_reserved_requests_and_is_never_busy() {
        let pool = Pool::new(1);
        let held = pool.reserve().unwrap();
        assert!(matches!(pool.reserve(), Err(Refused::Busy(1))));
        assert!(matches!(
            pool.submit(Box::new(|| {})),
            Err(Refused::Busy(1))
        ));
        let (tx, rx) = mpsc::channel();
        pool.lead(Box::new(move || tx.send(()).unwrap())).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok(()));
        assert_eq!(pool.active(), 1, "the reading role is not a request");
        drop(held);
        assert!(pool.wait_idle(Duration::from_secs(30)));
        assert!(pool.reserve().is_ok());
    }

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
