//! Words as the shell would see them: quote removal, escapes, brace expansion, `~` and the
//! variables whose value is known statically. What cannot be known stays marked as dynamic.

use std::collections::HashMap;

use tree_sitter::Node;

/// Upper bound on the words one brace expansion or one field split may produce; past it the
/// rest counts as one word only known at run time (so a deletion of it asks).
const MAX_BRACE_WORDS: usize = 256;
/// What a substitution listing every process ID (`$(ps -e -o pid=)`) stands for: a glob that
/// matches every PID, quoted or not. A NUL never occurs in real output.
pub(crate) const EVERY_PID: &str = "\0every-pid";

/// Marks a substitution that lists paths under a start (`$(git ls-files)`): followed by the
/// start. A NUL never occurs in real output.
pub(crate) const PATHS_UNDER: &str = "\0paths-under:";

/// Values longer than this are not transformed by `${x%…}` and the like (they are unknown).
const MAX_TRANSFORMED: usize = 4096;
/// A variable's value longer than this is kept as unknown: doubling a value on each
/// assignment (`a=$a$a`) would otherwise grow without bound.
pub(crate) const MAX_VALUE: usize = 64 * 1024;
/// Recursion bound for nested word nodes (strings in expansions in strings ...).
const MAX_WORD_DEPTH: u32 = 64;

/// One piece of a resolved word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    /// Literal text (quotes removed).
    Lit(String),
    /// Unquoted glob characters (`*`, `?`, `[`).
    Glob(String),
    /// A part only known at run time; holds its source text.
    Dyn(String),
    /// The home directory, when the caller did not say where it is.
    Home,
    /// A fresh temporary path only known at run time (`$(mktemp -d)`, `${TMPDIR:-/tmp}`);
    /// holds its source text. Dynamic, but never `/`, the home directory or a system
    /// directory — unless it comes out empty (`mktemp` failed), which [`crate::paths::classify`]
    /// allows for.
    Temp(String),
}

/// A word after static expansion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) segs: Vec<Seg>,
}

impl Word {
    /// A fully literal word.
    pub(crate) fn lit(text: &str) -> Word {
        let mut w = Word::default();
        w.push_lit(text);
        w
    }

    /// A word known only at run time, shown as `source`.
    pub(crate) fn dynamic(source: &str) -> Word {
        Word {
            segs: vec![Seg::Dyn(source.to_owned())],
        }
    }

    fn push_lit(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Seg::Lit(last)) = self.segs.last_mut() {
            last.push_str(text);
        } else {
            self.segs.push(Seg::Lit(text.to_owned()));
        }
    }

    fn push_glob(&mut self, c: char) {
        if let Some(Seg::Glob(last)) = self.segs.last_mut() {
            last.push(c);
        } else {
            self.segs.push(Seg::Glob(c.to_string()));
        }
    }

    /// The text of the word as resolved; dynamic parts show their source.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(s) | Seg::Glob(s) | Seg::Dyn(s) | Seg::Temp(s) => out.push_str(s),
                Seg::Home => out.push('~'),
            }
        }
        out
    }

    /// The literal value when nothing in the word is dynamic (glob characters included).
    pub(crate) fn literal(&self) -> Option<String> {
        if self.is_static() {
            Some(self.text())
        } else {
            None
        }
    }

    /// True when no part of the word depends on run-time state.
    pub(crate) fn is_static(&self) -> bool {
        !self
            .segs
            .iter()
            .any(|s| matches!(s, Seg::Dyn(_) | Seg::Temp(_)))
    }

    /// True when the word begins with a dynamic part (it could be anything, `/` included,
    /// unless it is a temporary path: see [`Word::starts_temp`]).
    pub(crate) fn starts_dynamic(&self) -> bool {
        matches!(self.segs.first(), Some(Seg::Dyn(_) | Seg::Temp(_)))
    }

    /// True when the word begins with a fresh temporary path and never climbs out of it.
    pub(crate) fn starts_temp(&self) -> bool {
        matches!(self.segs.first(), Some(Seg::Temp(_)))
            && !self.segs.iter().skip(1).any(|s| match s {
                Seg::Lit(t) | Seg::Glob(t) => t.contains(".."),
                _ => true,
            })
    }

    /// True when the word contains unquoted glob characters.
    pub(crate) fn has_glob(&self) -> bool {
        self.segs.iter().any(|s| matches!(s, Seg::Glob(_)))
    }

    /// True when the literal text equals `s`.
    pub(crate) fn is(&self, s: &str) -> bool {
        self.is_static() && self.text() == s
    }

    /// The word without a literal `prefix` (which may span literal parts: `of` `=/x`).
    pub(crate) fn strip_literal_prefix(&self, prefix: &str) -> Option<Word> {
        let mut rest = prefix;
        let mut out = Word::default();
        let mut segs = self.segs.iter();
        while !rest.is_empty() {
            match segs.next()? {
                Seg::Lit(t) => {
                    if let Some(after) = t.strip_prefix(rest) {
                        out.push_lit(after);
                        rest = "";
                    } else {
                        rest = rest.strip_prefix(t.as_str())?;
                    }
                }
                _ => return None,
            }
        }
        out.segs.extend(segs.cloned());
        Some(out)
    }

    /// True when the word is static and starts with `prefix`.
    pub(crate) fn starts_with(&self, prefix: &str) -> bool {
        self.is_static() && self.text().starts_with(prefix)
    }
}

/// What a variable is known to hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    /// Assigned, with a value only known at run time.
    Unknown,
    /// A string.
    Str(String),
    /// An array (`a=(x y)`), or the positional parameters (`set -- x y`, under `@`).
    List(Vec<String>),
    /// A fresh temporary path (`$(mktemp -d)`).
    Temp,
    /// A glob pattern a `for` loop walks (`for f in /*`): its words are the matches, so the
    /// glob characters stay globs even inside quotes.
    Glob(String),
}

/// Variables assigned earlier on the line. The positional parameters live under `@`.
pub(crate) type Vars = HashMap<String, Val>;

/// The default field separators (`$IFS` when the line does not set it).
const DEFAULT_IFS: &str = " \t\n";

