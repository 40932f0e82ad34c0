//! Shared helpers of the core integration tests.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use agent_exec_core::{Config, Tool};

/// A tool in a fresh temp dir (its workdir and artifact store), with a short grace period.
pub fn tool_with(adjust: impl FnOnce(&mut Config)) -> (tempfile::TempDir, Tool) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config {
        artifacts_dir: dir.path().join("artifacts"),
        workdir: dir.path().to_path_buf(),
        grace: Duration::from_millis(300),
        ..Config::default()
    };
    adjust(&mut config);
    (dir, Tool::new(config))
}

/// Whether a process is running (a zombie counts as ended).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !matches!(
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        )
    })
}

/// Writers that alternate stdout and stderr line by line, as fast as they can: the shell's
/// builtins, and Python's unbuffered `os.write` (one system call per line).
pub const ALTERNATING_WRITERS: [&str; 2] = [
    "for i in $(seq 2000); do echo out$i; echo err$i >&2; done",
    "python3 -c 'import os\nfor i in range(1, 2001):\n    os.write(1, b\"out%d\\n\" % i)\n    os.write(2, b\"err%d\\n\" % i)'",
];

/// What they wrote, in the order they wrote it: `out1 err1 out2 err2 …`.
/// A result of one of [`ALTERNATING_WRITERS`]: it succeeded, its output is in the order written
/// (after `header`), and it all counts as stdout (one pipe for both streams).
pub fn assert_written_order(r: &agent_exec_core::ToolResult, header: &str, command: &str) {
    assert_eq!(
        r.details.outcome,
        agent_exec_core::Outcome::Success,
        "{command}: {}",
        r.text()
    );
    assert_eq!(r.text(), format!("{header}{}", alternating()), "{command}");
    let bytes = alternating().len() as u64;
    assert_eq!(
        (r.details.stdout_bytes, r.details.stderr_bytes),
        (bytes, 0),
        "{command}"
    );
}

pub fn alternating() -> String {
    (1..=2000).map(|i| format!("out{i}\nerr{i}\n")).collect()
}

/// Waits (bounded, 10 s) until `path` holds a whole pid: a shell makes the file before it
/// writes to it.
pub fn pid_in(path: &std::path::Path) -> i32 {
    let mut pid = None;
    let written = eventually(|| {
        pid = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok());
        pid.is_some()
    });
    assert!(written, "no pid in {}", path.display());
    pid.expect("written")
}

/// Waits (bounded, 10 s) until `f` holds; whether it did.
pub fn eventually(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
