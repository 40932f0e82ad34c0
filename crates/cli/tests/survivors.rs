//! No survivors even when agent-exec itself dies: after kill -9, SIGHUP or SIGTERM of
//! `agent-exec serve` or `agent-exec run`, no process of any call, session or job is left
//! alive, escapees that left the process group (`setsid`, double fork) or scrubbed their
//! environment (`env -i`) included.
//!
//! Every process of interest writes its own pid to a file (a path embedded literally in the
//! command, since `env -i` escapees cannot inherit anything), and is identified by pid *and*
//! start time so a recycled pid is never mistaken for it, nor killed by the cleanup guard.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

mod common;
use common::{Guard, Server, exe, pid_in, poll};

/// Upper bound on every wait, so a broken build fails instead of hanging; never a timing
/// assertion: the checks poll and succeed as soon as the condition holds.
const BOUND: Duration = Duration::from_secs(20);

/// The containment backend asked for through `AGENT_EXEC_CONTAINMENT`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Containment {
    Auto,
    Cgroup2,
    Cgroup1,
    Pgroup,
}

impl Containment {
    fn apply(self, cmd: &mut Command) {
        let value = match self {
            Containment::Auto => {
                cmd.env_remove("AGENT_EXEC_CONTAINMENT");
                return;
            }
            Containment::Cgroup2 => "cgroup2",
            Containment::Cgroup1 => "cgroup1",
            Containment::Pgroup => "pgroup",
        };
        cmd.env("AGENT_EXEC_CONTAINMENT", value);
    }

    /// The process-group fallback only promises to catch processes that keep the marker
    /// variable or stay in the group, so `env -i` escapees are left out of its scenarios.
    fn catches_env_i(self) -> bool {
        self != Containment::Pgroup
    }
}

/// A process known by pid and start time (field 22 of `/proc/<pid>/stat`).
#[derive(Debug, Clone)]
struct Proc {
    label: String,
    pid: i32,
    start: u64,
}

/// State letter and start time of `pid`, if it exists.
fn stat(pid: i32) -> Option<(String, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields are counted after the last ')'.
    let fields: Vec<&str> = s.rsplit(')').next()?.split_whitespace().collect();
    Some((fields.first()?.to_string(), fields.get(19)?.parse().ok()?))
}

impl Proc {
    fn of(label: &str, pid: i32) -> Proc {
        let (_, start) = stat(pid).unwrap_or_else(|| panic!("{label} (pid {pid}) is already gone"));
        Proc {
            label: label.to_owned(),
            pid,
            start,
        }
    }

    /// A zombie counts as dead: it runs nothing and only waits for its parent to reap it.
    fn alive(&self) -> bool {
        stat(self.pid)
            .is_some_and(|(state, start)| start == self.start && state != "Z" && state != "X")
    }
}

/// The processes a scenario started; SIGKILLs whichever are still alive when dropped, so a
/// failing test leaves the machine clean.
#[derive(Default)]
struct Recorded(Vec<Proc>);

impl Recorded {
    /// Waits (bounded) for the pid files `<tag>-<kind>` of [`escapees`] and records them.
    fn expect(&mut self, dir: &Path, tag: &str, env_i: bool) {
        for kind in kinds(env_i) {
            let name = format!("{tag}-{kind}");
            let pid = pid_in(&dir.join(&name));
            self.0.push(Proc::of(&name, pid));
        }
    }

    fn assert_all_alive(&self) {
        let dead: Vec<&str> = self
            .0
            .iter()
            .filter(|p| !p.alive())
            .map(|p| p.label.as_str())
            .collect();
        assert!(
            dead.is_empty(),
            "the scenario did not start properly, already gone: {dead:?}"
        );
    }

    /// Polls until none is alive (or [`BOUND`] passed) and returns the ones still alive.
    fn survivors(&self) -> Vec<String> {
        let left = || -> Vec<String> {
            self.0
                .iter()
                .filter(|p| p.alive())
                .map(|p| format!("{} (pid {})", p.label, p.pid))
                .collect()
        };
        poll(BOUND, || left().is_empty());
        left()
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        for p in self.0.iter().filter(|p| p.alive()) {
            let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
        }
    }
}

/// Sends `signal` to an `agent-exec` process and reaps it (bounded); its exit code (None when
/// a signal ended it).
fn signal_and_wait(agent: &mut Guard, signal: Signal) -> Option<i32> {
    agent.signal(signal as i32);
    agent.wait_exit_within(BOUND).code()
}

