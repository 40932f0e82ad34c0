//! Streaming sanitizer: raw terminal bytes in, clean text for a model out.
//!
//! The rules, applied identically however the input is chunked:
//! - bytes are decoded as UTF-8 with the same replacement rule as
//!   [`String::from_utf8_lossy`] (one U+FFFD per maximal invalid subpart), and a character split
//!   across two pushes is reassembled;
//! - ANSI escape sequences (CSI, OSC, DCS/SOS/PM/APC strings and two-byte escapes) are removed,
//!   also when split across pushes; a string sequence that never terminates is abandoned at the
//!   end of its line (the line feed stays text) or after [`MAX_STRING_SEQUENCE`] characters, so
//!   binary noise cannot swallow the rest of the output (no real OSC, DCS or APC payload spans
//!   lines; in random bytes an 8-bit string introducer comes every fifty bytes or so);
//! - C0 and C1 controls are dropped except `\t` and `\n`; `\r\n` becomes `\n`;
//! - the C1 controls that open a sequence act as their 7-bit forms: CSI (U+009B, as `ESC [`),
//!   OSC (U+009D, as `ESC ]`), DCS, SOS, PM, APC (U+0090, U+0098, U+009E, U+009F) and ST
//!   (U+009C, as `ESC \`), written as characters (`\xc2\x9b` is U+009B, which a UTF-8 terminal
//!   reads as CSI). As a single 8-bit byte only CSI (`0x9b`: `\x9b31m`) is one: the others are
//!   letters in legacy 8-bit text (cp1250's `ž` is `0x9e`), and as string introducers they would
//!   swallow the rest of its line, so they stay U+FFFD. A `0x9b` is CSI only where UTF-8
//!   decoding finds it on its own (`from_utf8_lossy` would replace it alone): inside a
//!   character (`\xe2\x9b\x80`) or an invalid prefix of one (`\xe2\x9b` then ASCII) it is
//!   part of that character or replacement. Inside a string
//!   sequence only its end counts (BEL for OSC, ST in either form, a line feed, or an ESC that
//!   starts a new escape); other C1 characters there are content;
//! - a lone `\r` followed by more text clears the current line, as a terminal overwrites it
//!   (`10%\r20%\r100%\n` shows `100%`). A trailing `\r` with nothing after it clears nothing.

/// Receives the sanitized text.
pub(crate) trait Emit {
    /// Clean text, possibly containing `\n`, never `\r` or other controls.
    fn text(&mut self, text: &str);
    /// The current line is overwritten: discard it.
    fn clear_line(&mut self);
    /// [`text`](Self::text) whose newlines the caller already counted.
    fn counted_text(&mut self, text: &str, newlines: u64) {
        let _ = newlines;
        self.text(text);
    }
}

/// How many characters an OSC/DCS/APC string may hold before it is treated as noise.
pub const MAX_STRING_SEQUENCE: usize = 4096;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// The C1 control sequence introducer, the 8-bit form of `ESC [`.
const CSI: char = '\u{9b}';
/// The C1 string terminator, the 8-bit form of `ESC \`.
const ST: char = '\u{9c}';
/// The C1 operating system command, the 8-bit form of `ESC ]`.
const OSC: char = '\u{9d}';

