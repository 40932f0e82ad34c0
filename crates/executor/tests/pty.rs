//! PTY calls: the terminal's size, and a call or job waiting for input nobody gives.
//! Every wait here is bounded; nothing asserts on elapsed time.

mod support;

use std::time::{Duration, Instant};

use agent_exec_executor::jobs::{JobLimits, JobOutput, JobRegistry, JobStatus};
use agent_exec_executor::{CancelToken, ExecOutcome, ExecSpec, ExitStatus, Stop, run_pty};
use agent_exec_sink::{Capture, OutputSink, SinkConfig, TerminalSize};
use support::{PidFile, spec};

/// A PTY call rendered as a terminal shows it.
fn pty(spec: &ExecSpec) -> (ExecOutcome, Capture) {
    let mut sink = OutputSink::new(
        SinkConfig {
            terminal: Some(spec.pty_size),
            ..SinkConfig::default()
        },
        None,
    );
    let outcome = run_pty(spec, &mut sink, &CancelToken::new());
    (outcome, sink.finish_capture())
}

/// A call that would wait 10 minutes for its timeout, with a short prompt idle.
fn patient(command: &str, pids: &PidFile) -> ExecSpec {
    let mut s = spec(command, pids);
    s.timeout = Some(Duration::from_mins(10));
    s.prompt_idle = Some(Duration::from_millis(500));
    s
}

#[test]
fn the_terminal_has_the_size_asked_for() {
    let pids = PidFile::new();
    let (outcome, capture) = pty(&spec("stty size; tput cols", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.view.text(), "24 80\n80");
    let mut s = spec("stty size", &pids);
    s.pty_size = TerminalSize::new(120, 40).unwrap();
    let (_, capture) = pty(&s);
    assert_eq!(capture.view.text(), "40 120");
}

#[test]
fn a_prompt_nobody_answers_ends_the_call() {
    let pids = PidFile::new();
    let s = patient(
        "echo before; read -p 'Continue? [y/N] ' x; echo after $x",
        &pids,
    );
    let (outcome, capture) = pty(&s);
    assert_eq!(outcome.stop, Some(Stop::WaitingForInput), "{outcome:?}");
    assert!(outcome.waiting_for_input() && !outcome.timed_out());
    assert_eq!(capture.view.text(), "before\nContinue? [y/N]");
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn a_prompt_read_through_dev_tty_or_a_poll_counts_too() {
    let pids = PidFile::new();
    for command in [
        // `sudo` and `ssh` ask on /dev/tty.
        "printf 'Password: ' >/dev/tty; read -r x </dev/tty",
        // poll(2), select(2) and epoll with no timeout, after a prompt (no newline).
        "python3 -c 'import select,sys; print(\"poll? \", end=\"\", flush=True); p=select.poll(); p.register(0, select.POLLIN); p.poll()'",
        "python3 -c 'import select,sys; print(\"select? \", end=\"\", flush=True); select.select([sys.stdin],[],[])'",
        "python3 -c 'import selectors,sys; s=selectors.EpollSelector(); s.register(sys.stdin, selectors.EVENT_READ); print(\"epoll? \", end=\"\", flush=True); s.select()'",
    ] {
        let (outcome, capture) = pty(&patient(command, &pids));
        assert_eq!(
            outcome.stop,
            Some(Stop::WaitingForInput),
            "{command}: {outcome:?} {:?}",
            capture.view.text()
        );
    }
}

#[test]
fn a_quiet_command_that_reads_nothing_is_left_alone() {
    let pids = PidFile::new();
    for command in [
        "sleep 2; echo done",
        // A wait for input with a timeout wakes by itself (`top`, a countdown).
        "python3 -c 'import select,sys; select.select([sys.stdin],[],[], 2)'; echo done",
    ] {
        let (outcome, capture) = pty(&patient(command, &pids));
        assert_eq!(outcome.stop, None, "{command}: {outcome:?}");
        assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
        assert_eq!(capture.view.text(), "done");
    }
    // A program relaying the terminal (ssh, `docker run -it`) waits on it for ever while the far
    // side is quiet, but its last output ended a line: no prompt, it runs to its own end.
    let relay = patient(
        "echo 'remote: building'; python3 -c 'import select,sys,threading,time; threading.Thread(target=lambda: select.select([sys.stdin],[],[]), daemon=True).start(); time.sleep(2)'; echo done",
        &pids,
    );
    let (outcome, capture) = pty(&relay);
    assert_eq!(outcome.stop, None, "{outcome:?}");
    assert_eq!(capture.view.text(), "remote: building\ndone");
    // Off: the prompt waits for the timeout.
    let mut s = patient("read -p 'go? ' x", &pids);
    s.prompt_idle = None;
    s.timeout = Some(Duration::from_secs(2));
    let (outcome, _) = pty(&s);
    assert!(outcome.timed_out(), "{outcome:?}");
}

/// Reads a job until `done` holds, for at most 30 s.
fn read_until(
    job: &agent_exec_executor::jobs::Job,
    done: impl Fn(&JobOutput) -> bool,
) -> JobOutput {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let out = job.read(true, Duration::from_millis(200), None);
        if done(&out) || Instant::now() > until {
            return out;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_job_blocked_on_its_input_says_so_until_it_gets_it() {
    let registry = JobRegistry::new(JobLimits::default());
    for pty in [false, true] {
        let pids = PidFile::new();
        let command = "echo working; printf 'Password: '; read -r x; echo got $x";
        let job = registry
            .start(
                spec(command, &pids),
                command.into(),
                OutputSink::new(SinkConfig::default(), None),
                pty,
            )
            .unwrap();
        let out = read_until(&job, |o| o.waiting_for_input);
        assert!(out.waiting_for_input, "pty {pty}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.last_output).ends_with("Password: "),
            "{out:?}"
        );
        job.input(b"hunter2\n", false).unwrap();
        let out = read_until(&job, |o| o.status != JobStatus::Running);
        assert!(!out.waiting_for_input);
        assert!(
            String::from_utf8_lossy(&out.bytes).contains("got hunter2"),
            "{out:?}"
        );
    }
    // A job that computes quietly is not waiting.
    let pids = PidFile::new();
    let job = registry
        .start(
            spec("sleep 3", &pids),
            "sleep 3".into(),
            OutputSink::new(SinkConfig::default(), None),
            false,
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let out = job.read(true, Duration::ZERO, None);
    assert!(!out.waiting_for_input, "{out:?}");
    registry.shutdown(Duration::from_secs(5));
}
