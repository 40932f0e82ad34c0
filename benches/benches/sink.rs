//! `OutputSink::push` throughput on 64 KiB chunks (target: >= 5 GB/s in memory on plain text).
use std::hint::black_box;

use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let plain: Vec<u8> = b"the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n"
        .iter()
        .copied()
        .cycle()
        .take(64 << 10)
        .collect();
    let short: Vec<u8> = b"ok\n".iter().copied().cycle().take(64 << 10).collect();
    let long = vec![b'x'; 64 << 10];
    let ansi: Vec<u8> = b"\x1b[1;32mPASS\x1b[0m test::case \x1b[2m(3ms)\x1b[0m\n"
        .iter()
        .copied()
        .cycle()
        .take(64 << 10)
        .collect();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let binary: Vec<u8> = (0..64 << 10)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect();
    vec![
        ("plain", plain),
        ("short_lines", short),
        ("one_long_line", long),
        ("ansi_heavy", ansi),
        ("random_binary", binary),
    ]
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sink_push_64k");
    let chunks = 256; // 16 MiB per iteration
    group.throughput(Throughput::Bytes(chunks * (64 << 10)));
    for (name, chunk) in corpus() {
        for direction in [Direction::Tail, Direction::Smart] {
            group.bench_function(format!("{name}/{}", direction.as_str()), |b| {
                b.iter(|| {
                    let mut sink = OutputSink::new(
                        SinkConfig {
                            direction,
                            ..SinkConfig::default()
                        },
                        None,
                    );
                    for _ in 0..chunks {
                        sink.push(Stream::Stdout, black_box(&chunk)).unwrap();
                    }
                    black_box(sink.finish_capture().totals)
                });
            });
        }
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(agent_exec_sink::ArtifactStore::open(dir.path()).unwrap());
        group.bench_function(format!("{name}/tail_spill"), |b| {
            b.iter(|| {
                let mut sink = OutputSink::new(SinkConfig::default(), Some(store.clone()));
                for _ in 0..chunks {
                    sink.push(Stream::Stdout, black_box(&chunk)).unwrap();
                }
                let c = sink.finish_capture();
                if let Some(a) = c.artifact {
                    let _ = std::fs::remove_file(a.path);
                }
            });
        });
    }
    group.finish();
}

/// The capture of a 48 KB output that fits (a test report), raw and compact: what the compact
/// view adds to a call's end. It runs once, at the end; pushing is the same either way.
fn compact(c: &mut Criterion) {
    let summary = "test result: ok. 1200 passed; 0 failed\n";
    let mut report = String::from("running 1200 tests\n");
    let mut i = 0;
    while report.len() + summary.len() < 48 << 10 {
        report.push_str(&format!("test tests::case_{i} ... ok\n"));
        i += 1;
    }
    report.push_str(summary);
    let report = report.as_bytes();
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(agent_exec_sink::ArtifactStore::open(dir.path()).unwrap());
    let mut group = c.benchmark_group("capture_fits_48k");
    for (name, compact) in [("raw", None), ("compact", Some("cargo test".to_owned()))] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sink = OutputSink::new(
                    SinkConfig {
                        direction: Direction::Smart,
                        compact: compact.clone(),
                        ..SinkConfig::default()
                    },
                    Some(store.clone()),
                );
                for chunk in report.chunks(64 << 10) {
                    sink.push(Stream::Stdout, black_box(chunk)).unwrap();
                }
                let c = sink.finish_capture();
                if let Some(a) = c.artifact {
                    let _ = std::fs::remove_file(a.path);
                }
                black_box(c.view.output_bytes)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench, compact);
criterion_main!(benches);
