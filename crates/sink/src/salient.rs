//! Salient lines: the lines of an output outside the tail that a model most likely needs
//! (errors, failures, panics, tracebacks, sanitizer reports), each kept with its diagnostic
//! block, ranked, and counted by template.
//!
//! The tracker is streaming and bounded. It searches each pushed chunk once with a literal
//! prefilter (SIMD, near memchr speed on clean logs) and meets only candidate lines with the
//! regex. For every salient line it keeps:
//! - its block: up to two lines above (a header such as `In FILE line N:`, the code line of a
//!   finding) and the continuation lines below (indented or marker-led: frames, `note:`,
//!   `got:`/`expected:`, `-->`), bounded in lines and bytes;
//! - its template (numbers, ids and paths taken out, [`crate::template`]) with a count and a
//!   few line numbers; the first occurrence of each template is kept, so a rare message
//!   survives a flood of a common one;
//! - every salient line that may still lie in the last `tail_cap` bytes (`recent`), so the view
//!   can keep each one a plain tail would have shown.
//!
//! A line up to [`MATCH_CAP`] bytes is matched whole; a longer one is matched around each
//! literal candidate, within [`MATCH_CAP`] / 2 bytes on each side, as it streams (a line of any
//! length, in bounded memory). Both are functions of the line alone, never of the chunking.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use aho_corasick::AhoCorasick;
use regex::bytes::Regex;

use crate::template;

/// Bytes of a line matched whole; a longer line is matched within windows of this size around
/// each literal candidate (any default pattern's match fits in one).
pub const MATCH_CAP: usize = 1024;
/// Bytes of a salient or context line that are shown; a longer salient line is shown as a
/// window of this size around its match.
pub const SHOW_CAP: usize = 400;
/// Continuation lines kept below a salient line, and bytes of a whole block.
const BLOCK_LINES: usize = 16;
const BLOCK_BYTES: usize = 3072;
/// Lines that are not continuations (blank ones included) a report may hold between frames.
const REPORT_GAP: usize = 3;
/// Distinct templates tracked; salient lines of further templates are only counted.
const MAX_TEMPLATES: usize = 256;
/// Line numbers kept per template (the first few), for the summary of what was left out.
const LINES_PER_TEMPLATE: usize = 4;

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
    // Markers without a keyword: merge conflicts, memory checkers, table-driven test
    // failures, test-runner summaries, exit statuses, aborts, timeouts.
    r"\bCONFLICT \(",
    r"\bInvalid (?:read|write|free)\b",
    r"\bgot\b.{0,200}\bwant\b",
    r"\bwant\b.{0,200}\bgot\b",
    r"\b\d+ (?:skipped|deselected)\b",
    r"(?i)\bexit (?:status|code):? [1-9]",
    r"(?i)\bnon-zero exit\b",
    r"\bAborted\b",
    r"(?i)\btimed out\b",
    r"(?i)\bout of memory\b",
    r"\bdefinitely lost: [1-9]",
    r"\b[A-Z][A-Za-z]*Sanitizer\b",
    r"\buninitialised value",
    // Failures named without those words: a lint finding's cross, a deadlock, a data race,
    // a thread dump's stacks.
    r"✖|✘|✕",
    r"(?i)\bdeadlock",
    r"(?i)\bdata race\b",
    r"most recent call first",
];

/// Substrings of which every match of [`DEFAULT_PATTERNS`] (in the casings that matter)
/// contains at least one, case-sensitively: a SIMD multi-pattern search for them finds candidate
/// lines at memory speed, and only those lines meet the regex. Each casing is its own anchor
/// (`error`, `Error`, `ERROR`): a case-insensitive search would leave the SIMD searcher, and so
/// would more than 64 anchors. Odd casings (`eRRor`) are not salient.
pub const DEFAULT_ANCHORS: &[&str] = &[
    "error",
    "Error",
    "ERROR",
    "exception",
    "Exception",
    "EXCEPTION",
    "fail",
    "Fail",
    "FAIL",
    "fatal",
    "Fatal",
    "FATAL",
    "panic",
    "Panic",
    "PANIC",
    "undefined reference",
    "Segmentation fault",
    "segmentation fault",
    "core dumped",
    "assert",
    "Assert",
    "ASSERT",
    "ERR!",
    "*** ",
    "No such file",
    "no such file",
    "Permission denied",
    "permission denied",
    "command not found",
    "cannot find symbol",
    "Traceback",
    "traceback",
    "Killed",
    "killed",
    "KILLED",
    "CONFLICT (",
    "Invalid ",
    "want",
    "skipped",
    "deselected",
    "exit ",
    "Exit ",
    "EXIT ",
    "non-zero exit",
    "Aborted",
    "timed out",
    "Timed out",
    "TIMED OUT",
    "out of memory",
    "Out of memory",
    "OUT OF MEMORY",
    "definitely lost",
    "Sanitizer",
    "uninitialised value",
    "✖",
    "✘",
    "✕",
    "deadlock",
    "Deadlock",
    "DEADLOCK",
    "data race",
    "Data race",
    "DATA RACE",
    "most recent call first",
];

/// What counts as salient and how much of the budget it may use.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SalientConfig {
    /// Regexes (Rust `regex` syntax, ASCII semantics) matched against each line.
    /// Default: [`DEFAULT_PATTERNS`].
    pub patterns: Vec<String>,
    /// Literal anchors, one of which every pattern match contains, matched case-sensitively
    /// (list each casing that matters); used as a fast prefilter. Empty: every line meets the
    /// regex.
    /// Default: [`DEFAULT_ANCHORS`].
    pub anchors: Vec<String>,
    /// Share of the byte budget given to the head. Default: 0.10.
    pub head_share: f64,
    /// Share of the byte budget salient lines may use; unused budget goes to the tail.
    /// Default: 0.20.
    pub budget_share: f64,
}

