//! Commands that run other commands: `bash -c`, `eval`, `trap`, `alias`, shells and
//! interpreters fed a script, `xargs`, `find -exec`, `parallel`, `watch`, `su -c`, `ssh HOST
//! CMD`, `docker exec`, git settings and environment variables that git or a shell runs.
//!
//! Discovery is a pure function of one command and its placement: [`follow`] says what the
//! command runs; the walker applies it (`Walker::apply`), so this module never walks.

use crate::command::{Class, Cmd, CodeLang, Finding, Follow, Io, Lang, Place, RedirKind, Stdin};
use crate::flags::{canonical_long, option_words_plain as option_words};
use crate::reasons::Reason;
use crate::tools::find_starts;

use crate::command::program_name;
use crate::rule::RuleId;
pub(crate) use crate::tools::SHELLS;
use crate::unwrap::is_assignment;

use crate::words::{Seg, Word, ansi_c, base64_decode};

/// Tests that filter what `find` matches.
const FIND_FILTERS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-newer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-user",
    "-group",
    "-perm",
    "-empty",
    "-lname",
    "-ilname",
    "-links",
    "-inum",
    "-uid",
    "-gid",
    "-nouser",
    "-nogroup",
    "-samefile",
    "-maxdepth",
    "-mindepth",
];

/// Git configuration keys whose value git runs through a shell.
const GIT_SHELL_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.askpass",
    "sequence.editor",
    "diff.external",
    "gpg.program",
];

/// The hooks git runs on its everyday commands.
const GIT_HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-push",
    "post-checkout",
    "post-merge",
    "pre-rebase",
    "pre-merge-commit",
    "post-rewrite",
];

/// Environment variables whose value a program runs as a shell command (git, ssh, sudo,
/// man, an interactive shell).
/// Prompt strings: bash expands the command substitutions in them each time it shows one
/// (`PS4` on every traced command after `set -x`).
const PROMPT_VARS: &[&str] = &["PS0", "PS1", "PS2", "PS4"];

const EXEC_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "PROMPT_COMMAND",
];

/// Environment variables whose value a program runs as a command line, by name pattern
/// (prefix, suffix): cargo's `CARGO_TARGET_<TRIPLE>_RUNNER`.
const COMMAND_VAR_PATTERNS: &[(&str, &str)] = &[
    ("CARGO_TARGET_", "_RUNNER"),
    ("CARGO_TARGET_", "_LINKER"),
    ("RUSTC_WRAPPER", ""),
    ("CARGO_BUILD_RUSTC_WRAPPER", ""),
    ("LESSOPEN", ""),
    ("GIT_CONFIG_VALUE_", ""),
    ("LESSCLOSE", ""),
];

/// Variables that may hold a command line whose value only known at run time still asks.
const COMMAND_LINES: &[&str] = &["GIT_SSH_COMMAND", "GIT_PROXY_COMMAND", "PROMPT_COMMAND"];

/// How an environment variable names files a program loads when it starts.
#[derive(Clone, Copy)]
enum StartFile {
    /// The value is the file.
    Whole(Lang),
    /// The value is a `:`-separated list of directories holding these files.
    InDirs(&'static [&'static str], Lang),
    /// The value is options; the file follows one of these (`--require F`, `-rF`).
    AfterOption(&'static [&'static str], Lang),
}

/// Environment variables naming files a program loads at start, before what it was asked to
/// run: `BASH_ENV=x.sh bash -c true` runs x.sh.
const START_FILE_VARS: &[(&str, StartFile)] = &[
    ("BASH_ENV", StartFile::Whole(Lang::Shell)),
    ("ENV", StartFile::Whole(Lang::Shell)),
    (
        "PYTHONSTARTUP",
        StartFile::Whole(Lang::Code(CodeLang::Python)),
    ),
    ("LD_PRELOAD", StartFile::Whole(Lang::Code(CodeLang::Other))),
    (
        "GIT_CONFIG_GLOBAL",
        StartFile::Whole(Lang::Code(CodeLang::Other)),
    ),
    (
        "GIT_CONFIG_SYSTEM",
        StartFile::Whole(Lang::Code(CodeLang::Other)),
    ),
    (
        "ZDOTDIR",
        StartFile::InDirs(&[".zshenv", ".zshrc", ".zprofile"], Lang::Shell),
    ),
    (
        "PYTHONPATH",
        StartFile::InDirs(
            &["sitecustomize.py", "usercustomize.py"],
            Lang::Code(CodeLang::Python),
        ),
    ),
    (
        "NODE_OPTIONS",
        StartFile::AfterOption(
            &[
                "--require",
                "-r",
                "--import",
                "--loader",
                "--experimental-loader",
            ],
            Lang::Code(CodeLang::Node),
        ),
    ),
    (
        "RUBYOPT",
        StartFile::AfterOption(&["-r"], Lang::Code(CodeLang::Ruby)),
    ),
    (
        "JAVA_TOOL_OPTIONS",
        StartFile::AfterOption(&["-javaagent:"], Lang::Code(CodeLang::Other)),
    ),
];

/// Whether writing `path` schedules what is written to run later, and as what.
pub(crate) fn runs_later(path: &std::path::Path, home: Option<&str>) -> Option<Lang> {
    let s = path.to_string_lossy();
    if s.contains("/.git/hooks/") {
        return Some(Lang::Shell);
    }
    if s == "/etc/crontab" || s.starts_with("/etc/cron.d/") {
        return Some(Lang::SystemCrontab);
    }
    if s.starts_with("/var/spool/cron/") {
        return Some(Lang::Crontab);
    }
    if s.ends_with(".service") && (s.contains("/systemd/") || s.starts_with("/etc/systemd")) {
        return Some(Lang::Unit);
    }
    const SHELL_STARTUP: &[&str] = &[
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/rc.local",
        "/etc/environment",
    ];
    if SHELL_STARTUP.contains(&s.as_ref())
        || s.starts_with("/etc/profile.d/")
        || [
            "/etc/cron.hourly/",
            "/etc/cron.daily/",
            "/etc/cron.weekly/",
            "/etc/cron.monthly/",
        ]
        .iter()
        .any(|d| s.starts_with(d))
    {
        return Some(Lang::Shell);
    }
    let home = home?;
    let rest = s.strip_prefix(home)?.trim_start_matches('/');
    matches!(
        rest,
        ".bashrc"
            | ".bash_profile"
            | ".profile"
            | ".zshrc"
            | ".zprofile"
            | ".bash_login"
            | ".bash_logout"
            | ".zshenv"
            | ".config/fish/config.fish"
    )
    .then_some(Lang::Shell)
}

/// What the walk knows about files written and substitutions run earlier on the line.
pub(crate) struct Known<'a> {
    pub(crate) written: &'a std::collections::HashMap<std::path::PathBuf, Option<String>>,
    pub(crate) procsubs: &'a std::collections::HashMap<String, Option<String>>,
}

impl Known<'_> {
    /// The content of a file the line wrote, or of a process substitution, when known.
    fn text(&self, word: &Word, cmd: &Cmd) -> Option<String> {
        let t = word.literal().or_else(|| Some(word.text()))?;
        if t.starts_with("<(") {
            return self.procsubs.get(&t).cloned().flatten();
        }
        let cwd = cmd.cwd.exact()?;
        self.written
            .get(&crate::paths::normalize(cwd, std::path::Path::new(&t)))
            .cloned()
            .flatten()
    }
}

