//! The compact view (contract §3): an output that fits is shown with the lines a model does not
//! need folded into counted markers — per kind of output — never a salient line, a summary or
//! a row the model asked for; the raw stream is kept as an artifact; a raw request is the text
//! as it was.

use std::sync::Arc;

use agent_exec_sink::{
    ArtifactStore, Direction, OutputSink, Sink, SinkConfig, Stream, View, ViewPart,
};
use proptest::prelude::*;

struct Shown {
    view: View,
    artifact: Option<Vec<u8>>,
}

fn capture(data: &[u8], command: Option<&str>, chunk: usize) -> Shown {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Arc::new(ArtifactStore::open(dir.path()).expect("an artifact store"));
    let mut sink = OutputSink::new(
        SinkConfig {
            direction: Direction::Smart,
            align_lines: true,
            compact: command.map(str::to_owned),
            ..SinkConfig::default()
        },
        Some(store),
    );
    for c in data.chunks(chunk.max(1)) {
        sink.push(Stream::Stdout, c).expect("infallible");
    }
    let capture = sink.finish_capture();
    let artifact = capture
        .artifact
        .as_ref()
        .map(|a| std::fs::read(&a.path).expect("the artifact is readable"));
    Shown {
        view: capture.view,
        artifact,
    }
}

fn shown_lines(view: &View) -> Vec<String> {
    view.text().lines().map(str::to_owned).collect()
}

/// Lines folded, by the markers.
fn folded_lines(view: &View) -> u64 {
    view.parts
        .iter()
        .map(|p| match p {
            ViewPart::Folded { lines, .. } => *lines,
            ViewPart::Similar { count, .. } => *count,
            _ => 0,
        })
        .sum()
}

fn cargo_test(passing: usize, failing: &[usize]) -> String {
    let mut out = format!("running {passing} tests\n");
    for i in 0..passing {
        if failing.contains(&i) {
            out.push_str(&format!("test tests::case_{i} ... FAILED\n"));
        } else {
            out.push_str(&format!("test tests::case_{i} ... ok\n"));
        }
    }
    out.push_str("\nfailures:\n\n");
    for i in failing {
        out.push_str(&format!(
            "---- tests::case_{i} stdout ----\nthread 'tests::case_{i}' panicked at src/lib.rs:{i}:5:\nassertion `left == right` failed\n  left: {i}\n right: 0\n\n"
        ));
    }
    out.push_str(&format!(
        "test result: FAILED. {} passed; {} failed; 0 ignored; 0 measured\n",
        passing - failing.len(),
        failing.len()
    ));
    out
}

#[test]
fn a_test_report_folds_its_passing_tests_and_keeps_failures_and_the_summary() {
    let out = cargo_test(300, &[120]);
    let shown = capture(out.as_bytes(), Some("cargo test"), 4096);
    let lines = shown_lines(&shown.view);
    for needed in [
        "test tests::case_120 ... FAILED",
        "thread 'tests::case_120' panicked at src/lib.rs:120:5:",
        "assertion `left == right` failed",
        "test result: FAILED. 299 passed; 1 failed; 0 ignored; 0 measured",
        "running 300 tests",
    ] {
        assert!(lines.iter().any(|l| l == needed), "{needed:?} not shown");
    }
    let folded = shown
        .view
        .folded
        .as_ref()
        .expect("passing tests are folded");
    assert!(folded.lines >= 290, "{folded:?}");
    assert_eq!(folded.lines, folded_lines(&shown.view));
    assert!(shown.view.output_bytes * 4 < out.len() as u64);
    // The raw stream is kept, byte for byte.
    assert_eq!(shown.artifact.as_deref(), Some(out.as_bytes()));
    assert!(!shown.view.truncated);
}

