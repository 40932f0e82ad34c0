//! The `smart` window on the shapes of real logs (issue 16): what it keeps, how it ranks, and
//! what it says it left out.

use std::sync::Arc;

use agent_exec_sink::{
    ArtifactStore, Direction, OutputSink, Sink, SinkConfig, Stream, View, ViewPart,
};
use proptest::prelude::*;

fn view(input: &[u8], direction: Direction, max_bytes: usize, chunk: usize) -> View {
    let mut sink = OutputSink::new(
        SinkConfig {
            direction,
            max_bytes,
            ..SinkConfig::default()
        },
        None,
    );
    for c in input.chunks(chunk.max(1)) {
        sink.push(Stream::Stdout, c).unwrap();
    }
    sink.finish_capture().view
}

fn smart(input: &str, max_bytes: usize) -> View {
    view(input.as_bytes(), Direction::Smart, max_bytes, 4096)
}

/// Whether `line` is shown whole, as a line of one of the view's parts.
fn shows(view: &View, line: &str) -> bool {
    view.parts.iter().any(|p| match p {
        ViewPart::Shown { text, .. } => text.lines().any(|l| l == line),
        _ => false,
    })
}

fn filler(from: usize, to: usize) -> String {
    (from..to)
        .map(|i| format!("compiling module {i} ok\n"))
        .collect()
}

/// Class 1: a failure in the first lines, then thousands of unrelated lines, nothing salient in
/// the middle: the head that holds it stays.
#[test]
fn an_early_failure_stays_in_view_when_nothing_else_is_salient() {
    let input = format!(
        "step 1\nfatal: repository 'x' does not exist\n{}",
        filler(0, 5000)
    );
    let v = smart(&input, 4000);
    assert!(
        shows(&v, "fatal: repository 'x' does not exist"),
        "{}",
        v.text()
    );
    assert_eq!(v.shown_ranges.first().map(|r| r[0]), Some(1));
    assert!(v.output_bytes <= 4000);
}

/// Class 3: a flood of one harmless message takes one line and a count, and the rare traceback
/// in the middle is shown whole.
#[test]
fn a_flood_of_one_message_is_collapsed_and_the_rare_error_ranked_first() {
    let mut input = filler(0, 100);
    for i in 0..400 {
        input.push_str(&format!(
            "2024-05-01 12:{:02}:{:02} ERROR client {} disconnected\n",
            i / 60,
            i % 60,
            1000 + i * 7
        ));
        input.push_str(&format!("2024-05-01 request {i} served in {}ms\n", i % 13));
        if i == 200 {
            input.push_str("Traceback (most recent call last):\n  File \"worker.py\", line 12, in run\n    total = job['customer_id']\nKeyError: 'customer_id'\n");
        }
    }
    input.push_str(&filler(0, 400));
    let v = smart(&input, 8000);
    for line in [
        "Traceback (most recent call last):",
        "  File \"worker.py\", line 12, in run",
        "    total = job['customer_id']",
        "KeyError: 'customer_id'",
    ] {
        assert!(shows(&v, line), "{line} missing from\n{}", v.text());
    }
    let similar: Vec<u64> = v
        .parts
        .iter()
        .filter_map(|p| match p {
            ViewPart::Similar { count, .. } => Some(*count),
            _ => None,
        })
        .collect();
    assert!(similar.iter().any(|&c| c >= 300), "{:?}", v.parts);
    let disconnects = v
        .text()
        .lines()
        .filter(|l| l.contains("disconnected"))
        .count();
    assert!(disconnects <= 3, "{disconnects} disconnect lines shown");
}

/// Class 4: whole diagnostic blocks — the notes under a compiler error, a sanitizer's frames,
/// the header above a linter finding.
#[test]
fn diagnostic_blocks_are_kept_whole() {
    let blocks = [
        vec![
            "x.cpp: In function 'int main()':",
            "x.cpp:10:6: error: no matching function for call to 'f(int, int)'",
            "   10 |     f(1, 2);",
            "      |     ~^~~~~~",
            "x.cpp:3:6: note: candidate: 'void f(int)'",
            "x.cpp:3:6: note:   candidate expects 1 argument, 2 provided",
        ],
        vec![
            "==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014",
            "READ of size 4 at 0x602000000014 thread T0",
            "    #0 0x55d4c1 in read_item /src/item.c:7",
            "    #1 0x55d4f2 in main /src/main.c:21",
        ],
        vec![
            "In deploy.sh line 3:",
            "for f in $(ls *.txt); do",
            "         ^---------^ SC2045 (error): Iterating over ls output is fragile. Use globs.",
        ],
    ];
    for block in blocks {
        let input = format!(
            "{}{}\n{}",
            filler(0, 300),
            block.join("\n"),
            filler(300, 900)
        );
        let v = smart(&input, 6000);
        for line in &block {
            assert!(shows(&v, line), "{line} missing from\n{}", v.text());
        }
    }
}

