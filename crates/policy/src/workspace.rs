//! The workspace restriction: path arguments and redirection targets must stay under the
//! workspace roots (reads may also use the extra readable roots).

use crate::rule::RuleId;
use std::path::{Path, PathBuf};

use crate::command::{Access, Class, Cmd, Finding, Origin};
use crate::paths::{Links, UNKNOWN_HOME, normalize, physical};
use crate::reasons::Reason;
use crate::words::{Seg, Word};

/// Paths one command may name before the check gives up and asks.
const MAX_CANDIDATES: usize = 256;

/// Always allowed, for reading and writing.
const EXEMPT: &[&str] = &[
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
];
/// Allowed for reading.
const EXEMPT_READ: &[&str] = &["/dev/zero", "/dev/random", "/dev/urandom"];

#[derive(Debug, Clone)]
struct Root {
    lexical: PathBuf,
    canonical: Option<PathBuf>,
}

impl Root {
    fn new(path: PathBuf) -> Root {
        let canonical = crate::disk::canonical(&path);
        Root {
            lexical: path,
            canonical,
        }
    }

    fn contains(&self, p: &Path) -> bool {
        p.starts_with(&self.lexical) || self.canonical.as_ref().is_some_and(|c| p.starts_with(c))
    }
}

/// The roots for one check.
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    write: Vec<Root>,
    read: Vec<Root>,
}

impl Roots {
    pub(crate) fn new(workspace: &[PathBuf], readable: &[PathBuf], cwd: &Path) -> Roots {
        let abs = |p: &PathBuf| normalize(cwd, p);
        let write: Vec<Root> = if workspace.is_empty() {
            vec![Root::new(normalize(Path::new("/"), cwd))]
        } else {
            workspace.iter().map(|p| Root::new(abs(p))).collect()
        };
        let mut read = write.clone();
        read.extend(readable.iter().map(|p| Root::new(abs(p))));
        Roots { write, read }
    }

