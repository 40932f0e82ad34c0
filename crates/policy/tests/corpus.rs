//! Corpus tests: every line of each file under `tests/corpus/` must get the expected decision.
//! Lines are commands; `#` starts a comment line; `⏎` stands for a newline inside a command.

use std::path::Path;

use agent_exec_policy::{Context, Decision, Policy, Verdict};

mod fixture;
use fixture::{workspace, workspace_policy};

fn corpus(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace('⏎', "\n"))
        .collect()
}

/// Checks every line, prints the pass count, and fails listing every miss.
fn run(name: &str, expected: Decision, check: impl Fn(&str) -> Verdict) {
    run_any(name, &[expected], check);
}

/// Like [`run`], with any of `expected` accepted.
fn run_any(name: &str, expected: &[Decision], check: impl Fn(&str) -> Verdict) {
    let lines = corpus(name);
    assert!(
        lines.len() >= 40,
        "{name} has only {} commands",
        lines.len()
    );
    let mut failures = Vec::new();
    for line in &lines {
        let v = check(line);
        if !expected.contains(&v.decision) {
            failures.push(format!(
                "  {line:?}\n    -> {:?} {:?}: {} {:?}",
                v.decision, v.rule, v.reason, v.commands
            ));
        }
    }
    let passed = lines.len() - failures.len();
    println!("{name}: {passed}/{} passed", lines.len());
    assert!(
        failures.is_empty(),
        "{name}: {} of {} lines did not get {expected:?}:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

fn dev_ctx() -> Context<'static> {
    Context {
        cwd: Path::new("/work/proj"),
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    }
}

#[test]
fn deny_corpus() {
    let policy = Policy::permissive();
    run("deny.txt", Decision::Deny, |c| policy.check(c, &dev_ctx()));
}

#[test]
fn deny_corpus_without_home() {
    // `~` and `$HOME` still count as the home directory when the caller does not know it.
    let policy = Policy::permissive();
    let ctx = Context {
        home: None,
        ..dev_ctx()
    };
    run("deny.txt", Decision::Deny, |c| policy.check(c, &ctx));
}

#[test]
fn allow_corpus() {
    let policy = Policy::permissive();
    run("allow.txt", Decision::Allow, |c| {
        policy.check(c, &dev_ctx())
    });
}

#[test]
fn evasion_deny_corpus() {
    // Fresh red-team cases, one class of evasion per section.
    let policy = Policy::permissive();
    run("evasion-deny.txt", Decision::Deny, |c| {
        policy.check(c, &dev_ctx())
    });
}

#[test]
fn evasion_ask_corpus() {
    let policy = Policy::permissive();
    run("evasion-ask.txt", Decision::Ask, |c| {
        policy.check(c, &dev_ctx())
    });
}

#[test]
fn evasion_allow_corpus() {
    let policy = Policy::permissive();
    run("evasion-allow.txt", Decision::Allow, |c| {
        policy.check(c, &dev_ctx())
    });
}

#[test]
fn ask_corpus() {
    let policy = Policy::permissive();
    run("ask.txt", Decision::Ask, |c| policy.check(c, &dev_ctx()));
}

/// Checks a corpus with workspace_only on, in the workspace fixture.
fn run_in_workspace(name: &str, expected: Decision) {
    let ws = workspace();
    let policy = workspace_policy(&ws.root);
    let ctx = Context {
        cwd: &ws.root,
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    run(name, expected, |c| policy.check(c, &ctx));
}

#[test]
fn workspace_escape_corpus() {
    run_in_workspace("workspace-escape.txt", Decision::Deny);
}

#[test]
fn evasion_workspace_escape_corpus() {
    run_in_workspace("evasion-workspace-escape.txt", Decision::Deny);
}

#[test]
fn workspace_inside_corpus() {
    run_in_workspace("workspace-inside.txt", Decision::Allow);
}

/// The blind red-team corpora (`redteam-a-*` … `redteam-e-*`): written by helpers who never
/// saw the code, measured, then kept as regression sets. What set e still misses is in
/// `redteam-e-open-*.txt`, measured by the `measure` example, not asserted.
#[test]
fn redteam_corpora() {
    let policy = Policy::permissive();
    for set in ["a", "b", "c", "d", "e"] {
        run(&format!("redteam-{set}-deny.txt"), Decision::Deny, |c| {
            policy.check(c, &dev_ctx())
        });
        run_any(
            &format!("redteam-{set}-dynamic.txt"),
            &[Decision::Ask, Decision::Deny],
            |c| policy.check(c, &dev_ctx()),
        );
        run(&format!("redteam-{set}-allow.txt"), Decision::Allow, |c| {
            policy.check(c, &dev_ctx())
        });
    }
}

#[test]
fn redteam_workspace_escape_corpus() {
    for set in ["a", "c", "d", "e"] {
        run_in_workspace(&format!("redteam-{set}-escape.txt"), Decision::Deny);
    }
}

/// Corpus e's lines that stay inside the workspace (or read the extra readable root, or use
/// harmless devices): allowed with workspace_only on.
#[test]
fn redteam_workspace_inside_corpus() {
    run_in_workspace("redteam-e-inside.txt", Decision::Allow);
}
