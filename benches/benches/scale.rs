//! Scale figures of one local `agent-exec serve` (issue 34): warm session calls per second
//! with 1, 16 and 64 sessions in flight, and the server's memory and a warm round trip with
//! 1,000 idle sessions open. Written to `target/criterion/scale/summary.json` and printed by
//! `cargo xtask bench`; the same through a remote target is in the `remote` bench.
use agent_exec_benches::{agent_exec_binary, scale_figures, write_summary};

fn main() {
    // `cargo bench` passes `--bench`; a listing or test run does nothing.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let Some(bin) = agent_exec_binary() else {
        return;
    };
    let artifacts = tempfile::tempdir().expect("tempdir");
    let local = scale_figures(&bin, &[], &[], None, artifacts.path());
    write_summary("scale", &local);
}