/// Class 5: markers without a keyword.
#[test]
fn markers_without_a_keyword_are_salient() {
    for marker in [
        "CONFLICT (content): Merge conflict in src/app.c",
        "==31== Invalid read of size 4",
        "    parse_test.go:41: got 3, want 4",
        "=========== 212 passed, 4 skipped, 9 deselected in 3.20s ===========",
        "make: *** [Makefile:9: run] Killed",
        "signal: killed; exit status 137",
        "./run.sh: line 4: 4711 Segmentation fault      ./a.out",
    ] {
        let input = format!("{}{marker}\n{}", filler(0, 300), filler(300, 900));
        let v = smart(&input, 6000);
        assert!(shows(&v, marker), "{marker} missing from\n{}", v.text());
    }
}

/// Class 6: a needle deep inside a 200 KB line is shown, with a window around it.
#[test]
fn a_match_deep_in_a_long_line_is_shown_with_a_window_around_it() {
    let mut line = String::from("{\"records\":[");
    while line.len() < 100_000 {
        line.push_str("{\"id\":1,\"status\":\"ok\"},");
    }
    line.push_str("{\"id\":417,\"status\":\"error\",\"message\":\"connection reset by peer\"},");
    while line.len() < 200_000 {
        line.push_str("{\"id\":1,\"status\":\"ok\"},");
    }
    line.push_str("]}\n");
    let input = format!("{}{line}{}", filler(0, 100), filler(100, 800));
    for chunk in [1000, 4096, 65_536, input.len()] {
        let v = view(input.as_bytes(), Direction::Smart, 8000, chunk);
        let text = v.text();
        assert!(
            text.contains("\"status\":\"error\",\"message\":\"connection reset by peer\""),
            "chunk {chunk}: {text}"
        );
        assert!(
            text.contains("[… 999") || text.contains("[… 100"),
            "the cut is marked: {text}"
        );
        assert!(v.output_bytes <= 8000);
    }
}

/// A long salient line that is also the context of a higher-ranked line is still shown around
/// its match, not by its start.
#[test]
fn a_long_salient_line_shown_as_context_keeps_its_window() {
    let mut long = String::from("{\"records\":[");
    while long.len() < 3000 {
        long.push_str("{\"id\":1,\"status\":\"ok\"},");
    }
    long.push_str("{\"id\":2,\"status\":\"error\",\"message\":\"disk quota exceeded\"},");
    while long.len() < 5000 {
        long.push_str("{\"id\":1,\"status\":\"ok\"},");
    }
    let input = format!(
        "{}error: first failure\n{long}\n{}",
        filler(0, 100),
        filler(100, 800)
    );
    let v = smart(&input, 8000);
    assert!(shows(&v, "error: first failure"), "{}", v.text());
    assert!(
        v.text()
            .contains("\"status\":\"error\",\"message\":\"disk quota exceeded\""),
        "{}",
        v.text()
    );
}

/// The "more like it" marker counts only lines left out, and follows the last one shown.
#[test]
fn markers_count_only_what_is_left_out() {
    let input = format!(
        "{}error: foo 1\nerror: foo 2\n{}",
        filler(0, 300),
        filler(300, 900)
    );
    let v = smart(&input, 6000);
    assert!(
        shows(&v, "error: foo 1") && shows(&v, "error: foo 2"),
        "{}",
        v.text()
    );
    assert!(
        !v.parts
            .iter()
            .any(|p| matches!(p, ViewPart::Similar { .. })),
        "{:?}",
        v.parts
    );
    let mut input = String::new();
    for i in 1..=4 {
        input.push_str(&format!("error: x {i}\n"));
    }
    input.push_str(&filler(0, 1000));
    for i in 5..=54 {
        input.push_str(&format!("error: x {i}\n"));
    }
    input.push_str(&filler(1000, 2000));
    let v = smart(&input, 4000);
    let markers: Vec<(u64, u64)> = v
        .parts
        .iter()
        .filter_map(|p| match p {
            ViewPart::Similar { line, count } => Some((*line, *count)),
            _ => None,
        })
        .collect();
    let shown = v
        .text()
        .lines()
        .filter(|l| l.starts_with("error: x "))
        .count() as u64;
    assert_eq!(markers.len(), 1, "{:?}", v.parts);
    assert_eq!(markers[0].1, 54 - shown, "{:?}", v.parts);
}

