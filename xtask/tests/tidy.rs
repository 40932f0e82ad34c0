//! The layering of the workspace, checked: each crate depends only on the crates below it
//! (ARCHITECTURE.md), and only `executor` starts processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Each workspace crate's normal (not dev, not build) dependencies on other workspace crates.
fn internal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .filter(|d| ours.contains(d))
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn crates_depend_only_on_the_layers_below() {
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("agent-exec-normalize", &[][..]),
        // The wire types and the contract's words, which every layer speaks; the shell quoting
        // of `Request::from_words`.
        ("agent-exec-protocol", &["agent-exec-normalize"][..]),
        ("agent-exec-sink", &["agent-exec-protocol"][..]),
        ("agent-exec-policy", &["agent-exec-protocol"][..]),
        (
            "agent-exec-executor",
            &["agent-exec-protocol", "agent-exec-sink"][..],
        ),
        // Remote targets: the client of `serve` over an engine's client, which the executor
        // starts (a `Channel`); the shell quoting of normalize for ssh's command line.
        (
            "agent-exec-remote",
            &[
                "agent-exec-executor",
                "agent-exec-normalize",
                "agent-exec-sink",
            ][..],
        ),
        (
            "agent-exec-core",
            &[
                "agent-exec-executor",
                "agent-exec-normalize",
                "agent-exec-policy",
                "agent-exec-protocol",
                "agent-exec-remote",
                "agent-exec-sink",
            ][..],
        ),
        // The binary: the tool, plus the executor's process-wide setup (watchdog, subreaper)
        // and the sink's artifact reader.
        (
            "agent-exec",
            &["agent-exec-core", "agent-exec-executor", "agent-exec-sink"][..],
        ),
    ]);
    let actual = internal_dependencies();
    for (krate, deps) in &actual {
        let Some(ok) = allowed.get(krate.as_str()) else {
            // Benches and tasks may use anything.
            assert!(
                matches!(krate.as_str(), "xtask" | "agent-exec-benches"),
                "{krate} is new: say in this test which crates it may depend on"
            );
            continue;
        };
        for dep in deps {
            assert!(
                ok.contains(&dep.as_str()),
                "{krate} must not depend on {dep}"
            );
        }
    }
    for krate in allowed.keys() {
        assert!(
            actual.contains_key(*krate),
            "{krate} is gone: update this test"
        );
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_executor_starts_processes() {
    let crates = workspace_root().join("crates");
    let mut offenders = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap() {
        let krate = krate.unwrap().path();
        if !krate.join("src").is_dir() || krate.file_name().is_some_and(|n| n == "executor") {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        for file in files {
            // clap's `Command` builds a command line parser, not a process.
            let text = std::fs::read_to_string(&file)
                .unwrap()
                .replace("clap::Command::new", "");
            for needle in [
                "Command::new",
                "process::Command",
                "libc::fork",
                "libc::execv",
            ] {
                if text.contains(needle) {
                    offenders.push(format!("{} uses {needle}", file.display()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "processes start only in executor: {offenders:#?}"
    );
}
