//! Private temporary directories: each sandboxed call's `TMPDIR`.
//!
//! Layout: `$TMPDIR_OF_AGENT_EXEC/agent-exec-sandbox-<uid>/<pid>-<pidns>/<area>/<random>`. The first
//! level is ours alone (checked: our directory, mode 0700, no symlink — another user cannot
//! have made it for us), so nothing below can be reached by other users whatever its mode. An
//! area belongs to one spec's namespaces (it is what they bind writable); within it, each call
//! may write only its own directory (its Landlock layer, `rules.rs`).

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// This process's directory of areas, once made.
static PROCESS_DIR: OnceLock<PathBuf> = OnceLock::new();

/// This process's directory of areas, made once.
fn process_dir() -> std::io::Result<&'static Path> {
    // One thread makes it: another finding it made must not take it for a dead process's.
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if let Some(dir) = PROCESS_DIR.get() {
        return Ok(dir);
    }
    let _making = MAKING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(dir) = PROCESS_DIR.get() {
        return Ok(dir);
    }
    let uid = rustix::process::geteuid().as_raw();
    let parent = std::env::temp_dir().join(format!("agent-exec-sandbox-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&parent) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&parent)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        // Squatted (another user made it first, or a link): a directory of our own with a
        // name nobody can guess takes its place, so no one can stop our calls this way.
        let dir =
            std::env::temp_dir().join(format!("agent-exec-sandbox-{uid}-{}", unguessable_name()?));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        return Ok(PROCESS_DIR.get_or_init(|| dir));
    }
    // Those of agent-exec processes that are gone.
    for entry in std::fs::read_dir(&parent)?.flatten() {
        if crate::sys::left_by_dead_process(&entry.file_name(), "") {
            remove_areas_of(&entry.path());
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = parent.join(crate::sys::process_name(std::process::id() as i32));
    if std::fs::symlink_metadata(&dir).is_ok() {
        // Our name is unique among live processes: what holds it was left by a dead one (a
        // process of an earlier PID namespace whose inode and pid came round again; in a new
        // namespace agent-exec is pid 1 or 2 every time). It is emptied, not reused: its
        // areas' names would collide with ours.
        remove_areas_of(&dir);
        remove(&dir);
    }
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(PROCESS_DIR.get_or_init(|| dir))
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// One spec's area: the directory its namespaces make writable, holding one directory per
/// call, and the empty directories of finished calls whose processes are certainly all gone
/// (a `mkdir` and a recursive removal cost ~60 µs a call here, a tenth of the sandbox's cost).
/// Dropped with the spec's namespaces: removed.
#[derive(Debug)]
pub(super) struct Area {
    pub(super) dir: PathBuf,
    pool: std::sync::Mutex<Vec<PathBuf>>,
}

impl Area {
    pub(super) fn new() -> std::io::Result<Area> {
        let dir = process_dir()?.join(format!("a{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let area = Area {
            dir,
            pool: std::sync::Mutex::new(Vec::new()),
        };
        let (file, masked_dir) = area.masks();
        std::fs::DirBuilder::new().mode(0o000).create(masked_dir)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o000)
            .open(file)?;
        Ok(area)
    }

    /// What hides a deny-read path in a writable root (`namespaces.rs`): an empty file and an
    /// empty directory, with no permissions (so a read fails, but for root, who reads nothing).
    pub(super) fn masks(&self) -> (PathBuf, PathBuf) {
        (self.dir.join(".mask-file"), self.dir.join(".mask-dir"))
    }

    /// A fresh directory for one call: made here (0700), with a name no process of another
    /// call can guess — and the area itself is not writable from inside the sandbox (each
    /// call's Landlock layer grants only its own directory), so nothing planted there can
    /// take the name or make a later call fail.
    pub(super) fn take(&self) -> std::io::Result<PathBuf> {
        if let Some(dir) = self
            .pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
        {
            return Ok(dir);
        }
        let mut last = None;
        for _ in 0..4 {
            let dir = self.dir.join(unguessable_name()?);
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
    }
}

impl Area {
    /// A call is over. Its directory serves a later call only when it is an empty directory
    /// and `exact` — the call's containment ended every process it started (a cgroup, a PID
    /// namespace), so none can write into the next call's; else it is removed.
    pub(super) fn give_back(&self, dir: PathBuf, exact: bool) {
        let empty_dir = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir())
            && std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_none());
        if exact && empty_dir {
            self.pool
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(dir);
        } else {
            remove(&dir);
        }
    }
}

/// Removes a call's directory, whatever it holds (a symbolic link is removed, not followed).
pub(super) fn remove(dir: &Path) {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::remove_dir_all(dir);
    } else {
        let _ = std::fs::remove_file(dir);
    }
}

/// Removes the areas of a process's directory.
fn remove_areas_of(dir: &Path) {
    for area in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        remove_area(&area.path());
    }
}

/// This process's directory and everything in it, at a normal exit (a call's directory is
/// removed when the call ends, but the areas live as long as the process).
pub(crate) fn remove_at_exit() {
    if let Some(dir) = PROCESS_DIR.get() {
        remove_areas_of(dir);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Removes an area, its mask directory first (it has no permissions: a recursive removal
/// cannot list it).
fn remove_area(dir: &Path) {
    let _ = std::fs::remove_dir(dir.join(".mask-dir"));
    let _ = std::fs::remove_dir_all(dir);
}

/// 80 random bits from the kernel, in hex: unguessable, and short, because a call's `TMPDIR`
/// is under it and Unix socket paths there (Python's multiprocessing, tmux, ssh's
/// `ControlPath`) must fit in 108 bytes.
fn unguessable_name() -> std::io::Result<String> {
    let mut bytes = [0u8; 10];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Drop for Area {
    fn drop(&mut self) {
        remove_area(&self.dir);
    }
}
