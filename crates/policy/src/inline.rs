//! Inline code of other languages (`python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`,
//! awk programs, scripts fed on standard input): the calls that delete files or start
//! processes, read well enough to judge them like the shell commands they amount to.
//!
//! This is a scanner, not a parser for five languages: it finds the known API names at word
//! boundaries, reads their argument list (string literals, lists of string literals, or
//! "something else") and says what that runs. A literal target becomes the equivalent shell
//! command (`shutil.rmtree('/')` is `rm -rf /`), so the hardline guard and the rules judge
//! it; anything else in a sensitive position is `ask`.

use std::sync::LazyLock;

use regex::Regex;

use crate::command::Io;
use crate::command::{Class, Finding};
use crate::command::{CodeLang, Follow};
use crate::reasons::Reason;
use crate::rule::RuleId;
use crate::words::Word;

/// What a known API does with its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// Deletes a tree (`shutil.rmtree`, `FileUtils.rm_rf`, `remove_tree`).
    DeleteTree,
    /// Deletes a file or an empty directory (`os.remove`, `unlink`).
    Delete,
    /// Deletes a tree when its options say `recursive` (`fs.rmSync`, `fs.rm`).
    DeleteMaybeTree,
    /// Runs a command: a string through a shell, or a list of words.
    Run,
    /// Runs code of the same language (`exec`/`eval` in Python).
    Code,
    /// Signals a process (`os.kill(-1, 9)`).
    Kill,
    /// Writes a file, replacing its content (`writeFileSync`, `file_put_contents`).
    Write,
    /// Opens a file: read, or written when the mode says so (`open(p, 'w')`).
    Open,
    /// Reads a file (`readFileSync`, `file_get_contents`).
    Read,
}

/// Calls (and paths of one call) followed one by one; past it the code asks.
const MAX_CALLS: usize = 64;

/// Known names; a name preceded by `.` or `::` matches too (`os.remove`, `File::Path::rmtree`).
const APIS: &[(&str, Api)] = &[
    ("rmtree", Api::DeleteTree),
    ("rm_rf", Api::DeleteTree),
    ("rm_r", Api::DeleteTree),
    ("remove_tree", Api::DeleteTree),
    ("remove_dir", Api::DeleteTree),
    ("remove_entry", Api::DeleteTree),
    ("remove_entry_secure", Api::DeleteTree),
    ("rimraf", Api::DeleteTree),
    ("rimrafSync", Api::DeleteTree),
    ("remove_dir_all", Api::DeleteTree),
    ("removeDirectoryRecursive", Api::DeleteTree),
    ("delete-directory/files", Api::DeleteTree),
    ("removeFile", Api::Delete),
    ("delete-file", Api::Delete),
    ("delete-directory", Api::DeleteMaybeTree),
    ("shell-command", Api::Run),
    ("call-process", Api::Run),
    ("run-program", Api::Run),
    ("execute", Api::Run),
    ("cmd", Api::Run),
    ("ProcessBuilder", Api::Run),
    ("sh", Api::Run),
    ("RemoveAll", Api::DeleteTree),
    ("callCommand", Api::Run),
    // A rename takes the file away from its path, as a deletion does there.
    ("rename", Api::Delete),
    ("renameSync", Api::Delete),
    ("callProcess", Api::Run),
    ("Remove", Api::Delete),
    ("rmSync", Api::DeleteMaybeTree),
    ("removeSync", Api::DeleteMaybeTree),
    ("rm", Api::DeleteMaybeTree),
    ("rmdirSync", Api::DeleteMaybeTree),
    ("remove", Api::DeleteMaybeTree),
    ("removedirs", Api::Delete),
    ("unlink", Api::Delete),
    ("unlinkSync", Api::Delete),
    ("rmdir", Api::Delete),
    ("delete", Api::Delete),
    ("system", Api::Run),
    ("popen", Api::Run),
    ("popen2", Api::Run),
    ("popen3", Api::Run),
    ("capture2", Api::Run),
    ("capture2e", Api::Run),
    ("capture3", Api::Run),
    ("getoutput", Api::Run),
    ("getstatusoutput", Api::Run),
    ("check_output", Api::Run),
    ("check_call", Api::Run),
    ("call", Api::Run),
    ("run", Api::Run),
    ("Popen", Api::Run),
    ("spawn", Api::Run),
    ("spawnSync", Api::Run),
    ("execSync", Api::Run),
    ("execFile", Api::Run),
    ("execFileSync", Api::Run),
    ("exec", Api::Run),
    ("execv", Api::Run),
    ("execvp", Api::Run),
    ("execve", Api::Run),
    ("execvpe", Api::Run),
    ("execl", Api::Run),
    ("execlp", Api::Run),
    ("spawnv", Api::Run),
    ("spawnvp", Api::Run),
    ("spawnl", Api::Run),
    ("spawnlp", Api::Run),
    ("shell_exec", Api::Run),
    ("passthru", Api::Run),
    ("proc_open", Api::Run),
    ("qx", Api::Run),
    ("eval", Api::Code),
    ("kill", Api::Kill),
    ("killpg", Api::Kill),
    ("posix_kill", Api::Kill),
    ("writeFileSync", Api::Write),
    ("writeFile", Api::Write),
    ("truncateSync", Api::Write),
    ("write_text", Api::Write),
    ("write_bytes", Api::Write),
    ("file_put_contents", Api::Write),
    ("open", Api::Open),
    ("fopen", Api::Open),
    ("readFileSync", Api::Read),
    ("readFile", Api::Read),
    ("read_text", Api::Read),
    ("read_bytes", Api::Read),
    ("file_get_contents", Api::Read),
    ("readlines", Api::Read),
    ("listdir", Api::Read),
    ("read", Api::Read),
    ("scandir", Api::Read),
    ("readdirSync", Api::Read),
    ("readdir", Api::Read),
];

/// Names that only count with a receiver (`fs.rm`, `File.delete`): alone they are too common.
const NEEDS_RECEIVER: &[&str] = &[
    "read",
    "rm",
    "delete",
    "remove",
    "run",
    "call",
    "spawn",
    "exec",
    "kill",
    "writeFile",
    "write_text",
    "write_bytes",
];

