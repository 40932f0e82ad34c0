//! Persistent sessions through the tool: what persists, what comes back exact, and how a
//! session ends and restarts.

mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_exec_core::{Outcome, Request, Tool, ToolResult};
use agent_exec_executor::CancelToken;
use support::{ALTERNATING_WRITERS, alive, assert_written_order, pid_in, tool_with};

fn exec(tool: &Tool, session: &str, command: &str) -> ToolResult {
    let request = Request::shell(command).in_session(session);
    tool.execute(&request, &CancelToken::new())
}

#[test]
fn cwd_exports_functions_aliases_and_options_persist() {
    let (dir, tool) = tool_with(|_| {});
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let r = exec(
        &tool,
        "s",
        "cd sub && export AE_X=42 && f() { echo \"fn $1\"; } && alias ll='echo aliased' && set -o noglob",
    );
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(PathBuf::from(&r.details.cwd), sub);
    assert_eq!(r.details.session.as_deref(), Some("s"));
    let r = exec(&tool, "s", "echo $AE_X; pwd; f arg; ll; echo *");
    assert_eq!(
        r.text(),
        format!("42\n{}\nfn arg\naliased\n*\n", sub.display())
    );
    assert_eq!(PathBuf::from(&r.details.cwd), sub);
}

#[test]
fn output_comes_back_exact() {
    let (_dir, tool) = tool_with(|_| {});
    let r = exec(&tool, "s", "printf 'no newline'");
    assert_eq!(r.text(), "no newline");
    let r = exec(&tool, "s", "printf 'S 0 /tmp\\nE\\n'");
    assert_eq!(r.text(), "S 0 /tmp\nE\n");
    let r = exec(&tool, "s", "echo 'héllo wörld ✓'");
    assert_eq!(r.text(), "héllo wörld ✓\n");
    let r = exec(&tool, "s", "printf '\\000\\377\\001abc'");
    assert_eq!(r.details.stdout_bytes, 6);
    assert_eq!(r.text(), "\u{fffd}abc");
    let r = exec(
        &tool,
        "s",
        "echo out; echo err >&2; exit_code() { return 3; }; exit_code",
    );
    assert_eq!(r.details.exit_code, Some(3));
    assert_eq!(r.details.outcome, Outcome::ExitNonzero);
    assert!(r.text().starts_with("out\nerr\n"), "{}", r.text());
}

#[test]
fn alternating_streams_come_back_in_the_order_written() {
    let (_dir, tool) = tool_with(|_| {});
    for command in ALTERNATING_WRITERS {
        let r = exec(&tool, "s", command);
        assert_written_order(&r, "", command);
    }
    // Every way to reach stderr still does, and the session's own descriptors are intact.
    let r = exec(&tool, "s", "echo x >&2; echo e > /dev/stderr; echo o");
    assert_eq!(r.text(), "x\ne\no\n");
    let r = exec(&tool, "s", "exec 2>/dev/null; echo hidden >&2; echo shown");
    assert_eq!(r.text(), "shown\n");
    let r = exec(&tool, "s", "echo back >&2");
    assert_eq!(r.text(), "back\n", "a command's `exec 2>…` ends with it");
}

#[test]
fn exit_ends_the_session_and_the_next_call_says_so() {
    let (_dir, tool) = tool_with(|_| {});
    exec(&tool, "s", "export AE_Y=1");
    let r = exec(&tool, "s", "echo bye; exit 7");
    assert_eq!(r.details.exit_code, Some(7));
    assert!(r.text().starts_with("bye\n"));
    assert!(
        r.text()
            .contains("[session ended: the shell exited with code 7"),
        "{}",
        r.text()
    );
    let r = exec(&tool, "s", "echo \"y=$AE_Y\"");
    assert!(r.text().starts_with("y=\n"), "{}", r.text());
    assert!(
        r.text()
            .contains("[session restarted: the shell exited with code 7]"),
        "{}",
        r.text()
    );
    let r = exec(&tool, "s", "echo again");
    assert_eq!(r.text(), "again\n");
}

