//! Project automation: `cargo xtask ci | bench | corpus | dist | fuzz [TARGET]`.

mod dist;

use std::process::{Command, ExitCode};

fn cargo(args: &[&str]) -> bool {
    eprintln!("$ cargo {}", args.join(" "));
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// Mean time (ns) of a criterion benchmark from its saved estimates.
fn mean_ns(group: &str, bench: &str) -> Option<f64> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    let path = root
        .join(group)
        .join(bench.replace('/', "_"))
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    // {"mean":{"confidence_interval":{...},"point_estimate":X, ...
    let mean = &text[text.find("\"mean\"")?..];
    let at = mean.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let end = mean[at..].find([',', '}'])?;
    mean[at..at + end].parse().ok()
}

/// One table of ratios against the limits of `performance.md`, from the last bench run.
fn print_ratios() {
    let r = |a: (&str, &str), b: (&str, &str)| Some(mean_ns(a.0, a.1)? / mean_ns(b.0, b.1)?);
    let fmt = |x: Option<f64>| x.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.2}"));
    println!("\n| measure | ratio | target |");
    println!("|---|---:|---|");
    let rows: Vec<(&str, Option<f64>, &str)> = vec![
        (
            "library `run` of `true` / std `bash -c true` `.output()`",
            r(
                ("one_call_true", "agent_exec_library_run"),
                ("one_call_true", "std_command_bash_c_true"),
            ),
            "<= 1.10",
        ),
        (
            "library `run` of `:; true` (needs the shell) / std `bash -c ':; true'`",
            r(
                ("one_call_shell", "agent_exec_library_run"),
                ("one_call_shell", "std_command_bash_c"),
            ),
            "<= 1.10",
        ),
        (
            "library `Tool::execute` of `true` / std `bash -c true` `.output()`",
            r(
                ("library_true", "agent_exec_tool_execute"),
                ("library_true", "std_command_bash_c"),
            ),
            "<= 1.05",
        ),
        (
            "peer: yoagent `BashTool` of `true` / std",
            r(
                ("library_true", "yoagent_bash_tool"),
                ("library_true", "std_command_bash_c"),
            ),
            "(agent-exec ahead)",
        ),
        (
            "peer: agentkit `ShellExecTool` of `true` / std",
            r(
                ("library_true", "agentkit_shell_exec_tool"),
                ("library_true", "std_command_bash_c"),
            ),
            "(agent-exec ahead)",
        ),
        (
            "library `Tool::execute` of `:; true` / std `bash -c ':; true'` `.output()`",
            r(
                ("library_shell", "agent_exec_tool_execute"),
                ("library_shell", "std_command_bash_c"),
            ),
            "<= 1.05",
        ),
        (
            "peer: yoagent `BashTool` of `:; true` / std",
            r(
                ("library_shell", "yoagent_bash_tool"),
                ("library_shell", "std_command_bash_c"),
            ),
            "(agent-exec ahead)",
        ),
        (
            "peer: agentkit `ShellExecTool` of `:; true` / std",
            r(
                ("library_shell", "agentkit_shell_exec_tool"),
                ("library_shell", "std_command_bash_c"),
            ),
            "(agent-exec ahead)",
        ),
        (
            "`serve`, warm session `true` / raw bash pipe round trip (client process)",
            r(
                ("serve_session_true", "agent_exec_serve"),
                ("serve_session_true", "raw_bash_pipe"),
            ),
            "<= 4",
        ),
        (
            "fresh `bash -c true` / `serve` one-shot `true`, prepared shell (speed-up; calls paced)",
            r(
                ("serve_one_shot_true", "fresh_bash_c_true"),
                ("serve_one_shot_true", "agent_exec_serve_prepared"),
            ),
            ">= 3",
        ),
        (
            "fresh `bash -c true` / `serve` one-shot `:; true`, prepared shell (speed-up; paced)",
            r(
                ("serve_one_shot_true", "fresh_bash_c_true"),
                ("serve_one_shot_true", "agent_exec_serve_shell_prepared"),
            ),
            ">= 3",
        ),
        (
            "`serve` one-shot `true` that may yield (ends first) / the same without `yield_ms`",
            r(
                ("serve_yield", "agent_exec_serve_prepared_may_yield"),
                ("serve_yield", "agent_exec_serve_prepared"),
            ),
            "<= 1.05",
        ),
        (
            "`serve` call that yields at 50 ms (`sleep 30`) / the client sleeping 50 ms",
            r(
                ("serve_yield", "agent_exec_serve_yielded"),
                ("serve_yield", "sleep_yield_wait"),
            ),
            "<= 1.10",
        ),
        (
            "fresh `bash -c true` / `serve` one-shot `:; true`, back to back (speed-up)",
            r(
                ("serve_one_shot_back_to_back", "fresh_bash_c_true"),
                ("serve_one_shot_back_to_back", "agent_exec_serve"),
            ),
            "(no pause to prepare)",
        ),
        (
            "library `run` of `true`: with its containment group (cgroup) / process group only",
            r(
                ("containment_true", "default_group"),
                ("containment_true", "process_group"),
            ),
            "<= 1.05",
        ),
        (
            "library `run` of `true`: a PID namespace per call (the non-root fallback) / process group only",
            r(
                ("containment_true", "pid_namespace"),
                ("containment_true", "process_group"),
            ),
            "(measured)",
        ),
        (
            "library `run` of `true`: sandboxed (workspace-write) / unsandboxed",
            r(("sandbox_true", "workspace_write"), ("sandbox_true", "off")),
            "<= 1.3",
        ),
        (
            "library `run` of `:; true`: sandboxed (workspace-write) / unsandboxed",
            r(
                ("sandbox_shell", "workspace_write"),
                ("sandbox_shell", "off"),
            ),
            "<= 1.3",
        ),
        (
            "session round trip: sandboxed / unsandboxed",
            r(
                ("session_round_trip_true", "agent_exec_session_sandboxed"),
                ("session_round_trip_true", "agent_exec_session"),
            ),
            "<= 1.1",
        ),
        (
            "the default's cost: `agent-exec run -- true` / `run --sandbox off -- true`",
            r(
                ("whole_process_true", "agent_exec_run_true"),
                ("whole_process_true", "agent_exec_run_true_sandbox_off"),
            ),
            "(measured)",
        ),
        (
            "the default's cost: `serve` warm session `true` / the same with `--sandbox off`",
            r(
                ("serve_session_true", "agent_exec_serve"),
                ("serve_session_true", "agent_exec_serve_sandbox_off"),
            ),
            "(measured)",
        ),
        (
            "`agent-exec run -- true` / `bash -c true` (whole processes)",
            r(
                ("whole_process_true", "agent_exec_run_true"),
                ("whole_process_true", "bash_c_true"),
            ),
            "<= 1.5",
        ),
        (
            "ingest speed, zeros: agent-exec / `cat > /dev/null`",
            r(
                ("ingest_zeros", "cat_to_dev_null"),
                ("ingest_zeros", "agent_exec_sink"),
            ),
            ">= 0.8",
        ),
        (
            "ingest speed, zeros, with spill / `cat > /dev/null`",
            r(
                ("ingest_zeros", "cat_to_dev_null"),
                ("ingest_zeros", "agent_exec_sink_with_spill"),
            ),
            ">= 0.8",
        ),
        (
            "ingest speed, `yes`: agent-exec / `cat > /dev/null`",
            r(
                ("ingest_yes", "cat_to_dev_null"),
                ("ingest_yes", "agent_exec_sink"),
            ),
            ">= 0.8",
        ),
        (
            "ingest, CLI defaults (smart, spill), zeros: `agent-exec run` / `cat > /dev/null`",
            r(
                ("ingest_cli_zeros", "cat_to_dev_null"),
                ("ingest_cli_zeros", "agent_exec_run"),
            ),
            ">= 0.9",
        ),
        (
            "ingest, CLI defaults, log lines: `agent-exec run` / `cat > /dev/null`",
            r(
                ("ingest_cli_log", "cat_to_dev_null"),
                ("ingest_cli_log", "agent_exec_run"),
            ),
            ">= 0.9",
        ),
        (
            "ingest, CLI defaults, random bytes: `agent-exec run` / `cat > /dev/null`",
            r(
                ("ingest_cli_random", "cat_to_dev_null"),
                ("ingest_cli_random", "agent_exec_run"),
            ),
            ">= 0.9",
        ),
        (
            "ingest, CLI defaults, random bytes: `agent-exec run` / `cat | cat > /dev/null`",
            r(
                ("ingest_cli_random", "cat_cat_to_dev_null"),
                ("ingest_cli_random", "agent_exec_run"),
            ),
            ">= 0.5",
        ),
        (
            "session round trip / raw bash pipe round trip",
            r(
                ("session_round_trip_true", "agent_exec_session"),
                ("session_round_trip_true", "raw_bash_pipe"),
            ),
            "<= 2",
        ),
        (
            "fresh `bash -c true` / session round trip (speed-up)",
            r(
                ("session_round_trip_true", "fresh_bash_c_true"),
                ("session_round_trip_true", "agent_exec_session"),
            ),
            ">= 20",
        ),
        (
            "capture of a 48 KB test report that fits: compact / raw (issue 32)",
            r(("capture_fits_48k", "compact"), ("capture_fits_48k", "raw")),
            "(the view's cost at a call's end; ingest is unchanged)",
        ),
    ];
    for (name, ratio, target) in rows {
        println!("| {name} | {} | {target} |", fmt(ratio));
    }
    for (label, bench) in [
        ("plain/tail", "plain_tail"),
        ("plain/smart", "plain_smart"),
        ("plain/tail_spill", "plain_tail_spill"),
    ] {
        // 16 MiB per iteration.
        let gbs = mean_ns("sink_push_64k", bench).map(|ns| 16.0 * 1024.0 * 1024.0 / ns);
        println!(
            "| `OutputSink::push`, 64 KiB chunks, {label} (GB/s) | {} | >= 5 |",
            fmt(gbs)
        );
    }
    for case in ["simple", "typical", "git", "evasion", "script"] {
        let us = mean_ns("policy", &format!("permissive/{case}")).map(|ns| ns / 1000.0);
        println!("| policy verdict, {case} (µs) | {} | <= 100 |", fmt(us));
    }
    let us = mean_ns("policy", "remembered/simple").map(|ns| ns / 1000.0);
    println!(
        "| policy verdict remembered (the same line again, µs) | {} | (no parse, no walk) |",
        fmt(us)
    );
    // Remote targets (issue 15): each transport's warm session call / a local one, both
    // through `serve`.
    for engine in ["ssh", "docker", "podman", "kubectl"] {
        println!(
            "| remote target: warm session `true` through `serve --target {engine}://…` / local `serve` | {} | (overhead of the transport) |",
            fmt(r(
                ("remote_session_true", engine),
                ("remote_session_true", "local")
            ))
        );
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    // The rows measured from an outside client (`benches/outside_client.py`), same run.
    if let Ok(text) = std::fs::read_to_string(root.join("outside_client/summary.json"))
        && let Ok(figures) = serde_json::from_str::<serde_json::Value>(&text)
    {
        for row in figures["rows"].as_array().into_iter().flatten() {
            println!(
                "| {} | {} | {} |",
                row["measure"].as_str().unwrap_or_default(),
                fmt(row["ratio"].as_f64()),
                row["target"].as_str().unwrap_or_default()
            );
        }
    }
    for (name, what) in [
        ("scale", "scale, one local `serve`"),
        (
            "scale_ssh",
            "scale, one `serve` with every session on an ssh target",
        ),
        (
            "remote_scale",
            "remote scale (one `serve`, concurrent sessions spread over targets)",
        ),
    ] {
        if let Ok(text) = std::fs::read_to_string(root.join(name).join("summary.json")) {
            println!("\n{what}: {text}");
        }
    }
}

