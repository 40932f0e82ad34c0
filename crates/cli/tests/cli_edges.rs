//! Edges of the command line, driven through the built binary: how argv becomes a command,
//! usage errors, the helper subcommands, artifact retention and the wording of notices.

mod common;

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Bounded as _;

/// Generous upper bound on any one invocation: a safety net against hangs, not a threshold.
const BOUND: Duration = Duration::from_mins(1);

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// The binary, with its artifacts in `artifacts` and its working directory in `cwd`.
fn agent(artifacts: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(common::exe());
    cmd.env("AGENT_EXEC_ARTIFACTS", artifacts)
        .current_dir(cwd)
        .stdin(Stdio::null());
    cmd
}

/// Runs `cmd` to its end (bounded), capturing stdout and stderr.
fn output(cmd: &mut Command) -> Out {
    let out = cmd.output_within(BOUND).unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the binary with `args` in a fresh artifacts dir and a fresh working directory.
fn run(args: &[&str]) -> Out {
    let artifacts = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    output(agent(artifacts.path(), cwd.path()).args(args))
}

/// The artifacts in `dir`: files named `<id>.log` (crates/sink/src/artifact.rs).
fn artifact_ids(dir: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_suffix(".log")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort_unstable();
    ids
}

// 1
#[test]
fn mistyped_option_is_a_usage_error_and_nothing_runs() {
    let artifacts = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let out = output(
        agent(artifacts.path(), cwd.path()).args(["run", "--timout", "5", "--", "touch", "MARKER"]),
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("unexpected argument '--timout'"),
        "{out:?}"
    );
    assert!(out.stderr.contains("'--timeout'"), "{out:?}");
    assert!(!cwd.path().join("MARKER").exists(), "{out:?}");
}

// 2
#[test]
fn options_after_the_first_command_word_belong_to_the_command() {
    let out = run(&["run", "echo", "-n", "hi"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "hi\n", "{out:?}");
}

// 3
#[test]
fn a_command_starting_with_a_dash_is_not_a_shell_option() {
    let out = run(&["run", "--", "-definitely-not-a-command"]);
    assert_eq!(out.code, 127, "{out:?}");
    assert!(out.stdout.contains("-definitely-not-a-command"), "{out:?}");
    assert!(out.stdout.contains("command not found"), "{out:?}");
}

// 4
#[test]
fn several_words_reach_the_program_intact() {
    let out = run(&["run", "--", "sh", "-c", "echo hi"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "hi\n"), "{out:?}");

    let out = run(&["run", "--", "bash", "-c", "exit 7"]);
    assert_eq!(out.code, 7, "{out:?}");

    let out = run(&["run", "--", "printf", "%s|", "a  b", "$HOME"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "a  b|$HOME|\n", "{out:?}");

    let out = run(&["run", "--", "FOO=1", "printenv", "FOO"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "1\n"), "{out:?}");
}

// 4 (one word)
#[test]
fn one_word_is_a_shell_line() {
    let out = run(&["run", "--", "echo a | tr a b"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "b\n"), "{out:?}");
}

// 5
#[test]
fn approve_without_a_terminal_is_a_usage_error() {
    let artifacts = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = agent(artifacts.path(), cwd.path());
    cmd.args(["run", "--approve", "--", "touch", "MARKER"]);
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the parent; it detaches
    // the child from any controlling terminal, so /dev/tty cannot be opened there.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = output(&mut cmd);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--approve"), "{out:?}");
    assert!(out.stderr.contains("terminal"), "{out:?}");
    assert!(!cwd.path().join("MARKER").exists(), "{out:?}");
}

// 6
#[test]
fn run_without_a_command_is_a_usage_error() {
    let out = run(&["run"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no command given"), "{out:?}");
}

// 7
#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {out:?}");
        assert!(!out.stdout.trim().is_empty(), "{shell}: {out:?}");
        assert!(out.stdout.contains("agent-exec"), "{shell}: {out:?}");
    }
    let out = run(&["completions", "nosuchshell"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

// 8
#[test]
fn man_prints_a_roff_page() {
    let out = run(&["man"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(".TH"), "{out:?}");
    assert!(out.stdout.contains(r"agent\-exec"), "{out:?}");
}

// 9
#[test]
fn version_names_the_version_containment_and_platform() {
    let out = run(&["--version"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(env!("CARGO_PKG_VERSION")), "{out:?}");
    assert!(
        out.stdout.lines().any(|l| l.starts_with("containment: ")),
        "{out:?}"
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with("platform: ")),
        "{out:?}"
    );
}

/// Runs four calls that each spill an artifact, with `extra` options, and returns the ids
/// left in the artifacts dir and the id the last call printed.
fn four_spills(extra: &[&str]) -> (Vec<u64>, u64) {
    let artifacts = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut last = 0;
    for _ in 0..4 {
        let mut args = vec!["run", "--max-bytes", "100"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "seq", "1", "1000"]);
        let out = output(agent(artifacts.path(), cwd.path()).args(&args));
        assert_eq!(out.code, 0, "{out:?}");
        let at = out
            .stdout
            .rfind("artifact://")
            .unwrap_or_else(|| panic!("no artifact was spilled: {out:?}"));
        last = out.stdout[at + "artifact://".len()..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap();
    }
    (artifact_ids(artifacts.path()), last)
}

// 10
#[test]
fn keep_artifacts_bounds_the_artifact_count() {
    let (ids, last) = four_spills(&["--keep-artifacts", "2"]);
    assert!(ids.len() <= 2, "{ids:?}");
    assert!(ids.contains(&last), "the newest must stay: {ids:?}, {last}");
}

// 10 (config)
#[test]
fn config_max_count_bounds_the_artifact_count() {
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("agent-exec.toml");
    std::fs::write(&conf, "[artifacts]\nmax_count = 2\n").unwrap();
    let (ids, last) = four_spills(&["--config", conf.to_str().unwrap()]);
    assert!(ids.len() <= 2, "{ids:?}");
    assert!(ids.contains(&last), "the newest must stay: {ids:?}, {last}");
}

// 10 (control: without a bound, all four stay, so the two tests above measure retention)
#[test]
fn without_a_bound_every_artifact_stays() {
    let (ids, _) = four_spills(&[]);
    assert_eq!(ids.len(), 4, "{ids:?}");
}

// 10 (bad size)
#[test]
fn a_bad_size_is_a_usage_error_that_shows_a_size() {
    let out = run(&["run", "--keep-artifact-bytes", "12Q", "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("12Q"), "{out:?}");
    assert!(out.stderr.contains("not a size"), "{out:?}");
    assert!(out.stderr.contains("500M"), "{out:?}");
}

// 10 (bad config)
#[test]
fn a_bad_max_count_in_config_names_the_file() {
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("bad-retention.toml");
    std::fs::write(&conf, "[artifacts]\nmax_count = \"x\"\n").unwrap();
    let out = run(&["run", "--config", conf.to_str().unwrap(), "--", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains(conf.to_str().unwrap()), "{out:?}");
    assert!(out.stderr.contains("max_count"), "{out:?}");
}

// 11
#[test]
fn check_survives_a_reader_that_closes_early() {
    let artifacts = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut child = agent(artifacts.path(), cwd.path())
        .args(["check", "--", "rm", "-rf", "/"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before agent-exec writes a byte.
    drop(child.stdout.take());
    let out = common::output_within(child, "agent-exec", BOUND);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
}

// 12
#[test]
fn timeout_banner_is_singular_for_one_second() {
    let out = run(&["run", "-t", "1", "--", "sleep", "5"]);
    assert_eq!(out.code, 124, "{out:?}");
    assert!(
        out.stdout
            .starts_with("[Command timed out after 1 seconds]"),
        "{out:?}"
    );
}

// 12
#[test]
fn tail_notice_names_the_line_limit_and_range() {
    let out = run(&["run", "--tail", "1", "--", "seq", "5"]);
    assert_eq!(out.code, 0, "{out:?}");
    let last = out.stdout.trim_end().lines().last().unwrap_or_default();
    assert!(last.contains("Showing lines 5-5 of 5"), "{out:?}");
    assert!(last.contains("(1-line limit)"), "{out:?}");
    assert!(out.stdout.starts_with("5\n"), "{out:?}");
}

// 12
#[test]
fn head_zero_shows_no_lines() {
    let out = run(&["run", "--head", "0", "--", "seq", "5"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Showing no lines of 5"), "{out:?}");
}

#[test]
fn a_request_file_holds_one_json_object() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("request.json");
    std::fs::write(&file, r#"[{"command": "echo ran"}]"#).unwrap();
    let out = run(&["run", "--request", file.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout.contains("a request is a JSON object") && !out.stdout.contains("ran\n"),
        "{out:?}"
    );
    // Numbers may come as strings, as many clients send them.
    std::fs::write(&file, r#"{"command": "echo ran", "timeout": "30"}"#).unwrap();
    let out = run(&["run", "--request", file.to_str().unwrap()]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "ran\n"), "{out:?}");
}