/// Names too common to mean a process call on any receiver.
const GENERIC: &[&str] = &[
    "execute",
    "cmd",
    "run",
    "call",
    "exec",
    "spawn",
    "Popen",
    "check_output",
    "check_call",
    "system",
    "popen",
    "remove",
    "delete",
    "rm",
    "kill",
    "read",
    "open",
];

/// Receivers of the generic names that do start processes or touch files.
const PROCESS_OWNERS: &[&str] = &[
    "subprocess",
    "sp",
    "child_process",
    "cp",
    "childProcess",
    "os",
    "Kernel",
    "Open3",
    "IO",
    "Process",
    "proc",
    "shell",
    "sh",
    "execa",
    "shutil",
    "fs",
    "fsp",
    "promises",
    "FileUtils",
    "File",
    "Dir",
    "Deno",
    "Bun",
    "pathlib",
    "Path",
    "io",
    "codecs",
    "posix",
    "commands",
    "pty",
    "Runtime",
    "runtime",
    "ProcessBuilder",
    "exec",
    "util",
    "process",
];

/// Markers of process APIs: their string literals also go to the hardline guard's rough
/// split, as a net under the scanner.
const PROCESS_MARKERS: &[&str] = &[
    "shell script",
    "callCommand",
    "callProcess",
    "Process.Start",
    "os.execute",
    "io.popen",
    "system",
    "popen",
    "subprocess",
    "exec",
    "spawn",
    "`",
    "check_output",
    "Command",
];

/// One argument of a call, as far as the scanner reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Arg {
    Str(String),
    List(Vec<Arg>),
    Other(String),
}

/// What code prints when it only prints one string literal (`print("rm -rf /")`,
/// `print "…"`, `console.log('…')`, `puts '…'`, `echo '…';`).
pub(crate) fn printed(code: &str) -> Option<String> {
    let code = code.trim().trim_end_matches(';').trim();
    for call in [
        "print",
        "console.log",
        "puts",
        "echo",
        "say",
        "process.stdout.write",
        "sys.stdout.write",
    ] {
        if let Some(rest) = code.strip_prefix(call) {
            let rest = rest.trim();
            let arg = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or(rest)
                .trim();
            return literal(arg);
        }
    }
    None
}

/// What inline `code` of `lang` runs or deletes.
pub(crate) fn analyse(code: &str, lang: CodeLang) -> Vec<Follow> {
    let mut out = Vec::new();
    if let Some(f) = crate::hardline::fork_loop(code) {
        out.push(Follow::Finding(f));
    }
    if runs_from_network(code) {
        out.push(Follow::Finding(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedNetworkShell,
            Reason::InlineRunsNetwork.text(),
        )));
    }
    if lang == CodeLang::Tcl {
        tcl(code, &mut out);
    }
    if lang == CodeLang::Other {
        powershell(code, &mut out);
        // AppleScript's `do shell script "CMD"`.
        static SHELL_SCRIPT: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r#"do shell script\s+"((?:[^"\\]|\\.)*)""#).expect("a valid pattern")
        });
        for found in SHELL_SCRIPT.captures_iter(code).take(16) {
            out.push(script_follow(&found[1].replace("\\\"", "\"")));
        }
    }
    let found = calls(code, lang);
    if found.len() > MAX_CALLS {
        out.push(Follow::Finding(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedTooComplex,
            Reason::InlineTooManyCalls.text(),
        )));
    }
    for (name, api, args, raw) in found.into_iter().take(MAX_CALLS) {
        judge(name, api, &args, &raw, lang, &mut out);
    }
    if lang != CodeLang::Node && lang != CodeLang::Python {
        for script in backticks(code).into_iter().take(16) {
            out.push(script_follow(&script));
        }
    }
    if lang == CodeLang::Awk {
        out.extend(awk_pipes(code).into_iter().take(16));
    }
    if PROCESS_MARKERS.iter().any(|m| code.contains(m)) {
        let literals: Vec<String> = string_literals(code).into_iter().take(64).collect();
        for l in &literals {
            out.push(Follow::Rough(l.clone()));
        }
        if literals.len() > 1 {
            out.push(Follow::Rough(literals.join(" ")));
        }
    }
    out
}

/// Tcl's `exec CMD ARGS…` runs a program; `file delete [-force] PATH…` deletes.
fn tcl(code: &str, out: &mut Vec<Follow>) {
    for statement in code.split([';', '\n', '[', ']']).map(str::trim).take(256) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        match words.as_slice() {
            ["exec", rest @ ..] if !rest.is_empty() => out.push(Follow::exec(
                rest.iter()
                    .map(|w| Word::lit(w.trim_matches(['"', '{', '}'])))
                    .collect(),
            )),
            ["file", "delete", rest @ ..] => {
                let force = rest.contains(&"-force");
                for path in rest.iter().filter(|w| !w.starts_with('-')) {
                    out.push(Follow::exec(vec![
                        Word::lit("rm"),
                        Word::lit(if force { "-rf" } else { "-f" }),
                        path_word(path.trim_matches(['"', '{', '}'])),
                    ]));
                }
            }
            _ => {}
        }
    }
}

/// PowerShell cmdlets: `Remove-Item [-Recurse] PATH` (and its aliases `ri`, `del`, `rd`),
/// `Stop-Computer`, `Restart-Computer`.
fn powershell(code: &str, out: &mut Vec<Follow>) {
    for statement in code.split([';', '\n', '|']).map(str::trim).take(256) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        let Some((cmdlet, rest)) = words.split_first() else {
            continue;
        };
        let cmdlet = cmdlet.to_ascii_lowercase();
        if matches!(
            cmdlet.as_str(),
            "remove-item" | "ri" | "del" | "rd" | "erase" | "rmdir"
        ) {
            let recurse = rest
                .iter()
                .any(|w| w.to_ascii_lowercase().starts_with("-r"));
            // `-Path X` names X as any operand does; the switches have no values.
            for w in rest {
                if w.starts_with('-') {
                    continue;
                }
                // PowerShell expands a leading `~` in a path to the home directory.
                let path = w.trim_matches(['"', '\'']);
                let path = match path.strip_prefix('~') {
                    Some(rest) if rest.is_empty() || rest.starts_with(['/', '\\']) => {
                        format!("{HOME}{}", rest.replace('\\', "/"))
                    }
                    _ => path.to_owned(),
                };
                out.push(Follow::exec(vec![
                    Word::lit("rm"),
                    Word::lit(if recurse { "-rf" } else { "-f" }),
                    path_word(&path),
                ]));
            }
        } else if matches!(cmdlet.as_str(), "stop-computer" | "restart-computer") {
            out.push(Follow::exec(vec![Word::lit("shutdown")]));
        } else if matches!(cmdlet.as_str(), "stop-process" | "spps")
            && !rest.iter().any(|w| !w.starts_with('-'))
            && ["get-process", "gps", "ps "]
                .iter()
                .any(|g| code.to_ascii_lowercase().contains(g))
        {
            // `Get-Process | Stop-Process -Force`: every process the listing names.
            out.push(Follow::exec(vec![
                Word::lit("kill"),
                Word::lit("-9"),
                Word::lit("-1"),
            ]));
        }
    }
}

