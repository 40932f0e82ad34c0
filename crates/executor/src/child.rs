//! The one owner of a started child: its main process and the containment group it runs in.
//!
//! Every mode (a one-shot call, a prepared shell, a session's shell, a channel) keeps its
//! child in a [`Child`]. Its explicit paths (a normal wait, a graceful end) are the callers';
//! dropping it is the guarantee: a child still running has its whole group killed, is waited
//! for (bounded: [`KILLED_WAIT`]), and its pid leaves the registry of owned children
//! (`pids.rs`), so the orphan sweep may reap it should it outlive the bound.

use std::io;
use std::time::Duration;

use crate::containment::CallGroup;
use crate::pids::release_pid;
use crate::process::Process;
use crate::status::ExitStatus;
use crate::wait::{KILLED_WAIT, readable, wait_until};

/// How often a child without a pidfd is looked at while it is waited for.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// A started child and its group (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Child {
    process: Process,
    pid: i32,
    /// Its pid has left the registry: released once only, as the number may belong to another
    /// child of ours by the time this one is dropped.
    released: std::sync::atomic::AtomicBool,
    /// Dropped after the child is ended (fields drop after [`Drop::drop`]): a cgroup goes back
    /// to its pool empty.
    group: CallGroup,
}

impl Child {
    /// Takes ownership of `process`, started in `group`.
    pub(crate) fn new(process: Process, group: CallGroup) -> Child {
        Child {
            pid: process.id() as i32,
            released: std::sync::atomic::AtomicBool::new(false),
            process,
            group,
        }
    }

    /// Its pid.
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// The group it (and everything it starts) runs in.
    pub(crate) fn group(&self) -> &CallGroup {
        &self.group
    }

    /// The process and its group at once, for a supervise loop.
    pub(crate) fn parts(&mut self) -> (&mut Process, &CallGroup) {
        (&mut self.process, &self.group)
    }

    /// Its exit status, if it has exited (reaps it; its pid is released then).
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = self.process.try_wait();
        if let Ok(Some(_)) = status {
            self.release();
        }
        status
    }

    /// Waits for it to exit (unbounded: call it once it was told to end); its pid is released.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.process.wait();
        if status.is_ok() {
            self.release();
        }
        status
    }

    /// Waits up to `bound` for it to exit by itself; its status if it did. Woken by its pidfd
    /// the moment it exits (where none can be opened, it is looked at every few
    /// milliseconds).
    pub(crate) fn wait_for(&mut self, bound: Duration) -> Option<ExitStatus> {
        if let Ok(Some(status)) = self.try_wait() {
            return Some(status);
        }
        match crate::supervise::pidfd(&self.process) {
            Some(exited) => {
                readable(&exited, bound);
                self.try_wait().ok().flatten()
            }
            None => {
                let mut status = None;
                wait_until(bound, EXIT_POLL, || {
                    status = self.try_wait().ok().flatten();
                    status.is_some()
                });
                status
            }
        }
    }

    /// Kills its whole group and waits for it (unbounded, as [`Child::wait`]).
    pub(crate) fn kill_and_wait(&mut self) -> Option<ExitStatus> {
        self.group.kill(None);
        self.wait().ok()
    }

    /// Its owner has waited for it, or lost its status to someone else's wait: its pid leaves
    /// the registry of owned children now rather than when it is dropped.
    pub(crate) fn release(&self) {
        if !self
            .released
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            release_pid(self.pid);
        }
    }
}

impl Drop for Child {
    /// A child dropped while it runs leaves nothing behind: its group is killed and it is
    /// reaped, within [`KILLED_WAIT`] (past that it is left to the orphan sweep).
    fn drop(&mut self) {
        if matches!(self.process.try_wait(), Ok(None)) {
            self.group.kill(None);
            self.wait_for(KILLED_WAIT);
        }
        self.release();
    }
}
