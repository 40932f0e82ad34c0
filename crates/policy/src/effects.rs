//! What one command does to files, computed once from the tool table: the files whose content
//! it writes (and with what), the paths it reads or changes, whether it edits in place. The
//! hardline guard, the workspace restriction, interception and the walk's memory of files
//! written earlier on the line all read this one answer.

use crate::command::{Access, Cmd, Effects, RedirKind, Source, Write, WriteKind};
use crate::flags::{Parsed, option_values, option_words, parse, value_word};
use crate::tools::spec_for;
use crate::tools::{self, InPlace, Role, Tool};
use crate::words::Word;

/// Programs that print nothing: a redirection after them only empties the file.
const PRINTS_NOTHING: &[&str] = &[":", "true", "false"];

/// What `cmd` does to files.
pub(crate) fn of(cmd: &Cmd) -> Effects {
    let mut e = Effects::default();
    let program = cmd.program();
    let args = cmd.args();
    let tool = program.as_deref().and_then(tools::lookup);
    let p = parse(args, &spec_for(program.as_deref().unwrap_or_default()));
    redirections(cmd, &mut e);
    if let Some(tool) = tool {
        content_writes(cmd, tool, args, &p, &mut e);
        if let Some(handler) = tool.handler {
            handler(cmd, &p, &mut e);
        }
    }
    if tool.is_none_or(|t| t.role != Role::Data) {
        operand_paths(cmd, tool, args, &p, &mut e);
    }
    e
}

fn redirections(cmd: &Cmd, e: &mut Effects) {
    let prints_nothing = match cmd.program().as_deref() {
        None => true,
        Some("cat") => cmd.args().iter().any(|a| a.is("/dev/null")),
        Some(p) => PRINTS_NOTHING.contains(&p),
    };
    for r in &cmd.redirects {
        let Some(target) = &r.target else { continue };
        match r.kind {
            RedirKind::Out => {
                let kind = if r.append {
                    WriteKind::Append
                } else if prints_nothing {
                    WriteKind::Truncate
                } else {
                    WriteKind::Overwrite
                };
                let source = match (prints_nothing, r.fd) {
                    (true, _) => Source::Empty,
                    (false, None | Some(1)) => Source::Output,
                    (false, _) => Source::Unknown,
                };
                e.writes.push(Write {
                    target: target.clone(),
                    kind,
                    source,
                });
                e.paths.push((target.clone(), Access::Write));
            }
            RedirKind::In => e.paths.push((target.clone(), Access::Read)),
            RedirKind::HereDoc(_) | RedirKind::HereString => {}
        }
    }
}

/// Whether the tool's in-place spelling is on this command line.
fn edits_in_place(spelling: InPlace, args: &[Word], p: &Parsed) -> bool {
    match spelling {
        InPlace::Always => true,
        InPlace::Flag {
            short,
            long,
            value_letters,
        } => args.iter().filter_map(Word::literal).any(|t| {
            if let Some(l) = t.strip_prefix("--") {
                return long.is_some_and(|long| l == long || l.starts_with(&format!("{long}=")));
            }
            t.starts_with('-')
                && t.chars()
                    .skip(1)
                    .take_while(|c| !value_letters.contains(*c))
                    .any(|c| c == short)
        }),
        InPlace::Load { options, values } => p
            .values
            .iter()
            .any(|(k, v)| options.contains(&k.as_str()) && values.contains(&v.as_str())),
    }
}

/// The operands that name files: positionals without a leading pattern or script.
fn file_operands(tool: Option<&Tool>, p: &Parsed) -> Vec<usize> {
    let mut positionals = p.positionals.clone();
    if let Some(unless) = tool.and_then(|t| t.pattern_first)
        && p.value(unless).is_none()
        && !positionals.is_empty()
    {
        positionals.remove(0);
    }
    positionals
}

