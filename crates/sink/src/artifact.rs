//! The artifact store: complete raw output of truncated calls, one file per artifact.
//!
//! Files live in one private directory (0700; files 0600, since outputs can hold secrets).
//! Ids are decimal numbers, unique across processes sharing the directory: a new id resumes
//! from the highest present and the file is created with `O_EXCL`, retrying on a collision.
//!
//! Reading opens only what the store itself wrote: the directory is ours and private, and an
//! artifact is a regular file of ours with one link, opened without following a symbolic
//! link ([`ArtifactStore::open_artifact`]). A command that can write where the store lies
//! (the workspace is `$HOME`) could otherwise plant `7.log -> ~/.ssh/id_rsa`, or a hard link to
//! it, and have agent-exec print what the sandbox kept it from reading.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Prefix of artifact references shown to models.
pub const ARTIFACT_SCHEME: &str = "artifact://";

/// Errors of the artifact store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// The filesystem refused an operation.
    #[error("artifact store {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The store's directory or an artifact is not what the store made: not ours, not
    /// private, a symbolic link, not a regular file, or linked from elsewhere.
    #[error("artifact store {}: {reason}; not read", .path.display())]
    NotOurs {
        /// The path involved.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No artifact has that id.
    #[error("no artifact with id {id}; {}", available_list(.available))]
    NotFound {
        /// The id asked for.
        id: String,
        /// Ids present in the store, oldest first.
        available: Vec<String>,
    },
    /// The reference is not `artifact://N` or `N`.
    #[error("invalid artifact id {id:?}: expected a number such as 7 or artifact://7; {}", available_list(.available))]
    InvalidId {
        /// The reference given.
        id: String,
        /// Ids present in the store, oldest first.
        available: Vec<String>,
    },
}

fn available_list(ids: &[String]) -> String {
    if ids.is_empty() {
        "the store is empty".to_owned()
    } else {
        let shown: Vec<&str> = ids
            .iter()
            .rev()
            .take(20)
            .rev()
            .map(String::as_str)
            .collect();
        let more = if ids.len() > shown.len() {
            format!(" (and {} older)", ids.len() - shown.len())
        } else {
            String::new()
        };
        format!("available: {}{more}", shown.join(", "))
    }
}

/// How much the store keeps; the oldest artifacts go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Retention {
    /// Most artifacts kept. Default: 200.
    pub max_count: usize,
    /// Most bytes kept in all. Default: 2 GiB.
    pub max_total_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_count: 200,
            max_total_bytes: 2 << 30,
        }
    }
}

/// One artifact in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactEntry {
    /// Its id.
    pub id: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A directory of artifacts.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    dir: PathBuf,
    retention: Retention,
}