/// Everything word resolution needs to know about the shell state.
pub(crate) struct Env<'a> {
    /// The home directory, if known.
    pub(crate) home: Option<&'a str>,
    /// `$PWD` when the working directory is known exactly.
    pub(crate) pwd: Option<&'a str>,
    /// `$OLDPWD` when the previous directory is known exactly.
    pub(crate) oldpwd: Option<&'a str>,
    /// What each command substitution earlier on the line prints, by source text, when known
    /// (`$(echo rm)`, `$(printf '%s' /)`).
    pub(crate) subs: &'a HashMap<String, Option<String>>,
    /// Variables assigned earlier on the line.
    pub(crate) vars: &'a Vars,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Q {
    /// Unquoted source text: subject to brace expansion, tilde and globbing.
    Bare,
    /// Quoted or escaped: literal.
    Quoted,
    /// The value of an unquoted expansion: globbing applies, brace expansion does not.
    Expanded,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ch(char, Q),
    Dyn(String),
    Home,
    Temp(String),
    /// Where an unquoted expansion stood: the word is subject to field splitting, and
    /// vanishes when nothing else is in it (`$EMPTY`).
    Mark,
    /// A field boundary inside quotes: between the elements of `"${a[@]}"` and `"$@"`.
    Break,
}

/// Resolves one argument node to the words the shell would pass (brace expansion can make
/// several).
pub(crate) fn resolve(node: Node<'_>, src: &str, env: &Env<'_>) -> Vec<Word> {
    let mut toks = Vec::new();
    tokens(node, src, env, &mut toks, 0);
    finish(toks, env)
}

fn finish(toks: Vec<Tok>, env: &Env<'_>) -> Vec<Word> {
    let mut expanded = Vec::new();
    brace_expand(toks, &mut expanded);
    let ifs = match env.vars.get("IFS") {
        Some(Val::Str(s)) => s.clone(),
        _ => DEFAULT_IFS.to_owned(),
    };
    expanded
        .into_iter()
        .flat_map(|t| split_fields(tilde(t, env), &ifs))
        .map(to_word)
        .collect()
}

/// Field splitting: the values of unquoted expansions split on `$IFS` whitespace, quoted
/// array elements stay apart, and a word that was only an empty expansion disappears.
fn split_fields(toks: Vec<Tok>, ifs: &str) -> Vec<Vec<Tok>> {
    let splits = toks
        .iter()
        .any(|t| matches!(t, Tok::Mark | Tok::Break | Tok::Ch(_, Q::Expanded)));
    if !splits {
        return vec![toks];
    }
    let mut out = Vec::new();
    let mut field = Vec::new();
    let mut has = false;
    for t in toks {
        match t {
            Tok::Ch(c, Q::Expanded) if ifs.contains(c) => {
                if has {
                    out.push(std::mem::take(&mut field));
                    has = false;
                }
            }
            Tok::Break => {
                out.push(std::mem::take(&mut field));
                has = false;
            }
            Tok::Mark => {}
            other => {
                field.push(other);
                has = true;
            }
        }
        if out.len() >= MAX_BRACE_WORDS {
            // Past the bound, one field only known at run time stands for the rest.
            out.push(vec![Tok::Dyn("…".into())]);
            return out;
        }
    }
    if has {
        out.push(field);
    }
    out
}

fn node_text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn tokens(node: Node<'_>, src: &str, env: &Env<'_>, out: &mut Vec<Tok>, depth: u32) {
    let text = node_text(node, src);
    if depth > MAX_WORD_DEPTH {
        out.push(Tok::Dyn(text.to_owned()));
        return;
    }
    match node.kind() {
        "raw_string" => {
            let inner = text.strip_prefix('\'').unwrap_or(text);
            let inner = inner.strip_suffix('\'').unwrap_or(inner);
            out.extend(inner.chars().map(|c| Tok::Ch(c, Q::Quoted)));
        }
        "ansi_c_string" => {
            let inner = text.strip_prefix("$'").unwrap_or(text);
            let inner = inner.strip_suffix('\'').unwrap_or(inner);
            out.extend(ansi_c(inner).chars().map(|c| Tok::Ch(c, Q::Quoted)));
        }
        "string" => double_quoted(node, src, env, out, depth),
        "translated_string" | "concatenation" => {
            let mut pos = node.start_byte();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.start_byte() > pos {
                    let before = src.get(pos..child.start_byte()).unwrap_or("");
                    // `$"…"` (a translated string) is the string: the `$` is not text.
                    let before = match child.kind() {
                        "string" if !before.ends_with("\\$") => {
                            before.strip_suffix('$').unwrap_or(before)
                        }
                        _ => before,
                    };
                    bare(before, out);
                }
                tokens(child, src, env, out, depth + 1);
                pos = child.end_byte();
            }
            if node.end_byte() > pos {
                let rest = src.get(pos..node.end_byte()).unwrap_or("");
                // `$"..."` leaves a `$` before its string child; nothing else is literal.
                if node.kind() == "concatenation" {
                    bare(rest, out);
                }
            }
        }
        "simple_expansion" | "expansion" => expansion(text, env, out, Q::Expanded),
        "command_substitution" => command_substitution(text, env, out, Q::Expanded),
        "arithmetic_expansion" => {
            let expr = text
                .strip_prefix("$((")
                .and_then(|t| t.strip_suffix("))"))
                .or_else(|| text.strip_prefix("$[").and_then(|t| t.strip_suffix(']')));
            match expr.and_then(|e| arithmetic(e, env)) {
                Some(n) => out.extend(n.to_string().chars().map(|c| Tok::Ch(c, Q::Expanded))),
                None => out.push(Tok::Dyn(text.to_owned())),
            }
        }
        "process_substitution" => out.push(Tok::Dyn(text.to_owned())),
        _ => bare(text, out),
    }
}

/// Unquoted text: backslash escapes, everything else as is.
fn bare(text: &str, out: &mut Vec<Tok>) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(Tok::Ch(n, Q::Quoted)),
            }
        } else {
            out.push(Tok::Ch(c, Q::Bare));
        }
    }
}

/// Text inside double quotes: only `\$ \` \" \\ \<newline>` are escapes.
fn dq_text(text: &str, out: &mut Vec<Tok>) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(Tok::Ch(n, Q::Quoted));
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(Tok::Ch('\\', Q::Quoted)),
            }
        } else {
            out.push(Tok::Ch(c, Q::Quoted));
        }
    }
}