/// Code that reaches the network and runs code or a shell: `exec(urlopen(u).read())`,
/// `fetch(u).then(eval)`, `iex (iwr u)`, a socket duplicated onto a shell's descriptors, awk's
/// `/inet/tcp` coprocess. Either half alone is ordinary code.
fn runs_from_network(code: &str) -> bool {
    static NETWORK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)\b(?:socket|fsockopen|TCPSocket|IO::Socket|Net::HTTP|LWP::|HTTP::Tiny|urlopen|",
            r"urllib|requests\.(?:get|post)|https?\.get|fetch\(|XMLHttpRequest|iwr|irm|",
            r"Invoke-WebRequest|Invoke-RestMethod|DownloadString|DownloadData|WebClient|",
            r"net\.connect|net\.Socket|open-uri|URI\.open)|/inet/(?:tcp|udp)/",
        ))
        .expect("a valid pattern")
    });
    static RUNS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r#"(?i)\b(?:exec|eval|iex|Invoke-Expression|system|popen|spawn|execSync|dup2|"#,
            r#"pty\.spawn|call|check_output|run|ScriptBlock)\b\s*[\(\s"'{]|"#,
            r#"\.then\(\s*eval\s*\)|/bin/(?:ba)?sh\b|\|&"#,
        ))
        .expect("a valid pattern")
    });
    NETWORK.is_match(code) && RUNS.is_match(code)
}

fn script_follow(text: &str) -> Follow {
    Follow::string(Word::lit(text), "inline code", &Io::default())
}

/// Stands for the home directory found by [`HOME_EXPRESSIONS`] (a NUL never occurs in code's
/// string literals that name files).
const HOME: &str = "\0home";

/// A path from inline code as a word: the home directory as such; a literal `~` in code is a
/// file named `~` (no shell expands it), except where the code expands it
/// (`os.path.expanduser`).
fn path_word(path: &str) -> Word {
    match path.strip_prefix(HOME) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let mut w = Word {
                segs: vec![crate::words::Seg::Home],
            };
            if !rest.is_empty() {
                w.segs.push(crate::words::Seg::Lit(rest.to_owned()));
            }
            w
        }
        _ => glob_word(path),
    }
}

/// A path whose `*`, `?` and `[` are glob characters (`glob "/etc/*"`).
fn glob_word(path: &str) -> Word {
    let mut w = Word::default();
    for c in path.chars() {
        let seg = if matches!(c, '*' | '?' | '[') {
            crate::words::Seg::Glob(c.to_string())
        } else {
            crate::words::Seg::Lit(c.to_string())
        };
        match (w.segs.last_mut(), seg) {
            (Some(crate::words::Seg::Lit(a)), crate::words::Seg::Lit(b))
            | (Some(crate::words::Seg::Glob(a)), crate::words::Seg::Glob(b)) => a.push_str(&b),
            (_, seg) => w.segs.push(seg),
        }
    }
    w
}

/// Expressions that are the home directory in the languages read here.
const HOME_EXPRESSIONS: &[&str] = &[
    "os.homedir()",
    "require('os').homedir()",
    "require(\"os\").homedir()",
    "Path.home()",
    "pathlib.Path.home()",
    "os.environ['HOME']",
    "os.environ[\"HOME\"]",
    "os.environ.get('HOME')",
    "os.getenv('HOME')",
    "process.env.HOME",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "Dir.home",
    "getenv('HOME')",
    "getenv(\"HOME\")",
];

fn dynamic(name: &str, raw: &str) -> Follow {
    let raw: String = raw.chars().take(80).collect();
    Follow::Finding(Finding::ask(
        Class::Unresolved,
        RuleId::UnresolvedInlineCode,
        Reason::InlineCallUnknown { name, args: &raw }.text(),
    ))
}