fn not_ours(path: &Path, reason: &str) -> ArtifactError {
    ArtifactError::NotOurs {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The store's directory is ours, a real directory (not a link to one), and private: no
/// group or other access (a looser one made by hand is tightened; one of another user is
/// refused).
fn check_private_dir(dir: &Path) -> Result<(), ArtifactError> {
    let meta = fs::symlink_metadata(dir).map_err(io_err(dir))?;
    if meta.file_type().is_symlink() {
        return Err(not_ours(dir, "the directory is a symbolic link"));
    }
    if !meta.is_dir() {
        return Err(not_ours(dir, "it is not a directory"));
    }
    if meta.uid() != effective_uid() {
        return Err(not_ours(
            dir,
            &format!("the directory belongs to uid {}", meta.uid()),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io_err(dir))?;
    }
    Ok(())
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ArtifactError + '_ {
    move |source| ArtifactError::Io {
        path: path.to_owned(),
        source,
    }
}

impl ArtifactStore {
    /// Opens (creating, private) the store at `dir`, with default retention.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(io_err(&dir))?;
        check_private_dir(&dir)?;
        Ok(ArtifactStore {
            dir,
            retention: Retention::default(),
        })
    }

    /// Sets the retention bounds.
    #[must_use]
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// The default directory: `$AGENT_EXEC_ARTIFACTS`, else `$XDG_STATE_HOME/agent-exec/artifacts`,
    /// else `~/.local/state/agent-exec/artifacts`, else a directory under the system temp dir.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("AGENT_EXEC_ARTIFACTS").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        let state = std::env::var_os("XDG_STATE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")));
        match state {
            Some(state) => state.join("agent-exec/artifacts"),
            None => std::env::temp_dir().join("agent-exec-artifacts"),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{id}.log"))
    }

    fn ids(&self) -> Result<Vec<u64>, ArtifactError> {
        let mut ids = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(io_err(&self.dir))? {
            let entry = entry.map_err(io_err(&self.dir))?;
            let name = entry.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".log"))
                .and_then(|n| n.parse().ok())
            {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// Creates a new, empty artifact with a fresh id, then applies retention to the others.
    pub fn create(&self) -> Result<(String, PathBuf, File), ArtifactError> {
        let mut id = self.ids()?.last().map_or(1, |m| m + 1);
        loop {
            let path = self.path_of(id);
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => {
                    // Retention is best effort: a failure to prune must not lose this output.
                    let _ = self.prune(id);
                    return Ok((id.to_string(), path, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => id += 1,
                Err(e) => return Err(ArtifactError::Io { path, source: e }),
            }
        }
    }

    /// Removes the oldest artifacts (never `keep`) until the retention bounds hold.
    fn prune(&self, keep: u64) -> Result<(), ArtifactError> {
        let entries = self.list()?;
        let mut count = entries.len();
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        for e in entries {
            if count <= self.retention.max_count && total <= self.retention.max_total_bytes {
                break;
            }
            if e.id == keep.to_string() {
                continue;
            }
            let _ = fs::remove_file(self.dir.join(format!("{}.log", e.id)));
            count -= 1;
            total = total.saturating_sub(e.bytes);
        }
        Ok(())
    }

    /// Every artifact, oldest first.
    pub fn list(&self) -> Result<Vec<ArtifactEntry>, ArtifactError> {
        self.ids()?
            .into_iter()
            .map(|id| {
                let path = self.path_of(id);
                let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                Ok(ArtifactEntry {
                    id: id.to_string(),
                    bytes,
                })
            })
            .collect()
    }

    /// Resolves `artifact://ID` or `ID` to the artifact's path.
    pub fn resolve(&self, reference: &str) -> Result<PathBuf, ArtifactError> {
        let raw = reference.trim();
        let id_text = raw.strip_prefix(ARTIFACT_SCHEME).unwrap_or(raw);
        let id: u64 = id_text.parse().map_err(|_| ArtifactError::InvalidId {
            id: reference.to_owned(),
            available: self
                .ids()
                .unwrap_or_default()
                .into_iter()
                .map(|i| i.to_string())
                .collect(),
        })?;
        let path = self.path_of(id);
        if path.is_file() {
            Ok(path)
        } else {
            let available = self
                .ids()
                .unwrap_or_default()
                .into_iter()
                .map(|i| i.to_string())
                .collect();
            Err(ArtifactError::NotFound {
                id: id.to_string(),
                available,
            })
        }
    }

    /// Opens artifact `reference` for reading: only a regular file of ours with one link,
    /// in a directory of ours that no one else may write, never through a symbolic link.
    pub fn open_artifact(&self, reference: &str) -> Result<(PathBuf, File), ArtifactError> {
        let path = self.resolve(reference)?;
        check_private_dir(&self.dir)?;
        let file = OpenOptions::new()
            .read(true)
            // Not through a link; a FIFO put in its place must not block the open.
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(&path)
            .map_err(|e| {
                if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                    not_ours(&path, "it is a symbolic link")
                } else {
                    io_err(&path)(e)
                }
            })?;
        let meta = file.metadata().map_err(io_err(&path))?;
        if !meta.is_file() {
            return Err(not_ours(&path, "it is not a regular file"));
        }
        if meta.uid() != effective_uid() {
            return Err(not_ours(
                &path,
                &format!("it belongs to uid {}", meta.uid()),
            ));
        }
        if meta.nlink() != 1 {
            return Err(not_ours(&path, "it has other hard links"));
        }
        Ok((path, file))
    }

    /// Removes an artifact.
    pub fn remove(&self, reference: &str) -> Result<(), ArtifactError> {
        let path = self.resolve(reference)?;
        fs::remove_file(&path).map_err(io_err(&path))
    }

    /// Reads `limit` bytes (all when `None`) from `offset`. Returns the bytes and the total size.
    pub fn read_bytes(
        &self,
        reference: &str,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<(Vec<u8>, u64), ArtifactError> {
        let (path, mut file) = self.open_artifact(reference)?;
        let size = file.metadata().map_err(io_err(&path))?.len();
        file.seek(SeekFrom::Start(offset.min(size)))
            .map_err(io_err(&path))?;
        let mut out = Vec::new();
        let want = limit.unwrap_or(u64::MAX).min(size.saturating_sub(offset));
        file.take(want)
            .read_to_end(&mut out)
            .map_err(io_err(&path))?;
        Ok((out, size))
    }

    /// Reads lines `first..=last` (1-based; `last` `None` = to the end).
    pub fn read_lines(
        &self,
        reference: &str,
        first: u64,
        last: Option<u64>,
    ) -> Result<Vec<u8>, ArtifactError> {
        let (path, file) = self.open_artifact(reference)?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut out = Vec::new();
        let mut line = Vec::new();
        let mut n = 0u64;
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line).map_err(io_err(&path))?;
            if read == 0 {
                break;
            }
            n += 1;
            if n >= first.max(1) {
                out.extend_from_slice(&line);
            }
            if last.is_some_and(|l| n >= l) {
                break;
            }
        }
        Ok(out)
    }
}

/// What [`ArtifactStore::grep`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GrepHits {
    /// Matching lines and their context, each `N:line` (a match) or `N-line` (context), with
    /// `--` between groups that are not adjacent, as `grep -n -C` prints them.
    pub text: String,
    /// Lines that matched.
    pub matches: u64,
    /// Lines in the artifact.
    pub total_lines: u64,
    /// The text stopped at `max_bytes`; more matches may follow.
    pub truncated: bool,
}

impl ArtifactStore {
    /// The lines of an artifact that match `pattern` (tested on each line, decoded lossily as
    /// UTF-8), with `context` lines around each, numbered from 1; at most `max_bytes` of text.
    /// Memory stays near `max_bytes` whatever the artifact holds: a line longer than that is
    /// matched and shown by its start, and context kept ahead of a match is bounded likewise.
    pub fn grep(
        &self,
        reference: &str,
        pattern: &regex::Regex,
        context: u64,
        max_bytes: usize,
    ) -> Result<GrepHits, ArtifactError> {
        let (path, file) = self.open_artifact(reference)?;
        let mut lines =
            crate::BoundedLines::new(BufReader::with_capacity(1 << 16, file), max_bytes);
        let mut shown = Shown {
            hits: GrepHits {
                text: String::new(),
                matches: 0,
                total_lines: 0,
                truncated: false,
            },
            last: 0,
            max_bytes,
        };
        // Lines before the next match that may become its context, and their size.
        let mut before: std::collections::VecDeque<(u64, String)> =
            std::collections::VecDeque::new();
        let mut before_bytes = 0;
        let mut after_left = 0u64;
        while let Some(line) = lines.next_line().map_err(io_err(&path))? {
            shown.hits.total_lines += 1;
            let n = shown.hits.total_lines;
            let mut text = String::from_utf8_lossy(&line.bytes).into_owned();
            if text.ends_with('\r') {
                text.pop();
            }
            if line.is_cut() {
                text.push_str(&format!(" … [line cut: {} bytes]", line.len));
            }
            let matched = pattern.is_match(&text);
            if matched {
                shown.hits.matches += 1;
                before_bytes = 0;
                for (m, l) in before.drain(..) {
                    shown.show(m, '-', &l);
                }
                shown.show(n, ':', &text);
                after_left = context;
            } else if after_left > 0 {
                after_left -= 1;
                shown.show(n, '-', &text);
            } else if context > 0 && !shown.hits.truncated {
                before_bytes += text.len();
                before.push_back((n, text));
                while before.len() as u64 > context || before_bytes > max_bytes {
                    if let Some((_, old)) = before.pop_front() {
                        before_bytes -= old.len();
                    }
                }
            }
        }
        Ok(shown.hits)
    }
}

/// What grep has shown so far, within its byte budget.
struct Shown {
    hits: GrepHits,
    /// The number of the last line shown (0: none yet).
    last: u64,
    max_bytes: usize,
}

impl Shown {
    /// Adds line `n` (`:` a match, `-` context), after a `--` when lines were skipped; once
    /// the budget is spent, nothing more is added.
    fn show(&mut self, n: u64, mark: char, line: &str) {
        if self.hits.truncated {
            return;
        }
        let gap = if self.last != 0 && n > self.last + 1 {
            "--\n"
        } else {
            ""
        };
        let entry = format!("{gap}{n}{mark}{line}\n");
        if self.hits.text.len() + entry.len() > self.max_bytes {
            self.hits.truncated = true;
            return;
        }
        self.hits.text.push_str(&entry);
        self.last = n;
    }
}

/// An artifact being written by a sink.
#[derive(Debug)]
pub(crate) struct ArtifactWriter {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    file: File,
    pub(crate) written: u64,
    cap: u64,
    pub(crate) capped: bool,
    pub(crate) error: Option<String>,
    /// NUL bytes counted but not written yet: they become a hole (a sparse file reads back
    /// zeros), so a NUL flood costs no disk writes.
    hole: u64,
}

/// The unit in which runs of NUL bytes become holes rather than writes.
const HOLE_BLOCK: usize = 64 << 10;

impl ArtifactWriter {
    pub(crate) fn new(id: String, path: PathBuf, file: File, cap: u64) -> Self {
        ArtifactWriter {
            id,
            path,
            file,
            written: 0,
            cap,
            capped: false,
            error: None,
            hole: 0,
        }
    }

    /// Appends, up to the cap. Write errors stop the file and are remembered, never raised.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if self.capped || self.error.is_some() {
            return;
        }
        let room = self.cap.saturating_sub(self.written);
        let take = (bytes.len() as u64).min(room) as usize;
        if take < bytes.len() {
            self.capped = true;
        }
        for block in bytes[..take].chunks(HOLE_BLOCK) {
            if block.len() == HOLE_BLOCK && all_nul(block) {
                self.hole += block.len() as u64;
            } else if let Err(e) = self.write_after_hole(block) {
                self.error = Some(format!("writing artifact {}: {e}", self.path.display()));
                return;
            }
            self.written += block.len() as u64;
        }
        if self.capped {
            self.end_hole();
        }
    }

    fn write_after_hole(&mut self, block: &[u8]) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        if self.hole > 0 {
            let hole = i64::try_from(std::mem::take(&mut self.hole)).unwrap_or(i64::MAX);
            self.file.seek(SeekFrom::Current(hole))?;
        }
        self.file.write_all(block)
    }

    /// Gives the file its full length when it ends in a hole.
    pub(crate) fn end_hole(&mut self) {
        if std::mem::take(&mut self.hole) > 0
            && let Err(e) = self.file.set_len(self.written)
        {
            self.error = Some(format!("writing artifact {}: {e}", self.path.display()));
        }
    }
}

