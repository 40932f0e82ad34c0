//! Prepared shells: a call run in a shell started ahead of time behaves as a fresh `bash -c`
//! (output, status, environment, directory), keeps the one-shot guarantees (deadline, no
//! survivors), and the pool leaves no shell behind.

mod support;

use std::time::{Duration, Instant};

use agent_exec_executor::{
    CancelToken, ExecOutcome, ExecSpec, ExitStatus, PreparedSettings, PreparedShells, Program,
    SpawnError, run,
};
use agent_exec_sink::{Capture, OutputSink, SinkConfig};
use proptest::prelude::*;
use support::{PidFile, misbehave};

fn pool(per_key: usize) -> PreparedShells {
    PreparedShells::new(PreparedSettings {
        per_key,
        ..PreparedSettings::default()
    })
}

fn spec_in(command: &str, dir: &std::path::Path) -> ExecSpec {
    let mut spec = ExecSpec::shell(command, dir);
    spec.grace = Duration::from_millis(300);
    // The operator's environment, not the call's own (`extra_env`), which prepared shells
    // never carry.
    spec.env.overrides.insert("MB".into(), misbehave());
    spec
}

fn capture(run: impl FnOnce(&mut OutputSink) -> ExecOutcome) -> (ExecOutcome, Capture) {
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = run(&mut sink);
    (outcome, sink.finish_capture())
}

/// Waits (bounded) until the pool holds `n` ready shells.
fn wait_ready(pool: &PreparedShells, n: usize) {
    let until = Instant::now() + Duration::from_secs(30);
    while pool.stats().ready < n {
        assert!(Instant::now() < until, "no prepared shell after 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `spec` in a prepared shell (waiting for one first) and asserts that it did.
fn prepared(pool: &PreparedShells, spec: &ExecSpec) -> (ExecOutcome, Capture) {
    // A call of a key tells the pool to prepare shells of it (the same environment: the
    // key; the command and directory do not matter).
    if pool.stats().ready == 0 {
        let warm = ExecSpec {
            program: Program::Shell {
                command: "true".into(),
                shell: None,
            },
            ..spec.clone()
        };
        let _ = capture(|sink| pool.run(&warm, sink, &CancelToken::new()));
    }
    wait_ready(pool, 1);
    let taken = pool.stats().taken;
    let result = capture(|sink| pool.run(spec, sink, &CancelToken::new()));
    assert_eq!(
        pool.stats().taken,
        taken + 1,
        "the call ran in a prepared shell"
    );
    result
}

fn fresh(spec: &ExecSpec) -> (ExecOutcome, Capture) {
    capture(|sink| run(spec, sink, &CancelToken::new()))
}

fn child_shells() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let dir = e.path();
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().nth(1));
            let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
            ppid == Some(me.as_str())
                && String::from_utf8_lossy(&cmdline).contains("__agent_exec_old")
        })
        .count()
}

#[test]
fn a_prepared_shell_runs_a_command_as_bash_c_does() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("dir with space and é");
    std::fs::create_dir(&odd).unwrap();
    let pool = pool(1);
    for (command, cwd) in [
        ("echo out; echo err >&2; exit 3", dir.path()),
        (
            "printf '%s|' \"$0\" \"$PWD\" \"$LINENO\" \"${OLDPWD-unset}\" \"$SECONDS\"",
            dir.path(),
        ),
        ("echo one\necho $LINENO\nfalse | cat", dir.path()),
        (
            "compgen -v | grep -c '^__agent_exec_'; cd / && pwd",
            dir.path(),
        ),
        ("echo \"ünïcödé $PWD\"", odd.as_path()),
        ("f() { return 4; }; f", dir.path()),
        ("read x; echo \"[$x]\" $?", dir.path()),
        ("shopt -q login_shell; echo $? $-", dir.path()),
    ] {
        let spec = spec_in(command, cwd);
        let (want, want_capture) = fresh(&spec);
        let (got, got_capture) = prepared(&pool, &spec);
        assert_eq!(got.status, want.status, "{command}");
        assert_eq!(
            got_capture.view.text(),
            want_capture.view.text(),
            "{command}"
        );
        assert_eq!(got_capture.totals, want_capture.totals, "{command}");
    }
}

#[test]
fn a_prepared_call_keeps_the_order_of_stdout_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(1);
    let want: String = (1..=2000).map(|i| format!("out{i}\nerr{i}\n")).collect();
    for command in [
        "$MB interleave 2000",
        "for i in $(seq 2000); do echo out$i; echo err$i >&2; done",
    ] {
        let (outcome, capture) = prepared(&pool, &spec_in(command, dir.path()));
        assert_eq!(outcome.status, Some(ExitStatus::Exited(0)), "{command}");
        assert_eq!(capture.view.text(), want, "{command}");
        assert_eq!(capture.totals.stderr.bytes, 0, "{command}");
    }
    // A call that wants its streams apart is not one a prepared shell can serve.
    let mut spec = spec_in("echo out; echo err >&2", dir.path());
    spec.output = agent_exec_executor::OutputPipes::Separate;
    let taken = pool.stats().taken;
    let (_, capture) = capture(|sink| pool.run(&spec, sink, &CancelToken::new()));
    assert_eq!(pool.stats().taken, taken, "it ran fresh");
    assert_eq!(
        (capture.totals.stdout.bytes, capture.totals.stderr.bytes),
        (4, 4)
    );
}

