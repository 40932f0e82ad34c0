//! Option parsing in the getopt style most tools share, so `-rf`, `-r -f`, `-fr`,
//! `--recursive --force` and `-R` all read the same.

use crate::words::{Seg, Word};

/// How one program's options look.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// Short options that take a value (`-n 5`, `-n5`).
    pub(crate) value_short: &'static str,
    /// Long options that take a value as the next word when written without `=`.
    pub(crate) value_long: &'static [&'static str],
    /// Spellings mapped to one canonical short flag: (`"R"` or `"recursive"`, `'r'`).
    pub(crate) aliases: &'static [(&'static str, char)],
    /// Whether options may follow operands (GNU style); if not, the first operand ends them.
    pub(crate) permute: bool,
    /// Every long option the program knows (from its `--help`): getopt_long takes any
    /// unambiguous prefix (`--recur` is `--recursive`), so abbreviations are resolved
    /// against this list.
    pub(crate) longs: &'static [&'static str],
}

impl Spec {
    pub(crate) const PLAIN: Spec = Spec {
        value_short: "",
        value_long: &[],
        aliases: &[],
        permute: true,
        longs: &[],
    };
}

/// The long option `name` (without `--`) stands for: itself when known or when `known` is
/// empty, else the one known option it is an unambiguous prefix of (getopt_long's rule).
pub(crate) fn canonical_long<'n>(name: &'n str, known: &[&'static str]) -> &'n str
where
    'static: 'n,
{
    if name.is_empty() || known.contains(&name) {
        return name;
    }
    let mut hits = known.iter().filter(|k| k.starts_with(name));
    match (hits.next(), hits.next()) {
        (Some(one), None) => one,
        _ => name,
    }
}

/// The options and operands of one command.
#[derive(Clone, Debug, Default)]
pub(crate) struct Parsed {
    /// Canonical short flags that were set.
    pub(crate) shorts: Vec<char>,
    /// Long flags (without `--`, without `=value`).
    pub(crate) longs: Vec<String>,
    /// Indices (into the argument slice) of the operands.
    pub(crate) positionals: Vec<usize>,
    /// Option values: (option as written, value).
    pub(crate) values: Vec<(String, String)>,
}

impl Parsed {
    /// True when the short flag (after aliasing) or the long flag was given.
    pub(crate) fn has(&self, short: char, long: &str) -> bool {
        self.shorts.contains(&short) || (!long.is_empty() && self.longs.iter().any(|l| l == long))
    }

    /// True when the long flag was given.
    pub(crate) fn has_long(&self, long: &str) -> bool {
        self.longs.iter().any(|l| l == long)
    }

    /// The value of an option, by any of its spellings (`-o`, `--output`).
    pub(crate) fn value(&self, names: &[&str]) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }
}

fn alias(spec: &Spec, name: &str) -> Option<char> {
    spec.aliases
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(_, c)| *c)
}

/// Parses `args` (the words after the program name).
pub(crate) fn parse(args: &[Word], spec: &Spec) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let Some(text) = args[i].literal() else {
            p.positionals.push(i);
            if !spec.permute {
                options_done = true;
            }
            i += 1;
            continue;
        };
        if options_done || text == "-" || !text.starts_with('-') {
            p.positionals.push(i);
            if !spec.permute {
                options_done = true;
            }
            i += 1;
            continue;
        }
        if text == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let name = canonical_long(name, spec.longs);
            p.longs.push(name.to_owned());
            if let Some(c) = alias(spec, name) {
                p.shorts.push(c);
            }
            if let Some(v) = inline {
                p.values.push((format!("--{name}"), v.to_owned()));
            } else if spec.value_long.contains(&name)
                && let Some(v) = args.get(i + 1)
            {
                p.values.push((format!("--{name}"), v.text()));
                i += 1;
            }
            i += 1;
            continue;
        }
        // A cluster of short flags.
        let cluster: Vec<char> = text.chars().skip(1).collect();
        for (j, &c) in cluster.iter().enumerate() {
            if spec.value_short.contains(c) {
                let rest: String = cluster[j + 1..].iter().collect();
                if rest.is_empty() {
                    if let Some(v) = args.get(i + 1) {
                        p.values.push((format!("-{c}"), v.text()));
                        i += 1;
                    }
                } else {
                    p.values.push((format!("-{c}"), rest));
                }
                p.shorts.push(c);
                break;
            }
            let mut buf = [0u8; 4];
            p.shorts
                .push(alias(spec, c.encode_utf8(&mut buf)).unwrap_or(c));
        }
        i += 1;
    }
    p
}