fn judge(name: &str, api: Api, args: &[Arg], raw: &str, lang: CodeLang, out: &mut Vec<Follow>) {
    let first = args.first();
    match api {
        Api::DeleteTree | Api::Delete | Api::DeleteMaybeTree => {
            // Emacs's `(delete-directory DIR t)`: the `t` is recursive.
            let recursive = api == Api::DeleteTree
                || raw.contains("recursive")
                || (name == "delete-directory" && raw.trim_end().ends_with(" t"));
            let flag = if recursive { "-rf" } else { "-f" };
            let targets: Vec<&Arg> = match first {
                Some(Arg::List(items)) => items.iter().collect(),
                // Perl and Ruby take several paths: `unlink "a", "b"`, `rm_rf("a", "b")`.
                Some(_) if lang.bare_calls() => args.iter().collect(),
                Some(a) => vec![a],
                None => {
                    out.push(dynamic(name, raw));
                    return;
                }
            };
            if targets.len() > MAX_CALLS {
                out.push(dynamic(name, raw));
            }
            for t in targets.into_iter().take(MAX_CALLS) {
                match t {
                    Arg::Str(path) => out.push(Follow::exec(vec![
                        Word::lit("rm"),
                        Word::lit(flag),
                        path_word(path),
                    ])),
                    _ => out.push(dynamic(name, raw)),
                }
            }
        }
        Api::Run => match args {
            [Arg::Str(s)] => out.push(script_follow(s)),
            [Arg::Str(s), rest @ ..] if rest.first().is_some_and(|a| matches!(a, Arg::Str(_))) => {
                // `system("rm", "-rf", "/")`: a list of words; one only known at run time
                // stays in it as such. Python's `os.execl(path, argv0, …)` repeats the program
                // as argv[0].
                let argv0 = usize::from(
                    lang == CodeLang::Python
                        && name.starts_with("exec")
                        && name.ends_with(['l', 'p', 'e']),
                );
                let words: Vec<Word> = std::iter::once(Word::lit(s))
                    .chain(rest.iter().skip(argv0).map(arg_word))
                    .collect();
                out.push(Follow::exec(words));
            }
            [Arg::Str(s), Arg::List(items), ..] => push_argv(Some(s), items, name, raw, out),
            [Arg::List(items), ..] => push_argv(None, items, name, raw, out),
            [Arg::Str(s), ..] => out.push(script_follow(s)),
            // Nothing to run (`app.run()`).
            [] => {}
            _ => out.push(dynamic(name, raw)),
        },
        Api::Kill => {
            // Perl and Ruby take the signal first (`kill 9, -1`, `Process.kill(9, -1)`).
            let pids: Vec<&Arg> = if matches!(lang, CodeLang::Perl | CodeLang::Ruby) {
                args.iter().skip(1).collect()
            } else {
                args.iter().take(1).collect()
            };
            for pid in pids {
                if let Arg::Other(t) = pid
                    && t.trim_start_matches(['-', '+'])
                        .chars()
                        .all(|c| c.is_ascii_digit())
                    && !t.is_empty()
                {
                    out.push(Follow::exec(vec![
                        Word::lit("kill"),
                        Word::lit("-9"),
                        Word::lit("--"),
                        Word::lit(t),
                    ]));
                }
            }
        }
        Api::Write => {
            // `Path('x').write_text(…)` names its file on the receiver.
            let target = match first {
                Some(Arg::Str(p)) => Some(p.clone()),
                _ => None,
            };
            if let Some(p) = target {
                out.push(Follow::exec(vec![
                    Word::lit("truncate"),
                    Word::lit("-s"),
                    Word::lit("0"),
                    path_word(&p),
                ]));
            }
        }
        Api::Open | Api::Read => {
            // Perl's `open(my $fh, '<', PATH)` names the file last; the others first.
            let (path, mode) = if lang == CodeLang::Perl {
                match args {
                    [_, Arg::Str(m), Arg::Str(p), ..] => (Some(p.clone()), m.clone()),
                    [_, Arg::Str(mp)] => (
                        Some(mp.trim_start_matches(['<', '>', '+', ' ']).to_owned()),
                        mp.chars()
                            .take_while(|c| matches!(c, '<' | '>' | '+'))
                            .collect(),
                    ),
                    _ => (None, String::new()),
                }
            } else {
                let mode = match args.get(1) {
                    Some(Arg::Str(m)) => m.clone(),
                    _ => String::new(),
                };
                match first {
                    Some(Arg::Str(p)) => (Some(p.clone()), mode),
                    _ => (None, mode),
                }
            };
            let Some(path) = path else { return };
            let words = if api == Api::Open && (mode.contains('w') || mode == ">") {
                vec![
                    Word::lit("truncate"),
                    Word::lit("-s"),
                    Word::lit("0"),
                    path_word(&path),
                ]
            } else if api == Api::Open && (mode.contains('a') || mode.contains('>')) {
                vec![Word::lit("tee"), Word::lit("-a"), path_word(&path)]
            } else {
                vec![Word::lit("cat"), path_word(&path)]
            };
            out.push(Follow::exec(words));
        }
        Api::Code => match first {
            Some(Arg::Str(s)) => out.push(Follow::Code {
                text: s.clone(),
                lang,
            }),
            _ => out.push(dynamic(name, raw)),
        },
    }
}

/// An argument as a word: a literal, or a part only known at run time.
fn arg_word(arg: &Arg) -> Word {
    match arg {
        Arg::Str(t) => path_word(t),
        Arg::Other(t) => Word::dynamic(t),
        Arg::List(_) => Word::dynamic("[…]"),
    }
}

fn push_argv(
    program: Option<&String>,
    items: &[Arg],
    name: &str,
    raw: &str,
    out: &mut Vec<Follow>,
) {
    let mut words: Vec<Word> = program.map(|p| Word::lit(p)).into_iter().collect();
    // `os.execv(path, [argv0, …])`: the list repeats the program as its first element.
    let skip = usize::from(program.is_some() && name.starts_with("execv"));
    for item in items.iter().skip(skip) {
        match item {
            Arg::Str(t) => words.push(Word::lit(t)),
            _ => words.push(Word::dynamic("…")),
        }
    }
    if words.first().is_none_or(|w| !w.is_static()) {
        out.push(dynamic(name, raw));
        return;
    }
    out.push(Follow::exec(words));
}

