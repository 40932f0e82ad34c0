//! A deliberately simple reference sanitizer over a whole input, written independently of the
//! streaming one: lossy-decode everything, then walk the characters with lookahead.
#![allow(dead_code)]

pub(crate) mod corpus;

use agent_exec_sink::MAX_STRING_SEQUENCE;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';

/// `from_utf8_lossy`, except that a lone byte 0x9b (the 8-bit CSI) becomes that control's
/// character, not U+FFFD.
fn decode(mut input: &[u8]) -> Vec<char> {
    let mut chars = Vec::new();
    loop {
        match std::str::from_utf8(input) {
            Ok(text) => {
                chars.extend(text.chars());
                return chars;
            }
            Err(e) => {
                let (valid, rest) = input.split_at(e.valid_up_to());
                chars.extend(std::str::from_utf8(valid).unwrap().chars());
                let bad = e.error_len().unwrap_or(rest.len());
                chars.push(match rest {
                    [b @ 0x9b, ..] if bad == 1 => char::from(*b),
                    _ => char::REPLACEMENT_CHARACTER,
                });
                input = &rest[bad..];
            }
        }
    }
}

pub(crate) fn reference_sanitize(input: &[u8]) -> String {
    let chars = decode(input);
    let n = chars.len();
    let mut out = String::new();
    let mut cr = false;
    let mut i = 0;
    while i < n {
        let c = chars[i];
        // A C1 introducer is its 7-bit escape (`ESC` and the letter) in one character.
        let c1 = match c {
            '\u{9b}' => Some('['),
            '\u{9d}' => Some(']'),
            '\u{90}' => Some('P'),
            '\u{98}' => Some('X'),
            '\u{9e}' => Some('^'),
            '\u{9f}' => Some('_'),
            _ => None,
        };
        if c == ESC || c1.is_some() {
            let d = if let Some(d) = c1 {
                d
            } else {
                i += 1;
                let Some(&d) = chars.get(i) else { break };
                d
            };
            match d {
                '[' => {
                    i += 1;
                    while i < n && ('\u{20}'..='\u{3f}').contains(&chars[i]) {
                        i += 1;
                    }
                    if i < n && ('\u{40}'..='\u{7e}').contains(&chars[i]) {
                        i += 1;
                    }
                }
                ']' | 'P' | 'X' | '^' | '_' => {
                    let osc = d == ']';
                    i += 1;
                    let mut len = 0;
                    while i < n {
                        let e = chars[i];
                        if (osc && e == BEL) || e == '\u{9c}' {
                            i += 1;
                            break;
                        }
                        if e == '\n' {
                            break;
                        }
                        if e == ESC {
                            if chars.get(i + 1) == Some(&'\\') {
                                i += 2;
                            }
                            break;
                        }
                        i += 1;
                        if len + 1 >= MAX_STRING_SEQUENCE {
                            break;
                        }
                        len += 1;
                    }
                }
                '\u{20}'..='\u{2f}' => {
                    i += 1;
                    while i < n && ('\u{20}'..='\u{2f}').contains(&chars[i]) {
                        i += 1;
                    }
                    if i < n && ('\u{30}'..='\u{7e}').contains(&chars[i]) {
                        i += 1;
                    }
                }
                '\u{30}'..='\u{7e}' => i += 1,
                _ => {}
            }
            continue;
        }
        i += 1;
        if c == '\r' {
            cr = true;
            continue;
        }
        if c.is_control() && c != '\n' && c != '\t' {
            continue;
        }
        if cr {
            cr = false;
            if c != '\n' {
                let keep = out.rfind('\n').map_or(0, |p| p + 1);
                out.truncate(keep);
            }
        }
        out.push(c);
    }
    out
}

/// Lines as `wc -l` counts them, plus one for a final unterminated line.
pub(crate) fn count_lines(bytes: &[u8]) -> u64 {
    let nl = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    nl + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The last `max` bytes of `text`, starting on a character boundary.
pub(crate) fn tail_of(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The first `max` bytes of `text`, ending on a character boundary.
pub(crate) fn head_of(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
