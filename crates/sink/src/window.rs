//! The bounded window over the sanitized text: which part of it a model is shown.
//!
//! The window sees the sanitized stream `S` as it grows (text, and "clear the current line"
//! for a lone `\r`) and keeps only what any final view could need:
//! - a prefix of `S` up to the head budget (`head`, `both`, `smart`);
//! - a suffix of `S` of at least the tail budget, kept as the completed lines' suffix plus the
//!   current line's suffix, each compacted at twice the budget, so memory is bounded and a
//!   `\r` that clears the current line can never expose bytes that were dropped.
//!
//! Architecture invariant: the view is a function of `S` alone, never of how the input was
//! chunked; the property tests check exactly that.

use crate::salient::{SalientConfig, SalientTracker};
use crate::sanitize::Emit;
use crate::{Direction, TruncatedBy};

/// Budget of one window.
#[derive(Debug, Clone)]
pub(crate) struct WindowLimits {
    pub(crate) max_bytes: usize,
    pub(crate) max_lines: Option<usize>,
    pub(crate) direction: Direction,
    /// Share of the budget given to the head in `both` (0.0..=1.0).
    pub(crate) head_share: f64,
    pub(crate) salient: std::sync::Arc<SalientConfig>,
    /// A view of several lines starts and ends on line boundaries (a partial first or last
    /// line is left out).
    pub(crate) align_lines: bool,
}

/// What the window shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    /// What is shown, in order: text parts with what was left out between them. The caller
    /// draws the elision markers (`agent-exec-core` writes every line a model reads).
    pub parts: Vec<ViewPart>,
    /// Whether anything of the sanitized stream is not shown.
    pub truncated: bool,
    /// What cut it, when truncated.
    pub truncated_by: Option<TruncatedBy>,
    /// Raw line ranges shown, 1-based and inclusive, in order.
    pub shown_ranges: Vec<[u64; 2]>,
    /// Bytes of output shown (markers excluded).
    pub output_bytes: u64,
    /// Lines of output shown (markers excluded).
    pub output_lines: u64,
    /// Salient lines from the elided middle that the view keeps (`smart` only).
    pub salient_lines: u64,
    /// What a truncated `smart` view left out, summarised.
    pub omitted: Option<OmittedSummary>,
    /// What the compact view folded (an output that fits, shown with the lines a model does
    /// not need folded into counted markers); `None`: nothing was.
    pub folded: Option<FoldSummary>,
}

/// What a compact view folded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldSummary {
    /// Lines folded.
    pub lines: u64,
    /// Bytes of text folded.
    pub bytes: u64,
    /// Lines folded by what they were (`lines of passing tests`, `progress lines`, …), in the order
    /// first met.
    pub groups: Vec<(String, u64)>,
}

impl FoldSummary {
    pub(crate) fn add(&mut self, what: &str, lines: u64, bytes: u64) {
        self.lines += lines;
        self.bytes += bytes;
        match self.groups.iter_mut().find(|(w, _)| w == what) {
            Some((_, n)) => *n += lines,
            None => self.groups.push((what.to_owned(), lines)),
        }
    }
}

/// What a truncated view left out, in a few lines: so a model knows what it did not see, and
/// where to look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OmittedSummary {
    /// The most frequent line templates among the lines left out, most frequent first (from
    /// the artifact; empty without one).
    pub frequent: Vec<Template>,
    /// The counts are estimates from evenly spaced samples of a very long output.
    pub estimated: bool,
    /// Salient lines (errors, failures…) left out.
    pub salient_lines: u64,
    /// The first few of their line numbers, in order.
    pub salient_line_numbers: Vec<u64>,
    /// Omitted lines that stand out: each the only one of its kind in an omitted part made of
    /// a few kinds of lines (from the artifact; at most five).
    pub standing_out: Vec<NumberedLine>,
}

/// A line and its raw line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedLine {
    /// The raw line number (1-based).
    pub line: u64,
    /// The line (cut to `SHOW_CAP` bytes, marked).
    pub text: String,
}

