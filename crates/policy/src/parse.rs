//! The tree-sitter parser, built once per thread.

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Parses `text` as bash; `None` when no parser is available or parsing gave up.
///
/// The parser sees every non-ASCII byte as `x`: tree-sitter-bash 0.25's scanner hands code
/// points to `isdigit` and its kin, undefined past 255 — random Unicode crashed the process
/// (SIGSEGV in `scan`, found by the property tests one run in ten). Bash itself reads those
/// bytes as word characters, as it reads `x`, and byte offsets stay the same, so the tree
/// matches `text` (its words are sliced from `text` with checked ranges).
pub(crate) fn parse(text: &str) -> Option<Tree> {
    let ascii: String;
    let text = if text.is_ascii() {
        text
    } else {
        ascii = text
            .bytes()
            .map(|b| if b.is_ascii() { char::from(b) } else { 'x' })
            .collect();
        &ascii
    };
    PARSER.with(|cell| {
        let mut guard = cell.try_borrow_mut().ok()?;
        let parser = guard.as_mut()?;
        parser.parse(text, None)
    })
}

/// The script in the spelling the parser reads as bash does: continued lines joined
/// ([`join_continued_lines`]) and the case-toggling operators `${x~~}` / `${x~}`, which
/// tree-sitter-bash does not know (it drops the word), spelled as `@` operators it does
/// know, `${x@K}` / `${x@k}`, which the word model reads as the toggles. (Bash's own `@K` and
/// `@k` quote a value: read as toggles, a command they build may look like another program,
/// and so be judged more strictly, never less.)
pub(crate) fn for_parser(text: &str) -> std::borrow::Cow<'_, str> {
    static TOGGLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\$\{(#?[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?)(~~?)\}")
            .expect("a valid pattern")
    });
    let joined = join_continued_lines(text);
    if !joined.contains('~') || !TOGGLE.is_match(&joined) {
        return joined;
    }
    let rewritten = TOGGLE.replace_all(&joined, |c: &regex::Captures<'_>| {
        let op = if &c[2] == "~~" { "@K" } else { "@k" };
        format!("${{{}{op}}}", &c[1])
    });
    std::borrow::Cow::Owned(rewritten.into_owned())
}

/// The script as bash reads it after joining continued lines: a backslash before a newline,
/// outside single quotes and comments, is removed with the newline, even inside a word
/// (`r\⏎m -rf ~` runs `rm`). The parser would read it as two words.
pub(crate) fn join_continued_lines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\\n") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut single, mut double, mut word_start) = (false, false, true);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(&next) => {
                    out.push(c);
                    out.push(next);
                    chars.next();
                    word_start = false;
                    continue;
                }
                None => {}
            },
            '#' if !single && !double && word_start => {
                // A comment runs to the end of the line, backslashes and all.
                out.push(c);
                for c in chars.by_ref() {
                    out.push(c);
                    if c == '\n' {
                        break;
                    }
                }
                word_start = true;
                continue;
            }
            _ => {}
        }
        word_start =
            !single && !double && (c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'));
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::join_continued_lines;

    #[test]
    fn continued_lines_join_as_bash_joins_them() {
        assert_eq!(join_continued_lines("r\\\nm -rf ~"), "rm -rf ~");
        assert_eq!(join_continued_lines("echo 'a\\\nb'"), "echo 'a\\\nb'");
        assert_eq!(join_continued_lines("echo \"a\\\nb\""), "echo \"ab\"");
        assert_eq!(join_continued_lines("echo a\\\\\nb"), "echo a\\\\\nb");
        assert_eq!(join_continued_lines("# x \\\nrm -rf /"), "# x \\\nrm -rf /");
    }
}
