//! PTY output as a terminal shows it: the raw stream runs through a terminal emulator
//! ([`vt100`]) of the PTY's size, and the text is what a person would read on it — the lines
//! that scrolled off the top of the screen, then the screen at the end. Progress bars (`\r`
//! redraws), cursor addressing (`tput cup`), screen clears, curses screens and colours come out
//! as they looked; each row's trailing spaces and the trailing blank lines are trimmed, and a
//! line the terminal wrapped at its width is one line again.
//!
//! Memory is bounded by the screen (rows × columns cells), whatever the volume: the emulator
//! keeps no scrollback of its own. A row that scrolls off the top can no longer change (no
//! escape sequence reaches it), so it is final: it goes to the window at once, as text, and the
//! window's budget and direction apply to it as to any output. Nothing is dropped here.
//!
//! Full-screen programs are shown as a terminal without an alternate screen shows them (tmux's
//! `alternate-screen off`): what was on the screen when the program switched to its own screen
//! moves up into the history, the program draws on the screen, and its last screen stays when
//! it switches back — so a curses program that ends (or is ended by agent-exec) leaves what it
//! showed, rather than the screen from before it started.

use std::fmt;
use std::str::FromStr;

use vt100::capture::{BasicFormattedCaptureRange, BasicFormattedCaptureState, RowContents};

use crate::sanitize::Emit;

/// The size of a pseudo-terminal, in character cells: the size programs are told
/// (`stty size`, `tput cols`) and the screen their output is rendered on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TerminalSize {
    /// Columns, [`MIN_COLS`](Self::MIN_COLS) to [`MAX_COLS`](Self::MAX_COLS).
    pub cols: u16,
    /// Rows, [`MIN_ROWS`](Self::MIN_ROWS) to [`MAX_ROWS`](Self::MAX_ROWS).
    pub rows: u16,
}

impl TerminalSize {
    /// 80 columns × 24 rows, a default terminal.
    pub const DEFAULT: TerminalSize = TerminalSize { cols: 80, rows: 24 };
    /// The fewest columns.
    pub const MIN_COLS: u16 = 10;
    /// The most columns.
    pub const MAX_COLS: u16 = 1000;
    /// The fewest rows.
    pub const MIN_ROWS: u16 = 2;
    /// The most rows (with [`MAX_COLS`](Self::MAX_COLS): a screen of 16 MiB of cells).
    pub const MAX_ROWS: u16 = 500;

    /// A size within the bounds.
    pub fn new(cols: u16, rows: u16) -> Result<TerminalSize, TerminalSizeError> {
        let size = TerminalSize { cols, rows };
        if (Self::MIN_COLS..=Self::MAX_COLS).contains(&cols)
            && (Self::MIN_ROWS..=Self::MAX_ROWS).contains(&rows)
        {
            Ok(size)
        } else {
            Err(TerminalSizeError(size.to_string()))
        }
    }
}

impl Default for TerminalSize {
    fn default() -> Self {
        TerminalSize::DEFAULT
    }
}

impl fmt::Display for TerminalSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.cols, self.rows)
    }
}

/// A text that is not a terminal size (`COLSxROWS` within the bounds).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a terminal size: write COLSxROWS, e.g. 120x40 (columns {min_c}-{max_c}, rows {min_r}-{max_r})",
    min_c = TerminalSize::MIN_COLS,
    max_c = TerminalSize::MAX_COLS,
    min_r = TerminalSize::MIN_ROWS,
    max_r = TerminalSize::MAX_ROWS
)]
pub struct TerminalSizeError(pub String);

impl FromStr for TerminalSize {
    type Err = TerminalSizeError;

    /// `COLSxROWS`: `120x40` (also `120X40`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || TerminalSizeError(text.to_owned());
        let (cols, rows) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
        let number = |s: &str| {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse::<u16>().map_err(|_| bad())
        };
        TerminalSize::new(number(cols)?, number(rows)?).map_err(|_| bad())
    }
}

/// Input handed to the emulator at a time: the rows it scrolls off are turned into text after
/// each slice, so what waits in between is bounded by the slice, not by the push.
const SLICE: usize = 4096;
/// The longest private-mode sequence (`ESC [ ? Pm h`) recognised; a longer one is passed on.
const MAX_PRIVATE_MODE: usize = 48;
/// The start of a private-mode sequence.
const PRIVATE_MODE: &[u8] = b"\x1b[?";
/// Blank lines or spaces emitted at a time.
const REPEAT_PIECE: usize = 64 * 1024;

