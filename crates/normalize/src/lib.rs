//! Pure command normalization: no IO, never panics, every input gives an answer.
//!
//! - [`normalize`] turns a trailing `| head -n N` / `| tail -N` into a structured [`Limit`], so
//!   the command runs to completion (no SIGPIPE, true exit code) and the limit is applied to
//!   its captured output instead — only when the command is one pipeline, so that the limit
//!   applies to all of its output (`a && b | tail -2` prints all of `a`: it runs as written).
//! - [`apply_head_tail`] applies such limits to text; [`merge_limits`] combines explicit and
//!   extracted ones (explicit wins).
//! - [`is_diff_command`] tells whether a command prints a diff.
//!
//! ```
//! use agent_exec_normalize::{normalize, Limit};
//!
//! let n = normalize("git log   |   head -n 10");
//! assert_eq!(n.command, "git log");
//! assert_eq!(n.limit, Some(Limit::Head(10)));
//! assert_eq!(normalize("cat f | head").limit, None);
//! ```
#![deny(missing_docs)]

mod quote;

pub use quote::{assignment_word, shell_word, single_quoted};
mod scan;

use scan::{Scan, scan};

/// A line limit extracted from a trailing pipeline stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Keep the first N lines.
    Head(usize),
    /// Keep the last N lines.
    Tail(usize),
}

/// The result of [`normalize`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The command to run: the input unchanged, or without its trailing head/tail stage and
    /// with surrounding whitespace trimmed.
    pub command: String,
    /// The extracted limit, if any.
    pub limit: Option<Limit>,
}

/// Removes a trailing, top-level, unquoted `| head -n N`, `| head -N`, `| tail -n N` or
/// `| tail -N` (N ≥ 1) and returns it as a [`Limit`]. Anything else comes back byte for byte.
///
/// The command must be one pipeline, whose whole output the stage reads: in a list
/// (`a; b | tail -2`, `a && b | head`, `a || b | tail`, lines, `a & b | tail`) the stage reads
/// only the last pipeline's output, so the command is left to run as written. Compound commands
/// are one stage (`{ a; b; } | tail -2`, `for …; do …; done | head -3`, subshells).
pub fn normalize(command: &str) -> Normalized {
    let unchanged = || Normalized {
        command: command.to_owned(),
        limit: None,
    };
    let Scan {
        last_pipe,
        ended_cleanly,
        is_list,
        ..
    } = scan(command);
    let Some(pipe) = last_pipe else {
        return unchanged();
    };
    if !ended_cleanly || is_list {
        return unchanged();
    }
    let Some(limit) = parse_stage(&command[pipe + 1..]) else {
        return unchanged();
    };
    let rest = command[..pipe].trim();
    if rest.is_empty() || rest.ends_with(['|', '&', ';']) && !rest.ends_with("\\|") {
        return unchanged();
    }
    Normalized {
        command: rest.to_owned(),
        limit: Some(limit),
    }
}

/// Parses `head -n N`, `head -N`, `tail -n N`, `tail -N` (surrounded by blanks only).
fn parse_stage(stage: &str) -> Option<Limit> {
    let words: Vec<&str> = stage.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
    let (name, count) = match words.as_slice() {
        [name, "-n", n] => (*name, *n),
        [name, flag] => (*name, flag.strip_prefix('-')?),
        _ => return None,
    };
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: usize = count.parse().ok().filter(|&n| n >= 1)?;
    match name {
        "head" => Some(Limit::Head(n)),
        "tail" => Some(Limit::Tail(n)),
        _ => None,
    }
}

/// Combines explicit limits with one extracted from the command: explicit values win.
pub fn merge_limits(
    head: Option<usize>,
    tail: Option<usize>,
    extracted: Option<Limit>,
) -> (Option<usize>, Option<usize>) {
    match extracted {
        Some(Limit::Head(n)) => (head.or(Some(n)), tail),
        Some(Limit::Tail(n)) => (head, tail.or(Some(n))),
        None => (head, tail),
    }
}

/// Keeps the first `head` lines, then the last `tail` lines of those.
///
/// A final newline is kept when the last line of the text is kept.
pub fn apply_head_tail(text: &str, head: Option<usize>, tail: Option<usize>) -> String {
    if text.is_empty() {
        return String::new();
    }
    let trailing = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = body.split('\n').collect();
    let end = head.map_or(lines.len(), |h| h.min(lines.len()));
    let start = tail.map_or(0, |t| end.saturating_sub(t));
    let mut out = lines[start..end].join("\n");
    if trailing && end == lines.len() && end > start {
        out.push('\n');
    }
    out
}