fn double_quoted(node: Node<'_>, src: &str, env: &Env<'_>, out: &mut Vec<Tok>, depth: u32) {
    let (start, end) = (node.start_byte(), node.end_byte());
    let inner_start = if src.get(start..=start) == Some("\"") {
        start + 1
    } else {
        start
    };
    let inner_end = if end > inner_start && src.get(end - 1..end) == Some("\"") {
        end - 1
    } else {
        end
    };
    let mut pos = inner_start;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == "string_content" {
            continue;
        }
        if child.start_byte() > pos {
            dq_text(src.get(pos..child.start_byte()).unwrap_or(""), out);
        }
        match child.kind() {
            "simple_expansion" | "expansion" => {
                expansion(node_text(child, src), env, out, Q::Quoted);
            }
            "command_substitution" => {
                command_substitution(node_text(child, src), env, out, Q::Quoted);
            }
            _ => tokens(child, src, env, out, depth + 1),
        }
        pos = child.end_byte().max(pos);
    }
    if inner_end > pos {
        dq_text(src.get(pos..inner_end).unwrap_or(""), out);
    }
}

/// `$(…)`: what it prints when that is known statically (trailing newlines removed, as the
/// shell does), a fresh temporary path for `$(mktemp)`, else a dynamic part.
fn command_substitution(text: &str, env: &Env<'_>, out: &mut Vec<Tok>, q: Q) {
    if env
        .subs
        .get(text)
        .is_some_and(|p| p.as_deref() == Some(EVERY_PID))
    {
        out.push(Tok::Ch('*', Q::Expanded));
        return;
    }
    // Paths under a start (`$(git ls-files)`): the start, then a glob for what is below it.
    if let Some(Some(p)) = env.subs.get(text)
        && let Some(start) = p.strip_prefix(PATHS_UNDER)
    {
        out.extend(start.chars().map(|c| Tok::Ch(c, Q::Quoted)));
        if !start.ends_with('/') {
            out.push(Tok::Ch('/', Q::Quoted));
        }
        out.push(Tok::Ch('*', Q::Expanded));
        return;
    }
    if let Some(Some(printed)) = env.subs.get(text)
        && out.len() + printed.len() <= MAX_VALUE
    {
        if q == Q::Expanded {
            out.push(Tok::Mark);
        }
        out.extend(
            printed
                .trim_end_matches('\n')
                .chars()
                .map(|c| Tok::Ch(c, q)),
        );
    } else if matches!(text, "$(pwd)" | "`pwd`")
        && let Some(pwd) = env.pwd
    {
        out.extend(pwd.chars().map(|c| Tok::Ch(c, q)));
    } else if is_mktemp(text) {
        out.push(Tok::Temp(text.to_owned()));
    } else {
        out.push(Tok::Dyn(text.to_owned()));
    }
}

/// `$NAME`, `${NAME}`, `$1`, `$@`, `${a[@]}`, `${NAME:-default}` ...: the value when known,
/// else a dynamic part. `q` is `Expanded` outside double quotes (the value is then split
/// into fields), `Quoted` inside.
fn expansion(text: &str, env: &Env<'_>, out: &mut Vec<Tok>, q: Q) {
    let Some(exp) = Expansion::parse(text) else {
        out.push(Tok::Dyn(text.to_owned()));
        return;
    };
    if q == Q::Expanded {
        out.push(Tok::Mark);
    }
    // `${NAME:+word}`: the word when NAME is set and not empty, else nothing.
    if let Some(alt) = exp.alternative {
        let set = match exp.lookup(env) {
            Lookup::Value(Val::Str(s)) => Some(!s.is_empty()),
            Lookup::Value(Val::List(l)) => Some(!l.is_empty()),
            Lookup::Value(_) | Lookup::Home => Some(true),
            Lookup::Default => Some(false),
            Lookup::Unknown => None,
        };
        match set {
            Some(false) => {}
            Some(true) if !alt.contains(['$', '`', '"', '\'', '\\', '~']) => {
                out.extend(alt.chars().map(|c| Tok::Ch(c, q)));
            }
            _ => out.push(Tok::Dyn(text.to_owned())),
        }
        return;
    }
    let value = match exp.lookup(env) {
        Lookup::Value(v) => v,
        // `${D:-$HOME}`, `${D:=${X}}`: the default is another variable's value.
        Lookup::Default
            if exp.default.is_some_and(|d| {
                Expansion::parse(d).is_some_and(|inner| {
                    inner.transform.is_none()
                        && inner.default.is_none()
                        && inner.alternative.is_none()
                        && d.len() > 1
                })
            }) =>
        {
            let d = exp.default.unwrap_or_default();
            let mut inner = Vec::new();
            expansion(d, env, &mut inner, q);
            out.extend(inner);
            return;
        }
        Lookup::Default if exp.default.is_some() => {
            let d = exp.default.unwrap_or_default();
            if d.chars()
                .any(|c| matches!(c, '$' | '`' | '"' | '\'' | '\\'))
            {
                out.push(Tok::Dyn(text.to_owned()));
                return;
            }
            // The default word is tilde-expanded (`${x:-~}` is the home directory).
            match (d.strip_prefix('~'), env.home) {
                (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                    Val::Str(format!("{h}{rest}"))
                }
                (Some(rest), None) if rest.is_empty() || rest.starts_with('/') => {
                    out.push(Tok::Home);
                    out.extend(rest.chars().map(|c| Tok::Ch(c, q)));
                    return;
                }
                (Some(_), _) => {
                    out.push(Tok::Dyn(text.to_owned()));
                    return;
                }
                (None, _) => Val::Str(d.to_owned()),
            }
        }
        Lookup::Default | Lookup::Unknown => {
            // `${TMPDIR:-/tmp}`: a temporary directory whichever way it goes.
            if exp.name == "TMPDIR" && exp.default == Some("/tmp") {
                out.push(Tok::Temp(text.to_owned()));
                return;
            }
            out.push(Tok::Dyn(text.to_owned()));
            return;
        }
        Lookup::Home if exp.transform.is_none() => {
            out.push(Tok::Home);
            return;
        }
        Lookup::Home => {
            out.push(Tok::Dyn(text.to_owned()));
            return;
        }
    };
    let value = match (exp.transform, value) {
        (None, v) => v,
        (Some(t), Val::Str(v)) => match t.apply(&v) {
            Some(x) => Val::Str(x),
            None => Val::Unknown,
        },
        (Some(t @ (Transform::Prefix(..) | Transform::Suffix(..))), Val::Glob(v)) => {
            t.apply(&v).map_or(Val::Unknown, Val::Glob)
        }
        // `${a[@]:1}`, `${@:2}`: a slice of the elements (the positional parameters count
        // from `$1`).
        (Some(Transform::Substring(offset, length)), Val::List(items)) => {
            let offset = if exp.name == "@" && offset > 0 {
                offset - 1
            } else {
                offset
            };
            slice(&items, offset, length).map_or(Val::Unknown, Val::List)
        }
        // Every other operator applies to each element.
        (Some(t), Val::List(items)) => items
            .iter()
            .map(|item| t.apply(item))
            .collect::<Option<Vec<String>>>()
            .map_or(Val::Unknown, Val::List),
        (Some(_), _) => Val::Unknown,
    };
    if value == Val::Unknown {
        out.push(Tok::Dyn(text.to_owned()));
        return;
    }
    // A word built from many long values (`$a$a$a…`) is bounded like a value.
    let size = match &value {
        Val::Str(v) | Val::Glob(v) => v.len(),
        Val::List(items) => items.iter().map(String::len).sum(),
        Val::Unknown | Val::Temp => 0,
    };
    if out.len() + size > MAX_VALUE {
        out.push(Tok::Dyn(text.to_owned()));
        return;
    }
    match value {
        Val::Str(v) => out.extend(v.chars().map(|c| Tok::Ch(c, q))),
        Val::Glob(v) => out.extend(v.chars().map(|c| {
            let glob = matches!(c, '*' | '?' | '[');
            Tok::Ch(c, if glob { Q::Expanded } else { q })
        })),
        Val::Temp => out.push(Tok::Temp(text.to_owned())),
        Val::Unknown => out.push(Tok::Dyn(text.to_owned())),
        Val::List(items) => {
            // `"${a[@]}"` and unquoted `${a[@]}`/`${a[*]}` keep the elements apart (unquoted
            // ones are split again on `$IFS`); `"${a[*]}"` joins them with `$IFS`'s first
            // character.
            let apart = q == Q::Expanded || exp.all == Some('@');
            let joiner = match env.vars.get("IFS") {
                Some(Val::Str(ifs)) => ifs.chars().next(),
                _ => Some(' '),
            };
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    if apart {
                        out.push(Tok::Break);
                    } else if let Some(j) = joiner {
                        out.push(Tok::Ch(j, q));
                    }
                }
                out.extend(item.chars().map(|c| Tok::Ch(c, q)));
            }
        }
    }
}

