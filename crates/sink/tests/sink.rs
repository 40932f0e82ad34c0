//! Behaviour of `OutputSink`, one rule per test.

mod common;

use std::sync::Arc;

use agent_exec_sink::{
    ArtifactError, ArtifactStore, Direction, OutputSink, Retention, Sink, SinkConfig, Stream,
    TruncatedBy, ViewPart,
};
use common::reference_sanitize;

fn sink(max_bytes: usize, direction: Direction, store: Option<Arc<ArtifactStore>>) -> OutputSink {
    OutputSink::new(
        SinkConfig {
            max_bytes,
            direction,
            ..SinkConfig::default()
        },
        store,
    )
}

fn store() -> (tempfile::TempDir, Arc<ArtifactStore>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ArtifactStore::open(dir.path().join("artifacts")).expect("store");
    (dir, Arc::new(store))
}

#[test]
fn threshold_five_keeps_the_tail_and_spills_everything() {
    let (_dir, store) = store();
    let mut s = sink(5, Direction::Tail, Some(store.clone()));
    s.push(Stream::Stdout, b"abc").unwrap();
    s.push(Stream::Stdout, b"def").unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.text(), "bcdef");
    assert!(c.view.truncated);
    assert_eq!(c.view.truncated_by, Some(TruncatedBy::Bytes));
    let artifact = c.artifact.expect("spilled");
    assert_eq!(std::fs::read(&artifact.path).unwrap(), b"abcdef");
    let (bytes, size) = store
        .read_bytes(&format!("artifact://{}", artifact.id), 0, None)
        .unwrap();
    assert_eq!((bytes.as_slice(), size), (&b"abcdef"[..], 6));
}

#[test]
fn tail_never_splits_a_character() {
    let mut s = sink(4, Direction::Tail, None);
    s.push(Stream::Stdout, "a😀b".as_bytes()).unwrap();
    assert_eq!(s.finish_capture().view.text(), "b");
}

#[test]
fn head_never_splits_a_character() {
    let mut s = sink(4, Direction::Head, None);
    s.push(Stream::Stdout, "a😀b".as_bytes()).unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.text(), "a");
    assert_eq!(c.view.shown_ranges, vec![[1, 1]]);
}

#[test]
fn a_flood_is_counted_exactly_and_spilled_whole() {
    let (_dir, store) = store();
    let mut s = OutputSink::new(SinkConfig::default(), Some(store));
    let data = vec![b'a'; 100_000];
    for chunk in data.chunks(4096) {
        s.push(Stream::Stdout, chunk).unwrap();
    }
    let c = s.finish_capture();
    assert_eq!(c.totals.merged.bytes, 100_000);
    assert_eq!(c.totals.stdout.bytes, 100_000);
    assert_eq!(c.totals.merged.lines, 1);
    assert!(c.view.output_bytes <= 51_200);
    assert_eq!(c.view.text().len(), 51_200);
    let artifact = c.artifact.expect("spilled");
    assert_eq!(std::fs::read(&artifact.path).unwrap().len(), 100_000);
}

#[test]
fn lines_are_counted_like_wc_plus_a_final_partial_line() {
    for (chunks, lines) in [
        (vec![&b"1\n2\n"[..]], 2),
        (vec![&b"a\n"[..], b"b\n\n", b"c"], 4),
        (vec![], 0),
        (vec![&b"no newline"[..]], 1),
    ] {
        let mut s = sink(1000, Direction::Tail, None);
        for c in &chunks {
            s.push(Stream::Stdout, c).unwrap();
        }
        assert_eq!(s.finish_capture().totals.merged.lines, lines, "{chunks:?}");
    }
}

