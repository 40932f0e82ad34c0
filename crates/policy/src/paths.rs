//! Paths: lexical resolution against the tracked working directory, and which directories are
//! too important to delete.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::reasons::Reason;
use crate::words::{Seg, Word, glob_match};

/// Stands for the home directory when the caller did not give one. A NUL byte cannot occur in
/// a real argument, so this never collides with a path the command names.
pub(crate) const UNKNOWN_HOME: &str = "/\0home";

/// Top-level directories whose recursive deletion wrecks the system.
const SYSTEM_TOP: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "snap",
    "nix",
    "mnt",
    "media",
    "Applications",
    "Library",
    "System",
    "Users",
    "Volumes",
    "private",
    "cores",
];

/// Directories whose direct children are all system directories too.
const SYSTEM_PARENTS: &[&str] = &[
    "/usr",
    "/usr/local",
    "/var",
    "/etc",
    "/System",
    "/Library",
    "/private",
    "/private/var",
    "/nix",
];

/// Directories whose direct children are users' home directories.
const HOME_PARENTS: &[&str] = &["/home", "/Users"];

/// Trees that are system at any depth: deleting, moving or truncating anything in them
/// breaks the machine (`/usr/lib/python3`, `/var/lib/dpkg/info`, `/boot/grub`). `/usr/local`
/// below its direct children belongs to the administrator's own installs.
const SYSTEM_TREES: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/etc",
    "/proc",
    "/sys",
    // Package databases, and every service's data (`/var/lib/postgresql`, `/var/lib/docker`).
    "/var/lib",
    "/var/opt",
    "/nix/store",
    "/System",
    "/Library",
];

/// Files whose loss or truncation locks everyone out or stops the machine from booting.
const CRITICAL_FILES: &[&str] = &[
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/fstab",
    "/etc/crypttab",
    "/etc/sudoers",
    "/etc/inittab",
    "/etc/ld.so.conf",
    "/etc/ld.so.cache",
    "/etc/nsswitch.conf",
    "/etc/login.defs",
    "/etc/os-release",
    "/etc/machine-id",
];

/// Trees whose every file is critical in the sense of [`CRITICAL_FILES`].
const CRITICAL_TREES: &[&str] = &[
    "/boot",
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/var/lib/dpkg",
    "/var/lib/rpm",
    "/etc/pam.d",
    "/etc/sudoers.d",
    "/etc/security",
];

/// What a home directory holds that the user cannot get back: keys, settings, documents.
const HOME_DATA: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".config",
    ".local",
    ".aws",
    ".kube",
    ".docker",
    ".password-store",
    ".mozilla",
    ".thunderbird",
    "Documents",
    "Desktop",
    "Pictures",
    "Music",
    "Videos",
];

/// Files in a home directory whose loss or truncation locks the user out or breaks every
/// login shell.
const HOME_CRITICAL: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".netrc",
    ".gitconfig",
];

/// A critical file in the home directory: anything under `~/.ssh` and `~/.gnupg`, the shell's
/// start files.
pub(crate) fn home_critical(path: &Path, home: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(home) else {
        return false;
    };
    let mut parts = rest.components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(dir)), Some(_)) => dir == ".ssh" || dir == ".gnupg",
        (Some(Component::Normal(file)), None) => HOME_CRITICAL.iter().any(|f| file == *f),
        _ => false,
    }
}

/// Caches inside system trees that tools rebuild: clearing them is routine
/// (`rm -rf /var/lib/apt/lists/*` in every Dockerfile).
const REGENERABLE: &[&str] = &["/var/lib/apt/lists", "/var/cache"];

/// Inside a system tree at any depth (see [`SYSTEM_TREES`]).
pub(crate) fn in_system_tree(path: &Path) -> bool {
    if path.starts_with("/usr/local") || REGENERABLE.iter().any(|r| path.starts_with(r)) {
        return false;
    }
    SYSTEM_TREES.iter().any(|t| path.starts_with(t))
}

