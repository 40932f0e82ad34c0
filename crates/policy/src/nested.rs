//! Commands that run other commands: `bash -c`, `eval`, `trap`, `alias`, shells fed a script
//! on standard input, `xargs`, `find -exec`, `watch`, `su -c`, git's `-c alias.X=!CMD`.

use crate::command::{Class, Cmd, Finding, Origin, RedirKind};
use crate::flags::find_expression_start;
use crate::unwrap::program_name;
use crate::walk::{Io, Stdin, Walker, Written};
use crate::words::{Seg, Word, ansi_c};

/// Shells whose `-c` string and standard input are bash-like scripts.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "fish", "posh",
];

/// Interpreters that run a script read from standard input when given no script.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "tclsh",
    "osascript",
    "pwsh",
    "deno",
    "bun",
];

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
    "credential.helper",
];

impl Walker {
    /// Follows the commands `cmd` runs.
    pub(crate) fn nested(&mut self, cmd: &Cmd, io: &Io) {
        if let Some(split) = &cmd.unwrapped.split_string {
            self.run_string(split, io, true, "env -S");
        }
        let Some(program) = cmd.program() else {
            return;
        };
        if let Some(first) = cmd.argv().first()
            && first.text().contains('/')
        {
            self.run_written(first, cmd);
        }
        let args = cmd.args();
        let program = program.as_str();
        if SHELLS.contains(&program) {
            self.shell(cmd, args, io);
        } else if INTERPRETERS.iter().any(|i| program.starts_with(i)) {
            self.interpreter(cmd, args, io, program);
        }
        match program {
            "eval" => {
                if args.iter().all(Word::is_static) {
                    let joined = crate::command::join(args);
                    self.walk_script(&joined, io);
                } else {
                    self.finding(unresolved(
                        "unresolved.eval",
                        "`eval` runs a string only known at run time, so it needs approval. Run the command directly instead.",
                    ));
                }
            }
            "source" | "." => {
                if let Some(script) = args.first() {
                    self.run_written(script, cmd);
                }
                if let Some(script) = args.first()
                    && generated(script)
                {
                    self.finding(unresolved(
                        "unresolved.generated-script",
                        "`source` reads a script generated at run time, so it needs approval. Save the script to a file and review it first.",
                    ));
                }
            }
            "trap" => {
                let mut rest = args;
                if rest.first().is_some_and(|w| w.is("--")) {
                    rest = &rest[1..];
                }
                if let Some(action) = rest.first()
                    && !(action.is("-") || action.is("-l") || action.is("-p"))
                    && rest.len() > 1
                {
                    self.run_string(action, &Io::default(), true, "trap");
                }
            }
            "alias" => {
                for a in args {
                    if let Some(t) = a.literal() {
                        if let Some((_, value)) = t.split_once('=') {
                            self.walk_scoped(value, &Io::default());
                        }
                    } else {
                        self.finding(unresolved(
                            "unresolved.alias",
                            "the alias is only known at run time, so it needs approval.",
                        ));
                    }
                }
            }
            "xargs" => self.xargs(cmd, args, io),
            "find" => self.find_exec(cmd, args),
            "git" => self.git_config(args),
            "watch" => self.watch(cmd, args),
            "su" | "runuser" | "flock" | "script" => {
                if let Some(s) = option_value(args, &["-c", "--command"]) {
                    self.run_string(&s, io, true, program);
                }
            }
            "hyperfine" => {
                let mut i = 0;
                while i < args.len() {
                    let a = &args[i];
                    if a.starts_with("-") {
                        let takes_cmd = [
                            "-p",
                            "--prepare",
                            "-c",
                            "--cleanup",
                            "-s",
                            "--setup",
                            "--conclude",
                        ]
                        .iter()
                        .any(|o| a.is(o));
                        if takes_cmd && let Some(v) = args.get(i + 1) {
                            self.run_string(v, io, true, "hyperfine");
                        }
                        if !a.text().contains('=') && takes_value_hyperfine(a) {
                            i += 1;
                        }
                    } else {
                        self.run_string(a, io, true, "hyperfine");
                    }
                    i += 1;
                }
            }
            _ => {}
        }
    }