#[test]
fn kill_of_the_shell_is_reported_as_a_signal() {
    let (_dir, tool) = tool_with(|_| {});
    let r = exec(&tool, "s", "kill -9 $$");
    assert_eq!(r.details.signal, Some(9), "{}", r.text());
    assert_eq!(r.details.outcome, Outcome::Signaled);
    let r = exec(&tool, "s", "echo fresh");
    assert!(
        r.text()
            .contains("[session restarted: the shell was killed by SIGKILL]"),
        "{}",
        r.text()
    );
}

#[test]
fn exec_replacing_the_shell_ends_the_session() {
    let (_dir, tool) = tool_with(|_| {});
    let r = exec(&tool, "s", "exec echo replaced");
    assert!(r.text().starts_with("replaced\n"), "{}", r.text());
    let r = exec(&tool, "s", "echo next");
    assert!(r.text().contains("[session restarted:"), "{}", r.text());
}

#[test]
fn redirecting_the_shells_own_output_does_not_break_later_calls() {
    let (_dir, tool) = tool_with(|_| {});
    exec(&tool, "s", "exec >/dev/null 2>&1; echo hidden");
    let r = exec(&tool, "s", "echo visible; echo also >&2");
    assert_eq!(r.text(), "visible\nalso\n");
}

#[test]
fn timeout_ends_the_session_and_everything_in_it() {
    let (_dir, tool) = tool_with(|_| {});
    let request = {
        let mut r =
            Request::shell("echo started; sleep 300 & echo $! > bgpid; trap '' TERM; sleep 300")
                .in_session("s");
        r.timeout = Some(1);
        r
    };
    let r = tool.execute(&request, &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::Timeout);
    assert!(
        r.text()
            .starts_with("[Command timed out after 1 seconds]\nstarted\n"),
        "{}",
        r.text()
    );
    let bg: i32 = std::fs::read_to_string(PathBuf::from(&r.details.cwd).join("bgpid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(bg), "the background sleep survived");
    let r = exec(&tool, "s", "echo fresh");
    assert!(
        r.text()
            .contains("[session restarted: the previous command timed out]"),
        "{}",
        r.text()
    );
}

#[test]
fn background_processes_of_a_call_are_ended_and_counted() {
    let (_dir, tool) = tool_with(|_| {});
    let r = exec(&tool, "s", "sleep 300 & echo $!");
    let pid: i32 = r.text().lines().next().unwrap().trim().parse().unwrap();
    assert_eq!(r.details.processes_stopped, 1, "{}", r.text());
    assert!(r.text().contains("Use run_in_background"), "{}", r.text());
    assert!(!alive(pid));
    let r = exec(&tool, "s", "echo still here");
    assert_eq!(r.text(), "still here\n");
}

#[test]
fn different_sessions_run_in_parallel() {
    let (dir, tool) = tool_with(|_| {});
    let tool = Arc::new(tool);
    let flag = dir.path().join("flag");
    let waiter = {
        let tool = tool.clone();
        let flag = flag.clone();
        std::thread::spawn(move || {
            let request = {
                let mut r = Request::shell(format!(
                    "while [ ! -e {} ]; do sleep 0.02; done; echo saw it",
                    flag.display()
                ))
                .in_session("a");
                r.timeout = Some(20);
                r
            };
            tool.execute(&request, &CancelToken::new())
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let r = exec(&tool, "b", &format!("touch {}", flag.display()));
    assert_eq!(r.details.outcome, Outcome::Success);
    let r = waiter.join().unwrap();
    assert_eq!(
        r.text(),
        "saw it\n",
        "session a must not wait for session b"
    );
}

#[test]
fn least_recently_used_session_is_evicted() {
    let (_dir, tool) = tool_with(|c| c.sessions.max_sessions = 2);
    exec(&tool, "a", "export V=a");
    exec(&tool, "b", "export V=b");
    exec(&tool, "a", "true");
    exec(&tool, "c", "export V=c");
    assert_eq!(exec(&tool, "a", "echo \"$V\"").text(), "a\n");
    // b was the least recently used when c arrived: it is a fresh shell now.
    assert_eq!(exec(&tool, "b", "echo \"[$V]\"").text(), "[]\n");
}

#[test]
fn idle_sessions_expire() {
    let (_dir, tool) = tool_with(|c| c.sessions.idle_expiry = Duration::ZERO);
    exec(&tool, "a", "export V=a");
    std::thread::sleep(Duration::from_millis(10));
    exec(&tool, "b", "true");
    assert_eq!(exec(&tool, "a", "echo \"[$V]\"").text(), "[]\n");
}

/// The idle sweep runs at most every quarter of the expiry, not on every call: a session still
/// expires once it has been idle that long, whichever session the next call uses.
#[test]
fn idle_sessions_expire_when_the_sweep_comes_round() {
    let expiry = Duration::from_millis(200);
    let (_dir, tool) = tool_with(|c| c.sessions.idle_expiry = expiry);
    exec(&tool, "a", "export V=a");
    exec(&tool, "b", "true");
    std::thread::sleep(expiry * 2);
    exec(&tool, "b", "true");
    assert_eq!(exec(&tool, "a", "echo \"[$V]\"").text(), "[]\n");
}

#[test]
fn command_prefix_is_applied() {
    let (_dir, tool) =
        tool_with(|c| c.sessions.command_prefix = Some("env AE_PREFIXED=yes".into()));
    assert_eq!(
        exec(&tool, "s", "sh -c 'echo $AE_PREFIXED'").text(),
        "yes\n"
    );
}

#[test]
fn closing_a_session_ends_its_shell() {
    let (_dir, tool) = tool_with(|_| {});
    let r = exec(&tool, "s", "echo $$");
    let pid: i32 = r.text().trim().parse().unwrap();
    assert!(alive(pid));
    assert_eq!(tool.session_close("s").details.outcome, Outcome::Success);
    assert!(!alive(pid));
    assert_eq!(
        tool.session_close("s").details.outcome,
        Outcome::InvalidRequest
    );
}

#[test]
fn closing_the_sessions_own_descriptors_never_breaks_later_calls() {
    let (_dir, tool) = tool_with(|_| {});
    for breaker in [
        "exec 250>&-",
        "exec 251>&-",
        "exec 252<&-",
        "exec 254>&-",
        "exec 250>&- 251>&- 2>&-",
    ] {
        exec(&tool, "s", "export AE_Z=1");
        let r = exec(&tool, "s", &format!("{breaker}; echo ran"));
        assert!(r.text().starts_with("ran\n"), "{breaker}: {}", r.text());
        // Either the shell could restore its descriptors and goes on, or it ended and the next
        // call runs in a fresh shell that says so; the next command is never lost.
        let r = exec(&tool, "s", "echo \"next z=$AE_Z\"; echo err >&2");
        let restarted = r.text().contains(
            "[session restarted: a command closed or redirected the session's own descriptors]",
        );
        let expected = if restarted {
            "next z=\nerr\n"
        } else {
            "next z=1\nerr\n"
        };
        assert!(r.text().starts_with(expected), "{breaker}: {}", r.text());
        assert_eq!(
            r.details.outcome,
            Outcome::Success,
            "{breaker}: {}",
            r.text()
        );
    }
    // Descriptors the driver does not use are the command's to play with.
    exec(&tool, "s", "export AE_Z=2");
    assert_eq!(
        exec(&tool, "s", "exec 3>&- 4>&- 5>/dev/null; echo fine").text(),
        "fine\n"
    );
    assert_eq!(exec(&tool, "s", "echo $AE_Z").text(), "2\n");
}

#[test]
fn shadowing_builtins_does_not_break_the_session() {
    let (_dir, tool) = tool_with(|_| {});
    exec(
        &tool,
        "s",
        "printf() { :; }; jobs() { :; }; read() { :; }; eval() { :; }",
    );
    assert_eq!(exec(&tool, "s", "echo still works").text(), "still works\n");
    let r = exec(&tool, "s", "break; echo after break");
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    assert!(!r.text().contains("session restarted"), "{}", r.text());
}

#[test]
fn awkward_cwds_and_shell_options_do_not_break_the_session() {
    let (dir, tool) = tool_with(|_| {});
    let odd = dir.path().join("a b\nc");
    std::fs::create_dir(&odd).unwrap();
    let r = exec(&tool, "s", "cd \"$(printf 'a b\\nc')\" && echo in");
    assert_eq!(r.text(), "in\n");
    assert_eq!(PathBuf::from(&r.details.cwd), odd);
    assert_eq!(
        exec(&tool, "s", "pwd").text(),
        format!("{}\n", odd.display())
    );
    // Not valid UTF-8.
    let r = exec(
        &tool,
        "s",
        "mkdir -p $'../d\\xff' && cd $'../d\\xff' && echo in2",
    );
    assert_eq!(r.text(), "in2\n", "{}", r.text());
    assert_eq!(exec(&tool, "s", "echo next").text(), "next\n");
    // set -u, set -x, pipefail.
    assert_eq!(exec(&tool, "s", "set -u; echo set").text(), "set\n");
    assert_eq!(exec(&tool, "s", "echo still").text(), "still\n");
    assert_eq!(exec(&tool, "s", "false | true; echo $?").text(), "1\n");
    exec(&tool, "s", "set -x");
    let r = exec(&tool, "s", "echo traced");
    assert!(
        !r.text().contains("__agent_exec"),
        "driver lines leaked: {}",
        r.text()
    );
    assert!(r.text().contains("echo traced"), "{}", r.text());
}

#[test]
fn background_processes_hidden_from_jobs_are_ended_too() {
    let (dir, tool) = tool_with(|_| {});
    let pids = dir.path().join("pids");
    let r = exec(
        &tool,
        "s",
        &format!(
            "( sleep 301 & echo $! >> {p} ); sleep 302 & echo $! >> {p}; disown; echo bg",
            p = pids.display()
        ),
    );
    assert!(r.text().starts_with("bg\n"), "{}", r.text());
    let found: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(found.len(), 2);
    for pid in found {
        assert!(!alive(pid), "process {pid} survived its session call");
    }
    assert_eq!(exec(&tool, "s", "echo after").text(), "after\n");
}

#[test]
fn nul_bytes_are_a_clear_invalid_request() {
    let (_dir, tool) = tool_with(|_| {});
    let r = exec(&tool, "s", "echo a\0b");
    assert_eq!(r.details.outcome, Outcome::InvalidRequest);
    assert!(r.text().contains("NUL byte"), "{}", r.text());
}

/// Runs `command` in `session` on its own thread; the receiver gets the result.
fn exec_in_background(
    tool: &Arc<Tool>,
    session: &str,
    command: &str,
    timeout: i64,
) -> std::sync::mpsc::Receiver<ToolResult> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (tool, request) = (tool.clone(), {
        let mut r = Request::shell(command).in_session(session);
        r.timeout = Some(timeout);
        r
    });
    std::thread::spawn(move || {
        let _ = tx.send(tool.execute(&request, &CancelToken::new()));
    });
    rx
}

/// A bound for a call that must end long before its own timeout (a hang fails, never a pass).
const BOUND: Duration = Duration::from_mins(1);

#[test]
fn a_satisfied_head_stops_the_producer_and_keeps_the_session() {
    let (_dir, tool) = tool_with(|_| {});
    exec(&tool, "s", "export KEPT=yes; cd /");
    let tool = Arc::new(tool);
    let r = exec_in_background(&tool, "s", "yes | head -3", 600)
        .recv_timeout(BOUND)
        .expect("`yes | head -3` in a session ran on");
    assert_eq!(r.details.outcome, Outcome::Success, "{}", r.text());
    assert!(r.text().starts_with("y\ny\ny\n"), "{}", r.text());
    assert!(!r.text().contains("session ended"), "{}", r.text());
    // The shell was spared: its state is still there.
    let r = exec(&tool, "s", "echo $KEPT; pwd");
    assert_eq!(r.text(), "yes\n/\n");
}

#[test]
fn a_builtin_producer_past_a_satisfied_head_ends_the_shell() {
    // The loop runs in the shell itself: sparing the shell cannot stop it, so after a grace
    // period the shell goes too, and the next call starts a fresh one.
    let (_dir, tool) = tool_with(|_| {});
    let tool = Arc::new(tool);
    let r = exec_in_background(&tool, "s", "while :; do echo y; done | head -n 2", 600)
        .recv_timeout(BOUND)
        .expect("a builtin loop in a session ran on past its head");
    assert!(r.text().starts_with("y\ny\n"), "{}", r.text());
    assert!(
        r.text().contains("[session ended: the shell kept writing"),
        "{}",
        r.text()
    );
    let r = exec(&tool, "s", "echo fresh");
    assert!(r.text().contains("[session restarted:"), "{}", r.text());
}

#[test]
fn closing_a_busy_session_ends_its_command_at_once() {
    let (dir, tool) = tool_with(|_| {});
    let tool = Arc::new(tool);
    let pidfile = dir.path().join("pid");
    let rx = exec_in_background(
        &tool,
        "busy",
        &format!("sh -c 'echo $$ > {}; exec sleep 600'", pidfile.display()),
        3000,
    );
    let pid = pid_in(&pidfile);
    assert_eq!(tool.session_close("busy").details.outcome, Outcome::Success);
    let r = rx
        .recv_timeout(BOUND)
        .expect("the call waited for its timeout after session_close");
    assert_eq!(r.details.outcome, Outcome::Cancelled, "{}", r.text());
    assert!(r.text().contains("the session was closed"), "{}", r.text());
    assert!(!alive(pid));
}

#[test]
fn a_shell_killed_from_outside_is_noticed_at_once() {
    let (dir, tool) = tool_with(|_| {});
    let tool = Arc::new(tool);
    let pidfile = dir.path().join("shell");
    // The command's own child keeps the session's pipes open: only the shell's exit tells.
    let rx = exec_in_background(
        &tool,
        "s",
        &format!("echo $$ > {}; sleep 600", pidfile.display()),
        3000,
    );
    let shell = pid_in(&pidfile);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(shell),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let r = rx
        .recv_timeout(BOUND)
        .expect("the call waited for its timeout after its shell died");
    assert_eq!(r.details.outcome, Outcome::Signaled, "{}", r.text());
    assert!(!r.details.timed_out);
    assert!(
        r.text().contains("the shell was killed by SIGKILL"),
        "{}",
        r.text()
    );
    let r = exec(&tool, "s", "echo again");
    assert!(r.text().starts_with("again\n"), "{}", r.text());
    assert!(r.text().contains("[session restarted:"), "{}", r.text());
}

#[test]
fn pty_in_a_session_is_refused_with_a_way_forward() {
    let (_dir, tool) = tool_with(|_| {});
    let request = Request::shell("tty").in_session("s").with_pty();
    let r = tool.execute(&request, &CancelToken::new());
    assert_eq!(r.details.outcome, Outcome::InvalidRequest);
    assert!(
        r.text().contains("pty is not available in a session"),
        "{}",
        r.text()
    );
}

#[test]
fn escapees_of_a_session_call_are_ended_and_counted() {
    let (dir, tool) = tool_with(|_| {});
    let file = dir.path().join("escapees");
    let r = exec(
        &tool,
        "s",
        &format!(
            "for i in 1 2 3; do setsid env -i sh -c 'echo $$ >> {f}; exec sleep 600' & done; \
             while [ \"$(wc -l 2>/dev/null < {f} || echo 0)\" -lt 3 ]; do sleep 0.01; done",
            f = file.display()
        ),
    );
    assert_eq!(r.details.processes_stopped, 3, "{}", r.text());
    let pids: Vec<i32> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|l| l.parse().ok())
        .collect();
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|&p| !alive(p)));
    // The session itself lives on.
    assert_eq!(exec(&tool, "s", "echo ok").text(), "ok\n");
}

#[test]
fn a_program_in_a_session_is_never_an_alias_or_keyword() {
    let (_dir, tool) = tool_with(|_| {});
    exec(
        &tool,
        "s",
        "shopt -s expand_aliases; alias echo='echo ALIASED'",
    );
    assert_eq!(exec(&tool, "s", "echo hi").text(), "ALIASED hi\n");
    let r = tool.execute(
        &Request::program("echo", ["hi"]).in_session("s"),
        &CancelToken::new(),
    );
    assert_eq!(r.text(), "hi\n");
}