/// Receives the rows that scroll off the top of the screen, in the emulator's "basic
/// formatted" form (SGR escapes and `\n` between rows not wrapped into the next).
#[derive(Default)]
struct Scrolled {
    text: String,
    state: BasicFormattedCaptureState,
}

impl vt100::Callbacks for Scrolled {
    fn on_scroll(&mut self, row: RowContents<'_>, alternate_screen: bool) {
        // The alternate screen is never entered (see the module docs); were it, its rows
        // would not be history either.
        if !alternate_screen {
            let _ = row.write_formatted_basic(&mut self.text, &mut self.state);
        }
    }
}

/// Trailing spaces of a row and blank lines, held back until text follows them: what ends
/// the output is trimmed, with bounded memory (counts, not text).
#[derive(Debug, Default)]
struct Trim {
    spaces: usize,
    newlines: usize,
}

fn push_repeated(out: &mut impl Emit, c: char, mut n: usize) {
    while n > 0 {
        let k = n.min(REPEAT_PIECE);
        out.text(&c.to_string().repeat(k));
        n -= k;
    }
}

impl Trim {
    /// Takes plain text (rows joined by `\n`) and emits all but what may turn out trailing.
    fn push(&mut self, text: &str, out: &mut impl Emit) {
        let mut ready = String::new();
        for (i, segment) in text.split('\n').enumerate() {
            if i > 0 {
                // A row ended: its trailing spaces go.
                self.spaces = 0;
                self.newlines += 1;
            }
            let body = segment.trim_end_matches(' ');
            let trailing = segment.len() - body.len();
            if body.is_empty() {
                self.spaces += trailing;
                continue;
            }
            if self.newlines + self.spaces > REPEAT_PIECE {
                out.text(&ready);
                ready.clear();
                push_repeated(out, '\n', std::mem::take(&mut self.newlines));
                push_repeated(out, ' ', std::mem::take(&mut self.spaces));
            }
            ready.extend(std::iter::repeat_n(
                '\n',
                std::mem::take(&mut self.newlines),
            ));
            ready.extend(std::iter::repeat_n(' ', std::mem::take(&mut self.spaces)));
            ready.push_str(body);
            self.spaces = trailing;
        }
        if !ready.is_empty() {
            out.text(&ready);
        }
    }
}

/// What a private-mode sequence at the start of some bytes is.
enum Private<'a> {
    /// Not a complete `ESC [ ? digits;… h|l` (or too long to be one we act on).
    Other,
    /// The bytes end before the sequence does.
    Partial,
    /// A complete one, `len` bytes long.
    Complete {
        len: usize,
        set: bool,
        params: &'a [u8],
    },
}

fn private_mode(bytes: &[u8]) -> Private<'_> {
    debug_assert!(bytes.starts_with(PRIVATE_MODE));
    for (i, &b) in bytes.iter().enumerate().skip(PRIVATE_MODE.len()) {
        if i >= MAX_PRIVATE_MODE {
            return Private::Other;
        }
        match b {
            b'0'..=b'9' | b';' => {}
            b'h' | b'l' => {
                return Private::Complete {
                    len: i + 1,
                    set: b == b'h',
                    params: &bytes[PRIVATE_MODE.len()..i],
                };
            }
            _ => return Private::Other,
        }
    }
    if bytes.len() >= MAX_PRIVATE_MODE {
        Private::Other
    } else {
        Private::Partial
    }
}

/// How many bytes at the end of `bytes` are a UTF-8 character cut short: a lead byte and fewer
/// continuation bytes than it announces.
///
/// The emulator is never handed such a cut: vte 0.15 keeps the start of the character for the
/// next call, and there, when the bytes that complete it are followed by more valid text, it
/// consumes that text too (`advance_partial_utf8` returns `valid_up_to`, not the character's
/// length) — a `\n` after an `é` cut in two would vanish, and the rendering would depend on
/// where the pipe's reads happened to split the stream.
fn unfinished_utf8(bytes: &[u8]) -> usize {
    let is_continuation = |b: u8| b & 0xC0 == 0x80;
    let Some(lead) = (bytes.len().saturating_sub(3)..bytes.len())
        .rev()
        .find(|&at| !is_continuation(bytes[at]))
    else {
        return 0;
    };
    match std::str::from_utf8(&bytes[lead..]) {
        Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => bytes.len() - lead,
        _ => 0,
    }
}