/// Canonical flags of a rule written as text (`-rf`, `--force`), for rule matching.
pub(crate) fn rule_flags(tokens: &[&str], spec: &Spec) -> (Vec<char>, Vec<String>) {
    let words: Vec<Word> = tokens.iter().map(|t| Word::lit(t)).collect();
    let mut p = parse(&words, spec);
    // A long flag with a short alias is matched through the alias.
    p.longs.retain(|l| alias(spec, l).is_none());
    (p.shorts, p.longs)
}

/// The values of these options, however they are attached: `-o FILE`, `-oFILE`,
/// `--output FILE`, `--output=FILE`, `of=FILE` (an option spelled with its `=`).
pub(crate) fn option_values<'a>(
    args: &'a [Word],
    names: &'a [&'a str],
) -> impl Iterator<Item = Word> + 'a {
    let mut skip_next = false;
    args.iter().enumerate().filter_map(move |(i, a)| {
        if std::mem::take(&mut skip_next) {
            return None;
        }
        for name in names {
            if let Some(v) = name
                .ends_with('=')
                .then(|| a.strip_literal_prefix(name))
                .flatten()
            {
                return Some(v);
            }
            if a.is(name) {
                skip_next = true;
                return args.get(i + 1).cloned();
            }
            if name.starts_with("--")
                && let Some(v) = a.strip_literal_prefix(&format!("{name}="))
            {
                return Some(v);
            }
            if name.len() == 2
                && name.starts_with('-')
                && a.literal().is_none_or(|t| !t.starts_with("--"))
                && let Some(v) = a.strip_literal_prefix(name)
                && !v.segs.is_empty()
            {
                return Some(v);
            }
        }
        None
    })
}

/// The values of these options: as the option parser read them (clusters like `-so FILE`
/// included) and in the spellings it does not know (`of=FILE`, `-fprint FILE`), once each.
/// The values of these options in their plain spellings (`--eval X`, `--eval=X`, `-EX`),
/// without an option parser's view of the program.
pub(crate) fn option_words_plain(args: &[Word], names: &[&str]) -> Vec<Word> {
    option_values(args, names).collect()
}

pub(crate) fn option_words(args: &[Word], p: &Parsed, names: &[&str]) -> Vec<Word> {
    let mut found: Vec<Word> = p
        .values
        .iter()
        .filter(|(k, _)| names.contains(&k.as_str()))
        .map(|(_, v)| value_word(v))
        .collect();
    for v in option_values(args, names) {
        if !found.iter().any(|f| f.text() == v.text()) {
            found.push(v);
        }
    }
    found
}

pub(crate) fn value_word(v: &str) -> Word {
    if v.starts_with('~') && !v.starts_with("~+") && !v.starts_with("~-") {
        tilde_word(v)
    } else {
        Word::lit(v)
    }
}

/// `~/x` as a word the home directory resolves in.
fn tilde_word(v: &str) -> Word {
    let mut w = Word::default();
    w.segs.push(Seg::Home);
    if let Some(rest) = v.strip_prefix('~')
        && !rest.is_empty()
    {
        w.segs.push(Seg::Lit(rest.to_owned()));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::spec_for;

    fn parse_rm(args: &[&str]) -> Parsed {
        let words: Vec<Word> = args.iter().map(|a| Word::lit(a)).collect();
        parse(&words, &spec_for("rm"))
    }

    #[test]
    fn flag_spellings_agree() {
        for args in [
            &["-rf", "/"][..],
            &["-r", "-f", "/"],
            &["-fr", "/"],
            &["--recursive", "--force", "/"],
            &["-R", "/", "-f"],
        ] {
            let p = parse_rm(args);
            assert!(p.has('r', "recursive"), "{args:?}");
            assert!(p.has('f', "force"), "{args:?}");
            assert_eq!(p.positionals.len(), 1, "{args:?}");
        }
    }

    #[test]
    fn unambiguous_long_prefixes_are_the_option() {
        let rm = spec_for("rm").longs;
        assert_eq!(canonical_long("recur", rm), "recursive");
        assert_eq!(canonical_long("no-preserve", rm), "no-preserve-root");
        // `--p` could only be `--preserve-root`; `--ver` is `--verbose` or `--version`.
        assert_eq!(canonical_long("p", rm), "preserve-root");
        assert_eq!(canonical_long("ver", rm), "ver");
        assert_eq!(canonical_long("bogus", rm), "bogus");
        let p = parse_rm(&["--recu", "--forc", "/"]);
        assert!(p.has('r', "recursive") && p.has('f', "force"));
    }

    #[test]
    fn double_dash_ends_options() {
        let p = parse_rm(&["--", "-rf"]);
        assert!(!p.has('r', "recursive"));
        assert_eq!(p.positionals, [1]);
    }
}
