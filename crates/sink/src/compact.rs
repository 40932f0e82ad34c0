//! The compact view: an output that fits the window, with the lines a model does not need
//! folded into counted markers (contract §3, "The compact view").
//!
//! The output is recognised by what it is — from the command (`outputs::PROGRAMS`) and from
//! its own lines (how many a folding rule knows) — and only reports and logs are folded:
//! a listing, a file, a diff, search hits or a table the model asked for are shown whole.
//! Folded are
//! - runs of lines of one folding group (`outputs::FOLDS`: passing tests, progress lines,
//!   compile steps), into `[... N lines of GROUP folded ...]`;
//! - runs of lines that differ only in numbers, ids and paths ([`crate::template`]), into their
//!   first line and `[... N more lines like line L omitted ...]`.
//!
//! Never folded: a salient line (the window's patterns: errors, failures, warnings…) with the
//! block around it, a summary or verdict (`outputs::KEEP`), the last lines of the output, a
//! line too long to judge. A view that would save little is not made: the raw text is shown.

use std::sync::LazyLock;

// Byte regexes with ASCII semantics: Unicode word boundaries would leave the lazy DFA.
use regex::bytes::{Regex, RegexBuilder};

use crate::outputs::{
    BULKY_DIRECTORIES, FOLDS, KEEP, KEYWORDS, Kind, OPTIONS, PASS_THROUGH, PROGRAMS,
    RUN_SUBCOMMANDS, RUNNERS,
};
use crate::salient::{MATCH_CAP, Matcher};
use crate::template;
use crate::window::{FoldSummary, View, ViewPart};

/// Consecutive lines of one group folded, at least.
const GROUP_RUN: usize = 3;
/// Consecutive lines of one template folded into the first of them, at least.
const TEMPLATE_RUN: usize = 6;
/// Lines above and below a kept line that stay with it: its header, its frames.
const CONTEXT_ABOVE: usize = 1;
const BLOCK_BELOW: usize = 16;
/// The last lines of an output stay: the last line of a build says how it ended.
const LAST_LINES: usize = 2;
/// A compact view is made when it saves at least this many bytes and this share of them: a
/// marker and the notice cost a few dozen tokens.
const MIN_SAVED_BYTES: usize = 1024;
const MIN_SAVED_SHARE: f64 = 0.15;
/// Outputs smaller than this are shown as they are, without looking.
const MIN_BYTES: usize = 2048;
/// Share of an unknown command's lines a folding rule must know for its output to be taken
/// for a report and its repeated templates folded.
const EVIDENCE_SHARE: f64 = 0.2;

/// The rules compiled: each as one regex of alternatives (a set that reports every match it
/// finds costs several times more on every line).
struct Rules {
    /// Each folding group's rules, in [`FOLDS`] order: a line is tried against the group of the
    /// line above it first (a report's lines come in runs).
    groups: Vec<Regex>,
    keep: Regex,
}

/// One regex matching where any of `rules` does.
fn any_of(rules: &[&str]) -> Regex {
    let any: Vec<String> = rules.iter().map(|r| format!("(?:{r})")).collect();
    RegexBuilder::new(&any.join("|"))
        .unicode(false)
        .build()
        .expect("the folding rules compile")
}

static RULES: LazyLock<Rules> = LazyLock::new(|| Rules {
    groups: FOLDS.iter().map(|(_, _, rules)| any_of(rules)).collect(),
    keep: any_of(KEEP),
});

/// What the command's output is, from its words: the last simple command (of a list, of a
/// pipeline, in a subshell) that is not a pass-through (`| tee log`, `| head`), its runners and
/// their options skipped (`sudo -u u`, `timeout 60`, `uv run`), its program and subcommand
/// looked up in [`PROGRAMS`].
pub(crate) fn kind_of_command(command: &str) -> Kind {
    for stage in agent_exec_normalize::simple_commands(command).iter().rev() {
        let words: Vec<String> = stage
            .split_whitespace()
            .map(|w| w.replace(['\'', '"'], ""))
            .collect();
        let Some((program, rest)) = program_of(&words) else {
            continue;
        };
        // `tee FILE` passes its input on; `cat FILE` shows a file, `cat` alone passes it on.
        if program == "tee"
            || PASS_THROUGH.contains(&program) && rest.iter().all(|w| w.starts_with('-'))
        {
            continue;
        }
        let known = |name: &str| {
            PROGRAMS
                .iter()
                .find(|(names, _)| names.contains(&name))
                .map(|(_, kind)| *kind)
        };
        let with_sub = subcommand(program, rest).and_then(|s| known(&format!("{program} {s}")));
        return with_sub.or_else(|| known(program)).unwrap_or(Kind::Unknown);
    }
    Kind::Unknown
}

