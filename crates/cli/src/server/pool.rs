//! The workers that run requests: at most `max` at once, threads started as needed and kept
//! a while for the next request, so a burst costs no more threads than the bound. Past the
//! bound a request waits its turn in a queue (of at most [`QUEUE_REQUESTS`] requests and
//! [`QUEUE_BYTES`] of request text); past that, [`Pool::submit`] waits for room, and so the
//! reader stops reading: a client that sends faster than requests end is slowed down, never
//! refused. The queue is deep so that a `cancel` sent after a burst is still read (and
//! answered on the spot) rather than waiting behind it.
//!
//! Reading the input is a role a worker takes ([`Pool::lead`]), not a thread of its own: the
//! worker that reads a request runs it itself ([`Pool::reserve`]) after handing the reading
//! to another worker, so a request's path has no hand-off between threads (a wake-up, which
//! costs more than the rest of a warm call on a virtual machine whose idle CPUs halt).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use agent_exec_executor::CancelToken;

pub(crate) type Task = Box<dyn FnOnce() + Send>;

/// The most requests waiting for a worker.
pub(crate) const QUEUE_REQUESTS: usize = 4096;
/// The most request text (bytes of their lines) waiting for a worker.
pub(crate) const QUEUE_BYTES: usize = 64 << 20;

/// A worker with nothing to do for this long ends.
const IDLE_EXIT: Duration = Duration::from_secs(30);

/// Why a request was not taken: no thread could be started (out of threads or memory).
#[derive(Debug)]
pub(crate) struct NoThread(pub(crate) std::io::Error);

/// A request waiting for a worker.
struct Queued {
    task: Task,
    /// Bytes of its request line.
    size: usize,
    /// Its cancellation: a cancelled request does not wait its turn (its answer, `cancelled`,
    /// costs nothing to make).
    cancel: CancelToken,
}

#[derive(Default)]
struct State {
    /// Requests waiting for a worker.
    queue: VecDeque<Queued>,
    /// The sum of their sizes.
    queued_bytes: usize,
    /// The reading role, waiting for a worker to take it.
    lead: Option<Task>,
    threads: usize,
    idle: usize,
    running: usize,
    /// Threads waiting on `done` ([`Pool::submit`] for room, [`Pool::wait_idle`]): a request's
    /// end wakes nobody when there are none (a `notify` is a system call even then, on every
    /// request's path).
    done_waiters: usize,
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
        let (waiters, queued) = (st.done_waiters, !st.queue.is_empty());
        drop(st);
        self.pool.notify_done(waiters);
        // A queued request may run now.
        if queued {
            self.pool.work.notify_one();
        }
    }
}

pub(crate) struct Pool {
    state: Mutex<State>,
    /// Workers wait here for tasks (and for a running one to end, when the queue is not empty).
    work: Condvar,
    /// Signalled when a task ends (for [`Pool::wait_idle`]) or leaves the queue (for
    /// [`Pool::submit`]).
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

    /// Wakes the threads waiting on `done`, when there are any (`waiters`, read under the
    /// lock): a `notify` is a system call even when nobody waits.
    fn notify_done(&self, waiters: usize) {
        if waiters > 0 {
            self.done.notify_all();
        }
    }

    /// The bound on requests running at once (as many more may wait).
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Runs `task` (a request of `size` bytes) on a worker: at once when fewer than `max`
    /// run, else after those ahead of it. When the queue is full, waits for room first (the
    /// caller, the reader, reads no more meanwhile). `Err`: no thread could be started for it.
    pub(crate) fn submit(
        self: &Arc<Self>,
        task: Task,
        size: usize,
        cancel: CancelToken,
    ) -> Result<(), NoThread> {
        let mut st = self.lock();
        while !st.queue.is_empty()
            && (st.queue.len() >= QUEUE_REQUESTS || st.queued_bytes + size > QUEUE_BYTES)
        {
            st.done_waiters += 1;
            st = self
                .done
                .wait(st)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            st.done_waiters -= 1;
        }
        if st.running + st.queue.len() < self.max {
            self.worker_for_one_more(&mut st).map_err(NoThread)?;
        }
        st.queue.push_back(Queued { task, size, cancel });
        st.queued_bytes += size;
        drop(st);
        self.work.notify_one();
        Ok(())
    }