/// True for the bytes that, standing alone (not part of a UTF-8 character), are C1 controls
/// opening or closing a sequence: DCS, SOS, CSI, ST, OSC, PM, APC. Every other lone byte of
/// `0x80..=0xC1` is invalid UTF-8 and becomes U+FFFD, as before.
#[inline]
fn is_c1_sequence_byte(b: u8) -> bool {
    // Only CSI: the other lone C1 bytes are letters in legacy 8-bit text (cp1250's `ž` is
    // 0x9e), and read as string introducers they would swallow the rest of its line; a CSI
    // swallows its parameters and final byte only.
    b == 0x9b
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum EscState {
    #[default]
    Ground,
    /// Saw ESC.
    Esc,
    /// ESC followed by intermediate bytes (0x20..=0x2F), waiting for the final byte.
    EscIntermediate,
    /// Inside a control sequence (ESC `[`).
    Csi,
    /// Inside a string sequence (OSC, DCS, SOS, PM, APC); `osc` ends also on BEL.
    Str { osc: bool, len: usize },
    /// Saw ESC inside a string sequence: `\` ends it.
    StrEsc { osc: bool, len: usize },
}

/// Incremental UTF-8 decoder with `from_utf8_lossy` replacement semantics.
#[derive(Debug, Default, Clone)]
struct Utf8Decoder {
    buf: [u8; 4],
    len: u8,
    need: u8,
}

impl Utf8Decoder {
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Feeds one non-ASCII or pending-continuation byte. Calls `out` with each decoded char.
    /// Returns `true` if the byte was consumed, `false` if it must be processed again
    /// (the pending sequence was invalid and has been flushed as U+FFFD).
    fn feed(&mut self, b: u8, out: &mut impl FnMut(char)) -> bool {
        if self.len == 0 {
            let need = match b {
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => {
                    out(char::REPLACEMENT_CHARACTER);
                    return true;
                }
            };
            self.buf[0] = b;
            self.len = 1;
            self.need = need;
            return true;
        }
        let valid = if self.len == 1 {
            match self.buf[0] {
                0xE0 => (0xA0..=0xBF).contains(&b),
                0xED => (0x80..=0x9F).contains(&b),
                0xF0 => (0x90..=0xBF).contains(&b),
                0xF4 => (0x80..=0x8F).contains(&b),
                _ => (0x80..=0xBF).contains(&b),
            }
        } else {
            (0x80..=0xBF).contains(&b)
        };
        if !valid {
            self.len = 0;
            out(char::REPLACEMENT_CHARACTER);
            return false;
        }
        self.buf[self.len as usize] = b;
        self.len += 1;
        if self.len == self.need {
            let bytes = &self.buf[..self.len as usize];
            self.len = 0;
            match std::str::from_utf8(bytes)
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => out(c),
                None => out(char::REPLACEMENT_CHARACTER),
            }
        }
        true
    }

    /// End of stream: an incomplete sequence becomes one U+FFFD.
    fn finish(&mut self, out: &mut impl FnMut(char)) {
        if self.len > 0 {
            self.len = 0;
            out(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// One stream's sanitizer state. Feed it bytes; it calls an [`Emit`] with clean text.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sanitizer {
    decoder: Utf8Decoder,
    esc: EscState,
    cr_pending: bool,
    /// Text produced byte by byte, handed on in one piece: the window's work is per call, so
    /// per-character calls would make escape- or binary-heavy output crawl.
    pending: String,
}

/// Pending text is handed on once it reaches this size.
const PENDING_FLUSH: usize = 8192;

/// True for bytes that can be copied to the view as they are (printable ASCII, `\t`, `\n`).
#[inline]
fn is_plain_ascii(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t'
}

/// C0 controls (except `\t`, `\n`, `\r`, ESC) and DEL: dropped without any other effect.
#[inline]
fn is_dropped_control(b: u8) -> bool {
    (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x1b)) || b == 0x7f
}

/// Length of the prefix made only of dropped controls; whole 64-byte blocks are checked
/// branch-free so NUL floods skip at memory speed.
fn dropped_prefix_len(input: &[u8]) -> usize {
    let mut done = 0;
    for block in input.chunks_exact(64) {
        // All NUL (the usual flood): one OR over eight words, before the per-byte classes.
        let any = block.chunks_exact(8).fold(0u64, |acc, w| {
            acc | u64::from_ne_bytes(w.try_into().expect("8 bytes"))
        });
        if any != 0 {
            let mut keep = 0u8;
            for &b in block {
                let dropped =
                    ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r') & (b != 0x1b))
                        | (b == 0x7f);
                keep |= u8::from(!dropped);
            }
            if keep != 0 {
                break;
            }
        }
        done += 64;
    }
    done + input[done..]
        .iter()
        .take_while(|&&b| is_dropped_control(b))
        .count()
}

/// Vectorizable check that a slice is entirely plain ASCII.
#[inline]
fn all_plain_ascii(bytes: &[u8]) -> bool {
    let mut bad = false;
    for chunk in bytes.chunks(64) {
        let mut acc = 0u8;
        for &b in chunk {
            let plain = ((b >= 0x20) & (b < 0x7f)) | (b == b'\n') | (b == b'\t');
            acc |= u8::from(!plain);
        }
        if acc != 0 {
            bad = true;
            break;
        }
    }
    !bad
}

impl Sanitizer {
    /// Feeds raw bytes holding `newlines` newlines. A chunk of plain text met in the ground
    /// state goes out whole with that count, so the window does not count them again (on a
    /// log, counting was a tenth of the ingest).
    pub(crate) fn feed_counted(&mut self, mut input: &[u8], newlines: u64, out: &mut impl Emit) {
        if input.len() >= 256 && self.is_ground() && !self.cr_pending && self.pending.is_empty() {
            // The scan `feed` would start with, done once: a whole clean chunk goes out with
            // its count; otherwise its clean prefix goes out as `feed` sends it.
            let clean = clean_prefix_len(input);
            let text = std::str::from_utf8(&input[..clean]).expect("clean prefix is valid UTF-8");
            if clean == input.len() {
                out.counted_text(text, newlines);
                return;
            }
            if clean > 0 {
                self.emit_text(text, out);
                input = &input[clean..];
            }
        }
        self.feed(input, out);
    }

    /// Feeds raw bytes.
    pub(crate) fn feed(&mut self, mut input: &[u8], out: &mut impl Emit) {
        while !input.is_empty() {
            if self.is_ground() {
                // Fast path: the longest clean prefix goes out untouched.
                let clean = clean_prefix_len(input);
                if clean > 0 {
                    let text =
                        std::str::from_utf8(&input[..clean]).expect("clean prefix is valid UTF-8");
                    self.emit_text(text, out);
                    input = &input[clean..];
                    continue;
                }
            }
            if self.is_ground() {
                // Runs of dropped controls (NUL floods, binary noise) are skipped in one go:
                // in the ground state they have no effect at all.
                let dropped = dropped_prefix_len(input);
                if dropped > 0 {
                    input = &input[dropped..];
                    continue;
                }
            }
            if self.is_ground() && !self.cr_pending {
                // Binary noise: invalid bytes, controls and stray text, without escapes, CRs or
                // multi-byte characters, go straight into the pending text.
                let used = self.noise_run(input);
                if used > 0 {
                    input = &input[used..];
                    if self.pending.len() >= PENDING_FLUSH {
                        self.flush(out);
                    }
                    continue;
                }
            }
            if self.in_string() {
                // The body of a string sequence is skipped up to what may end it: in binary
                // noise, where the 8-bit string introducers open one every few dozen bytes,
                // most bytes are string content.
                let used = self.string_run(input);
                if used > 0 {
                    input = &input[used..];
                    continue;
                }
            }
            // Slow path: bytes through the state machines, until the ground state meets plain
            // text again (only then is a fast-path scan worth starting).
            loop {
                let b = input[0];
                input = &input[1..];
                self.feed_byte(b, out);
                match input.first() {
                    None => break,
                    Some(&next) if self.is_ground() && is_plain_ascii(next) => break,
                    Some(_) if self.in_string() => break,
                    Some(_) => {}
                }
            }
        }
        self.flush(out);
    }

    /// In the ground state: consumes bytes that need no state (plain ASCII, dropped controls,
    /// invalid UTF-8, complete printable characters) and stops at anything else (escapes, CRs,
    /// C1 controls, a sequence cut by the end of the chunk).
    fn noise_run(&mut self, input: &[u8]) -> usize {
        let mut i = 0;
        let end = input.len().min(PENDING_FLUSH);
        while i < end {
            let b = input[i];
            if is_plain_ascii(b) {
                self.pending.push(char::from(b));
                i += 1;
            } else if is_dropped_control(b) {
                i += 1;
            } else if b == 0x1b && input.get(i + 1) == Some(&b'[') {
                // A complete CSI sequence (colours, cursor moves) is dropped in one step.
                let params = input[i + 2..]
                    .iter()
                    .take_while(|b| (0x20..=0x3f).contains(*b))
                    .count();
                match input.get(i + 2 + params) {
                    Some(0x40..=0x7e) => i += 3 + params,
                    _ => break,
                }
            } else if b == 0x9b {
                // The same for its 8-bit form.
                let params = input[i + 1..]
                    .iter()
                    .take_while(|b| (0x20..=0x3f).contains(*b))
                    .count();
                match input.get(i + 1 + params) {
                    Some(0x40..=0x7e) => i += 2 + params,
                    _ => break,
                }
            } else if b < 0x80 || is_c1_sequence_byte(b) {
                break;
            } else if (b < 0xc2 || b > 0xf4) && i + 1 < input.len() {
                // A byte that never starts a character: its own maximal invalid subpart.
                self.pending.push(char::REPLACEMENT_CHARACTER);
                i += 1;
            } else {
                // One character (at most 4 bytes) decoded in place: a UTF-8 check of the
                // rest of the input per byte made binary noise cost a scan per byte.
                let window = &input[i..input.len().min(i + 4)];
                let (valid, invalid) = match std::str::from_utf8(window) {
                    Ok(text) => (text, None),
                    Err(e) => (
                        std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or_default(),
                        e.error_len(),
                    ),
                };
                if let Some(c) = valid.chars().next() {
                    if c.is_control() {
                        break;
                    }
                    self.pending.push(c);
                    i += c.len_utf8();
                } else if let Some(len) = invalid.filter(|len| i + len < input.len()) {
                    // The maximal invalid subpart, as from_utf8_lossy replaces it.
                    self.pending.push(char::REPLACEMENT_CHARACTER);
                    i += len;
                } else {
                    // Possibly a character cut by the end of the chunk: the decoder's job.
                    break;
                }
            }
        }
        i
    }

    /// Inside a string sequence, with no character pending: consumes its content up to what
    /// may end it (BEL for OSC, ESC, ST in either form, a line feed, a character cut by the end
    /// of the chunk) or up to its length bound, counting characters as the state machine does.
    fn string_run(&mut self, input: &[u8]) -> usize {
        let EscState::Str { osc, mut len } = self.esc else {
            return 0;
        };
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            let width = if b < 0x80 {
                if b == 0x1b || b == b'\n' || (osc && b == 0x07) {
                    break;
                }
                1
            } else if b < 0xc2 || b > 0xf4 {
                // A lone byte: one U+FFFD, or a C1 control (only ST matters here).
                if b == 0x9c {
                    break;
                }
                1
            } else {
                let window = &input[i..input.len().min(i + 4)];
                match std::str::from_utf8(window) {
                    Ok(text) => text.chars().next().map_or(0, char::len_utf8),
                    Err(e) if e.valid_up_to() > 0 => {
                        std::str::from_utf8(&window[..e.valid_up_to()])
                            .ok()
                            .and_then(|text| text.chars().next())
                            .map_or(0, char::len_utf8)
                    }
                    Err(e) => e
                        .error_len()
                        .filter(|len| i + len < input.len())
                        .unwrap_or(0),
                }
            };
            if width == 0 || input[i..i + width] == [0xc2, 0x9c] {
                // A character cut by the end of the chunk (the decoder's job), or ST.
                break;
            }
            i += width;
            if len + 1 >= MAX_STRING_SEQUENCE {
                self.esc = EscState::Ground;
                return i;
            }
            len += 1;
        }
        self.esc = EscState::Str { osc, len };
        i
    }

    /// True inside the body of a string sequence with no UTF-8 character pending.
    fn in_string(&self) -> bool {
        matches!(self.esc, EscState::Str { .. }) && self.decoder.is_empty()
    }

    fn flush(&mut self, out: &mut impl Emit) {
        if !self.pending.is_empty() {
            out.text(&self.pending);
            self.pending.clear();
        }
    }

    /// End of stream: flush an incomplete UTF-8 sequence.
    pub(crate) fn finish(&mut self, out: &mut impl Emit) {
        let mut chars = Vec::new();
        self.decoder.finish(&mut |c| chars.push(c));
        for c in chars {
            self.on_char(c, out);
        }
        self.flush(out);
    }

    fn is_ground(&self) -> bool {
        self.esc == EscState::Ground && self.decoder.is_empty()
    }

    fn feed_byte(&mut self, b: u8, out: &mut impl Emit) {
        if self.decoder.is_empty() {
            if b < 0x80 {
                self.on_char(char::from(b), out);
                return;
            }
            if is_c1_sequence_byte(b) {
                // A lone 8-bit C1 control: the character it stands for (U+0090..U+009F).
                self.on_char(char::from(b), out);
                return;
            }
            if matches!(b, 0x80..=0xC1 | 0xF5..=0xFF) {
                // Never valid in UTF-8: one replacement character, as from_utf8_lossy gives.
                self.on_char(char::REPLACEMENT_CHARACTER, out);
                return;
            }
        }
        let mut chars: [char; 2] = ['\0'; 2];
        let mut n = 0;
        let consumed = self.decoder.feed(b, &mut |c| {
            chars[n] = c;
            n += 1;
        });
        for &c in &chars[..n] {
            self.on_char(c, out);
        }
        if !consumed {
            self.feed_byte(b, out);
        }
    }

    fn on_char(&mut self, c: char, out: &mut impl Emit) {
        self.esc = match self.esc {
            EscState::Ground => {
                self.ground_char(c, out);
                return;
            }
            EscState::Esc => match c {
                '[' => EscState::Csi,
                ']' => EscState::Str { osc: true, len: 0 },
                'P' | 'X' | '^' | '_' => EscState::Str { osc: false, len: 0 },
                '\u{20}'..='\u{2f}' => EscState::EscIntermediate,
                '\u{30}'..='\u{7e}' => EscState::Ground,
                _ => {
                    // Not an escape after all: drop the ESC, process the char normally.
                    self.esc = EscState::Ground;
                    self.ground_char(c, out);
                    return;
                }
            },
            EscState::EscIntermediate => match c {
                '\u{20}'..='\u{2f}' => EscState::EscIntermediate,
                '\u{30}'..='\u{7e}' => EscState::Ground,
                _ => {
                    self.esc = EscState::Ground;
                    self.ground_char(c, out);
                    return;
                }
            },
            EscState::Csi => match c {
                '\u{20}'..='\u{3f}' => EscState::Csi,
                '\u{40}'..='\u{7e}' => EscState::Ground,
                _ => {
                    self.esc = EscState::Ground;
                    self.ground_char(c, out);
                    return;
                }
            },
            EscState::Str { osc, len } => match c {
                BEL if osc => EscState::Ground,
                ST => EscState::Ground,
                '\n' => {
                    // A string ends at the end of its line, which stays text.
                    self.esc = EscState::Ground;
                    self.ground_char(c, out);
                    return;
                }
                ESC => EscState::StrEsc { osc, len },
                _ if len + 1 >= MAX_STRING_SEQUENCE => EscState::Ground,
                _ => EscState::Str { osc, len: len + 1 },
            },
            EscState::StrEsc { osc, len } => match c {
                '\\' => EscState::Ground,
                // An ESC that does not start ST ends the string and starts a new escape.
                _ => {
                    self.esc = EscState::Esc;
                    let _ = (osc, len);
                    self.on_char(c, out);
                    return;
                }
            },
        };
    }

    fn ground_char(&mut self, c: char, out: &mut impl Emit) {
        match c {
            ESC => self.esc = EscState::Esc,
            CSI => self.esc = EscState::Csi,
            OSC => self.esc = EscState::Str { osc: true, len: 0 },
            '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => {
                self.esc = EscState::Str { osc: false, len: 0 };
            }
            '\r' => self.cr_pending = true,
            '\n' | '\t' => {
                let mut buf = [0u8; 4];
                self.emit_text(c.encode_utf8(&mut buf), out);
            }
            c if c.is_control() => {}
            c => {
                let mut buf = [0u8; 4];
                self.emit_text(c.encode_utf8(&mut buf), out);
            }
        }
    }

    fn emit_text(&mut self, text: &str, out: &mut impl Emit) {
        if self.cr_pending {
            self.cr_pending = false;
            if !text.starts_with('\n') {
                // The line in progress is cleared. When it began in the pending text, it is cut
                // there and nothing reaches the view (binary noise has a CR every ~256 bytes:
                // a flush per CR made the window's work per byte, not per chunk).
                match self.pending.rfind('\n') {
                    Some(nl) => self.pending.truncate(nl + 1),
                    None => {
                        self.pending.clear();
                        out.clear_line();
                    }
                }
            }
        }
        if text.len() >= 256 {
            self.flush(out);
            out.text(text);
        } else {
            self.pending.push_str(text);
            if self.pending.len() >= PENDING_FLUSH {
                self.flush(out);
            }
        }
    }

    /// Sanitizes a whole buffer at once (used for previews and tests).
    pub(crate) fn sanitize_all(input: &[u8]) -> String {
        let mut s = Sanitizer::default();
        let mut view = LineText::default();
        s.feed(input, &mut view);
        s.finish(&mut view);
        view.text
    }
}

