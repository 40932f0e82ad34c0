//! Salient lines: the lines of an elided middle that a model most likely needs (errors,
//! failures, panics, the last line of a traceback), kept with a line of context each.
//!
//! The tracker is streaming and bounded. It searches each pushed chunk once with a single
//! compiled regex (literal prefilters make that near memchr speed on clean logs), and keeps:
//! - the first `keep_first` matches after the head,
//! - the matches that may still lie inside the tail buffer (`pending`, bounded by the tail
//!   budget), and
//! - a ring of the last `keep_last` matches that have definitely left the tail.
//!
//! Matching looks at the first [`MATCH_CAP`] bytes of a line only, so whether a line is salient
//! never depends on how the stream was chunked.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use aho_corasick::AhoCorasick;
use regex::bytes::Regex;

/// Bytes of a line that patterns are matched against.
pub const MATCH_CAP: usize = 1024;
/// Bytes of a salient or context line that are shown.
pub const SHOW_CAP: usize = 400;

/// The default salient patterns: errors, failures, panics, exceptions, tracebacks, linker and
/// assertion failures, build-tool failure markers. Case-aware: `error` in any case as a word,
/// exception class names in CamelCase, test-runner markers in their own case.
pub const DEFAULT_PATTERNS: &[&str] = &[
    r"(?i)\berror\b",
    r"(?i)\berror\[",
    r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception|Failure)\b",
    r"(?i)\bexception\b",
    r"\bFAIL(?:ED|URE|S)?\b",
    r"(?i)\bfailed\b",
    r"(?i)\bfatal\b",
    r"panicked at",
    r"(?i)\bpanic\b",
    r"undefined reference to",
    r"(?i)segmentation fault",
    r"(?i)core dumped",
    r"(?i)\bassert(?:ion)?\b",
    r"npm ERR!",
    r"\*\*\* ",
    r"(?i)no such file or directory",
    r"(?i)permission denied",
    r"(?i)command not found",
    r"(?i)cannot find symbol",
    r"(?i)\btraceback\b",
    r"(?i)\bkilled\b",
];

/// Substrings of which every match of [`DEFAULT_PATTERNS`] contains at least one, in lower,
/// Capitalized or UPPER case: a SIMD multi-pattern search for them finds candidate lines at
/// memory speed, and only those lines meet the regex.
pub const DEFAULT_ANCHORS: &[&str] = &[
    "error",
    "exception",
    "fail",
    "fatal",
    "panic",
    "undefined reference",
    "segmentation fault",
    "core dumped",
    "assert",
    "err!",
    "*** ",
    "no such file",
    "permission denied",
    "command not found",
    "cannot find symbol",
    "traceback",
    "killed",
];

/// What counts as salient and how much of the budget it may use.
#[derive(Debug, Clone)]
pub struct SalientConfig {
    /// Regexes (Rust `regex` syntax, ASCII semantics) matched against each line.
    /// Default: [`DEFAULT_PATTERNS`].
    pub patterns: Vec<String>,
    /// Literal anchors, one of which (in lower, Capitalized or UPPER case) every pattern match
    /// contains; used as a fast prefilter. Empty: every line meets the regex.
    /// Default: [`DEFAULT_ANCHORS`].
    pub anchors: Vec<String>,
    /// Share of the byte budget given to the head. Default: 0.10.
    pub head_share: f64,
    /// Share of the byte budget salient lines may use; unused budget goes to the tail.
    /// Default: 0.20.
    pub budget_share: f64,
    /// How many of the first matches of the elided middle are kept. Default: 5.
    pub keep_first: usize,
    /// How many of the last matches of the elided middle are kept. Default: 5.
    pub keep_last: usize,
}

impl Default for SalientConfig {
    fn default() -> Self {
        SalientConfig {
            patterns: DEFAULT_PATTERNS.iter().map(|p| (*p).to_owned()).collect(),
            anchors: DEFAULT_ANCHORS.iter().map(|p| (*p).to_owned()).collect(),
            head_share: 0.10,
            budget_share: 0.20,
            keep_first: 5,
            keep_last: 5,
        }
    }
}

