//! `normalize` on typical agent commands.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    for cmd in [
        "ls -la | head -n 50",
        "cd crates && cargo test 2>&1 | tail -n 40",
        "git log --oneline -20",
    ] {
        c.bench_function(&format!("normalize/{cmd}"), |b| {
            b.iter(|| agent_exec_normalize::normalize(black_box(cmd)));
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