/// Where to end the next slice of at most `max` bytes of `bytes` so that it does not cut a
/// character (see [`unfinished_utf8`]).
fn slice_end(bytes: &[u8], max: usize) -> usize {
    if bytes.len() <= max {
        return bytes.len();
    }
    let end = max - unfinished_utf8(&bytes[..max]);
    // A slice that is only the start of a character cannot be shortened further.
    if end == 0 { max } else { end }
}

/// How many bytes at the end of `bytes` may be the start of a CSI sequence still to come: an
/// `ESC`, or `ESC [` and up to a few digits.
fn unfinished_csi(bytes: &[u8]) -> usize {
    let digits = bytes
        .iter()
        .rev()
        .take(MAX_PRIVATE_MODE)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let before = &bytes[..bytes.len() - digits];
    if before.ends_with(b"\x1b[") {
        digits + 2
    } else {
        usize::from(digits == 0 && before.ends_with(b"\x1b"))
    }
}

/// `slice` with every complete repeat sequence (`CSI n b`: draw the last character n more
/// times) capped at a row's width: eight bytes asking for 65,535 characters would otherwise
/// cost the emulator a screenful of work each, and a read of them seconds, during which the
/// call's timeout cannot be looked at. A row shows no more than `cols` of them anyway, but
/// for the wrap.
fn clamp_repeats(slice: &[u8], cols: u16) -> std::borrow::Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    for at in memchr::memmem::find_iter(slice, b"\x1b[") {
        let digits = slice[at + 2..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = at + 2 + digits;
        if digits == 0 || slice.get(end) != Some(&b'b') {
            continue;
        }
        let n: u64 = std::str::from_utf8(&slice[at + 2..end])
            .ok()
            .and_then(|d| d.parse().ok())
            .unwrap_or(u64::MAX);
        if n > u64::from(cols) {
            let buf = out.get_or_insert_with(|| Vec::with_capacity(slice.len()));
            buf.extend_from_slice(&slice[copied..at]);
            buf.extend_from_slice(format!("\x1b[{cols}b").as_bytes());
            copied = end + 1;
        }
    }
    match out {
        Some(mut buf) => {
            buf.extend_from_slice(&slice[copied..]);
            std::borrow::Cow::Owned(buf)
        }
        None => std::borrow::Cow::Borrowed(slice),
    }
}

/// The alternate-screen modes: 47, 1047, 1049.
fn is_alternate_screen(param: &[u8]) -> bool {
    matches!(param, b"47" | b"1047" | b"1049")
}

/// A terminal emulator rendering a PTY's output stream. See the module docs.
pub(crate) struct Terminal {
    parser: vt100::Parser<Scrolled>,
    cols: u16,
    /// The start of a private-mode sequence at the end of a push, kept for the next one.
    carry: Vec<u8>,
    trim: Trim,
}

impl fmt::Debug for Terminal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rows, cols) = self.parser.screen().size();
        f.debug_struct("Terminal")
            .field("rows", &rows)
            .field("cols", &cols)
            .finish_non_exhaustive()
    }
}

impl Terminal {
    pub(crate) fn new(size: TerminalSize) -> Terminal {
        let nonzero = |n: u16| std::num::NonZeroU16::new(n.max(1)).expect("at least 1");
        Terminal {
            // No scrollback: a row that leaves the screen is text at once (`on_scroll`).
            parser: vt100::Parser::new_with_callbacks(
                nonzero(size.rows),
                nonzero(size.cols),
                0,
                Scrolled::default(),
            ),
            cols: size.cols.max(1),
            carry: Vec::new(),
            trim: Trim::default(),
        }
    }

