//! The pipeline of contract §2 through the library: validation, normalization, policy (with
//! and without an approver), and the shape of the result.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_exec_core::{Approver, Decision, Direction, Outcome, Request, Tool, TruncatedBy};
use agent_exec_executor::CancelToken;
use agent_exec_policy::{Policy, PolicyConfig, Verdict};
use support::{ALTERNATING_WRITERS, assert_written_order, tool_with};

fn tool() -> (tempfile::TempDir, Tool) {
    tool_with(|_| {})
}

fn req(command: &str) -> Request {
    Request::shell(command)
}

struct Recorder {
    answer: bool,
    asked: Mutex<Vec<String>>,
}

impl Approver for Recorder {
    fn approve(&self, command: &str, _verdict: &Verdict) -> bool {
        self.asked.lock().unwrap().push(command.to_owned());
        self.answer
    }
}

#[test]
fn alternating_streams_come_back_in_the_order_written() {
    let (_dir, tool) = tool();
    // Twice: the first call of a kind runs in a fresh shell, the next in a prepared one.
    for command in ALTERNATING_WRITERS.iter().chain(&ALTERNATING_WRITERS) {
        let r = tool.execute(&req(command), &CancelToken::new());
        assert_written_order(&r, "", command);
    }
    let r = tool.execute(
        &req("echo x >&2; echo e > /dev/stderr; ls /nonexistent-for-the-test"),
        &CancelToken::new(),
    );
    assert!(
        r.text()
            .starts_with("x\ne\nls: cannot access '/nonexistent-for-the-test'"),
        "{}",
        r.text()
    );
}

#[test]
fn denied_commands_never_run() {
    let (dir, tool) = tool();
    let marker = dir.path().join("ran");
    let r = tool.execute(
        &req(&format!("touch {} && sudo rm -r -f /", marker.display())),
        &CancelToken::new(),
    );
    assert_eq!(r.details.outcome, Outcome::Denied);
    assert!(r.text().starts_with("Blocked: "), "{}", r.text());
    let policy = r.details.policy.expect("policy details");
    assert_eq!(policy.decision, Decision::Deny);
    assert_eq!(
        policy.rule.as_deref(),
        Some("hardline.recursive-delete-root")
    );
    assert!(!marker.exists());
}

#[test]
fn ask_without_an_approver_needs_approval() {
    let (_dir, tool) = tool();
    let r = tool.execute(&req("$CMD -rf /"), &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::NeedsApproval);
    assert!(
        r.text().contains("Original command: $CMD -rf /"),
        "{}",
        r.text()
    );
    assert_eq!(r.details.policy.expect("policy").decision, Decision::Ask);
}

#[test]
fn an_approver_decides_ask_verdicts() {
    let (dir, tool) = tool();
    let yes = Arc::new(Recorder {
        answer: true,
        asked: Mutex::new(Vec::new()),
    });
    let tool = tool.with_approver(yes.clone());
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let mut request = req("rm -rf \"$AE_TARGET\"; echo removed");
    request
        .env
        .insert("AE_TARGET".into(), target.display().to_string());
    let r = tool.execute(&request, &CancelToken::new());
    assert_eq!(yes.asked.lock().unwrap().len(), 1, "{}", r.text());
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    assert!(!target.exists());

    let (_dir, tool) = self::tool();
    let no = Arc::new(Recorder {
        answer: false,
        asked: Mutex::new(Vec::new()),
    });
    let tool = tool.with_approver(no.clone());
    let r = tool.execute(&req("$CMD -rf /"), &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::NeedsApproval);
    assert_eq!(no.asked.lock().unwrap().len(), 1);
}

