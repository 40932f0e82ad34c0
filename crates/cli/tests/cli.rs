//! The `agent-exec` binary as users and acceptance tests drive it: exit codes, text, JSON.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
use common::{Bounded as _, Server, alive, exe, poll};

fn agent(artifacts: &std::path::Path) -> Command {
    let mut cmd = Command::new(exe());
    cmd.env("AGENT_EXEC_ARTIFACTS", artifacts)
        .current_dir(std::env::temp_dir());
    cmd
}

fn run(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = agent(dir.path()).args(args).output_bounded().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn success_prints_the_output() {
    insta::assert_snapshot!(format!("{:?}", run(&["run", "--", "echo", "hello"])), @r#"(0, "hello\n", "")"#);
}

#[test]
fn exit_code_is_mirrored_with_a_status_line() {
    insta::assert_snapshot!(format!("{:?}", run(&["run", "--", "echo out; exit 3"])), @r#"(3, "out\n\nCommand exited with code 3\n", "")"#);
}

#[test]
fn empty_output_and_sigpipe() {
    let (code, out, _) = run(&["run", "--", "true"]);
    assert_eq!((code, out.as_str()), (0, "(no output)\n"));
    let (code, out, _) = run(&["run", "--", "exit 141"]);
    assert_eq!(code, 0);
    assert!(out.contains("SIGPIPE"), "{out}");
}

#[test]
fn timeout_is_124_with_a_banner() {
    let (code, out, _) = run(&["run", "-t", "1", "--", "echo started; sleep 30"]);
    assert_eq!(code, 124);
    assert!(
        out.starts_with("[Command timed out after 1 seconds]\nstarted\n"),
        "{out}"
    );
}

#[test]
fn denied_is_126_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let cmd = format!("touch {} ; rm -rf /", marker.display());
    let (code, out, _) = run(&["run", "--json", "--", &cmd]);
    assert_eq!(code, 126);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["details"]["outcome"], "denied");
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Blocked: ")
    );
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("\nOriginal command: {cmd}"))
    );
    assert!(!marker.exists());
}

#[test]
fn invalid_requests_are_2() {
    let (code, out, _) = run(&["run", "-C", "/definitely/not/here", "--", "ls"]);
    assert_eq!(
        (code, out.as_str()),
        (
            2,
            "Working directory does not exist: /definitely/not/here\n"
        )
    );
    let (code, out, _) = run(&["run", "--", "  "]);
    assert_eq!((code, out.as_str()), (2, "command is required\n"));
    let dir = tempfile::tempdir().unwrap();
    let mut child = agent(dir.path())
        .args(["run", "--json", "--request", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"command":"echo hi","bogus":1}"#)
        .unwrap();
    let out = common::output_within(child, "agent-exec run", common::RUN);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["details"]["outcome"], "invalid_request");
    assert!(v["content"][0]["text"].as_str().unwrap().contains("bogus"));
}

