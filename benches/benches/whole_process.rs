//! `agent-exec run` as a whole process, as a user meets it, against the same work done by the
//! shell in the same run:
//! - start-up: `agent-exec run -- true` vs `bash -c true` (target ≤ 1.5×), and the default
//!   (the sandbox on) vs `--sandbox off`;
//! - output ingest with the CLI's defaults (the smart window, artifact spill on):
//!   `agent-exec run -- sh -c PRODUCER` vs `sh -c 'PRODUCER | cat > /dev/null'`, for zeros, log
//!   lines and random bytes (target ≥ 0.9× of `cat`'s speed).
//!
//! This bench process is not a subreaper (the library benches are): each `agent-exec`'s
//! watchdog would be left to it as a zombie, and thousands of them slowed every spawn.
use std::io::Write;
use std::process::{Command, Stdio};

use agent_exec_benches::agent_exec_binary;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Log lines as services and test runners print them, a few of them errors and warnings.
fn log_lines(bytes: usize) -> Vec<u8> {
    let levels = [
        "INFO", "INFO", "INFO", "DEBUG", "INFO", "WARN", "INFO", "ERROR",
    ];
    let mut out = Vec::with_capacity(bytes + 256);
    let mut n = 0u64;
    while out.len() < bytes {
        let level = levels[(n % levels.len() as u64) as usize];
        let _ = writeln!(
            out,
            "2026-11-23T07:{:02}:{:02}.{:03}Z {level} worker-{} request id={:08x} path=/api/v1/items/{} status={} took={}ms",
            n / 60 % 60,
            n % 60,
            n % 1000,
            n % 8,
            n.wrapping_mul(2_654_435_761),
            n % 977,
            if level == "ERROR" { 500 } else { 200 },
            n % 250
        );
        n += 1;
    }
    out
}

/// Random bytes (xorshift): binary output.
fn random_bytes(bytes: usize) -> Vec<u8> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    (0..bytes)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let Some(bin) = agent_exec_binary() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("log.txt");
    std::fs::write(&log, log_lines(50 << 20)).expect("log file");
    let random = dir.path().join("random.bin");
    std::fs::write(&random, random_bytes(25 << 20)).expect("random file");
    let artifacts = dir.path().join("artifacts");
    let mut group = c.benchmark_group("whole_process_true");
    group.bench_function("bash_c_true", |b| {
        b.iter(|| {
            Command::new("bash")
                .args(["-c", "true"])
                .stdout(Stdio::null())
                .status()
                .expect("bash")
        });
    });
    group.bench_function("agent_exec_run_true", |b| {
        b.iter(|| {
            Command::new(&bin)
                .args(["run", "--", "true"])
                .env("AGENT_EXEC_ARTIFACTS", &artifacts)
                .stdout(Stdio::null())
                .status()
                .expect("agent-exec")
        });
    });
    group.bench_function("agent_exec_run_true_sandbox_off", |b| {
        b.iter(|| {
            Command::new(&bin)
                .args(["run", "--sandbox", "off", "--", "true"])
                .env("AGENT_EXEC_ARTIFACTS", &artifacts)
                .stdout(Stdio::null())
                .status()
                .expect("agent-exec")
        });
    });
    group.finish();
    let (log, random) = (log.display(), random.display());
    for (name, producer, bytes) in [
        (
            "zeros",
            "head -c 500000000 /dev/zero".to_owned(),
            500_000_000u64,
        ),
        (
            "log",
            format!("cat {log} {log} {log} {log}"),
            4 * (50 << 20),
        ),
        ("random", format!("cat {random} {random}"), 2 * (25 << 20)),
    ] {
        let mut group = c.benchmark_group(format!("ingest_cli_{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("cat_to_dev_null", |b| {
            b.iter(|| {
                Command::new("sh")
                    .args(["-c", &format!("{producer} | cat > /dev/null")])
                    .status()
                    .expect("sh")
            });
        });
        // `cat | cat`: the yardstick of random bytes (a second process that reads it all).
        if name == "random" {
            group.bench_function("cat_cat_to_dev_null", |b| {
                b.iter(|| {
                    Command::new("sh")
                        .args(["-c", &format!("{producer} | cat | cat > /dev/null")])
                        .status()
                        .expect("sh")
                });
            });
        }
        group.bench_function("agent_exec_run", |b| {
            b.iter(|| {
                let _ = std::fs::remove_dir_all(&artifacts);
                Command::new(&bin)
                    .args(["run", "--", "sh", "-c", &producer])
                    .env("AGENT_EXEC_ARTIFACTS", &artifacts)
                    .stdout(Stdio::null())
                    .status()
                    .expect("agent-exec")
            });
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
