//! The git directories under the writable roots, which git outside the sandbox will obey: a
//! hook, a `core.fsmonitor` or `core.hooksPath` written into one runs on the operator's next
//! `git status`. Found by a bounded walk when a spec's namespaces are made (see [`WALK_BOUND`]),
//! so every repository that exists then is covered, not only the workspace's top one: nested
//! repositories, bare ones, submodules (`modules/**`), worktrees (`worktrees/*`), the git
//! directory a gitfile points to (`--separate-git-dir`, a worktree's `.git` file) when it lies
//! under a writable root, and a `core.hooksPath` directory under a writable root.
//!
//! What is protected (by the mount namespace, `namespaces.rs`): each git directory is pinned by
//! a bind mount onto itself (a mount point cannot be renamed or removed, so it cannot be
//! swapped for a fresh one), and the entries git reads for settings or runs are bound
//! read-only: see [`SETTINGS`]. Objects, refs, the index and logs stay writable: `git commit`
//! works.
//!
//! An entry git would obey that does not exist yet cannot be bound: where git itself would make
//! an empty one harmlessly, it is made (empty) first — `hooks/`, the `core.hooksPath`
//! directory, and `config.worktree` where `extensions.worktreeConfig` is on (git reads it only
//! then). Not covered (the threat model says so): a git directory made after the namespaces
//! were built (they are rebuilt every few seconds), and a new `commondir` (an empty one would
//! break the repository).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Directories the walk lists, in all, per spec: breadth first, so a deep tree (a build
/// directory, `node_modules`) is what goes unvisited when a workspace is larger. Listing a
/// directory costs ~10 µs here: the bound keeps a rebuild under ~0.1 s.
pub(super) const WALK_BOUND: usize = 8192;

/// The walk of the `dev` profile's caches (the repositories tools keep there: pre-commit's,
/// cargo's git database, Go's VCS cache), which the operator's tools run git in: shallow and
/// small, since walking cargo's registry or the module cache whole cost ~30 ms a build, and
/// each directory listed costs ~15 µs (128: ~2 ms).
const CACHE_WALK_BOUND: usize = 128;
const CACHE_WALK_DEPTH: usize = 4;

/// The entries of a git directory that git reads for settings or runs: bound read-only.
const SETTINGS: &[&str] = &["config", "config.worktree", "hooks", "commondir", "gitdir"];

/// What the mount namespace does to the git directories found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitProtection {
    /// Git directories, each bound onto itself.
    pub(super) pinned: Vec<PathBuf>,
    /// Their settings, gitfiles and hook directories: bound read-only.
    pub(super) read_only: Vec<PathBuf>,
}

/// Every git directory found by an earlier walk of this process: held again by every later
/// rebuild while it exists, even where the walk no longer reaches it (a call made its parent
/// unreadable, or filled the walk's bound with directories).
static KNOWN: std::sync::Mutex<std::collections::BTreeSet<PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Walks the writable roots (breadth first, at most [`WALK_BOUND`] directories, symbolic links
/// not followed) for the git directories to protect. An error names a git directory found
/// before that can no longer be looked at (fail closed: it could not be held).
pub(super) fn find(roots: &[PathBuf], caches: &[PathBuf]) -> Result<GitProtection, String> {
    let writable: Vec<PathBuf> = roots.iter().chain(caches).cloned().collect();
    let writable = writable.as_slice();
    let mut found = Found {
        writable,
        seen: HashSet::new(),
        out: GitProtection::default(),
    };
    found.walk(roots, WALK_BOUND, usize::MAX);
    found.walk(caches, CACHE_WALK_BOUND, CACHE_WALK_DEPTH);
    let mut known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let again: Vec<PathBuf> = known
        .iter()
        .filter(|d| writable.iter().any(|root| d.starts_with(root)))
        .cloned()
        .collect();
    for dir in &again {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_dir() => found.git_dir(dir, 0, false),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(format!(
                    "the git directory {} cannot be looked at any more ({e}), so the sandbox cannot keep its hooks and config read-only; restore the permissions of the directories above it",
                    dir.display()
                ));
            }
        }
    }
    let mut out = found.out;
    known.extend(out.pinned.iter().cloned());
    for list in [&mut out.pinned, &mut out.read_only] {
        list.sort();
        list.dedup();
    }
    Ok(out)
}

struct Found<'a> {
    writable: &'a [PathBuf],
    seen: HashSet<PathBuf>,
    out: GitProtection,
}

