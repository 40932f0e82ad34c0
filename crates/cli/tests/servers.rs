//! `serve` and `mcp` as clients meet them: every bad input gets an answer naming the problem
//! and the server goes on (each test ends by asking for an `exec` that must still answer);
//! bounds hold under bursts; progress streams; a client that goes away takes its commands with
//! it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::{Guard, Server, alive, eventually, exe, pid_in};

/// An `exec` (or, in `mcp`, a `bash` call) still answers: the next answer is its own.
fn still_serves(s: &mut Server) {
    let (method, params) = if s.is_mcp() {
        (
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "echo still-serving"}}),
        )
    } else {
        ("exec", json!({"command": "echo still-serving"}))
    };
    s.send_request(99_999, method, params);
    let r = s.answer();
    assert_eq!(r["id"], 99_999, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "still-serving\n", "{r}");
}

/// Starts `command` as a background job; its id.
fn start_job(s: &mut Server, id: u64, command: &str) -> String {
    let r = s.request(
        id,
        "exec",
        json!({"command": command, "run_in_background": true}),
    );
    r["result"]["details"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job id: {r}"))
        .to_owned()
}

fn error_of(answer: &Value) -> (i64, String) {
    (
        answer["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {answer}")),
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn malformed_messages_get_errors_naming_the_problem_and_nothing_runs() {
    let mut s = Server::serve(&[]);
    let marker = s.path("ran");
    let touch = format!("touch {}", marker.display());
    // (the line, the error code, words the message must hold)
    let cases: Vec<(Vec<u8>, i64, &str)> = vec![
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exec\",\"params\":{\"command\":\"echo \xff\"}}".to_vec(), -32700, "not valid UTF-8"),
        (b"{not json".to_vec(), -32700, "parse error"),
        (b"{}".to_vec(), -32600, "method"),
        (b"[]".to_vec(), -32600, "empty batch"),
        (b"42".to_vec(), -32600, "not a number"),
        (json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "exec", "params": {"command": touch}}).to_string().into_bytes(), -32600, "id must be a string, a number or null"),
        (json!({"jsonrpc": "2.0", "id": [1], "method": "exec", "params": {"command": touch}}).to_string().into_bytes(), -32600, "not an array"),
        (json!({"jsonrpc": "2.0", "id": true, "method": "exec", "params": {"command": touch}}).to_string().into_bytes(), -32600, "not a boolean"),
        (json!({"jsonrpc": "1.0", "id": 2, "method": "exec", "params": {"command": touch}}).to_string().into_bytes(), -32600, "\"2.0\""),
        (json!({"jsonrpc": "2.0", "id": 3, "method": 7}).to_string().into_bytes(), -32600, "method"),
        (json!({"jsonrpc": "2.0", "id": 4, "method": "exec", "params": [touch]}).to_string().into_bytes(), -32602, "exec takes named params, an object (command"),
        (json!({"jsonrpc": "2.0", "id": 5, "method": "exec", "params": "x"}).to_string().into_bytes(), -32602, "params must be an object"),
        (json!({"jsonrpc": "2.0", "id": 6, "method": "exec", "params": {"command": touch, "timeout": "soon"}}).to_string().into_bytes(), -32602, "timeout"),
        (json!({"jsonrpc": "2.0", "id": 7, "method": "artifact_read", "params": {"id": "1", "offset": -1}}).to_string().into_bytes(), -32602, "offset: expected a non-negative integer, got -1"),
        (json!({"jsonrpc": "2.0", "id": 8, "method": "artifact_read", "params": {"id": "1", "offset": "abc"}}).to_string().into_bytes(), -32602, "offset"),
        (json!({"jsonrpc": "2.0", "id": 9, "method": "artifact_read", "params": {"id": "1", "limit": -5}}).to_string().into_bytes(), -32602, "limit"),
        (json!({"jsonrpc": "2.0", "id": 10, "method": "job_output", "params": {"job_id": "1", "wait_ms": -1}}).to_string().into_bytes(), -32602, "wait_ms"),
        (json!({"jsonrpc": "2.0", "id": 11, "method": "job_input", "params": {"job_id": "1", "eof": "maybe"}}).to_string().into_bytes(), -32602, "eof"),
        (json!({"jsonrpc": "2.0", "id": 12, "method": "job_kill", "params": {}}).to_string().into_bytes(), -32602, "job_id"),
        (json!({"jsonrpc": "2.0", "id": 13, "method": "session_close", "params": {"session": 5}}).to_string().into_bytes(), -32602, "session"),
        (json!({"jsonrpc": "2.0", "id": 14, "method": "job_list", "params": {"x": 1}}).to_string().into_bytes(), -32602, "x"),
        (json!({"jsonrpc": "2.0", "id": 15, "method": "cancel", "params": {"id": {"a": 1}}}).to_string().into_bytes(), -32602, "id"),
    ];
    for (line, code, words) in cases {
        s.send_bytes(&line);
        let answer = s.answer();
        let (got, message) = error_of(&answer);
        assert_eq!(got, code, "{}: {answer}", String::from_utf8_lossy(&line));
        assert!(
            message.contains(words),
            "{}: {message:?} lacks {words:?}",
            String::from_utf8_lossy(&line)
        );
        still_serves(&mut s);
    }
    assert!(!marker.exists(), "a refused request ran its command");
}