/// A line template and how many omitted lines have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// How many lines.
    pub count: u64,
    /// The template as a model reads it: an example line with numbers as `<N>` and ids as
    /// `<ID>`.
    pub text: String,
}

/// One part of a [`View`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViewPart {
    /// Text shown, starting at raw line `first_line` (1-based).
    Shown {
        /// The raw line number of the part's first line.
        first_line: u64,
        /// The text.
        text: String,
    },
    /// Left out between two shown parts.
    Omitted {
        /// Lines left out.
        lines: u64,
        /// Bytes left out, when the window knows them (`both`).
        bytes: Option<u64>,
    },
    /// The shown line `line` stands for `count` more lines like it (the same but for numbers,
    /// ids and paths) that are left out.
    Similar {
        /// The shown line (raw line number).
        line: u64,
        /// How many more lines like it there are.
        count: u64,
    },
    /// Lines of one kind a model does not need, folded (the compact view).
    Folded {
        /// The raw line number of the first line folded.
        first_line: u64,
        /// How many lines.
        lines: u64,
        /// What they are: `lines of passing tests`, `progress lines`, `compile-step lines`.
        what: String,
    },
}

impl View {
    /// The shown text, parts joined without any marker: for views of one part (`tail`,
    /// `head`, or an output that fits), exactly the text shown.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for part in &self.parts {
            if let ViewPart::Shown { text: t, .. } = part {
                text.push_str(t);
            }
        }
        text
    }
}

#[derive(Debug)]
pub(crate) struct Window {
    limits: WindowLimits,
    head_cap: usize,
    tail_cap: usize,
    head_line_cap: Option<usize>,
    tail_line_cap: Option<usize>,
    /// Length of `S`.
    total_bytes: u64,
    /// Completed lines of `S`.
    newlines: u64,
    /// Bytes of the current (unterminated) line.
    line_len: u64,
    head: Vec<u8>,
    tail_committed: Vec<u8>,
    tail_current: Vec<u8>,
    salient: Option<SalientTracker>,
}

fn is_continuation(b: u8) -> bool {
    (b & 0xC0) == 0x80
}