/// A file the system cannot lose or have truncated (see [`CRITICAL_FILES`]).
pub(crate) fn critical_file(path: &Path) -> bool {
    CRITICAL_FILES.iter().any(|f| path == Path::new(f))
        || CRITICAL_TREES
            .iter()
            .any(|t| path.starts_with(t) && path != Path::new(t))
}

/// The target of a link the line makes to a path only known at run time.
pub(crate) const DYNAMIC_LINK: &str = "/\0dynamic";

/// Symbolic links made earlier on the line: link → target.
pub(crate) type Links = HashMap<PathBuf, PathBuf>;

/// Resolves `text` against `base` as the kernel would: symbolic links (those on the file
/// system, dangling ones included, and those the line makes) are followed component by
/// component, and `..` climbs from where a link led. The last component is followed only
/// when `follow_last` (a trailing `/`, or more path after it). Nothing is required to exist.
pub(crate) fn physical(base: &Path, text: &str, links: &Links, follow_last: bool) -> PathBuf {
    let joined = if text.starts_with('/') {
        PathBuf::from(text)
    } else {
        base.join(text)
    };
    let follow_last = follow_last || text.ends_with('/') || text.ends_with("/.");
    let mut pending: Vec<std::ffi::OsString> = joined
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        out.push(&part);
        let last = pending.is_empty();
        if last && !follow_last {
            break;
        }
        let target = links
            .get(&out)
            .cloned()
            .or_else(|| crate::disk::link_target(&out));
        let Some(target) = target else { continue };
        hops += 1;
        if hops > 40 {
            break;
        }
        out.pop();
        if target.is_absolute() {
            out = PathBuf::from("/");
        }
        for c in target.components().rev() {
            match c {
                Component::Normal(n) => pending.push(n.to_os_string()),
                Component::ParentDir => pending.push("..".into()),
                _ => {}
            }
        }
    }
    out
}

/// The directories a relative path may be relative to: usually one, several after a `cd`
/// that may or may not have run, none known after `cd $X`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cwd {
    pub(crate) options: Vec<PathBuf>,
    pub(crate) unknown: bool,
}

/// More possibilities than this and the directory counts as unknown.
const MAX_CWD_OPTIONS: usize = 8;

impl Cwd {
    pub(crate) fn known(path: PathBuf) -> Cwd {
        Cwd {
            options: vec![path],
            unknown: false,
        }
    }

    pub(crate) fn unknown() -> Cwd {
        Cwd {
            options: Vec::new(),
            unknown: true,
        }
    }

    /// The single directory, when there is exactly one.
    pub(crate) fn exact(&self) -> Option<&Path> {
        match (self.unknown, self.options.as_slice()) {
            (false, [one]) => Some(one),
            _ => None,
        }
    }

    /// Either this or `other` may hold.
    pub(crate) fn union(&mut self, other: Cwd) {
        self.unknown |= other.unknown;
        for p in other.options {
            if !self.options.contains(&p) {
                self.options.push(p);
            }
        }
        if self.options.len() > MAX_CWD_OPTIONS {
            *self = Cwd::unknown();
        }
    }
}