/// What `cmd` runs, placed as `io` says.
pub(crate) fn follow(cmd: &Cmd, io: &Io, known: &Known<'_>) -> Vec<Follow> {
    let mut out = Vec::new();
    if let Some(split) = &cmd.unwrapped.split_string {
        out.push(Follow::string(split.clone(), "env -S", io));
    }
    for (name, value) in &cmd.env_values {
        out.extend(exec_var(name, value));
    }
    // Wrappers that take a command string (`runuser root -c '…'`), at any level.
    for level in 0..cmd.unwrapped.levels.len() {
        let words = cmd.level(level);
        let Some(name) = words.first().and_then(program_name) else {
            continue;
        };
        let args = words.get(1..).unwrap_or(&[]);
        let string_opts = match crate::tools::lookup(&name) {
            Some(tool) if !tool.command_opts.is_empty() => tool.command_opts,
            _ => continue,
        };
        if let Some(s) = option_value(args, string_opts) {
            out.push(Follow::string(s, &name, io));
        } else if name == "sg"
            && let Some(s) = args.get(1)
        {
            // `sg GROUP 'command'`.
            out.push(Follow::string(s.clone(), "sg", io));
        }
    }
    let Some(program) = cmd.program() else {
        return out;
    };
    if let Some(first) = cmd.argv().first()
        && first.text().contains('/')
    {
        out.push(Follow::File {
            word: first.clone(),
            lang: Lang::Shell,
        });
    }
    let args = cmd.args();
    let program = program.as_str();
    if SHELLS.contains(&program) {
        shell(cmd, args, io, &mut out);
    } else if let Some(lang) = CodeLang::of(program) {
        interpreter(cmd, args, io, lang, &mut out);
    }
    command_strings(program, args, cmd, io, &mut out);
    network_shell(cmd, program, args, &mut out);
    // Files the program runs without being told, when the line wrote them.
    if let Some(tool) = crate::tools::lookup(program) {
        out.extend(tool.implicit.iter().map(|&(file, lang)| Follow::File {
            word: Word::lit(file),
            lang,
        }));
    }
    match program {
        "eval" => {
            if args.iter().all(Word::is_static) {
                out.push(Follow::String {
                    word: Word::lit(&crate::command::join(args)),
                    what: "eval".into(),
                    io: io.clone(),
                    place: Place::Here,
                    scoped: false,
                    positional: None,
                });
            } else if !args.iter().all(environment_setup) {
                out.push(unresolved(RuleId::UnresolvedEval, &Reason::EvalUnknown));
            }
        }
        "source" | "." => match args.first() {
            // `. /dev/stdin <<< '…'`: the script is standard input.
            Some(script) if script.is("/dev/stdin") || script.is("-") => {
                stdin_script(cmd, io, Lang::Shell, program, &mut out);
            }
            Some(script) => out.push(Follow::File {
                word: script.clone(),
                lang: Lang::Shell,
            }),
            None => {}
        },
        "cmake" => {
            // `cmake -E rm -rf PATH`, `cmake -E remove_directory PATH`: rm by another name.
            if let Some(e) = args.iter().position(|a| a.is("-E"))
                && let Some(verb) = args.get(e + 1).and_then(Word::literal)
            {
                let rest = args.get(e + 2..).unwrap_or(&[]);
                let flag = match verb.as_str() {
                    "rm" => None,
                    "remove_directory" => Some("-rf"),
                    "remove" => Some("-f"),
                    _ => return out,
                };
                let words: Vec<Word> = std::iter::once(Word::lit("rm"))
                    .chain(flag.map(Word::lit))
                    .chain(rest.iter().cloned())
                    .collect();
                out.push(Follow::exec(words));
            }
        }
        "ansible" | "ansible-playbook" => {
            // `ansible HOSTS -m shell|command|raw -a 'CMD'` runs CMD on every host.
            let module = option_value(args, &["-m", "--module-name"]).and_then(|w| w.literal());
            if matches!(
                module.as_deref(),
                Some(
                    "shell"
                        | "command"
                        | "raw"
                        | "ansible.builtin.shell"
                        | "ansible.builtin.command"
                )
            ) && let Some(a) = option_value(args, &["-a", "--args"])
            {
                out.push(Follow::String {
                    word: a,
                    what: "ansible".into(),
                    io: Io::default(),
                    place: Place::Remote,
                    scoped: true,
                    positional: None,
                });
            }
        }
        "fd" | "fdfind" => out.extend(fd_exec(args)),
        "trap" => {
            let mut rest = args;
            if rest.first().is_some_and(|w| w.is("--")) {
                rest = &rest[1..];
            }
            if let Some(action) = rest.first()
                && !(action.is("-") || action.is("-l") || action.is("-p"))
                && rest.len() > 1
            {
                out.push(Follow::string(action.clone(), "trap", &Io::default()));
            }
        }
        "alias" => {
            for a in args {
                match a.literal() {
                    Some(t) => {
                        if let Some((_, value)) = t.split_once('=') {
                            out.push(Follow::script(value, "alias"));
                        }
                    }
                    None => out.push(unresolved(RuleId::UnresolvedAlias, &Reason::AliasUnknown)),
                }
            }
        }
        "at" | "batch" => match option_value(args, &["-f"]) {
            Some(file) => out.push(Follow::File {
                word: file,
                lang: Lang::Shell,
            }),
            None if !args.iter().any(|a| a.is("-l") || a.is("-r") || a.is("-c")) => {
                stdin_script(cmd, io, Lang::Shell, program, &mut out);
            }
            None => {}
        },
        "xargs" => out.extend(xargs(cmd, args, io, known)),
        "find" => out.extend(find_exec(args)),
        "parallel" => out.extend(parallel(cmd, args, io)),
        "tar" | "bsdtar" => tar_commands(args, io, &mut out),
        "sed" | "gsed" => sed_commands(cmd, args, io, &mut out),
        "make" | "gmake" => {
            let p = crate::flags::parse(
                args,
                &crate::flags::Spec {
                    value_short: "fCIjlo",
                    value_long: &["file", "makefile", "directory"],
                    ..crate::flags::Spec::PLAIN
                },
            );
            for a in args {
                if let Some(text) = a
                    .literal()
                    .and_then(|t| t.strip_prefix("--eval=").map(str::to_owned))
                {
                    out.push(Follow::script(
                        &embedded_commands(&text, Lang::Make),
                        "make --eval",
                    ));
                }
            }
            match p.value(&["-f", "--file", "--makefile"]) {
                Some("-") => stdin_script(cmd, io, Lang::Make, "make -f -", &mut out),
                Some(f) => out.push(Follow::File {
                    word: Word::lit(f),
                    lang: Lang::Make,
                }),
                // The default makefile: the tool table's implicit inputs.
                None => {}
            }
            for (i, a) in args.iter().enumerate() {
                if (a.is("-f") || a.is("--file"))
                    && args.get(i + 1).is_some_and(|w| w.text().starts_with("<("))
                {
                    out.push(Follow::File {
                        word: args[i + 1].clone(),
                        lang: Lang::Make,
                    });
                }
            }
        }
        "go" => out.extend(
            args.iter()
                .filter(|a| {
                    std::path::Path::new(&a.text())
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("go"))
                })
                .map(|a| Follow::File {
                    word: a.clone(),
                    lang: Lang::Code(CodeLang::Other),
                }),
        ),
        "crontab" => {
            let ops: Vec<&Word> = args
                .iter()
                .filter(|a| !a.starts_with("-") || a.is("-"))
                .collect();
            // No operand: it reads the new crontab from standard input, as `crontab -` does.
            let from_stdin = ops.is_empty()
                && (cmd.piped_in || cmd.stdin_redirected())
                && !args.iter().any(|a| a.is("-l") || a.is("-r") || a.is("-e"));
            // An empty crontab replaces every job: `crontab -r` by another name.
            let emptied = match ops.as_slice() {
                [w] if w.is("/dev/null") => true,
                _ if from_stdin || matches!(ops.as_slice(), [w] if w.is("-")) => {
                    match input(cmd, io) {
                        Input::Text(t) => t.trim().is_empty(),
                        Input::File(f) => f.is("/dev/null"),
                        _ => false,
                    }
                }
                _ => false,
            };
            if emptied {
                out.push(Follow::Finding(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineCrontabRemove,
                    Reason::EmptyCrontab.text(),
                )));
            }
            match ops.as_slice() {
                _ if emptied => {}
                _ if from_stdin || matches!(ops.as_slice(), [w] if w.is("-")) => {
                    if let Input::Text(t) = input(cmd, io) {
                        out.push(Follow::script(
                            &embedded_commands(&t, Lang::Crontab),
                            "crontab",
                        ));
                    } else {
                        out.push(unresolved(
                            RuleId::UnresolvedGeneratedScript,
                            &Reason::CrontabFromInput,
                        ));
                    }
                }
                [w] => out.push(Follow::File {
                    word: (*w).clone(),
                    lang: Lang::Crontab,
                }),
                _ => {}
            }
        }
        "git" => git(args, &mut out),
        "watch" => watch(args, &mut out),
        "hyperfine" => hyperfine(args, io, &mut out),
        "ssh" => ssh(cmd, args, io, &mut out),
        "docker" | "podman" | "nerdctl" | "kubectl" | "oc" => container(cmd, args, io, &mut out),
        "nix" => {
            // `nix develop -c CMD…`, `nix shell PKGS -c CMD…`.
            if let Some(c) = args.iter().position(|a| a.is("-c") || a.is("--command")) {
                out.push(Follow::exec(args[c + 1..].to_vec()));
            }
        }
        "vim" | "nvim" | "vi" | "ex" | "view" | "vimdiff" => {
            // `-c '!CMD'`, `+'!CMD'`: an Ex command that runs a shell command.
            for (i, a) in args.iter().enumerate() {
                let cluster_c = a.literal().is_some_and(|t| {
                    t.starts_with('-') && !t.starts_with("--") && t.ends_with('c')
                });
                let command = if cluster_c || a.is("--cmd") {
                    args.get(i + 1).and_then(Word::literal)
                } else {
                    a.literal()
                        .and_then(|t| t.strip_prefix('+').map(str::to_owned))
                };
                if let Some(c) = command {
                    match c.trim_start_matches(':').trim_start().strip_prefix('!') {
                        Some(shell) => out.push(Follow::script(shell, "vim !")),
                        // `call system("…")`, `lua os.execute("…")`: code.
                        None => out.push(Follow::Code {
                            text: c,
                            lang: CodeLang::Other,
                        }),
                    }
                }
            }
        }
        "tmux" => tmux(args, &mut out),
        // C fed on the line (`echo 'main(){for(;;)fork();}' | gcc -x c -`): a fork loop.
        "gcc" | "cc" | "clang" | "g++" | "c++" | "tcc" | "clang++" => {
            let mut sources: Vec<String> = input_text(cmd, io).into_iter().collect();
            sources.extend(args.iter().filter_map(|a| known.text(a, cmd)));
            for text in sources {
                if let Some(f) = crate::hardline::fork_loop(&text) {
                    out.push(Follow::Finding(f));
                }
                // What the program will do when run (`system("…")`, `remove(…)`).
                out.push(Follow::Code {
                    text,
                    lang: CodeLang::Other,
                });
            }
        }
        "screen" => {
            // `screen -X stuff 'TEXT'` types TEXT into a shell; otherwise the words after the
            // options are a command to run.
            if let Some(i) = args.iter().position(|a| a.is("stuff")) {
                if let Some(text) = args.get(i + 1) {
                    let typed = Word::lit(&text.text().replace("\\n", "\n").replace("^M", "\n"));
                    out.push(Follow::string(typed, "screen stuff", io));
                }
            } else {
                let mut i = 0;
                while let Some(t) = args.get(i).and_then(Word::literal) {
                    if !t.starts_with('-') {
                        break;
                    }
                    let takes = matches!(
                        t.as_str(),
                        "-S" | "-c"
                            | "-e"
                            | "-h"
                            | "-p"
                            | "-T"
                            | "-t"
                            | "-X"
                            | "-dmS"
                            | "-dmSL"
                            | "-L"
                            | "-Logfile"
                    );
                    i += 1 + usize::from(takes && t != "-L");
                }
                if i < args.len() {
                    out.push(Follow::exec(args[i..].to_vec()));
                }
            }
        }
        "expect" => {
            // `expect -c 'spawn CMD …'`: what it spawns.
            if let Some(script) = option_value(args, &["-c"]).and_then(|w| w.literal()) {
                for statement in script.split([';', '\n']) {
                    let st = statement.trim();
                    if let Some(rest) = st
                        .strip_prefix("spawn ")
                        .or_else(|| st.strip_prefix("exec "))
                    {
                        out.push(Follow::script(rest, "expect spawn"));
                    }
                }
            }
        }
        "gdb" | "lldb" => {
            // `-ex 'shell CMD'`, `-ex '!CMD'`.
            // `-p 1` attaches to init: whatever it calls there, init does.
            let attaches_init = args.windows(2).any(|w| {
                (w[0].is("-p") || w[0].is("--pid"))
                    && w[1]
                        .literal()
                        .is_some_and(|p| p.trim_start_matches('0') == "1")
            });
            for (i, a) in args.iter().enumerate() {
                if (a.is("-ex") || a.is("--ex") || a.is("-o") || a.is("--one-line"))
                    && let Some(c) = args.get(i + 1).and_then(Word::literal)
                {
                    match c
                        .trim()
                        .strip_prefix("shell ")
                        .or_else(|| c.trim().strip_prefix('!'))
                        .or_else(|| c.trim().strip_prefix("platform shell "))
                    {
                        Some(shell) => out.push(Follow::script(shell, "gdb shell")),
                        // `call (int)kill(-1, 9)`, `call system("…")`: code run in the process.
                        None => out.push(Follow::Code {
                            text: c,
                            lang: CodeLang::Other,
                        }),
                    }
                }
            }
            if attaches_init && args.iter().any(|a| a.text().contains("call")) {
                out.push(Follow::Finding(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineKillAll,
                    Reason::GdbCallInInit.text(),
                )));
            }
        }
        "npm" | "pnpm" | "yarn" => {
            // `npm pkg set scripts.NAME='CMD'` stores a command a later `npm run` runs;
            // `npm exec -c 'CMD'` runs one now.
            let set = args.windows(2).any(|w| w[0].is("pkg") && w[1].is("set"))
                || args.first().is_some_and(|a| a.is("set-script"));
            if set {
                for a in args {
                    if let Some(t) = a.literal()
                        && let Some((key, value)) = t.split_once('=')
                        && key.starts_with("scripts.")
                    {
                        out.push(Follow::script(value, "npm script"));
                    } else if a.literal().is_none() && a.text().starts_with("scripts.") {
                        out.push(unresolved(
                            RuleId::UnresolvedGeneratedScript,
                            &Reason::NpmScriptUnknown,
                        ));
                    }
                }
                if args.first().is_some_and(|a| a.is("set-script"))
                    && let Some(v) = args.get(2)
                {
                    out.push(Follow::string(v.clone(), "npm script", io));
                }
            }
            if args.first().is_some_and(|a| a.is("exec") || a.is("x"))
                && let Some(c) = option_value(args, &["-c", "--call"])
            {
                out.push(Follow::string(c, "npm exec -c", io));
            }
        }
        "npx" | "pnpx" => {
            if let Some(c) = option_value(args, &["-c", "--call"]) {
                out.push(Follow::string(c, "npx -c", io));
            }
        }
        "zip" => {
            // `-TT CMD` / `--unzip-command CMD` runs CMD to test the archive.
            if let Some(c) = option_value(args, &["-TT", "--unzip-command"]) {
                out.push(Follow::string(c, "zip -TT", io));
            }
        }
        _ => {}
    }
    out
}

/// Tools whose whole job is printing shell settings for `eval` (`eval "$(ssh-agent -s)"`):
/// what they print is variable assignments and function definitions of their own.
const ENVIRONMENT_PRINTERS: &[&str] = &[
    "ssh-agent",
    "opam",
    "pyenv",
    "rbenv",
    "nodenv",
    "goenv",
    "jenv",
    "direnv",
    "brew",
    "starship",
    "zoxide",
    "fnm",
    "dircolors",
    "keychain",
    "conda",
    "mise",
    "rtx",
    "atuin",
    "thefuck",
    "luarocks",
    "rustup",
];

/// A word that is `$(TOOL …)` for an environment printer, or static.
fn environment_setup(word: &Word) -> bool {
    if word.is_static() {
        return true;
    }
    let text = word.text();
    crate::words::substitution_body(&text).is_some_and(|t| {
        !t.contains([';', '|', '&', '$', '`', '>', '<', '('])
            && t.split_whitespace()
                .next()
                .is_some_and(|p| ENVIRONMENT_PRINTERS.contains(&p.rsplit('/').next().unwrap_or(p)))
    })
}