#[test]
fn streams_are_merged_in_arrival_order_and_counted_apart() {
    let mut s = OutputSink::new(
        SinkConfig {
            split_streams: true,
            ..SinkConfig::default()
        },
        None,
    );
    s.push(Stream::Stdout, b"out1\n").unwrap();
    s.push(Stream::Stderr, b"err1\n").unwrap();
    s.push(Stream::Stdout, b"out2\n").unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.text(), "out1\nerr1\nout2\n");
    assert_eq!(c.stdout.expect("split").text(), "out1\nout2\n");
    assert_eq!(c.stderr.expect("split").text(), "err1\n");
    assert_eq!((c.totals.stdout.bytes, c.totals.stdout.lines), (10, 2));
    assert_eq!((c.totals.stderr.bytes, c.totals.stderr.lines), (5, 1));
    assert_eq!(c.totals.merged.lines, 3);
}

#[test]
fn both_keeps_head_and_tail_and_names_what_was_omitted() {
    let mut s = sink(20, Direction::Both, None);
    let text: String = (1..=100).map(|i| format!("{i}\n")).collect();
    s.push(Stream::Stdout, text.as_bytes()).unwrap();
    let c = s.finish_capture();
    assert_eq!(
        c.view.parts,
        vec![
            ViewPart::Shown {
                first_line: 1,
                text: "1\n2\n3\n4\n5\n".into()
            },
            ViewPart::Omitted {
                lines: 92,
                bytes: Some(272)
            },
            ViewPart::Shown {
                first_line: 98,
                text: "98\n99\n100\n".into()
            },
        ]
    );
    assert_eq!(c.view.shown_ranges.len(), 2);
    assert_eq!(c.view.shown_ranges[1][1], 100);
}

#[test]
fn both_split_is_configurable() {
    let mut s = OutputSink::new(
        SinkConfig {
            max_bytes: 20,
            direction: Direction::Both,
            head_share: 0.25,
            ..SinkConfig::default()
        },
        None,
    );
    s.push(Stream::Stdout, &[b'x'; 100]).unwrap();
    let c = s.finish_capture();
    let ViewPart::Shown { text: head, .. } = &c.view.parts[0] else {
        panic!("a head part first: {:?}", c.view.parts)
    };
    assert_eq!(head.len(), 5);
}

#[test]
fn line_budget_truncates_by_lines() {
    let mut s = OutputSink::new(
        SinkConfig {
            max_lines: Some(2),
            ..SinkConfig::default()
        },
        None,
    );
    s.push(Stream::Stdout, b"l1\nl2\nl3\nl4\n").unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.text(), "l3\nl4\n");
    assert_eq!(c.view.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(c.view.shown_ranges, vec![[3, 4]]);
}

#[test]
fn shown_range_is_in_raw_line_numbers() {
    let mut s = sink(10, Direction::Tail, None);
    let text: String = (1..=50).map(|i| format!("line{i}\n")).collect();
    s.push(Stream::Stdout, text.as_bytes()).unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.text(), "49\nline50\n");
    assert_eq!(c.view.shown_ranges, vec![[49, 50]]);
    assert_eq!(c.view.output_lines, 2);
}

#[test]
fn the_view_is_clean_text() {
    let mut s = sink(1000, Direction::Tail, None);
    s.push(
        Stream::Stdout,
        b"\x1b[32mok\x1b[0m\r\n10%\r20%\r100%\nnul\x00byte\xffend",
    )
    .unwrap();
    assert_eq!(
        s.finish_capture().view.text(),
        "ok\n100%\nnulbyte\u{fffd}end"
    );
}

#[test]
fn escapes_and_characters_split_across_pushes() {
    let input = "a\x1b[1;31mred😀\x1b]0;t\x07z".as_bytes();
    for split in 0..input.len() {
        let mut s = sink(1000, Direction::Tail, None);
        s.push(Stream::Stdout, &input[..split]).unwrap();
        s.push(Stream::Stdout, &input[split..]).unwrap();
        assert_eq!(
            s.finish_capture().view.text(),
            "ared😀z",
            "split at {split}"
        );
    }
}

#[test]
fn nul_bytes_do_not_end_the_view() {
    let mut s = sink(1000, Direction::Tail, None);
    s.push(Stream::Stdout, b"before\x00\x00after\n").unwrap();
    assert_eq!(s.finish_capture().view.text(), "beforeafter\n");
}

