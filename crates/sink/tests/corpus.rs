//! Real tool output (see `tests/corpus/README.md`): the `smart` window keeps every needle, at
//! the default budget, fed in pipe-sized chunks, with no more bytes than `tail` shows.

use std::path::Path;

use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream, View};

fn view_of(data: &[u8], direction: Direction, chunk: usize) -> View {
    let mut sink = OutputSink::new(
        SinkConfig {
            direction,
            ..SinkConfig::default()
        },
        None,
    );
    for c in data.chunks(chunk) {
        sink.push(Stream::Stdout, c).unwrap();
    }
    sink.finish_capture().view
}

#[test]
fn smart_keeps_every_needle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 12, "the corpus has {} logs", logs.len());
    let mut missed = Vec::new();
    for log in &logs {
        let data = std::fs::read(log).unwrap();
        let needle = std::fs::read_to_string(log.with_extension("needle")).unwrap();
        let needle = agent_exec_sink::sanitize(needle.trim_end_matches('\n').as_bytes());
        for chunk in [4096, 65_536] {
            let smart = view_of(&data, Direction::Smart, chunk);
            let tail = view_of(&data, Direction::Tail, chunk);
            assert!(smart.output_bytes <= tail.output_bytes, "{}", log.display());
            if !smart.text().lines().any(|l| l == needle) {
                missed.push(format!("{} (chunk {chunk})", log.display()));
            }
        }
    }
    assert!(missed.is_empty(), "needles lost by smart: {missed:?}");
}
