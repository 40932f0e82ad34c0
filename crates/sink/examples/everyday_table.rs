//! Prints, for the everyday commands of `tests/everyday` (real outputs of the commands an agent
//! runs, each with the lines a model must see), the tokens a model reads — o200k_base, counted
//! with `bpe-openai`, the tokenizer data OpenAI's `tiktoken` uses — and the needed lines kept:
//! the raw output, agent-exec's view (compact, the default) and rtk's output of the same
//! command in the same state (`NAME.rtk`, recorded by `make_everyday.sh`). Run with
//! `cargo xtask corpus`.
//!
//! `EVERYDAY_SHOW=NAME` prints one case's text instead.
//!
//! agent-exec's text is drawn here with the markers and notices `agent-exec-core` writes
//! (`render.rs`), so that the count is of what a model reads.

use std::path::Path;
use std::sync::Arc;

use agent_exec_sink::{
    ArtifactStore, Direction, OutputSink, Sink, SinkConfig, Stream, View, ViewPart,
};

struct Case {
    name: String,
    command: String,
    raw: String,
    rtk: Option<String>,
    needles: Vec<String>,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/everyday");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the everyday corpus")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log").map(str::to_owned)
        })
        .collect();
    names.sort();
    let read = |name: &str, ext: &str| std::fs::read(dir.join(format!("{name}.{ext}"))).ok();
    names
        .into_iter()
        .map(|name| Case {
            command: read(&name, "cmd")
                .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
                .unwrap_or_default(),
            raw: String::from_utf8_lossy(&read(&name, "log").unwrap_or_default()).into_owned(),
            rtk: read(&name, "rtk").map(|b| String::from_utf8_lossy(&b).into_owned()),
            needles: read(&name, "needle")
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .lines()
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            name,
        })
        .collect()
}

/// The text a model reads of `raw` run as `command`: the window (compact) and its notices.
fn agent_exec_text(raw: &str, command: &str) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Arc::new(ArtifactStore::open(dir.path()).expect("an artifact store"));
    let mut sink = OutputSink::new(
        SinkConfig {
            direction: Direction::Smart,
            align_lines: true,
            compact: Some(command.to_owned()),
            ..SinkConfig::default()
        },
        Some(store),
    );
    for chunk in raw.as_bytes().chunks(64 * 1024) {
        sink.push(Stream::Stdout, chunk).expect("infallible");
    }
    let capture = sink.finish_capture();
    render(&capture.view, capture.totals.merged.lines)
}

/// As `agent-exec-core`'s `render.rs` draws a view.
fn render(view: &View, total_lines: u64) -> String {
    let mut text = String::new();
    let marker = |text: &mut String, m: String| {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&m);
        text.push('\n');
    };
    for part in &view.parts {
        match part {
            ViewPart::Shown { text: t, .. } => text.push_str(t),
            ViewPart::Omitted { lines, .. } => {
                marker(&mut text, format!("[... {lines} lines omitted ...]"));
            }
            ViewPart::Similar { line, count } => marker(
                &mut text,
                format!("[... {count} more lines like line {line} omitted ...]"),
            ),
            ViewPart::Folded { lines, what, .. } => {
                marker(&mut text, format!("[... {lines} {what} folded ...]"));
            }
            _ => {}
        }
    }
    if let Some(o) = &view.omitted {
        if !o.frequent.is_empty() {
            let t: Vec<String> = o
                .frequent
                .iter()
                .map(|t| format!("{} lines like \"{}\"", t.count, t.text))
                .collect();
            text.push_str(&format!(
                "\n[Most frequent omitted lines: {}]",
                t.join(", ")
            ));
        }
        if !o.standing_out.is_empty() {
            let t: Vec<String> = o
                .standing_out
                .iter()
                .map(|l| format!("{}: {}", l.line, l.text))
                .collect();
            text.push_str(&format!(
                "\n[Omitted lines that stand out, each the only one of its kind:\n{}]",
                t.join("\n")
            ));
        }
    }
    if view.truncated {
        let ranges: Vec<String> = view
            .shown_ranges
            .iter()
            .map(|[a, b]| format!("{a}-{b}"))
            .collect();
        text.push_str(&format!(
            "\n\n[Showing lines {} of {total_lines} (50.0KB limit). Full: artifact://17]",
            ranges.join(", ")
        ));
    }
    if let Some(f) = &view.folded {
        let groups: Vec<String> = f.groups.iter().map(|(w, n)| format!("{n} {w}")).collect();
        text.push_str(&format!(
            "\n\n[Compact view: {} lines folded ({}). Raw output: artifact://17 (agent-exec artifact 17 --grep REGEX, or artifact_read), or run again with view: \"raw\"]",
            f.lines,
            groups.join(", ")
        ));
    }
    text
}

/// Needed lines shown whole (or named as standing out, which the text shows whole too).
fn kept(text: &str, needles: &[String]) -> usize {
    needles
        .iter()
        .filter(|n| {
            text.lines()
                .any(|l| l == n.as_str() || l.ends_with(&format!(": {n}")))
        })
        .count()
}

fn main() {
    let tokens = |t: &str| bpe_openai::o200k_base().count(t);
    let cases = cases();
    // `EVERYDAY_SHOW=NAME` prints that case's text as a model reads it, and nothing else.
    if let Ok(name) = std::env::var("EVERYDAY_SHOW") {
        for case in cases.iter().filter(|c| c.name == name) {
            println!("{}", agent_exec_text(&case.raw, &case.command));
        }
        return;
    }
    println!("o200k_base tokens a model reads, and needed lines kept (whole lines)\n");
    println!("| command | raw | agent-exec | rtk | needed | agent-exec kept | rtk kept |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    // [raw, ours, rtk] tokens and [needles, ours, rtk] kept, over outputs above 4 KiB and all.
    let mut big = ([0usize; 3], [0usize; 3]);
    let mut all = ([0usize; 3], [0usize; 3]);
    for case in &cases {
        let ours = agent_exec_text(&case.raw, &case.command);
        let rtk = case.rtk.clone().unwrap_or_else(|| case.raw.clone());
        let t = [tokens(&case.raw), tokens(&ours), tokens(&rtk)];
        let k = [
            case.needles.len(),
            kept(&ours, &case.needles),
            kept(&rtk, &case.needles),
        ];
        for (sum, add) in [(&mut all, true), (&mut big, case.raw.len() > 4096)] {
            if add {
                for i in 0..3 {
                    sum.0[i] += t[i];
                    sum.1[i] += k[i];
                }
            }
        }
        let pct = |n: usize| format!("{n} ({:.0} %)", 100.0 * n as f64 / t[0].max(1) as f64);
        println!(
            "| `{}` ({}) | {} | {} | {} | {} | {} | {} |",
            case.command.chars().take(60).collect::<String>(),
            case.name,
            t[0],
            pct(t[1]),
            pct(t[2]),
            k[0],
            k[1],
            k[2]
        );
    }
    for (label, (t, k)) in [("outputs over 4 KiB", big), ("all outputs", all)] {
        println!(
            "\n{label}: agent-exec {:.1} % of the raw tokens, {}/{} needed lines; rtk {:.1} %, {}/{}",
            100.0 * t[1] as f64 / t[0].max(1) as f64,
            k[1],
            k[0],
            100.0 * t[2] as f64 / t[0].max(1) as f64,
            k[2],
            k[0]
        );
    }
}
