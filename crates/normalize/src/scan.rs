//! A small lexical scan of a shell command: enough to know which `|` are top-level pipes.
//!
//! It understands quoting (`'…'`, `"…"`, `\x`), command substitution (`$(…)`, backticks),
//! comments, subshell parentheses, heredoc bodies and the compound commands a pipeline can hold
//! as one stage (`{ …; }`, `if … fi`, `for|while|until|select … done`, `case … esac`). It is not
//! a parser: it only has to be right about where a trailing pipeline stage starts and whether
//! the command is a list, and to say "not clean" (or "a list") when unsure.

/// What the scan found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Byte index of the last top-level, unquoted single `|`.
    pub(crate) last_pipe: Option<usize>,
    /// Byte index of the first top-level separator (`|`, `||`, `|&`, `;`, `&`, `&&`, newline).
    pub(crate) first_separator: Option<usize>,
    /// The command ended outside quotes, substitutions, comments and heredoc bodies.
    pub(crate) ended_cleanly: bool,
    /// A list separator (`;`, `&`, `&&`, `||`, newline) outside every subshell and compound
    /// command: the command is a list of pipelines, not one. Errs towards `true` (a compound
    /// command it does not recognize, a keyword it cannot place), never towards `false`.
    pub(crate) is_list: bool,
    /// Where one simple command ends and another may start, at any depth, outside quotes,
    /// substitutions and heredoc bodies: each separator and parenthesis, as (start, length).
    pub(crate) breaks: Vec<(usize, usize)>,
}

/// How a word at the start of a word changes the compound-command depth.
enum Keyword {
    /// Opens a compound command; a command may follow (`{`, `if`, `while`, `until`).
    OpensCommand,
    /// Opens a compound command; a name or word follows (`for`, `case`, `select`).
    OpensWord,
    /// A command may follow (`then`, `do`, `else`, `elif`, `!`, `time`).
    Continues,
    /// Closes a compound command (`}`, `fi`, `done`, `esac`).
    Closes,
}

/// The keyword the word starting at `i` is, and where it ends. `{` is a keyword only when a
/// blank or newline follows it, as in bash (`{a,b}` is a brace expansion).
fn keyword_at(b: &[u8], i: usize) -> Option<(Keyword, usize)> {
    let end = b[i..]
        .iter()
        .position(|c| {
            matches!(
                c,
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            )
        })
        .map_or(b.len(), |p| p + i);
    let keyword = match &b[i..end] {
        b"{" if matches!(b.get(end), Some(b' ' | b'\t' | b'\n')) => Keyword::OpensCommand,
        b"if" | b"while" | b"until" => Keyword::OpensCommand,
        b"for" | b"case" | b"select" => Keyword::OpensWord,
        b"then" | b"do" | b"else" | b"elif" | b"!" | b"time" => Keyword::Continues,
        b"}" | b"fi" | b"done" | b"esac" => Keyword::Closes,
        _ => return None,
    };
    Some((keyword, end))
}

const MAX_DEPTH: usize = 64;

struct Heredoc {
    delimiter: Vec<u8>,
    strip_tabs: bool,
}

