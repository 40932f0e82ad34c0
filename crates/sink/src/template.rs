//! Line templates: what is left of a line once the parts that vary between its repetitions —
//! numbers, hex ids, paths — are taken out. "ERROR client 4411 disconnected" and "ERROR client
//! 97 disconnected" are one message seen twice; the window ranks and summarises by template.

/// A line's template key: digits runs, hex ids and path-like words collapsed, hashed (FNV-1a).
/// Hand-written rather than a regex pass: it runs on every line of an omitted middle, and one
/// byte loop with no allocation is several times faster than building a normalised string.
pub(crate) fn key(line: &[u8]) -> u64 {
    shape_key(line, |_| true)
}

/// [`key`], with each word (a run of letters) that `keep` refuses taken out too.
fn shape_key(line: &[u8], mut keep: impl FnMut(&[u8]) -> bool) -> u64 {
    let mut h = Fnv::default();
    for token in Tokens::new(line) {
        match token {
            Token::Number | Token::Id => h.write(b"\x01"),
            Token::Path => h.write(b"\x02"),
            Token::Text(t) if t.first().is_some_and(u8::is_ascii_alphabetic) && !keep(t) => {
                h.write(b"\x03");
            }
            Token::Text(t) => h.write(t),
        }
    }
    h.0
}

/// The line itself, hashed: two salient lines with this equal say exactly the same thing
/// (`error[E0308]: mismatched types` a hundred times), while a number may name a different
/// test (`test_parse[3]`), so nothing is collapsed.
pub(crate) fn exact_key(line: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.write(line);
    h.0
}

/// A template as a model reads it: numbers as `<N>`, hex ids as `<ID>`; the words (and paths) of
/// this example kept, with their numbers collapsed.
pub(crate) fn display(line: &[u8]) -> String {
    let mut out = Vec::with_capacity(line.len());
    for token in Tokens::with_paths(line, false) {
        match token {
            Token::Number => out.extend_from_slice(b"<N>"),
            Token::Id => out.extend_from_slice(b"<ID>"),
            Token::Path => out.extend_from_slice(b"<PATH>"),
            Token::Text(t) => out.extend_from_slice(t),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Default)]
struct Fnv(u64);

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        if self.0 == 0 {
            self.0 = 0xcbf2_9ce4_8422_2325;
        }
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

enum Token<'a> {
    /// A run of digits.
    Number,
    /// A word of six or more hex digits, at least one a digit: a hash, an address, an id.
    Id,
    /// A word holding a `/`: a path.
    Path,
    Text(&'a [u8]),
}

/// Splits a line into text, numbers and (optionally) paths.
struct Tokens<'a> {
    rest: &'a [u8],
    paths: bool,
    /// At the start of a whitespace-separated word.
    word_start: bool,
}

impl<'a> Tokens<'a> {
    fn new(line: &'a [u8]) -> Self {
        Self::with_paths(line, true)
    }

    fn with_paths(line: &'a [u8], paths: bool) -> Self {
        Tokens {
            rest: line,
            paths,
            word_start: true,
        }
    }
}

fn is_hex_id(word: &[u8]) -> bool {
    word.len() >= 6 && word.iter().all(u8::is_ascii_hexdigit) && word.iter().any(u8::is_ascii_digit)
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let rest = self.rest;
        let &first = rest.first()?;
        if self.paths && self.word_start && !first.is_ascii_whitespace() {
            let end = rest
                .iter()
                .position(u8::is_ascii_whitespace)
                .unwrap_or(rest.len());
            let word = &rest[..end];
            if word.len() > 1 && word.contains(&b'/') {
                self.rest = &rest[end..];
                self.word_start = false;
                return Some(Token::Path);
            }
        }
        if first.is_ascii_alphanumeric() {
            let end = rest
                .iter()
                .position(|b| !b.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            let word = &rest[..end];
            self.word_start = false;
            // An address: `0x7ffe1c2a`.
            let address = word.len() > 2
                && (word.starts_with(b"0x") || word.starts_with(b"0X"))
                && word[2..].iter().all(u8::is_ascii_hexdigit);
            if address || is_hex_id(word) {
                self.rest = &rest[end..];
                return Some(Token::Id);
            }
            // Within a word, a digit run is a number; the letters around it are text.
            if first.is_ascii_digit() {
                let digits = word.iter().position(|b| !b.is_ascii_digit()).unwrap_or(end);
                self.rest = &rest[digits..];
                return Some(Token::Number);
            }
            let letters = word.iter().position(u8::is_ascii_digit).unwrap_or(end);
            self.rest = &rest[letters..];
            return Some(Token::Text(&rest[..letters]));
        }
        let end = rest
            .iter()
            .position(|b| b.is_ascii_alphanumeric() || b.is_ascii_whitespace())
            .unwrap_or(rest.len())
            .max(1);
        if first.is_ascii_whitespace() {
            // Whitespace: one token, and the next word starts fresh.
            let ws = rest
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            self.rest = &rest[ws..];
            self.word_start = true;
            return Some(Token::Text(&rest[..ws]));
        }
        self.word_start = false;
        self.rest = &rest[end..];
        Some(Token::Text(&rest[..end]))
    }
}

