//! [`OutputSink`]: the bounded capture of one command's output.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;

use crate::artifact::{ArtifactStore, ArtifactWriter};
use crate::salient::SalientConfig;
use crate::sanitize::{Emit, Sanitizer};
use crate::terminal::{Terminal, TerminalSize};
use crate::window::{View, Window, WindowLimits};
use crate::{Direction, Sink, Stream};

/// How an [`OutputSink`] captures.
#[derive(Debug, Clone)]
pub struct SinkConfig {
    /// Bytes of sanitized text shown. Default: 51200 (50 KiB).
    pub max_bytes: usize,
    /// Lines shown, if limited. Default: `None`.
    pub max_lines: Option<usize>,
    /// Which part is kept when the output does not fit. Default: [`Direction::Tail`].
    pub direction: Direction,
    /// Share of the budget given to the head in [`Direction::Both`]. Default: 0.5.
    pub head_share: f64,
    /// Also keep a separate window per stream (for `STDOUT:`/`STDERR:` renderings).
    /// Default: `false`; the merged window is always kept.
    pub split_streams: bool,
    /// stdout and stderr are two streams to keep apart (a call's `streams: "separate"`): a
    /// window each (as `split_streams`), and an artifact each, of that stream's raw bytes,
    /// when its window is truncated — no artifact of the two merged. Default: `false`.
    pub separate_streams: bool,
    /// Most bytes written to one artifact; past it the file stops growing. Default: 100 MiB.
    pub artifact_cap: u64,
    /// Salient-line settings for [`Direction::Smart`]. Default: [`SalientConfig::default`].
    pub salient: SalientConfig,
    /// Show whole lines: when more than one line is shown, a partial first (tail) or last
    /// (head) line is left out; a single line longer than the budget is still shown in part.
    /// Default: `false` (the view is exactly the last or first `max_bytes` of the text).
    pub align_lines: bool,
    /// With [`Direction::Head`]: ask the producer to stop once the head is full and it has
    /// written a pipe buffer (64 KiB) more, as it would have been stopped by a `| head -n N`
    /// (blocked on the full pipe, then SIGPIPE). A producer that stops writing soon after the
    /// head is full runs to its real exit. Default: `false`.
    pub stop_when_head_full: bool,
    /// Render the stream through a terminal emulator of this size, as a PTY's output shows on
    /// a screen (`terminal.rs`): the rows that scrolled off, then the last screen, trimmed.
    /// The raw stream is counted and spilled as always. Default: `None` (the sanitizer).
    pub terminal: Option<TerminalSize>,
    /// The compact view (`compact.rs`): an output that fits a `smart` window is shown with
    /// the lines a model does not need folded into counted markers, recognised from the
    /// command given here and from its own lines; the raw stream is then kept as an artifact.
    /// Default: `None`, the text as it is.
    pub compact: Option<String>,
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig {
            max_bytes: 51_200,
            max_lines: None,
            direction: Direction::Tail,
            head_share: 0.5,
            split_streams: false,
            separate_streams: false,
            artifact_cap: 100 << 20,
            salient: SalientConfig::default(),
            stop_when_head_full: false,
            align_lines: false,
            terminal: None,
            compact: None,
        }
    }
}

/// Exact totals of one raw stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamTotals {
    /// Bytes.
    pub bytes: u64,
    /// Lines, as `wc -l` counts them plus one for a final unterminated line.
    pub lines: u64,
    newlines: u64,
    ends_with_newline: bool,
}

impl StreamTotals {
    /// Adds a non-empty chunk holding `newlines` newlines (counted once by the caller for both
    /// the stream's and the merged totals).
    fn add(&mut self, chunk: &[u8], newlines: u64) {
        self.bytes += chunk.len() as u64;
        self.newlines += newlines;
        self.ends_with_newline = chunk.last() == Some(&b'\n');
        self.lines = self.newlines + u64::from(!self.ends_with_newline);
    }
}

/// Totals per stream and merged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Standard output.
    pub stdout: StreamTotals,
    /// Standard error.
    pub stderr: StreamTotals,
    /// Both, in arrival order.
    pub merged: StreamTotals,
}

/// The artifact holding the complete raw stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactInfo {
    /// Its id (`artifact://ID`).
    pub id: String,
    /// Its path.
    pub path: PathBuf,
    /// Bytes written.
    pub bytes: u64,
    /// Whether the cap stopped it before the end of the stream.
    pub capped: bool,
}

