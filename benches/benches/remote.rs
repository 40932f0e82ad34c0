//! Remote targets (contract §9), against real engines started here as root (the tests' own
//! engine set-up, `crates/cli/tests/engines`): an sshd on 127.0.0.1, a dockerd, rootful podman
//! and the kubectl stand-in.
//! - Per-call overhead of each transport: a warm session's `true` through `serve --target T`
//!   vs the same through a local `serve` (criterion group `remote_session_true`).
//! - Scale: 64 concurrent sessions spread over the 4 targets through one `serve`: calls per
//!   second, and the server's peak RSS and threads (written to
//!   `target/criterion/remote_scale/summary.json`, printed by `cargo xtask bench`).
//! - The scale figures of the `scale` bench through the ssh target (`scale_ssh`).
use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_exec_benches::{Serve, session_call};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[path = "../../crates/cli/tests/engines/mod.rs"]
mod engines;

use engines::{Containers, Engine, KubectlStandIn, Sshd};

fn agent_exec_under_test() -> PathBuf {
    agent_exec_benches::agent_exec_binary().expect("a release agent-exec")
}

/// Concurrent sessions of the scale figure, and calls each makes per round.
const SESSIONS: usize = 64;
const ROUNDS: usize = 20;

fn bench(c: &mut Criterion) {
    let Some(bin) = agent_exec_benches::agent_exec_binary() else {
        return;
    };
    let artifacts = tempfile::tempdir().expect("tempdir");
    let sshd = Sshd::start();
    let mut docker = Containers::docker();
    docker.start("bench", false);
    let mut podman = Containers::podman();
    podman.start("bench", false);
    let kubectl = KubectlStandIn::new("kubectl://bench/pod");
    let docker_target = engines::Container {
        engines: &docker,
        name: "bench".into(),
        uri: "docker://bench".into(),
    };
    let podman_target = engines::Container {
        engines: &podman,
        name: "bench".into(),
        uri: "podman://bench".into(),
    };
    let targets: Vec<(&str, &dyn Engine)> = vec![
        ("ssh", &sshd),
        ("docker", &docker_target),
        ("podman", &podman_target),
        ("kubectl", &kubectl),
    ];

    let mut group = c.benchmark_group("remote_session_true");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    let session = session_call("s", None);
    {
        let mut local = Serve::start(&bin, &[], &kubectl.env(), artifacts.path());
        local.exec(&session);
        group.bench_function("local", |b| b.iter(|| local.exec(&session)));
    }
    for (name, engine) in &targets {
        let flags = vec!["--target".to_owned(), engine.target()];
        let mut server = Serve::start(&bin, &flags, &engine.env(), artifacts.path());
        server.exec(&session);
        group.bench_function(*name, |b| b.iter(|| server.exec(&session)));
    }
    group.finish();

    // The scale figure: one serve, 64 sessions over the 4 targets, all in flight at once.
    let flags = vec![
        "--max-inflight".to_owned(),
        (SESSIONS * 2).to_string(),
        "--allow-target".into(),
        "*".into(),
    ];
    let mut env = Vec::new();
    for (_, engine) in &targets {
        env.extend(engine.env());
    }
    let mut server = Serve::start(&bin, &flags, &env, artifacts.path());
    let calls: Vec<String> = (0..SESSIONS)
        .map(|i| {
            let (_, engine) = targets[i % targets.len()];
            session_call(&format!("s{i}"), Some(&engine.target()))
        })
        .collect();
    // Warm: every session's shell started.
    for call in &calls {
        server.send(call);
    }
    for _ in &calls {
        server.answer();
    }
    let (_, mut peak_rss, mut peak_threads) = server.footprint();
    let start = Instant::now();
    for _ in 0..ROUNDS {
        for call in &calls {
            server.send(call);
        }
        let (rss, _, threads) = server.footprint();
        peak_rss = peak_rss.max(rss);
        peak_threads = peak_threads.max(threads);
        for _ in &calls {
            server.answer();
        }
    }
    let elapsed = start.elapsed();
    let per_second = (SESSIONS * ROUNDS) as f64 / elapsed.as_secs_f64();
    let summary = json!({
        "sessions": SESSIONS,
        "targets": targets.len(),
        "calls": SESSIONS * ROUNDS,
        "seconds": elapsed.as_secs_f64(),
        "calls_per_second": per_second,
        "peak_rss_kib": peak_rss,
        "peak_threads": peak_threads,
    });
    agent_exec_benches::write_summary("remote_scale", &summary);
    drop(server);
    // The local scale figures (`scale` bench), through the ssh target: every session's shell
    // on the far side.
    let ssh = agent_exec_benches::scale_figures(
        &bin,
        &["--target".to_owned(), sshd.target()],
        &sshd.env(),
        None,
        artifacts.path(),
    );
    agent_exec_benches::write_summary("scale_ssh", &ssh);
}

criterion_group!(benches, bench);
criterion_main!(benches);