/// What setting the environment variable `name` to `value` makes a program run: a command
/// line (`GIT_SSH_COMMAND`, `LESSOPEN='|CMD %s'`), a file loaded at start (`BASH_ENV`,
/// `NODE_OPTIONS=--require F`, `PYTHONPATH` with a `sitecustomize.py`), or, for a value
/// fetched from the network at run time, a reason to ask.
pub(crate) fn exec_var(name: &str, value: &Word) -> Vec<Follow> {
    // `PATH="$(cat .toolpath):$PATH"`: which program a name runs is decided at run time.
    if name == "PATH"
        && value.segs.iter().any(|s| match s {
            Seg::Dyn(source) => !matches!(source.as_str(), "$PATH" | "${PATH}"),
            _ => false,
        })
    {
        return vec![unresolved(
            RuleId::UnresolvedCommandName,
            &Reason::PathSetAtRunTime {
                value: &value.text(),
            },
        )];
    }
    // `PS4='$(CMD)'`: the substitution runs when the prompt is shown.
    if PROMPT_VARS.contains(&name)
        && let Some(text) = value.literal()
        && (text.contains("$(") || text.contains('`'))
    {
        return vec![Follow::script(&format!(": {text}"), name)];
    }
    let start_file = START_FILE_VARS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s);
    let runs = EXEC_VARS.contains(&name)
        || COMMAND_VAR_PATTERNS.iter().any(|(prefix, suffix)| {
            name.starts_with(prefix)
                && name.ends_with(suffix)
                && name.len() >= prefix.len() + suffix.len()
        });
    if !runs && start_file.is_none() {
        return Vec::new();
    }
    if !value.is_static() {
        // `BASH_ENV=<(…)`: a process substitution is a file with known content.
        if let Some(StartFile::Whole(lang)) = start_file
            && value.text().starts_with("<(")
        {
            return vec![Follow::File {
                word: value.clone(),
                lang,
            }];
        }
        // A value fetched from the network: what runs is whatever the server sends.
        if fetched_at_run_time(value) {
            return vec![unresolved(
                RuleId::UnresolvedNetworkShell,
                &Reason::VariableFromDownload { name },
            )];
        }
        // A value only known at run time is usually a program's path (`EDITOR=$(which
        // nvim)`), not a script: only the variables that hold whole command lines ask then.
        if !COMMAND_LINES.contains(&name) {
            return Vec::new();
        }
    }
    if runs {
        let mut script = value.clone();
        // `LESSOPEN='|CMD %s'`: a command whose output less reads.
        if name.starts_with("LESS")
            && let Some(t) = value.literal()
        {
            script = Word::lit(
                t.trim_start_matches(['|', '-'])
                    .replace("%s", "FILE")
                    .as_str(),
            );
        }
        return vec![Follow::String {
            word: script,
            what: name.to_owned(),
            io: Io::default(),
            place: Place::Here,
            scoped: true,
            positional: None,
        }];
    }
    let Some(text) = value.literal() else {
        return Vec::new();
    };
    let file = |path: &str, lang| Follow::File {
        word: Word::lit(path),
        lang,
    };
    match start_file {
        Some(StartFile::Whole(lang)) => vec![file(&text, lang)],
        Some(StartFile::InDirs(names, lang)) => text
            .split(':')
            .filter(|d| !d.is_empty())
            .flat_map(|dir| {
                names
                    .iter()
                    .map(move |n| format!("{}/{n}", dir.trim_end_matches('/')))
            })
            .map(|path| file(&path, lang))
            .collect(),
        Some(StartFile::AfterOption(options, lang)) => {
            let mut found = Vec::new();
            let mut tokens = text.split_whitespace().peekable();
            while let Some(token) = tokens.next() {
                for option in options {
                    if token == *option {
                        if let Some(next) = tokens.peek() {
                            found.push(file(next, lang));
                        }
                    } else if let Some(rest) = token.strip_prefix(option) {
                        found.push(file(rest.trim_start_matches('='), lang));
                    }
                }
            }
            found
        }
        None => Vec::new(),
    }
}

/// Whether a value only known at run time comes from a program that fetches from the network
/// (`$(curl -s URL)`).
fn fetched_at_run_time(value: &Word) -> bool {
    value.segs.iter().any(|seg| match seg {
        Seg::Dyn(source) => source
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | '`' | '|' | ';' | '&'))
            .any(|w| crate::tools::lookup(w).is_some_and(|t| t.fetches.is_some())),
        _ => false,
    })
}

fn unresolved(rule: RuleId, reason: &Reason<'_>) -> Follow {
    Follow::Finding(Finding::ask(Class::Unresolved, rule, reason.text()))
}

