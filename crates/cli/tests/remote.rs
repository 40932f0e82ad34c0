//! Remote targets against real engines (contract §9): an sshd, a dockerd, rootful podman and
//! a kubectl stand-in, each started and torn down here (see `engines/mod.rs`). For each:
//! results equal local ones; sessions, jobs and artifacts work through the target; killing
//! the client leaves nothing running over there, with and without a command running; a
//! dropped connection is reported and the next call reconnects.

mod common;
mod engines;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{Bounded as _, Server, poll, wait_until};
use engines::{Containers, Engine, KubectlStandIn, Sshd, WAIT, agent_exec};
use serde_json::{Value, json};

fn agent_exec_under_test() -> PathBuf {
    common::exe().to_path_buf()
}

/// `agent-exec run --json` of `command`, on `engine` (or here), from `cwd`.
fn run_json(engine: Option<&dyn Engine>, flags: &[String], command: &str, cwd: &Path) -> Value {
    let mut cmd = Command::new(agent_exec());
    cmd.arg("run").arg("--json").current_dir(cwd);
    cmd.env("AGENT_EXEC_ARTIFACTS", cwd.join("artifacts"));
    if let Some(engine) = engine {
        cmd.arg("--target").arg(engine.target());
        cmd.envs(engine.env());
    }
    cmd.args(flags).arg("--").arg(command);
    let out = cmd.stdin(Stdio::null()).output_bounded().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// The text with artifact ids made equal (they are the far side's own numbering).
fn comparable(result: &Value) -> String {
    let t = text(result);
    match t.find("artifact://") {
        Some(i) => {
            let rest = &t[i + "artifact://".len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            format!("{}artifact://ID{}", &t[..i], &rest[end..])
        }
        None => t,
    }
}

/// Results on the target equal local ones (text, outcome, codes, byte counts, truncation);
/// `details.target` names the target; a spilled output reads back through the target.
fn results_equal_local_ones(engine: &dyn Engine) {
    let dir = tempfile::tempdir().unwrap();
    for command in [
        "echo out; echo err >&2; exit 3",
        "seq 1 100000",
        r"printf 'a\033[31mred\033[0m\n'; printf 'x\ry\n'",
        "for i in 1 2 3; do echo line $i; done | tail -n 2",
        "kill -TERM $$",
        "printf 'caf\\303\\251 \\377\\n'",
    ] {
        let here = run_json(None, &[], command, dir.path());
        let there = run_json(Some(engine), &[], command, dir.path());
        let what = format!("{command:?} on {}", engine.target());
        assert_eq!(comparable(&there), comparable(&here), "text of {what}");
        for key in [
            "outcome",
            "exit_code",
            "signal",
            "stdout_bytes",
            "stderr_bytes",
            "stream_kind",
        ] {
            assert_eq!(
                there["details"][key], here["details"][key],
                "{key} of {what}"
            );
        }
        for key in [
            "direction",
            "total_bytes",
            "total_lines",
            "output_bytes",
            "shown_range",
        ] {
            assert_eq!(
                there["details"]["truncation"][key], here["details"]["truncation"][key],
                "truncation.{key} of {what}"
            );
        }
        assert_eq!(there["details"]["target"], json!(engine.target()), "{what}");
        assert_eq!(here["details"]["target"], Value::Null, "{what}");
    }
    // The operator's settings reach the far side whole: a salient pattern of the config
    // file's `[window]`, the line budget and the byte budget render the same there.
    let settings = dir.path().join("operator.toml");
    std::fs::write(
        &settings,
        "[window]\nsalient_patterns = [\"WIDGET-MELTED\"]\nsalient_anchors = [\"WIDGET-MELTED\"]\n",
    )
    .unwrap();
    let flags: Vec<String> = [
        "--config",
        settings.to_str().unwrap(),
        "--max-bytes",
        "3000",
    ]
    .map(str::to_owned)
    .to_vec();
    let command = "seq 1 3000; echo the WIDGET-MELTED at noon; seq 1 3000";
    let here = run_json(None, &flags, command, dir.path());
    let there = run_json(Some(engine), &flags, command, dir.path());
    assert!(text(&here).contains("WIDGET-MELTED"), "{here}");
    assert_eq!(
        comparable(&there),
        comparable(&here),
        "the operator's settings on {}",
        engine.target()
    );
    // The spilled output of `seq`, read back through the target's agent-exec.
    let there = run_json(Some(engine), &[], "seq 1 100000", dir.path());
    let id = there["details"]["truncation"]["artifact_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no artifact: {there}"))
        .to_owned();
    let out = Command::new(agent_exec())
        .args(["artifact", "--target", &engine.target(), &id])
        .envs(engine.env())
        // The kubectl stand-in's far side runs here and inherits this.
        .env("AGENT_EXEC_ARTIFACTS", dir.path().join("artifacts"))
        .output_bounded()
        .unwrap();
    let expected: String = (1..=100_000).map(|n| format!("{n}\n")).collect();
    assert!(
        out.status.success() && out.stdout == expected.as_bytes(),
        "artifact {id} through {}: {} bytes, stderr {}",
        engine.target(),
        out.stdout.len(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `agent-exec serve --target <engine> FLAGS` (see [`start_as`]).
fn start(engine: &dyn Engine, flags: &[String]) -> Server {
    let mut all = vec!["--target".to_owned(), engine.target()];
    all.extend_from_slice(flags);
    start_with(engine, &all)
}

/// `serve FLAGS` with the environment that reaches `engine`.
fn start_with(engine: &dyn Engine, flags: &[String]) -> Server {
    start_as("serve", engine, flags)
}

/// `SUBCOMMAND FLAGS` (`serve` or `mcp`) with the environment that reaches `engine`, spoken
/// to as a client.
fn start_as(subcommand: &str, engine: &dyn Engine, flags: &[String]) -> Server {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Server::start_with(subcommand, &flags, |cmd| {
        cmd.envs(engine.env());
    })
}

/// The result of the answer to request `id`.
fn answer(serve: &mut Server, id: u64) -> Value {
    serve.answer_to(id)["result"].clone()
}

/// Sessions persist on the target, background jobs run there, artifacts read back, and
/// every result names the target.
fn sessions_jobs_and_artifacts_work_through_the_target(engine: &dyn Engine) {
    let mut serve = start(engine, &[]);
    let target = json!(engine.target());
    let r = serve.result(
        "exec",
        json!({"command": "cd /tmp && export AE_X=42", "session": "s"}),
    );
    assert_eq!(r["details"]["outcome"], "success", "{r}");
    let r = serve.result(
        "exec",
        json!({"command": "echo $PWD $AE_X", "session": "s"}),
    );
    assert_eq!(text(&r), "/tmp 42\n", "{r}");
    assert_eq!(r["details"]["session"], "s");
    assert_eq!(r["details"]["target"], target);

    let r = serve.result(
        "exec",
        json!({"command": "sleep 0.3; echo job-done", "run_in_background": true}),
    );
    let job = r["details"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    let mut seen = String::new();
    let start = Instant::now();
    while !seen.contains("job-done") {
        assert!(
            start.elapsed() < WAIT,
            "the job's output never came: {seen}"
        );
        let r = serve.result("job_output", json!({"job_id": job, "wait_ms": 5000}));
        assert_eq!(r["details"]["target"], target, "{r}");
        seen.push_str(&text(&r));
    }
    let r = serve.result("job_list", json!({}));
    assert!(text(&r).contains(&job), "{r}");

    // A wait waits over there too, in either mode and under a PTY: the job runs for 300 s,
    // so only its output (after a pause) ends these reads.
    for (mode, pty) in [("all", false), ("new", true), ("all", true)] {
        let r = serve.result(
            "exec",
            json!({"command": "sleep 0.3; echo late; sleep 300", "run_in_background": true, "pty": pty}),
        );
        let job = r["details"]["job_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"));
        let r = serve.result(
            "job_output",
            json!({"job_id": job, "mode": mode, "wait_ms": 60_000}),
        );
        assert!(text(&r).contains("late"), "{mode}, pty {pty}: {r}");
        serve.result("job_kill", json!({"job_id": job}));
    }

    let r = serve.result("exec", json!({"command": "seq 1 50000"}));
    let id = r["details"]["truncation"]["artifact_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = serve.result("artifact_read", json!({"id": id, "grep": "^4999[0-9]$"}));
    assert!(text(&r).contains("49990"), "{r}");

    let r = serve.result("session_close", json!({"session": "s"}));
    assert_eq!(r["details"]["outcome"], "success", "{r}");
}

/// The far side's binary under a name of this test's own (a link), so its processes can be
/// told from those of tests running beside it on the same machine.
fn tagged_binary(dir: &Path, tag: &str) -> PathBuf {
    let link = dir.join(format!("agent-exec-{tag}"));
    std::os::unix::fs::symlink(agent_exec(), &link).unwrap();
    link
}

/// `kill -9` of the local `serve` ends everything it ran on the target: the far `serve`, its
/// session shell, its background job and (`running`) the command in flight.
fn killing_the_client_leaves_nothing_running(engine: &dyn Engine, tag: &str, running: bool) {
    let dir = tempfile::tempdir().unwrap();
    let far_binary = tagged_binary(dir.path(), tag);
    // A far side on this machine runs under a name of this test's own; a container's
    // processes are its own anyway.
    let flags = if engine.runs_here() {
        vec![
            "--remote-binary".to_owned(),
            far_binary.display().to_string(),
        ]
    } else {
        Vec::new()
    };
    let mut serve = start(engine, &flags);
    let session = serve.result(
        "exec",
        json!({"command": format!("sleep 0.{tag}1"), "session": "s"}),
    );
    assert_eq!(session["details"]["outcome"], "success", "{session}");
    let job = serve.result(
        "exec",
        json!({"command": format!("sleep 9{tag}2"), "run_in_background": true}),
    );
    assert!(job["details"]["job_id"].is_string(), "{job}");
    if running {
        serve.send_next(
            "exec",
            json!({"command": format!("sleep 9{tag}3"), "session": "s"}),
        );
    }
    let ours = |line: &String| {
        line.contains(&format!("sleep 9{tag}")) || line.contains(&format!("agent-exec-{tag} serve"))
    };
    wait_until("the far side's commands running", WAIT, || {
        let live: Vec<String> = engine.processes().into_iter().filter(|l| ours(l)).collect();
        live.iter().any(|l| l.contains(&format!("sleep 9{tag}2")))
            && (!running || live.iter().any(|l| l.contains(&format!("sleep 9{tag}3"))))
    });
    let killed = Instant::now();
    serve.kill();
    let mut left = Vec::new();
    wait_until("nothing left on the target", WAIT, || {
        left = engine.processes().into_iter().filter(|l| ours(l)).collect();
        left.is_empty()
    });
    eprintln!(
        "{}: nothing left {} ms after kill -9 of the client (command running: {running})",
        engine.target(),
        killed.elapsed().as_millis()
    );
}

/// In a container whose PID 1 never reaps (podman's here runs `sleep infinity` with no init),
/// a far `serve` that ends cleanly leaves no zombie behind, nor do `run` calls.
fn a_clean_end_leaves_no_zombie_there(engine: &dyn Engine) {
    let before = engine.zombies().expect("a container counts its zombies");
    let mut serve = start(engine, &[]);
    for arguments in [
        json!({"command": "sleep 0.01 & echo one"}),
        json!({"command": "sleep 0.01 & echo two", "session": "s"}),
        json!({"command": "sleep 300", "run_in_background": true}),
        json!({"command": "echo three", "pty": true}),
    ] {
        let r = serve.result("exec", arguments);
        assert_eq!(r["details"]["outcome"], "success", "{r}");
    }
    serve.close_stdin();
    poll(WAIT, || serve.try_wait().is_some());
    wait_until("the far serve gone", WAIT, || {
        !engine
            .processes()
            .iter()
            .any(|l| l.contains("agent-exec") || l.contains("sleep 300"))
    });
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..20 {
        let r = run_json(Some(engine), &[], "sleep 0.01 & echo four", dir.path());
        assert!(text(&r).starts_with("four\n"), "{r}");
    }
    assert_eq!(
        engine.zombies(),
        Some(before),
        "{}: zombies left after serve ended and 20 runs",
        engine.target()
    );
}

/// The pids of `parent`'s children.
fn children_of(parent: i32) -> Vec<i32> {
    engines::proc_stats()
        .into_iter()
        .filter(|(_, fields)| fields.get(1).and_then(|p| p.parse().ok()) == Some(parent))
        .map(|(pid, _)| pid)
        .collect()
}

/// The connection dropping mid-call ends that call as `spawn_failed`, saying so; the next call
/// reconnects and says that too.
fn a_dropped_connection_is_reported_and_the_next_call_reconnects(engine: &dyn Engine, tag: &str) {
    let mut serve = start(engine, &[]);
    let r = serve.result("exec", json!({"command": "echo first"}));
    assert_eq!(text(&r), "first\n", "{r}");
    let id = serve.send_next("exec", json!({"command": format!("sleep 8{tag}")}));
    wait_until("the command running over there", WAIT, || {
        engine
            .processes()
            .iter()
            .any(|l| l.contains(&format!("sleep 8{tag}")))
    });
    // The connection is the engine's client, a child of the server; so is the server's
    // watchdog, a fork with the server's own command line, which must live on.
    let cmdline = |pid: i32| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let server_line = cmdline(serve.pid());
    let clients: Vec<i32> = children_of(serve.pid())
        .into_iter()
        .filter(|&pid| cmdline(pid) != server_line)
        .collect();
    assert!(!clients.is_empty(), "no client process under the server");
    for pid in clients {
        // SAFETY: signalling a process of this test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let r = answer(&mut serve, id);
    assert_eq!(r["details"]["outcome"], "spawn_failed", "{r}");
    assert!(text(&r).contains("dropped"), "{r}");
    assert_eq!(r["details"]["target"], json!(engine.target()));
    let r = serve.result("exec", json!({"command": "echo again"}));
    let t = text(&r);
    assert!(
        t.starts_with(&format!("[Reconnected to {}", engine.target())) && t.ends_with("again\n"),
        "{r}"
    );
    wait_until("the dropped call's command ended over there", WAIT, || {
        !engine
            .processes()
            .iter()
            .any(|l| l.contains(&format!("sleep 8{tag}")))
    });
}

#[test]
fn ssh_target() {
    let sshd = Sshd::start();
    results_equal_local_ones(&sshd);
    // The far side's commands do not see SSH_CLIENT (Debian's bash would source ~/.bashrc).
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(
        Some(&sshd),
        &[],
        "echo ${SSH_CLIENT:-none} ${SSH_CONNECTION:-none}",
        dir.path(),
    );
    assert_eq!(text(&r), "none none\n", "{r}");
    sessions_jobs_and_artifacts_work_through_the_target(&sshd);
    progress_comes_through_the_target(&sshd);
    cancel_and_timeout_reach_the_far_side(&sshd, "3104");
    killing_the_client_leaves_nothing_running(&sshd, "3101", true);
    killing_the_client_leaves_nothing_running(&sshd, "3102", false);
    a_dropped_connection_is_reported_and_the_next_call_reconnects(&sshd, "3103");
}

/// `exec/progress` of a remote call: the far side's updates, passed on under this side's id.
fn progress_comes_through_the_target(engine: &dyn Engine) {
    let mut serve = start(engine, &[]);
    let id = serve.send_next(
        "exec",
        json!({"command": "echo first-line; sleep 1.5; echo second-line", "progress": true}),
    );
    let r = answer(&mut serve, id);
    let notes = std::mem::take(&mut serve.notifications);
    assert_eq!(text(&r), "first-line\nsecond-line\n", "{r}");
    let progress: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "exec/progress" && n["params"]["id"] == json!(id))
        .collect();
    assert!(
        progress.iter().any(|n| n["params"]["tail"]
            .as_str()
            .unwrap_or("")
            .contains("first-line")),
        "no progress with the output so far: {notes:?}"
    );
}

/// A cancel here cancels the far call (its command ends over there); a timeout is the far
/// side's.
fn cancel_and_timeout_reach_the_far_side(engine: &dyn Engine, tag: &str) {
    let mut serve = start(engine, &[]);
    let id = serve.send_next("exec", json!({"command": format!("sleep 7{tag}")}));
    let running = || {
        engine
            .processes()
            .iter()
            .any(|l| l.contains(&format!("sleep 7{tag}")))
    };
    wait_until("the command running over there", WAIT, running);
    serve.result("cancel", json!({"id": id}));
    let r = answer(&mut serve, id);
    assert_eq!(r["details"]["outcome"], "cancelled", "{r}");
    assert!(text(&r).starts_with("[Command cancelled]"), "{r}");
    wait_until("the cancelled command ended over there", WAIT, || {
        !running()
    });
    let r = serve.result("exec", json!({"command": "sleep 30", "timeout": 1}));
    assert_eq!(r["details"]["outcome"], "timeout", "{r}");
    assert!(
        text(&r).starts_with("[Command timed out after 1 second"),
        "{r}"
    );
}

/// `mcp --target`: the MCP tools run on the target.
fn mcp_runs_on_the_target(engine: &dyn Engine) {
    let mut mcp = start_as("mcp", engine, &["--target".to_owned(), engine.target()]);
    let init = mcp.initialize()["result"].clone();
    assert!(init["protocolVersion"].is_string(), "{init}");
    let r = mcp.result(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo from-mcp; exit 4"}}),
    );
    assert_eq!(text(&r), "from-mcp\n\nCommand exited with code 4", "{r}");
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["output"], text(&r), "{r}");
    assert_eq!(
        r["structuredContent"]["target"],
        json!(engine.target()),
        "{r}"
    );
}

#[test]
fn kubectl_target_through_a_stand_in() {
    let kubectl = KubectlStandIn::new("kubectl://ns/pod/box");
    let dir = tempfile::tempdir().unwrap();
    let r = run_json(Some(&kubectl), &[], "echo hi", dir.path());
    assert_eq!(text(&r), "hi\n", "{r}");
    // The exact argv of the client: the namespace, the pod, the container, then the far side
    // with the operator's settings (one word).
    let log = kubectl.argv_log();
    let argv: Vec<&str> = log.lines().next().unwrap_or("").split(' ').collect();
    assert_eq!(
        argv[..argv.len() - 1].join(" "),
        "exec -i -n ns pod -c box -- agent-exec serve --end-on-eof --max-line-bytes 67108864 --settings",
        "{log}"
    );
    let settings = agent_exec_core::Config::from_far_settings(argv[argv.len() - 1]);
    assert!(settings.is_ok(), "{settings:?}");
    results_equal_local_ones(&kubectl);
    sessions_jobs_and_artifacts_work_through_the_target(&kubectl);
    progress_comes_through_the_target(&kubectl);
    mcp_runs_on_the_target(&kubectl);
    killing_the_client_leaves_nothing_running(&kubectl, "4101", true);
    killing_the_client_leaves_nothing_running(&kubectl, "4102", false);
    a_dropped_connection_is_reported_and_the_next_call_reconnects(&kubectl, "4103");
}

/// The container engines share the scenarios; `--install` copies the binary into a container
/// that has none, and a request names its own target only where the operator allows it.
fn container_engine(engines: &mut Containers, engine: &str) {
    let uri = engines.start("main", false);
    let bare_uri = engines.start("bare", true);
    let bare2_uri = engines.start("bare2", true);
    let main = engines::Container {
        engines,
        name: "main".into(),
        uri: uri.clone(),
    };
    results_equal_local_ones(&main);
    a_clean_end_leaves_no_zombie_there(&main);
    sessions_jobs_and_artifacts_work_through_the_target(&main);
    cancel_and_timeout_reach_the_far_side(&main, "5104");
    killing_the_client_leaves_nothing_running(&main, "5101", true);
    killing_the_client_leaves_nothing_running(&main, "5102", false);
    a_dropped_connection_is_reported_and_the_next_call_reconnects(&main, "5103");

    // No agent-exec over there: a clear error, exit 127, nothing run; --install copies it.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(agent_exec())
        .args(["run", "--target", &bare_uri, "--", "echo hi"])
        .envs(main.env())
        .output_bounded()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(127), "{said}");
    assert!(
        said.contains(&format!("agent-exec is not installed on {bare_uri}"))
            && said.contains("--install"),
        "{said}"
    );
    let out = Command::new(agent_exec())
        .args([
            "run",
            "--target",
            &bare2_uri,
            "--install",
            "--",
            "echo installed; uname -m",
        ])
        .envs(main.env())
        .current_dir(dir.path())
        .output_bounded()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("installed\n{}\n", std::env::consts::ARCH),
        "{engine} --install: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Per-request targets, only where the operator allows them.
    let allow = vec!["--allow-target".to_owned(), format!("{engine}://ma*")];
    let mut serve = start_with(&main, &allow);
    let r = serve.result("exec", json!({"command": "echo there", "target": uri}));
    assert_eq!(
        (text(&r).as_str(), &r["details"]["target"]),
        ("there\n", &json!(uri)),
        "{r}"
    );
    let r = serve.result("exec", json!({"command": "echo here"}));
    assert_eq!(r["details"]["target"], Value::Null, "no target: here. {r}");
    let r = serve.result("exec", json!({"command": "echo x", "target": bare_uri}));
    assert_eq!(r["details"]["outcome"], "invalid_request", "{r}");
    assert!(text(&r).contains("is not allowed"), "{r}");
    let r = serve.result("job_list", json!({"target": "ssh://elsewhere"}));
    assert!(text(&r).contains("is not allowed"), "{r}");
}

#[test]
fn docker_target() {
    let mut docker = Containers::docker();
    container_engine(&mut docker, "docker");
}

#[test]
fn podman_target() {
    let mut podman = Containers::podman();
    container_engine(&mut podman, "podman");
}