impl SalientConfig {
    /// The compiled patterns, cached per pattern set for the life of the process: compiling
    /// them costs about a millisecond, far more than a small command's whole capture.
    pub(crate) fn compiled(&self) -> Result<Matcher, regex::Error> {
        type Cache = Vec<((Vec<String>, Vec<String>), Matcher)>;
        static CACHE: Mutex<Cache> = Mutex::new(Vec::new());
        let key = (self.patterns.clone(), self.anchors.clone());
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, m)) = cache.iter().find(|(k, _)| *k == key) {
            return Ok(m.clone());
        }
        let regex = self.compile()?;
        let prefilter = if self.anchors.is_empty() {
            None
        } else {
            // Each anchor in its three usual casings (error, Error, ERROR), searched
            // case-sensitively: that keeps the SIMD (Teddy) searcher, several times faster than
            // a case-insensitive automaton on ordinary text. Odd casings (eRRor) are not salient.
            let mut variants: Vec<String> = Vec::new();
            for a in &self.anchors {
                let lower = a.to_ascii_lowercase();
                let mut capital = lower.clone();
                if let Some(first) = capital.get_mut(0..1) {
                    first.make_ascii_uppercase();
                }
                for v in [lower.clone(), capital, a.to_ascii_uppercase()] {
                    if !variants.contains(&v) {
                        variants.push(v);
                    }
                }
            }
            AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(&variants)
                .ok()
        };
        let matcher = Matcher { regex, prefilter };
        if cache.len() >= 16 {
            cache.remove(0);
        }
        cache.push((key, matcher.clone()));
        Ok(matcher)
    }

    /// Compiles the patterns into one regex.
    pub(crate) fn compile(&self) -> Result<Regex, regex::Error> {
        let joined = self
            .patterns
            .iter()
            .map(|p| format!("(?:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        // ASCII semantics: the patterns are English words and punctuation, and Unicode word
        // boundaries and case folding make the automaton slow on binary noise.
        regex::bytes::RegexBuilder::new(&joined)
            .unicode(false)
            .size_limit(1 << 22)
            .build()
    }
}

#[derive(Debug, Clone)]
struct Entry {
    line_no: u64,
    /// Position in the sanitized stream just after this line's `\n`.
    end_pos: u64,
    before: Option<Vec<u8>>,
    line: Vec<u8>,
    after: Option<Vec<u8>>,
}

/// A run of consecutive lines shown from the middle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) text: String,
    pub(crate) first_line: u64,
    pub(crate) last_line: u64,
    pub(crate) salient: u64,
}

/// The salient-line test: a literal prefilter (when anchors are known) and the regex.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    regex: Regex,
    prefilter: Option<AhoCorasick>,
}

impl Matcher {
    /// Start of the first possible match at or after `at`.
    fn candidate(&self, haystack: &[u8], at: usize) -> Option<usize> {
        match &self.prefilter {
            Some(ac) => ac
                .find(aho_corasick::Input::new(haystack).span(at..haystack.len()))
                .map(|m| m.start()),
            None => self.regex.find_at(haystack, at).map(|m| m.start()),
        }
    }

    /// Whether a line (already capped at [`MATCH_CAP`]) is salient: an anchor in it (when
    /// anchors are set) and a pattern match. The one definition for every path, so chunking
    /// can never change the answer.
    fn is_match(&self, line: &[u8]) -> bool {
        (self.prefilter.is_none() || self.candidate(line, 0).is_some()) && self.regex.is_match(line)
    }
}

/// A matcher compiled on first use.
#[derive(Debug)]
enum Lazy {
    NotYet,
    Ready(Matcher),
    /// The patterns do not compile (reported by the sink): nothing matches.
    Invalid,
}

#[derive(Debug)]
pub(crate) struct SalientTracker {
    cfg: SalientConfig,
    /// Compiled on the first complete line: a command with no output never pays for it.
    regex: Lazy,
    budget: usize,
    head_cap: usize,
    tail_cap: usize,
    line_buf: Vec<u8>,
    prev_line: Option<Vec<u8>>,
    await_after: bool,
    first: Vec<Entry>,
    pending: VecDeque<Entry>,
    ring: VecDeque<Entry>,
}

fn cap(bytes: &[u8], limit: usize) -> Vec<u8> {
    if bytes.len() <= limit {
        return bytes.to_vec();
    }
    let mut cut = limit;
    while cut > 0 && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    let mut out = bytes[..cut].to_vec();
    out.extend_from_slice(" [...]".as_bytes());
    out
}

fn push_capped(buf: &mut Vec<u8>, bytes: &[u8], limit: usize) {
    let room = limit.saturating_sub(buf.len());
    buf.extend_from_slice(&bytes[..room.min(bytes.len())]);
}

impl SalientTracker {
    pub(crate) fn new(cfg: SalientConfig, budget: usize, head_cap: usize, tail_cap: usize) -> Self {
        SalientTracker {
            cfg,
            regex: Lazy::NotYet,
            budget,
            head_cap,
            tail_cap,
            line_buf: Vec::new(),
            prev_line: None,
            await_after: false,
            first: Vec::new(),
            pending: VecDeque::new(),
            ring: VecDeque::new(),
        }
    }

    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    /// The regex, compiled on first use; patterns that do not compile match nothing (the sink
    /// reports them as a warning).
    fn regex(&mut self) -> Option<&Matcher> {
        if matches!(self.regex, Lazy::NotYet) {
            self.regex = self.cfg.compiled().map_or(Lazy::Invalid, Lazy::Ready);
        }
        match &self.regex {
            Lazy::Ready(r) => Some(r),
            _ => None,
        }
    }