#[test]
fn an_output_that_fits_leaves_no_artifact() {
    let (_dir, store) = store();
    let mut s = sink(5, Direction::Tail, Some(store.clone()));
    // 12 raw bytes, 3 bytes of text: the raw stream spills, the view is not truncated.
    s.push(Stream::Stdout, b"\x1b[31mabc\x1b[0m").unwrap();
    let c = s.finish_capture();
    assert!(!c.view.truncated);
    assert!(c.artifact.is_none());
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn an_unwritable_artifact_is_a_warning_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(ArtifactStore::open(dir.path().join("a")).unwrap());
    std::fs::remove_dir(dir.path().join("a")).unwrap();
    std::fs::write(dir.path().join("a"), b"not a directory").unwrap();
    let mut s = sink(5, Direction::Tail, Some(store));
    s.push(Stream::Stdout, b"0123456789").unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.text(), "56789");
    assert!(c.artifact.is_none());
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("full output was not saved")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn artifact_stops_at_its_cap_and_says_so() {
    let (_dir, store) = store();
    let mut s = OutputSink::new(
        SinkConfig {
            max_bytes: 4,
            artifact_cap: 10,
            ..SinkConfig::default()
        },
        Some(store),
    );
    s.push(Stream::Stdout, b"0123456789abcdef").unwrap();
    let c = s.finish_capture();
    let a = c.artifact.expect("artifact");
    assert!(a.capped);
    assert_eq!(std::fs::read(&a.path).unwrap(), b"0123456789");
    assert!(
        c.warnings.iter().any(|w| w.contains("artifact cap")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn artifact_store_ids_resume_and_resolve() {
    let (dir, store) = store();
    let (id1, _, _) = store.create().unwrap();
    let (id2, _, _) = store.create().unwrap();
    assert_eq!((id1.as_str(), id2.as_str()), ("1", "2"));
    // A second store on the same directory (another process) resumes from the highest id.
    let other = ArtifactStore::open(dir.path().join("artifacts")).unwrap();
    let (id3, path3, _) = other.create().unwrap();
    assert_eq!(id3, "3");
    assert_eq!(store.resolve("artifact://3").unwrap(), path3);
    assert_eq!(store.resolve("3").unwrap(), path3);
}

#[test]
fn artifact_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, store) = store();
    let (_, path, _) = store.create().unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(store.dir()).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[test]
fn unknown_artifact_lists_the_available_ones() {
    let (_dir, store) = store();
    store.create().unwrap();
    store.create().unwrap();
    let err = store.resolve("artifact://99").unwrap_err();
    assert!(matches!(err, ArtifactError::NotFound { .. }));
    assert_eq!(err.to_string(), "no artifact with id 99; available: 1, 2");
    let err = store.resolve("nope").unwrap_err();
    assert!(err.to_string().contains("invalid artifact id"), "{err}");
}

#[test]
fn artifact_reads_byte_and_line_ranges() {
    use std::io::Write;
    let (_dir, store) = store();
    let (id, _, mut file) = store.create().unwrap();
    file.write_all(b"one\ntwo\nthree\nfour").unwrap();
    assert_eq!(store.read_lines(&id, 2, Some(3)).unwrap(), b"two\nthree\n");
    assert_eq!(store.read_lines(&id, 4, None).unwrap(), b"four");
    assert_eq!(store.read_bytes(&id, 4, Some(3)).unwrap().0, b"two");
}

#[test]
fn retention_drops_the_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(dir.path())
        .unwrap()
        .with_retention(Retention {
            max_count: 2,
            max_total_bytes: u64::MAX,
        });
    for _ in 0..4 {
        store.create().unwrap();
    }
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, vec!["3", "4"]);
}

#[test]
fn retention_by_bytes() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let store = ArtifactStore::open(dir.path())
        .unwrap()
        .with_retention(Retention {
            max_count: 100,
            max_total_bytes: 10,
        });
    for _ in 0..3 {
        let (_, _, mut f) = store.create().unwrap();
        f.write_all(b"123456").unwrap();
    }
    let _ = store.create().unwrap();
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, vec!["3", "4"]);
}