/// Length of the longest prefix that can be emitted unchanged: plain ASCII and valid UTF-8
/// without controls, ending on a character boundary. Linear in the prefix length (plus one
/// 64-byte block), so calling it again after each special byte keeps the whole walk linear.
fn clean_prefix_len(input: &[u8]) -> usize {
    if all_plain_ascii(input) {
        return input.len();
    }
    let mut i = 0;
    loop {
        while i < input.len() && is_plain_ascii(input[i]) {
            i += 1;
        }
        let Some(&b) = input.get(i) else { return i };
        let width = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return i,
        };
        let Some(bytes) = input.get(i..i + width) else {
            return i;
        };
        match std::str::from_utf8(bytes) {
            Ok(s) if !s.chars().next().is_some_and(char::is_control) => i += width,
            _ => return i,
        }
    }
}

/// An [`Emit`] that builds the text a terminal would show (used by previews and tests).
#[derive(Debug, Default)]
pub(crate) struct LineText {
    pub(crate) text: String,
}

impl Emit for LineText {
    fn text(&mut self, text: &str) {
        self.text.push_str(text);
    }

    fn clear_line(&mut self) {
        let keep = self.text.rfind('\n').map_or(0, |i| i + 1);
        self.text.truncate(keep);
    }
}

/// Sanitizes a complete byte string in one go: the text a model is shown of it.
pub fn sanitize(input: &[u8]) -> String {
    Sanitizer::sanitize_all(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(input: &[u8], size: usize) -> String {
        let mut s = Sanitizer::default();
        let mut view = LineText::default();
        for c in input.chunks(size.max(1)) {
            s.feed(c, &mut view);
        }
        s.finish(&mut view);
        view.text
    }

    #[test]
    fn strips_csi_and_osc() {
        assert_eq!(sanitize(b"\x1b[31mred\x1b[0m plain"), "red plain");
        assert_eq!(sanitize(b"\x1b]0;title\x07after"), "after");
        assert_eq!(
            sanitize(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(sanitize(b"a\x1b(Bb"), "ab");
    }

    #[test]
    fn escapes_split_across_pushes_are_removed() {
        let input = b"x\x1b[38;5;196mcolour\x1b[0my";
        for size in 1..input.len() {
            assert_eq!(chunked(input, size), "xcoloury", "chunk size {size}");
        }
    }

    #[test]
    fn controls_dropped_except_tab_and_newline() {
        assert_eq!(sanitize(b"a\x00b\x07c\td\x08e\x7ff\n"), "abc\tdef\n");
        assert_eq!(sanitize("x\u{85}y\u{9a}z".as_bytes()), "xyz");
    }

    #[test]
    fn crlf_becomes_lf() {
        assert_eq!(sanitize(b"one\r\ntwo\r\n"), "one\ntwo\n");
    }

    #[test]
    fn carriage_return_overwrites_the_line() {
        assert_eq!(sanitize(b"10%\r20%\r100%\n"), "100%\n");
        assert_eq!(sanitize(b"keep\nabc\rX\n"), "keep\nX\n");
        assert_eq!(sanitize(b"done\r"), "done");
        assert_eq!(chunked(b"10%\r20%\r100%\n", 1), "100%\n");
    }

    #[test]
    fn invalid_utf8_becomes_replacement() {
        let input = b"a\xffb\xe2\x82c\xf0\x9f\x98";
        assert_eq!(sanitize(input), String::from_utf8_lossy(input));
        for size in 1..input.len() {
            assert_eq!(chunked(input, size), String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn split_character_is_reassembled() {
        let input = "a😀b".as_bytes();
        assert_eq!(chunked(input, 1), "a😀b");
        assert_eq!(chunked(input, 2), "a😀b");
    }

    #[test]
    fn eight_bit_c1_sequences_are_removed() {
        assert_eq!(sanitize(b"\x9b31mred\x9b0m plain"), "red plain");
        assert_eq!(sanitize(b"\x9b1;32mPASS\x9b0m\n"), "PASS\n");
        // A 7-bit string ends at ST written as U+009C.
        assert_eq!(sanitize("\x1b]0;title\u{9c}after".as_bytes()), "after");
        // The other lone C1 bytes are legacy 8-bit letters (cp1250 `Za\x9e\xedt`): one U+FFFD
        // each, the text after them kept.
        assert_eq!(sanitize(b"Za\x9e\xedt\n"), "Za\u{fffd}\u{fffd}t\n");
        assert_eq!(sanitize(b"\x9d0;title\x07after"), "\u{fffd}0;titleafter");
        assert_eq!(sanitize(b"a\x9cb"), "a\u{fffd}b");
        // A CSI whose next byte cannot continue it ends there; that byte is text.
        assert_eq!(sanitize(b"a\x9b\xc3\xa9"), "a\u{e9}");
    }

    #[test]
    fn c1_sequences_in_utf8_form_are_removed() {
        // U+009B, U+009D, U+009C encoded as UTF-8: a UTF-8 terminal reads them as C1 too.
        assert_eq!(sanitize("\u{9b}31mred\u{9b}0m".as_bytes()), "red");
        assert_eq!(sanitize("\u{9d}0;t\u{9c}after".as_bytes()), "after");
        assert_eq!(sanitize("\u{90}q\u{9c}after".as_bytes()), "after");
    }

    #[test]
    fn c1_bytes_inside_utf8_characters_are_text() {
        // U+201B and U+1F61B end in 0x9b; U+2E9C holds 0x9c: characters, never escapes.
        assert_eq!(sanitize("a\u{201b}31m".as_bytes()), "a\u{201b}31m");
        assert_eq!(sanitize("\u{1f61b}[0m".as_bytes()), "\u{1f61b}[0m");
        assert_eq!(sanitize("\x1b]0;\u{2e9c}\x07x".as_bytes()), "x");
        // A byte of an invalid prefix is part of that prefix's U+FFFD, as from_utf8_lossy
        // groups it: `\xe2\x9b` then ASCII is one replacement, and the ASCII stays.
        assert_eq!(sanitize(b"\xe2\x9b31m"), "\u{fffd}31m");
        // 0x9b cannot follow 0xe0: the 0xe0 is replaced alone and the 0x9b stands alone.
        assert_eq!(sanitize(b"\xe0\x9b31mx"), "\u{fffd}x");
        // Other lone C1 bytes are invalid UTF-8, as before.
        assert_eq!(sanitize(b"a\x85b\x9ac"), "a\u{fffd}b\u{fffd}c");
    }

    #[test]
    fn c1_sequences_split_across_pushes_are_removed() {
        let raw = [
            &b"x\x9b38;5;196mcol"[..],
            "\u{9b}1mour".as_bytes(),
            "\u{9d}0;".as_bytes(),
            "\u{e9}t".as_bytes(),
            "\u{9c}y".as_bytes(),
            "\u{9d}a\u{9c}".as_bytes(),
            "\u{90}".as_bytes(),
            "\u{201b}".as_bytes(),
            "\u{9c}z".as_bytes(),
            b"\xe2\x9bq",
        ]
        .concat();
        assert_eq!(sanitize(&raw), "xcoloury z\u{fffd}q".replace(' ', ""));
        for size in 1..raw.len() {
            assert_eq!(chunked(&raw, size), sanitize(&raw), "chunk size {size}");
        }
    }

    #[test]
    fn unterminated_eight_bit_string_is_bounded() {
        for (intro, utf8) in [
            (&b"\x1b]"[..], false),
            (b"\x1bP", false),
            (b"\xc2\x9d", true),
        ] {
            let mut input = intro.to_vec();
            input.extend(std::iter::repeat_n(b'x', MAX_STRING_SEQUENCE + 10));
            let out = sanitize(&input);
            assert_eq!(out, "x".repeat(10), "{intro:?} (utf8 form: {utf8})");
            for size in [1, 7, 4096] {
                assert_eq!(chunked(&input, size), out, "chunk size {size}");
            }
        }
        // Multi-byte content counts as characters, with the same bound.
        let mut input = "\u{9d}".as_bytes().to_vec();
        for _ in 0..MAX_STRING_SEQUENCE + 3 {
            input.extend("\u{e9}".as_bytes());
        }
        assert_eq!(sanitize(&input), "\u{e9}".repeat(3));
        assert_eq!(chunked(&input, 3), "\u{e9}".repeat(3));
    }

    #[test]
    fn a_string_sequence_ends_at_the_end_of_its_line() {
        assert_eq!(
            sanitize(b"\x1b]0;never ended\nnext line\n"),
            "\nnext line\n"
        );
        assert_eq!(
            sanitize("noise\u{90}\u{fe}x\nerror: here\n".as_bytes()),
            "noise\nerror: here\n"
        );
        assert_eq!(sanitize("\u{9d}0;t\x1b\nkept".as_bytes()), "\nkept");
        assert_eq!(chunked("a\u{9d}xy\nb".as_bytes(), 1), "a\nb");
    }

    #[test]
    fn unterminated_osc_is_bounded() {
        let mut input = b"\x1b]".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_STRING_SEQUENCE + 10));
        let out = sanitize(&input);
        assert!(out.len() <= 11, "{}", out.len());
    }
}