/// Class 7: the summary of what was left out — the most frequent templates with their counts,
/// from the artifact, and the salient lines not shown with their line numbers.
#[test]
fn the_omitted_middle_is_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(ArtifactStore::open(dir.path()).unwrap());
    let mut input = String::new();
    for i in 0..2000 {
        input.push_str(&format!(
            "cc -O2 -Wall -c src/module_{i}.c -o build/module_{i}.o\n"
        ));
        if i % 40 == 7 {
            input.push_str(&format!(
                "src/module_{i}.c:{}:5: error: unknown type name 'size{i}'\n",
                i % 90 + 1
            ));
        }
    }
    let mut sink = OutputSink::new(
        SinkConfig {
            direction: Direction::Smart,
            max_bytes: 4000,
            ..SinkConfig::default()
        },
        Some(store),
    );
    sink.push(Stream::Stdout, input.as_bytes()).unwrap();
    let capture = sink.finish_capture();
    let summary = capture.view.omitted.expect("a summary");
    let top = &summary.frequent[0];
    assert!(top.count > 1800, "{summary:?}");
    assert_eq!(
        top.text,
        "cc -O<N> -Wall -c src/module_<N>.c -o build/module_<N>.o"
    );
    assert!(!summary.estimated);
    assert!(summary.salient_lines > 0, "{summary:?}");
    let first = summary.salient_line_numbers[0];
    let lines: Vec<&str> = input.lines().collect();
    assert!(lines[first as usize - 1].contains("error: unknown type name"));
}

/// A long line then a few short ones: the budget is filled from the end of the long line
/// rather than showing the few bytes of the short ones, in every direction that shows a tail.
#[test]
fn a_long_line_before_short_ones_fills_the_budget_from_its_end() {
    let input = format!("{}\n}}\n```\n", "a".repeat(10_000));
    for direction in [Direction::Tail, Direction::Both, Direction::Smart] {
        let mut sink = OutputSink::new(
            SinkConfig {
                direction,
                max_bytes: 4000,
                align_lines: true,
                ..SinkConfig::default()
            },
            None,
        );
        sink.push(Stream::Stdout, input.as_bytes()).unwrap();
        let view = sink.finish_capture().view;
        let text = view.text();
        assert!(
            text.ends_with("aaaa\n}\n```\n") && view.output_bytes > 3900,
            "{direction:?}: {} bytes: {:?}",
            view.output_bytes,
            &text[text.len().saturating_sub(40)..]
        );
    }
}

/// Bytes with long lines: salient words at random places of lines longer than the matched
/// window, so long lines are matched as they stream.
fn long_lines() -> impl Strategy<Value = Vec<u8>> {
    let line = (
        1usize..3000,
        prop::collection::vec((0usize..3000, 0usize..4), 0..3),
    )
        .prop_map(|(len, words)| {
            let mut line = vec![b'x'; len];
            for (at, w) in words {
                let word: &[u8] = [&b" error: "[..], b" Segmentation fault ", b"\xc3\xa9", b" "][w];
                let at = at.min(line.len());
                line.splice(at..at, word.iter().copied());
            }
            line.push(b'\n');
            line
        });
    prop::collection::vec(line, 1..12).prop_map(|v| v.concat())
}

