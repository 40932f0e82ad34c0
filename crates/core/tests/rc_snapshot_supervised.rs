//! The rc snapshot runs like any call: supervised, bounded by the call's timeout, and what
//! `~/.bashrc` prints is data, never code. Its own test binary: it points HOME at a temp dir.

use std::time::Duration;

use agent_exec_core::{Config, Outcome, Request, Tool, ToolResult};
use agent_exec_executor::CancelToken;

fn session_tool(home: &std::path::Path) -> Tool {
    let mut config = Config {
        artifacts_dir: home.join("artifacts"),
        workdir: home.to_path_buf(),
        grace: Duration::from_millis(300),
        ..Config::default()
    };
    config.sessions.rc_snapshot = true;
    config.sessions.cache_dir = home.join("cache");
    Tool::new(config)
}

/// Runs `command` in session `s` on a thread; waits for it at most `bound` (a hang fails).
fn exec_bounded(tool: Tool, command: &str, timeout: i64, bound: Duration) -> (Tool, ToolResult) {
    let (tx, rx) = std::sync::mpsc::channel();
    let request = Request {
        command: Some(command.into()),
        session: Some("s".into()),
        timeout: Some(timeout),
        ..Request::default()
    };
    std::thread::spawn(move || {
        let r = tool.execute(&request, &CancelToken::new());
        let _ = tx.send((tool, r));
    });
    rx.recv_timeout(bound)
        .expect("the session call outlived its own timeout")
}

#[test]
fn a_slow_rc_is_bounded_and_what_it_prints_is_never_run() {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: this test binary has a single test; nothing else reads HOME concurrently.
    unsafe { std::env::set_var("HOME", home.path()) };
    let rc = home.path().join(".bashrc");

    // 1. An rc that prints a command: the snapshot holds the function, not the printed line.
    let marker = home.path().join("executed");
    std::fs::write(
        &rc,
        format!(
            "echo 'touch {m}'\necho 'touch {m}' >&2\nmyfn() {{ echo from-rc; }}\n",
            m = marker.display()
        ),
    )
    .unwrap();
    let (_, r) = exec_bounded(
        session_tool(home.path()),
        "myfn",
        30,
        Duration::from_mins(1),
    );
    assert_eq!(r.text(), "from-rc\n");
    assert!(!marker.exists(), "what ~/.bashrc printed was executed");

    // 2. An rc that never finishes: the call still ends within its own timeout, says why, and
    //    later calls run without the snapshot instead of waiting again.
    std::fs::write(&rc, "sleep 600\n").unwrap();
    let home2 = home.path().join("second");
    std::fs::create_dir(&home2).unwrap();
    let mut config_tool = session_tool(home.path());
    // A fresh cache, so the slow rc is really run.
    config_tool = {
        drop(config_tool);
        let mut config = Config {
            artifacts_dir: home2.join("artifacts"),
            workdir: home2.clone(),
            grace: Duration::from_millis(300),
            ..Config::default()
        };
        config.sessions.rc_snapshot = true;
        config.sessions.cache_dir = home2.join("cache");
        Tool::new(config)
    };
    let (tool, r) = exec_bounded(config_tool, "echo ran", 2, Duration::from_mins(1));
    assert!(
        r.text()
            .contains("[rc snapshot skipped: ~/.bashrc did not finish within 2 s"),
        "{}",
        r.text()
    );
    let (_, r) = exec_bounded(tool, "echo ran", 30, Duration::from_mins(1));
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    // (The first call's time was spent on the rc: it timed out, so this shell is a fresh one.)
    assert!(r.text().starts_with("ran\n"), "{}", r.text());
    assert!(!r.text().contains("rc snapshot"), "{}", r.text());
}
