//! The host's Unix sockets, hidden from a sandbox whose network is on.
//!
//! A socket path reaches whatever listens on it — a container engine (`docker.sock`: root on the
//! host), the system or session bus (`systemd-run`), an ssh or gpg agent, a terminal
//! multiplexer (`tmux send-keys` types into the operator's shell), an X server — and connecting
//! to one is not a file access Landlock governs (ABI 7 has no rule for it; it scopes only
//! abstract sockets). With the network off no Unix socket can be made at all (`seccomp.rs`);
//! with it on, every socket path of the host outside the writable roots is hidden in the mount
//! namespace under the empty, unreadable mask file, so `connect` and `sendto` meet a regular
//! file and fail with `ECONNREFUSED`. The sandbox's own sockets (in the workspace, a cache, its
//! temporary directory) are left alone.
//!
//! Found two ways when a spec's namespaces are made: every bound path socket of this network
//! namespace (`/proc/net/unix`, which lists the listening daemons of the host), and a bounded walk
//! of the directories where daemons put them ([`SOCKET_DIRS`], the runtime and home directories),
//! for sockets bound in another network namespace and reached through the file system. A socket
//! made after the namespaces were built is covered from the next rebuild (within 5 s).

use std::collections::BTreeSet;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Directories where daemons put their sockets, with how deep the walk goes into each (1: the
/// directory's own entries). Shallow where the directory is busy (`/tmp` holds every tool's
/// temporary directories): the daemons there bind in this network namespace, so
/// `/proc/net/unix` names them anyway; the walk is for sockets bound elsewhere (an engine's
/// socket mounted into a container).
const SOCKET_DIRS: &[(&str, usize)] = &[
    ("/run", 5),
    ("/var/run", 5),
    ("/tmp", 1),
    ("/var/tmp", 1),
    ("/dev", 2),
    ("/var/snap", 4),
];

/// Variables naming more directories to walk (`$XDG_RUNTIME_DIR`: the session bus, agents,
/// rootless engines; the home's own entries and those one level down: `~/.gnupg`), with the
/// depth.
const SOCKET_DIR_VARS: &[(&str, usize)] = &[("XDG_RUNTIME_DIR", 4), ("HOME", 2)];

/// Directories listed in all: the walk stays well under a millisecond.
const WALK_BOUND: usize = 2048;

/// The host's socket paths (canonical) outside `writable` and `tmp_area`.
pub(super) fn host_sockets(writable: &[PathBuf], tmp_area: &Path) -> Vec<PathBuf> {
    let outside = |p: &Path| !p.starts_with(tmp_area) && !writable.iter().any(|w| p.starts_with(w));
    let mut found = BTreeSet::new();
    for path in bound_paths() {
        if let Ok(real) = std::fs::canonicalize(&path)
            && is_socket(&real)
            && outside(&real)
        {
            found.insert(real);
        }
    }
    let home_vars = SOCKET_DIR_VARS
        .iter()
        .filter_map(|(var, depth)| Some((PathBuf::from(std::env::var_os(var)?), *depth)));
    let roots = SOCKET_DIRS
        .iter()
        .map(|(dir, depth)| (PathBuf::from(dir), *depth))
        .chain(home_vars)
        .filter(|(dir, _)| dir.is_absolute());
    let mut listed = 0;
    for (root, depth) in roots {
        walk(&root, depth, &outside, &mut listed, &mut found);
    }
    found.into_iter().collect()
}

fn is_socket(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The absolute paths of this network namespace's bound Unix sockets (the last column of
/// `/proc/net/unix`; `@` starts an abstract name, which is not a path).
fn bound_paths() -> Vec<PathBuf> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    table
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().nth(7))
        .filter(|path| path.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// Breadth first from `root`, `depth` levels, symbolic links not followed, skipping what is
/// not `outside` (a writable root's content is the sandbox's own).
fn walk(
    root: &Path,
    depth: usize,
    outside: &dyn Fn(&Path) -> bool,
    listed: &mut usize,
    found: &mut BTreeSet<PathBuf>,
) {
    let Ok(root) = std::fs::canonicalize(root) else {
        return;
    };
    let mut queue = std::collections::VecDeque::from([(root, 0)]);
    while let Some((dir, level)) = queue.pop_front() {
        if *listed >= WALK_BOUND {
            return;
        }
        if !outside(&dir) {
            continue;
        }
        *listed += 1;
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_socket() {
                found.insert(path);
            } else if kind.is_dir() && level + 1 < depth {
                queue.push_back((path, level + 1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listening_socket_is_found_and_one_under_a_writable_root_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path().join("host.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&host).unwrap();
        let writable = dir.path().join("ws");
        std::fs::create_dir(&writable).unwrap();
        let own = writable.join("own.sock");
        let _own = std::os::unix::net::UnixListener::bind(&own).unwrap();
        let writable = std::fs::canonicalize(&writable).unwrap();
        let found = host_sockets(std::slice::from_ref(&writable), Path::new("/nonexistent"));
        let host = std::fs::canonicalize(&host).unwrap();
        assert!(found.contains(&host), "{found:?}");
        assert!(!found.iter().any(|p| p.starts_with(&writable)), "{found:?}");
    }
}
