//! Private temporary directories: each sandboxed call's `TMPDIR`.
//!
//! Layout: `$TMPDIR_OF_AGENT_EXEC/agent-exec-sandbox-<uid>/<pid>/<area>/<n>`. The first level is
//! ours alone (checked: our directory, mode 0700, no symlink — another user cannot have made
//! it for us), so nothing below can be reached by other users whatever its mode. An area
//! belongs to one spec's namespaces (it is what they bind writable): calls of different specs
//! cannot reach each other's directories.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// This process's directory of areas, made once.
fn process_dir() -> std::io::Result<&'static Path> {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    if let Some(dir) = DIR.get() {
        return Ok(dir);
    }
    // SAFETY: plain getter.
    let uid = unsafe { libc::geteuid() };
    let parent = std::env::temp_dir().join(format!("agent-exec-sandbox-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&parent) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&parent)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not a private directory of this user (owner {}, mode {:o}); remove it",
            parent.display(),
            meta.uid(),
            meta.permissions().mode() & 0o7777
        )));
    }
    // Those of agent-exec processes that are gone.
    for entry in std::fs::read_dir(&parent)?.flatten() {
        if crate::sys::left_by_dead_process(&entry.file_name(), "") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = parent.join(std::process::id().to_string());
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    Ok(DIR.get_or_init(|| dir))
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// One spec's area: the directory its namespaces make writable, and the empty directories of
/// its finished calls, ready for the next (a `mkdir` and an `rmdir` cost ~110 µs a call on this
/// machine's disk, a tenth of a one-shot call). Dropped with the spec's namespaces: removed.
#[derive(Debug)]
pub(super) struct Area {
    pub(super) dir: PathBuf,
    pool: Mutex<Vec<PathBuf>>,
}

impl Area {
    pub(super) fn new() -> std::io::Result<Area> {
        let dir = process_dir()?.join(format!("a{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Area {
            dir,
            pool: Mutex::new(Vec::new()),
        })
    }

    /// A fresh, empty directory for one call.
    pub(super) fn take(&self) -> std::io::Result<PathBuf> {
        if let Some(dir) = self
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
        {
            return Ok(dir);
        }
        let dir = self
            .dir
            .join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(dir)
    }

    /// A call is over (its processes gone): an empty directory serves the next call, anything
    /// else is removed (a symlink put in its place included, not what it points to).
    pub(super) fn give_back(&self, dir: PathBuf) {
        let reusable = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir())
            && std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_none());
        if reusable {
            self.pool
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(dir);
        } else if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            let _ = std::fs::remove_dir_all(&dir);
        } else {
            let _ = std::fs::remove_file(&dir);
        }
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
