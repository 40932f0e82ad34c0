//! Calls that yield (`yield_ms`), through the library: the answer `running` with the output so
//! far and a job id, the job that goes on (same output, same timeout), input with a yield of
//! its own, a session kept busy, `Call::into_job`; a wait for a terminal the call lacks; and
//! `streams: "separate"`.

mod support;

use std::time::Duration;

use agent_exec_core::{
    CancelToken, JobInput, JobList, JobOutputRequest, Outcome, Request, RunOptions, Tool,
    ToolResult,
};
use support::{alive, pid_in, tool_with};

#[allow(clippy::needless_pass_by_value)] // built in place by every caller
fn run(tool: &Tool, request: Request) -> ToolResult {
    tool.execute(&request, &CancelToken::new())
}

/// Reads job `id` until it ends (bounded: 20 reads of at most 10 s); the texts joined, and the
/// last read.
fn read_to_end(tool: &Tool, id: &str) -> (String, ToolResult) {
    let mut text = String::new();
    for _ in 0..20 {
        let r = tool.job_output(&JobOutputRequest::new(id).wait(Duration::from_secs(10)));
        text.push_str(r.text());
        if r.details.running == Some(false) {
            return (text, r);
        }
    }
    panic!("job {id} did not end: {text}");
}

#[test]
fn a_call_still_running_answers_running_and_goes_on_as_a_job() {
    let (_dir, tool) = tool_with(|_| {});
    let r = run(
        &tool,
        Request::shell("echo first; sleep 2; echo second; exit 3")
            .yield_after(Duration::from_millis(500)),
    );
    assert_eq!(r.outcome(), Outcome::Running, "{}", r.text());
    assert!(!r.is_error);
    assert_eq!(r.details.running, Some(true));
    assert_eq!(r.details.timeout_ms, Some(120_000));
    let id = r.details.job_id.clone().expect("a job id").0;
    assert!(r.text().starts_with("first"), "{}", r.text());
    assert!(r.text().contains("[Still running after"), "{}", r.text());
    assert!(
        r.text()
            .contains(&format!("job_output {{\"job_id\": \"{id}\""))
    );
    // The job is listed, and reads on from what the answer showed.
    assert!(
        tool.job_list(&JobList::default())
            .text()
            .contains("sleep 2")
    );
    let (text, last) = read_to_end(&tool, &id);
    assert!(text.contains("second") && !text.contains("first"), "{text}");
    assert_eq!(last.details.exit_code, Some(3), "{}", last.text());
}

#[test]
fn a_call_that_ends_before_its_yield_is_an_ordinary_result_and_no_job() {
    let (_dir, tool) = tool_with(|_| {});
    let r = run(
        &tool,
        Request::shell("echo quick").yield_after(Duration::from_secs(30)),
    );
    assert_eq!(r.outcome(), Outcome::Success);
    assert_eq!(r.text(), "quick\n");
    assert!(r.details.job_id.is_none());
    assert!(
        tool.job_list(&JobList::default())
            .details
            .jobs
            .unwrap_or_default()
            .is_empty()
    );
    // The next call that yields is job 1: a call that never yielded took no id.
    let r = run(
        &tool,
        Request::shell("sleep 5").yield_after(Duration::from_millis(200)),
    );
    assert_eq!(r.details.job_id.map(|j| j.0).as_deref(), Some("1"));
    tool.job_kill("1");
}

#[test]
fn a_yielded_call_keeps_its_timeout_and_ends_with_no_survivors() {
    let (dir, tool) = tool_with(|_| {});
    let pid_file = dir.path().join("pid");
    let r = run(
        &tool,
        Request::shell(format!(
            "(sleep 300 & echo $! > {}); sleep 300",
            pid_file.display()
        ))
        .timeout(Duration::from_secs(2))
        .yield_after(Duration::from_millis(300)),
    );
    assert_eq!(r.outcome(), Outcome::Running, "{}", r.text());
    let escapee = pid_in(&pid_file);
    let id = r.details.job_id.unwrap().0;
    let (text, last) = read_to_end(&tool, &id);
    assert!(last.details.timed_out, "{text}");
    assert_eq!(last.outcome(), Outcome::Timeout, "{text}");
    assert!(
        support::eventually(|| !alive(escapee)),
        "the background child survived"
    );
}