#[test]
fn bad_values_inside_a_request_are_refused_naming_them() {
    let mut s = Server::serve(&[]);
    for (env, words) in [
        (json!({"A=B": "1"}), "env name \"A=B\""),
        (json!({"": "1"}), "env name \"\""),
    ] {
        let r = s.request(1, "exec", json!({"command": "echo $A", "env": env}));
        assert_eq!(r["result"]["details"]["outcome"], "invalid_request", "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(words), "{text}");
    }
    // Numbers sent as strings are taken.
    let r = s.request(
        2,
        "exec",
        json!({"command": "echo ok", "timeout": "30", "tail": "5"}),
    );
    assert_eq!(r["result"]["content"][0]["text"], "ok\n", "{r}");
    still_serves(&mut s);
}

#[test]
fn a_line_over_the_limit_is_refused_naming_the_limit_and_not_echoed() {
    let mut s = Server::serve(&["--max-line-bytes", "64K"]);
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exec\",\"params\":{{\"command\":\"echo {}\"}}}}",
        "x".repeat(1 << 20)
    );
    s.send_bytes(big.as_bytes());
    let answer = s.answer();
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32600);
    assert!(
        message.contains("65536 bytes (--max-line-bytes)"),
        "{message}"
    );
    assert!(
        answer.to_string().len() < 1024,
        "the reply echoes the request"
    );
    // Answered under the request's id, read from the line's start…
    assert_eq!(answer["id"], 1, "{answer}");
    // …or its end, where the TypeScript SDK puts it.
    let big = format!(
        "{{\"method\":\"exec\",\"params\":{{\"command\":\"echo {}\"}},\"jsonrpc\":\"2.0\",\"id\":\"last\"}}",
        "x".repeat(1 << 20)
    );
    s.send_bytes(big.as_bytes());
    let answer = s.answer();
    assert_eq!(
        (error_of(&answer).0, &answer["id"]),
        (-32600, &json!("last"))
    );
    still_serves(&mut s);
}