#[test]
fn a_prepared_call_times_out_and_leaves_no_survivors() {
    let dir = tempfile::tempdir().unwrap();
    let pids = PidFile::new();
    let mut spec = spec_in("$MB fork-grandchild 30; sleep 30", dir.path());
    spec.env
        .overrides
        .insert("MISBEHAVE_PIDS".into(), pids.path.display().to_string());
    spec.timeout = Some(Duration::from_millis(500));
    let pool = pool(1);
    let (outcome, _) = prepared(&pool, &spec);
    assert!(outcome.timed_out(), "{outcome:?}");
    assert!(!pids.pids().is_empty(), "the helper recorded its processes");
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn background_children_of_a_prepared_call_are_ended() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(1);
    let (outcome, capture) = prepared(&pool, &spec_in("sleep 30 & echo started", dir.path()));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.view.text(), "started\n");
    assert_eq!(outcome.processes_stopped, 1);
}

#[test]
fn a_directory_that_cannot_be_entered_gives_the_fresh_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(1);
    let _ = prepared(&pool, &spec_in("true", dir.path()));
    let missing = dir.path().join("missing");
    let (outcome, _) =
        capture(|sink| pool.run(&spec_in("true", &missing), sink, &CancelToken::new()));
    assert!(
        matches!(outcome.spawn_error, Some(SpawnError::Cwd { .. })),
        "{outcome:?}"
    );
}

#[test]
fn closing_the_pool_ends_its_shells_and_calls_go_on_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(2);
    let _ = prepared(&pool, &spec_in("true", dir.path()));
    wait_ready(&pool, 2);
    assert!(child_shells() >= 2, "two shells wait");
    pool.close();
    let until = Instant::now() + Duration::from_secs(30);
    while child_shells() > 0 {
        assert!(Instant::now() < until, "prepared shells outlived close");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(pool.stats().ready, 0);
    let (outcome, capture) = capture(|sink| {
        pool.run(
            &spec_in("echo after", dir.path()),
            sink,
            &CancelToken::new(),
        )
    });
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.view.text(), "after\n");
}

/// A call's own variables never outlive it in a shell prepared for the next such call: it
/// runs in a fresh spawn, and the pool prepares nothing for its kind.
#[test]
fn a_call_with_its_own_variables_leaves_no_shell_carrying_them() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(1);
    let mut spec = spec_in("echo \"$AE_OWN_TOKEN\"", dir.path());
    spec.extra_env = vec![("AE_OWN_TOKEN".into(), "s3cr3t-of-one-call".into())];
    for _ in 0..2 {
        let (outcome, capture) = capture(|sink| pool.run(&spec, sink, &CancelToken::new()));
        assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
        assert_eq!(capture.view.text(), "s3cr3t-of-one-call\n");
    }
    let stats = pool.stats();
    assert_eq!((stats.keys, stats.taken), (0, 0), "{stats:?}");
    // A call without variables of its own is still served by prepared shells.
    let (outcome, _) = prepared(&pool, &spec_in("true", dir.path()));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(pool.stats().keys, 1);
}

#[test]
fn a_pool_turned_off_prepares_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pool = pool(0);
    let (outcome, capture) =
        capture(|sink| pool.run(&spec_in("echo hi", dir.path()), sink, &CancelToken::new()));
    assert_eq!(outcome.status, Some(ExitStatus::Exited(0)));
    assert_eq!(capture.view.text(), "hi\n");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(pool.stats().started, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any text printed and any exit status come back from a prepared shell exactly as from a
    /// fresh one.
    #[test]
    fn prepared_and_fresh_agree(text in "[ -~é\n\t]{0,60}", status in 0u8..=255) {
        let dir = std::env::temp_dir();
        let quoted = format!("'{}'", text.replace('\'', r"'\''"));
        let spec = spec_in(&format!("printf %s {quoted}; exit {status}"), &dir);
        let pool = shared_pool();
        let (want, want_capture) = fresh(&spec);
        let (got, got_capture) = prepared(pool, &spec);
        prop_assert_eq!(got.status, want.status);
        prop_assert_eq!(got_capture.view.text(), want_capture.view.text());
    }
}

fn shared_pool() -> &'static PreparedShells {
    static POOL: std::sync::OnceLock<PreparedShells> = std::sync::OnceLock::new();
    POOL.get_or_init(|| pool(1))
}

#[test]
fn a_prepared_shell_runs_in_the_calls_sandbox() {
    use agent_exec_executor::{NetworkMode, SandboxMode, SandboxSpec};
    // Under target/tmp, not /tmp: the sandbox gives commands a /tmp of their own.
    let root = env!("CARGO_TARGET_TMPDIR");
    let workspace = tempfile::tempdir_in(root).unwrap();
    let outside = tempfile::tempdir_in(root).unwrap();
    let mut spec = spec_in(
        "touch inside; touch \"$OUTSIDE/escaped\"; echo done",
        workspace.path(),
    );
    spec.env
        .overrides
        .insert("OUTSIDE".into(), outside.path().display().to_string());
    spec.sandbox = Some(std::sync::Arc::new(SandboxSpec {
        mode: SandboxMode::WorkspaceWrite,
        workspace: workspace.path().to_path_buf(),
        writable: Vec::new(),
        caches: Vec::new(),
        deny_read: Vec::new(),
        read_only: Vec::new(),
        network: NetworkMode::Off,
        allow_hosts: Vec::new(),
    }));
    let pool = pool(1);
    let (outcome, capture) = prepared(&pool, &spec);
    assert!(outcome.spawn_error.is_none(), "{outcome:?}");
    assert!(
        capture.view.text().ends_with("done\n"),
        "{}",
        capture.view.text()
    );
    assert!(
        workspace.path().join("inside").exists(),
        "the workspace is writable"
    );
    assert!(
        !outside.path().join("escaped").exists(),
        "nothing is written outside the workspace"
    );
}