/// What a sink captured.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    /// The merged view.
    pub view: View,
    /// Per-stream views, when `split_streams` was on.
    pub stdout: Option<View>,
    /// See `stdout`.
    pub stderr: Option<View>,
    /// Exact raw totals.
    pub totals: Totals,
    /// The artifact, when the output was truncated and it could be written.
    pub artifact: Option<ArtifactInfo>,
    /// Problems that did not stop capture (an artifact that could not be written…).
    pub warnings: Vec<String>,
    /// With `separate_streams`: each stream's artifact (`[stdout, stderr]`), when its window
    /// was truncated and it could be written.
    pub stream_artifacts: [Option<ArtifactInfo>; 2],
    /// With `separate_streams`: each stream's raw bytes, when they were not spilled to its
    /// artifact (all of them, then: they fit the window's budget).
    pub stream_raw: [Option<Vec<u8>>; 2],
}

#[derive(Debug)]
enum Spill {
    /// Holding the raw stream in memory until it outgrows the window.
    Holding(Vec<u8>),
    Writing(ArtifactWriter),
    /// No store, or the artifact could not be created.
    Off,
}

/// Bounded capture of one command's output. See the crate docs.
#[derive(Debug)]
pub struct OutputSink {
    /// Its settings; their salient part is in `salient`.
    config: SinkConfig,
    salient: Arc<SalientConfig>,
    sanitizers: [Sanitizer; 2],
    /// Replaces the sanitizers when the stream is a terminal's (`SinkConfig::terminal`).
    terminal: Option<Box<Terminal>>,
    merged: Window,
    split: Option<[Window; 2]>,
    totals: Totals,
    store: Option<Arc<ArtifactStore>>,
    spill: Spill,
    /// `[stdout, stderr]`, each its stream's raw bytes (`separate_streams`): `spill` is off then.
    stream_spills: Option<[Spill; 2]>,
    warnings: Vec<String>,
    finished: bool,
    /// The views, once finished (they cannot change any more).
    final_views: Option<Views>,
    /// Raw bytes pushed after the head was full (`stop_when_head_full`).
    past_full_head: u64,
}

/// Appends `chunk` to `spill`: held in memory until `overflows`, then written with what was held
/// to a new artifact of `store` (at most `cap` bytes); an artifact that cannot be made is a
/// warning, and the spill goes off.
fn spill_into(
    spill: &mut Spill,
    chunk: &[u8],
    overflows: bool,
    store: Option<&Arc<ArtifactStore>>,
    cap: u64,
    warnings: &mut Vec<String>,
) {
    match spill {
        Spill::Off => {}
        Spill::Writing(w) => w.write(chunk),
        Spill::Holding(held) => {
            held.extend_from_slice(chunk);
            if !overflows {
                return;
            }
            let held = std::mem::take(held);
            let store = store.expect("holding implies a store");
            *spill = match store.create() {
                Ok((id, path, file)) => {
                    let mut w = ArtifactWriter::new(id, path, file, cap);
                    w.write(&held);
                    Spill::Writing(w)
                }
                Err(e) => {
                    warnings.push(format!("full output was not saved: {e}"));
                    Spill::Off
                }
            };
        }
    }
}

/// Ends a spill whose stream ended: a truncated view's held bytes go to an artifact now, the
/// artifact of a view that turned out to fit is removed.
fn end_spill(
    spill: &mut Spill,
    truncated: bool,
    store: Option<&Arc<ArtifactStore>>,
    cap: u64,
    warnings: &mut Vec<String>,
) {
    // Replacement characters can make the text longer than the raw stream: an output whose
    // raw bytes fit may still be truncated, and then it needs its artifact too.
    if matches!(spill, Spill::Holding(_)) && truncated {
        spill_into(spill, &[], true, store, cap, warnings);
    }
    if let Spill::Writing(w) = spill {
        w.end_hole();
    }
    // An artifact of an output that turned out to fit is not worth keeping.
    if let Spill::Writing(w) = spill
        && !truncated
    {
        let _ = std::fs::remove_file(&w.path);
        *spill = Spill::Off;
    }
}

/// The artifact of a spill, when its view was truncated.
fn artifact_of(
    spill: &Spill,
    truncated: bool,
    cap: u64,
    warnings: &mut Vec<String>,
) -> Option<ArtifactInfo> {
    match spill {
        Spill::Writing(w) if truncated => {
            if let Some(e) = &w.error {
                warnings.push(format!("full output is incomplete: {e}"));
            }
            if w.capped {
                warnings.push(format!(
                    "full output exceeded the artifact cap of {}; the artifact holds the first {} bytes",
                    crate::format_size(cap),
                    w.written
                ));
            }
            Some(ArtifactInfo {
                id: w.id.clone(),
                path: w.path.clone(),
                bytes: w.written,
                capped: w.capped,
            })
        }
        _ => None,
    }
}