/// A method call in either server (MCP: the tool of that method), with the size of the line
/// that answered it.
#[allow(clippy::needless_pass_by_value)] // callers build the params in place: json!({…})
fn call_sized(client: &mut Server, id: u64, method: &str, params: Value) -> (Value, usize) {
    let message = if client.is_mcp() {
        let tool = match method {
            "exec" => "bash",
            "artifact_read" => "read_artifact",
            "job_list" => "bash_jobs",
            other => panic!("no MCP tool for {other}"),
        };
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": params}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    };
    client.send(&message);
    loop {
        let line = client.recv_line();
        let m: Value = serde_json::from_str(&line).unwrap();
        if m["id"] == id {
            let result = m["result"].clone();
            let result = if client.is_mcp() {
                // The same shape as `serve`'s: text and details (the structured content's copy
                // of the text is checked and left out).
                let mut details = result["structuredContent"].clone();
                let output = details.as_object_mut().and_then(|d| d.remove("output"));
                assert_eq!(
                    output.as_ref(),
                    result["content"][0].get("text"),
                    "{result}"
                );
                json!({"content": result["content"], "details": details, "isError": result["isError"]})
            } else {
                result
            };
            return (result, line.len());
        }
    }
}

/// Every answer of every method is bounded by the output window (plus its notices and the
/// details), whatever a request asks for or echoes: an artifact is read in pages that join
/// back into exactly its bytes, a read past its end says where the end is, and a huge command
/// or session name is not sent back whole.
#[test]
fn every_answer_is_bounded_and_artifacts_are_read_in_pages() {
    const WINDOW: usize = 4000;
    // The window, its notices and the details (twice in MCP: text and structuredContent).
    let bound = 2 * (WINDOW + agent_exec_core::TEXT_SLACK) + 64 * 1024;
    for mcp in [false, true] {
        let flags = ["--max-bytes", "4000", "--sandbox", "off"];
        let mut s = if mcp {
            Server::mcp(&flags)
        } else {
            Server::serve(&flags)
        };
        let output = "é-line ✓\n".repeat(20_000);
        std::fs::write(s.path("out.txt"), &output).unwrap();
        let (r, _) = call_sized(&mut s, 1, "exec", json!({"command": "cat out.txt"}));
        let id = r["details"]["truncation"]["artifact_id"]
            .as_str()
            .unwrap_or_else(|| panic!("an artifact: {r}"))
            .to_owned();
        // A limit far past the window: one page, and the pages join back into the output.
        let mut joined = String::new();
        let mut offset = 0u64;
        for page in 2.. {
            assert!(page < 1000, "the pages never end");
            let (r, size) = call_sized(
                &mut s,
                page,
                "artifact_read",
                json!({"id": id, "offset": offset, "limit": 12_000_000}),
            );
            assert!(size <= bound, "mcp {mcp}: a page of {size} bytes");
            let text = r["content"][0]["text"].as_str().unwrap();
            match text.rfind("\n\n[Showing bytes ") {
                Some(note) => {
                    joined.push_str(&text[..note]);
                    let next = text[note..].rsplit("Read on with offset ").next().unwrap();
                    offset = next.trim_end_matches(".]").parse().unwrap();
                }
                None => {
                    joined.push_str(text);
                    break;
                }
            }
        }
        assert!(
            joined == output,
            "mcp {mcp}: the pages differ from the output"
        );
        // Past the end: an error that says where the end is.
        let (r, _) = call_sized(
            &mut s,
            5000,
            "artifact_read",
            json!({"id": id, "offset": output.len() + 10}),
        );
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(
            r["details"]["outcome"] == "invalid_request"
                && text.contains(&format!("it holds {} bytes", output.len())),
            "mcp {mcp}: {r}"
        );
        // What a request echoes is bounded too.
        let long = "x".repeat(2 << 20);
        for (n, (method, params)) in [
            (
                "exec",
                json!({"command": format!("sleep 60 # {long}"), "run_in_background": true}),
            ),
            ("exec", json!({"command": format!("echo {long}")})),
            ("job_list", json!({})),
            ("exec", json!({"command": "true", "session": long})),
        ]
        .into_iter()
        .enumerate()
        {
            let (r, size) = call_sized(&mut s, 6000 + n as u64, method, params);
            assert!(
                size <= bound,
                "mcp {mcp}: {method} answered {size} bytes: {}",
                &r.to_string()[..300]
            );
        }
        // Errors that quote the request (a method, a field, a value) are bounded too.
        let big = "x".repeat(2 << 20);
        let errors = if mcp {
            vec![
                json!({"jsonrpc": "2.0", "id": 7001, "method": big, "params": {}}),
                json!({"jsonrpc": "2.0", "id": 7002, "method": "tools/call", "params": {"name": big, "arguments": {}}}),
                json!({"jsonrpc": "2.0", "id": 7003, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": "true", format!("bogus{big}"): 1}}}),
            ]
        } else {
            vec![
                json!({"jsonrpc": "2.0", "id": 7001, "method": big, "params": {}}),
                json!({"jsonrpc": "2.0", "id": 7002, "method": "exec", "params": {"command": "true", format!("bogus{big}"): 1}}),
                json!({"jsonrpc": "2.0", "id": 7003, "method": "exec", "params": {"command": "true", "timeout": big}}),
            ]
        };
        for message in errors {
            s.send(&message);
            let line = s.recv_line();
            assert!(
                line.len() <= bound,
                "mcp {mcp}: an error of {} bytes",
                line.len()
            );
        }
        still_serves(&mut s);
    }
}

#[test]
fn batches_are_answered_as_one_array() {
    let mut s = Server::serve(&[]);
    s.send(&json!([
        {"jsonrpc": "2.0", "id": "a", "method": "exec", "params": {"command": "echo A"}},
        {"jsonrpc": "2.0", "method": "exec", "params": {"command": "true"}},
        {"jsonrpc": "2.0", "id": "b", "method": "nope"},
        {"id": {"bad": 1}, "method": "exec", "params": {"command": "true"}},
    ]));
    let answer = s.answer();
    let items = answer
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {answer}"));
    assert_eq!(items.len(), 3, "{answer}");
    let by_id = |id: Value| items.iter().find(|i| i["id"] == id).unwrap().clone();
    assert_eq!(by_id(json!("a"))["result"]["content"][0]["text"], "A\n");
    assert_eq!(by_id(json!("b"))["error"]["code"], -32601);
    assert_eq!(by_id(Value::Null)["error"]["code"], -32600);
    // A batch of notifications only gets no answer; the next request does.
    s.send(&json!([{"jsonrpc": "2.0", "method": "exec", "params": {"command": "true"}}]));
    still_serves(&mut s);
}

#[test]
fn mcp_refuses_empty_objects_and_batches_instead_of_staying_silent() {
    let mut s = Server::mcp(&[]);
    s.send_bytes(b"{}");
    assert_eq!(error_of(&s.answer()).0, -32600);
    s.send_bytes(b"[]");
    assert_eq!(error_of(&s.answer()).0, -32600);
    // No batches in MCP (since 2025-06-18): each request in one is refused under its id.
    s.send(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": "b", "method": "ping"}]));
    for id in [json!(1), json!("b")] {
        let answer = s.answer();
        let (code, message) = error_of(&answer);
        assert_eq!((code, &answer["id"]), (-32600, &id), "{answer}");
        assert!(message.contains("batches"), "{message}");
    }
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo x", "bogus": 1}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("bogus")
    );
    let r = s.request(
        3,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo still-serving"}}),
    );
    assert_eq!(r["result"]["content"][0]["text"], "still-serving\n", "{r}");
}

#[test]
fn mcp_sends_no_answer_after_a_cancellation() {
    let mut s = Server::mcp(&[]);
    let pidfile = s.path("pid");
    let command = format!("sh -c 'echo $$ > {}; exec sleep 300'", pidfile.display());
    s.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": command}}}));
    let pid = pid_in(&pidfile);
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "test"}}));
    eventually("the cancelled command to end", || !alive(pid));
    s.send_request(
        6,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo after"}}),
    );
    // The next answer, not the one to 6: an answer to the cancelled request must not come.
    let r = s.answer();
    assert_eq!(r["id"], 6, "an answer to the cancelled request came: {r}");
    assert_eq!(r["result"]["content"][0]["text"], "after\n");
}

