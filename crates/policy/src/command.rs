//! What the walk finds: simple commands with their resolved words, redirections, working
//! directory and position, plus structural findings.

use crate::Decision;
use crate::paths::Cwd;
use crate::rule::Rule;
use crate::words::Word;

/// The word a program name resolves to, without its directory (`/usr/bin/sudo` → `sudo`).
///
/// A package runner's package spec names its program too: `npm:rimraf`, `rimraf@5`,
/// `black==24.1` are `rimraf`, `rimraf`, `black`.
pub(crate) fn program_name(word: &Word) -> Option<String> {
    const REGISTRY_PREFIXES: &[&str] = &["npm:", "jsr:", "pypi:"];
    let text = word.literal()?;
    let mut base = text.rsplit('/').next().unwrap_or(&text);
    if let Some(rest) = REGISTRY_PREFIXES.iter().find_map(|p| base.strip_prefix(p)) {
        base = rest;
    }
    if let Some(at) = base.find(['@', '=']).filter(|&at| at > 0) {
        base = &base[..at];
    }
    Some(base.to_owned())
}

/// The result of unwrapping one command's words.
#[derive(Clone, Debug, Default)]
pub(crate) struct Unwrapped {
    /// Where each level starts: `[0]` is the whole command, the last is the real program.
    pub(crate) levels: Vec<usize>,
    /// Levels (indices into `levels`) whose wrapper escalates privileges.
    pub(crate) privileged: Vec<usize>,
    /// Environment names set by `env K=v` / `sudo K=v`.
    pub(crate) env_assigns: Vec<String>,
    /// A directory the inner command runs in (`sudo -D`, `env -C`).
    pub(crate) chdir: Option<Word>,
    /// `env -S STRING`: the string, re-split by env as a command line.
    pub(crate) split_string: Option<Word>,
    /// Every wrapper option's value, by option (`strace -o /tmp/trace`): paths among them
    /// are checked like the command's own.
    pub(crate) option_values: Vec<(String, Word)>,
}

impl Unwrapped {
    /// Index of the word that names the real program.
    pub(crate) fn start(&self) -> usize {
        self.levels.last().copied().unwrap_or(0)
    }
}

/// Where a command's output goes and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Written on the line (or in a `bash -c` string); its output reaches the caller.
    Direct,
    /// Inside `$(...)`, backticks or `<(...)`: its output is captured.
    Captured,
    /// Run by `xargs` or `find -exec` with arguments only known at run time.
    Exec,
    /// Run on another host or in a container (`ssh HOST CMD`, `docker exec`): its paths are
    /// not this machine's, so the workspace restriction does not apply.
    Remote,
}

/// The kind of one redirection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RedirKind {
    /// `< file`.
    In,
    /// `> file`, `>> file`, `&> file`, `>| file`, `<> file`.
    Out,
    /// `<<EOF` with its body, `None` when the body expands to something only known at run
    /// time (an unquoted `<<EOF` with `$(curl …)` in it).
    HereDoc(Option<String>),
    /// `<<< word`.
    HereString,
}

/// One redirection of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redir {
    /// The file descriptor written before the operator, if any.
    pub(crate) fd: Option<u32>,
    pub(crate) kind: RedirKind,
    /// `>>`: the file is appended to, not replaced.
    pub(crate) append: bool,
    /// The file (or the here-string word).
    pub(crate) target: Option<Word>,
}

/// One simple command.
#[derive(Clone, Debug)]
pub(crate) struct Cmd {
    /// All words, wrappers included.
    pub(crate) words: Vec<Word>,
    pub(crate) unwrapped: Unwrapped,
    /// Environment names this command sets (`K=v cmd`, `env K=v`, `export K`).
    pub(crate) assigns: Vec<String>,
    /// The values of the assignments written before the command or given to `env`.
    pub(crate) env_values: Vec<(String, Word)>,
    pub(crate) redirects: Vec<Redir>,
    /// The directory it runs in.
    pub(crate) cwd: Cwd,
    pub(crate) origin: Origin,
    pub(crate) piped_in: bool,
    pub(crate) piped_out: bool,
    /// What it does to files ([`crate::effects::of`]), computed once when it is recorded.
    pub(crate) effects: Effects,
}

