//! Property tests: the invariants of `OutputSink` over random bytes and random chunkings.

mod common;

use std::sync::Arc;

use agent_exec_sink::{ArtifactStore, Direction, OutputSink, Sink, SinkConfig, Stream};
use common::{count_lines, head_of, reference_sanitize, tail_of};
use proptest::prelude::*;

/// Bytes that exercise every rule: text, newlines, CRs, escapes, NULs, invalid UTF-8, emoji.
fn nasty_bytes() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        4 => prop::sample::select(b"abcxyz error FAILED ".to_vec()).prop_map(|b| vec![b]),
        3 => Just(b"\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\x1b[31m".to_vec()),
        1 => Just(b"\x1b]0;title\x07".to_vec()),
        1 => Just(b"\x1b".to_vec()),
        1 => Just(b"[".to_vec()),
        1 => Just(b"\x00".to_vec()),
        1 => Just(b"\xff".to_vec()),
        1 => Just(b"\xe2\x82".to_vec()),
        1 => Just("😀".as_bytes().to_vec()),
        1 => Just("é".as_bytes().to_vec()),
        1 => Just(b"\t".to_vec()),
        1 => Just(b"\x07".to_vec()),
        1 => Just(b"\\".to_vec()),
        // 8-bit C1 controls, alone and as UTF-8 (U+009B), and a character ending in 0x9b.
        1 => Just(b"\x9b".to_vec()),
        1 => Just(b"\x9d".to_vec()),
        1 => Just(b"\x9c".to_vec()),
        1 => Just(b"\x90".to_vec()),
        1 => Just("\u{9b}".as_bytes().to_vec()),
        1 => Just("\u{9c}".as_bytes().to_vec()),
        1 => Just("\u{201b}".as_bytes().to_vec()),
        1 => Just(b"\x9b1;31m".to_vec()),
        // Whole salient words (and an odd casing), so smart windows meet matching lines.
        1 => Just(b"error: ".to_vec()),
        1 => Just(b"PAnIC".to_vec()),
        1 => Just(b"ValueError".to_vec()),
    ];
    prop::collection::vec(atom, 0..120).prop_map(|v| v.concat())
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![
        Just(Direction::Tail),
        Just(Direction::Head),
        Just(Direction::Both),
        Just(Direction::Smart)
    ]
}

fn split_points(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    points.push(0);
    points.push(len);
    points.sort_unstable();
    points.dedup();
    points
}

fn run(
    config: &SinkConfig,
    input: &[u8],
    cuts: &[usize],
    store: Option<Arc<ArtifactStore>>,
) -> agent_exec_sink::Capture {
    let mut sink = OutputSink::new(config.clone(), store);
    let points = split_points(input.len(), cuts);
    for w in points.windows(2) {
        sink.push(Stream::Stdout, &input[w[0]..w[1]]).unwrap();
    }
    sink.finish_capture()
}