#[test]
fn exec_progress_streams_while_the_command_runs() {
    let mut s = Server::serve(&[]);
    s.send(
        &json!({"jsonrpc": "2.0", "id": "p", "method": "exec", "params": {
        "command": "for i in 1 2 3 4; do echo step$i; sleep 0.4; done", "progress": true}}),
    );
    let mut updates = Vec::new();
    let answer = loop {
        let m = s.recv();
        if m["method"] == "exec/progress" {
            updates.push(m);
        } else {
            break m;
        }
    };
    assert_eq!(answer["result"]["details"]["outcome"], "success");
    assert!(!updates.is_empty(), "no exec/progress before the answer");
    let mut last_elapsed = 0;
    for u in &updates {
        let p = &u["params"];
        assert_eq!(p["id"], "p", "{u}");
        for field in ["elapsed_ms", "stdout_bytes", "stderr_bytes", "lines"] {
            assert!(p[field].is_u64(), "{field} in {u}");
        }
        let elapsed = p["elapsed_ms"].as_u64().unwrap();
        assert!(elapsed > last_elapsed, "elapsed_ms goes up: {u}");
        last_elapsed = elapsed;
        assert!(p["tail"].as_str().unwrap().starts_with("step1\n"), "{u}");
    }
    // Without "progress": nothing but the answer.
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "exec", "params": {"command": "echo a; sleep 0.6; echo b"}}));
    assert_eq!(s.recv()["id"], 2);
}

