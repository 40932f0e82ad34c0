//! A bounded buffer of the most recent raw bytes, for live previews and job output.

/// Keeps the last `capacity` bytes pushed, with the absolute offset of each, so a reader can
/// ask for everything after the offset it saw last.
#[derive(Debug, Clone)]
pub struct TailBuffer {
    capacity: usize,
    buf: Vec<u8>,
    /// Absolute offset (bytes ever pushed) of `buf[0]`.
    start: u64,
}

impl TailBuffer {
    /// A buffer keeping the last `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        TailBuffer {
            capacity: capacity.max(1),
            buf: Vec::new(),
            start: 0,
        }
    }

    /// Appends bytes, dropping the oldest beyond the capacity (amortized O(1) per byte).
    pub fn push(&mut self, bytes: &[u8]) {
        if bytes.len() >= self.capacity {
            let skip = bytes.len() - self.capacity;
            self.start += (self.buf.len() + skip) as u64;
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[skip..]);
            return;
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() > self.capacity * 2 {
            let drop = self.buf.len() - self.capacity;
            self.buf.drain(..drop);
            self.start += drop as u64;
        }
    }

    /// Total bytes ever pushed.
    pub fn total(&self) -> u64 {
        self.start + self.buf.len() as u64
    }

    /// The last `capacity` bytes, raw.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.buf.len().saturating_sub(self.capacity)..]
    }

    /// The bytes after absolute offset `from` that are still held, and how many bytes after
    /// `from` were dropped before they could be read.
    pub fn since(&self, from: u64) -> (&[u8], u64) {
        let held_from = self.total() - self.bytes().len() as u64;
        let dropped = held_from.saturating_sub(from);
        let begin = from.max(held_from) - self.start;
        let begin = usize::try_from(begin)
            .unwrap_or(usize::MAX)
            .min(self.buf.len());
        (&self.buf[begin..], dropped)
    }

    /// A cheap snapshot of the last `capacity` bytes as clean text: starts on a character
    /// boundary, escape sequences and controls removed.
    pub fn snapshot(&self) -> String {
        let bytes = self.bytes();
        let start = bytes
            .iter()
            .position(|&b| (b & 0xC0) != 0x80)
            .unwrap_or(bytes.len());
        crate::sanitize(&bytes[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_never_starts_inside_a_character() {
        let mut t = TailBuffer::new(4);
        t.push("😀".as_bytes());
        t.push(b"x");
        assert_eq!(t.snapshot(), "x");
    }

    #[test]
    fn since_reports_dropped_bytes() {
        let mut t = TailBuffer::new(4);
        t.push(b"abcdef");
        assert_eq!(t.since(0), (&b"cdef"[..], 2));
        assert_eq!(t.since(4), (&b"ef"[..], 0));
        t.push(b"gh");
        assert_eq!(t.since(6), (&b"gh"[..], 0));
        assert_eq!(t.total(), 8);
    }

    #[test]
    fn memory_stays_bounded() {
        let mut t = TailBuffer::new(16);
        for _ in 0..10_000 {
            t.push(b"0123456789");
        }
        assert!(t.buf.len() <= 32);
        assert_eq!(t.bytes().len(), 16);
    }
}