/// Joins and normalises `.` and `..` without touching the file system.
pub(crate) fn normalize(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::from("/");
    for comp in joined.components() {
        match comp {
            Component::Normal(c) => out.push(c),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// How dangerous a deletion target is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PathClass {
    /// `/` itself, or everything under it.
    Root,
    /// The home directory (or everything in it).
    Home,
    /// The user's keys, settings or documents in the home directory (`~/.ssh`).
    HomeData(String),
    /// A system directory (or its contents).
    System(String),
    /// Cannot be known statically and might be one of the above.
    Unknown(String),
    /// A path that is none of the above.
    Safe,
}

impl PathClass {
    fn rank(&self) -> u8 {
        match self {
            PathClass::Root => 4,
            PathClass::Home | PathClass::HomeData(_) => 3,
            PathClass::System(_) => 2,
            PathClass::Unknown(_) => 1,
            PathClass::Safe => 0,
        }
    }

    fn worst(self, other: PathClass) -> PathClass {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// The home directory used for classification.
pub(crate) fn home_path(home: Option<&Path>) -> PathBuf {
    home.map_or_else(|| PathBuf::from(UNKNOWN_HOME), Path::to_path_buf)
}

/// The word as a path string, with an unknown home standing in as [`UNKNOWN_HOME`].
fn path_text(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Lit(t) | Seg::Glob(t) | Seg::Dyn(t) | Seg::Temp(t) => s.push_str(t),
            Seg::Home => s.push_str(UNKNOWN_HOME),
        }
    }
    s
}

/// Classifies what a destructive command aimed at `word` could reach, lexically and through
/// symbolic links.
pub(crate) fn classify(word: &Word, cwd: &Cwd, home: &Path, links: &Links) -> PathClass {
    if word.starts_temp() {
        // A temporary path is harmless, unless it comes out empty (`mktemp` failed):
        // `"$d"/*` is then `/*`.
        let rest = Word {
            segs: word.segs[1..].to_vec(),
        };
        let empty_case = if rest.text().starts_with('/') {
            classify(&rest, cwd, home, links)
        } else {
            PathClass::Safe
        };
        return match empty_case {
            PathClass::Safe => PathClass::Safe,
            _ => PathClass::Unknown(
                Reason::EmptyTempPath {
                    word: &word.text(),
                    empty: &rest.text(),
                }
                .text(),
            ),
        };
    }
    if word.starts_dynamic() {
        return PathClass::Unknown(Reason::CouldExpandToRoot { word: &word.text() }.text());
    }
    let mut result = PathClass::Safe;
    let text = path_text(&word.segs);
    let is_abs = text.starts_with('/');
    let bases: Vec<&Path> = if is_abs {
        vec![Path::new("/")]
    } else {
        if cwd.unknown {
            result = result.worst(PathClass::Unknown(
                Reason::RelativeToUnknownDir { word: &word.text() }.text(),
            ));
        }
        cwd.options.iter().map(PathBuf::as_path).collect()
    };
    for base in bases {
        result = result.worst(classify_in(word, base, home, links));
    }
    result
}

fn classify_in(word: &Word, base: &Path, home: &Path, links: &Links) -> PathClass {
    // The text up to the first dynamic part; glob characters kept.
    let mut prefix = String::new();
    let mut dynamic = false;
    for seg in &word.segs {
        match seg {
            Seg::Dyn(_) | Seg::Temp(_) => {
                dynamic = true;
                break;
            }
            Seg::Home => prefix.push_str(UNKNOWN_HOME),
            Seg::Lit(t) | Seg::Glob(t) => prefix.push_str(t),
        }
    }
    if word.has_glob() {
        return classify_glob(word, base, home, links);
    }
    if dynamic {
        // `dir/$X`: anything below `dir` (or `dir` itself when `$X` is empty).
        let dir_text = if prefix.ends_with('/') {
            prefix.clone()
        } else {
            prefix
                .rfind('/')
                .map_or(String::new(), |i| prefix[..=i].to_owned())
        };
        let lexical = normalize(base, Path::new(&dir_text));
        let real = physical(base, &dir_text, links, true);
        let dir = if protected(&lexical, home) == PathClass::Safe {
            real
        } else {
            lexical
        };
        return match protected(&dir, home) {
            PathClass::Safe => PathClass::Safe,
            // `/lib/modules/$(uname -r)`: whatever it is, it is inside a system tree.
            PathClass::System(s) if in_system_tree(&dir) && !word.text().contains("..") => {
                PathClass::System(s)
            }
            _ => PathClass::Unknown(
                Reason::CouldExpandTo {
                    word: &word.text(),
                    dir: &display(&dir, home),
                }
                .text(),
            ),
        };
    }
    let real = physical(base, &prefix, links, false);
    if real.starts_with(DYNAMIC_LINK) {
        return PathClass::Unknown(Reason::ThroughUnknownLink { word: &word.text() }.text());
    }
    protected(&normalize(base, Path::new(&prefix)), home).worst(protected(&real, home))
}

/// A glob: what the directory holding the first glob component could lose.
fn classify_glob(word: &Word, base: &Path, home: &Path, links: &Links) -> PathClass {
    // Split the word into path components, noting which hold glob characters.
    let mut comps: Vec<(String, bool)> = vec![(String::new(), false)];
    let mut leading_slash = false;
    for (i, seg) in word.segs.iter().enumerate() {
        let (t, glob) = match seg {
            Seg::Lit(t) | Seg::Dyn(t) | Seg::Temp(t) => (t.as_str(), false),
            Seg::Glob(t) => (t.as_str(), true),
            Seg::Home => (UNKNOWN_HOME, false),
        };
        for (j, part) in t.split('/').enumerate() {
            if j > 0 {
                comps.push((String::new(), false));
            } else if i == 0 && t.starts_with('/') {
                leading_slash = true;
            }
            if let Some(last) = comps.last_mut() {
                last.0.push_str(part);
                last.1 |= glob && !part.is_empty();
            }
        }
    }
    let Some(first_glob) = comps.iter().position(|c| c.1) else {
        return PathClass::Safe;
    };
    let mut dir_text = comps[..first_glob]
        .iter()
        .map(|c| c.0.as_str())
        .collect::<Vec<_>>()
        .join("/");
    if leading_slash && !dir_text.starts_with('/') {
        dir_text.insert(0, '/');
    }
    let lexical = normalize(base, Path::new(&dir_text));
    let dir = if lexical == Path::new("/") || protected(&lexical, home) != PathClass::Safe {
        lexical
    } else {
        physical(base, &dir_text, links, true)
    };
    let pattern = &comps[first_glob].0;
    let last = comps[first_glob + 1..].iter().all(|c| c.0.is_empty());
    let match_all = pattern.chars().all(|c| matches!(c, '*' | '?' | '.'));
    if dir == Path::new("/") {
        let hits: Vec<&str> = SYSTEM_TOP
            .iter()
            .copied()
            .filter(|name| glob_match(pattern, name))
            .collect();
        if match_all || (hits.len() > 1 && last) {
            return PathClass::Root;
        }
        if !hits.is_empty() {
            return PathClass::System(format!("/{}", hits[0]));
        }
        return PathClass::Safe;
    }
    match protected(&dir, home) {
        PathClass::Safe => {
            if SYSTEM_PARENTS.iter().any(|p| Path::new(p) == dir)
                || HOME_PARENTS.iter().any(|p| Path::new(p) == dir)
            {
                PathClass::System(dir.display().to_string())
            } else {
                PathClass::Safe
            }
        }
        // Inside a system tree every entry matters (`/usr/lib/python3*`).
        t if match_all || !last || broad_glob(pattern) || in_system_tree(&dir) => t,
        _ => PathClass::Safe,
    }
}

/// A glob that matches most names: it starts with a glob character and has no literal
/// suffix to narrow it (`[a-z]*`, `?*`, `*[0-9]`; not `*.log`).
fn broad_glob(pattern: &str) -> bool {
    if !pattern.starts_with(['*', '?', '[']) {
        return false;
    }
    let tail = pattern
        .rfind(['*', '?', ']'])
        .map_or(pattern, |i| &pattern[i + 1..]);
    tail.chars().count() < 2
}

/// Whether deleting this exact directory (recursively) is catastrophic.
pub(crate) fn protected(path: &Path, home: &Path) -> PathClass {
    if path == Path::new("/") {
        return PathClass::Root;
    }
    // The caller's home, or a home only known on the other side (`ssh`, a container), or a
    // directory that holds it (`/work` when the home is `/work/me`).
    if path == home
        || path == Path::new(UNKNOWN_HOME)
        || (home.starts_with(path) && home != Path::new(UNKNOWN_HOME))
    {
        return PathClass::Home;
    }
    for h in [home, Path::new(UNKNOWN_HOME)] {
        if let Ok(rest) = path.strip_prefix(h)
            && let [Component::Normal(first)] = rest.components().collect::<Vec<_>>().as_slice()
            && HOME_DATA.iter().any(|d| first == d)
        {
            return PathClass::HomeData(display(path, h));
        }
    }
    if in_system_tree(path) {
        return PathClass::System(path.to_string_lossy().into_owned());
    }
    let s = path.to_string_lossy();
    if let Some(name) = s.strip_prefix('/')
        && SYSTEM_TOP.contains(&name)
    {
        return PathClass::System(s.into_owned());
    }
    if let Some(parent) = path.parent() {
        let parent = parent.to_string_lossy();
        if SYSTEM_PARENTS.contains(&parent.as_ref()) || HOME_PARENTS.contains(&parent.as_ref()) {
            return PathClass::System(s.into_owned());
        }
    }
    PathClass::Safe
}

/// A path for messages: the unknown home shows as `~`.
pub(crate) fn display(path: &Path, home: &Path) -> String {
    if let Ok(rest) = path.strip_prefix(home) {
        if rest.as_os_str().is_empty() {
            return "~".to_owned();
        }
        if home == Path::new(UNKNOWN_HOME) {
            return format!("~/{}", rest.display());
        }
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes() {
        assert_eq!(
            normalize(Path::new("/a/b"), Path::new("../c/./d")),
            Path::new("/a/c/d")
        );
        assert_eq!(
            normalize(Path::new("/a"), Path::new("/../..//")),
            Path::new("/")
        );
    }

    #[test]
    fn physical_paths_follow_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/etc", root.join("e")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/dangling", root.join("d")).unwrap();
        let none = Links::new();
        assert_eq!(
            physical(&root, "e/passwd", &none, false),
            Path::new("/etc/passwd")
        );
        assert_eq!(physical(&root, "e/../x", &none, false), Path::new("/x"));
        assert_eq!(physical(&root, "e", &none, false), root.join("e"));
        assert_eq!(physical(&root, "e/", &none, false), Path::new("/etc"));
        assert_eq!(
            physical(&root, "d", &none, true),
            Path::new("/nonexistent/dangling")
        );
        let mut made = Links::new();
        made.insert(root.join("x"), PathBuf::from("/"));
        assert_eq!(physical(&root, "x/", &made, false), Path::new("/"));
        assert_eq!(
            physical(Path::new("/"), "/proc/self/root/", &none, false),
            Path::new("/")
        );
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", "usr"));
        assert!(glob_match("u*", "usr"));
        assert!(!glob_match("*.o", "usr"));
        assert!(glob_match("[a-z]sr", "usr"));
        assert!(glob_match("?sr", "usr"));
        assert!(!glob_match("x?", "usr"));
    }

    #[test]
    fn classifies() {
        let home = Path::new("/home/u");
        let cwd = Cwd::known(PathBuf::from("/work/p"));
        let links = Links::new();
        let c = |w: &str| classify(&Word::lit(w), &cwd, home, &links);
        assert_eq!(c("/"), PathClass::Root);
        assert_eq!(c("/home/u"), PathClass::Home);
        assert_eq!(c("/usr"), PathClass::System("/usr".into()));
        assert_eq!(c("/usr/lib"), PathClass::System("/usr/lib".into()));
        assert_eq!(
            c("/usr/lib/python3/dist-packages"),
            PathClass::System("/usr/lib/python3/dist-packages".into())
        );
        assert_eq!(c("/usr/local/lib/node_modules/x"), PathClass::Safe);
        assert_eq!(c("/tmp/x"), PathClass::Safe);
        assert_eq!(c("node_modules"), PathClass::Safe);
        assert_eq!(c("../../.."), PathClass::Root);
    }
}
