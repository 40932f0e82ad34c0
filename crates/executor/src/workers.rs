//! Threads that run jobs' bodies, kept a while for the next one.
//!
//! Hand-written rather than a pool crate's, for its keep-alive: every call that may yield runs
//! as a job, so a thread's start — its stack mapped and guarded, its name, signal mask and
//! robust list set, a dozen system calls — was a tenth of a warm one-shot call's round trip
//! (measured through `serve`: 2.11 ms against 1.88 ms). Agents' calls come seconds apart, so a
//! thread is kept for a minute (the pools of `blocking` or tokio keep one for well under a
//! second, or need a runtime); there is no bound, as jobs are bounded by the registry.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A body to run.
pub(crate) type Task = Box<dyn FnOnce() + Send>;

/// How long an idle worker waits for its next task before it ends.
const KEEP_IDLE: Duration = Duration::from_mins(1);

/// One idle worker: where its next task goes.
struct Idle {
    id: u64,
    tasks: Sender<Task>,
}

/// The idle workers of one registry.
#[derive(Default)]
pub(crate) struct Workers {
    idle: Arc<Mutex<Vec<Idle>>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("idle", &lock(&self.idle).len())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Workers {
    /// Runs `task` on an idle worker, or on a new one (named `name`); the error of a thread
    /// that could not be started.
    pub(crate) fn run(&self, name: String, task: Task) -> std::io::Result<()> {
        let mut task = task;
        loop {
            let Some(worker) = lock(&self.idle).pop() else {
                break;
            };
            // A worker that ended meanwhile hands the task back.
            match worker.tasks.send(task) {
                Ok(()) => return Ok(()),
                Err(returned) => task = returned.0,
            }
        }
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tasks, inbox) = channel();
        let idle = self.idle.clone();
        std::thread::Builder::new()
            .name(name)
            .spawn(move || work(id, task, &tasks, &inbox, &idle))
            .map(drop)
    }
}

/// A worker's life: its first task, then each one it is handed while idle, until it has been
/// idle for [`KEEP_IDLE`].
fn work(
    id: u64,
    first: Task,
    tasks: &Sender<Task>,
    inbox: &Receiver<Task>,
    idle: &Mutex<Vec<Idle>>,
) {
    let mut task = first;
    loop {
        // A body that panics ends its own job (the registry's guard); the worker goes on.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
        lock(idle).push(Idle {
            id,
            tasks: tasks.clone(),
        });
        task = match inbox.recv_timeout(KEEP_IDLE) {
            Ok(next) => next,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                let mut list = lock(idle);
                match list.iter().position(|w| w.id == id) {
                    // Still listed: nobody is about to hand it a task.
                    Some(at) => {
                        list.swap_remove(at);
                        return;
                    }
                    // Taken off the list by a caller whose task is on its way.
                    None => {
                        drop(list);
                        match inbox.recv() {
                            Ok(next) => next,
                            Err(_) => return,
                        }
                    }
                }
            }
        };
    }
}