fn content_writes(cmd: &Cmd, tool: &Tool, args: &[Word], p: &Parsed, e: &mut Effects) {
    let operands = file_operands(Some(tool), p);
    let write = |target: &Word, kind, source| Write {
        target: target.clone(),
        kind,
        source,
    };
    if let Some(spelling) = tool.in_place
        && edits_in_place(spelling, args, p)
    {
        e.in_place = true;
        e.writes.extend(
            operands
                .iter()
                .map(|&i| write(&args[i], WriteKind::Overwrite, Source::Unknown)),
        );
    }
    match tool.role {
        Role::Rewrites => {
            let appends = tool
                .append_opts
                .iter()
                .any(|o| args.iter().any(|a| a.is(o)));
            // `tee FILE < /dev/null` writes nothing into FILE: a truncation.
            let empty_input = cmd.redirects.iter().any(|r| {
                r.kind == RedirKind::In && r.target.as_ref().is_some_and(|t| t.is("/dev/null"))
            });
            let source = if tool.from_stdin {
                Source::Input
            } else {
                Source::Unknown
            };
            let (kind, source) = match (appends, empty_input && tool.from_stdin) {
                (true, _) => (WriteKind::Append, source),
                (false, true) => (WriteKind::Truncate, Source::Empty),
                (false, false) => (WriteKind::Overwrite, source),
            };
            e.writes.extend(
                operands
                    .iter()
                    .map(|&i| write(&args[i], kind, source.clone())),
            );
        }
        Role::Truncates => e.writes.extend(
            operands
                .iter()
                .map(|&i| write(&args[i], WriteKind::Truncate, Source::Empty)),
        ),
        Role::Copies => {
            let first = operands.first().map(|&i| &args[i]);
            let (kind, source) = match first {
                Some(f) if f.is("/dev/null") => (WriteKind::Truncate, Source::Empty),
                Some(f) if remote_operand(f) => (WriteKind::Overwrite, Source::Fetched),
                Some(f) if operands.len() == 2 => (WriteKind::Overwrite, Source::CopyOf(f.clone())),
                _ => (WriteKind::Overwrite, Source::Unknown),
            };
            if operands.len() >= 2
                && let Some(&last) = operands.last()
            {
                match into_directory(cmd, &args[last]) {
                    // `cp a b dir/`, `scp host:x .`: each source lands in the directory
                    // under its own name.
                    Some(dir) => {
                        for &i in &operands[..operands.len() - 1] {
                            let Some(name) = args[i]
                                .literal()
                                .and_then(|t| t.rsplit(['/', ':']).next().map(str::to_owned))
                                .filter(|n| !n.is_empty())
                            else {
                                continue;
                            };
                            let source = match &source {
                                Source::Fetched => Source::Fetched,
                                _ if kind == WriteKind::Truncate => Source::Empty,
                                _ => Source::CopyOf(args[i].clone()),
                            };
                            e.writes.push(write(
                                &Word::lit(&format!("{dir}/{name}")),
                                kind,
                                source,
                            ));
                        }
                    }
                    None => e.writes.push(write(&args[last], kind, source.clone())),
                }
            }
            if let Some(dir) = p.value(&["-t", "--target-directory"]) {
                e.writes.push(write(&Word::lit(dir), kind, source));
            }
        }
        Role::Data | Role::Reads | Role::Modifies | Role::Verbs => {}
    }
    let source = if tool.fetches.is_some() {
        Source::Fetched
    } else {
        Source::Unknown
    };
    for target in option_words(args, p, tool.writes_to) {
        e.writes
            .push(write(&target, WriteKind::Overwrite, source.clone()));
    }
    if let Some(fetch) = tool.fetches {
        let named = !option_words(args, p, tool.writes_to).is_empty();
        let by_url = fetch.saves_by_default
            || fetch.url_name_flags.iter().any(|f| {
                f.strip_prefix("--").map_or_else(
                    || p.shorts.contains(&f.chars().nth(1).unwrap_or(' ')),
                    |l| p.has_long(l),
                )
            });
        if by_url && !named {
            for url in p.positionals.iter().filter_map(|&i| args[i].literal()) {
                if let Some(name) = url_file_name(&url) {
                    e.writes.push(write(
                        &Word::lit(name),
                        WriteKind::Overwrite,
                        Source::Fetched,
                    ));
                }
            }
        }
    }
}