fn shell(cmd: &Cmd, args: &[Word], io: &Io, out: &mut Vec<Follow>) {
    let mut has_c = false;
    let mut from_stdin = false;
    let mut i = 0;
    while i < args.len() {
        let Some(t) = args[i].literal() else { break };
        if t == "--" || t == "-" {
            i += 1;
            from_stdin |= t == "-";
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if t.starts_with('-') {
                has_c |= t.contains('c');
                from_stdin |= t.contains('s');
            }
            if t.ends_with('o') || t.ends_with('O') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    match args.get(i) {
        // `sh -c "$(curl …)"`: the script is whatever the server sends.
        Some(script) if has_c && fetched_at_run_time(script) => out.push(unresolved(
            RuleId::UnresolvedNetworkShell,
            &Reason::ShellRunsDownload,
        )),
        Some(script) if has_c => out.push(Follow::String {
            word: script.clone(),
            what: "shell -c".into(),
            io: io.clone(),
            place: Place::Here,
            scoped: true,
            // `$0` is the word after the script; `$1`… the rest.
            positional: Some(args.get(i + 1..).unwrap_or(&[]).to_vec()),
        }),
        // `sh -s ARGS`: the script comes from standard input; the words are its arguments.
        _ if from_stdin => stdin_script(cmd, io, Lang::Shell, "shell", out),
        Some(file) if file.is("/dev/stdin") => stdin_script(cmd, io, Lang::Shell, "shell", out),
        Some(file) => out.push(Follow::File {
            word: file.clone(),
            lang: Lang::Shell,
        }),
        None if !has_c => stdin_script(cmd, io, Lang::Shell, "shell", out),
        None => {}
    }
}

/// Where a command's standard input comes from.
enum Input {
    Text(String),
    /// What a producer lists, not known as text: paths or process IDs (`Stdin::Under`,
    /// `Stdin::AllPids`, `Stdin::Paths`).
    Listing(Stdin),
    Word(Word),
    File(Word),
    Unknown,
    Terminal,
}

/// The text a command reads on standard input, when it is known statically.
pub(crate) fn input_text(cmd: &Cmd, io: &Io) -> Option<String> {
    match input(cmd, io) {
        Input::Text(t) => Some(t),
        _ => None,
    }
}

fn input(cmd: &Cmd, io: &Io) -> Input {
    if let Some(r) = cmd.here_input() {
        return match (&r.kind, &r.target) {
            (RedirKind::HereDoc(Some(body)), _) => Input::Text(body.clone()),
            (RedirKind::HereDoc(None), _) => Input::Unknown,
            (_, Some(word)) => match word.literal() {
                Some(t) => Input::Text(t + "\n"),
                None => Input::Word(word.clone()),
            },
            _ => Input::Terminal,
        };
    }
    if let Some(file) = cmd
        .redirects
        .iter()
        .rev()
        .find(|r| r.kind == RedirKind::In && r.fd.is_none_or(|fd| fd == 0))
        .and_then(|r| r.target.clone())
    {
        return Input::File(file);
    }
    match &io.stdin {
        Some(Stdin::Text(t)) => Input::Text(t.clone()),
        Some(listing @ (Stdin::Under(_) | Stdin::AllPids | Stdin::Paths(_))) => {
            Input::Listing(listing.clone())
        }
        Some(Stdin::Unknown) => Input::Unknown,
        None if io.piped_in => Input::Unknown,
        None => Input::Terminal,
    }
}

/// A shell or interpreter reading its script from standard input.
fn stdin_script(cmd: &Cmd, io: &Io, lang: Lang, what: &str, out: &mut Vec<Follow>) {
    match (input(cmd, io), lang) {
        (Input::Text(t), Lang::Shell) => out.push(Follow::script(&t, what)),
        (Input::Text(t), Lang::Code(l)) => out.push(Follow::Code { text: t, lang: l }),
        (Input::Word(w), Lang::Shell) => out.push(Follow::string(w, what, &Io::default())),
        (Input::Word(w), Lang::Code(_)) => out.push(unresolved(
            RuleId::UnresolvedInlineCode,
            &Reason::CodeUnknown {
                program: what,
                code: &w.text(),
            },
        )),
        (Input::File(w), lang) => out.push(Follow::File { word: w, lang }),
        (Input::Unknown | Input::Listing(_), Lang::Shell) => {
            out.push(unresolved(
                RuleId::UnresolvedPipeToShell,
                &Reason::PipeToShell,
            ));
        }
        (Input::Unknown | Input::Listing(_), Lang::Code(_)) => out.push(unresolved(
            RuleId::UnresolvedPipeToInterpreter,
            &Reason::PipeToInterpreter { interpreter: what },
        )),
        (
            Input::Text(t),
            l @ (Lang::Make
            | Lang::Crontab
            | Lang::SystemCrontab
            | Lang::Unit
            | Lang::PackageJson
            | Lang::Just),
        ) => {
            out.push(Follow::script(&embedded_commands(&t, l), what));
        }
        (Input::Terminal, _)
        | (
            _,
            Lang::Make
            | Lang::Crontab
            | Lang::SystemCrontab
            | Lang::Unit
            | Lang::PackageJson
            | Lang::Just,
        ) => {}
    }
}

fn interpreter(cmd: &Cmd, args: &[Word], io: &Io, lang: CodeLang, out: &mut Vec<Follow>) {
    let program = cmd.program().unwrap_or_default();
    if program == "deno" && args.first().is_some_and(|a| a.is("eval")) {
        if let Some(code) = args[1..].iter().find(|a| !a.starts_with("-")) {
            code_word(code, lang, &program, out);
        }
        return;
    }
    if lang == CodeLang::Awk {
        // The program is `-f FILE` or the first operand.
        let p = crate::flags::parse(args, &crate::tools::spec_for("awk"));
        if let Some(file) = p.value(&["-f", "--file"]) {
            out.push(Follow::File {
                word: Word::lit(file),
                lang: Lang::Code(lang),
            });
        } else if let Some(&first) = p.positionals.first() {
            // `-v NAME=VALUE` sets a variable the program reads (`-v c='rm -rf /'
            // 'BEGIN{system(c)}'`): the program sees it assigned first.
            let assigned: String = p
                .values
                .iter()
                .filter(|(k, _)| k == "-v" || k == "--assign")
                .filter_map(|(_, v)| v.split_once('='))
                .map(|(n, v)| format!("{n}=\"{}\"\n", v.replace('"', "\\\"")))
                .collect();
            match args[first].literal() {
                Some(code) if !assigned.is_empty() => out.push(Follow::Code {
                    text: assigned + &code,
                    lang,
                }),
                _ => code_word(&args[first], lang, &program, out),
            }
            // `system($0)` runs each input line: known input is the script.
            if args[first].text().contains("system($0)")
                && let Some(text) = input_text(cmd, io)
            {
                out.push(Follow::script(&text, "awk system($0)"));
            }
        }
        return;
    }
    let mut code = Vec::new();
    let mut i = 0;
    let mut operand = None;
    while i < args.len() {
        let Some(t) = args[i].literal() else {
            operand = Some(i);
            break;
        };
        if t == "--" {
            operand = (i + 1 < args.len()).then_some(i + 1);
            break;
        }
        if t == "-" || !t.starts_with('-') {
            operand = Some(i);
            break;
        }
        if t.starts_with("--") {
            let (name, inline) = t
                .split_once('=')
                .map_or((t.as_str(), None), |(n, v)| (n, Some(v)));
            if lang.code_options().contains(&name) {
                match inline {
                    Some(v) => code.push(Word::lit(v)),
                    None => {
                        if let Some(v) = args.get(i + 1) {
                            code.push(v.clone());
                        }
                        i += 1;
                    }
                }
            } else if inline.is_none() && lang.value_options().contains(&name) {
                i += 1;
            }
            i += 1;
            continue;
        }
        // A whole option that takes code (`-eval CODE` of erl, `-e CODE`).
        if lang.code_options().contains(&t.as_str()) {
            if let Some(v) = args.get(i + 1) {
                code.push(v.clone());
            }
            i += 2;
            continue;
        }
        // Other languages spell long options with one dash (`-noshell`): not clusters.
        if lang == CodeLang::Other {
            i += 1;
            continue;
        }
        // A short cluster: `-c CODE`, `-Ie CODE`, `-eCODE`; `-m MODULE` ends the options.
        let cluster: Vec<char> = t.chars().skip(1).collect();
        let mut consumed_next = false;
        for (k, c) in cluster.iter().enumerate() {
            let opt = format!("-{c}");
            if lang.code_options().contains(&opt.as_str()) {
                let rest: String = cluster[k + 1..].iter().collect();
                if rest.is_empty() {
                    if let Some(v) = args.get(i + 1) {
                        code.push(v.clone());
                    }
                    consumed_next = true;
                } else {
                    code.push(Word::lit(&rest));
                }
                break;
            }
            if *c == 'm' && lang == CodeLang::Python {
                return;
            }
            // An option with a value (`-W ignore`, `-r fileutils`, `-d x=1`) ends the cluster.
            if lang.value_options().contains(&opt.as_str()) {
                consumed_next = k + 1 == cluster.len();
                break;
            }
        }
        i += 1 + usize::from(consumed_next);
    }
    if !code.is_empty() {
        for w in &code {
            code_word(w, lang, &program, out);
        }
        return;
    }
    match operand.map(|o| &args[o]) {
        Some(w) if w.is("-") || w.is("/dev/stdin") => {
            stdin_script(cmd, io, Lang::Code(lang), &program, out);
        }
        Some(w) => out.push(Follow::File {
            word: w.clone(),
            lang: Lang::Code(lang),
        }),
        None => stdin_script(cmd, io, Lang::Code(lang), &program, out),
    }
}

fn code_word(word: &Word, lang: CodeLang, program: &str, out: &mut Vec<Follow>) {
    match word.literal() {
        Some(text) => out.push(Follow::Code { text, lang }),
        None => out.push(unresolved(
            RuleId::UnresolvedInlineCode,
            &Reason::CodeUnknown {
                program,
                code: &word.text(),
            },
        )),
    }
}

fn xargs(cmd: &Cmd, args: &[Word], io: &Io, known: &Known<'_>) -> Vec<Follow> {
    let mut replace: Option<String> = None;
    let mut from_file = false;
    let mut arg_file: Option<Word> = None;
    let mut delimiter: Option<char> = None;
    let mut i = 0;
    const LONGS: &[&str] = &[
        "arg-file",
        "delimiter",
        "eof",
        "exit",
        "interactive",
        "max-args",
        "max-chars",
        "max-lines",
        "max-procs",
        "no-run-if-empty",
        "null",
        "open-tty",
        "process-slot-var",
        "replace",
        "show-limits",
        "verbose",
    ];
    while i < args.len() {
        let Some(t) = args[i].literal() else { break };
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = long.split_once('=').unwrap_or((long, ""));
            let name = canonical_long(name, LONGS);
            let takes_value = matches!(
                name,
                "arg-file"
                    | "delimiter"
                    | "max-lines"
                    | "max-args"
                    | "max-procs"
                    | "max-chars"
                    | "process-slot-var"
                    | "eof"
            );
            let value_word = if value.is_empty() && takes_value {
                i += 1;
                args.get(i).cloned().unwrap_or_default()
            } else {
                Word::lit(value)
            };
            let value = value_word.text();
            match name {
                "replace" => replace = Some(if value.is_empty() { "{}".into() } else { value }),
                "arg-file" => {
                    from_file = true;
                    arg_file = Some(value_word);
                }
                "null" => delimiter = Some('\0'),
                "delimiter" => delimiter = ansi_c(&value).chars().next(),
                _ => {}
            }
            i += 1;
            continue;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (k, &c) in chars.iter().enumerate() {
            let rest: String = chars[k + 1..].iter().collect();
            let next_word = args.get(i + 1).cloned();
            let mut value = || {
                if rest.is_empty() {
                    i += 1;
                    args.get(i).and_then(Word::literal).unwrap_or_default()
                } else {
                    rest.clone()
                }
            };
            match c {
                'I' => {
                    replace = Some(value());
                    break;
                }
                'i' => {
                    replace = Some(if rest.is_empty() { "{}".into() } else { rest });
                    break;
                }
                '0' => delimiter = Some('\0'),
                'd' => {
                    delimiter = ansi_c(&value()).chars().next();
                    break;
                }
                'a' => {
                    from_file = true;
                    arg_file = if rest.is_empty() {
                        next_word
                    } else {
                        Some(Word::lit(&rest))
                    };
                    value();
                    break;
                }
                'n' | 'L' | 'P' | 's' | 'E' => {
                    value();
                    break;
                }
                'e' | 'l' => break,
                _ => {}
            }
        }
        i += 1;
    }
    let inner: Vec<Word> = if i < args.len() {
        args[i..].to_vec()
    } else {
        vec![Word::lit("echo")]
    };
    // Items from a known source (`echo / | xargs rm -rf`, `xargs rm -rf <<< /`) are
    // substituted as xargs splits them: on the delimiter, on lines with `-I`, else on blanks.
    let text = match (input(cmd, io), from_file) {
        (_, true) => arg_file.and_then(|f| known.text(&f, cmd)),
        (Input::Text(t), false) => Some(t),
        (Input::File(f), false) => known.text(&f, cmd),
        _ => None,
    };
    let under = match input(cmd, io) {
        Input::Listing(Stdin::Under(starts)) if !from_file => Some(starts),
        // Every PID: one word that matches them all (`kill` reads it as every process).
        Input::Listing(Stdin::AllPids) if !from_file => Some(vec![Word {
            segs: vec![Seg::Glob("*".into())],
        }]),
        Input::Listing(Stdin::Paths(paths)) if !from_file => Some(paths),
        _ => None,
    };
    let items: Option<Vec<String>> = text.map(|t| {
        let items: Vec<String> = match (delimiter, &replace) {
            (Some(d), _) => t.split(d).map(str::to_owned).collect(),
            (None, Some(_)) => t.lines().map(|l| l.trim_start().to_owned()).collect(),
            (None, None) => t.split_whitespace().map(str::to_owned).collect(),
        };
        items
            .into_iter()
            .filter(|s| !s.is_empty() && s != "\n")
            .map(|s| s.strip_suffix('\n').map(str::to_owned).unwrap_or(s))
            .collect()
    });
    // `find START … | xargs CMD`: each item is a path below a start path.
    let items: Option<Vec<Word>> = items
        .map(|v| bounded_words(v.iter().map(|t| Word::lit(t))))
        .or_else(|| {
            under.map(|starts| {
                bounded_words(starts.into_iter().map(|mut w| {
                    if w.has_glob() {
                        return w;
                    }
                    if !w.text().ends_with('/') {
                        w.segs.push(Seg::Lit("/".into()));
                    }
                    w.segs.push(Seg::Dyn("{}".into()));
                    w
                }))
            })
        });
    let commands: Vec<Vec<Word>> = match (&replace, items) {
        (Some(r), Some(items)) => items
            .iter()
            .map(|item| inner.iter().map(|w| substitute(w, r, item)).collect())
            .collect(),
        (Some(r), None) => vec![
            inner
                .iter()
                .map(|w| substitute(w, r, &Word::dynamic("…")))
                .collect(),
        ],
        (None, Some(items)) => {
            let mut v = inner.clone();
            v.extend(items);
            vec![v]
        }
        (None, None) => {
            let mut v = inner.clone();
            v.push(Word::dynamic("…"));
            vec![v]
        }
    };
    commands.into_iter().map(Follow::exec).collect()
}

/// Items followed one by one (xargs items, find start paths, parallel arguments); past the
/// bound, one item only known at run time stands for the rest, so nothing is dropped.
const MAX_ITEMS: usize = 64;

fn bounded_words(items: impl Iterator<Item = Word>) -> Vec<Word> {
    let mut v: Vec<Word> = items.take(MAX_ITEMS + 1).collect();
    if v.len() > MAX_ITEMS {
        v.truncate(MAX_ITEMS);
        v.push(Word::dynamic("…"));
    }
    v
}

fn find_exec(args: &[Word]) -> Vec<Follow> {
    let (starts, first_expr) = find_starts(args);
    // `-maxdepth 0`: the start path is the only match.
    let only_start = args
        .windows(2)
        .any(|w| w[0].is("-maxdepth") && w[1].is("0"));
    let filtered = !only_start
        && args[first_expr..]
            .iter()
            .any(|a| FIND_FILTERS.iter().any(|f| a.is(f)));
    let mut out = Vec::new();
    let mut i = first_expr;
    while i < args.len() {
        let is_exec = ["-exec", "-execdir", "-ok", "-okdir"]
            .iter()
            .any(|e| args[i].is(e));
        if !is_exec {
            i += 1;
            continue;
        }
        let from = i + 1;
        let mut end = from;
        while end < args.len() && !(args[end].is(";") || args[end].is("+")) {
            end += 1;
        }
        let inner = &args[from..end.min(args.len())];
        for start in &bounded_words(starts.iter().cloned()) {
            // The first match is the start path itself; with filters, something below it.
            let found = if filtered {
                let mut w = start.clone();
                if !w.text().ends_with('/') {
                    w.segs.push(Seg::Lit("/".into()));
                }
                w.segs.push(Seg::Dyn("{}".into()));
                w
            } else {
                start.clone()
            };
            let words: Vec<Word> = inner.iter().map(|w| substitute(w, "{}", &found)).collect();
            if !words.is_empty() {
                out.push(Follow::exec(words));
            }
        }
        i = end + 1;
    }
    out
}

/// The shell commands inside a makefile's recipes or a crontab's entries.
pub(crate) fn embedded_commands(text: &str, lang: Lang) -> String {
    let mut out = String::new();
    if lang == Lang::PackageJson {
        for script in package_scripts(text) {
            out.push_str(&script);
            out.push('\n');
        }
        return out;
    }
    // `.RECIPEPREFIX = >` changes the recipe prefix from a tab.
    let recipe_prefix = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(".RECIPEPREFIX"))
        .and_then(|r| r.trim_start().strip_prefix([':', '=']).or(Some(r)))
        .and_then(|r| r.trim_start_matches(['=', ' ', ':']).chars().next())
        .unwrap_or('\t');
    // Make's `$(HOME)` / `${HOME}` are the environment's variables; `$$` is a `$`.
    let text = if lang == Lang::Make {
        make_variables(text)
    } else {
        text.to_owned()
    };
    let text = text.as_str();
    for line in text.lines().take(4096) {
        let command = match lang {
            // A recipe line, or the recipe after `;` on a rule line (`x: ; cmd`).
            Lang::Make if recipe_prefix != '\t' => line
                .strip_prefix(recipe_prefix)
                .map(|l| l.trim_start().trim_start_matches(['@', '-', '+'])),
            Lang::Make => line
                .strip_prefix('\t')
                .or_else(|| {
                    let (head, recipe) = line.split_once(';')?;
                    (head.contains(':') && !head.contains('=')).then_some(recipe)
                })
                .map(|l| l.trim_start().trim_start_matches(['@', '-', '+'])),
            Lang::Just => line
                .strip_prefix([' ', '\t'])
                .map(|l| l.trim_start().trim_start_matches(['@', '-'])),
            Lang::PackageJson => None,
            Lang::Unit => line
                .trim_start()
                .split_once('=')
                .filter(|(key, _)| key.trim().starts_with("Exec"))
                .map(|(_, command)| command.trim_start_matches(['-', '@', '+', '!', ':'])),
            Lang::Crontab | Lang::SystemCrontab => {
                let l = line.trim_start();
                if l.is_empty()
                    || l.starts_with('#')
                    || is_assignment(l.split_whitespace().next().unwrap_or("")).is_some()
                {
                    None
                } else {
                    let user = usize::from(lang == Lang::SystemCrontab);
                    let fields = user + if l.starts_with('@') { 1 } else { 5 };
                    let mut rest = l;
                    for _ in 0..fields {
                        rest = rest.trim_start();
                        rest = rest.find(char::is_whitespace).map_or("", |i| &rest[i..]);
                    }
                    Some(rest.trim_start())
                }
            }
            _ => Some(line),
        };
        if let Some(c) = command {
            out.push_str(c);
            out.push('\n');
        }
    }
    out
}

/// Make's references to environment variables as the shell's: `$(HOME)` and `${HOME}` become
/// `$HOME`, `$$` becomes `$`.
fn make_variables(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('$') => {
                chars.next();
                out.push('$');
            }
            Some(&open @ ('(' | '{')) => {
                let close = if open == '(' { ')' } else { '}' };
                let mut name = String::new();
                chars.next();
                for d in chars.by_ref() {
                    if d == close {
                        break;
                    }
                    name.push(d);
                }
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    out.push_str(&format!("${{{name}}}"));
                } else {
                    // A function (`$(shell …)`, `$(wildcard …)`): only known when make runs.
                    out.push_str("$UNKNOWN_MAKE_EXPANSION");
                }
            }
            _ => out.push('$'),
        }
    }
    out
}

/// The values of a package.json's `"scripts"` object (a small scan: string pairs inside the
/// braces after `"scripts"`, escapes decoded).
fn package_scripts(json: &str) -> Vec<String> {
    let Some(start) = json.find("\"scripts\"") else {
        return Vec::new();
    };
    let Some(open) = json[start..].find('{').map(|i| start + i) else {
        return Vec::new();
    };
    let mut strings = Vec::new();
    let mut chars = json[open + 1..].chars();
    let mut depth = 0;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut s = String::new();
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => match chars.next() {
                            Some('n') => s.push('\n'),
                            Some('t') => s.push('\t'),
                            Some(e) => s.push(e),
                            None => {}
                        },
                        '"' => break,
                        d => s.push(d),
                    }
                }
                strings.push(s);
            }
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            _ => {}
        }
        if strings.len() > 512 {
            break;
        }
    }
    // Keys and values alternate.
    strings.into_iter().skip(1).step_by(2).collect()
}

/// tar's options whose value is a command: `--to-command`, `--checkpoint-action=exec=`,
/// `--use-compress-program` (`-I`), `--info-script` (`-F`), `--new-volume-script`.
fn tar_commands(args: &[Word], io: &Io, out: &mut Vec<Follow>) {
    for (i, a) in args.iter().enumerate() {
        let Some(t) = a.literal() else { continue };
        let (name, inline) = match t.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (t.clone(), None),
        };
        let long = name
            .strip_prefix("--")
            .map(|n| canonical_long(n, crate::tools::spec_for("tar").longs));
        let takes_command = matches!(
            long,
            Some(
                "to-command"
                    | "use-compress-program"
                    | "info-script"
                    | "new-volume-script"
                    | "rsh-command"
                    | "rmt-command"
            )
        ) || (long.is_none() && matches!(name.as_str(), "-I" | "-F"));
        let value = match inline {
            Some(v) => Some(Word::lit(&v)),
            None if takes_command => args.get(i + 1).cloned(),
            None => None,
        };
        match (long, value) {
            (Some("checkpoint-action"), Some(v)) => {
                if let Some(cmd) = v
                    .literal()
                    .and_then(|t| t.strip_prefix("exec=").map(str::to_owned))
                {
                    out.push(Follow::string(
                        Word::lit(&cmd),
                        "tar --checkpoint-action",
                        io,
                    ));
                }
            }
            (_, Some(v)) if takes_command => out.push(Follow::string(v, "tar", io)),
            _ => {}
        }
    }
}

