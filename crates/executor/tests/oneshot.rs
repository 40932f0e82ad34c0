//! One-shot runs against helper programs that misbehave on purpose. This test binary does not
//! make itself a subreaper, so it exercises the marker scan that finds escaped processes.

mod support;

use std::time::Duration;

use agent_exec_executor::{CancelToken, ExecSpec, ExitStatus, run};
use agent_exec_sink::{OutputSink, SinkConfig};
use support::{PidFile, exec, spec};

#[test]
fn plain_command_exit_code_and_output() {
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("echo hello; echo oops >&2; exit 3", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(3)));
    assert_eq!(capture.view.text(), "hello\noops\n");
    // stdout and stderr share one pipe: everything is counted as stdout.
    assert_eq!(capture.totals.stdout.bytes, 11);
    assert_eq!(capture.totals.stderr.bytes, 0);
    assert!(!outcome.timed_out() && !outcome.cancelled());
    assert_eq!(outcome.processes_stopped, 0);
}

#[test]
fn stdin_is_dev_null() {
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("$MB read-stdin", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.view.text(), "read 0 bytes\n");
}

#[test]
fn pipefail_reports_the_failing_stage() {
    let pids = PidFile::new();
    let (outcome, _) = exec(&spec("false | cat", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(1)));
}

#[test]
fn hardened_environment_reaches_the_command() {
    let pids = PidFile::new();
    let (_, capture) = exec(&spec("echo $GIT_PAGER $TERM $CI $NO_COLOR", &pids));
    assert_eq!(capture.view.text(), "cat dumb 1 1\n");
}

#[test]
fn command_leads_its_own_process_group() {
    let pids = PidFile::new();
    let (_, capture) = exec(&spec("ps -o pid=,pgid= -p $$", &pids));
    let text = capture.view.text();
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(fields.len(), 2, "{}", capture.view.text());
    assert_eq!(fields[0], fields[1]);
}

