//! Calls that yield, through the servers: `serve`'s `exec` with `yield_ms`, the job it goes on
//! as (`job_output`, `job_input` with a yield of its own, `job_kill`), a pager under a terminal
//! that yields at its prompt, `mcp`'s default yield, and a server killed with SIGKILL while a
//! yielded call runs: nothing it started survives. As root and as an unprivileged user: the
//! yield, the kill, and an editor's wait for a terminal the call lacks.

mod common;

use serde_json::json;

use common::{Server, World, alive, eventually, outcome, pid_in, text, users};

/// Whether a process whose command line holds `word` runs.
fn running(word: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let pid = p.file_name().to_string_lossy().parse::<i32>().unwrap_or(0);
        let line = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        pid > 0 && alive(pid) && line.split(|&b| b == 0).any(|w| w == word.as_bytes())
    })
}

/// The agent-exec process of a server started as `world`'s user: `runuser` stays its parent.
fn agent_exec_pid(server: &Server, world: &World) -> i32 {
    if world.user.name.is_none() {
        return server.pid();
    }
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", server.pid()))
        .unwrap_or_default();
    children
        .split_whitespace()
        .find_map(|p| p.parse().ok())
        .expect("runuser's child, agent-exec")
}

#[test]
fn as_root_and_as_a_user_a_yielded_call_goes_on_and_a_killed_server_leaves_nothing() {
    for user in users() {
        let world = World::new(&user);
        let mut server = Server::spawn(world.command(&["serve"]));
        // Found by its command line: a sandboxed call's `$!` is a pid of its own namespace.
        let marker = format!("301.{}", user.uid);
        let r = server.result(
            "exec",
            json!({
                "command": format!("echo up; (setsid sleep {marker} &); sleep 300"),
                "yield_ms": 500,
            }),
        );
        assert_eq!(r["details"]["outcome"], "running", "{user:?}: {r}");
        eventually("the escapee to start", || running(&marker));
        let id = r["details"]["job_id"].as_str().unwrap().to_owned();
        let read = server.result("job_output", json!({"job_id": id}));
        assert_eq!(read["details"]["running"], true, "{user:?}: {read}");
        let pid = agent_exec_pid(&server, &world);
        common::signal(pid, libc::SIGKILL);
        eventually(
            &format!("{user:?}: the escapee of agent-exec {pid} to be ended"),
            || !running(&marker),
        );
    }
}

#[test]
fn as_root_and_as_a_user_an_editor_without_a_terminal_is_ended_early() {
    for user in users() {
        let world = World::new(&user);
        let notes = world.workspace.join("notes.txt");
        std::fs::write(&notes, "hello\n").unwrap();
        std::os::unix::fs::lchown(&notes, Some(user.uid), Some(user.gid)).unwrap();
        let r = world.run(&["--timeout", "60"], "vim notes.txt");
        assert_eq!(outcome(&r), "timeout", "{user:?}: {r}");
        assert!(
            text(&r).contains("`vim` waited for keys from a terminal"),
            "{user:?}: {}",
            text(&r)
        );
    }
}

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
