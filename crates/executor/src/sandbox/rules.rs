//! The Landlock ruleset of a sandbox: what may be read and written, by path.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use super::{PrepareError, fail};

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

/// The ruleset: everything readable but `/dev` and `deny`; `writable` (and `tmp`) writable
/// but for `deny`; abstract Unix sockets and signals scoped to the sandbox.
pub(super) fn ruleset(
    writable: &[PathBuf],
    tmp: &Path,
    deny: &[PathBuf],
) -> Result<OwnedFd, PrepareError> {
    let abi = ABI::V6;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let file_only = AccessFs::from_file(abi);
    let err = |e: landlock::RulesetError| fail("the Landlock ruleset", e);
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(err)?
        .scope(Scope::from_all(abi))
        .map_err(err)?
        .create()
        .map_err(err)?;
    let mut grant =
        |path: &Path, access: landlock::BitFlags<AccessFs>| -> Result<(), PrepareError> {
            let Ok(fd) = PathFd::new(path) else {
                return Ok(()); // gone meanwhile
            };
            let access = if path.is_dir() {
                access
            } else {
                access & file_only
            };
            created
                .as_mut()
                .add_rule(PathBeneath::new(fd, access))
                .map_err(err)?;
            Ok(())
        };
    let mut excluded: Vec<PathBuf> = deny.to_vec();
    excluded.push(PathBuf::from("/dev"));
    let mut listable = Vec::new();
    for path in beneath_except(Path::new("/"), &excluded, &mut listable) {
        grant(&path, read)?;
    }
    for dir in &listable {
        grant(dir, AccessFs::ReadDir.into())?;
    }
    for device in DEVICES {
        grant(
            Path::new(device),
            read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev,
        )?;
    }
    grant(Path::new("/dev/shm"), read)?;
    // A writable root around a deny-read path (the workspace is `~`) is writable but for it:
    // its own directory then takes no new entries (a Landlock rule covers a whole tree, so
    // "all but X" is made of X's siblings), which the operator avoids by a narrower root.
    let mut unused = Vec::new();
    for root in writable.iter().map(PathBuf::as_path).chain([tmp]) {
        for path in beneath_except(root, &excluded, &mut unused) {
            grant(&path, all)?;
        }
    }
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| PrepareError("Landlock made no ruleset".to_owned()))
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