impl Found<'_> {
    /// Breadth first from `roots`: at most `bound` directories listed, `depth` levels down.
    fn walk(&mut self, roots: &[PathBuf], bound: usize, depth: usize) {
        let mut queue: std::collections::VecDeque<(PathBuf, usize)> =
            roots.iter().map(|root| (root.clone(), 0)).collect();
        let mut listed = 0;
        while let Some((dir, level)) = queue.pop_front() {
            if listed == bound {
                break;
            }
            listed += 1;
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                // Unlistable (`chmod 000` by an earlier call, say): what it holds cannot be
                // looked at, so it is held read-only whole — a call cannot give it its
                // permissions back and reach a repository inside.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    self.out.read_only.push(dir);
                    continue;
                }
                Err(_) => continue,
            };
            let entries: Vec<_> = entries
                .flatten()
                .filter_map(|e| Some((e.file_name(), e.file_type().ok()?)))
                .collect();
            // A bare repository (or a git directory by another name): HEAD, objects and refs.
            // Its own directories (objects/ has 256) are not walked.
            let has = |name: &str| entries.iter().any(|(n, _)| n == name);
            if has("HEAD") && has("objects") && has("refs") {
                self.git_dir(&dir, 0, false);
                continue;
            }
            for (name, kind) in entries {
                let path = dir.join(&name);
                if name == ".git" {
                    if kind.is_dir() {
                        self.git_dir(&path, 0, false);
                    } else if kind.is_file() {
                        self.gitfile(&path, &dir);
                    }
                } else if kind.is_dir() && level + 1 < depth {
                    queue.push_back((path, level + 1));
                }
            }
        }
    }

    fn under_writable(&self, path: &Path) -> bool {
        self.writable.iter().any(|root| path.starts_with(root))
    }

    /// Protects the git directory `dir`, its submodules' and worktrees' (nested at most a few
    /// levels: `modules/a/modules/b/…`), and a hooks path its config names. `worktree_config`:
    /// the repository's common config turns `extensions.worktreeConfig` on (a worktree's).
    fn git_dir(&mut self, dir: &Path, depth: usize, worktree_config: bool) {
        let Ok(dir) = std::fs::canonicalize(dir) else {
            return;
        };
        if depth > 6 || !self.under_writable(&dir) || !self.seen.insert(dir.clone()) {
            return;
        }
        let config = Config::read(&dir);
        let worktree_config = worktree_config || config.worktree_config;
        // What git would obey once made, made empty now so that it can be bound read-only.
        let _ = std::fs::create_dir(dir.join("hooks"));
        if worktree_config {
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join("config.worktree"));
        }
        self.out.pinned.push(dir.clone());
        for name in SETTINGS {
            self.protect(&dir.join(name));
        }
        if let Some(hooks) = config.hooks_path(&dir)
            && self.under_writable(&hooks)
        {
            let _ = std::fs::create_dir_all(&hooks);
            self.protect(&hooks);
        }
        for sub in ["modules", "worktrees"] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    self.git_dir(
                        &entry.path(),
                        depth + 1,
                        worktree_config && sub == "worktrees",
                    );
                }
            }
        }
    }

    /// A `.git` file (`gitdir: PATH`): itself read-only, and the git directory it names when
    /// that lies under a writable root.
    fn gitfile(&mut self, file: &Path, work_tree: &Path) {
        self.protect(file);
        let Ok(text) = std::fs::read_to_string(file) else {
            return;
        };
        if let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) {
            self.git_dir(&work_tree.join(target.trim()), 0, false);
        }
    }

    /// Binds `path` read-only if it exists under a writable root — the file a symbolic link
    /// there names, not the link (git follows it).
    fn protect(&mut self, path: &Path) {
        if let Ok(real) = std::fs::canonicalize(path)
            && self.under_writable(&real)
        {
            self.out.read_only.push(real);
        }
    }
}

/// What of a git directory's `config` the walk needs.
#[derive(Debug, Default)]
struct Config {
    /// `core.hooksPath`, as written.
    hooks_path: Option<String>,
    /// `extensions.worktreeConfig` is on.
    worktree_config: bool,
}