#[test]
fn spawn_failure_is_127_and_signal_is_128_plus_n() {
    let dir = tempfile::tempdir().unwrap();
    let req = dir.path().join("req.json");
    std::fs::write(&req, r#"{"executable":"/no/such/program"}"#).unwrap();
    let (code, out, _) = run(&["run", "--request", req.to_str().unwrap()]);
    assert_eq!(code, 127, "{out}");
    let (code, out, _) = run(&["run", "--", "kill -KILL $$"]);
    assert_eq!(code, 137);
    assert!(
        out.contains("Command terminated by signal SIGKILL (9)"),
        "{out}"
    );
}

#[test]
fn truncation_spills_to_an_artifact_that_can_be_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = agent(dir.path())
        .args(["run", "--json", "--", "seq 1 100000"])
        .output_bounded()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["details"]["truncation"];
    assert_eq!(t["direction"], "tail");
    assert_eq!(t["truncated_by"], "bytes");
    assert_eq!(t["total_lines"], 100_000);
    assert_eq!(t["total_bytes"], 588_895);
    assert_eq!(t["shown_range"][1], 100_000);
    let id = t["artifact_id"].as_str().unwrap().to_owned();
    let text = v["content"][0]["text"].as_str().unwrap();
    let notice = format!(
        "[Showing lines {}-100000 of 100000 (50.0KB limit). Full: artifact://{id}]",
        t["shown_range"][0]
    );
    assert!(text.ends_with(&notice), "{}", &text[text.len() - 200..]);
    let lines = agent(dir.path())
        .args(["artifact", &format!("artifact://{id}"), "--lines", "2:3"])
        .output_bounded()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&lines.stdout), "2\n3\n");
    // --grep: the matching lines, numbered, with -C lines of context, as `grep -n -C` prints.
    let grep = agent(dir.path())
        .args(["artifact", &id, "--grep", "^5000[01]$", "-C", "1"])
        .output_bounded()
        .unwrap();
    assert_eq!(grep.status.code(), Some(0), "{grep:?}");
    let grep = String::from_utf8_lossy(&grep.stdout);
    assert!(
        grep.starts_with("49999-49999\n50000:50000\n50001:50001\n50002-50002\n"),
        "{grep}"
    );
    assert!(grep.contains("2 lines of 100000 matched"), "{grep}");
    let bad = agent(dir.path())
        .args(["artifact", &id, "--grep", "("])
        .output_bounded()
        .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not a valid regular expression"),
        "{bad:?}"
    );
    let context_alone = agent(dir.path())
        .args(["artifact", &id, "-C", "2"])
        .output_bounded()
        .unwrap();
    assert_eq!(context_alone.status.code(), Some(2), "{context_alone:?}");
    let missing = agent(dir.path())
        .args(["artifact", "999"])
        .output_bounded()
        .unwrap();
    assert_ne!(missing.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&missing.stderr).contains(&format!("available: {id}")));
}