/// Reads of an artifact for its summary: the whole of it up to this size, else this much in
/// evenly spaced windows (the counts are then estimates).
const SUMMARY_READ: u64 = 4 << 20;
const SAMPLE_WINDOWS: u64 = 64;
/// Templates counted; lines of further templates are not.
const SUMMARY_TEMPLATES: usize = 4096;

/// What the artifact says of the lines a view left out.
pub(crate) struct FileSummary {
    /// The most frequent templates (at least two lines each), most frequent first.
    pub(crate) frequent: Vec<crate::Template>,
    /// The counts are estimates from samples.
    pub(crate) estimated: bool,
    /// Lines that stand out: the only line of their template, in an omitted part made of few
    /// templates (a `not overwritten` among 2,000 `replaced with`), with their line numbers.
    pub(crate) rare: Vec<(u64, String)>,
}

/// At most this many lines are named as standing out.
const RARE_LINES: usize = 8;
/// Omitted lines per line of a kind of its own, at least: more such lines mean a varied
/// output, where none stands out.
const RARE_RATIO: usize = 20;

/// The omitted lines that stand out, with their line numbers: each the only line of its kind,
/// in an output made of a few kinds repeated. A line's kind is its shape: numbers, ids and
/// paths out, and each word this output uses rarely (a name, a value) taken out too — so
/// `dangling blob <ID>` is one kind of 2,600 lines and `missing blob <ID>` a kind of one. Of
/// several, those with the most rare words (the most that is unlike the rest) come first;
/// named in line order.
fn rare_lines(omitted: &Omitted) -> Vec<(u64, String)> {
    let text = &omitted.text;
    let omitted = &omitted.lines;
    use std::collections::HashMap;
    if omitted.len() < RARE_RATIO {
        return Vec::new();
    }
    // In how many lines each word occurs (a word: a run of letters, any case).
    let mut lines_with: HashMap<u64, u32> = HashMap::new();
    let mut seen: Vec<u64> = Vec::new();
    for (_, range) in omitted {
        let line = &text[range.clone()];
        seen.clear();
        for token in Tokens::new(line) {
            if let Token::Text(t) = token
                && t.first().is_some_and(u8::is_ascii_alphabetic)
            {
                seen.push(word_key(t));
            }
        }
        seen.sort_unstable();
        seen.dedup();
        for w in &seen {
            *lines_with.entry(*w).or_default() += 1;
        }
    }
    let common = u32::try_from(omitted.len() / 1000)
        .unwrap_or(u32::MAX)
        .max(2);
    // Each line's shape, and how many rare words it holds.
    let mut shapes: HashMap<u64, (u32, usize)> = HashMap::new();
    let mut of_line: Vec<(u64, u32)> = Vec::with_capacity(omitted.len());
    for (i, (_, range)) in omitted.iter().enumerate() {
        let mut rare_words = 0u32;
        let shape = shape_key(&text[range.clone()], |word| {
            let common = lines_with.get(&word_key(word)).copied().unwrap_or(0) >= common;
            rare_words += u32::from(!common);
            common
        });
        shapes.entry(shape).or_insert((0, i)).0 += 1;
        of_line.push((shape, rare_words));
    }
    let mut alone: Vec<(u32, usize)> = shapes
        .values()
        .filter(|(count, _)| *count == 1)
        .map(|&(_, i)| (of_line[i].1, i))
        .collect();
    if alone.is_empty() || alone.len() * RARE_RATIO > omitted.len() {
        return Vec::new();
    }
    alone.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut rare: Vec<(u64, String)> = alone
        .into_iter()
        .take(RARE_LINES)
        .map(|(_, i)| {
            let (number, range) = &omitted[i];
            let line = &text[range.clone()];
            (
                *number,
                String::from_utf8_lossy(&crate::salient::cap(line, crate::SHOW_CAP)).into_owned(),
            )
        })
        .collect();
    rare.sort_unstable();
    rare
}

/// The omitted lines an artifact's summary reads: their text in one buffer (a line each would
/// be an allocation each, a million for 4 MiB of short lines), with their numbers and ranges.
#[derive(Default)]
struct Omitted {
    text: Vec<u8>,
    lines: Vec<(u64, std::ops::Range<usize>)>,
}

/// A word, the same in any case.
fn word_key(word: &[u8]) -> u64 {
    let mut h = Fnv::default();
    for b in word {
        h.write(&[b.to_ascii_lowercase()]);
    }
    h.0
}

