//! Measures the policy on corpus files: how many lines get the expected decision, and how long
//! one `check` takes (p50, p99, max).
//!
//! ```console
//! $ cargo run --release -p agent-exec-policy --example measure -- deny:tests/corpus/redteam-e-deny.txt …
//! ```
//! Each argument is `EXPECT:FILE`, where EXPECT is `deny`, `ask`, `allow`, `not-allow` (ask or
//! deny), or `ws-deny` / `ws-allow` (with `workspace_only` on, in a workspace fixture like the
//! corpus tests').

use std::path::Path;
use std::time::{Duration, Instant};

use agent_exec_policy::{Context, Decision, Policy};

#[path = "../tests/fixture/mod.rs"]
mod fixture;

fn lines(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace('⏎', "\n"))
        .collect()
}

/// `part` of `whole` in percent (corpus sizes are far below f64's exact integers).
#[expect(clippy::cast_precision_loss, reason = "counts of corpus lines")]
fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

fn main() {
    let workspace = fixture::workspace();
    let root = &workspace.root;
    let permissive = Policy::permissive();
    let confined = fixture::workspace_policy(root);
    let dev = Context {
        cwd: Path::new("/work/proj"),
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    let in_workspace = Context {
        cwd: root,
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    let verbose = std::env::var_os("MEASURE_MISSES").is_some();
    let mut times: Vec<Duration> = Vec::new();
    for arg in std::env::args().skip(1) {
        let (expect, file) = arg.split_once(':').expect("EXPECT:FILE");
        let (policy, ctx, ok): (&Policy, &Context<'_>, &[Decision]) = match expect {
            "deny" => (&permissive, &dev, &[Decision::Deny]),
            "ask" => (&permissive, &dev, &[Decision::Ask]),
            "allow" => (&permissive, &dev, &[Decision::Allow]),
            "not-allow" => (&permissive, &dev, &[Decision::Ask, Decision::Deny]),
            "ws-deny" => (&confined, &in_workspace, &[Decision::Deny]),
            "ws-allow" => (&confined, &in_workspace, &[Decision::Allow]),
            other => panic!("unknown expectation {other}"),
        };
        let all = lines(file);
        let mut passed = 0usize;
        for line in &all {
            let start = Instant::now();
            let v = policy.check(line, ctx);
            times.push(start.elapsed());
            if ok.contains(&v.decision) {
                passed += 1;
            } else if verbose {
                println!("  MISS {line:?} -> {:?} {:?}", v.decision, v.rule);
            }
        }
        println!(
            "{expect:>9} {passed:>4}/{:<4} {:5.1} %  {file}",
            all.len(),
            percent(passed, all.len())
        );
    }
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
    if !times.is_empty() {
        println!(
            "check time over {} commands: p50 {:?}, p99 {:?}, max {:?}",
            times.len(),
            at(0.5),
            at(0.99),
            times[times.len() - 1]
        );
    }
}
