//! Lines of input with a bound on what is held: a server's requests, an artifact's lines.

use std::io::{self, BufRead};

/// One line, without its newline: its first bytes (at most the reader's bound) and its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The line, or its first `max` bytes when it is longer.
    pub bytes: Vec<u8>,
    /// The whole line's length in bytes.
    pub len: u64,
    /// When the line is longer than `max`: its last bytes (at most [`LINE_TAIL`]) after
    /// the first `max`; else empty.
    pub tail: Vec<u8>,
}

/// How much of the end of an over-long line [`BoundedLines`] keeps.
pub const LINE_TAIL: usize = 1024;

impl Line {
    /// The line was longer than the bound: `bytes` holds only its start.
    pub fn is_cut(&self) -> bool {
        self.len > self.bytes.len() as u64
    }
}

/// Splits input into lines, holding at most `max` bytes of each: the rest of a longer line is
/// read and dropped, and [`Line::len`] says how long it was.
// Hand-written over `BufRead::read_until`, which would buffer a line of any length.
#[derive(Debug)]
pub struct BoundedLines<R> {
    input: R,
    max: usize,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `input`, holding at most `max` bytes of each.
    pub fn new(input: R, max: usize) -> Self {
        BoundedLines { input, max }
    }

    /// The next line; `None` at end of input. A last line without a newline counts.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut tail = Vec::new();
        let mut len: u64 = 0;
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok((len > 0).then_some(Line {
                    bytes: line,
                    len,
                    tail,
                }));
            }
            let (chunk, end) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            len += chunk.len() as u64;
            let room = self.max.saturating_sub(line.len());
            let kept = chunk.len().min(room);
            line.extend_from_slice(&chunk[..kept]);
            keep_tail(&mut tail, &chunk[kept..]);
            let used = end.unwrap_or(chunk.len());
            self.input.consume(used);
            if end.is_some() {
                return Ok(Some(Line {
                    bytes: line,
                    len,
                    tail,
                }));
            }
        }
    }
}

/// Appends `more` to `tail`, keeping only its last [`LINE_TAIL`] bytes.
fn keep_tail(tail: &mut Vec<u8>, more: &[u8]) {
    if more.len() >= LINE_TAIL {
        tail.clear();
        tail.extend_from_slice(&more[more.len() - LINE_TAIL..]);
    } else {
        tail.extend_from_slice(more);
        let over = tail.len().saturating_sub(LINE_TAIL);
        tail.drain(..over);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(input: &[u8], max: usize, buffer: usize) -> Vec<Line> {
        let mut reader = BoundedLines::new(io::BufReader::with_capacity(buffer, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    fn whole(text: &[u8]) -> Line {
        Line {
            bytes: text.to_vec(),
            len: text.len() as u64,
            tail: Vec::new(),
        }
    }

    #[test]
    fn long_lines_keep_their_start_and_length_and_the_next_one_is_read() {
        let input = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxx\n\n{\"b\":2}";
        let got = lines(input, 10, 4);
        assert_eq!(
            got,
            vec![
                whole(b"{\"a\":1}"),
                Line {
                    bytes: b"xxxxxxxxxx".to_vec(),
                    len: 20,
                    tail: b"xxxxxxxxxx".to_vec(),
                },
                whole(b""),
                whole(b"{\"b\":2}"),
            ]
        );
        assert!(got[1].is_cut() && !got[0].is_cut());
    }

    #[test]
    fn a_long_line_keeps_its_last_bytes_whatever_the_reads() {
        let line: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut input = line.clone();
        input.extend_from_slice(b"\nnext");
        for buffer in [1, 7, 4096, 1 << 16] {
            let got = lines(&input, 10, buffer);
            assert_eq!(got[0].tail, line[5000 - LINE_TAIL..], "buffer {buffer}");
            assert_eq!(got[1], whole(b"next"));
        }
    }

    proptest! {
        /// Whatever the input, the bound and the buffer size: every line comes back whole when
        /// it fits, as its first `max` bytes, its last bytes and its length when it does not,
        /// in order.
        #[test]
        fn lines_match_a_split_on_newlines(
            input in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'x'), any::<u8>()], 0..3000),
            max in 0usize..40,
            buffer in 1usize..16,
        ) {
            let mut expected: Vec<Line> = input
                .split(|b| *b == b'\n')
                .map(|l| {
                    let rest = &l[l.len().min(max)..];
                    Line {
                        bytes: l[..l.len().min(max)].to_vec(),
                        len: l.len() as u64,
                        tail: rest[rest.len().saturating_sub(LINE_TAIL)..].to_vec(),
                    }
                })
                .collect();
            // A trailing newline ends the last line; it does not start an empty one.
            if input.is_empty() || input.ends_with(b"\n") {
                expected.pop();
            }
            prop_assert_eq!(lines(&input, max, buffer), expected);
        }
    }
}