/// One parameter expansion, parsed.
struct Expansion<'t> {
    /// The variable, `@` for the positional parameters, or a digit string.
    name: &'t str,
    /// `[@]` or `[*]` (also `$@` and `$*`).
    all: Option<char>,
    /// `[N]`, `[i+1]`, `[-1]`, `[key]`.
    index: Option<Index<'t>>,
    /// The word of `${NAME:-word}` / `${NAME-word}` / `${NAME:=word}`.
    default: Option<&'t str>,
    /// The word of `${NAME:+word}` / `${NAME+word}`: used when NAME is set, else nothing.
    alternative: Option<&'t str>,
    /// `${NAME%pat}`, `${NAME#pat}`, `${NAME/a/b}`, `${NAME:1:2}`, `${NAME^^}`.
    transform: Option<Transform<'t>>,
}

/// A parameter expansion's operation on the value.
#[derive(Clone, Copy)]
enum Transform<'t> {
    /// `#` / `##`: remove the shortest / longest prefix matching the pattern.
    Prefix(bool, &'t str),
    /// `%` / `%%`: remove the shortest / longest suffix matching the pattern.
    Suffix(bool, &'t str),
    /// `/pat/rep` (first) or `//pat/rep` (all), with a literal pattern.
    Replace(bool, &'t str, &'t str),
    /// `/#pat/rep` (`false`: a literal prefix replaced, an empty one prepends) or `/%pat/rep`
    /// (`true`: a literal suffix, an empty one appends).
    ReplaceAnchored(bool, &'t str, &'t str),
    /// `:offset` or `:offset:length`.
    Substring(i64, Option<i64>),
    Upper,
    Lower,
    /// `^`: the first character upper-cased.
    UpperFirst,
    /// `,`: the first character lower-cased.
    LowerFirst,
    /// `~~` (every character) / `~` (the first): case toggled.
    Toggle(bool),
}

/// An array subscript as written: evaluated when looked up.
#[derive(Clone, Copy)]
enum Index<'t> {
    Expr(&'t str),
}

impl Transform<'_> {
    fn apply(self, value: &str) -> Option<String> {
        // Pattern removal tries every cut with a glob match: bounded, a long value is unknown.
        if value.len() > MAX_TRANSFORMED {
            return None;
        }
        let chars: Vec<char> = value.chars().collect();
        let at = |i: usize| chars[..i].iter().collect::<String>();
        let from = |i: usize| chars[i..].iter().collect::<String>();
        Some(match self {
            Transform::Prefix(longest, pat) => {
                let mut cuts: Vec<usize> = (0..=chars.len()).collect();
                if longest {
                    cuts.reverse();
                }
                match cuts.into_iter().find(|&i| glob_match(pat, &at(i))) {
                    Some(i) => from(i),
                    None => value.to_owned(),
                }
            }
            Transform::Suffix(longest, pat) => {
                let mut cuts: Vec<usize> = (0..=chars.len()).rev().collect();
                if longest {
                    cuts.reverse();
                }
                match cuts.into_iter().find(|&i| glob_match(pat, &from(i))) {
                    Some(i) => at(i),
                    None => value.to_owned(),
                }
            }
            Transform::Replace(all, pat, rep) => {
                if pat.contains(['*', '?', '[']) || pat.is_empty() {
                    return None;
                }
                if all {
                    value.replace(pat, rep)
                } else {
                    value.replacen(pat, rep, 1)
                }
            }
            Transform::ReplaceAnchored(at_end, pat, rep) => {
                if pat.contains(['*', '?', '[']) {
                    return None;
                }
                match (at_end, value.strip_prefix(pat), value.strip_suffix(pat)) {
                    (false, Some(rest), _) => format!("{rep}{rest}"),
                    (true, _, Some(rest)) => format!("{rest}{rep}"),
                    _ => value.to_owned(),
                }
            }
            Transform::Substring(offset, length) => {
                let n = i64::try_from(chars.len()).ok()?;
                let start = if offset < 0 {
                    n.saturating_add(offset).max(0)
                } else {
                    offset.min(n)
                };
                let end = match length {
                    Some(l) if l < 0 => n.saturating_add(l).max(start),
                    Some(l) => start.saturating_add(l).min(n),
                    None => n,
                };
                chars[usize::try_from(start).ok()?..usize::try_from(end).ok()?]
                    .iter()
                    .collect()
            }
            Transform::Upper => value.to_uppercase(),
            Transform::Lower => value.to_lowercase(),
            Transform::UpperFirst => chars
                .first()
                .map(|c| c.to_uppercase().chain(chars[1..].iter().copied()).collect())
                .unwrap_or_default(),
            Transform::LowerFirst => chars
                .first()
                .map(|c| c.to_lowercase().chain(chars[1..].iter().copied()).collect())
                .unwrap_or_default(),
            Transform::Toggle(all) => chars
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i > 0 && !all {
                        c.to_string()
                    } else if c.is_uppercase() {
                        c.to_lowercase().collect()
                    } else {
                        c.to_uppercase().collect()
                    }
                })
                .collect(),
        })
    }
}

