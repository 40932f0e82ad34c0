//! Project automation: `cargo xtask ci | bench | corpus | fuzz [TARGET]`.

use std::process::{Command, ExitCode};

fn cargo(args: &[&str]) -> bool {
    eprintln!("$ cargo {}", args.join(" "));
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
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
            let mut a = vec!["bench", "-p", "agent-exec-benches"];
            a.extend(args[1..].iter().map(String::as_str));
            cargo(&a)
        }
        Some("corpus") => {
            let mut a = vec![
                "run",
                "--release",
                "-q",
                "-p",
                "agent-exec-sink",
                "--example",
                "corpus_table",
                "--",
            ];
            a.extend(args[1..].iter().map(String::as_str));
            cargo(&a)
        }
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
                "usage: cargo xtask ci | bench [FILTER] | corpus [MAX_BYTES] | fuzz [sink|normalize|policy]"
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