#[test]
fn configured_rules_and_interception_apply() {
    let (_dir, tool) = tool();
    let config = PolicyConfig::from_toml_str(
        "[rules]\ndeny = [\"git push\"]\n[interception]\nenabled = true\navailable_tools = [\"read\"]\n",
    )
    .unwrap();
    let tool = tool.with_policy(Arc::new(Policy::new(config).unwrap()));
    let r = tool.execute(&req("git push origin main"), &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::Denied);
    let r = tool.execute(&req("cd . && cat Cargo.toml"), &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::Denied, "{}", r.text());
    assert!(r.text().starts_with("Blocked: "), "{}", r.text());
    assert!(
        r.text()
            .ends_with("\nOriginal command: cd . && cat Cargo.toml"),
        "{}",
        r.text()
    );
    let r = tool.execute(&req("echo hi | cat"), &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
}

#[test]
fn validation_messages_follow_the_contract() {
    let (dir, tool) = tool();
    let r = tool.execute(&Request::shell("ls").cwd("nope"), &CancelToken::new());
    assert_eq!(
        r.text(),
        format!(
            "Working directory does not exist: {}",
            dir.path().join("nope").display()
        )
    );
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let r = tool.execute(&Request::shell("ls").cwd("file"), &CancelToken::new());
    assert_eq!(
        r.text(),
        format!(
            "Working directory is not a directory: {}",
            dir.path().join("file").display()
        )
    );
    let r = tool.execute(&Request::default(), &CancelToken::new());
    assert_eq!(
        (r.details.outcome, r.text()),
        (Outcome::InvalidRequest, "command is required")
    );
    let r = tool.execute(
        &{
            let mut r = Request::shell("ls");
            r.executable = Some("ls".into());
            r
        },
        &CancelToken::new(),
    );
    assert_eq!(r.details.outcome, Outcome::InvalidRequest);
    let r = tool.execute_json(
        serde_json::json!({"command": "ls", "colour": true}),
        &CancelToken::new(),
    );
    assert!(r.text().contains("unknown field `colour`"), "{}", r.text());
}

#[test]
fn timeouts_are_clamped() {
    let (_dir, tool) = tool();
    let r = tool.execute(
        &{
            let mut r = Request::shell("sleep 5");
            r.timeout = Some(0);
            r
        },
        &CancelToken::new(),
    );
    assert_eq!(r.details.outcome, Outcome::Timeout);
    assert!(
        r.text().starts_with("[Command timed out after 1 seconds]"),
        "{}",
        r.text()
    );
    let r = tool.execute(
        &{
            let mut r = Request::shell("sleep 5");
            r.timeout_ms = Some(10);
            r
        },
        &CancelToken::new(),
    );
    assert!(
        r.text().starts_with("[Command timed out after 1 seconds]"),
        "{}",
        r.text()
    );
    // Both given (a strict caller sends every field): the shorter holds, either way round.
    for (seconds, millis) in [(600, 1000), (1, 600_000)] {
        let r = tool.execute(
            &{
                let mut r = Request::shell("sleep 5");
                r.timeout = Some(seconds);
                r.timeout_ms = Some(millis);
                r
            },
            &CancelToken::new(),
        );
        assert!(
            r.text().starts_with("[Command timed out after 1 seconds]"),
            "{seconds} s, {millis} ms: {}",
            r.text()
        );
    }
}

#[test]
fn explicit_limits_win_and_the_command_runs_whole() {
    let (_dir, tool) = tool();
    let r = tool.execute(
        &Request::shell("seq 1 10 | tail -n 5").tail(2),
        &CancelToken::new(),
    );
    assert_eq!(r.text().lines().next(), Some("9"), "{}", r.text());
    let t = r.details.truncation.expect("truncated");
    assert_eq!(
        (t.truncated_by, t.shown_range),
        (TruncatedBy::Lines, [9, 10])
    );
    // Both given: the first and the last lines, the middle elided.
    let both = Request::shell("seq 1 10").head(3).tail(2);
    let r = tool.execute(&both, &CancelToken::new());
    assert!(
        r.text().starts_with("1\n2\n3\n[... 5 lines"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("9\n10\n"), "{}", r.text());
    let t = r.details.truncation.expect("truncated");
    assert_eq!(
        (t.direction, t.shown_ranges.clone()),
        (Direction::Both, vec![[1, 3], [9, 10]])
    );
    // An explicit tail applies to what the command's own `| head` kept, as the pipe would.
    let piped = Request::shell("seq 1 10 | head -n 4").tail(2);
    let r = tool.execute(&piped, &CancelToken::new());
    assert!(r.text().starts_with("3\n4\n"), "{}", r.text());
    assert!(
        r.text().contains("(2-line limit)"),
        "the tail is the limit: {}",
        r.text()
    );
    assert_eq!(r.details.truncation.expect("truncated").shown_range, [3, 4]);
}

#[test]
fn argv_requests_run_without_a_shell() {
    let (_dir, tool) = tool();
    let r = tool.execute(
        &Request::program("printf", ["%s|", "$HOME", "a b"]),
        &CancelToken::new(),
    );
    assert_eq!(r.text(), "$HOME|a b|");
}

#[test]
fn cancel_returns_the_partial_output() {
    let (_dir, tool) = tool();
    let cancel = CancelToken::new();
    let c = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c.cancel();
    });
    let r = tool.execute(&req("echo partial; sleep 30"), &cancel);
    assert_eq!(r.details.outcome, Outcome::Cancelled);
    assert!(r.details.cancelled);
    assert!(
        r.text().starts_with("[Command cancelled]\npartial\n"),
        "{}",
        r.text()
    );
}