impl<'t> Transform<'t> {
    fn parse(rest: &'t str) -> Option<Transform<'t>> {
        // Patterns with quotes, escapes or expansions, and the anchored `/#` `/%` forms, are
        // not read here: the value is then unknown, never wrongly static.
        if rest.contains(['"', '\'', '\\', '$', '`']) {
            return None;
        }
        for (anchor, at_end) in [("/#", false), ("/%", true)] {
            if let Some(r) = rest.strip_prefix(anchor) {
                let (pat, rep) = r.split_once('/').unwrap_or((r, ""));
                return Some(Transform::ReplaceAnchored(at_end, pat, rep));
            }
        }
        if let Some(p) = rest.strip_prefix("##") {
            return Some(Transform::Prefix(true, p));
        }
        if let Some(p) = rest.strip_prefix('#') {
            return Some(Transform::Prefix(false, p));
        }
        if let Some(p) = rest.strip_prefix("%%") {
            return Some(Transform::Suffix(true, p));
        }
        if let Some(p) = rest.strip_prefix('%') {
            return Some(Transform::Suffix(false, p));
        }
        if let Some(r) = rest.strip_prefix("//") {
            let (pat, rep) = r.split_once('/').unwrap_or((r, ""));
            return Some(Transform::Replace(true, pat, rep));
        }
        if let Some(r) = rest.strip_prefix('/') {
            let (pat, rep) = r.split_once('/').unwrap_or((r, ""));
            return Some(Transform::Replace(false, pat, rep));
        }
        match rest {
            "^^" | "@U" => return Some(Transform::Upper),
            ",," | "@L" => return Some(Transform::Lower),
            "^" | "@u" => return Some(Transform::UpperFirst),
            "," => return Some(Transform::LowerFirst),
            "~~" | "@K" => return Some(Transform::Toggle(true)),
            "~" | "@k" => return Some(Transform::Toggle(false)),
            _ => {}
        }
        let r = rest.strip_prefix(':')?;
        let mut parts = r.splitn(2, ':');
        let offset = parts
            .next()?
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim()
            .parse()
            .ok()?;
        let length = match parts.next() {
            Some(l) => Some(l.trim().parse().ok()?),
            None => None,
        };
        Some(Transform::Substring(offset, length))
    }
}

enum Lookup {
    Value(Val),
    /// Never assigned on the line: the environment's value, unknown.
    Unknown,
    /// Unset or empty: the default word applies.
    Default,
    /// `$HOME` when the caller did not give the home directory.
    Home,
}

impl<'t> Expansion<'t> {
    fn parse(text: &'t str) -> Option<Expansion<'t>> {
        let (body, braced) = match text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
            Some(b) => (b, true),
            None => (text.strip_prefix('$')?, false),
        };
        let indirect = usize::from(braced && body.starts_with('!') && body.len() > 1);
        let body_after = &body[indirect..];
        let name_len = if body_after.starts_with(['@', '*']) && indirect == 0 {
            1
        } else if indirect == 1 {
            1 + body_after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(body_after.len())
        } else if body.starts_with(|c: char| c.is_ascii_digit()) {
            if braced {
                body.find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(body.len())
            } else {
                1
            }
        } else {
            body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(body.len())
        };
        if name_len == indirect {
            return None;
        }
        let (name, rest) = body.split_at(name_len);
        let mut exp = Expansion {
            name,
            all: None,
            index: None,
            default: None,
            alternative: None,
            transform: None,
        };
        if name == "@" || name == "*" {
            exp.all = name.chars().next();
            exp.name = "@";
        }
        if !braced {
            return rest.is_empty().then_some(exp);
        }
        let rest = match rest.strip_prefix('[') {
            Some(r) => {
                let (sub, after) = r.split_once(']')?;
                match sub {
                    "@" | "*" => exp.all = sub.chars().next(),
                    n => exp.index = Some(Index::Expr(n)),
                }
                after
            }
            None => rest,
        };
        if rest.is_empty() {
            return Some(exp);
        }
        // `${NAME:?message}`, `${NAME?message}`: NAME or an error, the same value.
        if rest.starts_with('?') || rest.starts_with(":?") {
            return Some(exp);
        }
        for op in [":-", "-", ":=", "="] {
            if let Some(d) = rest.strip_prefix(op) {
                exp.default = Some(d);
                return Some(exp);
            }
        }
        for op in [":+", "+"] {
            if let Some(alt) = rest.strip_prefix(op) {
                exp.alternative = Some(alt);
                return Some(exp);
            }
        }
        exp.transform = Some(Transform::parse(rest)?);
        Some(exp)
    }