proptest! {
    // 512 cases by default; PROPTEST_CASES=N for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn result_does_not_depend_on_chunking(
        input in nasty_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_bytes in 1usize..80,
        max_lines in prop::option::of(1usize..6),
        direction in direction(),
        align_lines in any::<bool>(),
    ) {
        let config = SinkConfig { max_bytes, max_lines, direction, align_lines, ..SinkConfig::default() };
        let whole = run(&config, &input, &[], None);
        let chunked = run(&config, &input, &cuts, None);
        prop_assert_eq!(&whole.view, &chunked.view);
        prop_assert_eq!(whole.totals, chunked.totals);
        let bytewise = run(&config, &input, &(0..input.len()).collect::<Vec<_>>(), None);
        prop_assert_eq!(&whole.view, &bytewise.view);
    }

    #[test]
    fn view_is_within_budget_and_totals_are_exact(
        input in nasty_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_bytes in 1usize..80,
        direction in direction(),
    ) {
        let config = SinkConfig { max_bytes, direction, ..SinkConfig::default() };
        let c = run(&config, &input, &cuts, None);
        prop_assert!(c.view.output_bytes <= max_bytes as u64, "{} > {}", c.view.output_bytes, max_bytes);
        prop_assert_eq!(c.totals.merged.bytes, input.len() as u64);
        prop_assert_eq!(c.totals.merged.lines, count_lines(&input));
        prop_assert_eq!(c.totals.stdout, c.totals.merged);
        let clean = reference_sanitize(&input);
        prop_assert_eq!(c.view.truncated, clean.len() > max_bytes);
    }

    #[test]
    fn tail_view_is_the_end_of_the_reference(
        input in nasty_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_bytes in 1usize..80,
    ) {
        let config = SinkConfig { max_bytes, ..SinkConfig::default() };
        let c = run(&config, &input, &cuts, None);
        let clean = reference_sanitize(&input);
        prop_assert_eq!(c.view.text(), tail_of(&clean, max_bytes));
        if let Some(&[first, last]) = c.view.shown_ranges.first() {
            let shown_start = clean.len() - c.view.text().len();
            prop_assert_eq!(first, 1 + clean[..shown_start].matches('\n').count() as u64);
            prop_assert_eq!(last, first + c.view.output_lines - 1);
        }
    }

    #[test]
    fn head_view_is_the_start_of_the_reference(
        input in nasty_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_bytes in 1usize..80,
    ) {
        let config = SinkConfig { max_bytes, direction: Direction::Head, ..SinkConfig::default() };
        let c = run(&config, &input, &cuts, None);
        let clean = reference_sanitize(&input);
        prop_assert_eq!(c.view.text(), head_of(&clean, max_bytes));
    }

    #[test]
    fn whole_output_shown_when_it_fits(
        input in nasty_bytes(),
        direction in direction(),
    ) {
        let config = SinkConfig { max_bytes: 10_000, direction, ..SinkConfig::default() };
        let c = run(&config, &input, &[], None);
        prop_assert_eq!(c.view.text(), reference_sanitize(&input));
        prop_assert!(!c.view.truncated);
    }

    #[test]
    fn artifact_is_the_concatenated_input(
        input in nasty_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_bytes in 1usize..40,
        direction in direction(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(ArtifactStore::open(dir.path()).unwrap());
        let config = SinkConfig { max_bytes, direction, ..SinkConfig::default() };
        let c = run(&config, &input, &cuts, Some(store));
        match c.artifact {
            Some(a) => prop_assert_eq!(std::fs::read(a.path).unwrap(), input),
            None => prop_assert!(!c.view.truncated),
        }
    }

    #[test]
    fn interleaved_streams_count_exactly(
        parts in prop::collection::vec((any::<bool>(), nasty_bytes()), 0..8),
    ) {
        let mut sink = OutputSink::new(SinkConfig { split_streams: true, ..SinkConfig::default() }, None);
        let (mut out, mut err, mut all) = (Vec::new(), Vec::new(), Vec::new());
        for (is_err, bytes) in &parts {
            let stream = if *is_err { Stream::Stderr } else { Stream::Stdout };
            sink.push(stream, bytes).unwrap();
            if *is_err { err.extend_from_slice(bytes) } else { out.extend_from_slice(bytes) }
            all.extend_from_slice(bytes);
        }
        let c = sink.finish_capture();
        prop_assert_eq!(c.totals.stdout.bytes, out.len() as u64);
        prop_assert_eq!(c.totals.stderr.bytes, err.len() as u64);
        prop_assert_eq!(c.totals.stdout.lines, count_lines(&out));
        prop_assert_eq!(c.totals.stderr.lines, count_lines(&err));
        prop_assert_eq!(c.totals.merged.lines, count_lines(&all));
        prop_assert_eq!(c.stdout.unwrap().text(), reference_sanitize(&out));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn aligned_tail_is_whole_lines_of_the_reference(
        input in nasty_bytes(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        max_bytes in 1usize..80,
    ) {
        let config = SinkConfig { max_bytes, align_lines: true, ..SinkConfig::default() };
        let c = run(&config, &input, &cuts, None);
        let clean = reference_sanitize(&input);
        let plain = tail_of(&clean, max_bytes);
        prop_assert!(clean.ends_with(&c.view.text()));
        prop_assert!(plain.ends_with(&c.view.text()));
        let start = clean.len() - c.view.text().len();
        // Either it starts a line, or it is the single (partial) line the budget allows, or
        // the whole lines after its partial first line would fill less than half of it.
        let text = c.view.text();
        let starts_line = start == 0 || clean.as_bytes()[start - 1] == b'\n';
        let single = !text.trim_end_matches('\n').contains('\n');
        let after_first = text.find('\n').map_or(0, |i| text.len() - i - 1);
        prop_assert!(
            starts_line || single || after_first * 2 < text.len(),
            "{:?} of {:?}", text, clean
        );
    }
}