    fn shown(&self) -> String {
        self.write
            .iter()
            .map(|r| r.lexical.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether `text` (from `base`) is under one of `roots`, lexically and physically (symbolic
/// links followed, dangling ones and those the line makes included).
fn inside(base: &Path, text: &str, roots: &[Root], links: &Links) -> bool {
    let lexical = normalize(base, Path::new(text));
    roots.iter().any(|r| r.contains(&lexical))
        && roots
            .iter()
            .any(|r| r.contains(&physical(base, text, links, true)))
}

/// The request's working directory must be inside the workspace (or a readable root).
pub(crate) fn check_cwd(cwd: &Path, roots: &Roots) -> Option<Finding> {
    if inside(
        Path::new("/"),
        &cwd.to_string_lossy(),
        &roots.read,
        &Links::new(),
    ) {
        return None;
    }
    Some(outside_finding(&Reason::WorkingDirectoryOutside {
        dir: &cwd.display().to_string(),
        roots: &roots.shown(),
    }))
}

fn outside_finding(reason: &Reason<'_>) -> Finding {
    Finding::deny(Class::Workspace, RuleId::WorkspaceOutside, reason.text())
}

/// Checks the paths of one command.
pub(crate) fn check(
    cmd: &Cmd,
    roots: &Roots,
    home: Option<&Path>,
    links: &Links,
) -> Option<Finding> {
    if cmd.origin == Origin::Remote {
        return None;
    }
    // Where it runs (after `cd`, `env -C`, `sudo -D`), followed through links.
    for dir in &cmd.cwd.options {
        if !inside(Path::new("/"), &dir.to_string_lossy(), &roots.read, links) {
            return Some(outside_finding(&Reason::RunsOutside {
                dir: &dir.display().to_string(),
                roots: &roots.shown(),
            }));
        }
    }
    let mut candidates: Vec<(Word, Access)> = cmd.effects.paths.clone();
    // A program run by path reads that file: `../other/run.sh`, `/tmp/payload`. Programs in
    // the system's and the user's program directories are tools, not data.
    if let Some(first) = cmd.argv().first()
        && let Some(t) = first.literal()
        && t.contains('/')
    {
        const PROGRAM_DIRS: &[&str] = &[
            "/usr/", "/bin/", "/sbin/", "/lib", "/opt/", "/nix/", "/snap/",
        ];
        let in_home_tools = home.is_some_and(|h| Path::new(&t).starts_with(h));
        if !PROGRAM_DIRS.iter().any(|d| t.starts_with(d)) && !in_home_tools && !t.starts_with('~') {
            candidates.push((first.clone(), Access::Read));
        }
    }
    // Wrappers' own paths (`strace -o /tmp/trace`, `time -o /tmp/t`).
    for (opt, v) in &cmd.unwrapped.option_values {
        let t = v.text();
        if t.starts_with('/') || t.starts_with('~') || t.starts_with("..") {
            let access = if matches!(opt.as_str(), "-o" | "--output") {
                Access::Write
            } else {
                Access::Read
            };
            candidates.push((v.clone(), access));
        }
    }
    // A relative path is only a concern when it could land outside: after `cd` out of the
    // workspace (the `cd` itself is checked) or through a symlink.
    let mut ask = None;
    if candidates.len() > MAX_CANDIDATES {
        return Some(Finding::ask(
            Class::Unresolved,
            RuleId::WorkspaceUnresolved,
            Reason::TooManyPaths {
                max: MAX_CANDIDATES,
                roots: &roots.shown(),
            }
            .text(),
        ));
    }
    for (word, access) in &candidates {
        match check_word(word, *access, cmd, roots, home, links) {
            Some(f) if f.decision == crate::Decision::Deny => return Some(f),
            Some(f) => ask = ask.or(Some(f)),
            None => {}
        }
    }
    ask
}

fn check_word(
    word: &Word,
    access: Access,
    cmd: &Cmd,
    roots: &Roots,
    home: Option<&Path>,
    links: &Links,
) -> Option<Finding> {
    let text = word.text();
    // `file:///etc/passwd` is a path; other URLs are not.
    if let Some(path) = text.strip_prefix("file://") {
        return check_word(&Word::lit(path), access, cmd, roots, home, links);
    }
    if text.contains("://") || text.is_empty() {
        return None;
    }
    if let Some((host, _)) = text.split_once(':')
        && !host.is_empty()
        && !host.contains('/')
    {
        return None; // `host:path`, `HEAD:file`.
    }
    if word.starts_dynamic() {
        let rest_has_slash = word.segs.iter().skip(1).any(|s| match s {
            Seg::Lit(t) | Seg::Glob(t) => t.contains('/'),
            _ => false,
        });
        if rest_has_slash || access == Access::Write || cmd.program().as_deref() == Some("cd") {
            return Some(Finding::ask(
                Class::Unresolved,
                RuleId::WorkspaceUnresolved,
                Reason::PathUnknown {
                    path: &text,
                    roots: &roots.shown(),
                }
                .text(),
            ));
        }
        return None;
    }
    // The static part: up to the first dynamic part; a glob stays as a name of its own, so
    // `*/../../etc` still climbs out.
    let mut path_text = String::new();
    for seg in &word.segs {
        match seg {
            Seg::Lit(t) | Seg::Glob(t) => path_text.push_str(t),
            Seg::Home => path_text
                .push_str(home.map_or(UNKNOWN_HOME, |h| h.to_str().unwrap_or(UNKNOWN_HOME))),
            Seg::Dyn(_) | Seg::Temp(_) => {
                // Keep the directory part only.
                match path_text.rfind('/') {
                    Some(i) => path_text.truncate(i + 1),
                    None => path_text.clear(),
                }
                break;
            }
        }
    }
    let absolute = path_text.starts_with('/');
    let strong = absolute
        || path_text == ".."
        || path_text.starts_with("../")
        || path_text.contains("/../")
        || path_text.ends_with("/..");
    if path_text.chars().any(char::is_whitespace)
        && !strong
        && !crate::disk::exists(Path::new(&path_text))
    {
        return None;
    }
    let bases: Vec<PathBuf> = if absolute {
        vec![PathBuf::from("/")]
    } else {
        cmd.cwd.options.clone()
    };
    for base in bases {
        let path = normalize(&base, Path::new(&path_text));
        if EXEMPT.iter().any(|e| Path::new(e) == path) || path.starts_with("/dev/fd") {
            continue;
        }
        if access == Access::Read && EXEMPT_READ.iter().any(|e| Path::new(e) == path) {
            continue;
        }
        let allowed = match access {
            Access::Write => &roots.write,
            Access::Read => &roots.read,
        };
        if inside(&base, &path_text, allowed, links) {
            continue;
        }
        let readable_only =
            access == Access::Write && inside(&base, &path_text, &roots.read, links);
        let shown = if path.starts_with(UNKNOWN_HOME) {
            text.clone()
        } else {
            path.display().to_string()
        };
        return Some(outside_finding(&Reason::PathOutside {
            path: &shown,
            roots: &roots.shown(),
            read_only: readable_only,
        }));
    }
    None
}