/// sed's `e COMMAND` runs a command; `s/…/…/e` runs the pattern space (only known at run
/// time).
fn sed_commands(cmd: &Cmd, args: &[Word], io: &Io, out: &mut Vec<Follow>) {
    let p = crate::flags::parse(args, &crate::tools::spec_for("sed"));
    let from_options = p.value(&["-e", "--expression", "-f", "--file"]).is_some();
    // A script only known at run time could hold `e`.
    if let Some(w) = p.positionals.first().map(|&i| &args[i])
        && !from_options
        && w.starts_dynamic()
    {
        out.push(unresolved(
            RuleId::UnresolvedShellString,
            &Reason::SedScriptUnknown { script: &w.text() },
        ));
    }
    let mut scripts: Vec<String> = p
        .values
        .iter()
        .filter(|(k, _)| k == "-e" || k == "--expression")
        .map(|(_, v)| v.clone())
        .collect();
    if !from_options && let Some(&first) = p.positionals.first() {
        scripts.extend(args[first].literal());
    }
    for script in scripts {
        for line in script.lines() {
            sed_line(line, cmd, io, out);
        }
    }
}

/// One line of a sed script: commands separated by `;`, except that `e COMMAND` takes the rest
/// of the line.
fn sed_line(line: &str, cmd: &Cmd, io: &Io, out: &mut Vec<Follow>) {
    let mut rest = line;
    while !rest.is_empty() {
        let st = sed_strip_address(rest.trim_start());
        if let Some(command) = st.strip_prefix('e') {
            let command = command.trim();
            if command.is_empty() || command.starts_with([';', '}']) {
                // A bare `e` runs the pattern space: the input, when it is known.
                match input_text(cmd, io) {
                    Some(text) => out.push(Follow::script(&text, "sed e")),
                    None => out.push(unresolved(
                        RuleId::UnresolvedShellString,
                        &Reason::SedRunsInput,
                    )),
                }
            } else {
                out.push(Follow::script(command, "sed e"));
            }
            return;
        }
        if let Some(body) = st.strip_prefix('s')
            && let Some(delim) = body.chars().next()
        {
            let parts = split_escaped(&body[delim.len_utf8()..], delim);
            if parts
                .get(2)
                .is_some_and(|flags| flags.split(';').next().unwrap_or("").contains('e'))
            {
                // The edited line runs: its replacement is the command when it keeps nothing
                // of the input.
                let replacement = parts[1].as_str();
                if replacement.contains('&') || replacement.contains('\\') {
                    out.push(unresolved(
                        RuleId::UnresolvedShellString,
                        &Reason::SedSubstituteRuns,
                    ));
                } else {
                    out.push(Follow::script(replacement, "sed s///e"));
                }
            }
            // The next command starts after the flags that follow the third delimiter.
            let mut seen = 0;
            let mut escaped = false;
            let mut flags_at = None;
            for (i, c) in body.char_indices().skip(1) {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == delim {
                    seen += 1;
                    if seen == 2 {
                        flags_at = Some(i + c.len_utf8());
                        break;
                    }
                }
            }
            match flags_at.and_then(|f| body[f..].find(';').map(|j| f + j)) {
                Some(j) => {
                    rest = &body[j + 1..];
                    continue;
                }
                None => return,
            }
        }
        match st.find(';') {
            Some(i) => rest = &st[i + 1..],
            None => return,
        }
    }
}

/// A sed command without its address (`1`, `$`, `1,5`, `/re/`, `\%re%`, `!`).
fn sed_strip_address(st: &str) -> &str {
    let mut st = st;
    for _ in 0..4 {
        st = st.trim_start_matches(|c: char| {
            c.is_ascii_digit() || matches!(c, ',' | '$' | ' ' | '!' | '~' | '+')
        });
        let delim = if st.starts_with('/') {
            Some('/')
        } else if let Some(r) = st.strip_prefix('\\') {
            st = r;
            r.chars().next()
        } else {
            None
        };
        let Some(d) = delim else { break };
        let body = &st[d.len_utf8()..];
        let mut escaped = false;
        let mut end = None;
        for (i, c) in body.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == d {
                end = Some(i);
                break;
            }
        }
        match end {
            Some(i) => st = &body[i + d.len_utf8()..],
            None => return "",
        }
    }
    st.trim_start()
}

/// Splits sed's `s` command body on an unescaped delimiter; `\/` becomes `/`.
fn split_escaped(text: &str, delim: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n) if n == delim => parts.last_mut().map(|p| p.push(n)).unwrap_or_default(),
                Some(n) => {
                    if let Some(p) = parts.last_mut() {
                        p.push('\\');
                        p.push(n);
                    }
                }
                None => {}
            }
        } else if c == delim {
            parts.push(String::new());
        } else if let Some(p) = parts.last_mut() {
            p.push(c);
        }
    }
    parts
}

/// `fd [PATTERN] [PATH…] -x CMD` / `-X CMD`: CMD runs on what fd finds under PATH (the
/// working directory by default).
fn fd_exec(args: &[Word]) -> Vec<Follow> {
    let Some(x) = args
        .iter()
        .position(|a| a.is("-x") || a.is("--exec") || a.is("-X") || a.is("--exec-batch"))
    else {
        return Vec::new();
    };
    let before = &args[..x];
    let p = crate::flags::parse(before, &crate::tools::spec_for("fd"));
    let mut paths: Vec<Word> = p
        .positionals
        .iter()
        .skip(1)
        .map(|&i| before[i].clone())
        .collect();
    if let Some(base) = p.value(&["--base-directory", "--search-path"]) {
        paths.push(Word::lit(base));
    }
    if paths.is_empty() {
        paths.push(Word::lit("."));
    }
    let mut inner: Vec<Word> = args[x + 1..]
        .iter()
        .take_while(|a| !a.is(";"))
        .cloned()
        .collect();
    if inner.is_empty() {
        return Vec::new();
    }
    let has_placeholder = inner.iter().any(|w| w.text().contains("{}"));
    if !has_placeholder {
        inner.push(Word::lit("{}"));
    }
    paths
        .iter()
        .take(4)
        .map(|start| {
            let mut found = start.clone();
            if !found.text().ends_with('/') {
                found.segs.push(Seg::Lit("/".into()));
            }
            found.segs.push(Seg::Dyn("{}".into()));
            Follow::exec(inner.iter().map(|w| substitute(w, "{}", &found)).collect())
        })
        .collect()
}

/// Tools that take a command string or a command's words in a known option or position:
/// git's `rebase --exec`, `bisect run`, `submodule foreach`, `filter-branch --*-filter`;
/// `entr`, `watchexec`, `nodemon --exec`; `man -P`; `rsync -e`; the shell escapes of database
/// clients; remote runners (`lxc exec`, `vagrant ssh -c`, `gcloud compute ssh --command`,
/// `az vm run-command`, `aws ssm send-command`, `salt`, `pdsh`, `pssh`, `clush`, `fab`,
/// `kubectl debug`); `sudo -s` reading a script.
fn command_strings(program: &str, args: &[Word], cmd: &Cmd, io: &Io, out: &mut Vec<Follow>) {
    let string_at = |names: &[&str]| option_value(args, names);
    let here = |word: Word, what: &str| Follow::string(word, what, &Io::default());
    let remote = |word: Word, what: &str| Follow::String {
        word,
        what: what.to_owned(),
        io: Io::default(),
        place: Place::Remote,
        scoped: true,
        positional: None,
    };
    let after_dashes = || {
        args.iter()
            .position(|a| a.is("--"))
            .map(|i| args[i + 1..].to_vec())
            .filter(|w| !w.is_empty())
    };
    match program {
        "git" => {
            let sub = args
                .iter()
                .find(|a| !a.starts_with("-"))
                .and_then(Word::literal);
            match sub.as_deref() {
                Some("rebase") => {
                    out.extend(string_at(&["-x", "--exec"]).map(|w| here(w, "git rebase --exec")));
                }
                Some("submodule") if args.iter().any(|a| a.is("foreach")) => {
                    let i = args.iter().position(|a| a.is("foreach")).unwrap_or(0);
                    let rest: Vec<Word> = args[i + 1..]
                        .iter()
                        .filter(|a| !a.starts_with("-"))
                        .cloned()
                        .collect();
                    if !rest.is_empty() {
                        out.push(here(joined(&rest), "git submodule foreach"));
                    }
                }
                Some("bisect") if args.iter().any(|a| a.is("run")) => {
                    let i = args.iter().position(|a| a.is("run")).unwrap_or(0);
                    if i + 1 < args.len() {
                        out.push(Follow::exec(args[i + 1..].to_vec()));
                    }
                }
                Some("filter-branch") => {
                    for (k, a) in args.iter().enumerate() {
                        if a.literal()
                            .is_some_and(|t| t.starts_with("--") && t.ends_with("-filter"))
                            && let Some(v) = args.get(k + 1)
                        {
                            out.push(here(v.clone(), "git filter-branch"));
                        }
                    }
                }
                _ => {}
            }
        }
        "entr" => {
            let shell = args.iter().any(|a| {
                a.literal()
                    .is_some_and(|t| t.starts_with('-') && t.contains('s'))
            });
            let rest: Vec<Word> = args
                .iter()
                .skip_while(|a| a.starts_with("-"))
                .cloned()
                .collect();
            if shell {
                out.extend(rest.first().map(|w| here(w.clone(), "entr -s")));
            } else if !rest.is_empty() {
                out.push(Follow::exec(rest));
            }
        }
        "watchexec" | "reflex" => match after_dashes() {
            Some(words) => out.push(Follow::exec(words)),
            None => out.extend(
                args.iter()
                    .rfind(|a| !a.starts_with("-"))
                    .map(|w| here(w.clone(), program)),
            ),
        },
        "nodemon" => out.extend(string_at(&["--exec", "-x"]).map(|w| here(w, "nodemon --exec"))),
        // `pwsh -EncodedCommand BASE64`: the command, base64 of UTF-16LE.
        "pwsh" | "powershell" | "pwsh.exe" | "powershell.exe" => {
            for (i, a) in args.iter().enumerate() {
                let Some(t) = a.literal() else { continue };
                let option = t.to_ascii_lowercase();
                let encoded = option.len() >= 3
                    && ["-encodedcommand", "-ec"]
                        .iter()
                        .any(|full| full.starts_with(&option));
                if encoded
                    && let Some(text) = args.get(i + 1).and_then(Word::literal)
                    && let Some(bytes) = base64_decode(&text)
                {
                    let units: Vec<u16> = bytes
                        .chunks_exact(2)
                        .map(|p| u16::from_le_bytes([p[0], p[1]]))
                        .collect();
                    out.push(Follow::Code {
                        text: String::from_utf16_lossy(&units),
                        lang: CodeLang::Other,
                    });
                }
            }
        }
        "man" => out.extend(string_at(&["-P", "--pager"]).map(|w| here(w, "man -P"))),
        "rsync" => out.extend(string_at(&["-e", "--rsh"]).map(|w| here(w, "rsync -e"))),
        // `gh alias set --shell NAME 'CMD'`: the alias runs CMD in a shell.
        "gh" if args.first().is_some_and(|a| a.is("alias"))
            && args.iter().any(|a| a.is("--shell") || a.is("-s")) =>
        {
            let operands: Vec<&Word> = args[1..].iter().filter(|a| !a.starts_with("-")).collect();
            if let [_set, _name, expansion, ..] = operands.as_slice() {
                out.push(here((*expansion).clone(), "gh alias --shell"));
            }
        }
        // `rpm --eval '%(CMD)'`, `-E`: the macro `%(…)` runs CMD in a shell.
        "rpm" | "rpmbuild" | "rpmspec" => {
            for macro_text in option_words(args, &["--eval", "-E"]) {
                let text = macro_text.text();
                for shell in text.split("%(").skip(1) {
                    out.push(Follow::script(
                        shell.rsplit_once(')').map_or(shell, |(c, _)| c),
                        "rpm %(…)",
                    ));
                }
            }
        }
        // `cargo --config 'target.T.runner = "CMD"'`: cargo runs the built program under CMD.
        "cargo" => {
            for setting in option_words(args, &["--config"]) {
                let text = setting.text();
                if let Some((key, value)) = text.split_once('=')
                    && [".runner", ".linker", "rustc-wrapper", "rustc_wrapper"]
                        .iter()
                        .any(|k| key.trim().ends_with(k))
                {
                    out.push(Follow::script(
                        value.trim().trim_matches(['"', '\'']),
                        "cargo --config",
                    ));
                }
            }
        }
        "sqlite3" | "psql" | "mysql" | "mariadb" | "duckdb" => {
            // `.shell CMD` / `.system CMD` (sqlite), `\! CMD` (psql, mysql), `system CMD` (mysql).
            let mut texts: Vec<String> = args.iter().filter_map(Word::literal).collect();
            texts.extend(input_text(cmd, io));
            for t in texts {
                for line in t.split(['\n', ';']) {
                    let l = line.trim();
                    let command = l
                        .strip_prefix(".shell ")
                        .or_else(|| l.strip_prefix(".system "))
                        .or_else(|| l.strip_prefix("\\! "))
                        .or_else(|| l.strip_prefix("\\!"))
                        .or_else(|| l.strip_prefix("system "));
                    if let Some(c) = command {
                        out.push(Follow::script(c, program));
                    }
                }
            }
        }
        "lxc" | "incus" | "machinectl" => {
            if args.iter().any(|a| a.is("exec") || a.is("shell"))
                && let Some(words) = after_dashes()
            {
                out.push(Follow::Exec {
                    words,
                    place: Place::Remote,
                    stdin: None,
                });
            }
        }
        "vagrant" => {
            out.extend(string_at(&["-c", "--command"]).map(|w| remote(w, "vagrant ssh -c")));
        }
        "gcloud" => out.extend(string_at(&["--command"]).map(|w| remote(w, "gcloud compute ssh"))),
        "az" => out.extend(string_at(&["--scripts"]).map(|w| remote(w, "az vm run-command"))),
        "aws" => {
            for a in args {
                if let Some(t) = a.literal()
                    && let Some(c) = t.split(',').find_map(|kv| kv.strip_prefix("commands="))
                {
                    out.push(remote(
                        Word::lit(c.trim_matches(['[', ']', '"', '\''])),
                        "aws ssm send-command",
                    ));
                }
            }
        }
        "salt" | "salt-ssh" => {
            if let Some(i) = args
                .iter()
                .position(|a| a.is("cmd.run") || a.is("cmd.shell") || a.is("cmd.script"))
                && let Some(c) = args.get(i + 1)
            {
                out.push(remote(c.clone(), "salt cmd.run"));
            }
        }
        "pdsh" | "pssh" | "parallel-ssh" | "clush" | "mussh" | "dsh" => {
            out.extend(
                option_value(args, &["-c"])
                    .or_else(|| args.iter().rfind(|a| !a.starts_with("-")).cloned())
                    .map(|w| remote(w, program)),
            );
        }
        "kubectl" | "oc" => {
            // `kubectl debug node/x -it --image=… -- chroot /host CMD`.
            if args.iter().any(|a| a.is("debug"))
                && let Some(words) = after_dashes()
            {
                out.push(Follow::Exec {
                    words,
                    place: Place::Remote,
                    stdin: None,
                });
            }
        }
        "fab" => {
            if let Some(words) = after_dashes() {
                out.push(Follow::Exec {
                    words,
                    place: Place::Remote,
                    stdin: None,
                });
            }
        }
        "sudo" | "doas" => {
            // `sudo -s` / `sudo -i` with no command is a shell reading standard input.
            let shell = args.iter().any(|a| {
                a.is("-s")
                    || a.is("-i")
                    || a.is("--shell")
                    || a.is("--login")
                    || a.is("-si")
                    || a.is("-is")
            });
            if shell && args.iter().all(|a| a.starts_with("-")) {
                stdin_script(cmd, io, Lang::Shell, program, out);
            }
        }
        _ => {}
    }
}