#[test]
fn build_and_install_logs_fold_their_progress_and_keep_warnings_and_errors() {
    let mut build = String::new();
    for i in 0..80 {
        build.push_str(&format!("   Compiling dep_{i} v0.{i}.1\n"));
    }
    build.push_str("warning: unused variable: `x`\n --> src/main.rs:3:9\n  |\n3 |     let x = 1;\n  |         ^ help: prefix it\n\n");
    build.push_str("error[E0308]: mismatched types\n --> src/main.rs:9:5\n");
    build.push_str("error: could not compile `app` (bin \"app\") due to 1 previous error\n");
    let shown = capture(build.as_bytes(), Some("cargo build"), 512);
    let lines = shown_lines(&shown.view);
    for needed in [
        "warning: unused variable: `x`",
        "error[E0308]: mismatched types",
        " --> src/main.rs:9:5",
        "error: could not compile `app` (bin \"app\") due to 1 previous error",
    ] {
        assert!(lines.iter().any(|l| l == needed), "{needed:?} not shown");
    }
    assert!(shown.view.folded.is_some());

    let mut pip = String::new();
    for i in 0..60 {
        pip.push_str(&format!(
            "Requirement already satisfied: pkg{i}>=1.0 in ./venv/lib/python3.11/site-packages (from app) (1.{i})\n"
        ));
    }
    pip.push_str("ERROR: Could not find a version that satisfies the requirement nopkg==9\n");
    pip.push_str("Successfully installed app-1.0\n");
    let shown = capture(
        pip.as_bytes(),
        Some("pip install -r requirements.txt"),
        4096,
    );
    let text = shown.view.text();
    assert!(
        text.contains("ERROR: Could not find a version that satisfies the requirement nopkg==9\n")
    );
    assert!(text.contains("Successfully installed app-1.0\n"));
    // All but the line above the error, kept as its context.
    assert_eq!(shown.view.folded.as_ref().map(|f| f.lines), Some(59));
}

#[test]
fn what_the_model_asked_to_read_is_never_folded() {
    // Listings, files, diffs, search hits, tables: rows that look alike are the answer.
    let mut listing = String::new();
    for i in 0..400 {
        listing.push_str(&format!(
            "-rw-r--r-- 1 root root {} 2024-03-01 09:30 test_{i}.py ... ok\n",
            1000 + i
        ));
    }
    for command in [
        "ls -la",
        "find . -type f",
        "cat results.txt",
        "git log --oneline",
        "grep -rn ok .",
        "ps aux",
    ] {
        let shown = capture(listing.as_bytes(), Some(command), 4096);
        assert!(shown.view.folded.is_none(), "{command}");
        assert_eq!(shown.view.text(), listing, "{command}");
    }
}