/// The directory a copy's destination names, when it is one: `.`, `dir/`, or an existing
/// directory.
fn into_directory(cmd: &Cmd, dest: &Word) -> Option<String> {
    let t = dest.literal()?;
    let is_dir = t == "."
        || t == ".."
        || t.ends_with('/')
        || cmd
            .cwd
            .exact()
            .is_some_and(|cwd| crate::disk::is_real_dir(&cwd.join(&t)));
    is_dir.then(|| t.trim_end_matches('/').to_owned())
}

/// `host:path`, `user@host:path` or a URL: a file on another machine.
fn remote_operand(word: &Word) -> bool {
    let Some(t) = word.literal() else {
        return false;
    };
    t.contains("://")
        || t.split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
}

/// The file a download of `url` is saved as (its last path segment).
pub(crate) fn url_file_name(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let path = rest.split(['?', '#']).next()?;
    let (_, name) = path.rsplit_once('/')?;
    (!name.is_empty()).then_some(name)
}

/// The directory a symbolic link is made in, relative to the working directory, when it is
/// not the working directory itself: `-t DIR`, the last operand when it is a directory (or
/// ends in `/`), else the last operand's parent.
fn link_directory(cmd: &Cmd, args: &[Word], p: &Parsed, positionals: &[usize]) -> Option<String> {
    if let Some(dir) = p.value(&["-t", "--target-directory"]) {
        return Some(dir.trim_end_matches('/').to_owned());
    }
    let [.., _, last] = positionals else {
        return None;
    };
    let link = args[*last].literal()?;
    let is_dir = link.ends_with('/')
        || cmd
            .cwd
            .exact()
            .is_some_and(|cwd| crate::disk::is_real_dir(&cwd.join(&link)));
    if is_dir {
        return Some(link.trim_end_matches('/').to_owned());
    }
    let (parent, _) = link.rsplit_once('/')?;
    Some(parent.to_owned())
}

/// Whether an option's value reads as a path: absolute, from a home directory, climbing, or
/// with a directory part.
fn path_like(v: &str) -> bool {
    v.starts_with('/') || v.starts_with('~') || v.starts_with('.') || v.contains('/')
}