/// The program a simple command runs and the words after it: past assignments, redirections,
/// keywords, runners with their options (`timeout`'s duration too) and run subcommands
/// (`uv run X` runs X); `python -m X` runs X. `None` for a command with no program (`fi`).
fn program_of(words: &[String]) -> Option<(&str, &[String])> {
    let mut i = 0;
    loop {
        while words.get(i).is_some_and(|w| {
            is_assignment(w)
                || w.starts_with(['<', '>'])
                || KEYWORDS.contains(&w.as_str())
                || w.bytes().next().is_some_and(|b| b.is_ascii_digit()) && w.contains('>')
        }) {
            i += 1;
        }
        let word = base(words.get(i)?);
        let rest = &words[i + 1..];
        if RUNNERS.contains(&word) {
            let skip = options_end(word, rest);
            // `timeout 60 make`: its duration.
            let skip = skip
                + usize::from(
                    word == "timeout"
                        && rest
                            .get(skip)
                            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit())),
                );
            let after = &rest[skip.min(rest.len())..];
            let next = after.iter().position(|w| !is_assignment(w));
            match next {
                Some(n) => {
                    i += 1 + skip + n;
                    continue;
                }
                // A runner alone is the program (`env`, `time`).
                None => return Some((word, rest)),
            }
        }
        if let Some(sub) = subcommand(word, rest)
            && RUN_SUBCOMMANDS.contains(&format!("{word} {sub}").as_str())
        {
            let at = rest.iter().position(|w| w == sub).unwrap_or(0);
            i += 2 + at;
            continue;
        }
        // `python -m pytest` is pytest.
        if word.starts_with("python")
            && let Some(m) = rest.iter().position(|w| w == "-m")
            && let Some(module) = rest.get(m + 1)
        {
            return Some((base(module), &rest[m + 2..]));
        }
        return Some((word, rest));
    }
}

/// How many of `rest` are `program`'s options (and their values) before its first operand.
fn options_end(program: &str, rest: &[String]) -> usize {
    let takes_value = OPTIONS
        .iter()
        .find(|(p, _)| *p == program)
        .map_or(&[][..], |(_, o)| *o);
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        if !w.starts_with('-') || w == "-" {
            break;
        }
        i += 1 + usize::from(takes_value.contains(&w.as_str()));
        if w == "--" {
            break;
        }
    }
    i
}

/// A program's subcommand: its first word that is not an option or an option's value.
fn subcommand<'a>(program: &str, rest: &'a [String]) -> Option<&'a str> {
    rest.get(options_end(program, rest)).map(String::as_str)
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// What each line is to the folding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Shown whatever else it matches.
    Kept,
    /// Of a folding group (an index into [`FOLDS`]).
    Group(usize),
    /// Neither: folded only in a run of its template.
    Other,
}