#[test]
fn nothing_is_folded_when_the_raw_output_cannot_be_kept_or_nothing_can_be_judged() {
    let report = cargo_test(300, &[9]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Arc::new(ArtifactStore::open(dir.path()).expect("an artifact store"));
    let sink_with = |config: SinkConfig| {
        let mut sink = OutputSink::new(config, Some(store.clone()));
        sink.push(Stream::Stdout, report.as_bytes())
            .expect("infallible");
        sink.finish_capture()
    };
    let compact = || SinkConfig {
        direction: Direction::Smart,
        compact: Some("cargo test".to_owned()),
        ..SinkConfig::default()
    };
    // The artifact stops at its cap: the folded lines could not be read back.
    let capped = sink_with(SinkConfig {
        artifact_cap: 100,
        ..compact()
    });
    assert!(capped.view.folded.is_none());
    assert_eq!(capped.view.text(), report);
    assert!(capped.artifact.is_none());
    // Salient patterns that do not compile find no error: nothing may be folded past one.
    let mut config = compact();
    config.salient.patterns = vec!["(".to_owned()];
    let blind = sink_with(config);
    assert!(blind.view.folded.is_none());
    assert_eq!(blind.view.text(), report);
    // No file is left behind by either.
    assert_eq!(std::fs::read_dir(dir.path()).expect("readable").count(), 0);
}

#[test]
fn failed_tests_of_spec_reporters_and_failure_lists_are_kept() {
    let mut out = String::from("PASS src/a.test.js\n");
    for i in 0..200 {
        out.push_str(&format!("  ✓ adds {i} + {i} ({i} ms)\n"));
    }
    for i in 0..8 {
        out.push_str(&format!("  ✕ divides {i} by zero ({i} ms)\n"));
    }
    out.push_str("\nfailures:\n");
    for i in 0..8 {
        out.push_str(&format!("    tests::case_{i}\n"));
    }
    out.push_str("\nTests: 8 failed, 200 passed, 208 total\n");
    let shown = capture(out.as_bytes(), Some("npx jest"), 4096);
    let text = shown.view.text();
    for i in 0..8 {
        assert!(
            text.contains(&format!("  ✕ divides {i} by zero ({i} ms)\n")),
            "{text}"
        );
        assert!(text.contains(&format!("    tests::case_{i}\n")), "{text}");
    }
    assert!(shown.view.folded.is_some());
}

#[test]
fn version_control_folds_only_its_hints_and_progress_never_a_diff() {
    // A diff of a test file and a log: lines that would fold in a report stay.
    let mut diff =
        String::from("diff --git a/t.tap b/t.tap\n--- a/t.tap\n+++ b/t.tap\n@@ -1,400 +1,400 @@\n");
    for i in 0..400 {
        diff.push_str(&format!(" ok {i} - case {i}\n+test t::case_{i} ... ok\n"));
    }
    for command in ["git diff", "git log -p", "git show HEAD"] {
        let shown = capture(diff.as_bytes(), Some(command), 4096);
        assert!(shown.view.folded.is_none(), "{command}");
        assert_eq!(shown.view.text(), diff, "{command}");
    }
    // `git status` with its hints: the hints fold, every file stays.
    let mut status = String::from("On branch main\nChanges not staged for commit:\n");
    for i in 0..30 {
        status.push_str("  (use \"git add <file>...\" to update what will be committed)\n");
        status.push_str(
            "  (use \"git restore <file>...\" to discard changes in working directory)\n",
        );
        status.push_str("  (use \"git rm --cached <file>...\" to unstage)\n");
        status.push_str(&format!("\tmodified:   src/module_{i}.rs\n\n"));
    }
    status.push_str("no changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
    let shown = capture(status.as_bytes(), Some("git status"), 4096);
    let text = shown.view.text();
    for i in 0..30 {
        assert!(
            text.contains(&format!("\tmodified:   src/module_{i}.rs\n")),
            "{text}"
        );
    }
    assert!(!text.contains("(use \"git restore"), "{text}");
    assert!(text.contains("no changes added to commit"));
    assert_eq!(shown.view.folded.as_ref().map(|f| f.lines), Some(90));
}

#[test]
fn an_unknown_program_folds_what_its_lines_show_to_be_a_report() {
    // `./run_tests.sh`: known only by its lines.
    let out = cargo_test(200, &[7]);
    let shown = capture(out.as_bytes(), Some("./run_tests.sh"), 4096);
    assert!(shown.view.folded.is_some());
    // A plain list of numbers is not a report: nothing is folded.
    let numbers: String = (0..9000).map(|i| format!("{i}\n")).collect();
    let shown = capture(numbers.as_bytes(), Some("seq 9000"), 4096);
    assert!(shown.view.folded.is_none());
}

#[test]
fn small_outputs_and_raw_requests_are_shown_as_they_are() {
    let small = cargo_test(10, &[]);
    let shown = capture(small.as_bytes(), Some("cargo test"), 4096);
    assert!(shown.view.folded.is_none());
    assert_eq!(shown.view.text(), small);
    assert!(
        shown.artifact.is_none(),
        "an output that fits keeps no artifact"
    );
    let big = cargo_test(300, &[3]);
    let raw = capture(big.as_bytes(), None, 4096);
    assert_eq!(raw.view.text(), big);
    assert!(raw.view.folded.is_none());
    assert!(raw.artifact.is_none());
}

#[test]
fn a_listing_too_long_for_the_window_is_folded_by_directory_with_every_path_whole() {
    // `find`: a few big generated directories and many small ones, 2.4 times the budget.
    let mut listing = String::new();
    for d in 0..60 {
        let files = if d % 20 == 7 { 700 } else { 12 };
        for f in 0..files {
            listing.push_str(&format!("./apps/web/src/area_{d:02}/module_{f:03}.ts\n"));
        }
    }
    listing.push_str("./apps/web/src/features/payments/api/refund.ts\n");
    listing.push_str("./README.md\n");
    assert!(listing.len() > 2 * 51_200);
    let shown = capture(listing.as_bytes(), Some("find . -name '*.ts'"), 65_536);
    let view = &shown.view;
    assert!(view.truncated);
    assert!(view.output_bytes <= 51_200, "{}", view.output_bytes);
    let raw: Vec<&str> = listing.lines().collect();
    for part in &view.parts {
        if let ViewPart::Shown { first_line, text } = part {
            for (k, line) in text.lines().enumerate() {
                assert_eq!(raw[*first_line as usize - 1 + k], line);
            }
        }
    }
    let text = view.text();
    assert!(text.contains("./apps/web/src/features/payments/api/refund.ts\n"));
    assert!(text.contains("./apps/web/src/area_08/module_011.ts\n"));
    let folded: Vec<&str> = view
        .parts
        .iter()
        .filter_map(|p| match p {
            ViewPart::Folded { what, .. } => Some(what.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        folded,
        [
            "entries in ./apps/web/src/area_07/",
            "entries in ./apps/web/src/area_27/",
            "entries in ./apps/web/src/area_47/"
        ]
    );
    assert_eq!(view.output_lines + folded_lines(view), raw.len() as u64);
    assert_eq!(shown.artifact.as_deref(), Some(listing.as_bytes()));
    // The same listing from a program that is not a listing: the window as before.
    let window = capture(listing.as_bytes(), Some("./gen.sh"), 65_536);
    assert!(window.view.folded.is_none());
}

/// Lines of an everyday report: passing tests, progress, salient lines, summaries, other text.
fn report_line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0u32..500).prop_map(|i| format!("test t::case_{i} ... ok")),
        3 => (0u32..500).prop_map(|i| format!("   Compiling dep_{i} v1.{i}.0")),
        2 => (0u32..500).prop_map(|i| format!("Requirement already satisfied: p{i} in ./venv")),
        2 => (0u32..500).prop_map(|i| format!("INFO worker {i} processed batch {i}")),
        1 => (0u32..500).prop_map(|i| format!("test t::case_{i} ... FAILED")),
        1 => (0u32..500).prop_map(|i| format!("error[E0{i}]: mismatched types at {i}")),
        1 => (0u32..500).prop_map(|i| format!("warning: unused import {i}")),
        1 => (0u32..500).prop_map(|i| format!("Traceback frame {i}: ValueError")),
        1 => (0u32..500).prop_map(|i| format!("test result: ok. {i} passed; 0 failed")),
        1 => Just(String::new()),
        1 => (0u32..500).prop_map(|i| format!("  note: see line {i}")),
    ]
}

fn is_needed(line: &str) -> bool {
    line.contains("FAILED")
        || line.contains("error")
        || line.contains("warning")
        || line.contains("Error")
        || line.contains("test result")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Folding never drops a salient line or a summary; every line is either shown or counted
    /// by a marker, in order; the artifact holds the raw stream; the view is a function of
    /// the text, not of the chunking.
    #[test]
    fn folding_keeps_every_needed_line_and_accounts_for_the_rest(
        lines in prop::collection::vec(report_line(), 0..900),
        command in prop::sample::select(vec!["cargo test", "make", "pip install .", "./ci.sh", "bash -c x"]),
        chunk in 1usize..9000,
    ) {
        let mut out = lines.join("\n");
        out.push('\n');
        prop_assume!(out.len() <= 51_200);
        let shown = capture(out.as_bytes(), Some(command), chunk);
        let view = &shown.view;
        let text = view.text();
        let shown_set: std::collections::HashSet<&str> = text.lines().collect();
        for line in lines.iter().filter(|l| is_needed(l)) {
            prop_assert!(shown_set.contains(line.as_str()), "{line:?} was folded");
        }
        let total = out.lines().count() as u64;
        prop_assert_eq!(view.output_lines + folded_lines(view), total);
        match &view.folded {
            Some(f) => {
                prop_assert_eq!(f.lines, folded_lines(view));
                prop_assert_eq!(shown.artifact.as_deref(), Some(out.as_bytes()));
                // Shown parts are the raw lines, in order, at the line numbers they name.
                let raw: Vec<&str> = out.lines().collect();
                for part in &view.parts {
                    if let ViewPart::Shown { first_line, text } = part {
                        for (k, l) in text.lines().enumerate() {
                            prop_assert_eq!(raw[*first_line as usize - 1 + k], l);
                        }
                    }
                }
            }
            None => prop_assert_eq!(text, out.clone()),
        }
        let again = capture(out.as_bytes(), Some(command), 65_536);
        prop_assert_eq!(&again.view, view);
    }

    /// A raw request shows what the window showed before compact views existed.
    #[test]
    fn a_raw_view_is_the_plain_window(
        lines in prop::collection::vec(report_line(), 0..900),
        chunk in 1usize..9000,
    ) {
        let mut out = lines.join("\n");
        out.push('\n');
        let raw = capture(out.as_bytes(), None, chunk);
        prop_assert!(raw.view.folded.is_none());
        if out.len() <= 51_200 {
            prop_assert_eq!(raw.view.text(), out.clone());
        }
        let compact = capture(out.as_bytes(), Some("cargo test"), chunk);
        if compact.view.folded.is_none() {
            prop_assert_eq!(compact.view, raw.view);
        }
    }
}
