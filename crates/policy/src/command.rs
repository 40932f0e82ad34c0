//! What the walk finds: simple commands with their resolved words, redirections, working
//! directory and position, plus structural findings.

use crate::Decision;
use crate::paths::Cwd;
use crate::rule::Rule;
use crate::unwrap::{Unwrapped, program_name};
use crate::words::Word;

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
    /// `<<EOF` with its body.
    HereDoc(String),
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