    fn is_match(&mut self, line: &[u8]) -> bool {
        let line = &line[..line.len().min(MATCH_CAP)];
        self.regex().is_some_and(|r| r.is_match(line))
    }

    /// Gives the last salient line its after-context.
    fn fill_after(&mut self, line: &[u8]) {
        self.await_after = false;
        let after = cap(line, SHOW_CAP);
        let Some(last) = self.pending.back_mut() else {
            return;
        };
        last.after = Some(after.clone());
        let line_no = last.line_no;
        if let Some(first) = self.first.last_mut()
            && first.line_no == line_no
        {
            first.after = Some(after);
        }
    }

    fn record(&mut self, entry: Entry, start_pos: u64) {
        self.await_after = entry.after.is_none();
        if self.first.len() < self.cfg.keep_first && start_pos >= self.head_cap as u64 {
            self.first.push(entry.clone());
        }
        self.pending.push_back(entry);
    }

    /// Sanitized text was appended. `line_no` is the number of the line `bytes` starts in,
    /// `line_start` the stream position where that line began, `line_len` how much of it came
    /// before `bytes`.
    pub(crate) fn text(&mut self, bytes: &[u8], line_no: u64, line_start: u64, line_len: u64) {
        let base = line_start + line_len;
        let Some(first_nl) = memchr::memchr(b'\n', bytes) else {
            push_capped(&mut self.line_buf, bytes, MATCH_CAP);
            return;
        };
        // The line that was in progress is complete.
        push_capped(&mut self.line_buf, &bytes[..first_nl], MATCH_CAP);
        let line = std::mem::take(&mut self.line_buf);
        if self.await_after {
            self.fill_after(&line);
        }
        if self.is_match(&line) {
            let entry = Entry {
                line_no,
                end_pos: base + first_nl as u64 + 1,
                before: self.prev_line.take(),
                line: cap(&line, SHOW_CAP),
                after: None,
            };
            self.record(entry, line_start);
        }
        self.prev_line = Some(cap(&line, SHOW_CAP));
        let last_nl = memchr::memrchr(b'\n', bytes).expect("there is a newline");
        if last_nl > first_nl {
            let region_pos = base + first_nl as u64 + 1;
            self.scan_region(&bytes[first_nl + 1..=last_nl], line_no + 1, region_pos);
        }
        push_capped(&mut self.line_buf, &bytes[last_nl + 1..], MATCH_CAP);
        self.evict(base + last_nl as u64 + 1);
    }

    /// Complete lines in `region` (it ends with `\n`), the first numbered `line_no`, starting at
    /// stream position `pos`.
    fn scan_region(&mut self, region: &[u8], line_no: u64, pos: u64) {
        let line_end = |from: usize| {
            from + memchr::memchr(b'\n', &region[from..]).expect("region ends with a newline")
        };
        if self.await_after {
            self.fill_after(&region[..line_end(0)]);
        }
        let mut hits = Vec::new();
        // Borrowed, never cloned: a clone of the regex starts with an empty cache, and its
        // lazy DFA would be built again for every chunk (a quarter of a log's ingest time).
        if let Some(matcher) = self.regex() {
            let mut at = 0;
            while at < region.len() {
                let Some(start) = matcher.candidate(region, at) else {
                    break;
                };
                let ls = memchr::memrchr(b'\n', &region[..start]).map_or(0, |i| i + 1);
                let le = line_end(ls);
                if matcher.is_match(&region[ls..le.min(ls + MATCH_CAP)]) {
                    hits.push((ls, le));
                }
                at = le + 1;
            }
        }
        let mut counted_to = 0;
        let mut current = line_no;
        for (ls, le) in hits {
            current += memchr::memchr_iter(b'\n', &region[counted_to..ls]).count() as u64;
            counted_to = ls;
            let before = if ls == 0 {
                self.prev_line.take()
            } else {
                let ps = memchr::memrchr(b'\n', &region[..ls - 1]).map_or(0, |i| i + 1);
                Some(cap(&region[ps..ls - 1], SHOW_CAP))
            };
            let after =
                (le + 1 < region.len()).then(|| cap(&region[le + 1..line_end(le + 1)], SHOW_CAP));
            let entry = Entry {
                line_no: current,
                end_pos: pos + le as u64 + 1,
                before,
                line: cap(&region[ls..le], SHOW_CAP),
                after,
            };
            self.record(entry, pos + ls as u64);
        }
        let body = &region[..region.len() - 1];
        let start = memchr::memrchr(b'\n', body).map_or(0, |i| i + 1);
        self.prev_line = Some(cap(&body[start..], SHOW_CAP));
    }