/// The known calls in `code`: (name, kind, arguments, argument text).
fn calls(code: &str, lang: CodeLang) -> Vec<(&'static str, Api, Vec<Arg>, String)> {
    // Regular expressions are data (`s/remove this//`, `/exec format/`).
    let original = code;
    let blanked = blank_regexes(code, lang);
    let code = blanked.as_str();
    let bytes = code.as_bytes();
    // `import subprocess as s`: `s.run` is `subprocess.run`.
    let aliases: Vec<String> = code
        .match_indices(" as ")
        .filter_map(|(i, _)| {
            let module = code[..i]
                .split_whitespace()
                .last()?
                .trim_start_matches("import");
            let module = module.rsplit('.').next().unwrap_or(module);
            let alias: String = code[i + 4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (PROCESS_OWNERS.contains(&module) && !alias.is_empty()).then_some(alias)
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        // Skip string literals: names inside them are data.
        if matches!(c, b'\'' | b'"') || (c == b'`' && lang == CodeLang::Node) {
            i = skip_string(bytes, i);
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        // Lisp names run on through `-` and `/` (`delete-directory/files`, `shell-command`).
        let lisp =
            lang == CodeLang::Other && start > 0 && code[..start].trim_end().ends_with(['(', ':']);
        while lisp
            && i + 1 < bytes.len()
            && matches!(bytes[i], b'-' | b'/')
            && bytes[i + 1].is_ascii_alphabetic()
        {
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        }
        let ident = &code[start..i];
        let Some(&(name, api)) = APIS.iter().find(|(n, _)| *n == ident) else {
            continue;
        };
        let receiver = start > 0 && matches!(bytes[start - 1], b'.' | b':');
        // `asyncio.run(main())`, `app.run()`, `re.exec(s)`: generic names count only on a
        // process module (`subprocess.run`, `child_process.exec`, `Open3.capture2`) or with
        // literal arguments.
        let generic_unknown_owner = if receiver && GENERIC.contains(&ident) {
            let before = code[..start - 1].trim_end_matches(':');
            let owner: String = before
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            // A regular expression's `exec` (`/re/.exec(s)`) is a match, not a process.
            if start >= 2 && original.as_bytes().get(start - 2) == Some(&b'/') {
                continue;
            }
            !(owner.is_empty()
                || PROCESS_OWNERS.contains(&owner.as_str())
                || aliases.iter().any(|a| a == &owner))
        } else {
            false
        };
        // `$system`, `@unlink`: a variable, not a call.
        if start > 0 && matches!(bytes[start - 1], b'$' | b'@' | b'%') {
            continue;
        }
        // Perl, Ruby, PHP, awk, R, Julia … have `kill`, `system`, `rm` … as builtins; in
        // Python and JavaScript a bare `run` or `remove` is the program's own function
        // (Python's `exec`/`eval` excepted: they run code).
        let builtin_code = lang == CodeLang::Python && matches!(name, "exec" | "eval");
        if NEEDS_RECEIVER.contains(&name)
            && !receiver
            && matches!(lang, CodeLang::Python | CodeLang::Node)
            && !builtin_code
        {
            continue;
        }
        // Python's `exec`/`eval` run Python; elsewhere `exec` runs a command and `eval` code.
        let api = match (name, lang) {
            ("exec", CodeLang::Python) => Api::Code,
            ("eval", CodeLang::Python | CodeLang::Perl | CodeLang::Ruby | CodeLang::Php) => {
                Api::Code
            }
            ("eval", _) => continue,
            _ => api,
        };
        let mut j = i;
        // Elixir's and Ruby's bang and predicate names: `File.rm_rf!(…)`.
        if matches!(bytes.get(j), Some(b'!' | b'?')) && bytes.get(j + 1) == Some(&b'(') {
            j += 1;
        }
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t') {
            j += 1;
        }
        // A Lisp form `(name ARGS…)`: the arguments run to the form's closing parenthesis and
        // are separated by blanks.
        // The form's `(`, before a package prefix if any (`(sb-ext:run-program …)`).
        let head = code[..start].trim_end();
        let head = match head.strip_suffix(':') {
            Some(h) => {
                h.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            }
            None => head,
        };
        if lisp && head.ends_with('(') {
            let open = head.len() - 1;
            let Some(close_at) = close(bytes, open) else {
                continue;
            };
            let args = lisp_args(&code[i..close_at]);
            out.push((name, api, args, code[i..close_at].to_owned()));
            i = close_at.max(i);
            continue;
        }
        let (args_text, end) = match bytes.get(j) {
            Some(b'(') => match close(bytes, j) {
                Some(e) => (&code[j + 1..e], e + 1),
                None => (&code[j + 1..], bytes.len()),
            },
            Some(c)
                if (lang.bare_calls() || (lang == CodeLang::Other && *c == b'"'))
                    && j > i
                    && !matches!(
                        c,
                        b'=' | b';' | b',' | b')' | b'}' | b'.' | b'-' | b'>' | b'|' | b'&' | b'\n'
                    ) =>
            {
                let e = statement_end(bytes, j);
                (&code[j..e], e)
            }
            Some(b'{') if name == "qx" => match close(bytes, j) {
                Some(e) => (&code[j + 1..e], e + 1),
                None => continue,
            },
            // Perl's `unlink;` deletes `$_`: a file only known at run time.
            None | Some(b';' | b'}' | b'\n')
                if lang.bare_calls() && matches!(api, Api::Delete | Api::DeleteTree) =>
            {
                ("$_", j)
            }
            _ => continue,
        };
        let args = if name == "qx" {
            vec![Arg::Str(args_text.to_owned())]
        } else {
            split_args(args_text)
                .into_iter()
                .map(|a| match a {
                    // `cmd = "rm -rf ~"; system(cmd)`: a variable assigned one literal.
                    Arg::Other(ident) => assigned_literal(code, &ident)
                        .map(Arg::Str)
                        .or_else(|| loop_values(code, &ident))
                        .unwrap_or(Arg::Other(ident)),
                    a => a,
                })
                .collect()
        };
        // `Path('x').unlink()`: the target is the receiver's argument.
        let args = if matches!(
            name,
            "write_text" | "write_bytes" | "read_text" | "read_bytes"
        ) {
            receiver_path(code, start).map_or_else(Vec::new, |p| vec![Arg::Str(p)])
        } else if args.is_empty() && matches!(api, Api::Delete | Api::DeleteMaybeTree) {
            receiver_path(code, start).map_or(args, |p| vec![Arg::Str(p)])
        } else {
            args
        };
        // A generic name on an unknown receiver counts only with literal arguments
        // (`app.run()`, `asyncio.run(main())` are not processes).
        if generic_unknown_owner && !args.iter().any(|a| matches!(a, Arg::Str(_) | Arg::List(_))) {
            i = end.max(i);
            continue;
        }
        out.push((name, api, args, args_text.to_owned()));
        i = end.max(i);
        if out.len() > 64 {
            break;
        }
    }
    out
}

/// The literal a variable is assigned, when the code assigns it exactly once
/// (`cmd = "rm -rf ~"`, `my $p = '/etc'`, `const p = "/"`).
fn assigned_literal(code: &str, ident: &str) -> Option<String> {
    let name = ident.trim_start_matches(['$', '@']);
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let mut found = None;
    let mut count = 0;
    for (i, _) in code.match_indices(name) {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let after = code[i + name.len()..].trim_start();
        let Some(value) = after.strip_prefix('=').filter(|v| !v.starts_with('=')) else {
            continue;
        };
        count += 1;
        if count > 1 {
            return None;
        }
        let value = value.trim_start();
        let end = statement_end(value.as_bytes(), 0);
        found = literal(value[..end].trim());
    }
    if count == 1 { found } else { None }
}

/// `code` with the regular-expression literals blanked out (same length, spaces), so their
/// text is not read as calls: Perl's `s/…/…/`, `m/…/`, `qr/…/`, `tr/…/…/`, `y/…/…/`, and a
/// bare `/…/` where an operand starts (Perl, Ruby, awk, JavaScript).
fn blank_regexes(code: &str, lang: CodeLang) -> String {
    if matches!(
        lang,
        CodeLang::Python | CodeLang::Php | CodeLang::Tcl | CodeLang::Other
    ) {
        return code.to_owned();
    }
    let chars: Vec<char> = code.chars().collect();
    let mut out: Vec<char> = chars.clone();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '\'' | '"') {
            // Skip strings.
            let q = c;
            i += 1;
            while i < chars.len() && chars[i] != q {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        let prev = chars[..i]
            .iter()
            .rev()
            .find(|c| !c.is_whitespace())
            .copied();
        let word_before = i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
        // Perl's quote-like operators, with their number of delimited parts.
        let perl_op = if lang == CodeLang::Perl && !word_before {
            [("qr", 1), ("tr", 2), ("s", 2), ("m", 1), ("y", 2)]
                .into_iter()
                .find(|(op, _)| {
                    let n = op.len();
                    chars[i..].iter().take(n).collect::<String>() == *op
                        && chars
                            .get(i + n)
                            .is_some_and(|d| matches!(d, '/' | '|' | '#' | '!'))
                        && chars.get(i + n + 1).is_none_or(|d| *d != '=')
                })
        } else {
            None
        };
        let (start, parts) = match perl_op {
            Some((op, parts)) => (i + op.len(), parts),
            None if c == '/' && prev.is_none_or(|p| "(,=~!{;&|?:[".contains(p)) => (i, 1),
            None => {
                i += 1;
                continue;
            }
        };
        let delim = chars[start];
        let mut j = start + 1;
        let mut seen = 0;
        while j < chars.len() {
            if chars[j] == '\\' {
                j += 2;
                continue;
            }
            if chars[j] == delim {
                seen += 1;
                if seen == parts {
                    break;
                }
            }
            if chars[j] == '\n' {
                break;
            }
            j += 1;
        }
        if seen < parts {
            i = start + 1;
            continue;
        }
        for slot in out.iter_mut().take(j.min(chars.len() - 1) + 1).skip(start) {
            *slot = ' ';
        }
        i = j + 1;
    }
    // Blanks keep their byte width: a replaced wide character becomes as many spaces.
    let mut text = String::with_capacity(code.len());
    for (orig, new) in chars.iter().zip(&out) {
        if orig == new {
            text.push(*orig);
        } else {
            text.extend(std::iter::repeat_n(' ', orig.len_utf8()));
        }
    }
    text
}

/// Encoded literals decoded as the code would (`bytes.fromhex('726d').decode()`,
/// `base64.b64decode('cm0=').decode()`, `pack("H*", "726d")`, `Buffer.from("cm0=",
/// "base64").toString()`, `atob("cm0=")`).
fn decoded_literal(t: &str) -> Option<String> {
    let inner_of = |prefix: &str| -> Option<Vec<Arg>> {
        let start = t.find(prefix)? + prefix.len();
        let end = close(t.as_bytes(), start - 1)?;
        Some(split_args(&t[start..end]))
    };
    let hex = |h: &str| -> Option<String> {
        let h: String = h.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes: Option<Vec<u8>> = (0..h.len() / 2)
            .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
            .collect();
        String::from_utf8(bytes?).ok()
    };
    let b64 = |b: &str| crate::words::base64_decode(b).and_then(|v| String::from_utf8(v).ok());
    if let Some([Arg::Str(h)]) = inner_of("fromhex(").as_deref() {
        return hex(h);
    }
    if let Some([Arg::Str(b)]) = inner_of("b64decode(").as_deref() {
        return b64(b);
    }
    if let Some([Arg::Str(b)]) = inner_of("atob(").as_deref() {
        return b64(b);
    }
    if let Some([Arg::Str(f), Arg::Str(h)]) = inner_of("pack(").as_deref()
        && f.starts_with('H')
    {
        return hex(h);
    }
    if let Some([Arg::Str(b), Arg::Str(enc)]) = inner_of("Buffer.from(").as_deref() {
        return match enc.as_str() {
            "base64" => b64(b),
            "hex" => hex(b),
            _ => None,
        };
    }
    None
}

/// The arguments of a Lisp form: strings, symbols, and lists (`(list "-rf" "/")` is a list of
/// its strings).
fn lisp_args(text: &str) -> Vec<Arg> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() && out.len() < 32 {
        match bytes[i] {
            b' ' | b'\t' | b'\n' => i += 1,
            b'"' => {
                let end = skip_string(bytes, i);
                out.push(
                    literal(&text[i..end])
                        .map_or_else(|| Arg::Other(text[i..end].to_owned()), Arg::Str),
                );
                i = end;
            }
            b'(' | b'\'' if bytes.get(i + 1) == Some(&b'(') || bytes[i] == b'(' => {
                let open = if bytes[i] == b'(' { i } else { i + 1 };
                let end = close(bytes, open).unwrap_or(bytes.len() - 1);
                let inner = lisp_args(text.get(open + 1..end).unwrap_or(""));
                out.push(Arg::List(
                    inner
                        .into_iter()
                        .filter(|a| matches!(a, Arg::Str(_)))
                        .collect(),
                ));
                i = end + 1;
            }
            _ => {
                let end = text[i..]
                    .find([' ', '\t', '\n', ')'])
                    .map_or(text.len(), |e| i + e);
                out.push(Arg::Other(text[i..end].to_owned()));
                i = end.max(i + 1);
            }
        }
    }
    out
}

/// The literal values a loop variable takes: `for d in ("/usr", "/etc"):` (Python),
/// `for d in ["/a", "/b"]` (Ruby, Julia), `for my $d ("/a", "/b")` / `foreach $d (…)` (Perl).
fn loop_values(code: &str, ident: &str) -> Option<Arg> {
    let name = ident.trim_start_matches('$');
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    for keyword in ["for ", "foreach "] {
        for (i, _) in code.match_indices(keyword).take(16) {
            let rest = code[i + keyword.len()..].trim_start();
            let rest = rest.strip_prefix("my ").unwrap_or(rest).trim_start();
            let rest = rest.strip_prefix('$').unwrap_or(rest);
            let Some(after) = rest.strip_prefix(name) else {
                continue;
            };
            let after = after.trim_start();
            let after = after.strip_prefix("in ").unwrap_or(after).trim_start();
            if !after.starts_with(['(', '[']) {
                continue;
            }
            let start = code.len() - after.len();
            let Some(end) = close(code.as_bytes(), start) else {
                continue;
            };
            let items = split_args(&code[start + 1..end]);
            if !items.is_empty() && items.iter().all(|a| matches!(a, Arg::Str(_))) {
                return Some(Arg::List(items));
            }
        }
    }
    None
}

/// `Path("x").unlink()`: the literal in the call just before `.NAME`.
fn receiver_path(code: &str, name_start: usize) -> Option<String> {
    let before = code.get(..name_start.checked_sub(1)?)?;
    let inner = before.strip_suffix(')')?;
    let open = inner.rfind('(')?;
    match split_args(&inner[open + 1..]).as_slice() {
        [Arg::Str(p)] => Some(p.clone()),
        _ => None,
    }
}

/// The index of the `)`, `]` or `}` closing the bracket at `open`, quotes respected.
fn close(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' | b'`' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The end of a statement of a call without parentheses: `;`, a newline, `}` or `or`/`||`.
fn statement_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' | b'`' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'(' | b'[' => {
                i = close(bytes, i).map_or(bytes.len(), |e| e + 1);
                continue;
            }
            b';' | b'\n' | b'}' | b'|' => return i,
            b' ' if bytes[i..].starts_with(b" or ") || bytes[i..].starts_with(b" if ") => return i,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// Index after the string literal starting at `at`.
fn skip_string(bytes: &[u8], at: usize) -> usize {
    let q = bytes[at];
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == q => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Splits an argument list on top-level commas and reads each argument.
fn split_args(text: &str) -> Vec<Arg> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' | b'`' => {
                i = skip_string(bytes, i);
                continue;
            }
            b'(' | b'[' | b'{' => {
                i = close(bytes, i).map_or(bytes.len(), |e| e + 1);
                continue;
            }
            // Keyword arguments after `;` (Julia) are arguments too.
            b',' | b';' => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        items.push(&text[start..]);
    }
    items
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .take(32)
        .map(read_arg)
        .collect()
}

/// One argument: a string literal, a list of them, or something only known at run time.
fn read_arg(text: &str) -> Arg {
    let t = text.trim();
    if let Some(decoded) = decoded_literal(t) {
        return Arg::Str(decoded);
    }
    // Perl's `glob "/etc/*"`, `glob("/etc/*")`, Ruby's `Dir.glob`, Python's `glob.glob`.
    if let Some(pattern) = t
        .strip_prefix("Dir.glob")
        .or_else(|| t.strip_prefix("glob.glob"))
        .or_else(|| t.strip_prefix("Dir[").map(|r| r.trim_end_matches(']')))
        .or_else(|| t.strip_prefix("glob"))
        .map(|r| {
            r.trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .trim()
        })
        .and_then(literal)
    {
        return Arg::Str(pattern);
    }
    if HOME_EXPRESSIONS.contains(&t) {
        return Arg::Str(HOME.into());
    }
    // `Dir.home + "/.gitconfig"`, `'/et' + 'c'`: a sum of literals and the home directory.
    if t.contains('+') {
        let parts: Option<Vec<String>> = t
            .split('+')
            .map(|part| match read_arg(part) {
                Arg::Str(s) => Some(s),
                _ => None,
            })
            .collect();
        if let Some(parts) = parts
            && parts.len() > 1
        {
            return Arg::Str(parts.concat());
        }
    }
    // `os.path.expanduser('~/x')`, `path.resolve('/x')`: the path inside.
    if let Some(inner) = t
        .rfind("expanduser(")
        .and_then(|i| t[i + "expanduser(".len()..].strip_suffix(')'))
        && let [Arg::Str(p)] = split_args(inner).as_slice()
        && (p == "~" || p.starts_with("~/"))
    {
        return Arg::Str(format!("{HOME}{}", &p[1..]));
    }
    for wrapper in ["Path(", "resolve(", "realpath(", "abspath(", "join("] {
        if let Some(inner) = t
            .rfind(wrapper)
            .filter(|&i| i == 0 || t[..i].ends_with('.'))
            .and_then(|i| t[i + wrapper.len()..].strip_suffix(')'))
            && let [Arg::Str(p)] = split_args(inner).as_slice()
            && (t.starts_with(wrapper)
                || t.starts_with("os.")
                || t.starts_with("path.")
                || t.starts_with("pathlib."))
        {
            return Arg::Str(p.clone());
        }
    }
    // Python string prefixes; an f-string with a field is dynamic.
    let unprefixed = t.trim_start_matches(['r', 'b', 'u', 'R', 'B', 'U']);
    if let Some(s) = literal(unprefixed) {
        return Arg::Str(s);
    }
    if let Some(rest) = t.strip_prefix(['f', 'F'])
        && let Some(s) = literal(rest)
        && !s.contains('{')
    {
        return Arg::Str(s);
    }
    let list = t
        .strip_prefix("qw(")
        .or_else(|| t.strip_prefix("%w("))
        .or_else(|| t.strip_prefix("%w["))
        .and_then(|r| r.strip_suffix([')', ']']));
    if let Some(words) = list {
        return Arg::List(
            words
                .split_whitespace()
                .map(|w| Arg::Str(w.to_owned()))
                .collect(),
        );
    }
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let Some(inner) = t.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
            return Arg::List(split_args(inner));
        }
    }
    Arg::Other(t.to_owned())
}

/// The value of a whole string literal (`'…'`, `"…"`, `` `…` `` without `${`).
fn literal(t: &str) -> Option<String> {
    let q = t.chars().next()?;
    if !matches!(q, '\'' | '"' | '`') || t.len() < 2 || !t.ends_with(q) {
        return None;
    }
    // The quote is one ASCII byte, so these slices fall on character boundaries.
    let three = q.to_string().repeat(3);
    let triple = t.len() >= 6 && t.starts_with(&three) && t.ends_with(&three);
    let inner = if triple {
        &t[3..t.len() - 3]
    } else {
        &t[1..t.len() - 1]
    };
    // No unescaped quote inside: two literals glued (`'a' 'b'`) or an expression are not one.
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == q && !triple {
            return None;
        }
    }
    // Escapes as the languages read them (`\n`, `\x2f`, `\u00e9`, `\"`).
    let out = crate::words::ansi_c(inner);
    // Interpolation makes it dynamic: `${x}` (JS, Perl, Ruby `#{x}`), `$x` in Perl/PHP "…".
    if (q == '`' && out.contains("${")) || out.contains("#{") || (q == '"' && out.contains('$')) {
        return None;
    }
    Some(out)
}

/// Backtick commands of Perl, Ruby and PHP (`` `rm -rf /` ``).
fn backticks(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `%x(…)`, `%x{…}` (Ruby) and `qx(…)`, `qx{…}` (Perl) are backticks too.
    for opener in ["%x", "qx"] {
        for (i, _) in code.match_indices(opener) {
            let bytes = code.as_bytes();
            let open = i + opener.len();
            if matches!(bytes.get(open), Some(b'(' | b'{' | b'['))
                && let Some(end) = close(bytes, open)
            {
                out.push(code[open + 1..end].to_owned());
            }
        }
    }
    let mut rest = code;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        out.push(after[..close].to_owned());
        rest = &after[close + 1..];
    }
    out
}