/// The binary with its artifacts under `dir` and the containment asked for. (In a directory of
/// their own: the store is read-only to commands, and the escapees write their pids in `dir`.)
fn agent_command(sub: &str, dir: &Path, containment: Containment) -> Command {
    let mut cmd = Command::new(exe());
    cmd.arg(sub)
        .arg("--artifacts")
        .arg(dir.join("artifacts"))
        .current_dir(std::env::temp_dir());
    containment.apply(&mut cmd);
    cmd
}

fn kinds(env_i: bool) -> Vec<&'static str> {
    let mut k = vec!["shell", "setsid", "double-fork", "child"];
    if env_i {
        k.push("env-i");
    }
    k
}

/// A command that records its shell, starts a `setsid` escapee, a double-fork orphan and
/// (with `env_i`) a `setsid env -i` escapee in the background, then runs a foreground child
/// for 600 s and waits. Each records its pid in `<dir>/<tag>-<kind>` then execs `sleep`, so
/// the pid stays the sleeper's.
fn escapees(dir: &Path, tag: &str, env_i: bool) -> String {
    let d = dir.to_str().unwrap();
    // The path goes inside single quotes in a shell word.
    assert!(!d.contains(['\'', ' ', '"', '\\', '$']), "{d}");
    let rec = |kind: &str| format!("sh -c 'echo $$ > {d}/{tag}-{kind}; exec sleep 600'");
    let mut s = format!(
        "echo $$ > {d}/{tag}-shell; setsid {} & ({} &); ",
        rec("setsid"),
        rec("double-fork")
    );
    if env_i {
        s += &format!("setsid env -i {} & ", rec("env-i"));
    }
    // Not the last command: bash would exec it in place of the shell, merging the two.
    s += &rec("child");
    s += "; wait";
    s
}

/// The cgroup paths of `pid` per hierarchy (`0` is the v2 one), from `/proc/<pid>/cgroup`.
fn cgroups(pid: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(':')?;
            let (_, path) = rest.split_once(':')?;
            Some((id.to_owned(), path.to_owned()))
        })
        .collect()
}

/// A forced cgroup backend must really be in use: the call's shell is in a cgroup of that
/// version other than the test's own (otherwise the variable could be ignored unnoticed).
fn assert_contained(containment: Containment, shell: &Proc) {
    let wanted: fn(&str) -> bool = match containment {
        Containment::Cgroup2 => |id| id == "0",
        Containment::Cgroup1 => |id| id != "0",
        Containment::Auto | Containment::Pgroup => return,
    };
    let ours = cgroups("self");
    let theirs = cgroups(&shell.pid.to_string());
    let moved = theirs
        .iter()
        .any(|t| wanted(&t.0) && ours.iter().any(|o| o.0 == t.0 && o.1 != t.1));
    assert!(
        moved,
        "{containment:?}: {} is in {theirs:?}, the test in {ours:?}",
        shell.label
    );
}

/// `agent-exec serve` with the containment asked for, its artifacts in a directory of its own.
fn start(containment: Containment) -> Server {
    let artifacts = tempfile::tempdir().unwrap();
    Server::spawn(agent_command("serve", artifacts.path(), containment)).keeping(artifacts)
}

/// A server holding a background job, a session and a call in flight, each with escapees
/// (the session shell itself stands for the session); then `signal` to the server.
/// Returns the processes still alive afterwards.
fn serve_then(containment: Containment, signal: Signal) -> Vec<String> {
    let pids = tempfile::tempdir().unwrap();
    let env_i = containment.catches_env_i();
    let mut procs = Recorded::default();
    let mut s = start(containment);

    let r = s.request(
        1,
        "exec",
        json!({"command": escapees(pids.path(), "job", env_i), "run_in_background": true}),
    );
    assert!(r["result"]["details"]["job_id"].is_string(), "{r}");
    procs.expect(pids.path(), "job", env_i);

    let r = s.request(2, "exec", json!({"command": "echo $$", "session": "s"}));
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let shell = text.trim().parse().unwrap_or_else(|_| panic!("{r}"));
    procs.0.push(Proc::of("session-shell", shell));

    // Never answered: it is still running when the server dies.
    s.send_request(
        3,
        "exec",
        json!({"command": escapees(pids.path(), "call", env_i), "timeout": 3000}),
    );
    procs.expect(pids.path(), "call", env_i);

    procs.assert_all_alive();
    assert_contained(containment, &procs.0[0]);
    // stdin stays open: closing it is a clean shutdown, not what is tested here.
    s.signal(signal as i32);
    s.wait_exit();
    procs.survivors()
}

