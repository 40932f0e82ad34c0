//! Every path through which a deny-read path is reachable. Landlock's rules hold files by
//! their inodes, but "all but X" is built from X's siblings and its ancestors' (`rules.rs`): a
//! second mount of the same file system (a bind mount of `$HOME` elsewhere, a container's view
//! of it) reaches X by other ancestors, which are granted whole. So the deny list is widened
//! with the same place seen through every other mount of its file system, read from the mount
//! table, and through an overlay's layers.

use std::path::{Path, PathBuf};

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    /// `major:minor` of the file system.
    device: String,
    /// The directory of the file system this mount shows.
    root: PathBuf,
    /// Where it is mounted.
    point: PathBuf,
    fs_type: String,
    /// An overlay's layers (`lowerdir`, `upperdir`), for overlays.
    layers: Vec<PathBuf>,
}

/// The mount table's lines, parsed.
fn parse(table: &str) -> Vec<Mount> {
    table
        .lines()
        .filter_map(|line| {
            let (head, tail) = line.split_once(" - ")?;
            let fields: Vec<&str> = head.split(' ').collect();
            let mut tail = tail.split(' ');
            let fs_type = tail.next()?.to_owned();
            let _source = tail.next();
            let options = tail.next().unwrap_or("");
            let layers = if fs_type == "overlay" {
                options
                    .split(',')
                    .filter_map(|o| {
                        o.strip_prefix("lowerdir=")
                            .or_else(|| o.strip_prefix("upperdir="))
                    })
                    .flat_map(|dirs| dirs.split(':'))
                    .map(|d| PathBuf::from(unescape(d)))
                    .collect()
            } else {
                Vec::new()
            };
            Some(Mount {
                device: (*fields.get(2)?).to_owned(),
                root: PathBuf::from(unescape(fields.get(3)?)),
                point: PathBuf::from(unescape(fields.get(4)?)),
                fs_type,
                layers,
            })
        })
        .collect()
}

/// The table's octal escapes (`\040` a space, `\011`, `\012`, `\134`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The other paths of each of `deny` (canonical paths): through every other mount of the
/// same file system — where that mount shows the place, or shows a directory inside it (then
/// the whole mount) — and through an overlay's layers. An error names what could not be read.
pub(super) fn aliases(deny: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    if deny.is_empty() {
        return Ok(Vec::new());
    }
    let table = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| {
        format!("cannot read the mount table to find every path to the deny-read paths: {e}")
    })?;
    Ok(aliases_in(&parse(&table), deny))
}

fn aliases_in(mounts: &[Mount], deny: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in deny {
        // The mount the path is on: the last one listed at the longest matching mount point.
        let Some(home) = mounts
            .iter()
            .filter(|m| path.starts_with(&m.point))
            .max_by_key(|m| m.point.components().count())
        else {
            continue;
        };
        let Ok(rest) = path.strip_prefix(&home.point) else {
            continue;
        };
        let in_fs = home.root.join(rest);
        for other in mounts.iter().filter(|m| m.device == home.device) {
            if let Ok(below) = in_fs.strip_prefix(&other.root) {
                out.push(join(&other.point, below));
            } else if other.root.starts_with(&in_fs) {
                out.push(other.point.clone());
            }
        }
        if home.fs_type == "overlay" {
            out.extend(home.layers.iter().map(|layer| join(layer, rest)));
        }
    }
    out.retain(|p| !deny.contains(p));
    out.sort();
    out.dedup();
    out
}

fn join(base: &Path, rest: &Path) -> PathBuf {
    if rest.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 254:0 /home/al /mnt/al\\040home rw,relatime - ext4 /dev/vda rw
41 27 254:0 /home/al/.ssh /srv/keys rw,relatime - ext4 /dev/vda rw
42 27 254:0 /var /mnt/var rw,relatime - ext4 /dev/vda rw
43 27 0:50 / /data rw - tmpfs tmpfs rw
44 27 0:51 / /ctr rw - overlay overlay rw,lowerdir=/l1:/l2,upperdir=/up,workdir=/w
";

    #[test]
    fn a_deny_read_path_is_denied_through_every_mount_that_shows_it() {
        let mounts = parse(TABLE);
        assert_eq!(mounts[1].point, PathBuf::from("/mnt/al home"));
        let got = aliases_in(&mounts, &[PathBuf::from("/home/al/.ssh")]);
        assert_eq!(
            got,
            vec![
                PathBuf::from("/mnt/al home/.ssh"),
                PathBuf::from("/srv/keys"),
            ]
        );
        // A mount showing a directory inside the denied one is denied whole.
        let got = aliases_in(&mounts, &[PathBuf::from("/home/al")]);
        assert_eq!(
            got,
            vec![PathBuf::from("/mnt/al home"), PathBuf::from("/srv/keys")]
        );
        // Through another mount's own path back to the first.
        let got = aliases_in(&mounts, &[PathBuf::from("/mnt/al home/.netrc")]);
        assert_eq!(got, vec![PathBuf::from("/home/al/.netrc")]);
        // Other file systems are not aliases; an overlay's layers are.
        assert!(aliases_in(&mounts, &[PathBuf::from("/data/x")]).is_empty());
        let got = aliases_in(&mounts, &[PathBuf::from("/ctr/etc/key")]);
        assert_eq!(
            got,
            vec![
                PathBuf::from("/l1/etc/key"),
                PathBuf::from("/l2/etc/key"),
                PathBuf::from("/up/etc/key"),
            ]
        );
    }

    #[test]
    fn this_machines_table_parses() {
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mounts = parse(&table);
        assert!(mounts.iter().any(|m| m.point == Path::new("/")));
    }
}
