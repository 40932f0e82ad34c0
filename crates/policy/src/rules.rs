//! Configured rules: deny / ask / allow by command prefix or regex, the allow-list mode and
//! denied environment names.

use crate::rule::{Rule, RuleId};
use std::path::Path;

use regex::RegexSet;

use crate::command::program_name;
use crate::command::{Class, Cmd, Finding, join};
use crate::config::{ConfigError, Rules};
use crate::flags::{Parsed, Spec, parse, rule_flags};
use crate::reasons::Reason;
use crate::tools::spec_for;
use crate::words::Word;
use crate::words::glob_match;

/// Shell builtins with no effect outside the shell; they need no allow rule in allow-list
/// mode.
const HARMLESS_BUILTINS: &[&str] = &[
    "cd", "pushd", "popd", "pwd", "true", "false", ":", "echo", "printf", "test", "[", "exit",
    "return", "set", "shopt", "break", "continue", "shift", "wait", "local", "declare", "typeset",
    "readonly", "unset", "export", "type", "hash",
];

/// Git after its subcommand: options permute, `-f` is `--force`.
const GIT_SUB: Spec = Spec {
    aliases: &[("force", 'f')],
    ..Spec::PLAIN
};

/// One prefix rule, pre-parsed.
#[derive(Debug)]
struct Prefix {
    text: String,
    program: String,
    rest: Vec<String>,
    positionals: Vec<String>,
    shorts: Vec<char>,
    longs: Vec<String>,
}

impl Prefix {
    fn new(text: &str) -> Option<Prefix> {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let (program, rest) = tokens.split_first()?;
        let spec = if *program == "git" {
            GIT_SUB
        } else {
            spec_for(program)
        };
        let (shorts, longs) = rule_flags(
            &rest
                .iter()
                .copied()
                .filter(|t| t.starts_with('-'))
                .collect::<Vec<_>>(),
            &spec,
        );
        Some(Prefix {
            text: tokens.join(" "),
            program: (*program).to_owned(),
            rest: rest.iter().map(|t| (*t).to_owned()).collect(),
            positionals: rest
                .iter()
                .filter(|t| !t.starts_with('-'))
                .map(|t| (*t).to_owned())
                .collect(),
            shorts,
            longs,
        })
    }

    fn matches(&self, words: &[Word]) -> bool {
        let Some(first) = words.first() else {
            return false;
        };
        let name_ok = if self.program.contains('/') {
            first.is(&self.program)
        } else {
            program_name(first).is_some_and(|p| p == self.program)
        };
        if !name_ok {
            return false;
        }
        let args = &words[1..];
        // Word for word.
        if args.len() >= self.rest.len() && self.rest.iter().zip(args).all(|(r, a)| a.is(r)) {
            return true;
        }
        // Options in any spelling and position.
        let parsed = command_options(&self.program, args);
        let positionals: Vec<String> = parsed.positionals.iter().map(|&i| args[i].text()).collect();
        positionals.len() >= self.positionals.len()
            && self
                .positionals
                .iter()
                .zip(&positionals)
                .all(|(r, a)| same_operand(r, a))
            && self.shorts.iter().all(|c| parsed.shorts.contains(c))
            && self.longs.iter().all(|l| parsed.longs.contains(l))
    }
}

/// The texts regexes see for one level: as written, and with the program's directory removed.
fn regex_texts(words: &[Word]) -> Vec<String> {
    let written = join(words);
    let bare = words.first().and_then(program_name).map(|name| {
        let mut t = name;
        for a in &words[1..] {
            t.push(' ');
            t.push_str(&a.text());
        }
        t
    });
    std::iter::once(written.clone())
        .chain(bare.filter(|b| *b != written))
        .collect()
}

/// A rule's operand and a command's: the same text, or the same path once normalised
/// (`/tmp/` and `//tmp` are `/tmp`).
fn same_operand(rule: &str, arg: &str) -> bool {
    rule == arg
        || (rule.starts_with('/')
            && arg.starts_with('/')
            && crate::paths::normalize(Path::new("/"), Path::new(rule))
                == crate::paths::normalize(Path::new("/"), Path::new(arg)))
}