struct RunEnd {
    code: Option<i32>,
    stdout: String,
    survivors: Vec<String>,
}

/// `agent-exec run` of a command with escapees, `signal` to it while the command runs.
fn run_then(containment: Containment, signal: Signal) -> RunEnd {
    let dir = tempfile::tempdir().unwrap();
    let env_i = containment.catches_env_i();
    let mut procs = Recorded::default();
    // A file, not a pipe: reading it never waits for a survivor that might hold it open.
    let stdout_path = dir.path().join("stdout");
    let stdout = std::fs::File::create(&stdout_path).unwrap();
    let mut agent = Guard::new(
        agent_command("run", dir.path(), containment)
            .arg("--")
            .arg(escapees(dir.path(), "run", env_i))
            .stdin(Stdio::null())
            .stdout(stdout)
            .spawn()
            .unwrap(),
        "agent-exec run",
    );
    procs.expect(dir.path(), "run", env_i);
    procs.assert_all_alive();
    assert_contained(containment, &procs.0[0]);
    let code = signal_and_wait(&mut agent, signal);
    RunEnd {
        code,
        stdout: std::fs::read_to_string(&stdout_path).unwrap(),
        survivors: procs.survivors(),
    }
}

fn assert_none(survivors: &[String]) {
    assert!(survivors.is_empty(), "survivors: {survivors:?}");
}

#[test]
fn serve_sigkill_leaves_no_survivors() {
    assert_none(&serve_then(Containment::Auto, Signal::SIGKILL));
}

#[test]
fn serve_sighup_leaves_no_survivors() {
    assert_none(&serve_then(Containment::Auto, Signal::SIGHUP));
}

#[test]
fn serve_sigterm_leaves_no_survivors() {
    assert_none(&serve_then(Containment::Auto, Signal::SIGTERM));
}

#[test]
fn serve_sigkill_under_cgroup2_leaves_no_survivors() {
    assert_none(&serve_then(Containment::Cgroup2, Signal::SIGKILL));
}

#[test]
fn serve_sigkill_under_cgroup1_leaves_no_survivors() {
    assert_none(&serve_then(Containment::Cgroup1, Signal::SIGKILL));
}

#[test]
fn serve_sigkill_under_pgroup_ends_setsid_and_double_fork_escapees() {
    assert_none(&serve_then(Containment::Pgroup, Signal::SIGKILL));
}

#[test]
fn run_sigkill_leaves_no_survivors() {
    assert_none(&run_then(Containment::Auto, Signal::SIGKILL).survivors);
}

#[test]
fn run_sigkill_under_cgroup2_leaves_no_survivors() {
    assert_none(&run_then(Containment::Cgroup2, Signal::SIGKILL).survivors);
}

#[test]
fn run_sigkill_under_cgroup1_leaves_no_survivors() {
    assert_none(&run_then(Containment::Cgroup1, Signal::SIGKILL).survivors);
}

#[test]
fn run_sigkill_under_pgroup_ends_setsid_and_double_fork_escapees() {
    assert_none(&run_then(Containment::Pgroup, Signal::SIGKILL).survivors);
}

/// SIGHUP (the terminal went away) is a cancellation like SIGTERM, not a silent death.
#[test]
fn run_sighup_cancels_like_sigterm_and_leaves_no_survivors() {
    let end = run_then(Containment::Auto, Signal::SIGHUP);
    assert_eq!(end.code, Some(130), "{}", end.stdout);
    assert!(
        end.stdout.starts_with("[Command cancelled]"),
        "{}",
        end.stdout
    );
    assert_none(&end.survivors);
}

#[test]
fn run_sigterm_cancels_and_leaves_no_survivors() {
    let end = run_then(Containment::Auto, Signal::SIGTERM);
    assert_eq!(end.code, Some(130), "{}", end.stdout);
    assert!(
        end.stdout.starts_with("[Command cancelled]"),
        "{}",
        end.stdout
    );
    assert_none(&end.survivors);
}