/// The compact view of `text` (the whole sanitized output, a view that fits), or `None` when
/// it would not save enough to be worth a marker.
pub(crate) fn fold(text: &str, command: &str, salient: Option<&Matcher>) -> Option<View> {
    if text.len() < MIN_BYTES {
        return None;
    }
    let kind = kind_of_command(command);
    if !kind.folds() {
        return None;
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let roles = roles(&lines, kind, salient);
    let known = roles.iter().filter(|r| matches!(r, Role::Group(_))).count();
    // Repeated templates are folded in what is known to be a report or a log.
    let templates = kind.folds_templates()
        || kind == Kind::Unknown && known as f64 >= lines.len() as f64 * EVIDENCE_SHARE;
    // Templates, for the lines a run of them may fold (others never meet one).
    let keys: Vec<u64> = lines
        .iter()
        .zip(&roles)
        .map(|(l, role)| match role {
            // A line without words (blank, a rule) is never a template's example.
            Role::Other if templates && l.bytes().any(|b| b.is_ascii_alphanumeric()) => {
                template::key(l.trim_end_matches('\n').as_bytes())
            }
            _ => 0,
        })
        .collect();
    let mut parts: Vec<ViewPart> = Vec::new();
    let mut summary = FoldSummary::default();
    let mut shown = String::new();
    let mut shown_from = 1u64;
    let mut i = 0;
    while i < lines.len() {
        let run_end = |same: &dyn Fn(usize) -> bool| {
            let mut j = i;
            while j < lines.len() && same(j) {
                j += 1;
            }
            j
        };
        let end = match roles[i] {
            Role::Group(g) => run_end(&|j| roles[j] == Role::Group(g)),
            _ => i + 1,
        };
        if let Role::Group(g) = roles[i]
            && end - i >= GROUP_RUN
        {
            flush(&mut parts, &mut shown, shown_from);
            let bytes: usize = lines[i..end].iter().map(|l| l.len()).sum();
            parts.push(ViewPart::Folded {
                first_line: i as u64 + 1,
                lines: (end - i) as u64,
                what: FOLDS[g].0.to_owned(),
            });
            summary.add(FOLDS[g].0, (end - i) as u64, bytes as u64);
            i = end;
            shown_from = i as u64 + 1;
            continue;
        }
        let foldable = templates && roles[i] == Role::Other && keys[i] != 0;
        let same_end = if foldable {
            run_end(&|j| roles[j] == Role::Other && keys[j] == keys[i])
        } else {
            i + 1
        };
        if same_end - i >= TEMPLATE_RUN {
            shown.push_str(lines[i]);
            flush(&mut parts, &mut shown, shown_from);
            let more = (same_end - i - 1) as u64;
            parts.push(ViewPart::Similar {
                line: i as u64 + 1,
                count: more,
            });
            let bytes: usize = lines[i + 1..same_end].iter().map(|l| l.len()).sum();
            summary.add("lines like a line shown", more, bytes as u64);
            i = same_end;
            shown_from = i as u64 + 1;
            continue;
        }
        shown.push_str(lines[i]);
        i += 1;
    }
    flush(&mut parts, &mut shown, shown_from);
    let saved = summary.bytes as usize;
    if saved < MIN_SAVED_BYTES || (saved as f64) < text.len() as f64 * MIN_SAVED_SHARE {
        return None;
    }
    Some(view_of(parts, summary))
}

/// The role of every line: kept (salient, a summary, their blocks, the last lines), of a
/// folding group, or other.
fn roles(lines: &[&str], kind: Kind, salient: Option<&Matcher>) -> Vec<Role> {
    let rules = &*RULES;
    // The groups that fold in this kind of output.
    let applies: Vec<bool> = FOLDS
        .iter()
        .map(|(_, kinds, _)| kinds.contains(&kind))
        .collect();
    let lines: Vec<&[u8]> = lines
        .iter()
        .map(|l| l.trim_end_matches('\n').as_bytes())
        .collect();
    let mut roles = vec![Role::Other; lines.len()];
    let mut keeps = Vec::new();
    for (n, bytes) in lines.iter().enumerate() {
        if bytes.len() > MATCH_CAP
            || rules.keep.is_match(bytes)
            || salient.is_some_and(|m| m.is_salient(bytes))
        {
            keeps.push(n);
            continue;
        }
        let previous = n.checked_sub(1).and_then(|p| match roles[p] {
            Role::Group(g) => Some(g),
            _ => None,
        });
        let group = previous
            .filter(|&g| rules.groups[g].is_match(bytes))
            .or_else(|| (0..FOLDS.len()).find(|&g| applies[g] && rules.groups[g].is_match(bytes)));
        roles[n] = group.map_or(Role::Other, Role::Group);
    }
    let mut kept = vec![false; lines.len()];
    for n in keeps {
        kept[n] = true;
        for above in &mut kept[n.saturating_sub(CONTEXT_ABOVE)..n] {
            *above = true;
        }
        // Its block: the continuation lines below (frames, notes, an assertion's diff) — up to
        // a sibling: a line of a folding group no deeper than it (the next test's report).
        let indent = indentation(lines[n]);
        for (below, line) in lines.iter().enumerate().skip(n + 1).take(BLOCK_BELOW) {
            let sibling = indentation(line) <= indent && matches!(roles[below], Role::Group(_));
            if sibling || !crate::salient::is_continuation(line) {
                break;
            }
            kept[below] = true;
        }
    }
    let last = lines.len().saturating_sub(LAST_LINES);
    for (n, role) in roles.iter_mut().enumerate() {
        if kept[n] || n >= last {
            *role = Role::Kept;
        }
    }
    roles
}

/// Runs of entries of one directory shorter than this are never folded: a marker says no less.
const DIRECTORY_RUN: usize = 3;
/// A listing folded by directory must show at least this share of its lines; past it, the
/// window's head and tail say as much.
const LISTING_SHOWN_SHARE: f64 = 0.2;

/// An output the model asked to read that is too long for the window (`text`, the whole of
/// it), folded so that the rest fits `max_bytes` — the largest runs first, every line shown
/// whole, a salient line never:
/// - a listing by directory: `[... 812 entries in ./src/gen/ folded ...]`;
/// - a table of state (`ps`, `docker ps`) by template: the first row of a run of rows alike
///   but for numbers, ids and paths, then `[... 449 more lines like line 12 omitted ...]`.
///
/// `None` for other outputs, when it cannot fit, or when too little would be left.
pub(crate) fn fold_to_fit(
    text: &str,
    kind: Kind,
    max_bytes: usize,
    salient: &Matcher,
) -> Option<View> {
    let (min_run, by_directory) = match kind {
        Kind::Listing => (DIRECTORY_RUN, true),
        Kind::Table => (TEMPLATE_RUN, false),
        _ => return None,
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // The directory of the path a line ends with, as a range of the line.
    let directory = |line: &str| -> Option<std::ops::Range<usize>> {
        let trimmed = line.trim_end();
        let path = trimmed.rsplit(char::is_whitespace).next()?;
        let start = trimmed.len() - path.len();
        path.rfind('/').map(|i| start..start + i + 1)
    };
    // Runs of consecutive lines of one key (their directory, or their template); a salient
    // line, or one with no key, is a run of its own that is never folded.
    let key_of = |line: &str| -> Option<u64> {
        let bytes = line.trim_end_matches('\n').as_bytes();
        // A line too long to judge is never folded, as a salient one.
        if bytes.len() > MATCH_CAP || salient.is_salient(bytes) {
            return None;
        }
        if by_directory {
            directory(line).map(|dir| template::exact_key(&line.as_bytes()[dir]))
        } else {
            Some(template::key(bytes))
        }
    };
    let mut runs: Vec<Run> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let key = key_of(line);
        match runs.last_mut() {
            Some(run) if key.is_some() && run.key == key => run.end = n + 1,
            _ => runs.push(Run {
                start: n,
                end: n + 1,
                key,
                bytes: 0,
                folded: false,
            }),
        }
    }
    for run in &mut runs {
        run.bytes = lines[run.start..run.end].iter().map(|l| l.len()).sum();
    }
    let mut order: Vec<usize> = (0..runs.len())
        .filter(|&r| runs[r].key.is_some() && runs[r].end - runs[r].start >= min_run)
        .collect();
    // Bulky directories first (dependencies, build output, fixtures), then the largest runs.
    let bulky = |run: &Run| {
        by_directory
            && directory(lines[run.start]).is_some_and(|dir| {
                lines[run.start][dir]
                    .split('/')
                    .any(|part| BULKY_DIRECTORIES.contains(&part))
            })
    };
    order.sort_by_key(|&r| {
        let run = &runs[r];
        std::cmp::Reverse((bulky(run), run.end - run.start, run.bytes))
    });
    let mut total = text.len();
    for r in order {
        if total <= max_bytes {
            break;
        }
        let run = &mut runs[r];
        run.folded = true;
        // What stays of it: a marker line (as core draws it, with room for its numbers), and
        // the first line of a run of one template.
        let count = (run.end - run.start).to_string().len();
        let stays = if by_directory {
            let dir = directory(lines[run.start]).map_or(0, |d| d.len());
            "[...  entries in  folded ...]\n".len() + dir + count
        } else {
            let line = (run.end + 1).to_string().len();
            lines[run.start].len()
                + "[...  more lines like line  omitted ...]\n".len()
                + count
                + line
        };
        total = total.saturating_sub(run.bytes) + stays;
    }
    let folded_lines: usize = runs
        .iter()
        .filter(|r| r.folded)
        .map(|r| r.end - r.start - usize::from(!by_directory))
        .sum();
    let shown_lines = lines.len() - folded_lines;
    if total > max_bytes || (shown_lines as f64) < lines.len() as f64 * LISTING_SHOWN_SHARE {
        return None;
    }
    let mut parts = Vec::new();
    let mut summary = FoldSummary::default();
    let mut shown = String::new();
    let mut shown_from = 1u64;
    for run in &runs {
        if !run.folded {
            lines[run.start..run.end]
                .iter()
                .for_each(|l| shown.push_str(l));
            continue;
        }
        if by_directory {
            flush(&mut parts, &mut shown, shown_from);
            let line = lines[run.start];
            let dir = directory(line).map_or("", |dir| &line[dir]);
            let count = (run.end - run.start) as u64;
            parts.push(ViewPart::Folded {
                first_line: run.start as u64 + 1,
                lines: count,
                what: format!("entries in {dir}"),
            });
            summary.add("entries of directories", count, run.bytes as u64);
        } else {
            shown.push_str(lines[run.start]);
            flush(&mut parts, &mut shown, shown_from);
            let count = (run.end - run.start - 1) as u64;
            parts.push(ViewPart::Similar {
                line: run.start as u64 + 1,
                count,
            });
            let first = lines[run.start].len() as u64;
            summary.add("lines like a line shown", count, run.bytes as u64 - first);
        }
        shown_from = run.end as u64 + 1;
    }
    flush(&mut parts, &mut shown, shown_from);
    let mut view = view_of(parts, summary);
    view.truncated = true;
    view.truncated_by = Some(crate::TruncatedBy::Bytes);
    Some(view)
}

/// Whether an output of this kind too long for the window is folded to fit ([`fold_to_fit`]).
pub(crate) fn folds_to_fit(kind: Kind) -> bool {
    matches!(kind, Kind::Listing | Kind::Table)
}

/// A run of lines of one key, for [`fold_to_fit`].
struct Run {
    start: usize,
    end: usize,
    key: Option<u64>,
    bytes: usize,
    folded: bool,
}

/// Leading spaces and tabs.
fn indentation(line: &[u8]) -> usize {
    line.iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

fn flush(parts: &mut Vec<ViewPart>, shown: &mut String, first_line: u64) {
    if !shown.is_empty() {
        parts.push(ViewPart::Shown {
            first_line,
            text: std::mem::take(shown),
        });
    }
}

fn view_of(parts: Vec<ViewPart>, folded: FoldSummary) -> View {
    let mut shown_ranges: Vec<[u64; 2]> = Vec::new();
    let (mut output_bytes, mut output_lines) = (0u64, 0u64);
    for part in &parts {
        if let ViewPart::Shown { first_line, text } = part {
            let lines = text.lines().count() as u64;
            output_bytes += text.len() as u64;
            output_lines += lines;
            let last = first_line + lines.max(1) - 1;
            match shown_ranges.last_mut() {
                Some(r) if r[1] + 1 >= *first_line => r[1] = last,
                _ => shown_ranges.push([*first_line, last]),
            }
        }
    }
    View {
        parts,
        truncated: false,
        truncated_by: None,
        shown_ranges,
        output_bytes,
        output_lines,
        salient_lines: 0,
        omitted: None,
        folded: Some(folded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_known_by_their_program_and_subcommand() {
        let cases = [
            ("cargo test --workspace", Kind::Tests),
            ("cd crates/core && cargo test 2>&1 | tee log", Kind::Tests),
            ("RUST_LOG=debug cargo build --release", Kind::Build),
            ("python3 -m pytest -q tests/", Kind::Tests),
            ("sudo apt-get install -y tree", Kind::Install),
            ("/usr/bin/ls -la", Kind::Listing),
            ("git status --short", Kind::VersionControl),
            ("find . -name '*.rs' | head -50", Kind::Listing),
            ("cargo test | grep FAILED", Kind::Search),
            ("ps aux", Kind::Table),
            ("./run_tests.sh", Kind::Unknown),
            ("npx jest --ci", Kind::Tests),
            // Quotes hold separators; subshells and lists are looked through.
            ("grep -E \"PASSED|FAILED\" pytest.log", Kind::Search),
            ("awk '{print $1; print $2}' test.log", Kind::Content),
            ("sed -n '/Compiling/p;/error/p' build.log", Kind::Content),
            ("(cd x && ls)", Kind::Listing),
            ("if true; then cargo test; fi", Kind::Tests),
            // Runners, their options and durations; run subcommands.
            ("timeout 60 cat build.log", Kind::Content),
            ("sudo -u app cat /var/log/x", Kind::Content),
            ("env A=1 B=2 cat x", Kind::Content),
            ("nice -n 5 make -j8", Kind::Build),
            ("watch -n 1 ls", Kind::Listing),
            ("env", Kind::Table),
            ("uv run pytest -q", Kind::Tests),
            ("uv run python bench.py", Kind::Unknown),
            ("poetry run python -m pytest", Kind::Tests),
            ("cargo run --release", Kind::Unknown),
            ("npm run dev", Kind::Unknown),
            // Options before a subcommand.
            ("git -C repo status", Kind::VersionControl),
            ("git -C repo ls-files", Kind::Listing),
            ("git --no-pager diff HEAD~1", Kind::Content),
            ("git log --oneline -n 50", Kind::Content),
            ("make -C build test", Kind::Tests),
            // Install only when installing.
            ("pip install -r requirements.txt", Kind::Install),
            ("go mod graph", Kind::Unknown),
            ("apt list --installed", Kind::Unknown),
            ("yarn", Kind::Unknown),
        ];
        for (command, kind) in cases {
            assert_eq!(kind_of_command(command), kind, "{command}");
        }
    }
}