    fn lookup(&self, env: &Env<'_>) -> Lookup {
        // `${!v}`: the variable whose name `v` holds.
        if let Some(pointer) = self.name.strip_prefix('!') {
            return match env.vars.get(pointer) {
                Some(Val::Str(target)) if !target.starts_with('!') => Expansion {
                    name: target,
                    all: self.all,
                    index: self.index,
                    default: self.default,
                    alternative: self.alternative,
                    transform: None,
                }
                .lookup(env),
                _ => Lookup::Unknown,
            };
        }
        if self.name.starts_with(|c: char| c.is_ascii_digit()) {
            let n: usize = match self.name.parse() {
                Ok(n) => n,
                Err(_) => return Lookup::Unknown,
            };
            if n == 0 {
                return match env.vars.get("0") {
                    Some(v) => Lookup::Value(v.clone()),
                    None => Lookup::Unknown,
                };
            }
            return match env.vars.get("@") {
                Some(Val::List(items)) if n >= 1 => match items.get(n - 1) {
                    Some(v) => Lookup::Value(Val::Str(v.clone())),
                    None => Lookup::Default,
                },
                _ => Lookup::Unknown,
            };
        }
        let value = match env.vars.get(self.name) {
            Some(v) => v.clone(),
            None => {
                return match self.name {
                    "HOME" => match env.home {
                        Some(h) => Lookup::Value(Val::Str(h.to_owned())),
                        None => Lookup::Home,
                    },
                    "PWD" => env
                        .pwd
                        .map_or(Lookup::Unknown, |p| Lookup::Value(Val::Str(p.to_owned()))),
                    "OLDPWD" => env
                        .oldpwd
                        .map_or(Lookup::Unknown, |p| Lookup::Value(Val::Str(p.to_owned()))),
                    "IFS" => Lookup::Value(Val::Str(DEFAULT_IFS.to_owned())),
                    _ => Lookup::Unknown,
                };
            }
        };
        // An index the shell computes (`i+1`, `$((2-1))`, `-1` from the end).
        let index = match self.index {
            None => None,
            Some(Index::Expr(e)) => match arithmetic(e, env) {
                Some(n) => Some(n),
                None => return Lookup::Unknown,
            },
        };
        let value = match (value, self.all, index) {
            (Val::List(items), None, idx) => {
                let i = idx.unwrap_or(0);
                let at = if i < 0 {
                    i64::try_from(items.len())
                        .ok()
                        .and_then(|n| usize::try_from(n + i).ok())
                } else {
                    usize::try_from(i).ok()
                };
                match at.and_then(|i| items.get(i)) {
                    Some(v) => Val::Str(v.clone()),
                    None => Val::Str(String::new()),
                }
            }
            (Val::Str(s), None, Some(i)) => Val::Str(if i == 0 { s } else { String::new() }),
            (Val::Str(s), Some(_), _) => Val::List(vec![s]),
            (v, _, _) => v,
        };
        match value {
            Val::Str(s) if s.is_empty() && self.default.is_some() => Lookup::Default,
            Val::List(l) if l.is_empty() && self.default.is_some() => Lookup::Default,
            Val::Unknown => Lookup::Unknown,
            v => Lookup::Value(v),
        }
    }
}

/// `items[offset..offset+length]` as bash slices arrays (a negative offset counts from the end;
/// a negative length is an error).
fn slice(items: &[String], offset: i64, length: Option<i64>) -> Option<Vec<String>> {
    let n = i64::try_from(items.len()).ok()?;
    let start = if offset < 0 { n + offset } else { offset };
    if start < 0 || start > n {
        return Some(Vec::new());
    }
    let end = match length {
        Some(l) if l < 0 => return None,
        Some(l) => start.saturating_add(l).min(n),
        None => n,
    };
    Some(items[usize::try_from(start).ok()?..usize::try_from(end).ok()?].to_vec())
}

/// Bash arithmetic on integers, as far as a policy needs it: numbers, variables holding
/// numbers, `+ - * / %`, unary minus, parentheses, and `$var` / `${var}` inside. Anything
/// else (assignment, comparison, a variable only known at run time) is `None`.
pub(crate) fn arithmetic(expr: &str, env: &Env<'_>) -> Option<i64> {
    /// Operators and operands one expression may hold before it is not worth computing.
    const MAX_TOKENS: usize = 256;
    let mut tokens: Vec<String> = Vec::new();
    // `$((…))` inside is a parenthesised expression.
    let expr = expr.replace("$((", "((");
    let mut chars = expr.chars().peekable();
    while let Some(&c) = chars.peek() {
        if tokens.len() > MAX_TOKENS {
            return None;
        }
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '{' || c == '}' {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '{' | '}' | '#') {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            let name = word
                .trim_start_matches('$')
                .trim_start_matches('{')
                .trim_end_matches('}');
            let value = if name.chars().all(|c| c.is_ascii_digit()) && !word.starts_with('$') {
                name.parse::<i64>().ok()?
            } else {
                match env.vars.get(name) {
                    Some(Val::Str(v)) if v.trim().is_empty() => 0,
                    Some(Val::Str(v)) => arithmetic(v, env).or_else(|| v.trim().parse().ok())?,
                    _ => return None,
                }
            };
            tokens.push(value.to_string());
        } else if matches!(c, '+' | '-' | '*' | '/' | '%' | '(' | ')') {
            tokens.push(c.to_string());
            chars.next();
        } else {
            return None;
        }
    }
    let mut at = 0;
    let value = arith_sum(&tokens, &mut at, 0)?;
    (at == tokens.len()).then_some(value)
}

fn arith_sum(t: &[String], at: &mut usize, depth: u32) -> Option<i64> {
    let mut value = arith_product(t, at, depth)?;
    while let Some(op) = t.get(*at).filter(|o| *o == "+" || *o == "-") {
        *at += 1;
        let rhs = arith_product(t, at, depth)?;
        value = if op == "+" {
            value.checked_add(rhs)?
        } else {
            value.checked_sub(rhs)?
        };
    }
    Some(value)
}

fn arith_product(t: &[String], at: &mut usize, depth: u32) -> Option<i64> {
    let mut value = arith_unary(t, at, depth)?;
    while let Some(op) = t.get(*at).filter(|o| matches!(o.as_str(), "*" | "/" | "%")) {
        *at += 1;
        let rhs = arith_unary(t, at, depth)?;
        value = match op.as_str() {
            "*" => value.checked_mul(rhs)?,
            "/" => value.checked_div(rhs)?,
            _ => value.checked_rem(rhs)?,
        };
    }
    Some(value)
}

fn arith_unary(t: &[String], at: &mut usize, depth: u32) -> Option<i64> {
    if depth > MAX_WORD_DEPTH {
        return None;
    }
    let token = t.get(*at)?;
    *at += 1;
    match token.as_str() {
        "-" => arith_unary(t, at, depth + 1)?.checked_neg(),
        "+" => arith_unary(t, at, depth + 1),
        "(" => {
            let value = arith_sum(t, at, depth + 1)?;
            (t.get(*at).map(String::as_str) == Some(")")).then(|| *at += 1)?;
            Some(value)
        }
        n => n.parse().ok(),
    }
}

/// Decodes the escapes of `$'...'`.
pub(crate) fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => out.push(numeric(&mut chars, 16, 2).unwrap_or('x')),
            'u' => out.push(numeric(&mut chars, 16, 4).unwrap_or('u')),
            'U' => out.push(numeric(&mut chars, 16, 8).unwrap_or('U')),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('?'));
            }
            'c' => {
                // Control character: \cX.
                if let Some(x) = chars.next() {
                    out.push(char::from_u32(u32::from(x) & 0x1f).unwrap_or('?'));
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn numeric(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max: usize,
) -> Option<char> {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match chars.peek().and_then(|c| c.to_digit(radix)) {
            Some(d) => {
                v = v.saturating_mul(radix).saturating_add(d);
                chars.next();
                n += 1;
            }
            None => break,
        }
    }
    if n == 0 { None } else { char::from_u32(v) }
}

/// Brace expansion on unquoted `{a,b}` and `{1..3}` groups.
fn brace_expand(toks: Vec<Tok>, out: &mut Vec<Vec<Tok>>) {
    let mut work = vec![toks];
    while let Some(toks) = work.pop() {
        if out.len() + work.len() >= MAX_BRACE_WORDS {
            // Past the bound the word is not expanded; it stands for words only known when
            // bash expands them (never a harmless literal `{…}`).
            out.push(vec![Tok::Dyn("{…}".into())]);
            continue;
        }
        match find_brace(&toks) {
            Some((open, close, alts)) => {
                // Push in reverse so the results come out in order.
                for alt in alts.into_iter().rev() {
                    let mut next = toks[..open].to_vec();
                    next.extend(alt);
                    next.extend_from_slice(&toks[close + 1..]);
                    work.push(next);
                }
            }
            None => out.push(toks),
        }
    }
}

fn is_bare(t: &Tok, c: char) -> bool {
    matches!(t, Tok::Ch(x, Q::Bare) if *x == c)
}

/// Finds the first expandable brace group: (index of `{`, index of `}`, alternatives).
fn find_brace(toks: &[Tok]) -> Option<(usize, usize, Vec<Vec<Tok>>)> {
    let mut start = 0;
    while start < toks.len() {
        let open = start + toks[start..].iter().position(|t| is_bare(t, '{'))?;
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, t) in toks.iter().enumerate().skip(open) {
            if is_bare(t, '{') {
                depth += 1;
            } else if is_bare(t, '}') {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            } else if depth == 1 && is_bare(t, ',') {
                commas.push(i);
            }
        }
        let Some(close) = close else {
            // Unbalanced `{`: try from the next one.
            start = open + 1;
            continue;
        };
        if !commas.is_empty() {
            let mut alts = Vec::new();
            let mut from = open + 1;
            for c in commas.iter().copied().chain(std::iter::once(close)) {
                alts.push(toks[from..c].to_vec());
                from = c + 1;
            }
            return Some((open, close, alts));
        }
        if let Some(seq) = sequence(&toks[open + 1..close]) {
            return Some((open, close, seq));
        }
        start = open + 1;
    }
    None
}