/// The paths among the operands and option values, with how they are used.
fn operand_paths(cmd: &Cmd, tool: Option<&Tool>, args: &[Word], p: &Parsed, e: &mut Effects) {
    let role = tool.map_or(Role::Reads, |t| t.role);
    let writer = matches!(
        role,
        Role::Modifies | Role::Rewrites | Role::Copies | Role::Truncates
    ) || e.in_place
        || tool
            .and_then(|t| t.writes_if)
            .is_some_and(|(short, long)| p.has(short, long));
    let mut positionals = file_operands(tool, p);
    if let Some(starts) = tool.and_then(|t| t.operands) {
        positionals.clear();
        e.paths
            .extend(starts(args).into_iter().map(|w| (w, Access::Read)));
    }
    // Messages and titles are text.
    if let Some(tool) = tool
        && !tool.text_opts.is_empty()
    {
        let texts: Vec<usize> = args
            .iter()
            .enumerate()
            .filter(|(_, a)| tool.text_opts.iter().any(|o| a.is(o)))
            .map(|(i, _)| i + 1)
            .collect();
        positionals.retain(|i| !texts.contains(i));
    }
    let last = positionals.last().copied();
    let link_dir = tool
        .and_then(|t| t.symbolic)
        .filter(|&(short, long)| p.has(short, long))
        .and_then(|_| link_directory(cmd, args, p, &positionals));
    for &i in &positionals {
        let access = if writer && (role != Role::Copies || Some(i) == last) {
            Access::Write
        } else {
            Access::Read
        };
        let word = match (&link_dir, args[i].literal()) {
            (Some(dir), Some(target))
                if Some(i) != last && !target.starts_with('/') && !target.starts_with('~') =>
            {
                Word::lit(&format!("{dir}/{target}"))
            }
            _ => args[i].clone(),
        };
        e.paths.push((word, access));
    }
    if let Some(tool) = tool {
        for v in option_values(args, tool.reads_from) {
            e.paths.push((v, Access::Read));
        }
        for v in option_words(args, p, tool.writes_to) {
            e.paths.push((v, Access::Write));
        }
    }
    let write_opt = |opt: &str| {
        matches!(opt, "-o" | "--output" | "-t" | "--target-directory")
            || tool.is_some_and(|t| t.writes_to.contains(&opt))
    };
    for a in args {
        let Some(t) = a.literal() else { continue };
        // `--output=/x`, `DESTDIR=/x`, `name=@file`.
        if let Some((k, v)) = t.split_once('=')
            && !k.is_empty()
        {
            if let Some(file) = v.strip_prefix('@') {
                if !file.is_empty() {
                    e.paths.push((value_word(file), Access::Read));
                }
            } else if path_like(v) && !v.contains("://") {
                let access = if writer || write_opt(k) || write_opt(&format!("{k}=")) {
                    Access::Write
                } else {
                    Access::Read
                };
                e.paths.push((value_word(v), access));
            }
            continue;
        }
        // `@file`: an upload that reads the file (`curl -d @x`, `http POST u @x`); and
        // `name@/path` (`--data-urlencode q@/etc/x`, httpie's `field@/path`).
        if let Some(file) = t.strip_prefix('@')
            && !file.is_empty()
            && role != Role::Verbs
        {
            e.paths.push((value_word(file), Access::Read));
            continue;
        }
        if let Some((name, file)) = t.split_once('@')
            && !name.is_empty()
            && !name.contains('/')
            && (file.starts_with('/') || file.starts_with('~') || file.starts_with("../"))
        {
            e.paths.push((value_word(file), Access::Read));
            continue;
        }
        // `-o/tmp/x`, `-I/etc`, `-L../lib`: a short option with a path attached.
        let mut chars = t.chars();
        if let (Some('-'), Some(letter), Some(_)) = (chars.next(), chars.next(), chars.next())
            && letter.is_ascii_alphabetic()
        {
            let v = &t[2..];
            if v.starts_with('/') || v.starts_with('~') || v.starts_with("..") {
                let access = if letter == 'o' || (letter == 't' && writer) {
                    Access::Write
                } else {
                    Access::Read
                };
                e.paths.push((value_word(v), access));
            }
        }
    }
    for (opt, v) in &p.values {
        if path_like(v) && !v.contains("://") {
            let access = if write_opt(opt) {
                Access::Write
            } else {
                Access::Read
            };
            e.paths.push((value_word(v), access));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(args: &[&str], names: &[&str]) -> Vec<String> {
        let words: Vec<Word> = args.iter().map(|a| Word::lit(a)).collect();
        option_values(&words, names).map(|w| w.text()).collect()
    }

    #[test]
    fn option_values_in_every_spelling() {
        assert_eq!(values(&["-o", "a", "-ob"], &["-o"]), ["a", "b"]);
        assert_eq!(
            values(&["--output", "a", "--output=b"], &["--output"]),
            ["a", "b"]
        );
        assert_eq!(values(&["if=x", "of=/dev/sda"], &["of="]), ["/dev/sda"]);
        assert_eq!(values(&["-fprint", "f"], &["-fprint"]), ["f"]);
    }

    #[test]
    fn downloads_are_named_after_the_url() {
        assert_eq!(url_file_name("https://x.org/a/i.sh?x=1"), Some("i.sh"));
        assert_eq!(url_file_name("https://x.org/"), None);
    }
}