impl Default for SalientConfig {
    fn default() -> Self {
        SalientConfig {
            patterns: DEFAULT_PATTERNS.iter().map(|p| (*p).to_owned()).collect(),
            anchors: DEFAULT_ANCHORS.iter().map(|p| (*p).to_owned()).collect(),
            head_share: 0.10,
            budget_share: 0.20,
        }
    }
}

impl SalientConfig {
    /// Checks that every pattern compiles, naming the first that does not.
    pub fn validate(&self) -> Result<(), String> {
        for pattern in &self.patterns {
            regex::bytes::RegexBuilder::new(pattern)
                .unicode(false)
                .build()
                .map_err(|e| format!("the salient pattern {pattern:?} does not compile: {e}"))?;
        }
        self.compile().map(|_| ()).map_err(|e| e.to_string())
    }

    /// The compiled patterns, cached per pattern set for the life of the process: compiling
    /// them costs about a millisecond, far more than a small command's whole capture.
    /// Shared (`Arc`): a compiled regex is used from any thread at once, and a clone of one
    /// would make a fresh pool of match caches per call.
    pub(crate) fn compiled(&self) -> Result<std::sync::Arc<Matcher>, regex::Error> {
        type Cache = Vec<((Vec<String>, Vec<String>), std::sync::Arc<Matcher>)>;
        static CACHE: Mutex<Cache> = Mutex::new(Vec::new());
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, m)) = cache
            .iter()
            .find(|((patterns, anchors), _)| *patterns == self.patterns && *anchors == self.anchors)
        {
            return Ok(m.clone());
        }
        let key = (self.patterns.clone(), self.anchors.clone());
        let regex = self.compile()?;
        let prefilter = if self.anchors.is_empty() {
            None
        } else {
            let variants = &self.anchors;
            AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(variants)
                .ok()
        };
        let matcher = std::sync::Arc::new(Matcher { regex, prefilter });
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

/// The salient-line test: a literal prefilter (when anchors are known) and the regex.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    regex: Regex,
    prefilter: Option<AhoCorasick>,
}

/// Where a line matched, and the part of it to show.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    /// Offset in the line of the first byte shown.
    start: usize,
    /// The bytes shown (at most [`SHOW_CAP`], on character boundaries).
    shown: Vec<u8>,
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

    /// Whether a line of at most [`MATCH_CAP`] bytes is salient.
    pub(crate) fn is_salient(&self, line: &[u8]) -> bool {
        self.find_short(line).is_some()
    }

    /// Whether a line of at most [`MATCH_CAP`] bytes is salient, and where.
    fn find_short(&self, line: &[u8]) -> Option<usize> {
        if self.prefilter.is_some() && self.candidate(line, 0).is_none() {
            return None;
        }
        self.regex.find(line).map(|m| m.start())
    }
}

/// The bytes of `line[from..to]` to show around a match at `at`: [`SHOW_CAP`] bytes starting a
/// little before it, within `from..to`, on character boundaries.
fn show_window(line: &[u8], at: usize, from: usize, to: usize) -> Found {
    let mut start = at.saturating_sub(SHOW_CAP / 3).max(from);
    if to - start < SHOW_CAP {
        start = to.saturating_sub(SHOW_CAP).max(from);
    }
    while start < to && (line[start] & 0xC0) == 0x80 {
        start += 1;
    }
    let end = (start + SHOW_CAP).min(to);
    // The text is valid UTF-8: only the cut at the end can split a character.
    let shown = &line[start..end];
    let valid = std::str::from_utf8(shown).map_or_else(|e| e.valid_up_to(), str::len);
    Found {
        start,
        shown: shown[..valid].to_vec(),
    }
}

/// A line too long to hold, matched as it streams (see the module docs).
#[derive(Debug, Default)]
struct LongLine {
    /// The last [`MATCH_CAP`] bytes seen (at most), starting at line offset `carry_start`.
    carry: Vec<u8>,
    carry_start: u64,
    /// Candidates before this line offset have been examined.
    examined: u64,
    found: Option<Found>,
}

impl LongLine {
    /// Scans `piece`, the next bytes of the line, as if it followed the carry in one buffer —
    /// without copying it there: a window that starts in the carry ends within the piece's
    /// first [`MATCH_CAP`] bytes, so only those are copied. Candidates whose window is not
    /// complete yet wait for more (all are examined at the line's end).
    fn scan(&mut self, matcher: &Matcher, piece: &[u8], at_end: bool) {
        let carried = self.carry.len();
        let total = carried + piece.len();
        if self.found.is_none() {
            let half = MATCH_CAP / 2;
            let mut joined = Vec::new();
            if carried > 0 {
                joined.reserve(carried + MATCH_CAP);
                joined.extend_from_slice(&self.carry);
                joined.extend_from_slice(&piece[..piece.len().min(MATCH_CAP)]);
            }
            let mut at = usize::try_from(self.examined.saturating_sub(self.carry_start))
                .unwrap_or(usize::MAX);
            loop {
                // Candidates starting in the carry are found in `joined`, the rest in the piece.
                let candidate = if at < carried {
                    matcher
                        .candidate(&joined, at)
                        .filter(|&c| c < carried)
                        .or_else(|| matcher.candidate(piece, 0).map(|c| c + carried))
                } else {
                    matcher.candidate(piece, at - carried).map(|c| c + carried)
                };
                let Some(c) = candidate else {
                    break;
                };
                if !at_end && c + half > total {
                    at = c;
                    break;
                }
                let lo = c.saturating_sub(half);
                let hi = (c + half).min(total);
                let window = if lo >= carried {
                    &piece[lo - carried..hi - carried]
                } else {
                    &joined[lo..hi]
                };
                if let Some(m) = matcher.regex.find(window) {
                    let mut found = show_window(window, m.start(), 0, window.len());
                    found.start += usize::try_from(self.carry_start).unwrap_or(usize::MAX) + lo;
                    self.found = Some(found);
                    break;
                }
                at = c + 1;
            }
            let done = if self.found.is_some() || at_end {
                total
            } else {
                at.max(total.saturating_sub(half)).min(total)
            };
            self.examined = self.carry_start + done as u64;
        }
        // Keep the last MATCH_CAP bytes of carry + piece.
        if piece.len() >= MATCH_CAP {
            self.carry.clear();
            self.carry
                .extend_from_slice(&piece[piece.len() - MATCH_CAP..]);
        } else {
            self.carry.extend_from_slice(piece);
            let drop = self.carry.len().saturating_sub(MATCH_CAP);
            self.carry.drain(..drop);
        }
        self.carry_start += (total - self.carry.len()) as u64;
    }
}

