//! Reading the client's messages: one per line, as bytes, never more than a bound in memory.

use std::io::{self, BufRead};

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line, without its newline.
    Bytes(Vec<u8>),
    /// A line longer than the bound; its bytes were read and dropped. `len` is its length.
    TooLong { len: u64 },
}

/// Splits input into lines of at most `max` bytes. A longer line is skipped to its end
/// (memory stays at `max`), and reported as [`Line::TooLong`] so the server can answer it.
// Hand-written over `BufRead::read_until`, which would buffer a line of any length.
pub(crate) struct LineReader<R> {
    input: R,
    max: usize,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(input: R, max: usize) -> Self {
        LineReader { input, max }
    }

    /// The next line; `None` at end of input. A last line without a newline counts.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut len: u64 = 0;
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok((len > 0).then(|| self.finish(line, len)));
            }
            let (chunk, end) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            len += chunk.len() as u64;
            if len <= self.max as u64 {
                line.extend_from_slice(chunk);
            } else if !line.is_empty() {
                line = Vec::new();
            }
            let used = end.unwrap_or(chunk.len());
            self.input.consume(used);
            if end.is_some() {
                return Ok(Some(self.finish(line, len)));
            }
        }
    }

    fn finish(&self, line: Vec<u8>, len: u64) -> Line {
        if len > self.max as u64 {
            Line::TooLong { len }
        } else {
            Line::Bytes(line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(input: &[u8], max: usize, buffer: usize) -> Vec<Line> {
        let mut reader = LineReader::new(io::BufReader::with_capacity(buffer, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn long_lines_are_reported_and_the_next_one_is_read() {
        let input = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxx\n\n{\"b\":2}";
        assert_eq!(
            lines(input, 10, 4),
            vec![
                Line::Bytes(b"{\"a\":1}".to_vec()),
                Line::TooLong { len: 20 },
                Line::Bytes(Vec::new()),
                Line::Bytes(b"{\"b\":2}".to_vec()),
            ]
        );
    }

    proptest! {
        /// Whatever the input, the bound and the buffer size: every line comes back whole when
        /// it fits, as `TooLong` with its length when it does not, in order, one per line.
        #[test]
        fn lines_match_a_split_on_newlines(
            input in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'x'), any::<u8>()], 0..400),
            max in 0usize..40,
            buffer in 1usize..16,
        ) {
            let mut expected: Vec<Line> = input
                .split(|b| *b == b'\n')
                .map(|l| if l.len() > max {
                    Line::TooLong { len: l.len() as u64 }
                } else {
                    Line::Bytes(l.to_vec())
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