    /// Counts a request the calling thread runs itself; `None` when `max` already run or
    /// wait (the request is then [`submit`](Self::submit)ted to wait its turn).
    pub(crate) fn reserve(self: &Arc<Self>) -> Option<Reservation> {
        let mut st = self.lock();
        if st.queue.len() + st.running >= self.max {
            return None;
        }
        st.running += 1;
        Some(Reservation { pool: self.clone() })
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
            // The next in turn when one may run; else one that was cancelled while it waited.
            let next = if st.running < self.max {
                st.queue.pop_front()
            } else {
                st.queue
                    .iter()
                    .position(|q| q.cancel.is_cancelled())
                    .and_then(|i| st.queue.remove(i))
            };
            if let Some(Queued { task, size, .. }) = next {
                st.queued_bytes -= size;
                st.running += 1;
                let waiters = st.done_waiters;
                drop(st);
                // Room in the queue.
                self.notify_done(waiters);
                // A panic must not leave `running` counted forever (the server would never end).
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
                st = self.lock();
                st.running -= 1;
                self.notify_done(st.done_waiters);
                if !st.queue.is_empty() {
                    self.work.notify_one();
                }
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

    /// A queued request was cancelled: a worker (a new one when none is idle) answers it now
    /// rather than in its turn.
    pub(crate) fn cancelled(self: &Arc<Self>) {
        let mut st = self.lock();
        if st.queue.iter().any(|q| q.cancel.is_cancelled()) && st.idle == 0 {
            let pool = self.clone();
            if std::thread::Builder::new()
                .name("agent-exec-worker".into())
                .spawn(move || pool.work_loop())
                .is_ok()
            {
                st.threads += 1;
            }
        }
        drop(st);
        self.work.notify_all();
    }

    /// Requests running or waiting.
    pub(crate) fn active(&self) -> usize {
        let st = self.lock();
        st.queue.len() + st.running
    }

    /// Waits up to `wait` for every task to end; whether they did.
    pub(crate) fn wait_idle(&self, wait: Duration) -> bool {
        let mut st = self.lock();
        st.done_waiters += 1;
        let (mut st, _) = self
            .done
            .wait_timeout_while(st, wait, |st| st.queue.len() + st.running > 0)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        st.done_waiters -= 1;
        st.queue.len() + st.running == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    const BOUND: Duration = Duration::from_secs(30);

    #[test]
    fn the_reading_role_runs_beside_reserved_requests_and_is_never_busy() {
        let pool = Pool::new(1);
        let held = pool.reserve().unwrap();
        assert!(pool.reserve().is_none());
        let (tx, rx) = mpsc::channel();
        pool.lead(Box::new(move || tx.send(()).unwrap())).unwrap();
        assert_eq!(rx.recv_timeout(BOUND), Ok(()));
        assert_eq!(pool.active(), 1, "the reading role is not a request");
        drop(held);
        assert!(pool.wait_idle(BOUND));
        assert!(pool.reserve().is_some());
    }

    /// Past the bound a request waits its turn and runs once one ends; past the queue's
    /// bound, `submit` waits for room; never more than `max` run at once.
    #[test]
    fn past_the_bound_requests_wait_their_turn() {
        let pool = Pool::new(2);
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (ran_tx, ran_rx) = mpsc::channel();
        let task = |n: usize| -> Task {
            let (rx, running, most, ran) = (
                release_rx.clone(),
                running.clone(),
                most.clone(),
                ran_tx.clone(),
            );
            Box::new(move || {
                let now = running.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                let _ = rx.lock().unwrap().recv_timeout(BOUND);
                running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                ran.send(n).unwrap();
            })
        };
        // Two run, the rest wait: the queue's text is full after the fourth.
        for n in 0..4 {
            pool.submit(task(n), QUEUE_BYTES / 2, CancelToken::new())
                .unwrap();
        }
        assert!(pool.reserve().is_none());
        // A fifth waits for room: submitted from another thread, it returns once one ends.
        let (submitted_tx, submitted_rx) = mpsc::channel();
        let fifth = {
            let (pool, task) = (pool.clone(), task(4));
            std::thread::spawn(move || {
                pool.submit(task, QUEUE_BYTES / 2, CancelToken::new())
                    .unwrap();
                submitted_tx.send(()).unwrap();
            })
        };
        for _ in 0..5 {
            release_tx.send(()).unwrap();
        }
        assert_eq!(submitted_rx.recv_timeout(BOUND), Ok(()));
        fifth.join().unwrap();
        let mut ran: Vec<usize> = (0..5)
            .map(|_| ran_rx.recv_timeout(BOUND).unwrap())
            .collect();
        ran.sort_unstable();
        assert_eq!(ran, [0, 1, 2, 3, 4]);
        assert!(pool.wait_idle(BOUND));
        assert!(
            most.load(std::sync::atomic::Ordering::SeqCst) <= 2,
            "at most max at once"
        );
        assert!(pool.lock().threads <= 3, "threads stay within the bound");
    }
}