#[test]
fn timeout_ends_a_process_that_ignores_term() {
    let pids = PidFile::new();
    let mut s = spec("$MB ignore-term 30", &pids);
    s.timeout = Some(Duration::from_millis(300));
    let (outcome, capture) = exec(&s);
    assert!(outcome.timed_out());
    assert_eq!(outcome.status, Some(ExitStatus::Signaled(9)));
    assert_eq!(capture.view.text(), "ignoring TERM\n");
    assert_eq!(pids.pids().len(), 1);
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn timeout_ends_a_stopped_process() {
    let pids = PidFile::new();
    let mut s = spec("exec $MB stop-self 30", &pids);
    s.timeout = Some(Duration::from_millis(300));
    let (outcome, capture) = exec(&s);
    assert!(outcome.timed_out());
    assert!(
        matches!(outcome.status, Some(ExitStatus::Signaled(_))),
        "{:?}",
        outcome.status
    );
    assert_eq!(capture.view.text(), "stopping\n");
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn closing_the_pipes_does_not_end_the_call() {
    let pids = PidFile::new();
    let mut s = spec("exec $MB close-and-stay 30", &pids);
    s.timeout = Some(Duration::from_millis(400));
    let (outcome, capture) = exec(&s);
    assert!(
        outcome.timed_out(),
        "the call must wait for the exit, not for EOF"
    );
    assert_eq!(capture.view.text(), "closing pipes\n");
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn background_child_holding_pipes_is_drained_then_stopped() {
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("$MB fork-grandchild 30", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert!(outcome.drain_cut_short);
    assert_eq!(outcome.processes_stopped, 1);
    assert!(capture.view.text().contains("parent exits"));
    assert_eq!(pids.pids().len(), 1);
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn background_child_that_closed_its_pipes_is_stopped() {
    let pids = PidFile::new();
    let (outcome, _) = exec(&spec("$MB fork-grandchild 30 close", &pids));
    assert_eq!(outcome.processes_stopped, 1);
    assert!(!outcome.drain_cut_short);
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn setsid_escapee_is_found_and_stopped() {
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("$MB setsid-escape 30", &pids));
    assert_eq!(capture.view.text(), "escaped\n");
    assert_eq!(pids.pids().len(), 1);
    assert_eq!(outcome.processes_stopped, 1);
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn setsid_escapee_is_ended_on_timeout() {
    let pids = PidFile::new();
    let mut s = spec("$MB setsid-escape 30; sleep 30", &pids);
    s.timeout = Some(Duration::from_millis(500));
    let (outcome, _) = exec(&s);
    assert!(outcome.timed_out());
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn flood_is_captured_in_bounded_memory() {
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("$MB flood 20000000", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.totals.stdout.bytes, 20_000_011);
    assert_eq!(capture.totals.stderr.bytes, 0);
    assert!(capture.view.output_bytes <= 51_200);
    assert!(capture.view.text().ends_with("flood done\n"));
}

#[test]
fn invalid_utf8_across_writes() {
    let pids = PidFile::new();
    let (_, capture) = exec(&spec("$MB invalid-utf8", &pids));
    assert_eq!(capture.view.text(), "start 😀 bad:\u{fffd}\u{fffd} end\n");
}

#[test]
fn arrival_order_is_kept_across_streams() {
    let pids = PidFile::new();
    let (_, capture) = exec(&spec("$MB stderr-then-stdout", &pids));
    assert_eq!(capture.view.text(), "err line\nout line\n");
}

/// `out1 err1 out2 err2 …`, one line each, as a writer alternating streams wrote them.
fn alternating(count: u32) -> String {
    (1..=count).map(|i| format!("out{i}\nerr{i}\n")).collect()
}

/// A sink that keeps everything, so the comparison is of all the output, not of a window.
fn exec_whole(spec: &ExecSpec) -> (agent_exec_executor::ExecOutcome, agent_exec_sink::Capture) {
    let config = SinkConfig {
        max_bytes: 1 << 20,
        ..SinkConfig::default()
    };
    let mut sink = OutputSink::new(config, None);
    let outcome = run(spec, &mut sink, &CancelToken::new());
    (outcome, sink.finish_capture())
}

#[test]
fn alternating_streams_come_back_in_the_order_written() {
    let pids = PidFile::new();
    // Unbuffered writes from a compiled program, one write(2) per line, as fast as it can.
    let (outcome, capture) = exec_whole(&spec("$MB interleave 2000", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.view.text(), alternating(2000));
    assert!(!capture.view.truncated);
    // The same from the shell's own builtins.
    let (_, capture) = exec_whole(&spec(
        "for i in $(seq 2000); do echo out$i; echo err$i >&2; done",
        &pids,
    ));
    assert_eq!(capture.view.text(), alternating(2000));
    let total = alternating(2000).len() as u64;
    assert_eq!(
        (capture.totals.stdout.bytes, capture.totals.stderr.bytes),
        (total, 0)
    );
}

#[test]
fn stderr_still_arrives_every_way_it_can_be_written() {
    let pids = PidFile::new();
    let (_, capture) = exec(&spec(
        "echo x >&2; echo e > /dev/stderr; echo f >/dev/fd/2; ls /nonexistent-dir-for-the-test",
        &pids,
    ));
    let text = capture.view.text();
    assert!(
        text.starts_with("x\ne\nf\nls: cannot access '/nonexistent-dir-for-the-test'"),
        "{text}"
    );
    // A plain command that only writes to stderr, run without a shell.
    let (_, capture) = exec(&spec("ls /nonexistent-dir-for-the-test", &pids));
    assert!(capture.view.text().starts_with("ls: cannot access"));
}

#[test]
fn separate_pipes_count_each_stream() {
    let pids = PidFile::new();
    let mut s = spec("echo hello; echo oops >&2", &pids);
    s.output = agent_exec_executor::OutputPipes::Separate;
    let (_, capture) = exec(&s);
    assert_eq!(
        (capture.totals.stdout.bytes, capture.totals.stderr.bytes),
        (6, 5)
    );
    let text = capture.view.text();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["hello", "oops"]);
}

#[test]
fn spawn_failure_is_an_outcome() {
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let spec = ExecSpec::argv("/definitely/not/here", vec![], "/tmp");
    let outcome = run(&spec, &mut sink, &CancelToken::new());
    assert_eq!(outcome.status, None);
    let err = outcome.spawn_error.expect("spawn error").to_string();
    assert!(err.contains("No such file or directory"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("noexec");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let outcome = run(
        &ExecSpec::argv(script.display().to_string(), vec![], "/tmp"),
        &mut sink,
        &CancelToken::new(),
    );
    assert!(
        outcome
            .spawn_error
            .expect("spawn error")
            .to_string()
            .contains("Permission denied")
    );
}

#[test]
fn argv_runs_without_a_shell() {
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let spec = ExecSpec::argv("echo", vec!["$HOME".into(), "a b".into()], "/tmp");
    let outcome = run(&spec, &mut sink, &CancelToken::new());
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(sink.finish_capture().view.text(), "$HOME a b\n");
}

#[test]
fn killed_by_a_signal() {
    let pids = PidFile::new();
    let (outcome, _) = exec(&spec("kill -SEGV $$", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Signaled(11)));
}

#[test]
fn cancel_ends_the_group_and_keeps_output() {
    let pids = PidFile::new();
    let s = spec("echo before; $MB ignore-term 30", &pids);
    let cancel = CancelToken::new();
    let c2 = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c2.cancel();
    });
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = run(&s, &mut sink, &cancel);
    assert!(outcome.cancelled());
    assert!(!outcome.timed_out());
    assert_eq!(sink.finish_capture().view.text(), "before\nignoring TERM\n");
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[tokio::test]
async fn dropping_the_future_ends_the_group() {
    let pids = PidFile::new();
    let s = spec("$MB ignore-term 30", &pids);
    let sink = OutputSink::new(SinkConfig::default(), None);
    let fut = agent_exec_executor::run_async(s, sink, CancelToken::new());
    let _ = tokio::time::timeout(Duration::from_millis(300), fut).await;
    // The run thread ends the group after the grace period; wait for that, bounded.
    for _ in 0..200 {
        if !pids.pids().is_empty() && pids.survivors().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(pids.pids().len(), 1);
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn plain_commands_run_without_a_shell_and_see_their_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = run(
        &ExecSpec::shell("env", dir.path()),
        &mut sink,
        &CancelToken::new(),
    );
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    let text = sink.finish_capture().view.text();
    assert!(
        text.lines()
            .any(|l| l == format!("PWD={}", dir.path().display())),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("AGENT_EXEC_CALL=")),
        "{text}"
    );
}

#[test]
fn unknown_plain_command_is_the_shells_127() {
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("definitely-not-a-command-xyz --flag", &pids));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(127)));
    assert!(
        capture.view.text().contains("command not found"),
        "{}",
        capture.view.text()
    );
}

#[test]
fn plain_commands_look_to_themselves_as_under_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = run(
        &ExecSpec::shell("ls /definitely-missing-path", dir.path()),
        &mut sink,
        &CancelToken::new(),
    );
    assert_eq!(outcome.status, Some(ExitStatus::Exited(2)));
    let text = sink.finish_capture().view.text();
    assert!(text.starts_with("ls: "), "argv[0] as typed: {text}");
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    run(
        &ExecSpec::shell("printenv _", dir.path()),
        &mut sink,
        &CancelToken::new(),
    );
    assert!(
        sink.finish_capture()
            .view
            .text()
            .trim_end()
            .ends_with("/printenv")
    );
}

#[test]
fn pty_mode_gives_the_command_a_terminal() {
    let pids = PidFile::new();
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let s = spec(
        "test -t 0 && test -t 1 && echo on a tty; echo $TERM; printf '\\033[31mred\\033[0m\\n'",
        &pids,
    );
    let outcome = agent_exec_executor::run_pty(&s, &mut sink, &CancelToken::new());
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(
        sink.finish_capture().view.text(),
        "on a tty\nxterm-256color\nred\n"
    );
    let mut s = spec("echo started; $MB ignore-term 30", &pids);
    s.timeout = Some(Duration::from_millis(400));
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = agent_exec_executor::run_pty(&s, &mut sink, &CancelToken::new());
    assert!(outcome.timed_out());
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn a_timed_out_call_counts_no_process_as_left_running() {
    // The shell dies of the timeout's TERM at once; the subshell and its sleep ignore TERM and
    // are killed after the grace. They were ended with the call, not left running by it.
    let pids = PidFile::new();
    let mut s = spec("(trap '' TERM; sleep 30); echo never", &pids);
    s.timeout = Some(Duration::from_millis(500));
    s.grace = Duration::from_millis(200);
    let (outcome, capture) = exec(&s);
    assert!(outcome.timed_out(), "{outcome:?}");
    assert_eq!(outcome.processes_stopped, 0, "{outcome:?}");
    assert_eq!(capture.view.text(), "");
}