#[test]
fn past_max_inflight_requests_wait_their_turn_and_cancel_still_works() {
    let mut s = Server::serve(&["--max-inflight", "2"]);
    for id in ["a", "b"] {
        s.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "exec", "params": {
            "command": format!("echo $$ > {}; exec sleep 300", s.path(id).display())}}),
        );
    }
    pid_in(&s.path("a"));
    pid_in(&s.path("b"));
    // Past the bound: queued, not refused.
    for id in [3, 4, 5, 6] {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "exec", "params": {"command": format!("echo call-{id}")}}));
    }
    // A queued request cancelled is answered now, not in its turn (both still run).
    s.send(&json!({"jsonrpc": "2.0", "id": "cancel-6", "method": "cancel", "params": {"id": 6}}));
    let answers = s.answers(2);
    assert_eq!(
        answers["6"]["result"]["details"]["outcome"], "cancelled",
        "{answers:?}"
    );
    // `cancel` is answered on the spot, not queued behind them (else nothing would end).
    s.send(&json!({"jsonrpc": "2.0", "id": "cancel-a", "method": "cancel", "params": {"id": "a"}}));
    let answers = s.answers(5);
    assert_eq!(
        answers["\"a\""]["result"]["details"]["outcome"],
        "cancelled"
    );
    for id in [3, 4, 5] {
        let m = &answers[&id.to_string()];
        assert_eq!(
            m["result"]["content"][0]["text"],
            format!("call-{id}\n"),
            "{m}"
        );
    }
    s.send(&json!({"jsonrpc": "2.0", "id": "cancel-b", "method": "cancel", "params": {"id": "b"}}));
    s.answers(2);
    still_serves(&mut s);
}