/// `{1..5}`, `{1..10..2}`, `{a..e}`.
fn sequence(inner: &[Tok]) -> Option<Vec<Vec<Tok>>> {
    let text: String = inner
        .iter()
        .map(|t| match t {
            Tok::Ch(c, Q::Bare) => Some(*c),
            _ => None,
        })
        .collect::<Option<String>>()?;
    let parts: Vec<&str> = text.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let as_toks = |s: String| s.chars().map(|c| Tok::Ch(c, Q::Quoted)).collect::<Vec<_>>();
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        let count = a.checked_sub(b)?.unsigned_abs() / step.unsigned_abs() + 1;
        if count > MAX_BRACE_WORDS as u64 {
            return None;
        }
        let mut v = Vec::new();
        let mut x = a;
        for _ in 0..count {
            v.push(as_toks(x.to_string()));
            x = if a <= b {
                x.checked_add(step)?
            } else {
                x.checked_sub(step)?
            };
        }
        return Some(v);
    }
    let (mut ca, mut cb) = (parts[0].chars(), parts[1].chars());
    if let (Some(a), None, Some(b), None) = (ca.next(), ca.next(), cb.next(), cb.next())
        && a.is_ascii_alphabetic()
        && b.is_ascii_alphabetic()
    {
        let (a, b) = (a as u8, b as u8);
        let range: Vec<u8> = if a <= b {
            (a..=b).collect()
        } else {
            (b..=a).rev().collect()
        };
        return Some(
            range
                .into_iter()
                .step_by(usize::try_from(step).unwrap_or(1))
                .map(|c| as_toks(char::from(c).to_string()))
                .collect(),
        );
    }
    None
}

/// The command inside `$(…)` or backticks.
pub(crate) fn substitution_body(text: &str) -> Option<&str> {
    text.strip_prefix("$(")
        .and_then(|t| t.strip_suffix(')'))
        .or_else(|| text.strip_prefix('`').and_then(|t| t.strip_suffix('`')))
}

/// A command substitution that prints a fresh temporary path (`$(mktemp -d)`).
pub(crate) fn is_mktemp(text: &str) -> bool {
    substitution_body(text).is_some_and(|t| {
        let mut words = t.split_whitespace();
        words.next() == Some("mktemp")
            && !t.contains(['$', '`', ';', '|', '&', '>', '<'])
            && words.all(|w| w.starts_with('-') || !w.contains(".."))
    })
}