fn count_lines(bytes: &[u8]) -> u64 {
    let nl = memchr::memchr_iter(b'\n', bytes).count() as u64;
    nl + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Keeps the last `keep` bytes of `buf` once it holds more than twice that.
fn compact(buf: &mut Vec<u8>, keep: usize) {
    if buf.len() > keep.saturating_mul(2).max(4096) {
        let drop = buf.len() - keep;
        buf.drain(..drop);
    }
}

/// Start of the last `lines` lines of `text` (a trailing `\n` ends the last line).
fn start_of_last_lines(text: &[u8], lines: usize) -> usize {
    if lines == 0 {
        return text.len();
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    memchr::memrchr_iter(b'\n', body)
        .nth(lines - 1)
        .map_or(0, |i| i + 1)
}

/// End of the first `lines` lines of `text` (the `\n` ending the last one included).
fn end_of_first_lines(text: &[u8], lines: usize) -> usize {
    if lines == 0 {
        return 0;
    }
    memchr::memchr_iter(b'\n', text)
        .nth(lines - 1)
        .map_or(text.len(), |i| i + 1)
}

impl Window {
    pub(crate) fn new(limits: WindowLimits) -> Self {
        let max = limits.max_bytes;
        let share = limits.head_share.clamp(0.0, 1.0);
        let (head_cap, tail_cap) = match limits.direction {
            Direction::Tail => (0, max),
            Direction::Head => (max, 0),
            Direction::Both => {
                // The tail buffer keeps the whole budget too: what the head leaves unused (a
                // head cut back to its last whole line) goes to the tail.
                let head = (max as f64 * share).round() as usize;
                (head.min(max), max)
            }
            Direction::Smart => {
                // The tail buffer keeps the whole budget: with nothing salient in the middle,
                // a smart view is exactly a tail view.
                let head =
                    (max as f64 * limits.salient.head_share.clamp(0.0, 1.0)).round() as usize;
                (head.min(max), max)
            }
        };
        let (head_line_cap, tail_line_cap) = match (limits.direction, limits.max_lines) {
            (_, None) => (None, None),
            (Direction::Tail, Some(l)) => (Some(0), Some(l)),
            (Direction::Head, Some(l)) => (Some(l), Some(0)),
            (Direction::Both, Some(l)) => {
                let h = (l as f64 * share).round() as usize;
                (Some(h), Some(l - h.min(l)))
            }
            (Direction::Smart, Some(l)) => {
                let h = (l as f64 * limits.salient.head_share).round() as usize;
                (Some(h), Some(l))
            }
        };
        let salient = (limits.direction == Direction::Smart).then(|| {
            let budget =
                (max as f64 * limits.salient.budget_share.clamp(0.0, 1.0)).round() as usize;
            SalientTracker::new(
                limits.salient.clone(),
                budget.min(tail_cap),
                head_cap,
                tail_cap,
            )
        });
        Window {
            limits,
            head_cap,
            tail_cap,
            head_line_cap,
            tail_line_cap,
            total_bytes: 0,
            newlines: 0,
            line_len: 0,
            head: Vec::new(),
            tail_committed: Vec::new(),
            tail_current: Vec::new(),
            salient,
        }
    }

    fn push_head(&mut self, bytes: &[u8]) {
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
    }

    /// Whether the head already holds everything a head view can show.
    pub(crate) fn head_is_full(&self) -> bool {
        self.head.len() >= self.head_cap
            || self.head_line_cap.is_some_and(|l| {
                memchr::memchr_iter(b'\n', &self.head)
                    .nth(l.saturating_sub(1))
                    .is_some()
            })
    }

    fn push_tail(&mut self, bytes: &[u8]) {
        if self.tail_cap == 0 {
            return;
        }
        // One byte more than shown, so whether the shown part starts a line is known.
        let keep = self.tail_cap + 1;
        match memchr::memrchr(b'\n', bytes) {
            Some(last_nl) => {
                let committed = &bytes[..=last_nl];
                if committed.len() >= keep {
                    self.tail_committed.clear();
                    self.tail_current.clear();
                    self.tail_committed
                        .extend_from_slice(&committed[committed.len() - keep..]);
                } else {
                    self.tail_committed.append(&mut self.tail_current);
                    compact(&mut self.tail_committed, keep);
                    self.tail_committed.extend_from_slice(committed);
                    compact(&mut self.tail_committed, keep);
                }
                let rest = &bytes[last_nl + 1..];
                self.tail_current.clear();
                self.tail_current
                    .extend_from_slice(&rest[rest.len().saturating_sub(keep)..]);
            }
            None => {
                self.tail_current.extend_from_slice(bytes);
                compact(&mut self.tail_current, keep);
            }
        }
    }

    /// The last `tail_cap` bytes of `S` (at most), as one buffer.
    fn tail_bytes(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.tail_committed.len() + self.tail_current.len());
        buf.extend_from_slice(&self.tail_committed);
        buf.extend_from_slice(&self.tail_current);
        let total = usize::try_from(self.total_bytes).unwrap_or(usize::MAX);
        let keep = self.tail_cap.min(total);
        buf.drain(..buf.len().saturating_sub(keep));
        buf
    }

    fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.line_len > 0)
    }

    /// Computes what is shown.
    pub(crate) fn view(&self) -> View {
        let fits_bytes = self.total_bytes <= self.limits.max_bytes as u64;
        let fits_lines = self
            .limits
            .max_lines
            .is_none_or(|l| self.total_lines() <= l as u64);
        match self.limits.direction {
            Direction::Tail => self.tail_view(),
            Direction::Head => self.head_view(),
            Direction::Both | Direction::Smart if fits_bytes && fits_lines => self.whole_view(),
            Direction::Both => self.both_view(),
            Direction::Smart => self.smart_view(),
        }
    }

    /// The head part: a prefix cut on a character boundary, within the head's line budget.
    /// Returns the part and whether the line budget (not bytes) cut it.
    fn head_part(&self) -> (&[u8], bool) {
        let held = &self.head[..self.head_cap.min(self.head.len())];
        // The head holds a prefix of valid text, so only a final character can be incomplete.
        let cut = std::str::from_utf8(held).map_or_else(|e| e.valid_up_to(), str::len);
        let part = &self.head[..cut];
        match self.head_line_cap {
            Some(l) => {
                let end = end_of_first_lines(part, l);
                (&part[..end], end < part.len())
            }
            None => (part, false),
        }
    }

    /// The tail part: a suffix starting on a character boundary, within `lines` lines.
    /// Returns the part and whether the line budget (not bytes) cut it.
    fn tail_part(tail: &[u8], lines: Option<usize>) -> (usize, bool) {
        let mut start = 0;
        while start < tail.len() && is_continuation(tail[start]) {
            start += 1;
        }
        if let Some(l) = lines {
            let by_lines = start + start_of_last_lines(&tail[start..], l);
            if by_lines > start {
                return (by_lines, true);
            }
        }
        (start, false)
    }

    fn tail_view(&self) -> View {
        let tail = self.tail_bytes();
        let (mut start, by_lines) = Self::tail_part(&tail, self.tail_line_cap);
        if self.limits.align_lines {
            start = self.line_aligned_tail_start(&tail, start);
        }
        let shown = &tail[start..];
        let mut view = self.single_part_view(shown, self.first_line_of_suffix(shown));
        if view.truncated {
            view.truncated_by = Some(if by_lines {
                TruncatedBy::Lines
            } else {
                TruncatedBy::Bytes
            });
        }
        view
    }

    fn head_view(&self) -> View {
        let (mut shown, by_lines) = self.head_part();
        if self.limits.align_lines && (shown.len() as u64) < self.total_bytes {
            shown = Self::line_aligned_head(shown);
        }
        let mut view = self.single_part_view(shown, 1);
        if view.truncated {
            view.truncated_by = Some(if by_lines {
                TruncatedBy::Lines
            } else {
                TruncatedBy::Bytes
            });
        }
        view
    }

    fn whole_view(&self) -> View {
        // Everything fits: the head holds the start, the tail buffer the rest.
        let head = &self.head[..];
        let rest_len = usize::try_from(self.total_bytes).unwrap_or(usize::MAX) - head.len();
        let tail = self.tail_bytes();
        let rest = &tail[tail.len() - rest_len.min(tail.len())..];
        let mut all = Vec::with_capacity(head.len() + rest.len());
        all.extend_from_slice(head);
        all.extend_from_slice(rest);
        self.single_part_view(&all, 1)
    }

    /// Line number (1-based) of the first byte of a suffix of `S`.
    fn first_line_of_suffix(&self, suffix: &[u8]) -> u64 {
        let in_suffix = memchr::memchr_iter(b'\n', suffix).count() as u64;
        self.newlines - in_suffix + 1
    }

    fn single_part_view(&self, shown: &[u8], first_line: u64) -> View {
        let parts = if shown.is_empty() {
            Vec::new()
        } else {
            vec![ViewPart::Shown {
                first_line,
                text: String::from_utf8_lossy(shown).into_owned(),
            }]
        };
        let output_lines = count_lines(shown);
        let truncated = (shown.len() as u64) < self.total_bytes;
        let shown_ranges = if output_lines == 0 {
            Vec::new()
        } else {
            vec![[first_line, first_line + output_lines - 1]]
        };
        View {
            parts,
            truncated,
            truncated_by: None,
            shown_ranges,
            output_bytes: shown.len() as u64,
            output_lines,
            salient_lines: 0,
            omitted: None,
            folded: None,
        }
    }

    /// In a view of several parts, the head ends at a line end when it holds one.
    fn line_aligned_head(head: &[u8]) -> &[u8] {
        match memchr::memrchr(b'\n', head) {
            Some(i) => &head[..=i],
            None => head,
        }
    }

    /// The byte `k` places before the end of the stream, when still known.
    fn byte_from_end(&self, k: usize) -> Option<u8> {
        let cur = &self.tail_current;
        if k < cur.len() {
            return Some(cur[cur.len() - 1 - k]);
        }
        let line_len = usize::try_from(self.line_len).unwrap_or(usize::MAX);
        if k < line_len {
            // Inside the current line, whose start was compacted away: not a newline.
            return Some(b' ');
        }
        let k = k - line_len;
        let committed = &self.tail_committed;
        if k < committed.len() {
            return Some(committed[committed.len() - 1 - k]);
        }
        let pos = self.total_bytes.checked_sub(1 + (k + line_len) as u64)?;
        usize::try_from(pos)
            .ok()
            .and_then(|p| self.head.get(p).copied())
    }

    /// In a view of several parts, the tail starts at a line start when it holds one
    /// (`start` indexes `tail_all`, the last bytes of the stream) — unless the whole lines
    /// after it fill less than half of what the tail may show: then the end of the long line
    /// they follow fills the budget instead (a 10 KB line, then `}` and a fence, shows the
    /// end of that line, not 5 bytes).
    fn line_aligned_tail_start(&self, tail_all: &[u8], start: usize) -> usize {
        let len = tail_all.len() - start;
        let at_line_start =
            self.total_bytes == len as u64 || self.byte_from_end(len) == Some(b'\n');
        if at_line_start {
            return start;
        }
        match memchr::memchr(b'\n', &tail_all[start..]) {
            Some(i) if start + i + 1 < tail_all.len() => {
                let aligned = start + i + 1;
                if (tail_all.len() - aligned) * 2 < len {
                    start
                } else {
                    aligned
                }
            }
            _ => start,
        }
    }

    fn both_view(&self) -> View {
        let (head, head_by_lines) = self.head_part();
        let head = Self::line_aligned_head(head);
        let tail_all = self.tail_bytes();
        let tail = &tail_all[tail_all
            .len()
            .saturating_sub(self.limits.max_bytes - head.len())..];
        let (start, by_lines) = Self::tail_part(tail, self.tail_line_cap);
        let start = self.line_aligned_tail_start(&tail_all, tail_all.len() - (tail.len() - start));
        let tail = &tail_all[start..];
        let parts = vec![
            Part::new(head, 1),
            Part::new(tail, self.first_line_of_suffix(tail)),
        ];
        let by_lines = by_lines || head_by_lines;
        self.assemble(&parts, by_lines, 0)
    }

    /// Head, ranked salient blocks of the middle, and the tail. Never worse than the plain tail
    /// of the same budget: the salient lines a plain tail would show and a shorter tail would
    /// not are kept first (outside any budget), and the tail shrinks until that holds; when it
    /// cannot hold, or nothing salient lies outside the plain tail, the view is the plain tail.
    fn smart_view(&self) -> View {
        let mut plain = self.tail_view();
        let salient = self
            .salient
            .as_ref()
            .expect("smart windows track salient lines");
        // The plain tail's first whole line: a line it shows only the end of is not shown.
        let plain_first = plain.shown_ranges.first().map_or(u64::MAX, |r| {
            let len = plain.output_bytes as usize;
            let whole = self.total_bytes == len as u64 || self.byte_from_end(len) == Some(b'\n');
            r[0] + u64::from(!whole)
        });
        if !salient.any_before(plain_first) {
            plain.omitted = Self::summary(salient, &plain.shown_ranges);
            return plain;
        }
        let (head, head_by_lines) = self.head_part();
        let head = Self::line_aligned_head(head);
        // A head that holds no whole line (a first line longer than it) shows nothing useful:
        // that line is the middle's, matched and shown around its match like any other.
        let head = if head.ends_with(b"\n") {
            head
        } else {
            &head[..0]
        };
        let head_lines = count_lines(head) as usize;
        let head_last = head_lines as u64;
        let tail_all = self.tail_bytes();
        let max = self.limits.max_bytes;
        let (mut used, mut used_lines) = (head.len(), head_lines);
        // A fixed point: the salient lines kept shrink the tail, which may leave more of the
        // plain tail's salient lines to keep. It only grows, so it ends within a few rounds.
        for _ in 0..16 {
            // No room left for a tail, in bytes or lines: the plain tail is the better view.
            if used >= max || self.tail_line_cap.is_some_and(|l| used_lines >= l) {
                break;
            }
            let tail_lines = self.tail_line_cap.map(|l| l.saturating_sub(used_lines));
            let tail = &tail_all[tail_all.len().saturating_sub(max - used)..];
            let (start, by_lines) = Self::tail_part(tail, tail_lines);
            let aligned =
                self.line_aligned_tail_start(&tail_all, tail_all.len() - (tail.len() - start));
            let mut tail = &tail_all[aligned..];
            let mut tail_first = self.first_line_of_suffix(tail);
            // A tail that starts inside a salient line (the only line it holds, cut) leaves
            // that line to the middle, where it is shown whole or around its match.
            let cut_inside = self.total_bytes > tail.len() as u64
                && self.byte_from_end(tail.len()) != Some(b'\n');
            if cut_inside && salient.is_salient(tail_first) {
                let next = memchr::memchr(b'\n', tail).map_or(tail.len(), |i| i + 1);
                tail = &tail[next..];
                tail_first += 1;
            }
            let selection = salient.select(head_last, tail_first, plain_first);
            let now = (head.len() + selection.bytes, head_lines + selection.lines);
            if now != (used, used_lines) {
                (used, used_lines) = now;
                continue;
            }
            let mut parts = vec![Part::new(head, 1)];
            let mut kept = 0;
            for group in &selection.groups {
                kept += group.salient;
                parts.push(Part::new(group.text.as_bytes(), group.first_line));
            }
            parts.push(Part::new(tail, tail_first));
            // Each "N more like line L" marker goes right below line L: its part is split there.
            let similar = salient.similar(head, tail, tail_first, &selection);
            let parts = split_at_markers(parts, &similar);
            let mut view = self.assemble(&parts, by_lines || head_by_lines, kept);
            // It shows no salient line the plain tail does not (one too long for the budget
            // was left out of both): the plain tail, which fills the budget, is the better view.
            if salient.unshown(&view.shown_ranges).count
                >= salient.unshown(&plain.shown_ranges).count
                && view.output_bytes < plain.output_bytes
            {
                break;
            }
            view.omitted = Self::summary(salient, &view.shown_ranges);
            return view;
        }
        plain.omitted = Self::summary(salient, &plain.shown_ranges);
        plain
    }

    /// What a smart view left out, as far as the window knows it (the artifact adds the
    /// frequent templates).
    fn summary(salient: &SalientTracker, shown: &[[u64; 2]]) -> Option<OmittedSummary> {
        let unshown = salient.unshown(shown);
        (unshown.count > 0).then(|| OmittedSummary {
            frequent: Vec::new(),
            estimated: false,
            salient_lines: unshown.count,
            salient_line_numbers: unshown.lines,
            standing_out: Vec::new(),
        })
    }

    /// Lists the parts with what was left out between them.
    fn assemble(&self, parts: &[Part<'_>], by_lines: bool, salient_lines: u64) -> View {
        let mut view_parts = Vec::with_capacity(parts.len() * 2);
        let mut shown_ranges: Vec<[u64; 2]> = Vec::new();
        let mut output_bytes = 0u64;
        let mut output_lines = 0u64;
        let mut prev_end: Option<u64> = None; // last line number shown so far
        let mut prev_bytes_end = 0u64;
        let parts: Vec<&Part<'_>> = parts.iter().filter(|p| !p.bytes.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            let lines = count_lines(part.bytes);
            let last = part.first_line + lines - 1;
            let omitted_lines = part.first_line.saturating_sub(prev_end.unwrap_or(0) + 1);
            // Parts that touch (one split below a marker) have nothing between them.
            if i > 0 && omitted_lines > 0 {
                // With salient lines between, the bytes of each gap are not tracked.
                let bytes =
                    (salient_lines == 0 && self.limits.direction != Direction::Smart).then(|| {
                        self.total_bytes
                            .saturating_sub(prev_bytes_end + part_bytes_from_end(&parts[i..]))
                    });
                view_parts.push(ViewPart::Omitted {
                    lines: omitted_lines,
                    bytes,
                });
            }
            view_parts.push(ViewPart::Shown {
                first_line: part.first_line,
                text: String::from_utf8_lossy(part.bytes).into_owned(),
            });
            for &(line, count) in part.similar {
                view_parts.push(ViewPart::Similar { line, count });
            }
            match shown_ranges.last_mut() {
                Some(range) if part.first_line <= range[1] + 1 => range[1] = range[1].max(last),
                _ => shown_ranges.push([part.first_line, last]),
            }
            output_bytes += part.bytes.len() as u64;
            output_lines += lines;
            prev_end = Some(last);
            prev_bytes_end += part.bytes.len() as u64;
        }
        View {
            parts: view_parts,
            truncated: true,
            truncated_by: Some(if by_lines {
                TruncatedBy::Lines
            } else {
                TruncatedBy::Bytes
            }),
            shown_ranges,
            output_bytes,
            output_lines,
            salient_lines,
            omitted: None,
            folded: None,
        }
    }
}