/// Options of a command for rule matching; git's global options are skipped.
fn command_options(program: &str, args: &[Word]) -> Parsed {
    if program != "git" {
        return parse(args, &spec_for(program));
    }
    let globals = parse(args, &spec_for("git"));
    let Some(&sub) = globals.positionals.first() else {
        return globals;
    };
    let mut rest = parse(&args[sub + 1..], &GIT_SUB);
    for p in &mut rest.positionals {
        *p += sub + 1;
    }
    rest.positionals.insert(0, sub);
    rest
}

/// The compiled rules.
#[derive(Debug)]
pub(crate) struct Compiled {
    deny: Vec<Prefix>,
    ask: Vec<Prefix>,
    allow: Vec<Prefix>,
    deny_re: (RegexSet, Vec<String>),
    ask_re: (RegexSet, Vec<String>),
    allow_re: (RegexSet, Vec<String>),
    denied_env: Vec<String>,
    allowlist: bool,
}

/// What the rules say about one command.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RuleMatch {
    Found(Finding),
    /// An allow rule matched (interception does not apply then).
    Allowed(String),
    None,
}

fn prefixes(field: &'static str, list: &[String]) -> Result<Vec<Prefix>, ConfigError> {
    list.iter()
        .enumerate()
        .map(|(index, t)| Prefix::new(t).ok_or(ConfigError::EmptyRule { field, index }))
        .collect()
}

fn regexes(field: &'static str, list: &[String]) -> Result<(RegexSet, Vec<String>), ConfigError> {
    for (index, pattern) in list.iter().enumerate() {
        // Compile one by one so the error names the rule.
        regex::RegexBuilder::new(pattern)
            .size_limit(1 << 22)
            .build()
            .map_err(|source| ConfigError::Regex {
                field,
                index,
                pattern: pattern.clone(),
                source: Box::new(source),
            })?;
    }
    let set = regex::RegexSetBuilder::new(list)
        .size_limit(1 << 24)
        .build()
        .map_err(|source| ConfigError::Regex {
            field,
            index: 0,
            pattern: list.join(" | "),
            source: Box::new(source),
        })?;
    Ok((set, list.to_vec()))
}

impl Compiled {
    pub(crate) fn new(rules: &Rules, allowlist: bool) -> Result<Compiled, ConfigError> {
        for (index, name) in rules.denied_env.iter().enumerate() {
            if name.trim().is_empty() {
                return Err(ConfigError::EmptyRule {
                    field: "denied_env",
                    index,
                });
            }
        }
        Ok(Compiled {
            deny: prefixes("deny", &rules.deny)?,
            ask: prefixes("ask", &rules.ask)?,
            allow: prefixes("allow", &rules.allow)?,
            deny_re: regexes("deny_regex", &rules.deny_regex)?,
            ask_re: regexes("ask_regex", &rules.ask_regex)?,
            allow_re: regexes("allow_regex", &rules.allow_regex)?,
            denied_env: rules.denied_env.clone(),
            allowlist,
        })
    }