/// Templates named in the summary of an omitted middle.
const SUMMARY_TEMPLATES: usize = 3;

/// What a pipe holds before its writer blocks: how far a producer gets past a `| head`.
const PIPE_BUFFER: u64 = 64 * 1024;

/// A listing longer than this is not read back to be folded by directory: the window shows it.
const LISTING_READ: u64 = 4 << 20;

/// Sends sanitized text to the merged window and, when split, to the stream's own window.
struct Fanout<'a> {
    merged: &'a mut Window,
    own: Option<&'a mut Window>,
}

impl Emit for Fanout<'_> {
    fn text(&mut self, text: &str) {
        self.merged.text(text);
        if let Some(own) = &mut self.own {
            own.text(text);
        }
    }
    fn clear_line(&mut self) {
        self.merged.clear_line();
        if let Some(own) = &mut self.own {
            own.clear_line();
        }
    }
    fn counted_text(&mut self, text: &str, newlines: u64) {
        self.merged.counted_text(text, newlines);
        if let Some(own) = &mut self.own {
            own.counted_text(text, newlines);
        }
    }
}

fn index(stream: Stream) -> usize {
    match stream {
        Stream::Stdout => 0,
        Stream::Stderr => 1,
    }
}

impl OutputSink {
    /// A sink with `config`, spilling to `store` when given.
    ///
    /// Salient patterns that do not compile are reported as a warning and match nothing.
    pub fn new(mut config: SinkConfig, store: Option<Arc<ArtifactStore>>) -> Self {
        // Moved out and shared by the windows and their trackers, not cloned for each (a
        // clone is some eighty strings, on every call's path).
        let emptied = SalientConfig {
            patterns: Vec::new(),
            anchors: Vec::new(),
            head_share: config.salient.head_share,
            budget_share: config.salient.budget_share,
        };
        let salient = Arc::new(std::mem::replace(&mut config.salient, emptied));
        let limits = WindowLimits {
            max_bytes: config.max_bytes,
            max_lines: config.max_lines,
            direction: config.direction,
            head_share: config.head_share,
            align_lines: config.align_lines,
            salient: salient.clone(),
        };
        let mut warnings = Vec::new();
        if config.direction == Direction::Smart
            && salient
                .patterns
                .iter()
                .map(String::as_str)
                .ne(crate::salient::DEFAULT_PATTERNS.iter().copied())
            && let Err(e) = salient.compiled()
        {
            warnings.push(format!(
                "salient patterns do not compile, none will match: {e}"
            ));
        }
        let split = (config.split_streams || config.separate_streams)
            .then(|| [Window::new(limits.clone()), Window::new(limits.clone())]);
        let fresh = || {
            if store.is_some() {
                Spill::Holding(Vec::new())
            } else {
                Spill::Off
            }
        };
        let (spill, stream_spills) = if config.separate_streams {
            (Spill::Off, Some([fresh(), fresh()]))
        } else {
            (fresh(), None)
        };
        OutputSink {
            merged: Window::new(limits),
            split,
            sanitizers: [Sanitizer::default(), Sanitizer::default()],
            terminal: config.terminal.map(|size| Box::new(Terminal::new(size))),
            totals: Totals::default(),
            store,
            spill,
            stream_spills,
            warnings,
            finished: false,
            final_views: None,
            past_full_head: 0,
            config,
            salient,
        }
    }

    /// Exact totals so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Whether a stream of these totals outgrew the window (its bytes or its lines).
    fn overflows(&self, t: &StreamTotals) -> bool {
        t.bytes > self.config.max_bytes as u64
            || self.config.max_lines.is_some_and(|l| t.lines > l as u64)
    }

    /// Spills `chunk` of `stream`: to the merged artifact, or (`separate_streams`) to the
    /// stream's own.
    fn spill(&mut self, stream: Stream, chunk: &[u8]) {
        let totals = match (&self.stream_spills, stream) {
            (None, _) => self.totals.merged,
            (Some(_), Stream::Stdout) => self.totals.stdout,
            (Some(_), Stream::Stderr) => self.totals.stderr,
        };
        let overflows = self.overflows(&totals);
        let spill = match &mut self.stream_spills {
            Some(spills) => &mut spills[index(stream)],
            None => &mut self.spill,
        };
        let cap = self.config.artifact_cap;
        spill_into(
            spill,
            chunk,
            overflows,
            self.store.as_ref(),
            cap,
            &mut self.warnings,
        );
    }