impl Cmd {
    /// The real program and its arguments, wrappers removed.
    pub(crate) fn argv(&self) -> &[Word] {
        self.words.get(self.unwrapped.start()..).unwrap_or(&[])
    }

    /// The arguments of the real program.
    pub(crate) fn args(&self) -> &[Word] {
        self.argv().get(1..).unwrap_or(&[])
    }

    /// The real program's name without directory, when static.
    pub(crate) fn program(&self) -> Option<String> {
        self.argv().first().and_then(program_name)
    }

    /// The command as shown to the model: resolved words, wrappers removed.
    pub(crate) fn display(&self) -> String {
        join(self.argv())
    }

    /// The words of unwrapping level `i`.
    pub(crate) fn level(&self, i: usize) -> &[Word] {
        let start = self.unwrapped.levels.get(i).copied().unwrap_or(0);
        self.words.get(start..).unwrap_or(&[])
    }

    /// Standard input comes from a file, a here-document or a here-string.
    pub(crate) fn stdin_redirected(&self) -> bool {
        self.redirects.iter().any(|r| {
            matches!(
                r.kind,
                RedirKind::In | RedirKind::HereDoc(_) | RedirKind::HereString
            ) && r.fd.is_none_or(|fd| fd == 0)
        })
    }

    /// The here-document or here-string feeding standard input.
    pub(crate) fn here_input(&self) -> Option<&Redir> {
        self.redirects.iter().rev().find(|r| {
            matches!(r.kind, RedirKind::HereDoc(_) | RedirKind::HereString)
                && r.fd.is_none_or(|fd| fd == 0)
        })
    }

    /// Files standard output is redirected to.
    pub(crate) fn stdout_files(&self) -> impl Iterator<Item = &Word> {
        self.redirects.iter().filter_map(|r| match (&r.kind, r.fd) {
            (RedirKind::Out, None | Some(1)) => r.target.as_ref(),
            _ => None,
        })
    }
}

/// Words joined by spaces.
pub(crate) fn join(words: &[Word]) -> String {
    words.iter().map(Word::text).collect::<Vec<_>>().join(" ")
}

/// Which part of the policy produced a finding; lower sorts first among equal decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    Hardline,
    ConfigDeny,
    Env,
    Workspace,
    Intercept,
    Allowlist,
    ConfigAsk,
    Unresolved,
}

/// A reason not to simply allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) decision: Decision,
    pub(crate) class: Class,
    pub(crate) rule: Rule,
    pub(crate) reason: String,
}

impl Finding {
    pub(crate) fn deny(class: Class, rule: impl Into<Rule>, reason: impl Into<String>) -> Self {
        Finding {
            decision: Decision::Deny,
            class,
            rule: rule.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn ask(class: Class, rule: impl Into<Rule>, reason: impl Into<String>) -> Self {
        Finding {
            decision: Decision::Ask,
            class,
            rule: rule.into(),
            reason: reason.into(),
        }
    }

    /// Sort key: denials first, then by class.
    pub(crate) fn key(&self) -> (u8, Class) {
        let d = match self.decision {
            Decision::Deny => 0,
            Decision::Ask => 1,
            Decision::Allow => 2,
        };
        (d, self.class)
    }
}

/// How a write changes a file's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// Replaces it.
    Overwrite,
    /// Leaves it empty (`: > f`, `truncate -s0 f`, `cp /dev/null f`).
    Truncate,
    /// Adds to it (`>>`, `tee -a`).
    Append,
}

/// Where the written content comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The command's standard output (a redirection of descriptor 1).
    Output,
    /// The command's standard input (`tee`, `sponge`).
    Input,
    /// Nothing: the file is left empty.
    Empty,
    /// The network: content nobody on this machine reviewed (`curl -o`, `wget`, `scp host:`).
    Fetched,
    /// A copy of this file (`cp a b`).
    CopyOf(Word),
    /// Something the policy does not model (an in-place edit, a compiler's output).
    Unknown,
}

