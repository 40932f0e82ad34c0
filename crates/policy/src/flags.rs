//! Option parsing in the getopt style most tools share, so `-rf`, `-r -f`, `-fr`,
//! `--recursive --force` and `-R` all read the same.

use crate::words::Word;

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

/// Option shapes of the programs the policy looks into.
pub(crate) fn spec_for(program: &str) -> Spec {
    match program {
        "rm" => Spec {
            longs: &[
                "dir",
                "force",
                "help",
                "interactive",
                "no-preserve-root",
                "one-file-system",
                "preserve-root",
                "recursive",
                "verbose",
                "version",
            ],
            aliases: &[
                ("R", 'r'),
                ("recursive", 'r'),
                ("force", 'f'),
                ("dir", 'd'),
                ("interactive", 'i'),
                ("verbose", 'v'),
            ],
            ..Spec::PLAIN
        },
        "cp" => Spec {
            longs: &[
                "archive",
                "attributes-only",
                "backup",
                "context",
                "copy-contents",
                "dereference",
                "force",
                "help",
                "interactive",
                "link",
                "no-clobber",
                "no-dereference",
                "no-preserve",
                "no-target-directory",
                "one-file-system",
                "parents",
                "preserve",
                "recursive",
                "reflink",
                "remove-destination",
                "sparse",
                "strip-trailing-slashes",
                "suffix",
                "symbolic-link",
                "target-directory",
                "update",
                "verbose",
                "version",
            ],
            value_short: "St",
            value_long: &["target-directory", "suffix"],
            aliases: &[
                ("R", 'r'),
                ("recursive", 'r'),
                ("force", 'f'),
                ("archive", 'a'),
            ],
            ..Spec::PLAIN
        },
        "mv" | "install" => Spec {
            longs: &[
                "backup",
                "context",
                "force",
                "help",
                "interactive",
                "no-clobber",
                "no-target-directory",
                "strip-trailing-slashes",
                "suffix",
                "target-directory",
                "update",
                "verbose",
                "version",
                "mode",
                "owner",
                "group",
            ],
            value_short: "Stmog",
            value_long: &["target-directory", "suffix", "mode", "owner", "group"],
            aliases: &[("force", 'f')],
            ..Spec::PLAIN
        },
        "chmod" | "chown" | "chgrp" => Spec {
            longs: &[
                "changes",
                "dereference",
                "from",
                "help",
                "no-dereference",
                "no-preserve-root",
                "preserve-root",
                "quiet",
                "recursive",
                "reference",
                "silent",
                "verbose",
                "version",
            ],
            aliases: &[("recursive", 'R')],
            ..Spec::PLAIN
        },
        "rsync" => Spec {
            longs: &[
                "append",
                "archive",
                "backup",
                "backup-dir",
                "checksum",
                "chmod",
                "compare-dest",
                "compress",
                "copy-dest",
                "copy-links",
                "del",
                "delete",
                "delete-after",
                "delete-before",
                "delete-delay",
                "delete-during",
                "delete-excluded",
                "delete-missing-args",
                "dry-run",
                "exclude",
                "exclude-from",
                "files-from",
                "filter",
                "force",
                "include",
                "include-from",
                "link-dest",
                "links",
                "log-file",
                "partial",
                "partial-dir",
                "password-file",
                "progress",
                "recursive",
                "remove-source-files",
                "rsh",
                "rsync-path",
                "temp-dir",
                "update",
                "verbose",
            ],
            value_short: "efTBM",
            value_long: &[
                "rsh",
                "filter",
                "exclude",
                "include",
                "exclude-from",
                "include-from",
                "temp-dir",
                "log-file",
                "partial-dir",
                "password-file",
                "rsync-path",
                "backup-dir",
                "compare-dest",
                "copy-dest",
                "link-dest",
                "chmod",
                "files-from",
            ],
            aliases: &[("recursive", 'r'), ("archive", 'a')],
            ..Spec::PLAIN
        },
        "head" | "tail" => Spec {
            value_short: "ncs",
            value_long: &[
                "lines",
                "bytes",
                "sleep-interval",
                "pid",
                "max-unchanged-stats",
            ],
            aliases: &[("follow", 'f'), ("F", 'f')],
            ..Spec::PLAIN
        },
        "grep" | "egrep" | "fgrep" => Spec {
            value_short: "efmABCD",
            value_long: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "include",
                "exclude",
                "exclude-dir",
                "label",
                "color",
                "colour",
                "devices",
                "directories",
                "binary-files",
            ],
            ..Spec::PLAIN
        },
        "rg" | "ag" | "ack" => Spec {
            value_short: "efgmABCtTjMEr",
            value_long: &[
                "regexp",
                "file",
                "glob",
                "iglob",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "type",
                "type-not",
                "threads",
                "max-columns",
                "encoding",
                "replace",
                "color",
                "colors",
                "sort",
                "sortr",
                "max-depth",
                "ignore-file",
                "pre",
                "pre-glob",
                "type-add",
                "ignore-dir",
            ],
            ..Spec::PLAIN
        },
        "sed" => Spec {
            value_short: "efl",
            value_long: &["expression", "file", "line-length"],
            ..Spec::PLAIN
        },
        "awk" | "gawk" | "mawk" | "nawk" => Spec {
            value_short: "fvFi",
            value_long: &["file", "assign", "field-separator", "include"],
            ..Spec::PLAIN
        },
        "fd" | "fdfind" => Spec {
            value_short: "edtEcxXjS",
            value_long: &[
                "extension",
                "max-depth",
                "type",
                "exclude",
                "color",
                "exec",
                "exec-batch",
                "threads",
                "size",
                "changed-within",
                "changed-before",
                "owner",
                "base-directory",
                "search-path",
                "min-depth",
                "exact-depth",
                "ignore-file",
                "max-results",
            ],
            ..Spec::PLAIN
        },
        "tar" => Spec {
            longs: &[
                "absolute-names",
                "acls",
                "add-file",
                "after-date",
                "anchored",
                "append",
                "atime-preserve",
                "auto-compress",
                "backup",
                "block-number",
                "blocking-factor",
                "bzip2",
                "catenate",
                "check-device",
                "check-links",
                "checkpoint",
                "checkpoint-action",
                "clamp-mtime",
                "compare",
                "compress",
                "concatenate",
                "confirmation",
                "create",
                "delay-directory-restore",
                "delete",
                "dereference",
                "diff",
                "directory",
                "exclude",
                "exclude-backups",
                "exclude-caches",
                "exclude-caches-all",
                "exclude-caches-under",
                "exclude-from",
                "exclude-ignore",
                "exclude-ignore-recursive",
                "exclude-tag",
                "exclude-tag-all",
                "exclude-tag-under",
                "exclude-vcs",
                "exclude-vcs-ignores",
                "extract",
                "file",
                "files-from",
                "force-local",
                "format",
                "full-time",
                "get",
                "group",
                "group-map",
                "gunzip",
                "gzip",
                "hard-dereference",
                "help",
                "hole-detection",
                "ignore-case",
                "ignore-command-error",
                "ignore-failed-read",
                "ignore-zeros",
                "incremental",
                "index-file",
                "info-script",
                "interactive",
                "keep-directory-symlink",
                "keep-newer-files",
                "keep-old-files",
                "label",
                "level",
                "list",
                "listed-incremental",
                "lzip",
                "lzma",
                "lzop",
                "mode",
                "mtime",
                "multi-volume",
                "new-volume-script",
                "newer",
                "newer-mtime",
                "no-acls",
                "no-anchored",
                "no-auto-compress",
                "no-check-device",
                "no-delay-directory-restore",
                "no-ignore-case",
                "no-ignore-command-error",
                "no-null",
                "no-overwrite-dir",
                "no-quote-chars",
                "no-recursion",
                "no-same-owner",
                "no-same-permissions",
                "no-seek",
                "no-selinux",
                "no-unquote",
                "no-verbatim-files-from",
                "no-wildcards",
                "no-wildcards-match-slash",
                "no-xattrs",
                "null",
                "numeric-owner",
                "occurrence",
                "old-archive",
                "one-file-system",
                "one-top-level",
                "overwrite",
                "overwrite-dir",
                "owner",
                "owner-map",
                "pax-option",
                "portability",
                "posix",
                "preserve-order",
                "preserve-permissions",
                "quote-chars",
                "quoting-style",
                "read-full-records",
                "record-size",
                "recursion",
                "recursive-unlink",
                "remove-files",
                "restrict",
                "rmt-command",
                "rsh-command",
                "same-order",
                "same-owner",
                "same-permissions",
                "seek",
                "selinux",
                "show-defaults",
                "show-omitted-dirs",
                "show-snapshot-field-ranges",
                "show-stored-names",
                "show-transformed-names",
                "skip-old-files",
                "sort",
                "sparse",
                "sparse-version",
                "starting-file",
                "strip-components",
                "suffix",
                "tape-length",
                "test-label",
                "to-command",
                "to-stdout",
                "totals",
                "touch",
                "transform",
                "uncompress",
                "ungzip",
                "unlink-first",
                "unquote",
                "update",
                "usage",
                "use-compress-program",
                "utc",
                "verbatim-files-from",
                "verbose",
                "verify",
                "version",
                "volno-file",
                "warning",
                "wildcards",
                "wildcards-match-slash",
                "xattrs",
                "xattrs-exclude",
                "xattrs-include",
                "xform",
                "xz",
                "zstd",
            ],
            value_short: "fCTXbHIV",
            value_long: &[
                "file",
                "directory",
                "files-from",
                "exclude-from",
                "use-compress-program",
            ],
            ..Spec::PLAIN
        },
        "git" => Spec {
            value_short: "Cc",
            value_long: &[
                "git-dir",
                "work-tree",
                "namespace",
                "exec-path",
                "super-prefix",
                "config-env",
                "list-cmds",
            ],
            aliases: &[],
            permute: false,
            longs: &[],
        },
        "kill" | "pkill" | "killall" => Spec {
            value_short: "snu",
            ..Spec::PLAIN
        },
        "systemctl" => Spec {
            value_short: "tpPHMsnoS",
            value_long: &[
                "type",
                "state",
                "property",
                "host",
                "machine",
                "signal",
                "lines",
                "output",
                "root",
                "image",
                "message",
                "kill-whom",
                "job-mode",
                "what",
                "timestamp",
                "boot-loader-entry",
                "boot-loader-menu",
            ],
            ..Spec::PLAIN
        },
        _ => crate::tools::lookup(program)
            .and_then(|t| t.spec)
            .unwrap_or(Spec::PLAIN),
    }
}

/// Where `find`'s starting points end: at the first argument that begins the expression
/// (an option or test such as `-name`, or `(`, `!`, `)`, `,`).
pub(crate) fn find_expression_start(args: &[Word]) -> usize {
    args.iter()
        .position(|a| {
            a.literal()
                .is_some_and(|t| t.starts_with('-') || matches!(t.as_str(), "(" | "!" | ")" | ","))
        })
        .unwrap_or(args.len())
}

/// `find`'s start paths (after `-H`, `-L`, `-P`, `-D …`, `-O…`) and where its expression
/// begins.
pub(crate) fn find_starts(args: &[Word]) -> (Vec<Word>, usize) {
    let mut i = 0;
    while let Some(t) = args.get(i).and_then(Word::literal) {
        match t.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i = (i + 2).min(args.len()),
            o if o.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    let end = i + find_expression_start(rest);
    let mut starts: Vec<Word> = args.get(i..end).unwrap_or(&[]).to_vec();
    if starts.is_empty() {
        starts.push(Word::lit("."));
    }
    (starts, end)
}

#[cfg(test)]
mod tests {
    use super::*;

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