#[test]
fn a_terminal_prompt_yields_early_and_input_gets_its_answer() {
    let (_dir, tool) = tool_with(|_| {});
    let r = run(
        &tool,
        Request::shell("python3 -q")
            .pty()
            .yield_after(Duration::from_secs(20)),
    );
    assert_eq!(r.outcome(), Outcome::Running, "{}", r.text());
    assert!(
        r.text().contains("Waiting for input at \">>>\""),
        "{}",
        r.text()
    );
    // Well before the 20 s: it yielded on the wait, not the clock.
    assert!(r.details.duration_ms < 15_000, "{}", r.details.duration_ms);
    let id = r.details.job_id.unwrap().0;
    // The terminal echoes the line at once; the answer comes a second later, and is waited for.
    let answer = tool.job_input(
        &JobInput::line(&*id, "import time; time.sleep(1); print(6*7)")
            .then_read(Duration::from_secs(10)),
    );
    assert!(answer.text().contains("\n42"), "{}", answer.text());
    assert_eq!(answer.details.running, Some(true));
    let killed = tool.job_kill(&id);
    assert_eq!(killed.details.running, Some(false));
}

#[test]
fn a_session_call_that_yielded_keeps_its_session_busy() {
    let (dir, tool) = tool_with(|_| {});
    let r = run(
        &tool,
        Request::shell("cd /tmp; sleep 3; echo late")
            .in_session("s")
            .yield_after(Duration::from_millis(300)),
    );
    assert_eq!(r.outcome(), Outcome::Running, "{}", r.text());
    let id = r.details.job_id.unwrap().0;
    let busy = run(&tool, Request::shell("pwd").in_session("s"));
    assert_eq!(busy.outcome(), Outcome::InvalidRequest, "{}", busy.text());
    assert!(
        busy.text()
            .contains(&format!("Session \"s\" is busy: job {id}")),
        "{}",
        busy.text()
    );
    let (text, _) = read_to_end(&tool, &id);
    assert!(text.contains("late"), "{text}");
    // A call that was already waiting for the session when the command yielded is refused
    // then, not held until the command ends.
    let started = dir.path().join("started");
    let first = tool.start(
        Request::shell(format!("touch {}; sleep 4", started.display()))
            .in_session("s")
            .yield_after(Duration::from_secs(1)),
        RunOptions::default(),
    );
    assert!(support::eventually(|| started.exists()));
    let waiting = tool.start(Request::shell("pwd").in_session("s"), RunOptions::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (first, waiting) = runtime.block_on(async { (first.await, waiting.await) });
    assert_eq!(first.outcome(), Outcome::Running, "{}", first.text());
    assert_eq!(
        waiting.outcome(),
        Outcome::InvalidRequest,
        "{}",
        waiting.text()
    );
    assert!(waiting.text().contains("is busy"), "{}", waiting.text());
    read_to_end(&tool, &first.details.job_id.unwrap().0);
    // Once it ended, the session is the one it left: its cwd kept.
    let after = run(&tool, Request::shell("pwd").in_session("s"));
    assert_eq!(after.text(), "/tmp\n");
}

#[test]
fn a_call_becomes_a_job_when_the_library_asks() {
    let (_dir, tool) = tool_with(|_| {});
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let call = tool.start(
            Request::shell("echo started; sleep 30"),
            RunOptions::default().yielding(),
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        let r = call.into_job().await;
        assert_eq!(r.outcome(), Outcome::Running, "{}", r.text());
        assert!(r.text().starts_with("started"), "{}", r.text());
        let id = r.details.job_id.unwrap().0;
        assert_eq!(tool.job_kill(&id).details.running, Some(false));
    });
}

