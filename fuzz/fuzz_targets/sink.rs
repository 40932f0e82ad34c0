//! Chunking invariance, budget and totals of `OutputSink`, for every direction (incl. smart).
#![no_main]
use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let max_bytes = usize::from(data[0]) + 1;
    let direction = [Direction::Tail, Direction::Head, Direction::Both, Direction::Smart][usize::from(data[1] % 4)];
    let cut = usize::from(data[2]);
    let input = &data[3..];
    let config = SinkConfig { max_bytes, direction, ..SinkConfig::default() };
    let mut whole = OutputSink::new(config.clone(), None);
    whole.push(Stream::Stdout, input).unwrap();
    let whole = whole.finish_capture();
    let mut chunked = OutputSink::new(config, None);
    for c in input.chunks(cut.max(1)) {
        chunked.push(Stream::Stdout, c).unwrap();
    }
    let chunked = chunked.finish_capture();
    assert_eq!(whole.view, chunked.view);
    assert!(whole.view.output_bytes <= max_bytes as u64);
    assert_eq!(whole.totals.merged.bytes, input.len() as u64);
});
