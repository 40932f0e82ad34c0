//! The corpus of real tool output (`tests/corpus/README.md`) and its needles, shared by the
//! corpus test and `cargo xtask corpus`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agent_exec_sink::{Direction, OutputSink, Sink, SinkConfig, Stream, View};

/// One log and what a model must see of it.
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) data: Vec<u8>,
    /// Lines that must be shown whole (`NAME.needle`, one per line).
    pub(crate) lines: Vec<String>,
    /// Text that must be shown somewhere (`NAME.substr`, one per line): a part of a long line.
    pub(crate) substrings: Vec<String>,
}

impl Case {
    /// How many needles `view` shows.
    pub(crate) fn kept(&self, view: &View) -> usize {
        self.each_kept(view).into_iter().filter(|k| *k).count()
    }

    /// The needles `view` shows, each as a flag.
    pub(crate) fn each_kept(&self, view: &View) -> Vec<bool> {
        // Parts joined by a newline, as the rendered text separates them with a marker line.
        let text = shown_text(view);
        // Lines the summary names verbatim are shown too.
        let standing_out: Vec<&str> = view
            .omitted
            .iter()
            .flat_map(|o| o.standing_out.iter().map(|l| l.text.as_str()))
            .collect();
        self.lines
            .iter()
            .map(|n| {
                text.lines()
                    .chain(standing_out.iter().copied())
                    .any(|l| l == n.as_str())
            })
            .chain(self.substrings.iter().map(|s| text.contains(s.as_str())))
            .collect()
    }

    pub(crate) fn needles(&self) -> usize {
        self.lines.len() + self.substrings.len()
    }
}

/// The shown parts, each ending in a newline.
fn shown_text(view: &View) -> String {
    let mut text = String::new();
    for part in &view.parts {
        if let agent_exec_sink::ViewPart::Shown { text: t, .. } = part {
            text.push_str(t);
            if !t.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    text
}

fn needles_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter(|l| !l.is_empty())
                .map(|l| agent_exec_sink::sanitize(l.as_bytes()))
                .collect()
        })
        .unwrap_or_default()
}

/// Every log of the corpus (or of the directory `AGENT_EXEC_CORPUS` names: a held-out set
/// measured with `cargo xtask corpus`), sorted by name.
pub(crate) fn cases() -> Vec<Case> {
    let dir = std::env::var_os("AGENT_EXEC_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"),
        PathBuf::from,
    );
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.iter()
        .map(|log| Case {
            name: log
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            data: std::fs::read(log).expect("a log"),
            lines: needles_of(&log.with_extension("needle")),
            substrings: needles_of(&log.with_extension("substr")),
        })
        .collect()
}

/// The view of `data` at `max_bytes` in `direction`, pushed in chunks of `chunk` bytes, with
/// the CLI's settings (whole lines; an artifact, for the summary of what was left out).
pub(crate) fn view_of(data: &[u8], direction: Direction, max_bytes: usize, chunk: usize) -> View {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = std::sync::Arc::new(
        agent_exec_sink::ArtifactStore::open(dir.path()).expect("an artifact store"),
    );
    let mut sink = OutputSink::new(
        SinkConfig {
            direction,
            max_bytes,
            align_lines: true,
            ..SinkConfig::default()
        },
        Some(store),
    );
    for c in data.chunks(chunk) {
        sink.push(Stream::Stdout, c).expect("infallible");
    }
    sink.finish_capture().view
}
