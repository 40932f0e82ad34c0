//! Prints, for `tail`, `both` and `smart` at the same budget, how many corpus needles each
//! window keeps and how many bytes it shows. Run with `cargo xtask corpus` (or
//! `cargo run --release -p agent-exec-sink --example corpus_table [-- MAX_BYTES]`).

use std::path::Path;

use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream};

fn main() {
    let max_bytes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(51_200);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut logs: Vec<_> = std::fs::read_dir(&dir)
        .expect("the corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let directions = [Direction::Tail, Direction::Both, Direction::Smart];
    let mut kept = [0usize; 3];
    let mut bytes = [0u64; 3];
    println!("budget {max_bytes} bytes; ✓ = the needle line is shown\n");
    println!("| log | size | tail | both | smart |");
    println!("|---|---:|---|---|---|");
    for log in &logs {
        let data = std::fs::read(log).expect("log");
        let needle = std::fs::read_to_string(log.with_extension("needle")).expect("needle");
        let needle = agent_exec_sink::sanitize(needle.trim_end_matches('\n').as_bytes());
        let mut row = Vec::new();
        for (i, direction) in directions.into_iter().enumerate() {
            let mut sink = OutputSink::new(
                SinkConfig {
                    max_bytes,
                    direction,
                    ..SinkConfig::default()
                },
                None,
            );
            for chunk in data.chunks(64 * 1024) {
                sink.push(Stream::Stdout, chunk).expect("infallible");
            }
            let view = sink.finish_capture().view;
            let found = view.text().lines().any(|l| l == needle);
            kept[i] += usize::from(found);
            bytes[i] += view.output_bytes;
            row.push(format!(
                "{} {}",
                if found { "✓" } else { "✗" },
                view.output_bytes
            ));
        }
        let name = log
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!("| {name} | {} | {} |", data.len(), row.join(" | "));
    }
    let n = logs.len().max(1) as u64;
    println!(
        "| **needles kept / mean bytes shown** | | **{}/{}** {} | **{}/{}** {} | **{}/{}** {} |",
        kept[0],
        logs.len(),
        bytes[0] / n,
        kept[1],
        logs.len(),
        bytes[1] / n,
        kept[2],
        logs.len(),
        bytes[2] / n
    );
}