/// The line being received: held whole while it is short, scanned as it streams once long.
#[derive(Debug, Default)]
struct Partial {
    /// Its first [`MATCH_CAP`] bytes.
    held: Vec<u8>,
    len: u64,
    long: Option<LongLine>,
}

/// How strongly a salient line's kind speaks for itself, 1 (weak) to 3 (a crash).
fn strength(line: &[u8]) -> u8 {
    const CRASH: &[&[u8]] = &[
        b"Traceback",
        b"panicked",
        b"Sanitizer",
        b"Segmentation fault",
        b"core dumped",
        b"fatal",
        b"Fatal",
        b"FATAL",
        b"Killed",
        b"Aborted",
    ];
    const ERROR: &[&[u8]] = &[
        b"error",
        b"Error",
        b"ERROR",
        b"FAIL",
        b"failed",
        b"Exception",
        b"assert",
        b"CONFLICT",
        b"Invalid",
        b"want",
    ];
    // Each set's searcher is built once: built per line (a `memmem::find` per word) it was a
    // quarter of the time of ingesting a log.
    static SETS: std::sync::LazyLock<[AhoCorasick; 2]> = std::sync::LazyLock::new(|| {
        [CRASH, ERROR].map(|set| AhoCorasick::new(set).expect("literal words build a searcher"))
    });
    let [crash, error] = &*SETS;
    if crash.is_match(line) {
        3
    } else if error.is_match(line) {
        2
    } else {
        1
    }
}

/// Whether a line continues the diagnostic block above it: indented (after a `==PID==` prefix
/// that memory checkers print), or led by a marker compilers and test runners use.
pub(crate) fn is_continuation(line: &[u8]) -> bool {
    let mut l = line;
    if l.starts_with(b"==")
        && let Some(end) = memchr::memmem::find(&l[2..], b"==")
        && end > 0
        && l[2..2 + end].iter().all(u8::is_ascii_digit)
    {
        l = &l[end + 4..];
    }
    if l.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
        return l.iter().any(|b| !b.is_ascii_whitespace());
    }
    const LEADS: &[&[u8]] = &[
        b"note:",
        b"help:",
        b"= ",
        b"|",
        b"-->",
        b"^",
        b"~",
        b"#",
        b"at ",
        b"got",
        b"want",
        b"expected",
        b"Expected",
        b"actual",
        b"Actual",
        b"E ",
        b"> ",
        b"Caused by",
        b"...",
        b"+",
        b"- ",
        b"candidate",
    ];
    // Built once (see `strength`); `: note:  ` contains it.
    static NOTE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b": note: "));
    LEADS.iter().any(|m| l.starts_with(m)) || NOTE.find(l).is_some()
}

/// One salient line and its block.
#[derive(Debug, Clone)]
struct Entry {
    line_no: u64,
    /// Position in the sanitized stream just after this line's `\n`.
    end_pos: u64,
    template: u64,
    /// The template with its paths kept: two lines with this equal say the same thing.
    exact: u64,
    /// Lines above (display-capped), oldest first.
    before: Vec<Vec<u8>>,
    /// The header that owns an indented salient line, when above its context lines: the file
    /// name a stylish linter prints once above that file's findings (its line number, text).
    header: Option<(u64, Vec<u8>)>,
    /// The line as shown (a window of a long line, marked).
    line: Vec<u8>,
    /// Continuation lines below.
    after: Vec<Vec<u8>>,
}

impl Entry {
    fn block_bytes(&self) -> usize {
        self.before
            .iter()
            .chain(&self.after)
            .map(|l| l.len() + 1)
            .sum::<usize>()
            + self.line.len()
            + 1
    }
}

/// Counts of one template.
#[derive(Debug, Clone)]
struct TemplateStat {
    count: u64,
    /// The line of its first occurrence (its entry is kept).
    first: u64,
    /// Its first few line numbers.
    lines: Vec<u64>,
}

/// The block being completed below the last salient line.
#[derive(Debug)]
struct OpenBlock {
    line_no: u64,
    /// Lines that are not continuations, kept until a line says whether the block goes on (a
    /// sanitizer's `READ of size 4 …` between the error and its frames): one, or up to
    /// [`REPORT_GAP`] (blank lines too) once the block holds a report of several frames.
    tentative: Vec<Vec<u8>>,
}

/// A run of consecutive lines shown from the middle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) text: String,
    pub(crate) first_line: u64,
    pub(crate) last_line: u64,
    pub(crate) salient: u64,
}

/// What the middle's salient lines add to a view.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selection {
    pub(crate) groups: Vec<Group>,
    /// Bytes the groups take.
    pub(crate) bytes: usize,
    pub(crate) lines: usize,
}

/// Salient lines a view leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Unshown {
    pub(crate) count: u64,
    pub(crate) lines: Vec<u64>,
}