#[test]
fn trailing_head_is_a_structured_limit() {
    let (code, out, _) = run(&["run", "--json", "--", "seq 1 10 | head -n 3"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("1\n2\n3\n")
    );
    assert_eq!(v["details"]["truncation"]["truncated_by"], "lines");
    let (code, out, _) = run(&["run", "--", "yes | head -n 2"]);
    assert_eq!(code, 0, "an infinite producer must not run to its timeout");
    assert!(out.starts_with("y\ny\n"));
    // A producer that stops writing soon after runs to its real end: exit code and side effects.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("done");
    let cmd = format!(
        "(printf 'a\\nb\\nc\\nd\\n'; sleep 0.3; echo done > {}; exit 3) | head -n 2",
        file.display()
    );
    let (code, out, _) = run(&["run", "--", &cmd]);
    assert_eq!(code, 3, "{out}");
    assert!(out.starts_with("a\nb\n"), "{out}");
    assert!(file.exists());
}

#[test]
fn a_trailing_tail_after_a_list_limits_only_its_pipeline() {
    // As bash: the tail reads `seq`'s output, not `echo`'s.
    let (code, out, _) = run(&["run", "--", "echo x && seq 10 | tail -2"]);
    assert_eq!((code, out.as_str()), (0, "x\n9\n10\n"));
    let (code, out, _) = run(&["run", "--", "echo x; seq 10 | head -n 2"]);
    assert_eq!((code, out.as_str()), (0, "x\n1\n2\n"));
    // One pipeline whose first stage is a group: the limit is the whole output's.
    let (code, out, _) = run(&["run", "--json", "--", "{ echo x; seq 10; } | tail -2"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("9\n10\n\n[Showing lines 10-11 of 11 (2-line limit)"),
        "{text}"
    );
}

#[test]
fn diff_commands_are_tagged() {
    let (_, out, _) = run(&["run", "--json", "--", "diff /dev/null /dev/null"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["details"]["stream_kind"], "diff");
}

#[test]
fn schema_lists_the_request_fields() {
    let (code, out, _) = run(&["schema"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    for field in [
        "command",
        "executable",
        "argv",
        "cwd",
        "env",
        "timeout",
        "timeout_ms",
        "head",
        "tail",
        "run_in_background",
        "session",
        "pty",
    ] {
        assert!(v["properties"].get(field).is_some(), "{field}");
    }
}

#[test]
fn check_prints_the_verdict_and_runs_nothing() {
    let (code, out, _) = run(&["check", "--json", "--", "sudo", "rm", "-r", "-f", "/"]);
    assert_eq!(code, 126);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "deny");
    assert!(
        v["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "rm -r -f /")
    );
    let (code, out, _) = run(&[
        "check",
        "--json",
        "--",
        "git commit -m 'fix shutdown handler'",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["decision"],
        "allow"
    );
}

#[test]
fn sigterm_to_run_cancels_and_prints_the_partial_result() {
    let dir = tempfile::tempdir().unwrap();
    let child = agent(dir.path())
        .args(["run", "--", "echo partial; sleep 30"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = common::output_within(child, "agent-exec run", common::RUN);
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("[Command cancelled]\npartial\n"), "{text}");
}

/// `agent-exec serve` as [`agent`] runs it.
fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = agent(dir.path());
    cmd.arg("serve");
    Server::spawn(cmd).keeping(dir)
}

/// Sends request `id` with `params` written as JSON text; its answer.
fn call(s: &mut Server, id: u64, method: &str, params: &str) -> Value {
    let params = serde_json::from_str(params).unwrap_or_else(|e| panic!("{e}: {params}"));
    s.request(id, method, params)
}

#[test]
fn serve_sessions_keep_cwd_and_exports() {
    let mut s = start();
    let r = call(
        &mut s,
        1,
        "exec",
        r#"{"command":"cd /tmp && export AE_X=42 && f() { echo fn; }","session":"a"}"#,
    );
    assert_eq!(r["result"]["details"]["cwd"], "/tmp");
    assert_eq!(r["result"]["details"]["session"], "a");
    let r = call(
        &mut s,
        2,
        "exec",
        r#"{"command":"echo $AE_X; pwd; f","session":"a"}"#,
    );
    assert_eq!(r["result"]["content"][0]["text"], "42\n/tmp\nfn\n");
    let r = call(
        &mut s,
        3,
        "exec",
        r#"{"command":"printf 'S 0 /x\nE\n'; printf 'no newline'","session":"a"}"#,
    );
    assert_eq!(r["result"]["content"][0]["text"], "S 0 /x\nE\nno newline");
    let r = call(
        &mut s,
        4,
        "exec",
        r#"{"command":"exec >/dev/null; echo hidden","session":"a"}"#,
    );
    assert_eq!(r["result"]["details"]["outcome"], "success");
    let r = call(
        &mut s,
        5,
        "exec",
        r#"{"command":"echo visible","session":"a"}"#,
    );
    assert_eq!(r["result"]["content"][0]["text"], "visible\n");
    let r = call(&mut s, 6, "exec", r#"{"command":"exit 7","session":"a"}"#);
    assert_eq!(r["result"]["details"]["exit_code"], 7);
    let r = call(
        &mut s,
        7,
        "exec",
        r#"{"command":"echo $AE_X","session":"a"}"#,
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[session restarted: the shell exited with code 7]"),
        "{text}"
    );
    let r = call(&mut s, 8, "session_close", r#"{"session":"a"}"#);
    assert_eq!(r["result"]["details"]["outcome"], "success");
}

#[test]
fn serve_background_jobs() {
    let mut s = start();
    let r = call(
        &mut s,
        1,
        "exec",
        r#"{"command":"echo start; read line; echo got $line; sleep 30","run_in_background":true}"#,
    );
    let job = r["result"]["details"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = call(
        &mut s,
        2,
        "job_output",
        &format!(r#"{{"job_id":"{job}","wait_ms":2000}}"#),
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("start"),
        "{r}"
    );
    let r = call(
        &mut s,
        3,
        "job_input",
        &format!(r#"{{"job_id":"{job}","data":"hello"}}"#),
    );
    assert_eq!(r["result"]["details"]["outcome"], "success", "{r}");
    let r = call(
        &mut s,
        4,
        "job_output",
        &format!(r#"{{"job_id":"{job}","wait_ms":2000}}"#),
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("got hello"),
        "{r}"
    );
    let r = call(
        &mut s,
        5,
        "job_output",
        &format!(r#"{{"job_id":"{job}","wait_ms":10}}"#),
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("(no new output)"),
        "{r}"
    );
    let r = call(&mut s, 6, "job_kill", &format!(r#"{{"job_id":"{job}"}}"#));
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("killed"),
        "{r}"
    );
    let r = call(
        &mut s,
        7,
        "job_input",
        &format!(r#"{{"job_id":"{job}","data":"x"}}"#),
    );
    assert_eq!(r["result"]["details"]["outcome"], "invalid_request", "{r}");
}

#[test]
fn serve_bad_input_gets_jsonrpc_errors_and_goes_on() {
    let mut s = start();
    s.send_line("{not json");
    assert_eq!(s.recv()["error"]["code"], -32700);
    let r = call(&mut s, 1, "nope", "{}");
    assert_eq!(r["error"]["code"], -32601);
    let r = call(&mut s, 2, "exec", r#"{"command":"true","bogus":1}"#);
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("bogus"));
    let r = call(&mut s, 3, "exec", r#"{"command":"echo ok"}"#);
    assert_eq!(r["result"]["content"][0]["text"], "ok\n");
}

#[test]
fn serve_runs_requests_concurrently_and_cancels_by_id() {
    let mut s = start();
    s.send_line(r#"{"jsonrpc":"2.0","id":"slow","method":"exec","params":{"command":"echo partial; sleep 30"}}"#);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let r = call(&mut s, 1, "exec", r#"{"command":"echo quick"}"#);
    assert_eq!(r["result"]["content"][0]["text"], "quick\n");
    s.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"cancel","params":{"id":"slow"}}"#);
    let got = [s.recv(), s.recv()];
    let slow = got.iter().find(|v| v["id"] == "slow").unwrap();
    assert_eq!(slow["result"]["details"]["outcome"], "cancelled");
    assert!(
        slow["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("partial")
    );
}

#[test]
fn the_default_window_keeps_an_error_from_the_middle() {
    let (code, out, _) = run(&[
        "run",
        "--json",
        "--",
        "seq 1 20000; echo 'ValueError: the needle'; seq 1 20000",
    ]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\nValueError: the needle\n"), "{text}");
    let t = &v["details"]["truncation"];
    assert_eq!(t["direction"], "smart");
    assert_eq!(t["salient_lines"], 1);
    assert_eq!(t["shown_ranges"].as_array().unwrap().len(), 3);
    assert!(
        text.contains("; 1 matching line kept from the omitted middle. Full: artifact://"),
        "{text}"
    );
    // Nothing salient: exactly the tail, reported as such.
    let (_, out, _) = run(&["run", "--json", "--", "seq 1 100000"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["details"]["truncation"]["direction"], "tail");
    assert_eq!(
        v["details"]["truncation"]["shown_ranges"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// Starts a job (with a setsid escapee) and a session in a server; returns their pids.
fn server_with_job_and_session(s: &mut Server) -> Vec<i32> {
    let r = call(
        s,
        1,
        "exec",
        r#"{"command":"setsid sleep 300 & echo $!; sleep 301 & echo $!; wait","run_in_background":true}"#,
    );
    let job = r["result"]["details"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut pids = Vec::new();
    // Bounded by time, not by tries: `mode: "all"` answers at once, and a loaded machine may
    // take a while to start the job's processes.
    let mut i = 0;
    poll(std::time::Duration::from_mins(1), || {
        i += 1;
        let r = call(
            s,
            9 + i,
            "job_output",
            &format!(r#"{{"job_id":"{job}","mode":"all","wait_ms":100}}"#),
        );
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        pids = text
            .lines()
            .skip(1)
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        pids.len() == 2
    });
    assert_eq!(pids.len(), 2);
    let r = call(
        s,
        1_000_000,
        "exec",
        r#"{"command":"echo $$","session":"s"}"#,
    );
    pids.push(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .trim()
            .parse()
            .unwrap(),
    );
    assert!(pids.iter().all(|&p| alive(p)));
    pids
}

#[test]
fn closing_the_servers_stdin_ends_jobs_and_sessions() {
    let mut s = start();
    let pids = server_with_job_and_session(&mut s);
    // A request that arrived before the end of input still gets its answer.
    s.send_line(r#"{"jsonrpc":"2.0","id":"last","method":"exec","params":{"command":"sleep 0.2; echo answered"}}"#);
    s.close_stdin();
    let last = s.recv();
    assert_eq!(last["result"]["content"][0]["text"], "answered\n");
    assert!(s.wait_exit().success());
    let survivors: Vec<i32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert_eq!(survivors, Vec::<i32>::new());
}

#[test]
fn sigterm_to_the_server_ends_jobs_and_sessions() {
    let mut s = start();
    let pids = server_with_job_and_session(&mut s);
    s.sigterm();
    let _ = s.wait_exit();
    let survivors: Vec<i32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert_eq!(survivors, Vec::<i32>::new());
}

#[test]
fn mcp_lists_and_calls_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = agent(dir.path());
    cmd.arg("mcp");
    let mut s = Server::spawn(cmd).keeping(dir);
    let r = s.initialize();
    assert_eq!(r["result"]["serverInfo"]["name"], "agent-exec");
    s.send_line(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let r = s.recv();
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "bash_output",
            "bash_input",
            "bash_kill",
            "bash_jobs",
            "read_artifact",
            "bash_session_close"
        ]
    );
    // Plain JSON Schema: no format of Rust's (`uint64`, `int32`), which clients warn about and
    // strict validators refuse (the TypeScript SDK's Ajv: crates/cli/tests/mcp_ts_sdk).
    let mut formats = Vec::new();
    formats_in(&r["result"]["tools"], &mut formats);
    assert_eq!(formats, Vec::<String>::new(), "non-standard formats");
    s.send_line(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo via mcp"}}}"#,
    );
    let r = s.recv();
    assert_eq!(r["result"]["content"][0]["text"], "via mcp\n");
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(r["result"]["structuredContent"]["outcome"], "success");
    assert!(s.finish().success());
}

/// Every `format` in `schema` that JSON Schema 2020-12 does not define.
fn formats_in(schema: &Value, found: &mut Vec<String>) {
    const STANDARD: &[&str] = &[
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ];
    match schema {
        Value::Object(o) => {
            if let Some(Value::String(f)) = o.get("format")
                && !STANDARD.contains(&f.as_str())
            {
                found.push(f.clone());
            }
            o.values().for_each(|v| formats_in(v, found));
        }
        Value::Array(a) => a.iter().for_each(|v| formats_in(v, found)),
        _ => {}
    }
}

/// The whole JSON result, snapshotted with paths, pids and durations filtered.
/// `run(args)` in an environment of its own: whatever the machine's (a CI's tokens, which
/// agent-exec would name as withheld), the snapshot is the same.
fn json_snapshot(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = agent(dir.path());
    cmd.env_clear()
        .env("AGENT_EXEC_ARTIFACTS", dir.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default());
    let out = cmd.args(args).output_bounded().unwrap();
    let (code, out, err) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    format!("exit: {code}\n--- stdout\n{out}--- stderr\n{err}")
}

#[test]
fn json_results_snapshot() {
    insta::with_settings!({filters => vec![
        (r#""duration_ms": \d+"#, r#""duration_ms": "[ms]""#),
        (r#""cwd": "[^"]*""#, r#""cwd": "[cwd]""#),
        (r"artifact://\d+", "artifact://[id]"),
        (r#""artifact_id": "\d+""#, r#""artifact_id": "[id]""#),
    ]}, {
        insta::assert_snapshot!("exit_nonzero", json_snapshot(&["run", "--json", "--", "echo out; echo err >&2; exit 3"]));
        insta::assert_snapshot!("timeout", json_snapshot(&["run", "--json", "-t", "1", "--", "echo started; sleep 30"]));
        insta::assert_snapshot!("truncated_tail", json_snapshot(&["run", "--json", "--max-bytes", "10", "--", "seq 1 1000"]));
        insta::assert_snapshot!("denied", json_snapshot(&["run", "--json", "--", "rm -rf ~"]));
    });
}

/// Runs `agent-exec run` under a pseudo-terminal (util-linux `script`) and returns what the
/// terminal received.
fn on_a_terminal(no_color: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let bin = exe();
    let inner = format!("{} run -- 'sleep 1.5; echo done'", bin.display());
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &inner, "/dev/null"])
        .env("AGENT_EXEC_ARTIFACTS", dir.path())
        .env_remove("NO_COLOR");
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let out = cmd.output_bounded().expect("util-linux script");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn live_progress_only_on_a_terminal_and_colour_honours_no_color() {
    let tty = on_a_terminal(false);
    assert!(
        tty.contains("\u{1b}[2mrunning… 1s, 0B of output"),
        "{tty:?}"
    );
    assert!(tty.contains("done"), "{tty:?}");
    let plain = on_a_terminal(true);
    assert!(plain.contains("running… 1s, 0B of output"), "{plain:?}");
    assert!(!plain.contains("\u{1b}["), "{plain:?}");
    // On a pipe: nothing on stderr.
    let (_, out, err) = run(&["run", "--", "sleep 1.5; echo done"]);
    assert_eq!((out.as_str(), err.as_str()), ("done\n", ""));
}

#[test]
fn a_working_directory_the_user_cannot_enter_gets_its_own_error() {
    // Run as an unprivileged user (root may enter any directory): `setpriv` from util-linux.
    let dir = tempfile::tempdir().unwrap();
    let set_mode = |p: &std::path::Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    set_mode(dir.path(), 0o755);
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    set_mode(&locked, 0o000);
    let artifacts = dir.path().join("artifacts");
    std::fs::create_dir(&artifacts).unwrap();
    set_mode(&artifacts, 0o777);
    for command in ["true", "echo needs a shell; true"] {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(exe())
            .arg("run")
            .arg("--artifacts")
            .arg(&artifacts)
            .arg("-C")
            .arg(&locked)
            .args(["--", command])
            .output_bounded()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(127), "{text}");
        assert!(
            text.starts_with(&format!(
                "cannot enter the working directory {}: Permission denied",
                locked.display()
            )),
            "{text}"
        );
        assert!(!text.contains("failed to start"), "{text}");
    }
}

#[test]
fn the_workspace_is_rooted_where_the_user_named_it() {
    // `-C DIR` names the workspace: relative to where agent-exec runs, for `check` and `run`.
    let top = tempfile::tempdir().unwrap();
    let project = top.path().join("proj");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let artifacts = tempfile::tempdir().unwrap();
    let in_top = |args: &[&str]| {
        let out = agent(artifacts.path())
            .current_dir(top.path())
            .args(args)
            .output_bounded()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = in_top(&[
        "check",
        "--workspace-only",
        "-C",
        "proj",
        "--",
        "echo x > ../f",
    ]);
    assert_eq!(code, 126, "{out}");
    assert!(out.contains("outside the workspace"), "{out}");
    let (code, out) = in_top(&[
        "check",
        "--workspace-only",
        "-C",
        "proj",
        "--",
        "echo x > src/f",
    ]);
    assert_eq!(code, 0, "{out}");
    // `run -C proj` roots the workspace at proj, not at the directory agent-exec runs in.
    let (code, out) = in_top(&[
        "run",
        "--workspace-only",
        "-C",
        "proj",
        "--",
        "echo x > ../f",
    ]);
    assert_eq!(code, 126, "{out}");
    assert!(!top.path().join("f").exists(), "the denied write ran");
    let (code, out) = in_top(&[
        "run",
        "--workspace-only",
        "-C",
        "proj",
        "--",
        "echo x > src/f",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(project.join("src/f").exists());
}

/// `[window]` in `--config` adds salient patterns: a marker the defaults do not know is kept
/// from the middle of a long output; a pattern that does not compile is refused, named.
#[test]
fn the_config_file_adds_salient_patterns() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent-exec.toml");
    std::fs::write(
        &config,
        "[window]\nsalient_patterns = ['\\bQUOTA EXCEEDED\\b']\nsalient_anchors = ['QUOTA']\n",
    )
    .unwrap();
    let command = "seq 1 2000; echo 'bucket b7: QUOTA EXCEEDED'; seq 2001 4000";
    let with = agent(dir.path())
        .args(["run", "--max-bytes", "2000", "--config"])
        .arg(&config)
        .args(["--", command])
        .output_bounded()
        .unwrap();
    assert_eq!(with.status.code(), Some(0), "{with:?}");
    assert!(String::from_utf8_lossy(&with.stdout).contains("\nbucket b7: QUOTA EXCEEDED\n"));
    let without = agent(dir.path())
        .args(["run", "--max-bytes", "2000", "--", command])
        .output_bounded()
        .unwrap();
    assert!(!String::from_utf8_lossy(&without.stdout).contains("QUOTA EXCEEDED"));
    std::fs::write(&config, "[window]\nsalient_patterns = ['(']\n").unwrap();
    let bad = agent(dir.path())
        .args(["run", "--config"])
        .arg(&config)
        .args(["--", "true"])
        .output_bounded()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("window.salient_patterns") && err.contains("\"(\""),
        "{err}"
    );
}