    /// Deny, then ask, then allow; in allow-list mode an unmatched command is denied.
    pub(crate) fn check(&self, cmd: &Cmd) -> RuleMatch {
        let levels: Vec<&[Word]> = (0..cmd.unwrapped.levels.len())
            .map(|i| cmd.level(i))
            .filter(|w| !w.is_empty())
            .collect();
        if levels.is_empty() {
            return RuleMatch::None;
        }
        // Regexes see each level as written and with the program's directory removed
        // (`/bin/rm -rf x` is also `rm -rf x`).
        let texts: Vec<String> = levels.iter().flat_map(|w| regex_texts(w)).collect();
        let shown = cmd.display();
        if let Some(f) = first_match(&self.deny, &self.deny_re, &levels, &texts) {
            return RuleMatch::Found(Finding::deny(
                Class::ConfigDeny,
                Rule::configured(
                    if f.0 == "regex" {
                        RuleId::ConfigDenyRegex
                    } else {
                        RuleId::ConfigDenyPrefix
                    },
                    f.1.clone(),
                ),
                Reason::ConfigDeny {
                    command: &shown,
                    rule: &f.1,
                    regex: f.0 == "regex",
                }
                .text(),
            ));
        }
        if let Some(f) = first_match(&self.ask, &self.ask_re, &levels, &texts) {
            return RuleMatch::Found(Finding::ask(
                Class::ConfigAsk,
                Rule::configured(
                    if f.0 == "regex" {
                        RuleId::ConfigAskRegex
                    } else {
                        RuleId::ConfigAskPrefix
                    },
                    f.1.clone(),
                ),
                Reason::ConfigAsk {
                    command: &shown,
                    rule: &f.1,
                    regex: f.0 == "regex",
                }
                .text(),
            ));
        }
        let inner = levels[levels.len() - 1];
        let allowed = first_match(&self.allow, &self.allow_re, &[inner], &regex_texts(inner));
        if !self.allowlist {
            return allowed.map_or(RuleMatch::None, |a| RuleMatch::Allowed(allowed_rule(&a)));
        }
        let program = cmd.program().unwrap_or_default();
        // A builtin that writes a file (`echo x > /etc/hosts`) is not harmless.
        let writes_file = cmd.stdout_files().any(|w| !w.is("/dev/null"))
            || cmd.redirects.iter().any(|r| {
                r.kind == crate::command::RedirKind::Out
                    && r.target.as_ref().is_some_and(|w| !w.is("/dev/null"))
            });
        let inner_ok =
            allowed.is_some() || (HARMLESS_BUILTINS.contains(&program.as_str()) && !writes_file);
        // Privileged wrappers (`sudo`, `doas` ...) must be allowed themselves.
        let wrapper_ok = cmd.unwrapped.privileged.iter().all(|&i| {
            let w = cmd.level(i);
            first_match(&self.allow, &self.allow_re, &[w], &regex_texts(w)).is_some()
        });
        if inner_ok && wrapper_ok {
            return allowed.map_or(RuleMatch::None, |a| RuleMatch::Allowed(allowed_rule(&a)));
        }
        let what = if inner_ok {
            cmd.level(cmd.unwrapped.privileged.first().copied().unwrap_or(0))
                .first()
                .map(Word::text)
                .unwrap_or_default()
        } else {
            program
        };
        let listed: Vec<&str> = self
            .allow
            .iter()
            .take(12)
            .map(|p| p.text.as_str())
            .collect();
        RuleMatch::Found(Finding::deny(
            Class::Allowlist,
            RuleId::ConfigAllowlist,
            Reason::NotOnAllowList {
                program: &what,
                allowed: &listed,
            }
            .text(),
        ))
    }

    /// The denied environment pattern `name` matches, if any.
    pub(crate) fn denied_env(&self, name: &str) -> Option<&str> {
        self.denied_env
            .iter()
            .find(|p| glob_match(p, name))
            .map(String::as_str)
    }
}

/// The rule id text of an allow match.
fn allowed_rule(found: &(&'static str, String)) -> String {
    let id = if found.0 == "regex" {
        RuleId::ConfigAllowRegex
    } else {
        RuleId::ConfigAllowPrefix
    };
    Rule::configured(id, found.1.clone()).to_string()
}

/// (kind, rule text) of the first prefix or regex that matches any level.
fn first_match(
    prefixes: &[Prefix],
    regexes: &(RegexSet, Vec<String>),
    levels: &[&[Word]],
    texts: &[String],
) -> Option<(&'static str, String)> {
    for words in levels {
        if let Some(p) = prefixes.iter().find(|p| p.matches(words)) {
            return Some(("prefix", p.text.clone()));
        }
    }
    for t in texts {
        if let Some(i) = regexes.0.matches(t).iter().next() {
            return Some(("regex", regexes.1.get(i).cloned().unwrap_or_default()));
        }
    }
    None
}