/// One file whose content the command writes.
#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub(crate) target: Word,
    pub(crate) kind: WriteKind,
    pub(crate) source: Source,
}

/// Whether a path is read or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// What one command does to files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Effects {
    /// Files whose content it writes.
    pub(crate) writes: Vec<Write>,
    /// Every path it names as a file or directory, with how it uses it (redirections
    /// included; the program's own path and its wrappers' options are the workspace
    /// restriction's concern).
    pub(crate) paths: Vec<(Word, Access)>,
    /// Directories it fills from the network (`git clone URL DIR`).
    pub(crate) fetched_dirs: Vec<Word>,
    /// It edits files in place (`sed -i`, `perl -pi`, `gawk -i inplace`).
    pub(crate) in_place: bool,
}

/// A file written earlier on the same line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    /// Its content, known statically.
    Known(String),
    /// Written with content only known at run time.
    Unknown,
}

/// Standard input of a pipeline stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Text known statically (`echo ... |`, `cat <<EOF |`).
    Text(String),
    /// Paths under these start paths (`find . -name x |`), one per item.
    Under(Vec<Word>),
    /// The ID of every process (`ps -e -o pid= |`, `pgrep . |`).
    AllPids,
    /// These paths, one per item (`ls -d /* |`, `ls |` as `*`).
    Paths(Vec<Word>),
    /// Whatever the previous stage writes.
    Unknown,
}

/// How a node is placed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Io {
    pub(crate) piped_in: bool,
    pub(crate) piped_out: bool,
    pub(crate) captured: bool,
    pub(crate) stdin: Option<Stdin>,
}

/// Where a followed command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// On this machine.
    Here,
    /// On another host or in a container: its paths, home and working directory are not ours.
    Remote,
}

/// What a script is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    Shell,
    Code(CodeLang),
    /// A makefile: its recipe lines run in a shell.
    Make,
    /// A crontab: each entry's command runs in a shell later.
    Crontab,
    /// A system crontab (`/etc/crontab`, `/etc/cron.d/*`): a user field before the command.
    SystemCrontab,
    /// A systemd unit: its `Exec…=` lines run.
    Unit,
    /// A `package.json`: its `scripts` run under `npm install`, `npm run`, ….
    PackageJson,
    /// A justfile: its indented recipe lines run.
    Just,
}

/// One thing a command runs.
#[derive(Clone, Debug)]
pub(crate) enum Follow {
    /// A script in a word: walked when static, asked about when only known at run time.
    String {
        word: Word,
        what: String,
        io: Io,
        place: Place,
        /// In a child shell (`bash -c`), so `cd` does not leak out; `eval` runs in this one.
        scoped: bool,
        /// The positional parameters the script sees (`bash -c 'rm -rf "$1"' _ /`).
        positional: Option<Vec<Word>>,
    },
    /// A file run as a script: followed when it was written earlier on the line or is a
    /// process substitution whose output is known, asked about when it is generated.
    File { word: Word, lang: Lang },
    /// A command run with these words by another program (`xargs`, `find -exec`, `docker
    /// exec`); `stdin` is what it reads when known (`kubectl exec -i pod -- sh <<< …`).
    Exec {
        words: Vec<Word>,
        place: Place,
        stdin: Option<Stdin>,
    },
    /// Code in another language, known statically.
    Code { text: String, lang: CodeLang },
    /// Text to split roughly for the hardline guard only (string literals of inline code).
    Rough(String),
    /// A reason to ask (or deny) found while looking.
    Finding(Finding),
}

