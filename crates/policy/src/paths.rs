//! Paths: lexical resolution against the tracked working directory, and which directories are
//! too important to delete.

use std::path::{Component, Path, PathBuf};

use crate::words::{Seg, Word};

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
pub(crate) enum Target {
    /// `/` itself, or everything under it.
    Root,
    /// The home directory (or everything in it).
    Home,
    /// A system directory (or its contents).
    System(String),
    /// Cannot be known statically and might be one of the above.
    Unknown(String),
    /// A path that is none of the above.
    Safe,
}

impl Target {
    fn rank(&self) -> u8 {
        match self {
            Target::Root => 4,
            Target::Home => 3,
            Target::System(_) => 2,
            Target::Unknown(_) => 1,
            Target::Safe => 0,
        }
    }

    fn worst(self, other: Target) -> Target {
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
            Seg::Lit(t) | Seg::Glob(t) | Seg::Dyn(t) => s.push_str(t),
            Seg::Home => s.push_str(UNKNOWN_HOME),
        }
    }
    s
}

/// Classifies what a destructive command aimed at `word` could reach.
pub(crate) fn classify(word: &Word, cwd: &Cwd, home: &Path) -> Target {
    if word.starts_dynamic() {
        return Target::Unknown(format!(
            "`{}` is only known at run time and could expand to /",
            word.text()
        ));
    }
    let mut result = Target::Safe;
    let text = path_text(&word.segs);
    let is_abs = text.starts_with('/');
    let bases: Vec<&Path> = if is_abs {
        vec![Path::new("/")]
    } else {
        if cwd.unknown {
            result = result.worst(Target::Unknown(format!(
                "`{}` is relative to a directory only known at run time",
                word.text()
            )));
        }
        cwd.options.iter().map(PathBuf::as_path).collect()
    };
    for base in bases {
        result = result.worst(classify_in(word, base, home));
    }
    result
}

fn classify_in(word: &Word, base: &Path, home: &Path) -> Target {
    // The text up to the first dynamic part; glob characters kept.
    let mut prefix = String::new();
    let mut dynamic = false;
    for seg in &word.segs {
        match seg {
            Seg::Dyn(_) => {
                dynamic = true;
                break;
            }
            Seg::Home => prefix.push_str(UNKNOWN_HOME),
            Seg::Lit(t) | Seg::Glob(t) => prefix.push_str(t),
        }
    }
    if word.has_glob() {
        return classify_glob(word, base, home);
    }
    if dynamic {
        // `dir/$X`: anything below `dir` (or `dir` itself when `$X` is empty).
        let dir = if prefix.ends_with('/') {
            normalize(base, Path::new(&prefix))
        } else {
            let p = normalize(base, Path::new(&prefix));
            p.parent().map_or(p.clone(), Path::to_path_buf)
        };
        return match protected(&dir, home) {
            Target::Safe => Target::Safe,
            _ => Target::Unknown(format!(
                "`{}` is only known at run time and could expand to {}",
                word.text(),
                display(&dir, home)
            )),
        };
    }
    protected(&normalize(base, Path::new(&prefix)), home)
}

/// A glob: what the directory holding the first glob component could lose.
fn classify_glob(word: &Word, base: &Path, home: &Path) -> Target {
    // Split the word into path components, noting which hold glob characters.
    let mut comps: Vec<(String, bool)> = vec![(String::new(), false)];
    let mut leading_slash = false;
    for (i, seg) in word.segs.iter().enumerate() {
        let (t, glob) = match seg {
            Seg::Lit(t) | Seg::Dyn(t) => (t.as_str(), false),
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
        return Target::Safe;
    };
    let mut dir_text = comps[..first_glob]
        .iter()
        .map(|c| c.0.as_str())
        .collect::<Vec<_>>()
        .join("/");
    if leading_slash && !dir_text.starts_with('/') {
        dir_text.insert(0, '/');
    }
    let dir = normalize(base, Path::new(&dir_text));
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
            return Target::Root;
        }
        if !hits.is_empty() {
            return Target::System(format!("/{}", hits[0]));
        }
        return Target::Safe;
    }
    match protected(&dir, home) {
        Target::Safe => {
            if SYSTEM_PARENTS.iter().any(|p| Path::new(p) == dir)
                || HOME_PARENTS.iter().any(|p| Path::new(p) == dir)
            {
                Target::System(dir.display().to_string())
            } else {
                Target::Safe
            }
        }
        t if match_all || !last => t,
        _ => Target::Safe,
    }
}

/// Whether deleting this exact directory (recursively) is catastrophic.
pub(crate) fn protected(path: &Path, home: &Path) -> Target {
    if path == Path::new("/") {
        return Target::Root;
    }
    if path == home {
        return Target::Home;
    }
    let s = path.to_string_lossy();
    if let Some(name) = s.strip_prefix('/')
        && SYSTEM_TOP.contains(&name)
    {
        return Target::System(s.into_owned());
    }
    if let Some(parent) = path.parent() {
        let parent = parent.to_string_lossy();
        if SYSTEM_PARENTS.contains(&parent.as_ref()) || HOME_PARENTS.contains(&parent.as_ref()) {
            return Target::System(s.into_owned());
        }
    }
    Target::Safe
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

/// Shell glob matching of one path component: `*`, `?`, `[...]`.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n, 0)
}

fn glob_at(p: &[char], n: &[char], depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    let (mut pi, mut ni) = (0, 0);
    let (mut star_p, mut star_n) = (usize::MAX, 0);
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star_p = pi;
                    star_n = ni;
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some((ok, len)) = class(&p[pi..], n[ni])
                        && ok
                    {
                        pi += len;
                        ni += 1;
                        continue;
                    } else if class(&p[pi..], n[ni]).is_none() && n[ni] == '[' {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        if star_p == usize::MAX {
            return false;
        }
        pi = star_p + 1;
        star_n += 1;
        ni = star_n;
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Matches a `[...]` class at the start of `p`: (matched, length of the class).
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(1), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
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
        let c = |w: &str| classify(&Word::lit(w), &cwd, home);
        assert_eq!(c("/"), Target::Root);
        assert_eq!(c("/home/u"), Target::Home);
        assert_eq!(c("/usr"), Target::System("/usr".into()));
        assert_eq!(c("/usr/lib"), Target::System("/usr/lib".into()));
        assert_eq!(c("/tmp/x"), Target::Safe);
        assert_eq!(c("node_modules"), Target::Safe);
        assert_eq!(c("../../.."), Target::Root);
    }
}