/// A matcher compiled on first use.
#[derive(Debug)]
enum Lazy {
    NotYet,
    Ready(std::sync::Arc<Matcher>),
    /// The patterns do not compile (reported by the sink): nothing matches.
    Invalid,
}

#[derive(Debug)]
pub(crate) struct SalientTracker {
    cfg: std::sync::Arc<SalientConfig>,
    /// Compiled on the first complete line: a command with no output never pays for it.
    regex: Lazy,
    budget: usize,
    head_cap: usize,
    tail_cap: usize,
    partial: Partial,
    /// The last two complete lines (display-capped), oldest first: context for a match at the
    /// start of the next chunk.
    ring: VecDeque<Vec<u8>>,
    open: Option<OpenBlock>,
    entries: HashMap<u64, Entry>,
    templates: HashMap<u64, TemplateStat>,
    /// Line numbers of entries that may still lie in the last `tail_cap` bytes.
    recent: VecDeque<u64>,
    /// Salient lines that started inside the head's bytes: (line, template, exact key).
    in_head: Vec<(u64, u64, u64)>,
    /// The last salient lines forgotten (left the tail, not the first of their template): where
    /// some of the lines a view leaves out are.
    forgotten: VecDeque<u64>,
    /// Salient lines of templates past [`MAX_TEMPLATES`]: counted, a few numbers kept.
    untracked: TemplateStat,
    total: u64,
    first_line: Option<u64>,
    /// The last line not indented, of those seen so far — unless a blank line or the end of an
    /// indented run followed it: the header of the indented lines below it.
    header: Option<(u64, Vec<u8>)>,
}

/// What a salient line keeps of the lines above it.
#[derive(Debug, Default)]
struct Above {
    /// Up to two lines right above it, oldest first.
    lines: Vec<Vec<u8>>,
    /// The header of the indented lines it is among (its line number, text).
    header: Option<(u64, Vec<u8>)>,
}

/// What the lines above a position say of its header.
#[derive(Debug, Clone)]
enum HeaderAbove {
    /// The header: its line number and text.
    Header((u64, Vec<u8>)),
    /// None: a blank line comes first.
    None,
    /// Only indented lines up to the region's start: the header is above it, if any.
    Above,
}

/// The header of the line starting at `ls` of `region` (numbered `line_no`), looking up
/// through the lines above it in `region`.
///
/// `known` is the answer for an earlier line of the region (where it starts, and its answer):
/// the walk stops there, so the salient lines of one region cost one walk in all, not one
/// each — a flood of indented errors would otherwise make it quadratic.
fn find_header(
    region: &[u8],
    ls: usize,
    line_no: u64,
    known: Option<&(usize, HeaderAbove)>,
) -> HeaderAbove {
    let mut end = ls;
    let mut n = line_no;
    while end > 0 {
        let start = memchr::memrchr(b'\n', &region[..end - 1]).map_or(0, |i| i + 1);
        // As the line is judged when it completes a chunk's partial line: by its first bytes.
        let line = &region[start..end - 1];
        let judged = &line[..line.len().min(MATCH_CAP)];
        n -= 1;
        match judged.first() {
            None => return HeaderAbove::None,
            Some(b) if !b.is_ascii_whitespace() => {
                return HeaderAbove::Header((n, cap(line, SHOW_CAP)));
            }
            Some(_) if judged.iter().all(u8::is_ascii_whitespace) => return HeaderAbove::None,
            Some(_) => {}
        }
        // An indented line whose own answer is known: it is the answer for what is below it.
        if let Some((at, answer)) = known
            && *at == start
        {
            return answer.clone();
        }
        end = start;
    }
    HeaderAbove::Above
}