impl Follow {
    pub(crate) fn script(text: &str, what: &str) -> Follow {
        Follow::String {
            word: Word::lit(text),
            what: what.to_owned(),
            io: Io::default(),
            place: Place::Here,
            scoped: true,
            positional: None,
        }
    }

    /// A command run here with these words, reading nothing known.
    pub(crate) fn exec(words: Vec<Word>) -> Follow {
        Follow::Exec {
            words,
            place: Place::Here,
            stdin: None,
        }
    }

    pub(crate) fn string(word: Word, what: &str, io: &Io) -> Follow {
        Follow::String {
            word,
            what: what.to_owned(),
            io: io.clone(),
            place: Place::Here,
            scoped: true,
            positional: None,
        }
    }
}

/// A language whose inline code is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CodeLang {
    Python,
    Perl,
    Ruby,
    Node,
    Php,
    Awk,
    /// Tcl: `exec CMD ARGS`, `file delete -force PATH`.
    Tcl,
    /// Lua, PowerShell …: only the generic scan.
    Other,
}

impl CodeLang {
    /// The language `program` runs, if it is an interpreter.
    pub(crate) fn of(program: &str) -> Option<CodeLang> {
        Some(match program {
            p if p.starts_with("python") || p.starts_with("pypy") => CodeLang::Python,
            p if p.starts_with("perl") => CodeLang::Perl,
            "ruby" | "jruby" | "truffleruby" => CodeLang::Ruby,
            "node" | "nodejs" | "bun" | "deno" => CodeLang::Node,
            p if p.starts_with("php") => CodeLang::Php,
            "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => CodeLang::Awk,
            "tclsh" | "wish" | "expect-tcl" => CodeLang::Tcl,
            "lua" | "luajit" | "osascript" | "pwsh" | "powershell" | "Rscript" | "R" | "julia"
            | "jshell" | "groovy" | "scala" | "kotlin" | "swift" | "emacs" | "guile" | "racket"
            | "sbcl" | "clisp" | "ecl" | "ghc" | "runghc" | "elixir" | "iex" | "erl"
            | "escript" | "octave" | "gnuplot" | "clojure" | "bb" | "nim" | "crystal" | "v"
            | "dart" => CodeLang::Other,
            _ => return None,
        })
    }

    /// The options whose value is code.
    pub(crate) fn code_options(self) -> &'static [&'static str] {
        match self {
            CodeLang::Python => &["-c"],
            CodeLang::Perl => &["-e", "-E"],
            CodeLang::Ruby => &["-e"],
            CodeLang::Node => &["-e", "--eval", "-p", "--print"],
            CodeLang::Php => &["-r"],
            CodeLang::Awk | CodeLang::Tcl => &[],
            CodeLang::Other => &[
                "-e",
                "-c",
                "--eval",
                "-eval",
                "-Command",
                "-command",
                "-x",
                "--execute",
            ],
        }
    }

    /// Options whose value is the next word (not code, not the script).
    pub(crate) fn value_options(self) -> &'static [&'static str] {
        match self {
            CodeLang::Python => &["-W", "-X", "-Q"],
            CodeLang::Perl => &["-I", "-M", "-m", "-x", "-C"],
            CodeLang::Ruby => &["-r", "-I", "-C", "-E", "-x", "--encoding"],
            CodeLang::Node => &[
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "-C",
                "--conditions",
                "--input-type",
                "--title",
                "--env-file",
            ],
            CodeLang::Php => &["-d", "-c", "-z", "-t", "-S"],
            CodeLang::Awk | CodeLang::Tcl | CodeLang::Other => &[],
        }
    }

    /// Calls may omit parentheses (`system "ls"`, `unlink "f"`).
    pub(crate) fn bare_calls(self) -> bool {
        matches!(
            self,
            CodeLang::Perl | CodeLang::Ruby | CodeLang::Php | CodeLang::Awk
        )
    }
}