/// The simple commands of a command line, in order and at any depth — a list's, a pipeline's
/// stages, a subshell's — each as its text (keywords such as `then` and `do` left at their
/// start): split at every separator and parenthesis outside quotes, substitutions and heredoc
/// bodies. Not a parser: enough to tell which program each runs.
///
/// ```
/// assert_eq!(
///     agent_exec_normalize::simple_commands(r#"(cd x && grep -E "a|b" f) 2>&1 | tee log"#),
///     ["cd x", r#"grep -E "a|b" f"#, "2>&1", "tee log"]
/// );
/// ```
pub fn simple_commands(command: &str) -> Vec<&str> {
    let mut commands = Vec::new();
    let mut from = 0;
    let breaks = scan(command).breaks;
    for (at, len) in breaks.into_iter().chain([(command.len(), 0)]) {
        let part = command[from..at].trim();
        if !part.is_empty() {
            commands.push(part);
        }
        from = at + len;
    }
    commands
}

/// Whether the first pipeline stage prints a diff: `git diff|show|whatchanged`,
/// `git log … -p`, or `diff …`.
pub fn is_diff_command(command: &str) -> bool {
    let first = &command[..scan(command).first_separator.unwrap_or(command.len())];
    let mut words = first
        .split_whitespace()
        .skip_while(|w| is_assignment(w))
        .peekable();
    match words.next() {
        Some("diff") => true,
        Some("git") => {
            // Skip git's global options (`-C dir`, `-c k=v`, `--no-pager`, …).
            let mut sub = None;
            while let Some(w) = words.next() {
                match w {
                    "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => {
                        words.next();
                    }
                    w if w.starts_with('-') => {}
                    w => {
                        sub = Some(w);
                        break;
                    }
                }
            }
            match sub {
                Some("diff" | "show" | "whatchanged") => true,
                Some("log") => words.any(|w| w == "-p" || w == "--patch" || w == "-u"),
                _ => false,
            }
        }
        _ => false,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.as_bytes()[0].is_ascii_digit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(c: &str) -> (String, Option<Limit>) {
        let r = normalize(c);
        (r.command, r.limit)
    }

    #[test]
    fn strips_the_documented_forms() {
        assert_eq!(
            n("ls -la | head -n 50"),
            ("ls -la".into(), Some(Limit::Head(50)))
        );
        assert_eq!(
            n("cat file.txt | head -20"),
            ("cat file.txt".into(), Some(Limit::Head(20)))
        );
        assert_eq!(
            n("dmesg | tail -n 100"),
            ("dmesg".into(), Some(Limit::Tail(100)))
        );
        assert_eq!(
            n("journalctl | tail -50"),
            ("journalctl".into(), Some(Limit::Tail(50)))
        );
        assert_eq!(
            n("git log   |   head -n 10"),
            ("git log".into(), Some(Limit::Head(10)))
        );
        assert_eq!(n("  ls | head -n 5  "), ("ls".into(), Some(Limit::Head(5))));
    }

    #[test]
    fn leaves_everything_else_unchanged() {
        for c in [
            "cat f | head -n 10 | grep foo",
            "cat f | head",
            "cat f | head -c 100",
            "tail -f log | tail -f",
            "cat f | tail -n +5",
            "echo 'a | head -n 5'",
            "echo \"a | head -n 5\"",
            "ls # | head -n 5",
            "echo $(ls | head -n 5)",
            "echo `ls | head -n 5`",
            "echo a \\| head -n 5",
            "cat <<EOF\nx | head -n 5\nEOF",
            "cat f | head -n 0",
            "a || head -n 5",
            "ls |& head -n 5",
            "\tindented\tcommand ",
            "cat <<-EOF\n\tbody\n\tEOF",
            "| head -n 5",
        ] {
            assert_eq!(n(c), (c.to_owned(), None), "{c:?}");
        }
    }

    #[test]
    fn heredocs_are_skipped() {
        assert_eq!(
            n("cat <<EOF | grep x\nbody\nEOF\n"),
            ("cat <<EOF | grep x\nbody\nEOF\n".into(), None)
        );
        // The heredoc's line and the next are a list: the tail reads only `ls`.
        assert_eq!(
            n("cat <<'EOF'\nbody | x\nEOF\nls | tail -3"),
            ("cat <<'EOF'\nbody | x\nEOF\nls | tail -3".into(), None)
        );
        assert_eq!(
            n("{ cat <<'EOF'\nbody; x\nEOF\nls; } | tail -3"),
            (
                "{ cat <<'EOF'\nbody; x\nEOF\nls; }".into(),
                Some(Limit::Tail(3))
            )
        );
    }

    #[test]
    fn a_list_runs_as_written() {
        // The stage reads only the last pipeline's output: extracting it would cut the rest.
        for c in [
            "echo x && seq 10 | tail -2",
            "a; b | head -3",
            "a || b | tail -2",
            "a & b | tail -2",
            "a\nb | tail -2",
            "a;b | tail -2",
            "{ a; }; b | tail -2",
            "(a); b | tail -2",
            "(a;b) && c | tail -2",
            "for i in 1 2; do a; done; b | tail -2",
            "if a; then b; fi && c | head -1",
            "case x in a) b;; esac; c | head -1",
            // A misread keyword inside parentheses (arithmetic) does not leak out of them.
            "(( if )); a; b | tail -2",
            // A word that is not a keyword where it stands opens nothing.
            "echo { ; b | tail -2",
            "echo if; b | tail -2",
            "x=1 { ; b | tail -2",
            "echo {a,b}; b | tail -2",
            // A closer ends the group wherever it stands, so a list after it is seen.
            "{ a; b;}; c | tail -2",
            "{ a; b\n}\nc | tail -2",
            "case x in a) b;; if) c;; esac; d | tail -2",
        ] {
            assert_eq!(n(c), (c.to_owned(), None), "{c:?}");
        }
    }

    #[test]
    fn one_pipeline_with_compound_stages_is_extracted() {
        for (c, command) in [
            ("a 2>&1 | tail -2", "a 2>&1"),
            ("a |& b | tail -2", "a |& b"),
            ("{ echo x; seq 10; } | tail -2", "{ echo x; seq 10; }"),
            (
                "{ make; make test; } 2>&1 | tail -2",
                "{ make; make test; } 2>&1",
            ),
            ("(cd d && make) | tail -2", "(cd d && make)"),
            (
                "for f in *; do wc -l $f; done | tail -2",
                "for f in *; do wc -l $f; done",
            ),
            (
                "for ((i=0;i<3;i++)); do a; done | tail -2",
                "for ((i=0;i<3;i++)); do a; done",
            ),
            (
                "while read l; do a; done < f | tail -2",
                "while read l; do a; done < f",
            ),
            ("until a; do b; done | tail -2", "until a; do b; done"),
            (
                "if a; then b; elif c; then d; else e; fi | tail -2",
                "if a; then b; elif c; then d; else e; fi",
            ),
            (
                "case $x in a) b;; c|d) e;& f) g;;& esac | tail -2",
                "case $x in a) b;; c|d) e;& f) g;;& esac",
            ),
            ("! { a; b; } | tail -2", "! { a; b; }"),
            ("time { a; b; } | tail -2", "time { a; b; }"),
            ("{\na\nb\n} | tail -2", "{\na\nb\n}"),
            ("a | { b; c; } | tail -2", "a | { b; c; }"),
            ("echo $(a; b) | tail -2", "echo $(a; b)"),
            ("echo \"a; b\" 'c && d' | tail -2", "echo \"a; b\" 'c && d'"),
            ("a '#;' b#c\\;d | tail -2", "a '#;' b#c\\;d"),
        ] {
            assert_eq!(n(c), (command.to_owned(), Some(Limit::Tail(2))), "{c:?}");
        }
    }

    #[test]
    fn apply_head_tail_cases() {
        let t = "line1\nline2\nline3\nline4\nline5";
        assert_eq!(apply_head_tail(t, Some(2), None), "line1\nline2");
        assert_eq!(apply_head_tail(t, None, Some(2)), "line4\nline5");
        assert_eq!(apply_head_tail(t, Some(4), Some(2)), "line3\nline4");
        assert_eq!(apply_head_tail(t, Some(10), None), t);
        assert_eq!(apply_head_tail("", Some(1), Some(1)), "");
        assert_eq!(apply_head_tail("a\nb\n", None, Some(1)), "b\n");
    }

    #[test]
    fn explicit_limits_win() {
        assert_eq!(
            merge_limits(Some(3), None, Some(Limit::Head(10))),
            (Some(3), None)
        );
        assert_eq!(
            merge_limits(None, None, Some(Limit::Tail(10))),
            (None, Some(10))
        );
        assert_eq!(
            merge_limits(Some(3), None, Some(Limit::Tail(10))),
            (Some(3), Some(10))
        );
    }

    #[test]
    fn diff_commands() {
        for c in [
            "git diff",
            "git show HEAD",
            "git whatchanged",
            "git log -p -3",
            "diff a b",
            "git --no-pager diff",
            "GIT_PAGER=cat git diff | cat",
            "git -C repo diff",
        ] {
            assert!(is_diff_command(c), "{c}");
        }
        for c in [
            "git difftool",
            "git log",
            "ls diff",
            "echo git diff",
            "git status; git diff",
        ] {
            assert!(!is_diff_command(c), "{c}");
        }
    }
}
