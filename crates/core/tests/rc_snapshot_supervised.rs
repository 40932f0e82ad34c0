//! The rc snapshot runs like any call: supervised, bounded by the call's timeout, and what
//! `~/.bashrc` prints is data, never code. Its own test binary: it points HOME at a temp dir.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_exec_core::{Config, Outcome, Request, Tool, ToolResult};
use agent_exec_executor::CancelToken;

/// A tool with rc snapshots on, its cache (and workdir) in `dir`.
fn session_tool(dir: &Path) -> Arc<Tool> {
    let mut config = Config {
        artifacts_dir: dir.join("artifacts"),
        workdir: dir.to_path_buf(),
        grace: Duration::from_millis(300),
        ..Config::default()
    };
    config.sessions.rc_snapshot = true;
    config.sessions.cache_dir = dir.join("cache");
    // The rc leaves marks outside the snapshot's cache (how these tests see it ran), which a
    // sandboxed rc may not write (`sandbox.rs` covers the rc in the sandbox).
    config.sandbox.mode = Some(agent_exec_core::SandboxMode::Off);
    Arc::new(Tool::new(config))
}

fn fresh_dir(home: &Path, name: &str) -> std::path::PathBuf {
    let dir = home.join(name);
    std::fs::create_dir(&dir).unwrap();
    dir
}

/// Runs `command` in session `s` on a thread.
fn exec_async(
    tool: &Arc<Tool>,
    command: &str,
    timeout: i64,
) -> std::sync::mpsc::Receiver<ToolResult> {
    let (tx, rx) = std::sync::mpsc::channel();
    let tool = tool.clone();
    let request = {
        let mut r = Request::shell(command).in_session("s");
        r.timeout = Some(timeout);
        r
    };
    std::thread::spawn(move || {
        let _ = tx.send(tool.execute(&request, &CancelToken::new()));
    });
    rx
}

/// Runs `command` in session `s`, waiting at most a minute (a hang fails, never a pass).
fn exec_bounded(tool: &Arc<Tool>, command: &str, timeout: i64) -> ToolResult {
    exec_async(tool, command, timeout)
        .recv_timeout(Duration::from_mins(1))
        .expect("the session call outlived its own timeout")
}

#[test]
fn the_rc_snapshot_is_bounded_and_what_the_rc_prints_is_never_run() {
    let home = tempfile::tempdir().unwrap();
    // SAFETY: this test binary has a single test; nothing else reads HOME concurrently.
    unsafe { std::env::set_var("HOME", home.path()) };
    let rc = home.path().join(".bashrc");

    // 1. An rc that prints a command, on stdout, on stderr and from a DEBUG trap (a window
    //    title, as many rcs set): the snapshot holds the function, never the printed lines.
    let marker = home.path().join("executed");
    std::fs::write(
        &rc,
        format!(
            "echo 'touch {m}'\necho 'touch {m}' >&2\ntrap 'echo \"touch {m}\"' DEBUG\nmyfn() {{ echo from-rc; }}\n",
            m = marker.display()
        ),
    )
    .unwrap();
    let tool = session_tool(&fresh_dir(home.path(), "one"));
    assert_eq!(exec_bounded(&tool, "myfn", 30).text(), "from-rc\n");
    assert!(!marker.exists(), "what ~/.bashrc printed was executed");

    // 2. An rc that never finishes: each call still ends within its own timeout and says why;
    //    once the rc had the full limit, later calls run without it at once.
    std::fs::write(&rc, "sleep 600\n").unwrap();
    let tool = session_tool(&fresh_dir(home.path(), "two"));
    let r = exec_bounded(&tool, "echo ran", 2);
    assert!(
        r.text()
            .contains("[rc snapshot skipped: ~/.bashrc did not finish within this call's 2 s"),
        "{}",
        r.text()
    );
    let r = exec_bounded(&tool, "echo ran", 60);
    assert!(r.text().starts_with("ran\n"), "{}", r.text());
    assert!(
        r.text()
            .contains("[rc snapshot skipped: ~/.bashrc did not finish within 10 s"),
        "{}",
        r.text()
    );
    let r = exec_bounded(&tool, "echo ran", 60);
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(r.text(), "ran\n");

    // 3. session_close while the shell is still starting: the call ends, nothing runs.
    let started = home.path().join("rc-started");
    std::fs::write(&rc, format!("touch {}\nsleep 600\n", started.display())).unwrap();
    let tool = session_tool(&fresh_dir(home.path(), "three"));
    let ran = home.path().join("ran");
    let rx = exec_async(&tool, &format!("touch {}", ran.display()), 60);
    for _ in 0..500 {
        if started.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.exists(), "the rc never started");
    tool.session_close("s");
    let r = rx
        .recv_timeout(Duration::from_mins(1))
        .expect("the call outlived the close");
    assert_eq!(r.details.outcome, Outcome::Cancelled, "{}", r.text());
    assert!(
        !ran.exists(),
        "the command ran after its session was closed"
    );
}