    /// Follows a script file written earlier on the same line.
    fn run_written(&mut self, file: &Word, cmd: &Cmd) {
        match self.written_script(file, &cmd.cwd) {
            Some(Written::Known(script)) => self.walk_scoped(&script, &Io::default()),
            Some(Written::Unknown) => self.finding(unresolved(
                "unresolved.generated-script",
                format!(
                    "`{}` is written earlier in the same command with content only known at run time and then run, so it needs approval. Write the script in one step, review it, then run it.",
                    file.text()
                ),
            )),
            None => {}
        }
    }

    /// Walks a script in its own scope (a child shell: `cd` does not leak out).
    pub(crate) fn walk_scoped(&mut self, script: &str, io: &Io) {
        let scope = self.save();
        self.walk_script(script, io);
        self.restore(scope);
    }

    /// Runs the string a command passes to a shell; asks when it is not static.
    fn run_string(&mut self, word: &Word, io: &Io, scoped: bool, what: &str) {
        match word.literal() {
            Some(script) => {
                if scoped {
                    self.walk_scoped(&script, io);
                } else {
                    self.walk_script(&script, io);
                }
            }
            None => self.finding(unresolved(
                "unresolved.shell-string",
                format!(
                    "`{what}` runs a command string only known at run time (`{}`), so it needs approval. Write the command out literally.",
                    word.text()
                ),
            )),
        }
    }

