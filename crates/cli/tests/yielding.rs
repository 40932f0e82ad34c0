//! Calls that yield, through the servers: `serve`'s `exec` with `yield_ms`, the job it goes on
//! as (`job_output`, `job_input` with a yield of its own, `job_kill`), a pager under a terminal
//! that yields at its prompt, `mcp`'s default yield, and a server killed with SIGKILL while a
//! yielded call runs: nothing it started survives.

mod common;

use serde_json::json;

use common::{Server, alive, eventually, pid_in};

#[test]
fn serve_yields_a_long_call_and_continues_it_as_a_job() {
    let mut server = Server::serve(&[]);
    let r = server.result(
        "exec",
        json!({"command": "echo first; sleep 2; echo second", "yield_ms": 300}),
    );
    let d = &r["details"];
    assert_eq!(d["outcome"], "running", "{r}");
    assert_eq!(r["is_error"], false, "{r}");
    let id = d["job_id"].as_str().expect("a job id").to_owned();
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("first") && text.contains("[Still running after 0."),
        "{text}"
    );
    let mut seen = String::new();
    for _ in 0..10 {
        let out = server.result("job_output", json!({"job_id": id, "wait_ms": 10000}));
        seen.push_str(out["content"][0]["text"].as_str().unwrap());
        if out["details"]["running"] == false {
            assert_eq!(out["details"]["exit_code"], 0, "{out}");
            break;
        }
        assert!(
            out["details"]["timeout_ms"] == 120_000,
            "a yielded call's reads report its timeout: {out}"
        );
    }
    assert!(seen.contains("second"), "{seen}");
}

#[test]
fn a_pager_under_a_terminal_yields_at_its_prompt_and_takes_keys() {
    let mut server = Server::serve(&[]);
    let r = server.result(
        "exec",
        json!({"command": "seq 1 500 | less", "pty": true, "yield_ms": 30000}),
    );
    assert_eq!(r["details"]["outcome"], "running", "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Waiting for input"), "{text}");
    // The screen as it shows now: the first page.
    assert!(text.lines().any(|l| l == "23"), "{text}");
    let id = r["details"]["job_id"].as_str().unwrap().to_owned();
    // `q` quits the pager: the answer says the job ended.
    let answer = server.result(
        "job_input",
        json!({"job_id": id, "data": "q", "enter": false, "yield_ms": 5000}),
    );
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Sent 1 byte to job"), "{answer}");
    eventually("the pager to end", || {
        server.result("job_output", json!({"job_id": id}))["details"]["running"] == false
    });
}

#[test]
fn mcp_yields_by_default_only_past_its_bound_and_a_request_can_ask_sooner() {
    let mut server = Server::mcp(&["--yield-ms", "400"]);
    server.initialize();
    let call = |server: &mut Server, args: serde_json::Value| {
        server.result("tools/call", json!({"name": "bash", "arguments": args}))
    };
    let quick = call(&mut server, json!({"command": "echo hi"}));
    assert_eq!(quick["structuredContent"]["outcome"], "success", "{quick}");
    let long = call(&mut server, json!({"command": "sleep 5"}));
    assert_eq!(long["structuredContent"]["outcome"], "running", "{long}");
    assert_eq!(long["isError"], false, "{long}");
    let id = long["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let killed = server.result(
        "tools/call",
        json!({"name": "bash_kill", "arguments": {"job_id": id}}),
    );
    assert_eq!(killed["structuredContent"]["running"], false, "{killed}");
    // yield_ms 0: to the end.
    let whole = call(
        &mut server,
        json!({"command": "sleep 1; echo done", "yield_ms": 0}),
    );
    assert_eq!(whole["structuredContent"]["outcome"], "success", "{whole}");
}

#[test]
fn a_server_killed_while_a_yielded_call_runs_leaves_nothing() {
    let mut server = Server::serve(&[]);
    let pid_file = server.path("pid");
    let r = server.result(
        "exec",
        json!({
            "command": format!("(setsid sleep 300 & echo $! > {}); sleep 300", pid_file.display()),
            "yield_ms": 300,
        }),
    );
    assert_eq!(r["details"]["outcome"], "running", "{r}");
    let escapee = pid_in(&pid_file);
    assert!(alive(escapee));
    server.kill();
    eventually("the yielded call's escapee to be ended", || !alive(escapee));
}
