//! The one supervise loop: a call's main process (a command, or a session's shell), its output,
//! its deadline, its cancellation, and — for a session — the shell's status pipe, in one `poll`.

use crate::process::Process;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use agent_exec_sink::Sink;

use crate::cancel::CancelToken;
use crate::containment::{CallGroup, Termination};
use crate::outcome::Stop;
use crate::pump::Pump;
use crate::status::ExitStatus;
use crate::sys;
use crate::waiting::InputWatch;

/// What is watched.
pub(crate) struct Watch<'a> {
    pub(crate) child: &'a mut Process,
    pub(crate) pidfd: Option<&'a OwnedFd>,
    pub(crate) group: &'a CallGroup,
    pub(crate) deadline: Option<Instant>,
    pub(crate) grace: Duration,
    pub(crate) cancel: &'a CancelToken,
    /// A second token that ends the call: the session was closed.
    pub(crate) close: Option<&'a CancelToken>,
    /// A process spared when the sink stops (a session's shell: only its command is ended).
    pub(crate) spare_on_sink_stop: Option<i32>,
    /// The call's input, watched for a wait nobody answers (a PTY call, a job).
    pub(crate) input: Option<InputWatch>,
}

/// How the loop ended.
#[derive(Debug)]
pub(crate) enum Finish {
    /// The main process exited.
    Exited(ExitStatus),
    /// The report (a session's status record) is complete; the main process runs on.
    Reported,
}

/// What a read of the report descriptor found.
pub(crate) enum Report {
    Complete,
    Partial,
    Closed,
}

/// The loop's result.
pub(crate) struct Supervised {
    pub(crate) finish: Finish,
    pub(crate) stop: Option<Stop>,
    /// The termination under way, for the end-of-call sweep to continue.
    pub(crate) termination: Option<Termination>,
}

/// Opens a pidfd for the child: readable once it exits.
pub(crate) fn pidfd(child: &Process) -> Option<OwnedFd> {
    match child.init() {
        Some(init) => init.exit_watch(),
        None => sys::pidfd_open(child.id() as i32),
    }
}