#[test]
fn reference_sanitizer_agrees_on_the_examples() {
    assert_eq!(reference_sanitize(b"10%\r20%\r100%\n"), "100%\n");
    assert_eq!(reference_sanitize(b"\x1b[31mred"), "red");
}

#[test]
fn smart_keeps_an_error_from_the_middle() {
    let mut s = sink(2000, Direction::Smart, None);
    let mut text = String::new();
    for i in 1..=1000 {
        if i == 500 {
            text.push_str("ValueError: the needle\n");
        } else {
            text.push_str(&format!("info line {i}\n"));
        }
    }
    s.push(Stream::Stdout, text.as_bytes()).unwrap();
    let c = s.finish_capture();
    assert!(
        c.view.text().contains("ValueError: the needle"),
        "{}",
        c.view.text()
    );
    assert!(
        c.view
            .text()
            .contains("info line 499\nValueError: the needle\ninfo line 501\n")
    );
    assert_eq!(c.view.salient_lines, 1);
    assert_eq!(c.view.shown_ranges.len(), 3, "{:?}", c.view.shown_ranges);
    assert_eq!(c.view.shown_ranges[1], [499, 501]);
    let omitted: Vec<_> = c
        .view
        .parts
        .iter()
        .filter(|p| matches!(p, ViewPart::Omitted { bytes: None, .. }))
        .collect();
    assert_eq!(omitted.len(), 2, "{:?}", c.view.parts);
    assert!(c.view.output_bytes <= 2000);
}

#[test]
fn smart_without_matches_is_exactly_the_tail() {
    let mut s = sink(1000, Direction::Smart, None);
    let text: String = (1..=1000).map(|i| format!("ok {i}\n")).collect();
    s.push(Stream::Stdout, text.as_bytes()).unwrap();
    let c = s.finish_capture();
    assert_eq!(c.view.salient_lines, 0);
    let mut tail = sink(1000, Direction::Tail, None);
    tail.push(Stream::Stdout, text.as_bytes()).unwrap();
    assert_eq!(c.view, tail.finish_capture().view);
}

#[test]
fn a_full_head_stops_the_producer_only_a_pipe_buffer_later() {
    let config = SinkConfig {
        max_lines: Some(2),
        direction: Direction::Head,
        stop_when_head_full: true,
        ..SinkConfig::default()
    };
    let mut s = OutputSink::new(config, None);
    assert!(s.push(Stream::Stdout, b"1\n2\n3\n").unwrap());
    assert!(
        s.push(Stream::Stdout, &vec![b'x'; 60 * 1024]).unwrap(),
        "a small overshoot runs on"
    );
    assert!(
        !s.push(Stream::Stdout, &vec![b'x'; 8 * 1024]).unwrap(),
        "past a pipe buffer it stops"
    );
    assert_eq!(s.finish_capture().view.text(), "1\n2\n");
}

/// Found by the fuzzer: a line matched by a pattern but not by an anchor (odd casing) was
/// salient when it straddled two pushes and not otherwise.
#[test]
fn smart_salience_does_not_depend_on_chunking() {
    let mut input =
        b"\xff\xff\x13\n{\n{PAN1111111111C\xb0\n\xffC\xb0\n\xff\xff\xff\x13\xff\xff\xff\xff\n"
            .to_vec();
    input.extend_from_slice(b"y\n{PAnIC\xb0\n\xff\xff");
    input.extend(std::iter::repeat_n(0x93u8, 100));
    input.extend_from_slice(b"\x13\x07\xff\xff\xff\n{\n{PANIC\xb0\n\xb0\n");
    let view = |chunk: usize| {
        let mut s = OutputSink::new(
            SinkConfig {
                max_bytes: 256,
                direction: Direction::Smart,
                ..SinkConfig::default()
            },
            None,
        );
        for c in input.chunks(chunk) {
            s.push(Stream::Stdout, c).unwrap();
        }
        s.finish_capture().view
    };
    let whole = view(input.len());
    for chunk in [1, 7, 19, 64] {
        assert_eq!(view(chunk), whole, "chunk {chunk}");
    }
}