    /// For a terminal's stream ([`SinkConfig::terminal`]) not finished yet: its screen as it
    /// shows now, which the view does not hold until the end (it holds the rows that scrolled
    /// off). `None` otherwise.
    pub fn screen_now(&self) -> Option<String> {
        match &self.terminal {
            Some(t) if !self.finished => Some(t.screen_now()),
            _ => None,
        }
    }

    /// Finishes (if not yet) and returns what was captured.
    pub fn finish_capture(mut self) -> Capture {
        let _ = Sink::finish(&mut self);
        self.capture()
    }

    /// What was captured so far (call after [`Sink::finish`] for the final result).
    pub fn capture(&self) -> Capture {
        let Views {
            merged: view,
            stdout,
            stderr,
        } = match &self.final_views {
            Some(views) => views.clone(),
            None => self.views(),
        };
        // A folded view keeps its raw stream as an artifact, as a truncated one does.
        let truncated = view.truncated
            || view.folded.is_some()
            || stdout.as_ref().is_some_and(|v| v.truncated)
            || stderr.as_ref().is_some_and(|v| v.truncated);
        let mut warnings = self.warnings.clone();
        let cap = self.config.artifact_cap;
        let artifact = artifact_of(&self.spill, truncated, cap, &mut warnings);
        let mut stream_artifacts = [None, None];
        let mut stream_raw = [None, None];
        if let Some(spills) = &self.stream_spills {
            for (i, own) in [&stdout, &stderr].into_iter().enumerate() {
                let truncated = own.as_ref().is_some_and(|v| v.truncated);
                stream_artifacts[i] = artifact_of(&spills[i], truncated, cap, &mut warnings);
                if let Spill::Holding(held) = &spills[i] {
                    stream_raw[i] = Some(held.clone());
                }
            }
        }
        Capture {
            view,
            stdout,
            stderr,
            totals: self.totals,
            artifact,
            warnings,
            stream_artifacts,
            stream_raw,
        }
    }
}

impl Sink for OutputSink {
    type Error = Infallible;

    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Infallible> {
        if chunk.is_empty() {
            return Ok(true);
        }
        let i = index(stream);
        let newlines = memchr::memchr_iter(b'\n', chunk).count() as u64;
        match stream {
            Stream::Stdout => self.totals.stdout.add(chunk, newlines),
            Stream::Stderr => self.totals.stderr.add(chunk, newlines),
        }
        self.totals.merged.add(chunk, newlines);
        self.spill(stream, chunk);
        let mut out = Fanout {
            merged: &mut self.merged,
            own: self.split.as_mut().map(|s| &mut s[i]),
        };
        match &mut self.terminal {
            Some(terminal) => terminal.feed(chunk, &mut out),
            None => self.sanitizers[i].feed_counted(chunk, newlines, &mut out),
        }
        if self.config.stop_when_head_full
            && self.config.direction == Direction::Head
            && self.merged.head_is_full()
        {
            self.past_full_head += chunk.len() as u64;
            return Ok(self.past_full_head <= PIPE_BUFFER);
        }
        Ok(true)
    }

