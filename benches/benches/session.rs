//! A warm session's round trip for `true`, against a raw bash pipe round trip (a bash whose
//! stdin/stdout we own, writing `true; printf marker`) and a fresh `bash -c true`, measured in
//! the same run. Targets: ≤ 2× the raw round trip, ≥ 20× faster than a fresh `bash -c`.
use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use agent_exec_executor::session::{Session, SessionConfig};
use agent_exec_executor::{CancelToken, DrainLimits};
use agent_exec_sink::{OutputSink, SinkConfig};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("session_round_trip_true");
    let mut raw = agent_exec_benches::RawBashPipe::start();
    group.bench_function("raw_bash_pipe", |b| {
        b.iter(|| {
            black_box(raw.round_trip());
        });
    });
    drop(raw);

    let cancel = CancelToken::new();
    let mut round_trips = |name: &str, session: &mut Session| {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sink = OutputSink::new(SinkConfig::default(), None);
                let outcome = session.run(
                    "true",
                    &mut sink,
                    Some(Duration::from_secs(10)),
                    Duration::from_secs(1),
                    DrainLimits::default(),
                    &cancel,
                    agent_exec_executor::OnWaiting::Stop,
                );
                black_box((outcome, sink.finish_capture().totals))
            });
        });
    };
    let mut session =
        Session::start(&SessionConfig::default(), &std::env::temp_dir()).expect("session");
    round_trips("agent_exec_session", &mut session);
    session.close(Duration::from_secs(1));

    // The same warm round trip in a sandboxed session (the sandbox is set up once per shell):
    // target ≤ 1.1× the unsandboxed one.
    let workspace = tempfile::tempdir().expect("tempdir");
    let config = SessionConfig {
        // What a session gets with no flag: the default's spec (dev profile, network on).
        sandbox: agent_exec_core::SandboxSettings::default()
            .spec(
                agent_exec_executor::SandboxMode::WorkspaceWrite,
                workspace.path(),
                Vec::new,
            )
            .map(std::sync::Arc::new),
        ..SessionConfig::default()
    };
    let mut sandboxed = Session::start(&config, workspace.path()).expect("sandboxed session");
    round_trips("agent_exec_session_sandboxed", &mut sandboxed);
    sandboxed.close(Duration::from_secs(1));

    group.bench_function("fresh_bash_c_true", |b| {
        b.iter(|| {
            black_box(
                Command::new("bash")
                    .args(["-c", "true"])
                    .output()
                    .expect("bash"),
            )
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
