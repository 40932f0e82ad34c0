//! The Landlock ruleset of a sandbox: what may be read and written, by path.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use super::error::{PrepareError, fail};

/// Devices a confined process may open by path (the rest of `/dev` — disks, memory, other
/// terminals under `/dev/pts` — stays out; a PTY call's own terminal is on its descriptors and
/// behind `/dev/tty`).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

/// The write rights: every right but reading, listing and executing.
fn write_rights() -> landlock::BitFlags<AccessFs> {
    AccessFs::from_all(ABI) & !AccessFs::from_read(ABI)
}

const ABI: landlock::ABI = landlock::ABI::V6;

/// What the Landlock layers grant beyond reading, kept open by the spec (`O_PATH`
/// descriptors, so each call's layer is made without a path lookup).
#[derive(Debug)]
pub(super) struct WriteGrants(Vec<(OwnedFd, landlock::BitFlags<AccessFs>)>);

/// The spec's ruleset (a descriptor), and its write grants for the calls' own layers.
///
/// Reading: everything but `/dev` (only the harmless devices) and `deny`. Writing: the
/// `writable` roots and the temporary area `tmp` *whole* — a deny-read path inside a writable
/// root leaves its directory writable (its own contents are a read-only mount point,
/// `namespaces.rs`, so it cannot be written, removed or replaced either) —, the devices, and
/// the private `/dev/shm` (`shm`, inside the mount namespace). Abstract Unix sockets and
/// signals scoped to the sandbox.
pub(super) fn ruleset(
    writable: &[PathBuf],
    tmp: &Path,
    deny: &[PathBuf],
    shm: Option<&OwnedFd>,
) -> Result<(OwnedFd, WriteGrants), PrepareError> {
    let all = AccessFs::from_all(ABI);
    let read = AccessFs::from_read(ABI);
    let write = write_rights();
    let file_only = AccessFs::from_file(ABI);
    let err = |e: landlock::RulesetError| fail("the Landlock ruleset", e);
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(err)?
        .scope(Scope::from_all(ABI))
        .map_err(err)?
        .create()
        .map_err(err)?;
    let mut writes = Vec::new();
    let mut grant = |path: &Path, access: landlock::BitFlags<AccessFs>, keep: bool| {
        let Ok(fd) = path_fd(path) else {
            return Ok(()); // gone meanwhile
        };
        let access = if path.is_dir() {
            access
        } else {
            access & file_only
        };
        created
            .as_mut()
            .add_rule(PathBeneath::new(&fd, access))
            .map_err(err)?;
        if keep {
            writes.push((fd, access & write));
        }
        Ok::<(), PrepareError>(())
    };
    let mut excluded: Vec<PathBuf> = deny.to_vec();
    excluded.push(PathBuf::from("/dev"));
    let mut listable = Vec::new();
    for path in beneath_except(Path::new("/"), &excluded, &mut listable) {
        grant(&path, read, false)?;
    }
    for dir in &listable {
        grant(dir, AccessFs::ReadDir.into(), false)?;
    }
    for device in DEVICES {
        let access = read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
        grant(Path::new(device), access, true)?;
    }
    for root in writable.iter().map(PathBuf::as_path).chain([tmp]) {
        grant(root, write, root != tmp)?;
    }
    if let Some(shm) = shm {
        created
            .as_mut()
            .add_rule(PathBeneath::new(shm, all))
            .map_err(err)?;
        let copy = shm
            .try_clone()
            .map_err(|e| fail("the private /dev/shm", e))?;
        writes.push((copy, write));
    }
    let ruleset = Option::<OwnedFd>::from(created)
        .ok_or_else(|| PrepareError::new("Landlock made no ruleset".to_owned()))?;
    Ok((ruleset, WriteGrants(writes)))
}

/// An `O_PATH` descriptor of `path` (following links, as Landlock's own `PathFd`), kept by
/// the spec for its calls' layers.
fn path_fd(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::PATH.bits() as i32)
        .open(path)
        .map(OwnedFd::from)
}

/// One call's own layer, on top of the spec's: it handles only the write rights and grants
/// them where the spec's layer does — but, of the temporary area, only the call's own
/// directory `tmp`. So calls sharing a spec (two sessions of one server) cannot write into
/// each other's `TMPDIR`, or plant entries in the area. Made per call in ~10 system calls.
pub(super) fn call_layer(grants: &WriteGrants, tmp: &Path) -> Result<OwnedFd, PrepareError> {
    let err = |e: landlock::RulesetError| fail("the call's Landlock layer", e);
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write_rights())
        .map_err(err)?
        .create()
        .map_err(err)?;
    for (fd, access) in &grants.0 {
        created
            .as_mut()
            .add_rule(PathBeneath::new(fd, *access))
            .map_err(err)?;
    }
    let own = path_fd(tmp).map_err(|e| fail("the call's temporary directory", e))?;
    created
        .as_mut()
        .add_rule(PathBeneath::new(&own, write_rights()))
        .map_err(err)?;
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| PrepareError::new("Landlock made no ruleset".to_owned()))
}

/// The trees that together cover `root` but none of `excluded`: `root` itself when nothing
/// excluded is at or below it, else its entries, expanded the same way (Landlock rules only
/// add access, so "all but X" is "each sibling of X and of its ancestors"). Symbolic links are
/// left out — a rule on one would cover its target — and directories expanded are listed in
/// `listable` (a directory's names may be read, not its excluded entries).
fn beneath_except(root: &Path, excluded: &[PathBuf], listable: &mut Vec<PathBuf>) -> Vec<PathBuf> {
    if excluded.iter().any(|x| x == root) {
        return Vec::new();
    }
    if !excluded.iter().any(|x| x.starts_with(root)) {
        return vec![root.to_path_buf()];
    }
    listable.push(root.to_path_buf());
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        out.extend(beneath_except(&entry.path(), excluded, listable));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_but_a_path_is_its_siblings_and_its_ancestors_siblings() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in ["a/secret", "a/keep", "b"] {
            std::fs::create_dir_all(root.join(p)).unwrap();
        }
        std::os::unix::fs::symlink(root.join("a/secret"), root.join("link")).unwrap();
        let mut listable = Vec::new();
        let mut got = beneath_except(root, &[root.join("a/secret")], &mut listable);
        got.sort();
        assert_eq!(got, vec![root.join("a/keep"), root.join("b")]);
        assert_eq!(listable, vec![root.to_path_buf(), root.join("a")]);
        assert!(beneath_except(root, &[root.to_path_buf()], &mut listable).is_empty());
        assert_eq!(
            beneath_except(&root.join("b"), &[root.join("a")], &mut listable),
            vec![root.join("b")]
        );
    }
}