pub(crate) fn scan(command: &str) -> Scan {
    let b = command.as_bytes();
    let mut out = Scan::default();
    let mut i = 0;
    let mut depth = 0usize;
    // Compound commands open at this point. An opener counts only where a command starts
    // (missing one makes the command a list: safe); a closer counts wherever a word starts
    // (counting a false one early makes it a list: safe too). So an error can only ever leave
    // a command as written.
    let mut compound = 0usize;
    // The depth at each open parenthesis, restored at its close: a keyword the scan misread
    // inside (`(( if ))` is arithmetic) cannot leak out of it.
    let mut compound_at_paren: Vec<usize> = Vec::new();
    let mut command_start = true;
    let mut pending: Vec<Heredoc> = Vec::new();
    let mut word_start = true;
    let sep = |out: &mut Scan, at: usize| {
        if out.first_separator.is_none() {
            out.first_separator = Some(at);
        }
    };
    let list = |out: &mut Scan, depth: usize, compound: usize| {
        if depth == 0 && compound == 0 {
            out.is_list = true;
        }
    };
    while i < b.len() {
        let c = b[i];
        if word_start && !matches!(c, b' ' | b'\t') {
            let starts_command = std::mem::replace(&mut command_start, false);
            match keyword_at(b, i) {
                Some((Keyword::OpensCommand, end)) if starts_command => {
                    compound += 1;
                    command_start = true;
                    i = end;
                    continue;
                }
                Some((Keyword::OpensWord, end)) if starts_command => {
                    compound += 1;
                    i = end;
                    word_start = false;
                    continue;
                }
                Some((Keyword::Continues, end)) if starts_command => {
                    command_start = true;
                    i = end;
                    continue;
                }
                Some((Keyword::Closes, end)) => {
                    compound = compound.saturating_sub(1);
                    i = end;
                    word_start = false;
                    continue;
                }
                _ => {}
            }
        }
        match c {
            b'\\' => {
                i += 2;
                word_start = false;
                continue;
            }
            b'\'' => match memchr_from(b, i + 1, b'\'') {
                Some(end) => i = end + 1,
                None => return out,
            },
            b'"' => match skip_double(b, i + 1, 0) {
                Some(end) => i = end,
                None => return out,
            },
            b'`' => match skip_backtick(b, i + 1) {
                Some(end) => i = end,
                None => return out,
            },
            b'$' if b.get(i + 1) == Some(&b'(') => match skip_paren(b, i + 2, 0) {
                Some(end) => i = end,
                None => return out,
            },
            b'#' if word_start => {
                // A comment runs to the end of the line; the newline stays significant.
                match memchr_from(b, i, b'\n') {
                    Some(nl) => i = nl,
                    None => return out,
                }
                continue;
            }
            b'(' => {
                out.breaks.push((i, 1));
                depth += 1;
                compound_at_paren.push(compound);
                i += 1;
                command_start = true;
            }
            b')' => {
                out.breaks.push((i, 1));
                depth = depth.saturating_sub(1);
                if let Some(at) = compound_at_paren.pop() {
                    compound = at;
                }
                i += 1;
            }
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                let (doc, end) = read_heredoc_word(b, i + 2);
                if let Some(doc) = doc {
                    pending.push(doc);
                }
                i = end;
            }
            b'<' if b.get(i + 1) == Some(&b'<') => i += 3,
            b'\n' => {
                out.breaks.push((i, 1));
                if depth == 0 {
                    sep(&mut out, i);
                }
                list(&mut out, depth, compound);
                i += 1;
                for doc in pending.drain(..) {
                    match skip_heredoc_body(b, i, &doc) {
                        Some(end) => i = end,
                        None => return out,
                    }
                }
                word_start = true;
                command_start = true;
                continue;
            }
            b'|' => {
                let next = b.get(i + 1).copied();
                let clobber = i > 0 && b[i - 1] == b'>';
                if depth == 0 && !clobber {
                    sep(&mut out, i);
                    if next != Some(b'|') && next != Some(b'&') {
                        out.last_pipe = Some(i);
                    }
                }
                if next == Some(b'|') {
                    list(&mut out, depth, compound);
                }
                command_start = !clobber;
                let len = if matches!(next, Some(b'|' | b'&')) {
                    2
                } else {
                    1
                };
                if !clobber {
                    out.breaks.push((i, len));
                }
                i += len;
                word_start = true;
                continue;
            }
            b';' | b'&' => {
                let redirection = c == b'&' && i > 0 && matches!(b[i - 1], b'>' | b'<');
                if !redirection {
                    out.breaks.push((i, 1));
                    if depth == 0 {
                        sep(&mut out, i);
                    }
                    list(&mut out, depth, compound);
                }
                // After `;;`, `;&` or `;;&` a case pattern comes, not a command.
                let case_end = c == b';' && matches!(b.get(i + 1), Some(b';' | b'&'))
                    || c == b'&' && i > 0 && b[i - 1] == b';';
                if c == b';' && b.get(i + 1) == Some(&b';') {
                    i += 1;
                }
                command_start = !redirection && !case_end;
                i += 1;
                word_start = true;
                continue;
            }
            _ => i += 1,
        }
        word_start = matches!(c, b' ' | b'\t' | b'(' | b')');
    }
    out.ended_cleanly = pending.is_empty();
    out
}

fn memchr_from(b: &[u8], from: usize, needle: u8) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&c| c == needle)
        .map(|p| p + from)
}

/// From just after an opening `"`; returns the index after the closing `"`.
fn skip_double(b: &[u8], mut i: usize, depth: usize) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'`' => i = skip_backtick(b, i + 1)?,
            b'$' if b.get(i + 1) == Some(&b'(') => i = skip_paren(b, i + 2, depth + 1)?,
            _ => i += 1,
        }
    }
    None
}

/// From just after an opening backtick; returns the index after the closing one.
fn skip_backtick(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// From just after `$(`; returns the index after the matching `)`.
fn skip_paren(b: &[u8], mut i: usize, depth: usize) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut open = 1usize;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' => i = memchr_from(b, i + 1, b'\'')? + 1,
            b'"' => i = skip_double(b, i + 1, depth + 1)?,
            b'`' => i = skip_backtick(b, i + 1)?,
            b'$' if b.get(i + 1) == Some(&b'(') => i = skip_paren(b, i + 2, depth + 1)?,
            b'(' => {
                open += 1;
                i += 1;
            }
            b')' => {
                open -= 1;
                i += 1;
                if open == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// After `<<`: reads `-`, blanks and the delimiter word. Returns the heredoc (if a word was
/// found) and the index after the word.
fn read_heredoc_word(b: &[u8], mut i: usize) -> (Option<Heredoc>, usize) {
    let strip_tabs = b.get(i) == Some(&b'-');
    if strip_tabs {
        i += 1;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let mut delimiter = Vec::new();
    while let Some(&c) = b.get(i) {
        match c {
            b'\'' | b'"' => {
                let Some(end) = memchr_from(b, i + 1, c) else {
                    return (None, b.len());
                };
                delimiter.extend_from_slice(&b[i + 1..end]);
                i = end + 1;
            }
            b'\\' => {
                if let Some(&n) = b.get(i + 1) {
                    delimiter.push(n);
                }
                i += 2;
            }
            b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'<' | b'>' | b'(' | b')' => break,
            _ => {
                delimiter.push(c);
                i += 1;
            }
        }
    }
    let doc = (!delimiter.is_empty()).then_some(Heredoc {
        delimiter,
        strip_tabs,
    });
    (doc, i.min(b.len()))
}

/// From the start of a heredoc body; returns the index after its delimiter line.
fn skip_heredoc_body(b: &[u8], mut i: usize, doc: &Heredoc) -> Option<usize> {
    while i < b.len() {
        let end = memchr_from(b, i, b'\n').unwrap_or(b.len());
        let mut line = &b[i..end];
        if doc.strip_tabs {
            while let [b'\t', rest @ ..] = line {
                line = rest;
            }
        }
        if line == doc.delimiter.as_slice() {
            return Some((end + 1).min(b.len()));
        }
        i = end + 1;
    }
    None
}