    /// Moves matches that can no longer be in the tail into the ring of last matches.
    fn evict(&mut self, committed: u64) {
        let limit = committed.saturating_sub(self.tail_cap as u64);
        while self.pending.front().is_some_and(|e| e.end_pos <= limit) && self.pending.len() > 1 {
            let entry = self.pending.pop_front().expect("checked non-empty");
            self.ring.push_back(entry);
            if self.ring.len() > self.cfg.keep_last {
                self.ring.pop_front();
            }
        }
    }

    /// The current line was cleared by `\r`.
    pub(crate) fn clear_line(&mut self) {
        self.line_buf.clear();
    }

    /// Groups of lines to show strictly between line `head_last` and line `tail_first`.
    pub(crate) fn select(&self, head_last: u64, tail_first: u64) -> Vec<Group> {
        let mut candidates: BTreeMap<u64, &Entry> = BTreeMap::new();
        for e in self.first.iter().chain(&self.ring).chain(&self.pending) {
            if e.line_no > head_last && e.line_no < tail_first {
                candidates.entry(e.line_no).or_insert(e);
            }
        }
        let all: Vec<&Entry> = candidates.into_values().collect();
        // Priority: first, last, second, second to last, ... within the first/last quotas.
        let (k_first, k_last) = (self.cfg.keep_first, self.cfg.keep_last);
        let mut order = Vec::new();
        let (mut i, mut j) = (0usize, all.len());
        while (i < k_first || all.len() - j < k_last) && i < j {
            if i < k_first {
                order.push(i);
                i += 1;
            }
            if all.len() - j < k_last && i < j {
                j -= 1;
                order.push(j);
            }
        }
        let mut lines: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut salient: BTreeMap<u64, bool> = BTreeMap::new();
        let mut used = 0usize;
        for idx in order {
            let e = all[idx];
            let mut add: Vec<(u64, &Vec<u8>)> = vec![(e.line_no, &e.line)];
            if let Some(b) = &e.before
                && e.line_no - 1 > head_last
            {
                add.push((e.line_no - 1, b));
            }
            if let Some(a) = &e.after
                && e.line_no + 1 < tail_first
            {
                add.push((e.line_no + 1, a));
            }
            let cost: usize = add
                .iter()
                .filter(|(n, _)| !lines.contains_key(n))
                .map(|(_, t)| t.len() + 1)
                .sum();
            if used + cost > self.budget {
                continue;
            }
            used += cost;
            for (n, t) in add {
                lines.entry(n).or_insert_with(|| t.clone());
            }
            salient.insert(e.line_no, true);
        }
        let mut groups: Vec<Group> = Vec::new();
        for (n, text) in lines {
            let text = String::from_utf8_lossy(&text).into_owned();
            let is_salient = u64::from(salient.contains_key(&n));
            match groups.last_mut() {
                Some(g) if g.last_line + 1 == n => {
                    g.text.push_str(&text);
                    g.text.push('\n');
                    g.last_line = n;
                    g.salient += is_salient;
                }
                _ => groups.push(Group {
                    text: text + "\n",
                    first_line: n,
                    last_line: n,
                    salient: is_salient,
                }),
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every default pattern's typical match contains an anchor, so the prefilter never hides a
    /// salient line.
    #[test]
    fn default_patterns_are_anchored() {
        let samples = [
            "error: x",
            "ERROR[E0432]",
            "ValueError: bad",
            "KeyError",
            "NullPointerException",
            "AssertionFailure",
            "exception raised",
            "FAILED tests/x",
            "FAIL: x",
            "test failed",
            "fatal: not a repo",
            "panicked at src",
            "panic: runtime",
            "undefined reference to `f'",
            "Segmentation fault",
            "core dumped",
            "assertion failed",
            "npm ERR! code",
            "make: *** [x] Error 1",
            "No such file or directory",
            "Permission denied",
            "bash: x: command not found",
            "cannot find symbol",
            "Traceback (most recent call last):",
            "Killed",
        ];
        let cfg = SalientConfig::default();
        let m = cfg.compiled().unwrap();
        for s in samples {
            assert!(m.regex.is_match(s.as_bytes()), "pattern should match {s:?}");
            assert!(m.candidate(s.as_bytes(), 0).is_some(), "no anchor in {s:?}");
        }
        for s in ["all 12 tests passed", "compiling foo v1.0", "0 errors"] {
            let line = s.as_bytes();
            assert!(
                m.candidate(line, 0).is_none() || !m.is_match(line) || s.contains("error"),
                "{s}"
            );
        }
    }
}