impl Config {
    /// Reads `git_dir/config` (`[section]` and `key = value` lines; what else git's format
    /// allows — includes, subsections — only makes it miss a key, never misread one).
    fn read(git_dir: &Path) -> Config {
        let mut out = Config::default();
        let Ok(text) = std::fs::read_to_string(git_dir.join("config")) else {
            return out;
        };
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(name) = line.strip_prefix('[') {
                section = name.trim_end_matches(']').trim().to_ascii_lowercase();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim().trim_matches('"'));
            match section.as_str() {
                "core" if key.eq_ignore_ascii_case("hookspath") => {
                    out.hooks_path = Some(value.to_owned());
                }
                "extensions" if key.eq_ignore_ascii_case("worktreeconfig") => {
                    out.worktree_config = matches!(
                        value.to_ascii_lowercase().as_str(),
                        "true" | "yes" | "on" | "1"
                    );
                }
                _ => {}
            }
        }
        out
    }

    /// `core.hooksPath` made absolute (a relative one is relative to the work tree: the git
    /// directory's parent for `.git`, the directory itself when bare).
    fn hooks_path(&self, git_dir: &Path) -> Option<PathBuf> {
        let path = PathBuf::from(self.hooks_path.as_ref()?);
        if path.is_absolute() {
            return Some(path);
        }
        let base = if git_dir.file_name().is_some_and(|n| n == ".git") {
            git_dir.parent()?
        } else {
            git_dir
        };
        Some(base.join(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn every_kind_of_git_directory_under_a_writable_root_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("sub/lib")).unwrap();
        std::fs::create_dir_all(ws.join("meta")).unwrap();
        git(&ws, &["init", "-q"]);
        git(&ws.join("sub/lib"), &["init", "-q"]);
        git(&ws, &["init", "-q", "--bare", "store.git"]);
        git(
            &ws,
            &["init", "-q", "--separate-git-dir", "meta/real", "sep"],
        );
        git(&ws, &["config", "core.hooksPath", "myhooks"]);
        git(&ws, &["config", "extensions.worktreeConfig", "true"]);
        git(
            &ws,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        git(&ws, &["worktree", "add", "-q", "wt"]);
        // Outside the writable root: not this walk's business.
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        git(&root.join("elsewhere"), &["init", "-q"]);

        let found = find(std::slice::from_ref(&ws), &[]).unwrap();
        for dir in [
            ws.join(".git"),
            ws.join("sub/lib/.git"),
            ws.join("store.git"),
            ws.join("meta/real"),
            ws.join(".git/worktrees/wt"),
        ] {
            assert!(
                found.pinned.contains(&dir),
                "{} pinned: {found:?}",
                dir.display()
            );
        }
        for path in [
            ws.join(".git/config"),
            ws.join(".git/hooks"),
            ws.join("sub/lib/.git/config"),
            ws.join("store.git/hooks"),
            ws.join("store.git/config"),
            ws.join("meta/real/config"),
            ws.join("sep/.git"),
            ws.join("wt/.git"),
            ws.join(".git/worktrees/wt/gitdir"),
            ws.join(".git/worktrees/wt/commondir"),
            ws.join("myhooks"),
            ws.join(".git/config.worktree"),
            ws.join(".git/worktrees/wt/config.worktree"),
        ] {
            assert!(
                found.read_only.contains(&path),
                "{} read-only: {found:?}",
                path.display()
            );
        }
        assert!(
            !found
                .pinned
                .iter()
                .any(|p| p.starts_with(root.join("elsewhere")))
        );
    }

    #[test]
    fn the_walk_is_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        // Wider than the bound at the first level: a repository two levels down is past it
        // (breadth first), one at the first level is not.
        for i in 0..WALK_BOUND + 10 {
            std::fs::create_dir(root.join(format!("d{i:05}"))).unwrap();
        }
        std::fs::create_dir(root.join("d00000/deep")).unwrap();
        git(&root.join("d00000/deep"), &["init", "-q"]);
        let found = find(std::slice::from_ref(&root), &[]).unwrap();
        assert!(found.pinned.is_empty(), "{found:?}");
    }

    #[test]
    fn a_caches_repositories_are_found_a_few_levels_down_and_no_deeper() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = std::fs::canonicalize(tmp.path()).unwrap();
        let near = cache.join("pre-commit/repoabc");
        let deep = cache.join("a/b/c/d/e/repo");
        for dir in [&near, &deep] {
            std::fs::create_dir_all(dir).unwrap();
            git(dir, &["init", "-q"]);
        }
        let found = find(&[], std::slice::from_ref(&cache)).unwrap();
        assert!(found.pinned.contains(&near.join(".git")), "{found:?}");
        assert!(!found.pinned.contains(&deep.join(".git")), "{found:?}");
    }
}