/// `bytes` cut to at most `limit` bytes on a character boundary, marked ` [...]` when cut.
pub(crate) fn cap(bytes: &[u8], limit: usize) -> Vec<u8> {
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

/// How the cut start of a long line's window is marked.
const CUT_MARK: &str = "[… ";

/// A salient line as shown: whole, or its window marked with what was cut on each side.
fn shown_line(found: &Found, line_len: u64) -> Vec<u8> {
    let end = found.start as u64 + found.shown.len() as u64;
    if found.start == 0 && end == line_len {
        return found.shown.clone();
    }
    let mut out = Vec::with_capacity(found.shown.len() + 48);
    if found.start > 0 {
        out.extend_from_slice(format!("{CUT_MARK}{} bytes] ", found.start).as_bytes());
    }
    out.extend_from_slice(&found.shown);
    if end < line_len {
        out.extend_from_slice(format!(" [… {} bytes]", line_len - end).as_bytes());
    }
    out
}

impl SalientTracker {
    pub(crate) fn new(
        cfg: std::sync::Arc<SalientConfig>,
        budget: usize,
        head_cap: usize,
        tail_cap: usize,
    ) -> Self {
        SalientTracker {
            cfg,
            regex: Lazy::NotYet,
            budget,
            head_cap,
            tail_cap,
            partial: Partial::default(),
            ring: VecDeque::new(),
            open: None,
            entries: HashMap::new(),
            templates: HashMap::new(),
            recent: VecDeque::new(),
            in_head: Vec::new(),
            forgotten: VecDeque::new(),
            untracked: TemplateStat {
                count: 0,
                first: 0,
                lines: Vec::new(),
            },
            total: 0,
            first_line: None,
            header: None,
        }
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

    /// Whether a complete line held whole is salient, and what of it to show.
    fn match_line(matcher: &Matcher, line: &[u8]) -> Option<Found> {
        if line.len() <= MATCH_CAP {
            let at = matcher.find_short(line)?;
            return Some(show_window(line, at, 0, line.len()));
        }
        // The streaming scan over the whole line at once: one definition for both paths.
        let mut long = LongLine::default();
        long.scan(matcher, line, true);
        long.found
    }

    /// More of the line being received.
    fn partial_push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let before = usize::try_from(self.partial.len).unwrap_or(usize::MAX);
        let room = MATCH_CAP.saturating_sub(self.partial.held.len());
        self.partial
            .held
            .extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.partial.len += bytes.len() as u64;
        if self.partial.len <= MATCH_CAP as u64 {
            return;
        }
        if matches!(self.regex, Lazy::NotYet) {
            self.regex = self.cfg.compiled().map_or(Lazy::Invalid, Lazy::Ready);
        }
        let Lazy::Ready(matcher) = &self.regex else {
            return;
        };
        // Long: scanned as it streams, from its start (all held) the first time.
        let p = &mut self.partial;
        match &mut p.long {
            Some(long) => long.scan(matcher, bytes, false),
            None => {
                let mut long = LongLine::default();
                long.scan(matcher, &p.held[..before.min(p.held.len())], false);
                long.scan(matcher, bytes, false);
                p.long = Some(long);
            }
        }
    }

    /// The line being received is complete: whether it is salient, and its text.
    fn partial_finish(&mut self) -> (Vec<u8>, Option<Found>, u64) {
        let p = std::mem::take(&mut self.partial);
        let found = match (p.long, self.regex()) {
            (None, Some(m)) => Self::match_line(m, &p.held),
            (Some(mut long), Some(m)) => {
                long.scan(m, &[], true);
                long.found
            }
            (_, None) => None,
        };
        (p.held, found, p.len)
    }

    /// Sanitized text was appended. `line_no` is the number of the line `bytes` starts in,
    /// `line_start` the stream position where that line began, `line_len` how much of it came
    /// before `bytes`, `newlines` how many newlines `bytes` holds (the window counted them).
    pub(crate) fn text(
        &mut self,
        bytes: &[u8],
        line_no: u64,
        line_start: u64,
        line_len: u64,
        newlines: u64,
    ) {
        let base = line_start + line_len;
        let Some(first_nl) = memchr::memchr(b'\n', bytes) else {
            self.partial_push(bytes);
            return;
        };
        // The line that was in progress is complete.
        self.partial_push(&bytes[..first_nl]);
        let (held, found, len) = self.partial_finish();
        let end_pos = base + first_nl as u64 + 1;
        let shown = found.as_ref().map(|f| shown_line(f, len));
        let before: Vec<Vec<u8>> = if shown.is_some() {
            self.ring.iter().cloned().collect()
        } else {
            Vec::new()
        };
        let above = Above {
            lines: before,
            header: self.header.clone(),
        };
        self.on_line(&held, line_no, end_pos, line_start, shown, above);
        self.note_header(&held, line_no);
        self.remember(cap(&held, SHOW_CAP));
        let last_nl = memchr::memrchr(b'\n', bytes).expect("there is a newline");
        if last_nl > first_nl {
            let region_pos = base + first_nl as u64 + 1;
            // The region holds every newline but the first.
            let lines = newlines - 1;
            self.scan_region(
                &bytes[first_nl + 1..=last_nl],
                line_no + 1,
                region_pos,
                lines,
            );
        }
        self.partial_push(&bytes[last_nl + 1..]);
        self.evict(base + last_nl as u64 + 1);
    }

    fn remember(&mut self, line: Vec<u8>) {
        if self.ring.len() == 2 {
            self.ring.pop_front();
        }
        self.ring.push_back(line);
    }

    /// Complete lines in `region` (`lines` of them; it ends with `\n`), the first numbered
    /// `line_no`, starting at stream position `pos`: candidates found by the prefilter, and the
    /// lines right below a salient one while its block is open. Other lines are never visited.
    fn scan_region(&mut self, region: &[u8], line_no: u64, pos: u64, lines: u64) {
        let line_end = |from: usize| {
            from + memchr::memchr(b'\n', &region[from..]).expect("region ends with a newline")
        };
        let mut hits: Vec<(usize, usize, Found)> = Vec::new();
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
                if let Some(found) = Self::match_line(matcher, &region[ls..le]) {
                    hits.push((ls, le, found));
                }
                at = le + 1;
            }
        }
        let mut hits = hits.into_iter().peekable();
        // The header answer of the last salient line met, where the next one's walk may stop.
        let mut last_header: Option<(usize, HeaderAbove)> = None;
        let mut at = 0usize;
        let mut counted_to = 0usize;
        let mut current = line_no;
        loop {
            let next = if self.open.is_some() {
                at
            } else if let Some((ls, _, _)) = hits.peek() {
                *ls
            } else {
                break;
            };
            if next >= region.len() {
                break;
            }
            current += memchr::memchr_iter(b'\n', &region[counted_to..next]).count() as u64;
            counted_to = next;
            let le = line_end(next);
            let found = match hits.peek() {
                Some((ls, _, _)) if *ls == next => hits.next().map(|(_, _, f)| f),
                _ => None,
            };
            let line = &region[next..le];
            let (shown, above) = match &found {
                Some(f) => {
                    let header = find_header(region, next, current, last_header.as_ref());
                    let above = Above {
                        lines: self.lines_above(region, next),
                        header: self.header_above(&header),
                    };
                    last_header = Some((next, header));
                    (Some(shown_line(f, line.len() as u64)), above)
                }
                None => (None, Above::default()),
            };
            self.on_line(
                line,
                current,
                pos + le as u64 + 1,
                pos + next as u64,
                shown,
                above,
            );
            at = le + 1;
        }
        // The header of what follows, for a match in the next chunk.
        let last_line = line_no + lines - 1;
        match find_header(region, region.len(), last_line + 1, None) {
            HeaderAbove::Header(header) => self.header = Some(header),
            HeaderAbove::None => self.header = None,
            HeaderAbove::Above => {}
        }
        // The last two lines, for a match at the start of the next chunk.
        let body = &region[..region.len() - 1];
        let last_start = memchr::memrchr(b'\n', body).map_or(0, |i| i + 1);
        if last_start > 0 {
            let prev_start = memchr::memrchr(b'\n', &body[..last_start - 1]).map_or(0, |i| i + 1);
            self.remember(cap(&body[prev_start..last_start - 1], SHOW_CAP));
        }
        self.remember(cap(&body[last_start..], SHOW_CAP));
    }

    /// The header of the line starting at `ls` of `region` (numbered `line_no`): the nearest
    /// line above that is not indented, with only indented lines between.
    fn header_above(&self, found: &HeaderAbove) -> Option<(u64, Vec<u8>)> {
        match found {
            HeaderAbove::Header(header) => Some(header.clone()),
            HeaderAbove::None => None,
            HeaderAbove::Above => self.header.clone(),
        }
    }

    /// A completed line that is not indented heads the lines below it; a blank one ends that.
    fn note_header(&mut self, line: &[u8], line_no: u64) {
        match line.first() {
            None => self.header = None,
            Some(b) if !b.is_ascii_whitespace() => {
                self.header = Some((line_no, cap(line, SHOW_CAP)));
            }
            Some(_) if line.iter().all(u8::is_ascii_whitespace) => self.header = None,
            Some(_) => {}
        }
    }

    /// Up to two lines above the line starting at `ls` of `region`, oldest first (from the
    /// ring when the region starts first).
    fn lines_above(&self, region: &[u8], ls: usize) -> Vec<Vec<u8>> {
        let mut above = Vec::new();
        let mut end = ls;
        while above.len() < 2 && end > 0 {
            let start = memchr::memrchr(b'\n', &region[..end - 1]).map_or(0, |i| i + 1);
            above.push(cap(&region[start..end - 1], SHOW_CAP));
            end = start;
        }
        if end == 0 {
            for line in self.ring.iter().rev() {
                if above.len() == 2 {
                    break;
                }
                above.push(line.clone());
            }
        }
        above.reverse();
        above
    }

    /// A complete line visited in order: it may extend the open block, and it may be salient.
    fn on_line(
        &mut self,
        line: &[u8],
        line_no: u64,
        end_pos: u64,
        start_pos: u64,
        shown: Option<Vec<u8>>,
        above: Above,
    ) {
        let Above {
            lines: before,
            header,
        } = above;
        // What decides a line's role is its first MATCH_CAP bytes, the part always held.
        let line = &line[..line.len().min(MATCH_CAP)];
        if self.open.is_some() {
            self.extend_block(line);
        }
        let Some(shown) = shown else {
            return;
        };
        // Context above: the line above; two when the salient line is itself part of a block
        // (a finding under its code line) or the line above is (a frame under its header).
        let keep_above = match before.as_slice() {
            [.., last] if is_continuation(line) || is_continuation(last) => 2,
            [] => 0,
            _ => 1,
        };
        let mut before = before;
        before.drain(..before.len() - keep_above.min(before.len()));
        // An indented line's header, when its context lines above do not reach it.
        let indented = line.first().is_some_and(|b| *b == b' ' || *b == b'\t');
        let header = header.filter(|(n, _)| indented && *n + (before.len() as u64) < line_no);
        // A salient line is known (its template, its rank) by what is shown of it: the line
        // (its first `MATCH_CAP` bytes) or, for a long one, the window around its match — a
        // long line's start may be the same for lines that say different things deep inside.
        let known_by: &[u8] = &shown;
        let entry = Entry {
            line_no,
            end_pos,
            template: template::key(known_by),
            exact: template::exact_key(known_by),
            before,
            header,
            line: shown,
            after: Vec::new(),
        };
        self.record(entry, start_pos);
        self.open = Some(OpenBlock {
            line_no,
            tentative: Vec::new(),
        });
    }

    fn extend_block(&mut self, line: &[u8]) {
        let Some(open) = &mut self.open else {
            return;
        };
        let Some(entry) = self.entries.get_mut(&open.line_no) else {
            self.open = None;
            return;
        };
        let blank = line.iter().all(u8::is_ascii_whitespace);
        if entry.after.is_empty() && open.tentative.is_empty() {
            // The line below is context whatever it is; a blank one ends the block.
            entry.after.push(if blank {
                Vec::new()
            } else {
                cap(line, SHOW_CAP)
            });
            if blank {
                self.open = None;
            }
            return;
        }
        if blank || !is_continuation(line) {
            // A report of several frames (a sanitizer's, a memory checker's) has sections
            // separated by a blank line and a heading: a few such lines may lie between frames.
            let gap = if entry.after.len() >= 3 {
                REPORT_GAP
            } else {
                1
            };
            let room = open.tentative.len() < gap
                && entry.after.len() + open.tentative.len() + 1 < BLOCK_LINES;
            if room && !(blank && gap == 1) {
                open.tentative.push(if blank {
                    Vec::new()
                } else {
                    cap(line, SHOW_CAP)
                });
            } else {
                self.open = None;
            }
            return;
        }
        let mut add = std::mem::take(&mut open.tentative);
        add.push(cap(line, SHOW_CAP));
        let bytes: usize = add.iter().map(|l| l.len() + 1).sum();
        if entry.after.len() + add.len() > BLOCK_LINES || entry.block_bytes() + bytes > BLOCK_BYTES
        {
            self.open = None;
            return;
        }
        entry.after.extend(add);
    }

    fn record(&mut self, entry: Entry, start_pos: u64) {
        self.total += 1;
        self.first_line.get_or_insert(entry.line_no);
        if start_pos < self.head_cap as u64 {
            self.in_head
                .push((entry.line_no, entry.template, entry.exact));
        }
        let line_no = entry.line_no;
        let tracked =
            self.templates.len() < MAX_TEMPLATES || self.templates.contains_key(&entry.template);
        let stat = if tracked {
            self.templates
                .entry(entry.template)
                .or_insert_with(|| TemplateStat {
                    count: 0,
                    first: line_no,
                    lines: Vec::new(),
                })
        } else {
            &mut self.untracked
        };
        stat.count += 1;
        if stat.lines.len() < LINES_PER_TEMPLATE {
            stat.lines.push(line_no);
        }
        self.entries.insert(line_no, entry);
        self.recent.push_back(line_no);
    }

    /// Forgets entries that can no longer be in the tail, unless they are the first of their
    /// template.
    fn evict(&mut self, committed: u64) {
        let limit = committed.saturating_sub(self.tail_cap as u64);
        while let Some(&line_no) = self.recent.front() {
            let Some(entry) = self.entries.get(&line_no) else {
                self.recent.pop_front();
                continue;
            };
            // An entry whose block is still open waits: its eviction must not depend on
            // where the chunks were cut.
            if entry.end_pos > limit || self.open.as_ref().is_some_and(|o| o.line_no == line_no) {
                break;
            }
            self.recent.pop_front();
            let keep = self
                .templates
                .get(&entry.template)
                .is_some_and(|t| t.first == line_no);
            if !keep {
                self.entries.remove(&line_no);
                if self.forgotten.len() == LINES_PER_TEMPLATE * 2 {
                    self.forgotten.pop_front();
                }
                self.forgotten.push_back(line_no);
            }
        }
    }

    /// The current line was cleared by `\r`.
    pub(crate) fn clear_line(&mut self) {
        self.partial = Partial::default();
    }

    /// Whether line `line` is a salient line still known (in the tail, or the first of its
    /// template).
    pub(crate) fn is_salient(&self, line: u64) -> bool {
        self.entries.contains_key(&line)
    }

    /// Whether any salient line lies before line `line`.
    pub(crate) fn any_before(&self, line: u64) -> bool {
        self.first_line.is_some_and(|f| f < line)
    }

    /// The rank of an entry: rarer templates, crashes and compiler errors, and the first
    /// salient line of the output (the root of a cascade) first.
    fn score(&self, e: &Entry) -> u32 {
        let count = self
            .templates
            .get(&e.template)
            .map_or(u64::MAX, |t| t.count);
        let rarity = match count {
            1 => 30,
            2..=3 => 20,
            4..=10 => 10,
            _ => 0,
        };
        let first = if self.first_line == Some(e.line_no) {
            25
        } else {
            0
        };
        let is_template_first = self
            .templates
            .get(&e.template)
            .is_some_and(|t| t.first == e.line_no);
        // Its strength read here, of the few entries ranked, not of every salient line as it
        // streams (a line is known by what is shown of it, `on_line`).
        u32::from(strength(&e.line)) * 10 + rarity + first + if is_template_first { 5 } else { 0 }
    }

    /// Groups of lines to show strictly between line `head_last` and line `tail_first`: the
    /// salient lines from `mandatory_from` on (those a plain tail shows) first, outside the
    /// budget — each one that says something the view does not show otherwise (the same
    /// message with other numbers or ids is counted by a marker instead) —, then the best
    /// ranked of the rest within the budget, one per template.
    pub(crate) fn select(&self, head_last: u64, tail_first: u64, mandatory_from: u64) -> Selection {
        // What the head and the tail already show.
        let mut templates_in_view: std::collections::HashSet<u64> =
            std::collections::HashSet::new();
        let mut messages_in_view: std::collections::HashSet<u64> = std::collections::HashSet::new();
        for &(_, template, exact) in self.in_head.iter().filter(|h| h.0 <= head_last) {
            templates_in_view.insert(template);
            messages_in_view.insert(exact);
        }
        for n in self.recent.iter().filter(|&&n| n >= tail_first) {
            if let Some(e) = self.entries.get(n) {
                templates_in_view.insert(e.template);
                messages_in_view.insert(e.exact);
            }
        }
        let mut candidates: Vec<(bool, u32, &Entry)> = self
            .entries
            .values()
            .filter(|e| e.line_no > head_last && e.line_no < tail_first)
            .map(|e| (e.line_no >= mandatory_from, self.score(e), e))
            .collect();
        // Mandatory ones in line order, then the rest by rank.
        candidates.sort_by(|a, b| {
            b.0.cmp(&a.0).then(if a.0 && b.0 {
                a.2.line_no.cmp(&b.2.line_no)
            } else {
                b.1.cmp(&a.1).then(a.2.line_no.cmp(&b.2.line_no))
            })
        });
        // A line that is itself salient is shown as its entry shows it (a long one as the
        // window around its match), also where it is another's context.
        let text_of = |n: u64, context: &'_ [u8]| -> Vec<u8> {
            match self.entries.get(&n) {
                Some(e) => e.line.clone(),
                None => context.to_vec(),
            }
        };
        let mut lines: std::collections::BTreeMap<u64, Vec<u8>> = std::collections::BTreeMap::new();
        let mut salient: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
        let mut used_optional = 0usize;
        for (mandatory, _, e) in candidates {
            let said = if mandatory {
                messages_in_view.contains(&e.exact)
            } else {
                templates_in_view.contains(&e.template)
            };
            if said {
                continue;
            }
            let mut add: Vec<(u64, Vec<u8>)> = Vec::new();
            if let Some((n, header)) = &e.header
                && *n > head_last
            {
                add.push((*n, text_of(*n, header)));
            }
            let top = e.line_no - e.before.len() as u64;
            for (i, l) in e.before.iter().enumerate() {
                let n = top + i as u64;
                if n > head_last {
                    add.push((n, text_of(n, l)));
                }
            }
            add.push((e.line_no, e.line.clone()));
            for (i, l) in e.after.iter().enumerate() {
                let n = e.line_no + 1 + i as u64;
                if n < tail_first {
                    add.push((n, text_of(n, l)));
                }
            }
            if !mandatory {
                let cost: usize = add
                    .iter()
                    .filter(|(n, _)| !lines.contains_key(n))
                    .map(|(_, t)| t.len() + 1)
                    .sum();
                if used_optional + cost > self.budget {
                    // The line alone, when its block does not fit.
                    let alone = if lines.contains_key(&e.line_no) {
                        0
                    } else {
                        e.line.len() + 1
                    };
                    if used_optional + alone > self.budget {
                        continue;
                    }
                    add.retain(|(n, _)| *n == e.line_no);
                    used_optional += alone;
                } else {
                    used_optional += cost;
                }
            }
            for (n, t) in add {
                lines.entry(n).or_insert(t);
            }
            salient.insert(e.line_no);
            templates_in_view.insert(e.template);
            messages_in_view.insert(e.exact);
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut bytes = 0;
        let line_count = lines.len();
        for (n, text) in lines {
            let text = String::from_utf8_lossy(&text);
            bytes += text.len() + 1;
            let is_salient = u64::from(salient.contains(&n));
            match groups.last_mut() {
                Some(g) if g.last_line + 1 == n => {
                    g.text.push_str(&text);
                    g.text.push('\n');
                    g.last_line = n;
                    g.salient += is_salient;
                }
                _ => groups.push(Group {
                    text: format!("{text}\n"),
                    first_line: n,
                    last_line: n,
                    salient: is_salient,
                }),
            }
        }
        Selection {
            groups,
            bytes,
            lines: line_count,
        }
    }

    /// The template of a line shown whole (in the head or the tail), when it is salient: as
    /// the tracker knew it.
    fn template_of_shown(&self, line: &[u8]) -> Option<u64> {
        let Lazy::Ready(matcher) = &self.regex else {
            return None;
        };
        let found = Self::match_line(matcher, line)?;
        let shown = shown_line(&found, line.len() as u64);
        Some(template::key(&shown))
    }

    /// For each salient template a view shows and the output holds more of: the last line of
    /// it shown, and how many more lines like it were left out. `head` and `tail` are the
    /// view's head and tail (starting at line 1 and `tail_first`), `selection` its middle.
    pub(crate) fn similar(
        &self,
        head: &[u8],
        tail: &[u8],
        tail_first: u64,
        selection: &Selection,
    ) -> Vec<(u64, u64)> {
        // Every salient line shown counts, context lines included: (line, template).
        let mut lines: Vec<(u64, u64)> = Vec::new();
        let whole = |text: &[u8], first: u64, lines: &mut Vec<(u64, u64)>| {
            for (i, line) in text.split(|b| *b == b'\n').enumerate() {
                if let Some(t) = self.template_of_shown(line) {
                    lines.push((first + i as u64, t));
                }
            }
        };
        whole(head, 1, &mut lines);
        for group in &selection.groups {
            for (i, line) in group.text.lines().enumerate() {
                let n = group.first_line + i as u64;
                // A kept entry is shown as the tracker shows it (a window, marked).
                let template = match self.entries.get(&n) {
                    Some(e) => Some(e.template),
                    None => self.template_of_shown(line.as_bytes()),
                };
                if let Some(t) = template {
                    lines.push((n, t));
                }
            }
        }
        whole(tail, tail_first, &mut lines);
        let mut shown: HashMap<u64, (u64, u64)> = HashMap::new();
        for (n, template) in lines {
            let s = shown.entry(template).or_insert((n, 0));
            s.0 = s.0.max(n);
            s.1 += 1;
        }
        let mut similar: Vec<(u64, u64)> = shown
            .into_iter()
            .filter_map(|(template, (line, count))| {
                let total = self.templates.get(&template)?.count;
                (total > count).then(|| (line, total - count))
            })
            .collect();
        similar.sort_unstable();
        similar
    }

    /// Salient lines not in `shown` (sorted, inclusive line ranges): how many, and the first few.
    pub(crate) fn unshown(&self, shown: &[[u64; 2]]) -> Unshown {
        let is_shown = |n: u64| shown.iter().any(|r| r[0] <= n && n <= r[1]);
        let mut shown_count = 0u64;
        let mut known: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
        for stat in self
            .templates
            .values()
            .chain(std::iter::once(&self.untracked))
        {
            known.extend(stat.lines.iter().copied());
        }
        known.extend(self.recent.iter().copied());
        known.extend(self.in_head.iter().map(|h| h.0));
        known.extend(self.forgotten.iter().copied());
        known.extend(self.entries.keys().copied());
        // Every shown salient line is one of these: the head's, the tail's (recent) or a
        // kept entry.
        for &n in &known {
            if is_shown(n) {
                shown_count += 1;
            }
        }
        let lines: Vec<u64> = known
            .into_iter()
            .filter(|&n| !is_shown(n))
            .take(8)
            .collect();
        Unshown {
            count: self.total.saturating_sub(shown_count),
            lines,
        }
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
            "CONFLICT (content): Merge conflict in src/a.c",
            "==12== Invalid read of size 4",
            "    x_test.go:12: got 3, want 4",
            "=== 120 passed, 2 skipped, 3 deselected in 1.20s ===",
            "exit status 137",
            "Process exited with exit code 2",
            "Aborted (core dumped)",
            "==9==    definitely lost: 40 bytes in 1 blocks",
            "error: command timed out",
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
                m.candidate(line, 0).is_none()
                    || m.find_short(line).is_none()
                    || s.contains("error"),
                "{s}"
            );
        }
    }
}
