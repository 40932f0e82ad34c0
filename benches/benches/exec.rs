//! One call end to end, against the physical limits measured in the same run
//! (`performance.md`):
//! - library `run` of `true` vs std `Command::new("bash").args(["-c", "true"]).output()`
//!   (target ≤ 1.10×);
//! - the containment group (a cgroup per call) vs the process-group fallback on `true`
//!   (target ≤ 1.05×);
//! - the sandbox vs none on `true` and `:; true` (target ≤ 1.3×);
//! - ingest of a fast producer (`head -c N /dev/zero`, and `yes`) vs the same into
//!   `cat > /dev/null` (target ≥ 0.8× of its speed).
use std::hint::black_box;
use std::process::Command;

use agent_exec_executor::{CancelToken, Containment, ExecSpec, run};
use agent_exec_sink::{OutputSink, SinkConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn one_call(c: &mut Criterion) {
    let _ = agent_exec_executor::containment::become_subreaper();
    let mut group = c.benchmark_group("one_call_true");
    group.bench_function("std_command_bash_c_true", |b| {
        b.iter(|| {
            black_box(
                Command::new("bash")
                    .args(["-c", "true"])
                    .output()
                    .expect("bash"),
            )
        });
    });
    let spec = ExecSpec::shell("true", std::env::temp_dir());
    group.bench_function("agent_exec_library_run", |b| {
        b.iter(|| {
            let mut sink = OutputSink::new(SinkConfig::default(), None);
            let outcome = run(&spec, &mut sink, &CancelToken::new());
            black_box((outcome, sink.finish_capture().totals))
        });
    });
    group.finish();

    // A command that needs the shell, so both sides start bash.
    let mut group = c.benchmark_group("one_call_shell");
    group.bench_function("std_command_bash_c", |b| {
        b.iter(|| {
            black_box(
                Command::new("bash")
                    .args(["-c", ":; true"])
                    .output()
                    .expect("bash"),
            )
        });
    });
    let spec = ExecSpec::shell(":; true", std::env::temp_dir());
    group.bench_function("agent_exec_library_run", |b| {
        b.iter(|| {
            let mut sink = OutputSink::new(SinkConfig::default(), None);
            let outcome = run(&spec, &mut sink, &CancelToken::new());
            black_box((outcome, sink.finish_capture().totals))
        });
    });
    group.finish();

    // The containment group's own cost (a pooled cgroup: joined before exec, read, killed):
    // the same call with the process-group fallback only, side by side; and the fallback of
    // an operator without a cgroup, a PID namespace per call (a user namespace, a helper and
    // an init more per call).
    let mut group = c.benchmark_group("containment_true");
    for (name, containment) in [
        ("process_group", Containment::ProcessGroup),
        ("pid_namespace", Containment::PidNamespace),
        ("default_group", Containment::Auto),
    ] {
        let mut spec = ExecSpec::shell("true", std::env::temp_dir());
        spec.containment = containment;
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sink = OutputSink::new(SinkConfig::default(), None);
                let outcome = run(&spec, &mut sink, &CancelToken::new());
                black_box((outcome, sink.finish_capture().totals))
            });
        });
    }
    group.finish();

    // The sandbox's cost (Landlock, seccomp, a mount namespace entered by the child) on the
    // same call, sandboxed and not, side by side: `true` (exec'd directly) and `:; true`
    // (through bash). Target ≤ 1.3×.
    let workspace = tempfile::tempdir().expect("tempdir");
    for (group_name, command) in [("sandbox_true", "true"), ("sandbox_shell", ":; true")] {
        let mut group = c.benchmark_group(group_name);
        for (name, sandbox) in [
            ("off", None),
            // What a call gets with no flag: the default's spec (dev profile, network on).
            (
                "workspace_write",
                agent_exec_core::SandboxSettings::default()
                    .spec(
                        agent_exec_executor::SandboxMode::WorkspaceWrite,
                        workspace.path(),
                        Vec::new,
                    )
                    .map(std::sync::Arc::new),
            ),
        ] {
            let mut spec = ExecSpec::shell(command, workspace.path());
            spec.sandbox = sandbox;
            group.bench_function(name, |b| {
                b.iter(|| {
                    let mut sink = OutputSink::new(SinkConfig::default(), None);
                    let outcome = run(&spec, &mut sink, &CancelToken::new());
                    assert!(outcome.spawn_error.is_none(), "{:?}", outcome.spawn_error);
                    black_box((outcome, sink.finish_capture().totals))
                });
            });
        }
        group.finish();
    }
}

fn ingest(c: &mut Criterion) {
    let _ = agent_exec_executor::containment::become_subreaper();
    const BYTES: u64 = 500_000_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let store =
        std::sync::Arc::new(agent_exec_sink::ArtifactStore::open(dir.path()).expect("store"));
    for (name, producer) in [
        ("zeros", format!("head -c {BYTES} /dev/zero")),
        ("yes", format!("yes | head -c {BYTES}")),
    ] {
        let mut group = c.benchmark_group(format!("ingest_{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Bytes(BYTES));
        group.bench_function("cat_to_dev_null", |b| {
            b.iter(|| {
                Command::new("bash")
                    .args(["-c", &format!("{producer} | cat > /dev/null")])
                    .status()
                    .expect("bash")
            });
        });
        let spec = ExecSpec::shell(producer.clone(), std::env::temp_dir());
        group.bench_function("agent_exec_sink", |b| {
            b.iter(|| {
                let mut sink = OutputSink::new(SinkConfig::default(), None);
                black_box(run(&spec, &mut sink, &CancelToken::new()));
                black_box(sink.finish_capture().totals)
            });
        });
        group.bench_function("agent_exec_sink_with_spill", |b| {
            b.iter(|| {
                let mut sink = OutputSink::new(SinkConfig::default(), Some(store.clone()));
                black_box(run(&spec, &mut sink, &CancelToken::new()));
                if let Some(a) = sink.finish_capture().artifact {
                    let _ = std::fs::remove_file(a.path);
                }
            });
        });
        group.finish();
    }
}

criterion_group!(benches, one_call, ingest);
criterion_main!(benches);