#[test]
fn past_max_sessions_a_new_session_waits_for_room() {
    let mut s = Server::serve(&["--max-sessions", "2"]);
    for name in ["s1", "s2"] {
        s.send(&json!({"jsonrpc": "2.0", "id": name, "method": "exec", "params": {
            "session": name, "command": format!("echo $$ > {}; sleep 300", s.path(name).display())}}));
    }
    pid_in(&s.path("s1"));
    pid_in(&s.path("s2"));
    // It waits for room as long as its timeout allows, then says why it did not run.
    let r = s.request(
        3,
        "exec",
        json!({"session": "s3", "command": "echo s3", "timeout": 1}),
    );
    assert_eq!(r["result"]["details"]["outcome"], "invalid_request", "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("--max-sessions 2"), "{text}");
    // One waiting when a session ends takes its place.
    s.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "exec", "params": {"session": "s3", "command": "echo s3"}}));
    s.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "cancel", "params": {"id": "s1"}}));
    let answers = s.answers(3);
    assert_eq!(
        answers["5"]["result"]["content"][0]["text"], "s3\n",
        "{answers:?}"
    );
}

/// A burst of calls on more new sessions than `--max-sessions` (up to three times as many: the
/// limit running, twice the limit waiting), each busy for a moment: none is refused, they take
/// turns.
#[test]
fn a_burst_on_new_sessions_takes_turns() {
    let mut s = Server::serve(&["--max-sessions", "4"]);
    for n in 0..10 {
        s.send(
            &json!({"jsonrpc": "2.0", "id": n, "method": "exec", "params": {
            "session": format!("burst-{n}"), "command": format!("sleep 0.2; echo {n}")}}),
        );
    }
    let answers = s.answers(10);
    for n in 0..10 {
        let m = &answers[&n.to_string()];
        assert_eq!(m["result"]["content"][0]["text"], format!("{n}\n"), "{m}");
    }
}

#[test]
fn job_input_never_blocks_and_eof_alone_sends_no_newline() {
    let mut s = Server::serve(&[]);
    let sleeper = start_job(&mut s, 1, "sleep 300");
    let r = s.request(
        2,
        "job_input",
        json!({"job_id": sleeper, "data": "x".repeat(1 << 20)}),
    );
    assert_eq!(r["result"]["details"]["outcome"], "invalid_request", "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("of 1048577 bytes") && text.contains("not reading"),
        "{text}"
    );
    still_serves(&mut s);
    s.request(3, "job_kill", json!({"job_id": sleeper}));

    let counter = start_job(&mut s, 4, "wc -c");
    let r = s.request(
        5,
        "job_input",
        json!({"job_id": counter, "data": "", "eof": true}),
    );
    assert_eq!(r["result"]["details"]["outcome"], "success", "{r}");
    let mut text = String::new();
    eventually("wc to end", || {
        let r = s.request(6, "job_output", json!({"job_id": counter, "wait_ms": 500}));
        text.push_str(r["result"]["content"][0]["text"].as_str().unwrap());
        r["result"]["details"]["running"] == false
    });
    assert!(
        text.contains("\n0\n") || text.starts_with("0\n"),
        "wc counted a byte: {text}"
    );
    // A finished job whose end was read stays readable.
    let r = s.request(7, "job_output", json!({"job_id": counter, "mode": "all"}));
    assert_eq!(r["result"]["details"]["running"], false, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains('0')
    );
    let r = s.request(8, "job_list", json!({}));
    let jobs = r["result"]["details"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{r}");
    assert_eq!(jobs[1]["job_id"], counter.as_str());
    assert_eq!(jobs[1]["status"], "success");
}

#[test]
fn out_of_file_descriptors_fails_requests_not_the_server() {
    let mut s = Server::start_in_shell("serve", &[], "ulimit -n 128;");
    for id in 0..30 {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "exec", "params": {"command": "sleep 0.3; echo ok"}}));
    }
    let mut answered = 0;
    while answered < 30 {
        let m = s.answer();
        assert!(m["id"].is_u64(), "{m}");
        // Each either ran or failed with a message; none brought the server down.
        let text = m["result"]["content"][0]["text"]
            .as_str()
            .or(m["error"]["message"].as_str());
        assert!(text.is_some_and(|t| !t.is_empty()), "{m}");
        answered += 1;
    }
    still_serves(&mut s);
    assert!(s.finish().success());
}