    /// Runs a chunk of the stream through the terminal, emitting the rows it scrolls off.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut impl Emit) {
        if self.carry.is_empty() {
            self.feed_scanned(chunk, out);
        } else {
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(chunk);
            self.feed_scanned(&joined, out);
        }
    }

    /// The screen as it shows now, each row's trailing spaces and the trailing blank rows
    /// trimmed (what a look at the terminal sees while the program runs).
    pub(crate) fn screen_now(&self) -> String {
        let contents = self.parser.screen().contents();
        let rows: Vec<&str> = contents.lines().map(str::trim_end).collect();
        let used = rows
            .iter()
            .rposition(|r| !r.is_empty())
            .map_or(0, |i| i + 1);
        rows[..used].join("\n")
    }

    /// The stream ended: emits the screen as it is now, and trims what ends the text.
    pub(crate) fn finish(&mut self, out: &mut impl Emit) {
        let carry = std::mem::take(&mut self.carry);
        self.process(&carry, out);
        let (screen, scrolled) = self.parser.screen_and_callbacks_mut();
        let mut formatted = std::mem::take(&mut scrolled.text);
        let _ = screen.write_contents_formatted_basic(
            &mut formatted,
            BasicFormattedCaptureRange::Full(&mut scrolled.state),
        );
        self.emit_formatted(&formatted, out);
        // Trailing blank lines and spaces are never emitted.
        self.trim = Trim::default();
    }

    /// Passes the stream on, acting on the alternate-screen switches in it.
    fn feed_scanned(&mut self, mut rest: &[u8], out: &mut impl Emit) {
        loop {
            let Some(at) = memchr::memmem::find(rest, PRIVATE_MODE) else {
                // An escape at the very end may be the start of one (of a mode switch, or of
                // a repeat whose count `clamp_repeats` must see whole), and a character may
                // be cut short: both wait for the next push.
                let keep = unfinished_csi(rest).max(unfinished_utf8(rest));
                let (now, later) = rest.split_at(rest.len() - keep);
                self.process(now, out);
                self.carry.extend_from_slice(later);
                return;
            };
            match private_mode(&rest[at..]) {
                Private::Other => {
                    self.process(&rest[..at + PRIVATE_MODE.len()], out);
                    rest = &rest[at + PRIVATE_MODE.len()..];
                }
                Private::Partial => {
                    self.process(&rest[..at], out);
                    self.carry.extend_from_slice(&rest[at..]);
                    return;
                }
                Private::Complete { len, set, params } => {
                    self.process(&rest[..at], out);
                    let (alternate, others): (Vec<&[u8]>, Vec<&[u8]>) = params
                        .split(|&b| b == b';')
                        .partition(|p| is_alternate_screen(p));
                    if alternate.is_empty() {
                        self.process(&rest[at..at + len], out);
                    } else {
                        if set {
                            self.enter_full_screen(out);
                        }
                        if !others.is_empty() {
                            let mut sequence = PRIVATE_MODE.to_vec();
                            sequence.extend_from_slice(&others.join(&b';'));
                            sequence.push(if set { b'h' } else { b'l' });
                            self.process(&sequence, out);
                        }
                    }
                    rest = &rest[at + len..];
                }
            }
        }
    }

    /// A program switches to its own screen: what the screen shows moves up into the history
    /// (as the clear that follows would otherwise lose it), leaving the screen blank for it.
    fn enter_full_screen(&mut self, out: &mut impl Emit) {
        let used = self
            .parser
            .screen()
            .rows(0, self.cols)
            .enumerate()
            .filter(|(_, row)| !row.trim_end().is_empty())
            .map(|(i, _)| i + 1)
            .last()
            .unwrap_or(0);
        if used > 0 {
            // Scroll up (SU) by the rows in use: they leave the top as history.
            self.process(format!("\x1b[{used}S").as_bytes(), out);
        }
    }

    /// Runs bytes through the emulator a slice at a time, emitting the rows scrolled off.
    fn process(&mut self, bytes: &[u8], out: &mut impl Emit) {
        let bytes = clamp_repeats(bytes, self.cols);
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            let (slice, after) = rest.split_at(slice_end(rest, SLICE));
            rest = after;
            self.parser.process(slice);
            let scrolled = &mut self.parser.callbacks_mut().text;
            if !scrolled.is_empty() {
                let formatted = std::mem::take(scrolled);
                self.emit_formatted(&formatted, out);
            }
        }
    }

    /// Emits basic-formatted rows as plain text, through the trim.
    fn emit_formatted(&mut self, formatted: &str, out: &mut impl Emit) {
        for plain in vt100::capture::basic_formatted_to_plain(formatted) {
            self.trim.push(plain, out);
        }
    }
}
