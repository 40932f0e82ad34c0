//! `--pty` as a model meets it (issue 16): the terminal's size, output as the terminal showed
//! it, and a prompt nobody can answer. Every wait is bounded; nothing asserts on elapsed time.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::{Bounded as _, Server, exe};

fn agent(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(exe());
    cmd.env("AGENT_EXEC_ARTIFACTS", dir.join("artifacts"))
        .current_dir(dir);
    cmd
}

/// `agent-exec run ARGS`: exit code, stdout, stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = agent(dir.path())
        .arg("run")
        .args(args)
        .output_bounded()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `agent-exec run --json ARGS`: the result.
fn run_json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (_, out, err) = run(&all);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"))
}

fn text(v: &Value) -> &str {
    v["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn the_terminal_is_80_by_24_unless_the_operator_says_otherwise() {
    assert_eq!(
        run(&["--pty", "stty size"]),
        (0, "24 80\n".into(), String::new())
    );
    assert_eq!(
        run(&["--pty-size", "120x40", "--pty", "stty size; tput cols"]),
        (0, "40 120\n120\n".into(), String::new())
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[terminal]\npty_size = \"100x30\"\n").unwrap();
    let config = config.display().to_string();
    assert_eq!(
        run(&["--config", &config, "--pty", "stty size"]),
        (0, "30 100\n".into(), String::new())
    );
    // The flag wins over the file.
    assert_eq!(
        run(&[
            "--config",
            &config,
            "--pty-size",
            "90x20",
            "--pty",
            "stty size"
        ])
        .1,
        "20 90\n"
    );
}

#[test]
fn a_bad_size_is_refused_naming_the_flag_and_the_form() {
    for bad in ["80", "80x24x1", "0x0", "5x24", "wide"] {
        let (code, out, err) = run(&["--pty-size", bad, "--pty", "true"]);
        assert_eq!(code, 2, "{bad}: {out} {err}");
        assert!(err.contains("--pty-size"), "{err}");
        assert!(err.contains("write COLSxROWS, e.g. 120x40"), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[terminal]\npty_size = \"tall\"\n").unwrap();
    let (code, _, err) = run(&["--config", &config.display().to_string(), "true"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("terminal.pty_size") && err.contains("write COLSxROWS"),
        "{err}"
    );
}

#[test]
fn output_reads_as_the_terminal_showed_it() {
    // A progress bar redrawn with `\r`: its last state.
    let (code, out, _) = run(&[
        "--pty",
        r"for p in 10 40 70 100; do printf '\rDownloading [%-10s] %3d%%' $(printf '%*s' $((p/10)) '' | tr ' ' '#') $p; done; echo",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out, "Downloading [##########] 100%\n");
    // A cleared screen drawn by cursor addressing: the screen, row by row.
    let (_, out, _) = run(&[
        "--pty",
        r"echo gone; printf '\033[2J\033[H'; tput cup 2 4; printf 'row 3'; tput cup 0 0; printf 'Title'; tput cup 4 0",
    ]);
    assert_eq!(out, "Title\n\n    row 3\n");
    // Colours and other attributes are gone; the text stays.
    let (_, out, _) = run(&[
        "--pty",
        r"printf '\033[1;31mFAILED\033[0m \033[4mtest_a\033[24m\n'; tput setaf 2; echo ok; tput sgr0",
    ]);
    assert_eq!(out, "FAILED test_a\nok\n");
}

#[test]
fn a_long_output_still_fits_the_window_and_spills_raw() {
    let v = run_json(&["--pty", "--max-bytes", "2000", "seq 1 5000"]);
    let t = &v["details"]["truncation"];
    assert_eq!(v["details"]["outcome"], "success");
    // Totals count the raw stream: `\r\n` line ends, as the terminal sent them.
    let raw: u64 = (1..=5000u64).map(|n| n.to_string().len() as u64 + 2).sum();
    assert_eq!(t["total_bytes"], raw);
    assert_eq!(v["details"]["stdout_bytes"], raw);
    assert!(text(&v).contains("4999\n5000"), "{}", text(&v));
    assert!(t["output_bytes"].as_u64().unwrap() <= 2000);
    assert!(t["artifact_id"].is_string());
}

#[test]
fn a_prompt_ends_the_call_early_with_a_note_saying_how_to_answer() {
    let v = run_json(&[
        "--pty",
        "--timeout",
        "600",
        "echo 'Removing 3 packages'; read -p 'Continue? [y/N] ' x; echo never",
    ]);
    let d = &v["details"];
    assert_eq!(d["outcome"], "timeout", "{}", text(&v));
    assert_eq!(d["timed_out"], true);
    let t = text(&v);
    assert!(
        t.starts_with("[Command timed out early: it waited for input with no output for 5 seconds]\nRemoving 3 packages\nContinue? [y/N]\n"),
        "{t}"
    );
    assert!(
        t.contains(r#"[Waiting for input after "Continue? [y/N]": nothing can type into a one-shot call. To answer it, run the command with run_in_background: true"#),
        "{t}"
    );
    assert!(
        t.contains("read the prompt with job_output and answer with job_input;"),
        "{t}"
    );
    assert!(!t.contains("never"), "{t}");
    // `run` exits as for a timeout.
    let (code, _, _) = run(&["--pty", "--prompt-idle", "1", "-t", "600", "read x"]);
    assert_eq!(code, 124);
}

/// Reads a job's output through `call` until `done` holds (at most 100 reads); the last text.
fn read_until(
    call: &mut impl FnMut(&str, Value) -> Value,
    job: &str,
    done: impl Fn(&Value) -> bool,
) -> String {
    let mut said = String::new();
    for _ in 0..100 {
        let r = call(
            "job_output",
            json!({"job_id": job, "mode": "all", "wait_ms": 100}),
        );
        text(&r).clone_into(&mut said);
        if done(&r) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    said
}

#[test]
fn a_background_job_blocked_on_input_says_so_in_job_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = agent(dir.path());
    cmd.arg("serve");
    let mut s = Server::spawn(cmd).keeping(dir);
    let mut call = |method: &str, params: Value| -> Value { s.result(method, params) };
    for pty in [false, true] {
        let started = call(
            "exec",
            json!({"command": "printf 'Password: '; read -r x; echo \"got $x\"", "run_in_background": true, "pty": pty}),
        );
        let job = started["details"]["job_id"].as_str().unwrap().to_owned();
        let said = read_until(&mut call, &job, |r| {
            text(r).contains("is waiting for input")
        });
        assert!(
            said.ends_with(&format!(
                "[Job {job} is waiting for input: \"Password:\" — send it with job_input]"
            )),
            "pty {pty}: {said}"
        );
        call("job_input", json!({"job_id": job, "data": "hunter2"}));
        let said = read_until(&mut call, &job, |r| r["details"]["running"] == false);
        assert!(said.contains("got hunter2"), "{said}");
        assert!(!said.contains("is waiting for input"), "{said}");
    }
    let _ = s.finish();
}
