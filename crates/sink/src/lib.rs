//! Bounded, UTF-8 safe output capture for commands run on behalf of a model.
//!
//! A producer pushes `(stream, bytes)` chunks into a [`Sink`]. [`OutputSink`] keeps a bounded
//! window of the sanitized text (escape sequences removed, controls dropped, `\r` handled as a
//! terminal would; for a PTY's stream, the text a terminal emulator shows, with
//! [`SinkConfig::terminal`]), counts the raw stream exactly, and once the raw stream outgrows the window
//! spills the complete stream to an artifact file in an [`ArtifactStore`].
//!
//! ```
//! use agent_exec_sink::{OutputSink, Sink, SinkConfig, Stream};
//!
//! let mut sink = OutputSink::new(SinkConfig { max_bytes: 5, ..SinkConfig::default() }, None);
//! sink.push(Stream::Stdout, b"abc").unwrap();
//! sink.push(Stream::Stdout, b"def").unwrap();
//! let capture = sink.finish_capture();
//! assert_eq!(capture.view.text(), "bcdef");
//! assert!(capture.view.truncated);
//! assert_eq!(capture.totals.merged.bytes, 6);
//! ```
#![deny(missing_docs)]

mod artifact;
mod compact;
mod lines;
mod output_sink;
mod outputs;
mod salient;
mod sanitize;
mod tail_buffer;
mod template;
mod terminal;
mod window;

pub use artifact::{
    ARTIFACT_SCHEME, ArtifactEntry, ArtifactError, ArtifactStore, GrepHits, Retention,
};
pub use lines::{BoundedLines, LINE_TAIL, Line};
pub use output_sink::{ArtifactInfo, Capture, OutputSink, SinkConfig, StreamTotals, Totals};
pub use salient::{DEFAULT_ANCHORS, DEFAULT_PATTERNS, MATCH_CAP, SHOW_CAP, SalientConfig};
pub use sanitize::{MAX_STRING_SEQUENCE, sanitize};
pub use tail_buffer::TailBuffer;
pub use terminal::{TerminalSize, TerminalSizeError};
pub use window::{FoldSummary, NumberedLine, OmittedSummary, Template, View, ViewPart};

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Which part of an output is kept, and what cut it: the contract's words, defined once in
/// `agent-exec-protocol`.
pub use agent_exec_protocol::{Direction, TruncatedBy};

/// A push-model consumer of command output, in the manner of `grep_searcher::Sink`.
///
/// The producer calls [`push`](Sink::push) with each chunk as it arrives, in arrival order
/// across streams; `Ok(false)` asks the producer to stop. [`finish`](Sink::finish) runs once
/// at the end, also after a stop.
pub trait Sink {
    /// The error a sink may fail with.
    type Error;

    /// Consumes one chunk. Returns whether the producer should go on.
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Self::Error>;

    /// The stream ended.
    fn finish(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    type Error = S::Error;
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Self::Error> {
        (**self).push(stream, chunk)
    }
    fn finish(&mut self) -> Result<(), Self::Error> {
        (**self).finish()
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    type Error = S::Error;
    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Self::Error> {
        (**self).push(stream, chunk)
    }
    fn finish(&mut self) -> Result<(), Self::Error> {
        (**self).finish()
    }
}

/// Formats a byte count the way limits are shown to models: `512B`, `50.0KB`, `1.5MB`.
pub fn format_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}