/// What the artifact at `path` holds in its lines that are not in `shown` (sorted, inclusive
/// line ranges): the `top` most frequent templates and the lines that stand out. Memory stays
/// bounded: lines are read with a bound, the table of templates is bounded, and a long
/// artifact is sampled (then the counts are estimates and no line is named).
pub(crate) fn summarize_file(
    path: &std::path::Path,
    shown: &[[u64; 2]],
    top: usize,
) -> std::io::Result<FileSummary> {
    use std::io::{BufReader, Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut table = Table::default();
    let estimated = len > SUMMARY_READ;
    if estimated {
        let window = SUMMARY_READ / SAMPLE_WINDOWS;
        for k in 0..SAMPLE_WINDOWS {
            let offset = k * (len - window) / (SAMPLE_WINDOWS - 1);
            file.seek(SeekFrom::Start(offset))?;
            let mut lines =
                crate::BoundedLines::new(BufReader::new((&mut file).take(window)), MATCH_CAP);
            // A window starts inside a line: its first (partial) line is not counted, and
            // neither is its last, cut by the window's end.
            let mut previous = lines.next_line()?.filter(|_| offset == 0);
            while let Some(line) = lines.next_line()? {
                if let Some(p) = previous.take() {
                    table.add(&p.bytes, None);
                }
                previous = Some(line);
            }
        }
        // Scale the samples' counts to the whole artifact.
        let scale = len as f64 / (window * SAMPLE_WINDOWS) as f64;
        for t in table.counts.values_mut() {
            t.count = (t.count as f64 * scale).round() as u64;
        }
    }
    let mut omitted = Omitted::default();
    if !estimated {
        let mut lines =
            crate::BoundedLines::new(BufReader::with_capacity(1 << 16, file), MATCH_CAP);
        let mut number = 0u64;
        let mut range = 0;
        while let Some(line) = lines.next_line()? {
            number += 1;
            while range < shown.len() && shown[range][1] < number {
                range += 1;
            }
            if range < shown.len() && shown[range][0] <= number {
                continue;
            }
            let start = omitted.text.len();
            if table.add(&line.bytes, Some(&mut omitted.text)) {
                omitted.lines.push((number, start..omitted.text.len()));
            }
        }
    }
    let rare = rare_lines(&omitted);
    let mut templates: Vec<Counted> = table.counts.into_values().collect();
    templates.retain(|t| t.count >= 2);
    templates.sort_by(|a, b| b.count.cmp(&a.count).then(a.order.cmp(&b.order)));
    let frequent = templates
        .into_iter()
        .take(top)
        .map(|t| crate::Template {
            count: t.count,
            text: display(t.example.as_bytes()),
        })
        .collect();
    Ok(FileSummary {
        frequent,
        estimated,
        rare,
    })
}

/// One template's count, and its first line (cut to [`SHOW_TEMPLATE`] bytes) as its example.
struct Counted {
    count: u64,
    order: u64,
    example: String,
}

/// Templates counted, by key.
#[derive(Default)]
struct Table {
    counts: std::collections::HashMap<u64, Counted>,
    /// Lines counted.
    counted: u64,
}

impl Table {
    /// Counts a line by its template, when it has words (then appends it, cleaned, to `keep`).
    fn add(&mut self, raw: &[u8], keep: Option<&mut Vec<u8>>) -> bool {
        // Raw artifact bytes: a line with escapes or controls is cleaned first (most are not).
        let clean;
        let line = if raw.iter().any(|&b| b >= 0x7f || (b < 0x20 && b != b'\t')) {
            clean = crate::sanitize(raw);
            clean.as_bytes()
        } else {
            raw
        };
        // Lines without words (rules, gutters, blank lines) say nothing of what was left out.
        if line
            .iter()
            .filter(|b| b.is_ascii_alphabetic() || **b >= 0x80)
            .count()
            < 3
        {
            return false;
        }
        let key = key(line);
        self.counted += 1;
        let full = self.counts.len() >= SUMMARY_TEMPLATES;
        match self.counts.get_mut(&key) {
            Some(t) => t.count += 1,
            None if !full => {
                let example =
                    String::from_utf8_lossy(&crate::salient::cap(line, SHOW_TEMPLATE)).into_owned();
                let order = self.counted;
                self.counts.insert(
                    key,
                    Counted {
                        count: 1,
                        order,
                        example,
                    },
                );
            }
            None => {}
        }
        if let Some(keep) = keep {
            keep.extend_from_slice(line);
        }
        true
    }
}

/// Bytes of a template shown in a summary.
const SHOW_TEMPLATE: usize = 160;

use crate::MATCH_CAP;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_differing_in_numbers_ids_and_paths_share_a_template() {
        let same = [
            (
                &b"ERROR client 4411 disconnected at 2024-05-01T12:00:01Z"[..],
                &b"ERROR client 97 disconnected at 2024-05-01T12:09:59Z"[..],
            ),
            (
                b"cc -O2 -Wall -c src/module_12.c -o build/module_12.o",
                b"cc -O2 -Wall -c src/main.c -o build/main.o",
            ),
            (b"request a3f9c2d1e0 failed", b"request 0b7e11aa93 failed"),
        ];
        for (a, b) in same {
            assert_eq!(
                key(a),
                key(b),
                "{:?} / {:?}",
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b)
            );
        }
        assert_ne!(key(b"ERROR client disconnected"), key(b"ERROR disk full"));
        assert_eq!(
            display(b"cc -O2 -c src/module_12.c -o build/module_12.o"),
            "cc -O<N> -c src/module_<N>.c -o build/module_<N>.o"
        );
        assert_eq!(display(b"id deadbeef42 gone"), "id <ID> gone");
    }
}