/// A shell fed from the network: a shell, an interpreter or `exec` with a redirection to
/// `/dev/tcp` (a reverse shell), or a relay told to run a program on the connection (`nc -e`,
/// `socat … EXEC:`). What the program is asked to run is followed too.
fn network_shell(cmd: &Cmd, program: &str, args: &[Word], out: &mut Vec<Follow>) {
    let runs_input =
        SHELLS.contains(&program) || CodeLang::of(program).is_some() || program == "exec";
    let on_socket = cmd.redirects.iter().any(|r| {
        r.target
            .as_ref()
            .is_some_and(|t| t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/"))
    });
    let mut served: Vec<String> = Vec::new();
    match crate::tools::lookup(program).and_then(|t| t.serves) {
        Some(crate::tools::Serves::Options(options)) => {
            for (i, a) in args.iter().enumerate() {
                let Some(t) = a.literal() else { continue };
                if options.contains(&t.as_str()) {
                    served.push(args.get(i + 1).map(Word::text).unwrap_or_default());
                } else if let Some((name, value)) = t.split_once('=')
                    && options.contains(&name)
                {
                    served.push(value.to_owned());
                }
            }
        }
        Some(crate::tools::Serves::Addresses(prefixes)) => {
            for t in args.iter().filter_map(Word::literal) {
                let upper = t.to_ascii_uppercase();
                if let Some(prefix) = prefixes.iter().find(|p| upper.starts_with(*p)) {
                    served.push(
                        t[prefix.len()..]
                            .split(',')
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                    );
                }
            }
        }
        None => {}
    }
    if (runs_input && on_socket) || !served.is_empty() {
        out.push(unresolved(
            RuleId::UnresolvedNetworkShell,
            &Reason::NetworkShell,
        ));
    }
    for command in served.into_iter().filter(|c| !c.is_empty()) {
        out.push(Follow::script(&command, program));
    }
}

/// tmux commands that run a shell command: `new-session`/`new-window`/`split-window`/
/// `respawn-pane`/`run-shell` take it as their last word; `send-keys` types it.
fn tmux(args: &[Word], out: &mut Vec<Follow>) {
    const RUNS: &[&str] = &[
        "new-session",
        "new",
        "new-window",
        "neww",
        "split-window",
        "splitw",
        "respawn-pane",
        "respawnp",
        "respawn-window",
        "respawnw",
        "run-shell",
        "run",
        "display-popup",
        "popup",
    ];
    const VALUE: &[&str] = &[
        "-t", "-s", "-n", "-c", "-x", "-y", "-e", "-F", "-l", "-w", "-h", "-S", "-L", "-f", "-T",
        "-d",
    ];
    // Global options before the verb: `-L socket`, `-S path`, `-f file`, `-c command`.
    let mut sub = 0;
    while let Some(a) = args.get(sub) {
        let t = a.text();
        if !t.starts_with('-') {
            break;
        }
        if t == "-c" {
            // `tmux -c COMMAND` runs COMMAND with the default shell.
            if let Some(c) = args.get(sub + 1) {
                out.push(Follow::string(c.clone(), "tmux -c", &Io::default()));
            }
            return;
        }
        sub += 1 + usize::from(matches!(t.as_str(), "-L" | "-S" | "-f" | "-T"));
    }
    if sub >= args.len() {
        return;
    }
    let verb = args[sub].text();
    let rest = &args[sub + 1..];
    let mut i = 0;
    let mut words = Vec::new();
    while i < rest.len() {
        let t = rest[i].text();
        if t.starts_with('-') && t.len() == 2 {
            // `-d` is a flag for new-session; the others take a value.
            i += 1 + usize::from(VALUE.contains(&t.as_str()) && t != "-d");
            continue;
        }
        words.push(rest[i].clone());
        i += 1;
    }
    if RUNS.contains(&verb.as_str()) {
        if !words.is_empty() {
            out.push(Follow::string(joined(&words), "tmux", &Io::default()));
        }
    } else if verb == "send-keys" || verb == "send" {
        let typed: Vec<Word> = words
            .into_iter()
            .filter(|w| !matches!(w.text().as_str(), "Enter" | "C-m" | "KPEnter" | "C-j"))
            .collect();
        if !typed.is_empty() {
            out.push(Follow::string(
                joined(&typed),
                "tmux send-keys",
                &Io::default(),
            ));
        }
    }
}

/// GNU parallel: `parallel CMD ::: ARGS`, `parallel 'CMD {}' ::: ARGS`; without `:::`, the
/// arguments are the lines of standard input.
fn parallel(cmd: &Cmd, args: &[Word], io: &Io) -> Vec<Follow> {
    let mut i = 0;
    while let Some(t) = args.get(i).and_then(Word::literal) {
        if !t.starts_with('-') || t == ":::" || t == "::::" {
            break;
        }
        let takes_value = matches!(
            t.as_str(),
            "-j" | "--jobs"
                | "-S"
                | "--sshlogin"
                | "--joblog"
                | "-a"
                | "--arg-file"
                | "-d"
                | "--delimiter"
                | "-I"
                | "--results"
                | "--timeout"
                | "--tmpdir"
                | "-n"
                | "--max-args"
                | "--colsep"
                | "-C"
        );
        i += 1 + usize::from(takes_value);
    }
    let rest = args.get(i..).unwrap_or(&[]);
    let sep = rest
        .iter()
        .position(|w| w.is(":::") || w.is("::::") || w.is(":::+"));
    let (template, sources) = match sep {
        Some(s) => (&rest[..s], Some(&rest[s..])),
        None => (rest, None),
    };
    let items: Vec<Word> = match sources {
        Some(src) if src.first().is_some_and(|w| w.is(":::") || w.is(":::+")) => bounded_words(
            src.iter()
                .skip(1)
                .filter(|w| !w.is(":::") && !w.is(":::+"))
                .cloned(),
        ),
        _ => match input(cmd, io) {
            Input::Text(t) => bounded_words(t.lines().filter(|l| !l.is_empty()).map(Word::lit)),
            _ => vec![Word::dynamic("…")],
        },
    };
    // A template of one word is a command line (`parallel 'rm -rf {}' ::: /`).
    let template: Vec<Word> = match template {
        [one] => match one.literal() {
            Some(t) => t.split_whitespace().map(Word::lit).collect(),
            None => vec![one.clone()],
        },
        _ => template.to_vec(),
    };
    if template.is_empty() {
        // No template: every input line is a command.
        return match input(cmd, io) {
            Input::Text(t) => vec![Follow::script(&t, "parallel")],
            Input::Terminal => Vec::new(),
            _ => vec![unresolved(
                RuleId::UnresolvedShellString,
                &Reason::ParallelInput,
            )],
        };
    }
    items
        .iter()
        .map(|item| {
            let has_placeholder = template.iter().any(|w| w.text().contains("{}"));
            let mut words: Vec<Word> = template.iter().map(|w| substitute(w, "{}", item)).collect();
            if !has_placeholder {
                words.push(item.clone());
            }
            Follow::exec(words)
        })
        .collect()
}

fn git(args: &[Word], out: &mut Vec<Follow>) {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let Some(t) = a.literal() else { break };
        if !t.starts_with('-') {
            break;
        }
        let value = if t == "-c" {
            i += 1;
            args.get(i).cloned()
        } else {
            t.strip_prefix("-c")
                .filter(|v| v.contains('='))
                .map(Word::lit)
        };
        if matches!(
            t.as_str(),
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env"
        ) {
            i += 1;
        }
        if let Some(v) = value {
            git_setting(&v, None, out);
        }
        i += 1;
    }
    // `git config [--global …] KEY VALUE` stores what a later git runs.
    if args.get(i).is_some_and(|w| w.is("config")) {
        let rest: Vec<&Word> = args[i + 1..]
            .iter()
            .filter(|w| !w.starts_with("-"))
            .collect();
        if let [key, value, ..] = rest.as_slice() {
            git_setting(key, Some(value), out);
        }
    }
}

/// A git setting (`KEY=VALUE`, or `KEY` and `VALUE` apart) whose value git runs.
fn git_setting(setting: &Word, value: Option<&Word>, out: &mut Vec<Follow>) {
    let (key, value): (String, Word) = match (setting.literal(), value) {
        (Some(k), Some(v)) => (k, v.clone()),
        (Some(t), None) => match t.split_once('=') {
            Some((k, v)) => (k.to_owned(), Word::lit(v)),
            None => return,
        },
        (None, _) => {
            if setting
                .text()
                .to_ascii_lowercase()
                .starts_with("core.hookspath")
            {
                out.push(unresolved(
                    RuleId::UnresolvedScriptPath,
                    &Reason::GitHooksDirUnknown,
                ));
            }
            if setting.text().to_ascii_lowercase().starts_with("alias.") {
                out.push(unresolved(
                    RuleId::UnresolvedGitAlias,
                    &Reason::GitAliasUnknown,
                ));
            }
            return;
        }
    };
    let key = key.to_ascii_lowercase();
    // `core.hooksPath DIR`: the hooks in DIR run on the next commit, merge, push, checkout.
    if key == "core.hookspath" {
        match value.literal() {
            Some(dir) => out.extend(GIT_HOOKS.iter().map(|hook| Follow::File {
                word: Word::lit(&format!("{}/{hook}", dir.trim_end_matches('/'))),
                lang: Lang::Shell,
            })),
            None => out.push(unresolved(
                RuleId::UnresolvedScriptPath,
                &Reason::GitHooksDirUnknown,
            )),
        }
        return;
    }
    // An alias or credential helper is a shell command only with `!`; otherwise git runs
    // its own subcommand (`git-credential-store`).
    let runs = if key.starts_with("alias.") || key == "credential.helper" {
        value.text().starts_with('!') || (key.starts_with("alias.") && !value.is_static())
    } else {
        GIT_SHELL_KEYS.contains(&key.as_str())
            || key.starts_with("pager.")
            || key.ends_with(".textconv")
            || (key.starts_with("filter.")
                && [".clean", ".smudge", ".process"]
                    .iter()
                    .any(|s| key.ends_with(s)))
    };
    if !runs {
        return;
    }
    let mut script = value;
    if let Some(Seg::Lit(first)) = script.segs.first_mut()
        && let Some(rest) = first.strip_prefix('!')
    {
        *first = rest.to_owned();
    }
    out.push(Follow::String {
        word: script,
        what: format!("git {key}"),
        io: Io::default(),
        place: Place::Here,
        scoped: true,
        positional: None,
    });
}