#[test]
fn an_editor_without_a_terminal_is_ended_early_with_a_way_on() {
    let (dir, tool) = tool_with(|_| {});
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    // vim takes its keys from its stderr when stdin is not a terminal: the call's output pipe.
    let r = run(
        &tool,
        Request::shell("vim notes.txt").timeout(Duration::from_mins(1)),
    );
    assert_eq!(r.outcome(), Outcome::Timeout, "{}", r.text());
    assert!(
        r.text()
            .starts_with("[Command timed out early: it waited for a terminal it does not have"),
        "{}",
        r.text()
    );
    assert!(
        r.text().contains("`vim` waited for keys from a terminal"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("sed -i"), "{}", r.text());
    assert!(r.details.duration_ms < 30_000, "{}", r.details.duration_ms);
    // With a yield it yields, stuck, instead.
    let r = run(
        &tool,
        Request::shell("git init -q . && git commit -q --allow-empty")
            .env("GIT_EDITOR", "vim")
            .yield_after(Duration::from_secs(50)),
    );
    assert_eq!(r.outcome(), Outcome::Running, "{}", r.text());
    assert!(
        r.text()
            .contains("`vim` (started by `git`) waits for keys from a terminal"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("git commit -m MSG"), "{}", r.text());
    tool.job_kill(&r.details.job_id.unwrap().0);
}

#[test]
fn quiet_calls_and_terminal_relays_are_not_taken_for_terminal_waits() {
    // Unsandboxed: the sandbox keeps a command from making terminals (`/dev/ptmx`).
    let (_dir, tool) = tool_with(|c| c.sandbox.mode = Some(agent_exec_core::SandboxMode::Off));
    // Quiet past the 5 s of quiet, on its own; and `script` reading the master of the terminal
    // it made for its child (a relay waits for output, not for keys).
    for command in [
        "sleep 6; echo ok",
        "script -qc 'sleep 6; echo ok' /dev/null",
    ] {
        let r = run(&tool, Request::shell(command));
        assert_eq!(r.outcome(), Outcome::Success, "{command}: {}", r.text());
        assert!(r.text().contains("ok"), "{command}: {}", r.text());
    }
}

#[test]
fn separate_streams_are_counted_windowed_and_kept_apart() {
    let (_dir, tool) = tool_with(|c| c.max_bytes = 4096);
    // Interleaved writers, a flood on both, invalid UTF-8 on stderr.
    let r = run(
        &tool,
        Request::shell(
            "for i in $(seq 300); do echo out$i; echo err$i >&2; done; seq 1 20000; seq 1 20000 >&2; printf 'bad \\377\\n' >&2; echo last",
        )
        .separate_streams(),
    );
    assert_eq!(r.outcome(), Outcome::Success, "{}", r.text());
    let streams = r.streams.clone().expect("the raw streams");
    let stdout = streams.stdout.bytes().unwrap();
    let stderr = streams.stderr.bytes().unwrap();
    let expected_out: String = (1..=300)
        .map(|i| format!("out{i}\n"))
        .chain((1..=20000).map(|i| format!("{i}\n")))
        .chain(["last\n".to_owned()])
        .collect();
    let mut expected_err: Vec<u8> = (1..=300)
        .map(|i| format!("err{i}\n"))
        .chain((1..=20000).map(|i| format!("{i}\n")))
        .collect::<String>()
        .into_bytes();
    expected_err.extend_from_slice(b"bad \xff\n");
    assert_eq!(stdout, expected_out.as_bytes());
    assert_eq!(stderr, expected_err);
    assert_eq!(r.details.stdout_bytes, stdout.len() as u64);
    assert_eq!(r.details.stderr_bytes, stderr.len() as u64);
    // The text: stdout's window, then a STDERR section with its own.
    let text = r.text();
    let at = text.find("\n\nSTDERR:\n").expect("a STDERR section");
    assert!(
        text[..at].contains("last") && !text[..at].contains("bad"),
        "{text}"
    );
    assert!(text[at..].contains("bad \u{fffd}"), "{text}");
    let out_t = r.details.truncation.clone().expect("stdout was cut");
    let err_t = r.details.stderr_truncation.clone().expect("stderr was cut");
    assert_ne!(out_t.artifact_id, err_t.artifact_id);
    assert!(text.len() < 4096 + 16 * 1024);
}

#[test]
fn separate_streams_go_with_neither_a_terminal_nor_a_session() {
    let (_dir, tool) = tool_with(|_| {});
    for request in [
        Request::shell("true").separate_streams().pty(),
        Request::shell("true").separate_streams().in_session("s"),
    ] {
        let r = run(&tool, request);
        assert_eq!(r.outcome(), Outcome::InvalidRequest, "{}", r.text());
        assert!(r.text().contains("streams: \"separate\""), "{}", r.text());
    }
}