/// Splits the parts below each marked line, the marker going with the part that ends there.
fn split_at_markers<'a>(parts: Vec<Part<'a>>, markers: &'a [(u64, u64)]) -> Vec<Part<'a>> {
    let mut out = Vec::with_capacity(parts.len() + markers.len());
    for part in parts {
        let mut rest = part;
        let (first, last) = (
            rest.first_line,
            rest.first_line + count_lines(rest.bytes).saturating_sub(1),
        );
        let mine = markers
            .iter()
            .enumerate()
            .filter(|(_, (line, _))| first <= *line && *line <= last);
        for (i, &(line, _)) in mine {
            let end = end_of_first_lines(
                rest.bytes,
                usize::try_from(line - rest.first_line + 1).unwrap_or(usize::MAX),
            );
            out.push(Part {
                bytes: &rest.bytes[..end],
                first_line: rest.first_line,
                similar: &markers[i..=i],
            });
            rest = Part::new(&rest.bytes[end..], line + 1);
        }
        if !rest.bytes.is_empty() {
            out.push(rest);
        }
    }
    out
}

/// Bytes of the parts from this one to the end (used for the omitted-bytes count in `both`).
fn part_bytes_from_end(rest: &[&Part<'_>]) -> u64 {
    rest.iter().map(|p| p.bytes.len() as u64).sum()
}

struct Part<'a> {
    bytes: &'a [u8],
    first_line: u64,
    /// Lines of this part that stand for others like them: (line, how many more).
    similar: &'a [(u64, u64)],
}