#[test]
fn a_client_that_stops_reading_takes_its_commands_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // Its own process, not a [`Server`]: the test must close the read end of its stdout.
    let mut child = Command::new(exe())
        .arg("serve")
        .current_dir(dir.path())
        .env("AGENT_EXEC_ARTIFACTS", dir.path().join("artifacts"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take();
    let mut child = Guard::new(child, "agent-exec serve");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "exec", "params": {
        "command": format!("sh -c 'echo $$ > {}; exec sleep 300'", pidfile.display())}});
    writeln!(stdin, "{request}").unwrap();
    let pid = pid_in(&pidfile);
    // The client can no longer read answers; its stdin stays open.
    drop(stdout);
    eventually("the command to end", || !alive(pid));
    let status = child.wait_exit();
    assert!(status.success(), "{status:?}");
    drop(stdin);
}

#[test]
fn at_end_of_input_calls_in_flight_finish_and_are_answered() {
    let mut s = Server::serve(&[]);
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "exec", "params": {"command": "sleep 0.5; echo finished"}}));
    s.close_stdin();
    let r = s.answer();
    assert_eq!(r["result"]["content"][0]["text"], "finished\n", "{r}");
    assert!(s.wait_exit().success());
}

#[test]
fn calls_run_in_the_directory_given_with_c() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::serve(&["-C", dir.path().to_str().unwrap()]);
    let r = s.request(1, "exec", json!({"command": "pwd"}));
    let pwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        r["result"]["content"][0]["text"],
        format!("{}\n", pwd.display()),
        "{r}"
    );
}

#[test]
fn sigterm_ends_commands_started_by_notifications_too() {
    let mut s = Server::serve(&[]);
    let pidfile = s.path("pid");
    // No id: nobody can cancel it by id, but the server's end still reaches it.
    s.send(&json!({"jsonrpc": "2.0", "method": "exec", "params": {
        "command": format!("sh -c 'echo $$ > {}; exec sleep 300'", pidfile.display())}}));
    let pid = pid_in(&pidfile);
    s.sigterm();
    eventually("the notification's command to end", || !alive(pid));
    assert!(s.wait_exit().success());
}

#[test]
fn waits_in_flight_end_with_the_server() {
    let mut s = Server::serve(&[]);
    let job = start_job(&mut s, 1, "sleep 300");
    // A long wait is cancelled by `cancel`, like an exec.
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "job_output", "params": {"job_id": job, "wait_ms": 600_000}}));
    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "cancel", "params": {"id": 2}}));
    let mut ids: Vec<String> = s.answers(2).into_keys().collect();
    ids.sort();
    assert_eq!(ids, ["2", "3"]);
    // And by the server's end: SIGTERM does not wait ten minutes for it.
    s.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "job_output", "params": {"job_id": job, "wait_ms": 600_000}}));
    still_serves(&mut s);
    s.sigterm();
    assert!(s.wait_exit().success());
}

