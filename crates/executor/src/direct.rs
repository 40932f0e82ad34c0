//! Running a plain command without a shell.
//!
//! `bash -c 'ls -la src'` costs a bash start (about as much as the command itself for small
//! ones) only to split three words and exec `ls`. When a command line is nothing but plain
//! words — no quotes, expansions, globs, redirections, operators or assignments — and its first
//! word is an executable on `PATH` rather than a shell builtin or keyword, the executor runs it
//! directly, as GNU make does for simple recipe lines. Anything else, or any failure to start it
//! that way, goes through the shell as usual, so error messages and exit codes (127 "command not
//! found", 126 "Permission denied") stay the shell's.

use std::path::{Path, PathBuf};

/// Builtins and keywords of bash: these must run in the shell.
const SHELL_WORDS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "case",
    "esac",
    "for",
    "select",
    "while",
    "until",
    "do",
    "done",
    "in",
    "function",
    "time",
    "{",
    "}",
    "!",
    "[[",
    "]]",
    "coproc",
];

fn is_plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_' | b'.' | b'/' | b',' | b'+' | b'@' | b'%' | b':' | b'='
        )
}

/// The words of a plain command line, or `None` when a shell is needed to run it.
pub(crate) fn plain_words(command: &str) -> Option<Vec<&str>> {
    let words: Vec<&str> = command
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    let first = *words.first()?;
    if !words.iter().all(|w| w.bytes().all(is_plain_byte)) || first.contains('=') {
        return None;
    }
    // `true` and `false` without arguments behave the same as builtins and as programs.
    let same_either_way = words.len() == 1 && (first == "true" || first == "false");
    if SHELL_WORDS.contains(&first) || (!same_either_way && (first == "true" || first == "false")) {
        return None;
    }
    Some(words)
}

/// Where `program` would be found, as `execvp` looks it up in `path`.
pub(crate) fn resolve(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_external_commands_skip_the_shell() {
        assert_eq!(plain_words("ls -la src"), Some(vec!["ls", "-la", "src"]));
        assert_eq!(plain_words("true"), Some(vec!["true"]));
        assert_eq!(
            plain_words("git status --short"),
            Some(vec!["git", "status", "--short"])
        );
        for c in [
            "true --help",
            "echo hi",
            "cd /tmp",
            "ls *.rs",
            "ls ~",
            "ls $HOME",
            "ls 'a b'",
            "ls | wc",
            "ls > f",
            "a=1 ls",
            "ls; pwd",
            "ls && pwd",
            "ls &",
            "ls {a,b}",
            "ls \\x",
            "ls #c",
            "",
            "   ",
            "exit 3",
            "ls\nls",
            "ls (x)",
        ] {
            assert_eq!(plain_words(c), None, "{c:?}");
        }
    }
}