    fn shell(&mut self, cmd: &Cmd, args: &[Word], io: &Io) {
        let mut has_c = false;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let Some(t) = a.literal() else { break };
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            if t.starts_with("--") {
                if t == "--rcfile" || t == "--init-file" {
                    i += 1;
                }
                i += 1;
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                if t.contains('c') && t.starts_with('-') {
                    has_c = true;
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
            Some(script) if has_c => self.run_string(script, io, true, "shell -c"),
            Some(file) => {
                self.run_written(file, cmd);
                let stdin_file = file.is("/dev/stdin") || file.is("-");
                if stdin_file {
                    self.stdin_script(cmd, io, "shell");
                } else if generated(file) {
                    self.finding(unresolved(
                        "unresolved.generated-script",
                        "a shell runs a script generated at run time, so it needs approval. Save the script to a file and review it first.",
                    ));
                }
            }
            None if !has_c => self.stdin_script(cmd, io, "shell"),
            None => {}
        }
    }

    /// A shell reading its script from standard input.
    fn stdin_script(&mut self, cmd: &Cmd, io: &Io, what: &str) {
        if let Some(r) = cmd.here_input() {
            match (&r.kind, &r.target) {
                (RedirKind::HereDoc(body), _) => self.walk_scoped(&body.clone(), &Io::default()),
                (_, Some(word)) => self.run_string(word, &Io::default(), true, what),
                _ => {}
            }
            return;
        }
        if cmd.stdin_redirected() {
            return;
        }
        match &io.stdin {
            Some(Stdin::Text(t)) => {
                let t = t.clone();
                self.walk_scoped(&t, &Io::default());
            }
            Some(Stdin::Unknown) => self.finding(unresolved(
                "unresolved.pipe-to-shell",
                "a script generated at run time is piped into a shell, so it needs approval. Save it to a file, review it, then run the file.",
            )),
            None if io.piped_in => self.finding(unresolved(
                "unresolved.pipe-to-shell",
                "a script generated at run time is piped into a shell, so it needs approval. Save it to a file, review it, then run the file.",
            )),
            None => {}
        }
    }

    fn interpreter(&mut self, cmd: &Cmd, args: &[Word], io: &Io, program: &str) {
        if let Some(code) =
            option_value(args, &["-c", "-e", "-E", "--eval"]).and_then(|w| w.literal())
        {
            self.code_literals(&code);
        }
        let has_script = args
            .iter()
            .any(|a| !a.starts_with("-") || a.is("-c") || a.is("-e") || a.is("-m"))
            || args
                .iter()
                .any(|a| a.starts_with("-e") || a.starts_with("-c"));
        let reads_stdin = args.iter().all(|a| a.starts_with("-")) || args.iter().any(|a| a.is("-"));
        if has_script && !reads_stdin {
            return;
        }
        if cmd.stdin_redirected() {
            return;
        }
        if io.piped_in && !matches!(io.stdin, Some(Stdin::Text(_))) {
            self.finding(unresolved(
                "unresolved.pipe-to-interpreter",
                format!(
                    "a script generated at run time is piped into `{program}`, so it needs approval. Save it to a file, review it, then run the file."
                ),
            ));
        }
    }

    fn xargs(&mut self, cmd: &Cmd, args: &[Word], io: &Io) {
        let mut replace: Option<String> = None;
        let mut from_file = false;
        let mut i = 0;
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
                match name {
                    "replace" => {
                        replace = Some(if value.is_empty() {
                            "{}".into()
                        } else {
                            value.into()
                        });
                    }
                    "arg-file" => from_file = true,
                    _ => {}
                }
                if value.is_empty()
                    && matches!(
                        name,
                        "arg-file"
                            | "delimiter"
                            | "max-lines"
                            | "max-args"
                            | "max-procs"
                            | "max-chars"
                            | "process-slot-var"
                            | "eof"
                    )
                {
                    if name == "arg-file" {
                        from_file = true;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            let chars: Vec<char> = t.chars().skip(1).collect();
            for (k, &c) in chars.iter().enumerate() {
                let rest: String = chars[k + 1..].iter().collect();
                match c {
                    'I' => {
                        if rest.is_empty() {
                            replace = args.get(i + 1).and_then(Word::literal);
                            i += 1;
                        } else {
                            replace = Some(rest);
                        }
                        break;
                    }
                    'i' => {
                        replace = Some(if rest.is_empty() { "{}".into() } else { rest });
                        break;
                    }
                    'a' | 'd' | 'n' | 'L' | 'P' | 's' | 'E' => {
                        if c == 'a' {
                            from_file = true;
                        }
                        if rest.is_empty() {
                            i += 1;
                        }
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
        // Items from a known source (`echo / | xargs rm -rf`) are substituted as written.
        let items: Option<Vec<String>> = match (&io.stdin, from_file) {
            (Some(Stdin::Text(t)), false) => {
                Some(t.split_whitespace().take(16).map(str::to_owned).collect())
            }
            _ => None,
        };
        let commands: Vec<Vec<Word>> = match (&replace, items) {
            (Some(r), Some(items)) => items
                .iter()
                .map(|item| {
                    inner
                        .iter()
                        .map(|w| substitute(w, r, &Word::lit(item)))
                        .collect()
                })
                .collect(),
            (Some(r), None) => vec![
                inner
                    .iter()
                    .map(|w| substitute(w, r, &Word::dynamic("…")))
                    .collect(),
            ],
            (None, Some(items)) => {
                let mut v = inner.clone();
                v.extend(items.iter().map(|t| Word::lit(t)));
                vec![v]
            }
            (None, None) => {
                let mut v = inner.clone();
                v.push(Word::dynamic("…"));
                vec![v]
            }
        };
        for words in commands {
            self.exec_child(cmd, words);
        }
    }

    /// Records a command run by another program (`xargs`, `find -exec`).
    fn exec_child(&mut self, parent: &Cmd, words: Vec<Word>) {
        let saved = std::mem::replace(&mut self.cwd, parent.cwd.clone());
        let scope = self.save();
        self.emit(words, Vec::new(), Vec::new(), &Io::default(), Origin::Exec);
        self.restore(scope);
        self.cwd = saved;
    }

    fn find_exec(&mut self, cmd: &Cmd, args: &[Word]) {
        let first_expr = find_expression_start(args);
        let mut starts: Vec<Word> = args[..first_expr].to_vec();
        if starts.is_empty() {
            starts.push(Word::lit("."));
        }
        let filtered = args[first_expr..]
            .iter()
            .any(|a| FIND_FILTERS.iter().any(|f| a.is(f)));
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
            for start in starts.iter().take(4) {
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
                    self.exec_child(cmd, words);
                }
            }
            i = end + 1;
        }
    }

    fn git_config(&mut self, args: &[Word]) {
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
                self.git_setting(&v);
            }
            i += 1;
        }
    }

    fn git_setting(&mut self, setting: &Word) {
        let Some(t) = setting.literal() else {
            if setting.text().to_ascii_lowercase().starts_with("alias.") {
                self.finding(unresolved(
                    "unresolved.git-alias",
                    "a git alias is only known at run time, so it needs approval.",
                ));
            }
            return;
        };
        let Some((key, value)) = t.split_once('=') else {
            return;
        };
        let key = key.to_ascii_lowercase();
        let shell_value = if key.starts_with("alias.") {
            value.strip_prefix('!')
        } else if GIT_SHELL_KEYS.contains(&key.as_str())
            || key.starts_with("pager.")
            || key.ends_with(".textconv")
            || (key.starts_with("filter.")
                && [".clean", ".smudge", ".process"]
                    .iter()
                    .any(|s| key.ends_with(s)))
        {
            Some(value.strip_prefix('!').unwrap_or(value))
        } else {
            None
        };
        if let Some(script) = shell_value {
            self.walk_scoped(script, &Io::default());
        }
    }

    fn watch(&mut self, cmd: &Cmd, args: &[Word]) {
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
            if t == "-x" || t == "--exec" {
                exec = true;
            }
            if matches!(
                t.as_str(),
                "-n" | "--interval" | "-d" | "-q" | "--equexit" | "-s" | "--shell"
            ) && !t.contains('=')
            {
                // `-d` takes an optional attached value only.
                if t != "-d" {
                    i += 1;
                }
            }
            i += 1;
        }
        let rest = args.get(i..).unwrap_or(&[]);
        if rest.is_empty() {
            return;
        }
        if exec {
            self.exec_child(cmd, rest.to_vec());
        } else {
            let joined = Word {
                segs: rest
                    .iter()
                    .enumerate()
                    .flat_map(|(k, w)| {
                        let mut s = if k > 0 {
                            vec![Seg::Lit(" ".into())]
                        } else {
                            Vec::new()
                        };
                        s.extend(w.segs.iter().cloned());
                        s
                    })
                    .collect(),
            };
            self.run_string(&joined, &Io::default(), true, "watch");
        }
    }
}

impl Walker {
    /// Inline code that starts processes (`os.system("rm -rf /")`): its string literals, alone
    /// and joined, go to the hardline guard.
    fn code_literals(&mut self, code: &str) {
        const MARKERS: &[&str] = &[
            "system",
            "popen",
            "subprocess",
            "exec",
            "spawn",
            "`",
            "check_output",
            "Command",
        ];
        if !MARKERS.iter().any(|m| code.contains(m)) {
            return;
        }
        let literals = string_literals(code);
        for l in &literals {
            self.add_rough_text(l);
        }
        if literals.len() > 1 {
            self.add_rough_text(&literals.join(" "));
        }
    }
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

fn unresolved(rule: &str, reason: impl Into<String>) -> Finding {
    Finding::ask(Class::Unresolved, rule, reason)
}

/// A script path that is produced at run time (`<(curl ...)`, `/dev/fd/N`).
fn generated(word: &Word) -> bool {
    let t = word.text();
    t.starts_with("<(") || t.starts_with("/dev/fd/") || t == "/dev/stdin"
}

fn takes_value_hyperfine(opt: &Word) -> bool {
    [
        "-w",
        "--warmup",
        "-m",
        "--min-runs",
        "-M",
        "--max-runs",
        "-r",
        "--runs",
        "-p",
        "--prepare",
        "-c",
        "--cleanup",
        "-s",
        "--setup",
        "--conclude",
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
    ]
    .iter()
    .any(|o| opt.is(o))
}

/// The value of the first of `names` (`-c X`, `-cX`, `--command=X`, `--command X`).
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
                // A cluster ending in the option: `-lc 'cmd'`.
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

/// What a command writes to standard output (a pipe), when that is known statically.
pub(crate) fn static_output(cmd: &Cmd) -> Option<String> {
    if cmd.stdout_files().next().is_some() {
        return None;
    }
    static_text(cmd)
}

/// The text a command prints, wherever it goes, when that is known statically.
pub(crate) fn static_text(cmd: &Cmd) -> Option<String> {
    let program = cmd.argv().first().and_then(program_name)?;
    let args = cmd.args();
    match program.as_str() {
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
                (RedirKind::HereDoc(body), _) => Some(body.clone()),
                (_, Some(w)) => w.literal().map(|t| t + "\n"),
                _ => None,
            },
            None => None,
        },
        _ => None,
    }
}

/// `printf` with `%s`, `%b` and `%%` only.
fn printf(format: &str, args: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0;
    for _round in 0..64 {
        let mut chars = format.chars().peekable();
        let mut used = false;
        while let Some(c) = chars.next() {
            if c == '%' {
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
            } else if c == '\\' {
                let mut esc = String::from('\\');
                if let Some(n) = chars.next() {
                    esc.push(n);
                }
                out.push_str(&ansi_c(&esc));
            } else {
                out.push(c);
            }
        }
        if !used || next >= args.len() {
            return Some(out);
        }
    }
    Some(out)
}
