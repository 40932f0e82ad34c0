//! The crate's examples run (cargo builds them before the tests), say what they should, and
//! stay as short as the front page promises.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// `target/<profile>/examples/<name>`, next to this test's own `deps` directory.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

/// Runs an example to the end (killed after a minute, so the test cannot hang).
fn run(name: &str) -> String {
    let artifacts = tempfile::tempdir().unwrap();
    let out_file = artifacts.path().join("stdout");
    let mut child = Command::new(example(name))
        .env("AGENT_EXEC_ARTIFACTS", artifacts.path())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("example {name} was not built: {e}"));
    let deadline = Instant::now() + Duration::from_mins(1);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("example {name} did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&out_file).unwrap();
    assert!(status.success(), "example {name} failed: {status}\n{out}");
    out
}

/// Lines of code in an example: neither blank nor comment.
fn code_lines(name: &str) -> usize {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
        .count()
}

#[test]
fn one_call_in_ten_lines() {
    assert!(code_lines("one_call") <= 10, "{}", code_lines("one_call"));
    let out = run("one_call");
    assert!(out.starts_with("hello from agent-exec\n"), "{out}");
    assert!(out.contains("Command exited with code 2"), "{out}");
    assert!(out.ends_with("-- outcome: exit_nonzero\n"), "{out}");
}

#[test]
fn streaming_from_tokio_in_25_lines() {
    assert!(code_lines("stream") <= 25, "{}", code_lines("stream"));
    let out = run("stream");
    assert!(
        out.contains("last: step 1\n"),
        "updates while it runs: {out}"
    );
    assert!(
        out.contains("-- success:\nstep 1\nstep 2\nstep 3\nstep 4\n"),
        "{out}"
    );
}

#[test]
fn session_and_job_in_25_lines() {
    assert!(
        code_lines("session_and_job") <= 25,
        "{}",
        code_lines("session_and_job")
    );
    let out = run("session_and_job");
    assert!(out.starts_with("session: hi from /tmp\n"), "{out}");
    assert!(out.contains("tick 3"), "{out}");
    assert!(out.contains("exited with code 0"), "{out}");
}

#[test]
fn a_custom_policy_and_approver() {
    let out = run("policy_and_approver");
    assert!(
        out.contains("git push --force origin main: denied"),
        "{out}"
    );
    assert!(
        out.contains("curl -sS https://example.com: needs_approval"),
        "{out}"
    );
    assert!(out.contains("127.0.0.1:9 || true: success"), "{out}");
    assert!(out.contains("echo fine: success"), "{out}");
}

#[test]
fn an_adapter_to_a_framework_tool_trait() {
    let out = run("framework_adapter");
    assert!(out.contains("Ok(\"adapted\\n\")"), "{out}");
    assert!(out.contains("Command exited with code 3"), "{out}");
    assert!(out.contains("unknown field `comand`"), "{out}");
}