impl<'a> Part<'a> {
    fn new(bytes: &'a [u8], first_line: u64) -> Self {
        Part {
            bytes,
            first_line,
            similar: &[],
        }
    }
}

impl Emit for Window {
    fn text(&mut self, text: &str) {
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        self.counted_text(text, newlines);
    }

    fn counted_text(&mut self, text: &str, newlines: u64) {
        let bytes = text.as_bytes();
        self.push_head(bytes);
        self.push_tail(bytes);
        if let Some(salient) = &mut self.salient {
            let line_start = self.total_bytes - self.line_len;
            salient.text(
                bytes,
                self.newlines + 1,
                line_start,
                self.line_len,
                newlines,
            );
        }
        self.newlines += newlines;
        self.line_len = match memchr::memrchr(b'\n', bytes) {
            Some(i) => (bytes.len() - i - 1) as u64,
            None => self.line_len + bytes.len() as u64,
        };
        self.total_bytes += bytes.len() as u64;
    }

    fn clear_line(&mut self) {
        self.total_bytes -= self.line_len;
        self.line_len = 0;
        let line_start = usize::try_from(self.total_bytes).unwrap_or(usize::MAX);
        if line_start < self.head.len() {
            self.head.truncate(line_start);
        }
        self.tail_current.clear();
        if let Some(salient) = &mut self.salient {
            salient.clear_line();
        }
    }
}