/// Awk's pipes to and from commands: `print … | "sh"` (what is printed is the script when
/// the command is a shell), `"cmd" | getline`.
fn awk_pipes(code: &str) -> Vec<Follow> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'|' {
            continue;
        }
        if out.len() >= 16 {
            break;
        }
        let after = code[i + 1..].trim_start();
        if after.starts_with('"') {
            let end = skip_string(after.as_bytes(), 0);
            if let Some(s) = literal(&after[..end]) {
                let shell =
                    crate::tools::SHELLS.contains(&s.split_whitespace().next().unwrap_or(""));
                let before = code[..i].trim_end();
                let printed = before
                    .rfind("print")
                    .map(|p| {
                        before[p..]
                            .trim_start_matches("printf")
                            .trim_start_matches("print")
                            .trim()
                    })
                    .and_then(literal);
                match (shell, printed) {
                    (true, Some(script)) => out.push(script_follow(&script)),
                    (true, None) => out.push(Follow::Finding(Finding::ask(
                        Class::Unresolved,
                        RuleId::UnresolvedPipeToShell,
                        Reason::AwkPrintsIntoShell.text(),
                    ))),
                    _ => out.push(script_follow(&s)),
                }
            }
        } else if after.starts_with("getline") {
            let before = code[..i].trim_end();
            if before.ends_with('"')
                && let Some(open) = before[..before.len() - 1].rfind('"')
                && let Some(s) = literal(&before[open..])
            {
                out.push(script_follow(&s));
            } else {
                // `cmd | getline` with `cmd = "…"` assigned in the program.
                let ident: String = before
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                if let Some(s) = assigned_literal(code, &ident) {
                    out.push(script_follow(&s));
                }
            }
        }
    }
    // `print … > "FILE"`, `>> "FILE"`: awk writes the file.
    for (i, _) in code.match_indices('>').take(64) {
        let after = code[i + 1..].trim_start_matches('>').trim_start();
        if after.starts_with('"') {
            let end = skip_string(after.as_bytes(), 0);
            if let Some(file) = literal(&after[..end]) {
                let append = code[i + 1..].starts_with('>');
                let mut words = vec![Word::lit("tee")];
                if append {
                    words.push(Word::lit("-a"));
                }
                words.push(path_word(&file));
                out.push(Follow::exec(words));
            }
        }
    }
    out
}