/// Whether `block` is all NUL bytes (eight at a time: vectorised).
fn all_nul(block: &[u8]) -> bool {
    block.chunks(8).fold(0u64, |acc, w| {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        acc | u64::from_ne_bytes(word)
    }) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn store_with(text: &str) -> (tempfile::TempDir, ArtifactStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path().join("a")).unwrap();
        let (id, _, mut file) = store.create().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        (dir, store, id)
    }

    #[test]
    fn nul_runs_become_holes_that_read_back_as_the_bytes_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path().join("a")).unwrap();
        let mut written = Vec::new();
        let mut writer = {
            let (id, path, file) = store.create().unwrap();
            ArtifactWriter::new(id, path, file, u64::MAX)
        };
        let pieces: [Vec<u8>; 5] = [
            vec![0; HOLE_BLOCK * 3],
            b"text in between\n".to_vec(),
            vec![0; HOLE_BLOCK * 2 + 5],
            b"x".to_vec(),
            vec![0; HOLE_BLOCK * 4],
        ];
        for piece in &pieces {
            writer.write(piece);
            written.extend_from_slice(piece);
        }
        writer.end_hole();
        assert_eq!(writer.written, written.len() as u64);
        assert_eq!(std::fs::read(&writer.path).unwrap(), written);
    }

    #[test]
    fn grep_numbers_matches_and_context_like_grep_n_c() {
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let (_dir, store, id) = store_with(&text);
        let hits = store
            .grep(
                &id,
                &regex::Regex::new("^line (3|5|15)$").unwrap(),
                1,
                1 << 20,
            )
            .unwrap();
        assert_eq!(
            hits.text,
            "2-line 2\n3:line 3\n4-line 4\n5:line 5\n6-line 6\n--\n14-line 14\n15:line 15\n16-line 16\n"
        );
        assert_eq!(
            (hits.matches, hits.total_lines, hits.truncated),
            (3, 20, false)
        );
        let capped = store
            .grep(&id, &regex::Regex::new("line").unwrap(), 0, 20)
            .unwrap();
        assert!(capped.truncated && capped.text.len() <= 20, "{capped:?}");
        assert_eq!(capped.matches, 20, "matches are counted past the cap");
        let spaced = store
            .grep(&id, &regex::Regex::new("^line 1?[05]$").unwrap(), 0, 32)
            .unwrap();
        assert_eq!(
            spaced.text, "5:line 5\n--\n10:line 10\n",
            "no dangling separator: {spaced:?}"
        );
    }

    #[test]
    fn grep_holds_a_long_line_by_its_start() {
        let text = format!("short\n{}needle\nend\n", "x".repeat(1 << 20));
        let (_dir, store, id) = store_with(&text);
        let hits = store
            .grep(&id, &regex::Regex::new("^x+").unwrap(), 1, 200)
            .unwrap();
        assert_eq!(hits.matches, 1);
        assert!(
            hits.truncated,
            "a cut line longer than the budget is not shown"
        );
        let hits = store
            .grep(&id, &regex::Regex::new("needle").unwrap(), 0, 200)
            .unwrap();
        assert_eq!(
            hits.matches, 0,
            "past the held start, a long line is not searched"
        );
    }

    proptest! {
        /// The lines shown are exactly those within `context` of a match, each once, in order,
        /// marked `:` when they match.
        #[test]
        fn grep_shows_exactly_the_lines_near_a_match(
            lines in proptest::collection::vec(prop_oneof![Just("hit"), Just("miss"), Just("")], 0..40),
            context in 0u64..4,
        ) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let (_dir, store, id) = store_with(&text);
            let hits = store.grep(&id, &regex::Regex::new("hit").unwrap(), context, 1 << 20).unwrap();
            let near = |i: usize| lines.iter().enumerate().any(|(j, l)| {
                *l == "hit" && (i as i64 - j as i64).unsigned_abs() <= context
            });
            let expected: Vec<String> = (0..lines.len())
                .filter(|&i| near(i))
                .map(|i| format!("{}{}{}", i + 1, if lines[i] == "hit" { ':' } else { '-' }, lines[i]))
                .collect();
            let shown: Vec<String> = hits.text.lines().filter(|l| *l != "--").map(str::to_owned).collect();
            prop_assert_eq!(shown, expected);
            prop_assert_eq!(hits.matches, lines.iter().filter(|l| **l == "hit").count() as u64);
        }
    }
}