    fn finish(&mut self) -> Result<(), Infallible> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if let Some(terminal) = &mut self.terminal {
            terminal.finish(&mut Fanout {
                merged: &mut self.merged,
                own: self.split.as_mut().map(|s| &mut s[0]),
            });
        }
        for i in 0..2 {
            let mut out = Fanout {
                merged: &mut self.merged,
                own: self.split.as_mut().map(|s| &mut s[i]),
            };
            self.sanitizers[i].finish(&mut out);
        }
        // The views are final now: computed once, for the spill decision and the capture.
        let mut views = self.views();
        let mut unfolded = None;
        if let Some(folded) = self.compact_view(&views.merged) {
            unfolded = Some(std::mem::replace(&mut views.merged, folded));
        }
        let truncated = views.merged.truncated
            || views.merged.folded.is_some()
            || views.stdout.as_ref().is_some_and(|v| v.truncated)
            || views.stderr.as_ref().is_some_and(|v| v.truncated);
        let own_truncated =
            [&views.stdout, &views.stderr].map(|v| v.as_ref().is_some_and(|v| v.truncated));
        self.final_views = Some(views);
        let (store, cap) = (self.store.as_ref(), self.config.artifact_cap);
        end_spill(&mut self.spill, truncated, store, cap, &mut self.warnings);
        if let Some(spills) = &mut self.stream_spills {
            for (spill, truncated) in spills.iter_mut().zip(own_truncated) {
                end_spill(spill, truncated, store, cap, &mut self.warnings);
            }
        }
        // A folded view whose raw stream could not be kept whole would lose the lines it
        // folds: the output fits, so it is shown as it is instead.
        if let (Some(unfolded), Some(views)) = (unfolded, &mut self.final_views) {
            let kept = matches!(&self.spill, Spill::Writing(w) if !w.capped && w.error.is_none());
            if !kept {
                views.merged = unfolded;
                if let Spill::Writing(w) = &self.spill {
                    let _ = std::fs::remove_file(&w.path);
                }
                self.spill = Spill::Off;
            }
        }
        // A listing or a table too long for the window is folded to fit instead, read back
        // from the artifact: every line it shows stays whole.
        if let Some(listing) = self.listing_view() {
            if let Some(views) = &mut self.final_views {
                views.merged = listing;
            }
            return Ok(());
        }
        // The frequent templates of what a smart view left out are read back from the
        // artifact: the window keeps no middle, and templating every line as it streams would
        // cost the ingest path several times over. An unreadable artifact leaves them out.
        if let (Spill::Writing(w), Some(views)) = (&self.spill, &mut self.final_views)
            && self.config.direction == Direction::Smart
            && views.merged.truncated
            // A terminal's rows are not the artifact's lines: their numbers would not match.
            && self.config.terminal.is_none()
            && let Ok(file) = crate::template::summarize_file(
                &w.path,
                &views.merged.shown_ranges,
                SUMMARY_TEMPLATES,
            )
            && !(file.frequent.is_empty() && file.rare.is_empty())
        {
            let summary = views.merged.omitted.get_or_insert_with(Default::default);
            summary.frequent = file.frequent;
            summary.estimated = file.estimated;
            summary.standing_out = file
                .rare
                .into_iter()
                .map(|(line, text)| crate::NumberedLine { line, text })
                .collect();
        }
        Ok(())
    }
}

/// The merged view and, when split, the per-stream views.
#[derive(Debug, Clone)]
struct Views {
    merged: View,
    stdout: Option<View>,
    stderr: Option<View>,
}

impl OutputSink {
    /// The compact view of an output that fits, when one is asked for and saves enough.
    fn compact_view(&self, merged: &View) -> Option<View> {
        let command = self.config.compact.as_deref()?;
        if merged.truncated
            || self.config.direction != Direction::Smart
            || self.stream_spills.is_some()
            // Without a store the raw stream could not be kept: folding would lose it.
            || self.store.is_none()
            // A terminal's rows are not the artifact's lines: the markers' numbers would not
            // match.
            || self.config.terminal.is_some()
        {
            return None;
        }
        if merged.parts.is_empty() {
            return None;
        }
        // Patterns that do not compile find nothing salient: nothing is folded either.
        let salient = self.salient.compiled().ok()?;
        crate::compact::fold(&merged.text(), command, Some(&salient))
    }

    /// The view of a listing or a table too long for the window, folded to fit (compact only).
    fn listing_view(&self) -> Option<View> {
        let command = self.config.compact.as_deref()?;
        let truncated = self.final_views.as_ref()?.merged.truncated;
        let Spill::Writing(w) = &self.spill else {
            return None;
        };
        if !truncated
            || w.capped
            || self.config.direction != Direction::Smart
            || self.config.max_lines.is_some()
            || self.config.terminal.is_some()
            || self.totals.merged.bytes > LISTING_READ
        {
            return None;
        }
        // Known by its command before the artifact is read: most outputs are neither.
        let kind = crate::compact::kind_of_command(command);
        if !crate::compact::folds_to_fit(kind) {
            return None;
        }
        let raw = std::fs::read(&w.path).ok()?;
        let salient = self.salient.compiled().ok()?;
        crate::compact::fold_to_fit(
            &crate::sanitize(&raw),
            kind,
            self.config.max_bytes,
            &salient,
        )
    }

    fn views(&self) -> Views {
        let (stdout, stderr) = match &self.split {
            Some([o, e]) => (Some(o.view()), Some(e.view())),
            None => (None, None),
        };
        Views {
            merged: self.merged.view(),
            stdout,
            stderr,
        }
    }
}