/// The contents of '...', "..." and `...` literals in program code.
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut s = String::new();
        while let Some(d) = chars.next() {
            if d == '\\' {
                if let Some(e) = chars.next() {
                    s.push(e);
                }
            } else if d == c {
                break;
            } else {
                s.push(d);
            }
        }
        out.push(s);
        if out.len() > 64 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn execs(code: &str, lang: CodeLang) -> Vec<String> {
        analyse(code, lang)
            .into_iter()
            .filter_map(|f| match f {
                Follow::Exec { words, .. } => Some(crate::command::join(&words)),
                Follow::String { word, .. } => Some(format!("sh: {}", word.text())),
                Follow::Finding(f) => Some(format!("{:?}: {}", f.decision, f.rule)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn deletion_apis_become_rm() {
        assert_eq!(
            execs("import shutil; shutil.rmtree('/')", CodeLang::Python),
            ["rm -rf /"]
        );
        assert_eq!(
            execs("import os; os.remove(\"/etc/passwd\")", CodeLang::Python),
            ["rm -f /etc/passwd"]
        );
        assert_eq!(
            execs(
                "require('fs').rmSync('/', {recursive: true, force: true})",
                CodeLang::Node
            ),
            ["rm -rf /"]
        );
        assert_eq!(
            execs("use File::Path; remove_tree '/usr', '/etc'", CodeLang::Perl),
            ["rm -rf /usr", "rm -rf /etc"]
        );
        assert_eq!(
            execs(
                "from pathlib import Path; Path('/etc/hosts').unlink()",
                CodeLang::Python
            ),
            ["rm -f /etc/hosts"]
        );
        assert_eq!(
            execs("import os,sys; os.remove(sys.argv[1])", CodeLang::Python),
            ["Ask: unresolved.inline-code"]
        );
    }

    #[test]
    fn process_apis_become_commands() {
        assert_eq!(
            execs(
                "require('child_process').execSync('rm -rf /')",
                CodeLang::Node
            ),
            ["sh: rm -rf /"]
        );
        assert_eq!(
            execs(
                "import subprocess; subprocess.run(['rm', '-rf', '/'])",
                CodeLang::Python
            ),
            ["rm -rf /"]
        );
        assert_eq!(
            execs("system 'rm', '-rf', '/'", CodeLang::Ruby),
            ["rm -rf /"]
        );
        assert_eq!(execs("print `ls /`", CodeLang::Perl), ["sh: ls /"]);
        assert_eq!(
            execs(
                "BEGIN { \"date\" | getline d; print d | \"sh\" }",
                CodeLang::Awk
            ),
            ["sh: date", "Ask: unresolved.pipe-to-shell"]
        );
    }

    #[test]
    fn data_is_not_a_call() {
        assert!(execs("print('shutil.rmtree(\"/\")')", CodeLang::Python).is_empty());
        assert!(execs("x = run_tests()", CodeLang::Python).is_empty());
    }
}