fn watch(args: &[Word], out: &mut Vec<Follow>) {
    let mut i = 0;
    let mut exec = false;
    while i < args.len() {
        let Some(t) = args[i].literal() else { break };
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') {
            break;
        }
        if t == "--exec" || (!t.starts_with("--") && t.contains('x')) {
            exec = true;
        }
        if matches!(
            t.as_str(),
            "-n" | "--interval" | "-q" | "--equexit" | "-s" | "--shell"
        ) {
            i += 1;
        }
        i += 1;
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if rest.is_empty() {
        return;
    }
    if exec {
        out.push(Follow::exec(rest.to_vec()));
    } else {
        out.push(Follow::string(joined(rest), "watch", &Io::default()));
    }
}

fn hyperfine(args: &[Word], io: &Io, out: &mut Vec<Follow>) {
    const TAKES_COMMAND: &[&str] = &[
        "-p",
        "--prepare",
        "-c",
        "--cleanup",
        "-s",
        "--setup",
        "--conclude",
    ];
    const TAKES_VALUE: &[&str] = &[
        "-w",
        "--warmup",
        "-m",
        "--min-runs",
        "-M",
        "--max-runs",
        "-r",
        "--runs",
        "-P",
        "--parameter-scan",
        "-D",
        "--parameter-step-size",
        "-L",
        "--parameter-list",
        "-S",
        "--shell",
        "--style",
        "--export-csv",
        "--export-json",
        "--export-markdown",
        "--export-asciidoc",
        "-n",
        "--command-name",
        "--output",
        "--input",
        "-u",
        "--time-unit",
        "--sort",
    ];
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.starts_with("-") {
            if TAKES_COMMAND.iter().any(|o| a.is(o))
                && let Some(v) = args.get(i + 1)
            {
                out.push(Follow::string(v.clone(), "hyperfine", io));
                i += 1;
            } else if TAKES_VALUE.iter().any(|o| a.is(o)) {
                i += 1;
            }
        } else {
            out.push(Follow::string(a.clone(), "hyperfine", io));
        }
        i += 1;
    }
}

/// `ssh [OPTIONS] HOST [COMMAND …]`: the words after the host are joined and run by the
/// remote user's shell, which reads ssh's standard input (`ssh host 'bash -s' <<< …`).
fn ssh(cmd: &Cmd, args: &[Word], io: &Io, out: &mut Vec<Follow>) {
    const VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut i = 0;
    while let Some(t) = args.get(i).and_then(Word::literal) {
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t.len() < 2 {
            break;
        }
        let takes = t
            .chars()
            .skip(1)
            .position(|c| VALUE.contains(c))
            .is_some_and(|k| k + 2 == t.len());
        i += 1 + usize::from(takes);
    }
    // `-o ProxyCommand=CMD` and `-o LocalCommand=CMD` run CMD here.
    for (k, a) in args.iter().enumerate() {
        let value = if a.is("-o") {
            args.get(k + 1).and_then(Word::literal)
        } else {
            a.literal().and_then(|t| {
                t.strip_prefix("-o")
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
            })
        };
        if let Some(v) = value {
            let (key, command) = v.split_once(['=', ' ']).unwrap_or((&v, ""));
            if key.eq_ignore_ascii_case("ProxyCommand") || key.eq_ignore_ascii_case("LocalCommand")
            {
                out.push(Follow::script(command.trim(), "ssh -o ProxyCommand"));
            }
        }
    }
    let mut rest = args.get(i + 1..).unwrap_or(&[]);
    if rest.first().is_some_and(|w| w.is("--")) {
        rest = &rest[1..];
    }
    if rest.is_empty() {
        return;
    }
    out.push(Follow::String {
        word: joined(rest),
        what: "ssh".into(),
        io: remote_io(cmd, io),
        place: Place::Remote,
        scoped: true,
        positional: None,
    });
}

/// What a remote command reads: the local command's standard input, when known.
fn remote_io(cmd: &Cmd, io: &Io) -> Io {
    match input(cmd, io) {
        Input::Text(t) => Io {
            piped_in: true,
            stdin: Some(Stdin::Text(t)),
            ..Io::default()
        },
        Input::Terminal => Io::default(),
        _ => Io {
            piped_in: true,
            stdin: Some(Stdin::Unknown),
            ..Io::default()
        },
    }
}

/// `docker exec [OPTIONS] CONTAINER CMD…`, `docker run [OPTIONS] IMAGE [CMD…]`, `docker
/// compose exec|run SERVICE CMD…`, `kubectl exec POD -- CMD…` (and podman, nerdctl, oc).
fn container(cmd: &Cmd, args: &[Word], io: &Io, out: &mut Vec<Follow>) {
    const VALUE: &[&str] = &[
        "-e",
        "--env",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "--env-file",
        "-v",
        "--volume",
        "--mount",
        "-p",
        "--publish",
        "--name",
        "--network",
        "--net",
        "--entrypoint",
        "-l",
        "--label",
        "--platform",
        "-m",
        "--memory",
        "--cpus",
        "--hostname",
        "-h",
        "--add-host",
        "--device",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--ulimit",
        "--pull",
        "--restart",
        "--log-driver",
        "--log-opt",
        "--tmpfs",
        "--shm-size",
        "--dns",
        "--ipc",
        "--pid",
        "--userns",
        "--gpus",
        "--runtime",
        "-c",
        "--container",
        "-n",
        "--namespace",
        "--context",
        "--kubeconfig",
        "-f",
        "--file",
        "--project-name",
        "--detach-keys",
        "--stop-signal",
        "--health-cmd",
        "--cgroupns",
        "--group-add",
        "--volumes-from",
        "--link",
        "--expose",
        "--label-file",
        "--cidfile",
        "--init-path",
        "--ip",
        "--ip6",
        "--mac-address",
        "--cpuset-cpus",
        "--cpuset-mems",
        "--cpu-shares",
        "--memory-swap",
        "--memory-reservation",
        "--pids-limit",
        "--stop-timeout",
        "--blkio-weight",
        "--dns-search",
        "--dns-option",
        "--domainname",
        "--isolation",
        "--network-alias",
        "--attach",
        "-a",
        "--index",
        "--project-directory",
        "--profile",
        "--env-from-file",
        "--secret",
    ];
    // Global options come before the verb (`docker -H host run`, `docker compose -f x run`).
    const GLOBAL_VALUE: &[&str] = &[
        "-H",
        "--host",
        "-c",
        "--context",
        "--config",
        "-l",
        "--log-level",
        "-f",
        "--file",
        "-p",
        "--project-name",
        "-n",
        "--namespace",
        "--kubeconfig",
        "--cluster",
        "--user",
        "-s",
        "--server",
        "--tlscacert",
        "--tlscert",
        "--tlskey",
        "--connection",
        "--url",
    ];
    let verb_at = |from: usize| {
        let mut i = from;
        while let Some(w) = args.get(i) {
            let t = w.text();
            if !t.starts_with('-') {
                return Some(i);
            }
            i += 1 + usize::from(!t.contains('=') && GLOBAL_VALUE.contains(&t.as_str()));
        }
        None
    };
    let Some(mut sub) = verb_at(0) else {
        return;
    };
    let mut verb = args[sub].literal().unwrap_or_default();
    if verb == "compose" || verb == "container" {
        let Some(next) = verb_at(sub + 1) else {
            return;
        };
        sub = next;
        verb = args[sub].literal().unwrap_or_default();
    }
    if !matches!(verb.as_str(), "exec" | "run") {
        return;
    }
    let rest = &args[sub + 1..];
    let mut i = 0;
    let mut target_seen = false;
    while i < rest.len() {
        let Some(t) = rest[i].literal() else {
            if target_seen {
                break;
            }
            target_seen = true;
            i += 1;
            continue;
        };
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with('-') && t.len() > 1 {
            let takes = !t.contains('=') && VALUE.contains(&t.as_str());
            i += 1 + usize::from(takes);
            continue;
        }
        if target_seen {
            break;
        }
        // `kubectl exec POD -- CMD`, and the old `kubectl exec POD CMD`, alike.
        target_seen = true;
        i += 1;
    }
    let mut words = rest.get(i..).unwrap_or(&[]).to_vec();
    if words.is_empty() {
        return;
    }
    // Paths under a bind mount are the host's: `-v /etc:/e … rm -rf /e` removes /etc.
    let mounts = bind_mounts(rest.get(..i).unwrap_or(&[]));
    for w in &mut words {
        let Some(t) = w.literal() else { continue };
        let mapped = map_mounts(&t, &mounts);
        if mapped != t {
            *w = Word::lit(&mapped);
        }
    }
    // With `-i`, the command reads our standard input.
    let interactive = rest[..i].iter().any(|w| {
        w.literal().is_some_and(|t| {
            t == "--interactive" || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
        })
    });
    let stdin = if interactive {
        remote_io(cmd, io).stdin
    } else {
        None
    };
    out.push(Follow::Exec {
        words,
        place: Place::Remote,
        stdin,
    });
}

/// Writable bind mounts of a container command: (host source, container target), from `-v
/// SRC:DST`, `-vSRC:DST`, `--volume=…` and `--mount type=bind,src=…,dst=…`.
fn bind_mounts(options: &[Word]) -> Vec<(String, String)> {
    let mut values: Vec<String> = Vec::new();
    for (k, w) in options.iter().enumerate() {
        let Some(t) = w.literal() else { continue };
        let next = || options.get(k + 1).and_then(Word::literal);
        match t.as_str() {
            "-v" | "--volume" | "--mount" => values.extend(next()),
            _ => values.extend(
                t.strip_prefix("--volume=")
                    .or_else(|| t.strip_prefix("--mount="))
                    .or_else(|| t.strip_prefix("-v").filter(|v| v.starts_with('/')))
                    .map(str::to_owned),
            ),
        }
    }
    values
        .iter()
        .filter_map(|v| {
            if v.contains('=') {
                let field = |names: &[&str]| {
                    v.split(',').find_map(|kv| {
                        let (k, val) = kv.split_once('=')?;
                        names.contains(&k).then(|| val.to_owned())
                    })
                };
                let read_only = v
                    .split(',')
                    .any(|kv| kv == "readonly" || kv == "ro" || kv == "readonly=true");
                let src = field(&["source", "src"])?;
                let dst = field(&["destination", "dst", "target"])?;
                (!read_only).then_some((src, dst))
            } else {
                let mut parts = v.split(':');
                let (src, dst) = (parts.next()?.to_owned(), parts.next()?.to_owned());
                let read_only = parts
                    .next()
                    .is_some_and(|o| o.split(',').any(|x| x == "ro"));
                (!read_only).then_some((src, dst))
            }
        })
        .filter(|(src, dst)| src.starts_with('/') && dst.starts_with('/'))
        .map(|(src, dst)| (src, dst.trim_end_matches('/').to_owned()))
        .filter(|(_, dst)| !dst.is_empty())
        .collect()
}

/// `text` with every path under a mount target rewritten to the host's source, wherever it
/// stands on a path boundary (`rm -rf /h`, `sh -c 'rm -rf /h/x'`).
fn map_mounts(text: &str, mounts: &[(String, String)]) -> String {
    let mut out = text.to_owned();
    for (src, dst) in mounts {
        let mut result = String::new();
        let mut rest = out.as_str();
        while let Some(at) = rest.find(dst.as_str()) {
            let before_ok = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '=' | '(' | ';'));
            let after = &rest[at + dst.len()..];
            let after_ok = after.chars().next().is_none_or(|c| {
                c == '/' || c.is_whitespace() || matches!(c, '\'' | '"' | ';' | ')')
            });
            result.push_str(&rest[..at]);
            result.push_str(if before_ok && after_ok { src } else { dst });
            rest = after;
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// Words joined by spaces into one word (dynamic parts kept).
fn joined(words: &[Word]) -> Word {
    let mut out = Word::default();
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            out.segs.push(Seg::Lit(" ".into()));
        }
        out.segs.extend(w.segs.iter().cloned());
    }
    out
}