#[test]
fn a_call_cancelled_while_it_waits_for_its_session_never_runs() {
    let mut s = Server::serve(&[]);
    let marker = s.path("ran");
    let pidfile = s.path("pid");
    s.send(
        &json!({"jsonrpc": "2.0", "id": "first", "method": "exec", "params": {
        "session": "s", "command": format!("echo $$ > {}; sleep 300", pidfile.display())}}),
    );
    pid_in(&pidfile);
    s.send(
        &json!({"jsonrpc": "2.0", "id": "queued", "method": "exec", "params": {
        "session": "s", "command": format!("touch {}", marker.display())}}),
    );
    for id in ["queued", "first"] {
        s.send(&json!({"jsonrpc": "2.0", "id": format!("cancel-{id}"), "method": "cancel", "params": {"id": id}}));
    }
    let answers = s.answers(4);
    let queued = &answers["\"queued\""];
    assert_eq!(
        queued["result"]["details"]["outcome"], "cancelled",
        "{queued}"
    );
    let text = queued["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("nothing was run"), "{text}");
    still_serves(&mut s);
    assert!(!marker.exists(), "the cancelled call ran");
}

#[test]
fn oversized_batches_unknown_methods_and_mcp_null_ids_are_refused() {
    let mut s = Server::serve(&["--max-inflight", "3"]);
    let batch: Vec<Value> = (0..4)
        .map(
            |i| json!({"jsonrpc": "2.0", "id": i, "method": "exec", "params": {"command": "true"}}),
        )
        .collect();
    s.send(&Value::Array(batch));
    let (code, message) = error_of(&s.answer());
    assert_eq!(code, -32600);
    assert!(message.contains("at most 3 per batch"), "{message}");
    let r = s.request(5, "nope", json!(["x"]));
    assert_eq!(error_of(&r).0, -32601, "{r}");
    still_serves(&mut s);

    let mut m = Server::mcp(&[]);
    m.send(&json!({"jsonrpc": "2.0", "id": null, "method": "ping"}));
    let (code, message) = error_of(&m.answer());
    assert_eq!(code, -32600);
    assert!(message.contains("null"), "{message}");
    still_serves(&mut m);
}

/// This server's prepared shells: processes running the prepared-shell driver with this
/// client's artifact directory in their environment.
fn prepared_shells_of(client: &Server) -> usize {
    let needle = client.path("artifacts");
    let needle = needle.to_string_lossy();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains("__agent_exec_old")
                && String::from_utf8_lossy(&environ).contains(needle.as_ref())
        })
        .count()
}

/// How long the shell running the command had been alive, in hundredths of a second.
const SHELL_AGE: &str = r#"echo $(( $(awk '{printf "%d", $1 * 100}' /proc/uptime) - $(cut -d' ' -f22 /proc/$$/stat) ))"#;

#[test]
fn one_shot_calls_run_in_shells_started_ahead_that_end_with_the_server() {
    let mut s = Server::serve(&[]);
    let first = s.request(1, "exec", json!({"command": "echo first"}));
    assert_eq!(first["result"]["content"][0]["text"], "first\n", "{first}");
    eventually("prepared shells wait for calls", || {
        prepared_shells_of(&s) >= 2
    });
    // Started well before the call that runs in it.
    std::thread::sleep(Duration::from_millis(1500));
    let aged = s.request(2, "exec", json!({"command": SHELL_AGE}));
    let age: u64 = aged["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("{aged}"));
    assert!(
        age >= 100,
        "the call ran in a shell started {age} cs before: {aged}"
    );
    // Same answers as fresh shells give.
    let mut fresh = Server::serve(&["--prepared-shells", "0"]);
    let command = "cd .. && echo \"$PWD\" $LINENO $SECONDS; echo err >&2; exit 7";
    let a = s.request(3, "exec", json!({"command": command, "cwd": "/tmp"}));
    let b = fresh.request(3, "exec", json!({"command": command, "cwd": "/tmp"}));
    assert_eq!(a["result"]["content"], b["result"]["content"], "{a} {b}");
    assert_eq!(
        a["result"]["details"]["exit_code"], b["result"]["details"]["exit_code"],
        "{a} {b}"
    );
    assert_eq!(
        prepared_shells_of(&fresh),
        0,
        "--prepared-shells 0 prepares none"
    );
    assert!(s.finish().success());
    assert!(fresh.finish().success());
}

#[test]
fn a_server_killed_leaves_no_prepared_shell() {
    let mut s = Server::serve(&[]);
    s.request(1, "exec", json!({"command": "true"}));
    eventually("prepared shells wait for calls", || {
        prepared_shells_of(&s) >= 1
    });
    s.kill();
    eventually("the prepared shells end with their server", || {
        prepared_shells_of(&s) == 0
    });
}