/// Tilde expansion at the start of a word: `~`, `~/...`, `~+` (the working directory), `~-`
/// (the previous one) and `~user` (that user's home directory).
fn tilde(mut toks: Vec<Tok>, env: &Env<'_>) -> Vec<Tok> {
    if !toks.first().is_some_and(|t| is_bare(t, '~')) {
        return toks;
    }
    let end = toks
        .iter()
        .position(|t| matches!(t, Tok::Ch('/', _)))
        .unwrap_or(toks.len());
    let prefix: Option<String> = toks[1..end]
        .iter()
        .map(|t| match t {
            Tok::Ch(c, Q::Bare) => Some(*c),
            _ => None,
        })
        .collect();
    let dir: Option<String> = match prefix.as_deref() {
        Some("") => {
            let replacement: Vec<Tok> = match env.home {
                Some(h) => h.chars().map(|c| Tok::Ch(c, Q::Quoted)).collect(),
                None => vec![Tok::Home],
            };
            toks.splice(..1, replacement);
            return toks;
        }
        Some("+") => env.pwd.map(str::to_owned),
        Some("-") => env.oldpwd.map(str::to_owned),
        Some(user) => user_home(user),
        None => None,
    };
    let replacement = match dir {
        Some(d) => d.chars().map(|c| Tok::Ch(c, Q::Quoted)).collect(),
        None => {
            let src: String = toks[..end]
                .iter()
                .map(|t| match t {
                    Tok::Ch(c, _) => *c,
                    _ => '?',
                })
                .collect();
            vec![Tok::Dyn(src)]
        }
    };
    toks.splice(..end, replacement);
    toks
}

/// The home directory of `user`: from `/etc/passwd` (read once per process), else where
/// homes usually are. Either way it is someone's home, never inside a project.
fn user_home(user: &str) -> Option<String> {
    static PASSWD: std::sync::OnceLock<HashMap<String, String>> = std::sync::OnceLock::new();
    let valid = !user.is_empty()
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '$'));
    if !valid {
        return None;
    }
    let homes = PASSWD.get_or_init(|| {
        crate::disk::passwd()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                Some(((*f.first()?).to_owned(), (*f.get(5)?).to_owned()))
            })
            .collect()
    });
    Some(
        homes
            .get(user)
            .cloned()
            .unwrap_or_else(|| format!("/home/{user}")),
    )
}

fn to_word(toks: Vec<Tok>) -> Word {
    let mut w = Word::default();
    for t in toks {
        match t {
            Tok::Ch(c @ ('*' | '?' | '['), Q::Bare | Q::Expanded) => w.push_glob(c),
            Tok::Ch(c, _) => {
                let mut buf = [0u8; 4];
                w.push_lit(c.encode_utf8(&mut buf));
            }
            Tok::Dyn(s) => w.segs.push(Seg::Dyn(s)),
            Tok::Temp(s) => w.segs.push(Seg::Temp(s)),
            Tok::Home => w.segs.push(Seg::Home),
            Tok::Mark | Tok::Break => {}
        }
    }
    w
}

/// Standard base64 (with or without padding, whitespace ignored).
///
/// Hand-written (twenty lines, no dependency) because only decoding known text for the
/// analysis is needed, never encoding, and bad input must give `None`, not an error type.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(u8::try_from((bits >> count) & 0xff).ok()?);
        }
    }
    Some(out)
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
    fn arithmetic_is_computed_where_bash_would() {
        let mut vars = Vars::new();
        vars.insert("i".into(), Val::Str("2".into()));
        vars.insert("e".into(), Val::Str("i*3".into()));
        let subs = HashMap::new();
        let env = Env {
            home: None,
            pwd: None,
            oldpwd: None,
            subs: &subs,
            vars: &vars,
        };
        assert_eq!(arithmetic("1+0", &env), Some(1));
        assert_eq!(arithmetic(" -1 ", &env), Some(-1));
        assert_eq!(arithmetic("2*(3-1)%3", &env), Some(1));
        assert_eq!(arithmetic("$i - $((1))", &env), Some(1));
        assert_eq!(arithmetic("e+1", &env), Some(7));
        assert_eq!(arithmetic("x+1", &env), None, "unknown variable");
        assert_eq!(arithmetic("1/0", &env), None);
        assert_eq!(arithmetic("i=3", &env), None, "assignment is not computed");
    }

    fn words(src: &str, home: Option<&str>) -> Vec<String> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(src, None).unwrap();
        let cmd = tree.root_node().named_child(0).unwrap();
        let vars = Vars::new();
        let subs = HashMap::new();
        let env = Env {
            home,
            pwd: None,
            oldpwd: None,
            subs: &subs,
            vars: &vars,
        };
        let mut out = Vec::new();
        let mut cursor = cmd.walk();
        for child in cmd.named_children(&mut cursor) {
            let n = if child.kind() == "command_name" {
                child.named_child(0).unwrap()
            } else {
                child
            };
            out.extend(resolve(n, src, &env).iter().map(Word::text));
        }
        out
    }

    #[test]
    fn quote_removal_and_escapes() {
        assert_eq!(words(r#"r""m -rf "/""#, None), ["rm", "-rf", "/"]);
        assert_eq!(words(r"\rm a\ b 'c d'", None), ["rm", "a b", "c d"]);
        assert_eq!(words(r"echo $'\x41\n'", None), ["echo", "A\n"]);
        assert_eq!(
            words(r#"echo "a\"b\$c\\d\e""#, None),
            ["echo", r#"a"b$c\d\e"#]
        );
    }

    #[test]
    fn braces_and_tilde() {
        assert_eq!(words("rm {/,x}", None), ["rm", "/", "x"]);
        assert_eq!(
            words("echo a{b,c}d {1..3}", None),
            ["echo", "abd", "acd", "1", "2", "3"]
        );
        assert_eq!(words("echo \"{x,y}\" {x}", None), ["echo", "{x,y}", "{x}"]);
        assert_eq!(
            words("ls ~ ~/a \"~\"", Some("/h")),
            ["ls", "/h", "/h/a", "~"]
        );
        assert_eq!(
            words("ls $HOME/b ${HOME}", Some("/h")),
            ["ls", "/h/b", "/h"]
        );
    }

    #[test]
    fn dynamic_parts() {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .unwrap();
        let src = "rm \"$X/\"*";
        let tree = parser.parse(src, None).unwrap();
        let arg = tree
            .root_node()
            .named_child(0)
            .unwrap()
            .named_child(1)
            .unwrap();
        let vars = Vars::new();
        let subs = HashMap::new();
        let env = Env {
            home: None,
            pwd: None,
            oldpwd: None,
            subs: &subs,
            vars: &vars,
        };
        let w = &resolve(arg, src, &env)[0];
        assert!(w.starts_dynamic());
        assert!(w.has_glob());
        assert_eq!(w.text(), "$X/*");
    }
}
