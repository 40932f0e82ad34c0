//! Every look a check takes at the file system goes through here, so a verdict knows whether
//! it depended on one: [`Policy::check`](crate::Policy::check) reuses only verdicts that did
//! not (the same command line in the same context then always gets the same verdict), and a
//! verdict that read a link, a directory or a listing is made afresh each time.
//! `tests/layers.rs` checks that no other module looks.

use std::cell::Cell;
use std::path::{Path, PathBuf};

thread_local! {
    /// Whether the check running on this thread has looked at the file system.
    static LOOKED: Cell<bool> = const { Cell::new(false) };
}

fn looked() {
    LOOKED.with(|l| l.set(true));
}

/// Runs `check` and says whether it looked at the file system.
pub(crate) fn watching<T>(check: impl FnOnce() -> T) -> (T, bool) {
    let before = LOOKED.with(|l| l.replace(false));
    let out = check();
    let looked = LOOKED.with(|l| l.replace(before));
    (out, looked)
}

/// Where the symbolic link at `path` points (`None`: not a link).
pub(crate) fn link_target(path: &Path) -> Option<PathBuf> {
    looked();
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_symlink())
        .and_then(|_| std::fs::read_link(path).ok())
}

/// Whether `path` is a directory and not a link to one.
pub(crate) fn is_real_dir(path: &Path) -> bool {
    looked();
    path.is_dir() && !path.is_symlink()
}

/// Whether anything exists at `path` (following links).
pub(crate) fn exists(path: &Path) -> bool {
    looked();
    path.exists()
}

/// The canonical form of `path`, when it resolves.
pub(crate) fn canonical(path: &Path) -> Option<PathBuf> {
    looked();
    std::fs::canonicalize(path).ok()
}

/// The names in directory `dir`, at most `most` of them (`None`: it cannot be listed).
pub(crate) fn names_in(dir: &Path, most: usize) -> Option<Vec<String>> {
    looked();
    let entries = std::fs::read_dir(dir).ok()?;
    Some(
        entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .take(most)
            .collect(),
    )
}

/// `/etc/passwd`, read once for the life of the process: every check sees the same, so
/// reading it is not a look that ties a verdict to its moment.
pub(crate) fn passwd() -> &'static str {
    static PASSWD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PASSWD.get_or_init(|| std::fs::read_to_string("/etc/passwd").unwrap_or_default())
}