/// Runs until the main process exits or `report` says its record is complete. Stops the call
/// (TERM → grace → KILL) on the deadline, a cancel, a close, the sink's stop, or a wait for
/// input nobody answers (`w.input`).
pub(crate) fn supervise<S: Sink + ?Sized>(
    w: &mut Watch<'_>,
    pump: &mut Pump<'_, S>,
    mut report: Option<(RawFd, &mut dyn FnMut() -> Report)>,
) -> Supervised {
    let mut stop: Option<Stop> = None;
    let mut termination: Option<Termination> = None;
    let mut spared_killed_at: Option<Instant> = None;
    // Ask for the exit status only when the pidfd says the process ended (or there is no
    // pidfd): a flood of output then costs no wait4 per wakeup.
    let mut check_exit = true;
    let watcher = w.group.watcher();
    let mut next_watch = Instant::now() + crate::containment::WATCH_EVERY;
    loop {
        if check_exit {
            match w.child.try_wait() {
                Ok(Some(status)) => {
                    pump.read_now();
                    return Supervised {
                        finish: Finish::Exited(status),
                        stop,
                        termination,
                    };
                }
                Ok(None) => {}
                // Someone else reaped it (a foreign waitpid(-1)); its status is lost, not its end.
                Err(_) => {
                    pump.read_now();
                    return Supervised {
                        finish: Finish::Exited(ExitStatus::Exited(-1)),
                        stop,
                        termination,
                    };
                }
            }
        }
        let now = Instant::now();
        if stop.is_none() {
            stop = if w.cancel.is_cancelled() {
                Some(Stop::Cancelled)
            } else if w.close.is_some_and(CancelToken::is_cancelled) {
                Some(Stop::SessionClosed)
            } else if w.deadline.is_some_and(|d| now >= d) {
                Some(Stop::Timeout)
            } else if pump.stopped {
                Some(Stop::SinkFull)
            } else if watcher.is_some() && now >= next_watch {
                next_watch = now + crate::containment::WATCH_EVERY;
                watcher
                    .as_ref()
                    .and_then(crate::containment::Watcher::exceeded)
                    .map(|_| Stop::LimitReached)
            } else {
                None
            };
        }
        // Looked at only once the output has been idle a while: a few `/proc` reads per process.
        let mut input_wake = None;
        if stop.is_none()
            && let Some(input) = w.input.as_mut()
        {
            let (waiting, again) = input.tick(w.group, pump.last_data, pump.at_prompt, now);
            if waiting {
                stop = Some(Stop::WaitingForInput);
            } else {
                input_wake = Some(again);
            }
        }
        if termination.is_none()
            && let Some(s) = stop
        {
            // A satisfied head, or a command waiting for a terminal the session lacks, ends the
            // command's processes: the session's shell is kept.
            let spare = matches!(s, Stop::SinkFull | Stop::WaitingForInput)
                .then_some(w.spare_on_sink_stop)
                .flatten();
            termination = Some(Termination::begin(w.group, spare, w.grace));
        }
        let mut wake = if stop.is_none() { w.deadline } else { None };
        if stop.is_none() && watcher.is_some() {
            wake = Some(wake.map_or(next_watch, |x| x.min(next_watch)));
        }
        if let Some(at) = input_wake {
            wake = Some(wake.map_or(at, |x| x.min(at)));
        }
        if let Some(t) = termination.as_mut() {
            wake = Some(t.tick(w.group, now));
            if t.killed()
                && w.spare_on_sink_stop.is_some()
                && matches!(stop, Some(Stop::SinkFull | Stop::WaitingForInput))
            {
                // The spared shell itself keeps producing (a builtin loop): once its command's
                // processes are gone and a grace period has passed, end the shell too.
                let at = *spared_killed_at.get_or_insert(now + w.grace);
                if now >= at {
                    termination = Some(Termination::begin(w.group, None, w.grace));
                    w.spare_on_sink_stop = None;
                }
                wake = Some(wake.map_or(at, |x| x.min(at)));
            }
        }
        let mut timeout = wake.map(|t| t.saturating_duration_since(now));
        if w.pidfd.is_none() {
            // No pidfd: poll the exit status every few milliseconds.
            timeout = Some(timeout.map_or(Duration::from_millis(5), |t| {
                t.min(Duration::from_millis(5))
            }));
        }
        let [out, err] = pump.fds();
        let cancel_fd = (!w.cancel.is_cancelled()).then(|| w.cancel.fd());
        let close_fd = w.close.filter(|c| !c.is_cancelled()).map(CancelToken::fd);
        if matches!(cancel_fd, Some(None)) || matches!(close_fd, Some(None)) {
            // A token without a descriptor (out of them when it was first polled): look at
            // its flag every few milliseconds instead.
            timeout = Some(timeout.map_or(crate::cancel::FLAG_POLL, |t| {
                t.min(crate::cancel::FLAG_POLL)
            }));
        }
        let (cancel_fd, close_fd) = (cancel_fd.flatten(), close_fd.flatten());
        let report_fd = report.as_ref().map(|(fd, _)| *fd);
        let fds = [
            out,
            err,
            w.pidfd.map(AsRawFd::as_raw_fd),
            cancel_fd,
            close_fd,
            report_fd,
        ];
        let ready = sys::poll_readable(&fds, timeout);
        pump.read_ready([ready[0], ready[1]]);
        if ready[5]
            && let Some((_, read_report)) = report.as_mut()
        {
            match read_report() {
                Report::Complete => {
                    return Supervised {
                        finish: Finish::Reported,
                        stop,
                        termination,
                    };
                }
                Report::Partial => {}
                // The shell is going: its exit (the pidfd) ends the loop.
                Report::Closed => report = None,
            }
        }
        check_exit = w.pidfd.is_none() || ready[2] || termination.is_some();
    }
}
