//! Prints the `smart` view of a file (a debugging aid): `cargo run -p agent-exec-sink --example view_of -- FILE [MAX_BYTES]`.
use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream, ViewPart};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("a file");
    let max_bytes = args.next().and_then(|a| a.parse().ok()).unwrap_or(51_200);
    let data = std::fs::read(&path).expect("readable");
    let dir = std::env::temp_dir().join("agent-exec-view-of");
    let store = std::sync::Arc::new(agent_exec_sink::ArtifactStore::open(&dir).expect("store"));
    let mut sink = OutputSink::new(
        SinkConfig {
            max_bytes,
            direction: Direction::Smart,
            ..SinkConfig::default()
        },
        Some(store),
    );
    for chunk in data.chunks(64 * 1024) {
        sink.push(Stream::Stdout, chunk).expect("infallible");
    }
    let capture = sink.finish_capture();
    for part in &capture.view.parts {
        match part {
            ViewPart::Shown { first_line, text } => {
                println!("--- shown from line {first_line} ({} bytes)", text.len());
                print!("{text}");
            }
            other => println!("--- {other:?}"),
        }
    }
    println!("--- {:?}", capture.view.omitted);
    println!("--- ranges {:?}", capture.view.shown_ranges);
}