/// The rows of an outside client (`benches/outside_client.py`, Python's standard library),
/// written where [`print_ratios`] reads them.
fn outside_client() -> bool {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = root.join("target/release/agent-exec");
    let out = root.join("target/criterion/outside_client/summary.json");
    eprintln!("$ python3 benches/outside_client.py");
    Command::new("python3")
        .arg(root.join("benches/outside_client.py"))
        .arg(&bin)
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ok = match args.first().map(String::as_str) {
        Some("ci") => {
            cargo(&["fmt", "--all", "--", "--check"])
                && cargo(&[
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ])
                && cargo(&["test", "--workspace"])
        }
        Some("bench") => {
            let quick = ["--", "--warm-up-time", "1", "--measurement-time", "3"];
            cargo(&["build", "--release", "-p", "agent-exec-cli"])
                && {
                    let mut a = vec!["bench", "-p", "agent-exec-benches", "--benches"];
                    if args.len() > 1 {
                        a.extend(args[1..].iter().map(String::as_str));
                    } else {
                        a.extend(quick);
                    }
                    cargo(&a)
                }
                && {
                    // Without python3 the criterion rows still print.
                    if !outside_client() {
                        eprintln!(
                            "cargo xtask bench: the outside client's rows were not measured (python3 benches/outside_client.py failed)"
                        );
                    }
                    print_ratios();
                    true
                }
        }
        Some("ratios") => {
            print_ratios();
            true
        }
        Some("corpus") => {
            // The window on the log corpora, then the compact view on everyday commands
            // (tokens and needed lines, beside rtk).
            let example = |package: &'static str, name: &'static str| {
                vec![
                    "run",
                    "--release",
                    "-q",
                    "-p",
                    package,
                    "--example",
                    name,
                    "--",
                ]
            };
            let mut window = example("agent-exec-sink", "corpus_table");
            window.extend(args[1..].iter().map(String::as_str));
            cargo(&window) && cargo(&example("agent-exec-core", "everyday_table"))
        }
        Some("dist") => {
            let out = match args.get(1..) {
                Some([flag, dir]) if flag == "--out" => std::path::PathBuf::from(dir),
                Some([]) | None => dist::workspace_root().join("dist"),
                Some(other) => {
                    eprintln!(
                        "cargo xtask dist: unexpected {other:?}; usage: cargo xtask dist [--out DIR]"
                    );
                    return ExitCode::FAILURE;
                }
            };
            match dist::dist(&out) {
                Ok(()) => true,
                Err(e) => {
                    eprintln!("cargo xtask dist: {e}");
                    false
                }
            }
        }
        // The pinned packaging tools' `bin` (installed when missing), for the package tests.
        Some("tools") => match dist::target_directory(&dist::workspace_root())
            .and_then(|target| dist::tools(&dist::workspace_root(), &target))
        {
            Ok(bin) => {
                println!("{}", bin.display());
                true
            }
            Err(e) => {
                eprintln!("cargo xtask tools: {e}");
                false
            }
        },
        Some("fuzz") => {
            let target = args.get(1).map_or("sink", String::as_str);
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
            eprintln!(
                "$ cargo fuzz run -s none {target} (in fuzz/; install with `cargo install cargo-fuzz`)"
            );
            Command::new("cargo")
                .args([
                    "fuzz",
                    "run",
                    "-s",
                    "none",
                    target,
                    "--",
                    "-max_total_time=60",
                ])
                .current_dir(dir)
                .status()
                .is_ok_and(|s| s.success())
        }
        _ => {
            eprintln!(
                "usage: cargo xtask ci | bench [-- CRITERION ARGS] | ratios | corpus [MAX_BYTES] | dist [--out DIR] | tools | fuzz [sink|normalize|policy]"
            );
            false
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
