//! Background jobs through the tool: start, read incrementally, write stdin, kill the tree,
//! bounds, and shutdown with no survivors.

mod support;

use std::time::Duration;

use agent_exec_core::{
    JobInput, JobList, JobOutputRequest, Outcome, OutputMode, Request, Tool, ToolResult,
};
use agent_exec_executor::CancelToken;
use support::{ALTERNATING_WRITERS, alive, alternating, eventually, tool_with};

fn start(tool: &Tool, command: &str) -> ToolResult {
    let request = Request::shell(command).in_background();
    tool.execute(&request, &CancelToken::new())
}

fn output(tool: &Tool, job: &str, mode: OutputMode, wait_ms: u64) -> ToolResult {
    let request = JobOutputRequest::new(job).wait(Duration::from_millis(wait_ms));
    tool.job_output(&match mode {
        OutputMode::All => request.all(),
        _ => request,
    })
}

fn pids_in(path: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[test]
fn start_returns_at_once_with_a_job_id() {
    let (_dir, tool) = tool_with(|_| {});
    let r = start(&tool, "sleep 300");
    assert_eq!(r.details.outcome, Outcome::Success);
    let job = r.details.job_id.clone().expect("job id");
    assert!(
        r.text().contains(&format!("Started background job {job}")),
        "{}",
        r.text()
    );
    assert!(r.text().contains("job_output"));
    tool.job_kill(&job);
}

#[test]
fn output_is_read_incrementally_with_a_status_header() {
    let (_dir, tool) = tool_with(|_| {});
    let job = start(&tool, "echo one; read x; echo \"two $x\"; exit 4")
        .details
        .job_id
        .unwrap();
    let r = output(&tool, &job, OutputMode::New, 5000);
    assert!(
        r.text().starts_with(&format!("[job {job} running")),
        "{}",
        r.text()
    );
    assert!(r.text().ends_with("one\n"), "{}", r.text());
    let r = output(&tool, &job, OutputMode::New, 0);
    assert!(r.text().ends_with("(no new output)"), "{}", r.text());
    let r = tool.job_input(&JobInput::line(job.clone(), "more"));
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    let r = output(&tool, &job, OutputMode::New, 5000);
    assert!(r.text().contains("two more"), "{}", r.text());
    assert!(eventually(|| output(&tool, &job, OutputMode::All, 200)
        .details
        .exit_code
        .is_some()));
}

#[test]
fn all_mode_and_the_exit_header() {
    let (_dir, tool) = tool_with(|_| {});
    let job = start(&tool, "echo a; echo b >&2; exit 3")
        .details
        .job_id
        .unwrap();
    let r = finished(&tool, &job);
    assert!(
        r.text()
            .starts_with(&format!("[job {job} exited with code 3")),
        "{}",
        r.text()
    );
    assert_eq!(
        r.text().matches("code 3").count(),
        1,
        "said once: {}",
        r.text()
    );
    assert!(r.text().ends_with("a\nb\n"), "{}", r.text());
    assert_eq!(r.details.outcome, Outcome::ExitNonzero);
}

/// All of a job's output once it has ended (waited for, bounded).
fn finished(tool: &Tool, job: &str) -> ToolResult {
    let mut last = None;
    assert!(eventually(|| {
        let r = output(tool, job, OutputMode::All, 100);
        let done = r.details.exit_code.is_some();
        last = Some(r);
        done
    }));
    last.unwrap()
}

#[test]
fn alternating_streams_come_back_in_the_order_written() {
    let (_dir, tool) = tool_with(|_| {});
    for command in ALTERNATING_WRITERS {
        let job = start(&tool, command).details.job_id.unwrap();
        let r = finished(&tool, &job);
        assert_eq!(
            r.details.outcome,
            Outcome::Success,
            "{command}: {}",
            r.text()
        );
        let header = format!(
            "[job {job} exited with code 0; {} bytes of output]\n",
            alternating().len()
        );
        assert_eq!(r.text(), header + &alternating(), "{command}");
    }
}

#[test]
fn input_after_exit_is_a_clear_error() {
    let (_dir, tool) = tool_with(|_| {});
    let job = start(&tool, "true").details.job_id.unwrap();
    assert!(eventually(|| {
        let r = tool.job_input(&JobInput::line(job.clone(), "x"));
        r.details.outcome == Outcome::InvalidRequest && r.text().contains("exited with code 0")
    }));
}

#[test]
fn eof_closes_stdin() {
    let (_dir, tool) = tool_with(|_| {});
    let job = start(&tool, "wc -c").details.job_id.unwrap();
    tool.job_input(
        &JobInput::line(job.clone(), "abc")
            .without_enter()
            .then_eof(),
    );
    assert!(eventually(|| output(&tool, &job, OutputMode::All, 100)
        .text()
        .trim_end()
        .ends_with('3')));
}

#[test]
fn kill_ends_the_whole_tree() {
    let (dir, tool) = tool_with(|_| {});
    let pids = dir.path().join("pids");
    let cmd = format!(
        "sleep 300 & echo $! >> {p}; setsid sleep 301 & echo $! >> {p}; trap '' TERM; sleep 302",
        p = pids.display()
    );
    let job = start(&tool, &cmd).details.job_id.unwrap();
    assert!(eventually(|| pids_in(&pids).len() == 2));
    let r = tool.job_kill(&job);
    assert!(r.text().contains("was killed"), "{}", r.text());
    for pid in pids_in(&pids) {
        assert!(
            eventually(|| !alive(pid)),
            "process {pid} survived job_kill"
        );
    }
}

#[test]
fn unknown_job_lists_the_known_ones() {
    let (_dir, tool) = tool_with(|_| {});
    let job = start(&tool, "sleep 300").details.job_id.unwrap();
    let r = output(&tool, "999", OutputMode::New, 0);
    assert_eq!(r.details.outcome, Outcome::InvalidRequest);
    assert!(
        r.text()
            .contains(&format!("no job with id 999; jobs held: {job}")),
        "{}",
        r.text()
    );
    tool.job_kill(&job);
}

#[test]
fn live_jobs_are_bounded() {
    let (_dir, tool) = tool_with(|c| c.jobs.max_live = 1);
    let job = start(&tool, "sleep 300").details.job_id.unwrap();
    let r = start(&tool, "sleep 300");
    assert_eq!(r.details.outcome, Outcome::InvalidRequest);
    assert!(
        r.text().contains("1 background jobs are already running"),
        "{}",
        r.text()
    );
    tool.job_kill(&job);
    assert_eq!(start(&tool, "true").details.outcome, Outcome::Success);
}

#[test]
fn shutdown_ends_every_job() {
    let (dir, tool) = tool_with(|_| {});
    let pids = dir.path().join("pids");
    for i in 0..3 {
        start(
            &tool,
            &format!(
                "sleep 30{i} & echo $! >> {p}; echo $$ >> {p}; wait",
                p = pids.display()
            ),
        );
    }
    assert!(eventually(|| pids_in(&pids).len() == 6));
    tool.shutdown();
    for pid in pids_in(&pids) {
        assert!(
            eventually(|| !alive(pid)),
            "process {pid} survived shutdown"
        );
    }
}

#[test]
fn a_flooding_job_spills_to_an_artifact() {
    let (_dir, tool) = tool_with(|_| {});
    let job = start(&tool, "seq 1 200000").details.job_id.unwrap();
    let mut text = String::new();
    assert!(eventually(|| {
        let r = output(&tool, &job, OutputMode::New, 100);
        text = r.text().to_owned();
        r.details.exit_code.is_some()
    }));
    assert!(
        text.contains("Full output: artifact://"),
        "{}",
        &text[..text.len().min(300)]
    );
}

#[test]
fn a_job_runs_its_pipeline_as_typed() {
    // A job has no window: `| head -n 3` is the real pipe, and stops the producer.
    let (_dir, tool) = tool_with(|_| {});
    let r = start(&tool, "seq 1 100000 | head -n 3");
    let job = r.details.job_id.clone().unwrap();
    let mut last = None;
    assert!(eventually(|| {
        let r = output(&tool, &job, OutputMode::All, 100);
        let done = r.text().contains("exited with code");
        last = Some(r);
        done
    }));
    let r = last.unwrap();
    // pipefail: `seq` ended by SIGPIPE makes it 141, which counts as success.
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    let text = r.text().to_owned();
    let body: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(body, ["1", "2", "3"], "{text}");
}

/// `wait_ms` waits until there is output the caller has not seen, in both modes, plain and
/// under a PTY: output that shows as nothing (a terminal program's setup sequences) does not
/// end the wait, and `all` waits for output newer than its last read.
#[test]
fn a_wait_ends_on_output_the_caller_can_see_in_either_mode() {
    let (_dir, tool) = tool_with(|_| {});
    let command = r"sleep 0.3; printf '\033[?1049h\033[H\033[2J\033[?25l\r\n'; sleep 0.3; echo late; sleep 0.3; echo later; sleep 300";
    for pty in [false, true] {
        for mode in [OutputMode::New, OutputMode::All] {
            let mut request = Request::shell(command).in_background();
            if pty {
                request = request.with_pty();
            }
            let job = tool
                .execute(&request, &CancelToken::new())
                .details
                .job_id
                .expect("a job");
            // Bounded: the job runs for 300 s, so only output ends these waits.
            let mut seen = String::new();
            for expected in ["late", "later"] {
                if seen.contains(expected) {
                    continue;
                }
                let r = output(&tool, &job, mode, 60_000);
                seen = r.text().to_owned();
                assert!(
                    seen.contains(expected) && r.details.running == Some(true),
                    "pty {pty}, {mode:?}: {expected:?} not in {seen:?}"
                );
            }
            tool.job_kill(&job);
        }
    }
}

#[test]
fn a_pty_job_has_a_terminal_and_takes_input() {
    let (_dir, tool) = tool_with(|_| {});
    let request =
        Request::shell("test -t 0 && test -t 1 && echo on-a-tty; read line; echo \"got $line\"")
            .in_background()
            .with_pty();
    let r = tool.execute(&request, &CancelToken::new());
    let job = r
        .details
        .job_id
        .clone()
        .unwrap_or_else(|| panic!("{}", r.text()));
    assert!(eventually(|| output(&tool, &job, OutputMode::All, 100)
        .text()
        .contains("on-a-tty")));
    let sent = tool.job_input(&JobInput::line(job.clone(), "hello"));
    assert_eq!(sent.details.outcome, Outcome::Success, "{}", sent.text());
    let mut last = String::new();
    let ended = eventually(|| {
        last = output(&tool, &job, OutputMode::All, 100).text().to_owned();
        last.contains("got hello") && last.contains("exited with code 0")
    });
    assert!(ended, "input answer: {}\noutput: {last}", sent.text());
}

#[test]
fn finished_jobs_stay_readable_within_their_count_bound() {
    let (_dir, tool) = tool_with(|c| c.jobs.max_finished = 2);
    let ids: Vec<String> = (1..=3)
        .map(|n| {
            let job = start(&tool, &format!("echo job{n}"))
                .details
                .job_id
                .unwrap();
            assert!(eventually(|| output(&tool, &job, OutputMode::New, 100)
                .details
                .running
                == Some(false)));
            job.as_str().to_owned()
        })
        .collect();
    // Its end was read, and it is still there: all of it, again.
    let again = output(&tool, &ids[2], OutputMode::All, 0);
    assert!(again.text().contains("job3"), "{}", again.text());
    let listed: Vec<String> = tool
        .job_list(&JobList::default())
        .details
        .jobs
        .unwrap()
        .iter()
        .map(|j| j.job_id.as_str().to_owned())
        .collect();
    assert_eq!(
        listed,
        ids[1..].to_vec(),
        "the oldest finished job goes first"
    );
}