/// Output shaped like diagnostics: errors, repeated messages, frames, notes, memory-checker
/// lines, tracebacks, blank lines, `\r`, long runs, odd bytes.
fn diagnostics() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        3 => Just(b"\n".to_vec()),
        2 => Just(b"error: bad thing\n".to_vec()),
        1 => Just(b"ERROR client 12 gone\n".to_vec()),
        1 => Just(b"ERROR client 977 gone\n".to_vec()),
        2 => Just(b"    at frame 3\n".to_vec()),
        1 => Just(b"note: here\n".to_vec()),
        1 => Just(b"==42==    at 0x1: f (a.c:3)\n".to_vec()),
        1 => Just(b"==42== Invalid read of size 4\n".to_vec()),
        1 => Just(b"Traceback (most recent call last):\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        2 => Just(b"info line\n".to_vec()),
        1 => Just("\u{e9}\u{1f600}".as_bytes().to_vec()),
        1 => Just(b"\xff\x9b31m".to_vec()),
        1 => (1usize..2500).prop_map(|n| vec![b'x'; n]),
        1 => Just(b" fatal ".to_vec()),
    ];
    prop::collection::vec(atom, 0..200).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
        ..ProptestConfig::default()
    })]

    /// Long lines are matched as they stream: the view does not depend on where chunks end.
    #[test]
    fn long_line_matching_does_not_depend_on_chunking(
        input in long_lines(),
        chunk in 1usize..5000,
        max_bytes in 200usize..4000,
    ) {
        let whole = view(&input, Direction::Smart, max_bytes, input.len());
        let chunked = view(&input, Direction::Smart, max_bytes, chunk);
        prop_assert_eq!(&whole, &chunked);
        prop_assert!(whole.output_bytes <= max_bytes as u64);
    }

    /// A cut window fills at least half its budget, even when a long line comes before a few
    /// short ones (the end of the long line fills it): never a few bytes of a large output.
    /// (A `smart` view that keeps a salient line of the middle shows it around its match, a
    /// bounded window, and may show less.)
    #[test]
    fn a_cut_window_fills_at_least_half_its_budget(
        input in long_lines(),
        direction in prop_oneof![Just(Direction::Tail), Just(Direction::Both), Just(Direction::Smart)],
        max_bytes in 200usize..4000,
    ) {
        let mut sink = OutputSink::new(
            SinkConfig { direction, max_bytes, align_lines: true, ..SinkConfig::default() },
            None,
        );
        sink.push(Stream::Stdout, &input).unwrap();
        let view = sink.finish_capture().view;
        if input.len() > max_bytes && view.salient_lines == 0 {
            // A character cut at the edge costs at most 3 bytes, twice.
            prop_assert!(
                view.output_bytes * 2 + 8 >= max_bytes as u64,
                "{} of {} bytes shown", view.output_bytes, max_bytes
            );
        }
    }

    /// On diagnostic-shaped output, with the CLI's settings: the view stays within its byte
    /// and line budgets and does not depend on where the chunks end.
    #[test]
    fn smart_stays_within_budget_and_chunking_free(
        input in diagnostics(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
        max_bytes in 1usize..4000,
        max_lines in prop::option::of(1usize..50),
    ) {
        let run = |cuts: &[usize]| {
            let mut sink = OutputSink::new(
                SinkConfig {
                    max_bytes,
                    max_lines,
                    direction: Direction::Smart,
                    align_lines: true,
                    ..SinkConfig::default()
                },
                None,
            );
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
            points.extend([0, input.len()]);
            points.sort_unstable();
            points.dedup();
            for w in points.windows(2) {
                sink.push(Stream::Stdout, &input[w[0]..w[1]]).unwrap();
            }
            sink.finish_capture().view
        };
        let whole = run(&[]);
        prop_assert_eq!(&whole, &run(&cuts));
        prop_assert!(whole.output_bytes <= max_bytes as u64);
        if let Some(l) = max_lines {
            prop_assert!(whole.output_lines <= l as u64, "{} lines > {}", whole.output_lines, l);
        }
    }

    /// Never worse than the tail: every salient line a plain tail of the same budget shows
    /// whole, the smart view shows too.
    #[test]
    fn smart_keeps_every_salient_line_the_tail_shows(
        lines in prop::collection::vec((0usize..8, 0usize..6, 0usize..6), 1..400),
        max_bytes in 100usize..3000,
    ) {
        const WORDS: [&str; 6] = ["alpha", "bravo", "delta", "gamma", "kilo", "lima"];
        let mut input = String::new();
        for (i, (kind, a, b)) in lines.iter().enumerate() {
            match kind {
                0 => input.push_str(&format!("error: {} {} failed\n", WORDS[*a], WORDS[*b])),
                1 => input.push_str(&format!("    note: {} here\n", WORDS[*a])),
                // Distinct tests whose lines differ only in their paths.
                2 => input.push_str(&format!(
                    "FAILED tests/{}/test_{}.py::test_{i} - assert {i} == 0\n",
                    WORDS[*a], WORDS[*b]
                )),
                _ => input.push_str(&format!("line {i} is fine\n")),
            }
        }
        let smart = view(input.as_bytes(), Direction::Smart, max_bytes, 4096);
        let tail = view(input.as_bytes(), Direction::Tail, max_bytes, 4096);
        let tail_text = tail.text();
        let mut tail_lines: Vec<&str> = tail_text.lines().collect();
        if tail.truncated && !tail_lines.is_empty() {
            // The first line of a byte-cut tail may be partial: not a line the tail shows.
            tail_lines.remove(0);
        }
        for line in tail_lines
            .iter()
            .filter(|l| l.starts_with("error: ") || l.starts_with("FAILED "))
        {
            prop_assert!(shows(&smart, line), "{} lost:\n{}", line, smart.text());
        }
        prop_assert!(smart.output_bytes <= max_bytes as u64);
    }
}
