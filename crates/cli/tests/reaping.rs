//! Nothing agent-exec starts ends up a zombie of someone else's (issue 28): under a parent that
//! reaps only its own children — a child subreaper, or the init of a PID namespace that never
//! reaps (an agent as PID 1 of its container, `sleep infinity`) — 1,000 `run` calls, and a
//! `serve` or `mcp` with one-shot, session, PTY and background calls that then ends, leave no
//! process behind, zombie or live. As root and as a throwaway unprivileged user.
//!
//! The parent is `reaping_parent.py`: it lists what is left over once it is done.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Bounded as _, User, binary, users};
use serde_json::Value;

const PARENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reaping_parent.py");

/// Where the parent runs.
#[derive(Debug, Clone, Copy)]
enum Parent {
    /// A child subreaper: orphans come back to it.
    Subreaper,
    /// PID 1 of a PID namespace of its own.
    Init,
}

/// Runs the parent as `user`, driving `agent-exec MODE` `calls` times: what it found left.
/// A command run as `user` (in a PID namespace of its own for `Parent::Init`) in a directory
/// every user may write, which is its home and holds its artifacts.
fn as_user(user: &User, parent: Parent, dir: &tempfile::TempDir) -> Command {
    let mut cmd = match &user.name {
        Some(name) => {
            let mut c = Command::new("runuser");
            c.args(["-u", name, "--"]);
            c
        }
        None => Command::new("env"),
    };
    if let Parent::Init = parent {
        cmd.args(["unshare", "--pid", "--fork", "--mount-proc"]);
        if user.name.is_some() {
            // Unprivileged: a user namespace of its own, where the user stays itself.
            cmd.arg("--map-current-user");
        }
    }
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    cmd.current_dir(dir.path())
        .env("HOME", dir.path())
        .env("AGENT_EXEC_ARTIFACTS", dir.path().join("artifacts"));
    cmd
}

fn left_over(user: &User, parent: Parent, mode: &str, calls: usize, flags: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = as_user(user, parent, &dir)
        .args(["python3", PARENT])
        .arg(binary())
        .arg(mode)
        .arg(calls.to_string())
        .args(flags)
        .output_within(Duration::from_mins(10))
        .expect("python3 and unshare");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{parent:?} {mode} as {:?}: {said}{}",
        user.name,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(said.trim())
        .unwrap_or_else(|e| panic!("not the parent's report ({e}): {said}"));
    report["left"].as_array().unwrap().clone()
}

fn nothing_left(parent: Parent) {
    for user in users() {
        // The bulk without the sandbox (cheap calls), then sandboxed calls: every path that forks.
        let runs = if user.name.is_none() { 1000 } else { 200 };
        let cases: [(&str, usize, &[&str]); 4] = [
            ("run", runs, &["--sandbox", "off"]),
            ("run", 20, &[]),
            ("serve", 30, &[]),
            ("mcp", 30, &[]),
        ];
        for (mode, calls, flags) in cases {
            let left = left_over(&user, parent, mode, calls, flags);
            assert!(
                left.is_empty(),
                "{parent:?}, {calls} × {mode} {flags:?} as {:?} left: {left:?}",
                user.name
            );
        }
    }
}

#[test]
fn under_a_subreaper_that_never_reaps_nothing_is_left() {
    nothing_left(Parent::Subreaper);
}

#[test]
fn under_an_init_that_never_reaps_nothing_is_left() {
    nothing_left(Parent::Init);
}

/// agent-exec in one fresh PID namespace after another (pid 1 or 2 every time, and the
/// namespace's inode number reused): each call starts — nothing a dead one left under the
/// same name gets in its way.
#[test]
fn calls_in_fresh_pid_namespaces_one_after_another_all_start() {
    for user in users() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..20 {
            let out = as_user(&user, Parent::Init, &dir)
                .arg(binary())
                .args(["run", "--", "echo started"])
                .output_bounded()
                .expect("unshare");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "started\n",
                "call {n} as {:?}: {}",
                user.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