/// The value of the first of `names` (`-c X`, `-cX` for `-c` alone, `--command=X`,
/// `--command X`, a cluster ending in the option: `-lc X`).
fn option_value(args: &[Word], names: &[&str]) -> Option<Word> {
    for (i, a) in args.iter().enumerate() {
        let Some(t) = a.literal() else { continue };
        if t == "--" {
            break;
        }
        for name in names {
            if t == *name {
                return args.get(i + 1).cloned();
            }
            if name.starts_with("--") {
                if let Some(v) = t.strip_prefix(&format!("{name}=")) {
                    return Some(Word::lit(v));
                }
            } else if t.len() > 2
                && t.starts_with('-')
                && !t.starts_with("--")
                && t.ends_with(&name[1..])
            {
                return args.get(i + 1).cloned();
            }
        }
    }
    None
}

/// Replaces `pattern` inside `word` by `with`.
fn substitute(word: &Word, pattern: &str, with: &Word) -> Word {
    let Some(text) = word.literal() else {
        return word.clone();
    };
    if !text.contains(pattern) || pattern.is_empty() {
        return word.clone();
    }
    let mut out = Word::default();
    let mut parts = text.split(pattern).peekable();
    while let Some(p) = parts.next() {
        if !p.is_empty() {
            out.segs.push(Seg::Lit(p.to_owned()));
        }
        if parts.peek().is_some() {
            out.segs.extend(with.segs.iter().cloned());
        }
    }
    out
}

/// The environment assignments written before a command or given to `env`, with values.
pub(crate) fn env_words(words: &[Word], start: usize) -> Vec<(String, Word)> {
    words[..start.min(words.len())]
        .iter()
        .filter_map(|w| {
            let t = w.literal()?;
            let name = is_assignment(&t)?;
            Some((name.to_owned(), Word::lit(&t[name.len() + 1..])))
        })
        .collect()
}

/// What a command lists on its output when that is not text known statically: paths under
/// `find`'s start paths, or every process ID (`ps -e`, `pgrep .`, and filters of those).
pub(crate) fn listing(cmd: &Cmd, io: &Io) -> Option<Stdin> {
    let program = cmd.program()?;
    let args = cmd.args();
    let every = |a: &Word| {
        a.literal().is_some_and(|t| {
            matches!(
                t.as_str(),
                "-e" | "-A" | "ax" | "aux" | "-ax" | "-aux" | "-ef" | "-eo" | "axo" | "-Ao"
            ) || (t.starts_with("-e") && !t.starts_with("--"))
        })
    };
    match program.as_str() {
        "find" => Some(Stdin::Under(find_starts(args).0)),
        // Project file lists: paths under the working directory.
        "git"
            if args.iter().any(|a| a.is("ls-files") || a.is("ls-tree"))
                || (args
                    .iter()
                    .any(|a| a.is("diff") || a.is("show") || a.is("log"))
                    && args.iter().any(|a| a.is("--name-only"))) =>
        {
            Some(Stdin::Under(vec![Word::lit(".")]))
        }
        "grep" | "egrep" | "rg" | "ag" | "ack"
            if args.iter().any(|a| {
                a.is("--files")
                    || a.is("--files-with-matches")
                    || a.literal().is_some_and(|t| {
                        t.starts_with('-') && !t.starts_with("--") && t.contains('l')
                    })
            }) =>
        {
            // The files it lists are under its operands (the working directory by default).
            let dirs: Vec<Word> = args
                .iter()
                .skip(1)
                .filter(|a| !a.starts_with("-") && a.text().starts_with(['.', '/', '~']))
                .cloned()
                .collect();
            Some(Stdin::Under(if dirs.is_empty() {
                vec![Word::lit(".")]
            } else {
                dirs
            }))
        }
        // `locate` lists paths from anywhere.
        "locate" | "plocate" | "mlocate" => Some(Stdin::Under(vec![Word::lit("/")])),
        // `ls -d ARGS` lists the arguments; `ls DIR` the names in DIR (relative ones).
        "ls" => {
            let operands: Vec<Word> = args
                .iter()
                .filter(|a| !a.starts_with("-"))
                .cloned()
                .collect();
            let dirs_themselves = args.iter().any(|a| {
                a.literal()
                    .is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('d'))
            });
            if dirs_themselves && !operands.is_empty() {
                Some(Stdin::Paths(operands))
            } else {
                Some(Stdin::Paths(vec![Word {
                    segs: vec![Seg::Glob("*".into())],
                }]))
            }
        }
        "ps" if args.iter().any(every) => Some(Stdin::AllPids),
        "pgrep" => {
            let patterns: Vec<String> = args
                .iter()
                .filter(|a| !a.starts_with("-"))
                .filter_map(Word::literal)
                .collect();
            (patterns.len() == 1 && crate::hardline::matches_everything(&patterns[0]))
                .then_some(Stdin::AllPids)
        }
        // Filters keep "every process" (`ps aux | awk '{print $2}'`); `grep` narrows it.
        "awk" | "gawk" | "mawk" | "cut" | "sed" | "tr" | "sort" | "uniq" | "tail" | "column" => {
            matches!(io.stdin, Some(Stdin::AllPids)).then_some(Stdin::AllPids)
        }
        _ => None,
    }
}

/// What a command writes to standard output (a pipe), when that is known statically.
pub(crate) fn static_output(cmd: &Cmd, io: &Io) -> Option<String> {
    if cmd.stdout_files().next().is_some() {
        return None;
    }
    static_text(cmd, io)
}

/// The text a command prints, wherever it goes, when that is known statically: `echo`,
/// `printf`, `cat` of a here-document, and the decoders an obfuscated line uses on known
/// input (`base64 -d`, `xxd -r -p`, `rev`), `dirname`, `basename`.
pub(crate) fn static_text(cmd: &Cmd, io: &Io) -> Option<String> {
    let program = cmd.argv().first().and_then(program_name)?;
    let args = cmd.args();
    let literal_args = || {
        args.iter()
            .map(Word::literal)
            .collect::<Option<Vec<String>>>()
    };
    match program.as_str() {
        "true" | "false" | ":" | "cd" | "export" | "set" | "shopt" | "unset" => Some(String::new()),
        // `$(which rm)`, `$(command -v rm)`: the program (its path is in PATH; the name is
        // what the policy reads).
        "which" | "type" | "command"
            if program == "which"
                || args
                    .first()
                    .is_some_and(|a| a.is("-v") || a.is("-P") || a.is("-p")) =>
        {
            let name = args.iter().rfind(|a| !a.starts_with("-"))?.literal()?;
            (!name.contains('/')).then(|| format!("{name}\n"))
        }
        "openssl"
            if args.first().is_some_and(|a| a.is("base64") || a.is("enc"))
                && args.iter().any(|a| a.is("-d")) =>
        {
            let text = input_text(cmd, io)?;
            base64_decode(&text).and_then(|b| String::from_utf8(b).ok())
        }
        "tr" => {
            let sets: Vec<String> = literal_args()?
                .into_iter()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let [from, to] = sets.as_slice() else {
                return None;
            };
            let (from, to) = (tr_set(from), tr_set(to));
            let text = input_text(cmd, io)?;
            Some(
                text.chars()
                    .map(|c| match from.iter().position(|&f| f == c) {
                        Some(i) => *to.get(i).or(to.last()).unwrap_or(&c),
                        None => c,
                    })
                    .collect(),
            )
        }
        "jq" | "gojq" | "yq" => {
            // `jq -rn '"text"'`: a string literal printed raw.
            let words = literal_args()?;
            let raw = words
                .iter()
                .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('r'));
            let filter = words.iter().find(|w| !w.starts_with('-'))?;
            let inner = filter.trim().strip_prefix('"')?.strip_suffix('"')?;
            (raw && !inner.contains(['"', '\\'])).then(|| format!("{inner}\n"))
        }
        p if CodeLang::of(p).is_some() => {
            let lang = CodeLang::of(p)?;
            let code = option_value(args, lang.code_options())?.literal()?;
            crate::inline::printed(&code).map(|t| t + "\n")
        }
        "base64"
            if args
                .iter()
                .any(|a| a.is("-d") || a.is("--decode") || a.is("-D")) =>
        {
            let text = input_text(cmd, io)?;
            base64_decode(&text).and_then(|b| String::from_utf8(b).ok())
        }
        "xxd"
            if args.iter().any(|a| a.is("-r"))
                && args.iter().any(|a| a.is("-p") || a.is("-ps")) =>
        {
            let text: String = input_text(cmd, io)?.split_whitespace().collect();
            let bytes: Option<Vec<u8>> = (0..text.len() / 2)
                .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
                .collect();
            String::from_utf8(bytes?).ok()
        }
        "rev" if args.is_empty() => Some(
            input_text(cmd, io)?
                .lines()
                .map(|l| l.chars().rev().collect::<String>() + "\n")
                .collect(),
        ),
        "pwd" => cmd.cwd.exact().map(|d| format!("{}\n", d.display())),
        "realpath" | "grealpath" | "readlink" => {
            let words = literal_args()?;
            let path = words.iter().rfind(|w| !w.starts_with('-'))?;
            let resolves = program != "readlink"
                || words
                    .iter()
                    .any(|w| matches!(w.as_str(), "-f" | "-e" | "-m" | "--canonicalize"));
            let cwd = cmd.cwd.exact()?;
            resolves.then(|| {
                format!(
                    "{}\n",
                    crate::paths::physical(cwd, path, &crate::paths::Links::new(), true).display()
                )
            })
        }
        "dirname" | "basename" => {
            let words = literal_args()?;
            let path = words.iter().find(|w| !w.starts_with('-'))?;
            let trimmed = path.trim_end_matches('/');
            let p = std::path::Path::new(if trimmed.is_empty() { "/" } else { trimmed });
            let out = if program == "dirname" {
                match p.parent() {
                    Some(d) if d.as_os_str().is_empty() => ".".to_owned(),
                    Some(d) => d.display().to_string(),
                    None => "/".to_owned(),
                }
            } else {
                p.file_name()
                    .map_or_else(|| "/".to_owned(), |n| n.to_string_lossy().into_owned())
            };
            Some(out + "\n")
        }
        "echo" => {
            let mut newline = true;
            let mut escapes = false;
            let mut i = 0;
            while let Some(t) = args.get(i).and_then(Word::literal) {
                if t.len() > 1
                    && t.starts_with('-')
                    && t[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
                {
                    newline &= !t.contains('n');
                    escapes = t.contains('e');
                    i += 1;
                } else {
                    break;
                }
            }
            let words: Option<Vec<String>> = args[i.min(args.len())..]
                .iter()
                .map(Word::literal)
                .collect();
            let mut s = words?.join(" ");
            if escapes {
                s = ansi_c(&s);
            }
            if newline {
                s.push('\n');
            }
            Some(s)
        }
        "printf" => {
            let words: Option<Vec<String>> = args.iter().map(Word::literal).collect();
            let words = words?;
            let (format, rest) = words.split_first()?;
            printf(format, rest)
        }
        "cat" if args.is_empty() => match cmd.here_input() {
            Some(r) => match (&r.kind, &r.target) {
                (RedirKind::HereDoc(body), _) => body.clone(),
                (_, Some(w)) => w.literal().map(|t| t + "\n"),
                _ => None,
            },
            None => None,
        },
        _ => None,
    }
}

/// The characters of a `tr` set: ranges (`a-z`) expanded.
fn tr_set(set: &str) -> Vec<char> {
    let chars: Vec<char> = set.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i] <= chars[i + 2] {
            // A range past the bound is not a set this analysis needs.
            if u32::from(chars[i + 2]) - u32::from(chars[i]) > 1024 {
                return Vec::new();
            }
            out.extend(chars[i]..=chars[i + 2]);
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
        if out.len() > 1024 {
            break;
        }
    }
    out
}

/// `printf` with `%s`, `%b` and `%%` only.
pub(crate) fn printf(format: &str, args: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0;
    for _round in 0..64 {
        let mut chars = format.chars().peekable();
        let mut used = false;
        // Literal text collects until a conversion, then its escapes (`\x72`, `\n`, `\101`)
        // are decoded at once.
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            if c != '%' {
                literal.push(c);
                continue;
            }
            out.push_str(&ansi_c(&std::mem::take(&mut literal)));
            match chars.next() {
                Some('%') => out.push('%'),
                Some('s') => {
                    out.push_str(args.get(next).map_or("", String::as_str));
                    next += 1;
                    used = true;
                }
                Some('b') => {
                    out.push_str(&ansi_c(args.get(next).map_or("", String::as_str)));
                    next += 1;
                    used = true;
                }
                _ => return None,
            }
        }
        out.push_str(&ansi_c(&literal));
        if !used || next >= args.len() {
            return Some(out);
        }
    }
    Some(out)
}
