//! The walk over the syntax tree: finds every simple command however it is nested, resolves
//! its words, tracks `cd` and static variables, and notes what cannot be known statically.

use crate::rule::RuleId;
use std::path::{Path, PathBuf};

use tree_sitter::Node;

use std::collections::HashMap;

use crate::command::{Class, Cmd, Effects, Finding, Origin, Redir, RedirKind, Source};
use crate::command::{Follow, Io, Lang, Place, Stdin, Written};
use crate::paths::{Cwd, UNKNOWN_HOME, normalize};
use crate::reasons::Reason;
use crate::unwrap::unwrap;
use crate::words::{self, Env, Val, Vars, Word};
use crate::{fallback, inline, parse};

/// Scripts inside scripts (`bash -c "eval '...'"`) deeper than this are not followed.
const MAX_SCRIPT_DEPTH: u32 = 12;
/// Syntax nesting deeper than this is not followed.
const MAX_NODE_DEPTH: u32 = 200;
/// Total work bound for one check.
const MAX_STEPS: usize = 200_000;
/// Commands recorded for one check.
const MAX_COMMANDS: usize = 2_000;

/// What the walk found.
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    pub(crate) cmds: Vec<Cmd>,
    pub(crate) findings: Vec<Finding>,
    /// Commands guessed from text the parser could not make sense of; used for the hardline
    /// guard only.
    pub(crate) rough: Vec<Cmd>,
    /// Symbolic links the line makes (`ln -s / x`): link path → target, both absolute.
    pub(crate) links: HashMap<PathBuf, PathBuf>,
}

pub(crate) struct Scope {
    cwd: Cwd,
    oldcwd: Cwd,
    vars: Vars,
}

/// What a function body held when walked at its definition: its commands and findings.
type Deferred = (Vec<Cmd>, Vec<Finding>);

/// The walker's state.
pub(crate) struct Walker {
    pub(crate) home: Option<String>,
    pub(crate) cwd: Cwd,
    /// The directory before the last `cd` (`~-`, `$OLDPWD`).
    oldcwd: Cwd,
    pub(crate) vars: Vars,
    /// Greater than zero inside commands that run on another host or in a container.
    remote: u32,
    /// Greater than zero while the arguments of an unknown program are walked as if it ran
    /// them ([`Walker::probe_arguments`]).
    probing: u32,
    /// Where the last `cd` went, had it run: the items after it in an `&&` chain run only if it
    /// did, so there (see [`Walker::walk_list`]).
    cwd_if_ran: Option<Cwd>,
    /// Names bound to programs by `hash -p PATH NAME` or `BASH_CMDS[NAME]=PATH`.
    hashed: HashMap<String, String>,
    /// Copies of programs the line made (`cp /bin/rm ./clean`): copy → the program.
    program_copies: HashMap<PathBuf, PathBuf>,
    /// Variables declared with an attribute that changes what is assigned (`declare -i`,
    /// `-l`, `-u`).
    attributes: HashMap<String, char>,
    /// Greater than zero where a statement may or may not run.
    pub(crate) conditional: u32,
    script_depth: u32,
    node_depth: u32,
    steps: usize,
    /// A bound was hit and part of the input was not walked.
    gave_up: bool,
    /// Files written earlier on the line, with their content when it is known statically
    /// (`echo 'rm -rf /' > x.sh && bash x.sh`).
    pub(crate) written: HashMap<PathBuf, Option<String>>,
    /// Directories the line filled from the network (`git clone URL DIR`): what is in them
    /// is as unknown as a generated script.
    fetched: Vec<PathBuf>,
    /// What each process substitution (`<(echo …)`, by its source text) prints, when known.
    procsubs: HashMap<String, Option<String>>,
    /// What each command substitution (`$(echo rm)`, by its source text) prints, when known.
    cmdsubs: HashMap<String, Option<String>>,
    /// Functions defined on the line: name → body text, followed where they are called.
    functions: HashMap<String, String>,
    /// What a function's body held when walked at its definition, kept until it is called (then
    /// dropped: the call is walked with its arguments) or the line ends (then counted).
    uncalled: HashMap<String, Deferred>,
    /// What the last command walked lists on its output when that is not text: paths under
    /// `find`'s start paths, or every process ID.
    listed: Option<Stdin>,
    pub(crate) out: Analysis,
}

impl Walker {
    pub(crate) fn new(cwd: &Path, home: Option<&Path>) -> Walker {
        Walker {
            home: home.map(|h| h.to_string_lossy().into_owned()),
            cwd: Cwd::known(normalize(Path::new("/"), cwd)),
            oldcwd: Cwd::unknown(),
            vars: Vars::new(),
            remote: 0,
            conditional: 0,
            attributes: HashMap::new(),
            program_copies: HashMap::new(),
            hashed: HashMap::new(),
            cwd_if_ran: None,
            probing: 0,
            script_depth: 0,
            node_depth: 0,
            steps: 0,
            gave_up: false,
            written: HashMap::new(),
            fetched: Vec::new(),
            procsubs: HashMap::new(),
            cmdsubs: HashMap::new(),
            functions: HashMap::new(),
            uncalled: HashMap::new(),
            listed: None,
            out: Analysis::default(),
        }
    }

    pub(crate) fn save(&self) -> Scope {
        Scope {
            cwd: self.cwd.clone(),
            oldcwd: self.oldcwd.clone(),
            vars: self.vars.clone(),
        }
    }

    pub(crate) fn restore(&mut self, scope: Scope) {
        self.cwd = scope.cwd;
        self.oldcwd = scope.oldcwd;
        self.vars = scope.vars;
    }

    pub(crate) fn finding(&mut self, f: Finding) {
        if !self.out.findings.contains(&f) {
            self.out.findings.push(f);
        }
    }

    fn too_complex(&mut self, what: &Reason<'_>) {
        self.gave_up = true;
        self.finding(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedTooComplex,
            Reason::TooComplex { what }.text(),
        ));
    }

    /// Parses and walks a script (the whole line, or a string a shell will run).
    pub(crate) fn walk_script(&mut self, text: &str, io: &Io) {
        if self.script_depth >= MAX_SCRIPT_DEPTH {
            self.too_complex(&Reason::ShellsNestedTooDeeply);
            return;
        }
        let joined = parse::for_parser(text);
        let text = joined.as_ref();
        let Some(tree) = parse::parse(text) else {
            self.finding(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedParse,
                Reason::Unparsable.text(),
            ));
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.add_rough(text);
        }
        self.script_depth += 1;
        self.walk(root, text, io);
        self.script_depth -= 1;
        if self.script_depth == 0 {
            // Functions the line defines and never calls: their bodies count as written.
            let mut uncalled: Vec<(String, Deferred)> = self.uncalled.drain().collect();
            uncalled.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, (cmds, findings)) in uncalled {
                self.out.cmds.extend(cmds);
                for f in findings {
                    self.finding(f);
                }
            }
        }
        if self.script_depth == 0 && self.gave_up {
            // Parts were not analysed: the hardline guard still looks at a rough split.
            self.add_rough(text);
        }
    }

    /// A command with no words, placed here (what an assignment's follow-ups hang on).
    fn bare_cmd(&self) -> Cmd {
        Cmd {
            words: Vec::new(),
            unwrapped: unwrap(&[]),
            assigns: Vec::new(),
            env_values: Vec::new(),
            redirects: Vec::new(),
            cwd: self.cwd.clone(),
            origin: Origin::Direct,
            piped_in: false,
            piped_out: false,
            effects: Effects::default(),
        }
    }

    fn add_rough(&mut self, text: &str) {
        for words in fallback::rough_commands(text) {
            let words: Vec<Word> = words.iter().map(|w| Word::lit(w)).collect();
            let unwrapped = unwrap(&words);
            self.out.rough.push(with_effects(Cmd {
                words,
                unwrapped,
                assigns: Vec::new(),
                redirects: Vec::new(),
                env_values: Vec::new(),
                cwd: self.cwd.clone(),
                origin: Origin::Direct,
                piped_in: false,
                piped_out: false,
                effects: Effects::default(),
            }));
        }
    }

    pub(crate) fn resolve(&self, node: Node<'_>, src: &str) -> Vec<Word> {
        let pwd = self.cwd.exact().map(|p| p.to_string_lossy());
        let oldpwd = self.oldcwd.exact().map(|p| p.to_string_lossy());
        let env = Env {
            home: self.home.as_deref(),
            pwd: pwd.as_deref(),
            oldpwd: oldpwd.as_deref(),
            subs: &self.cmdsubs,
            vars: &self.vars,
        };
        words::resolve(node, src, &env)
    }

    /// Walks one node; returns what it writes to standard output when that is known.
    pub(crate) fn walk(&mut self, node: Node<'_>, src: &str, io: &Io) -> Option<String> {
        self.steps += 1;
        if self.steps > MAX_STEPS || self.out.cmds.len() > MAX_COMMANDS {
            self.too_complex(&Reason::TooLarge);
            return None;
        }
        if self.node_depth >= MAX_NODE_DEPTH {
            self.too_complex(&Reason::NestedTooDeeply);
            return None;
        }
        self.node_depth += 1;
        let out = self.walk_inner(node, src, io);
        self.node_depth -= 1;
        out
    }

    fn walk_inner(&mut self, node: Node<'_>, src: &str, io: &Io) -> Option<String> {
        match node.kind() {
            "command" => return self.walk_command(node, src, io, &[]),
            "redirected_statement" => return self.walk_redirected(node, src, io),
            "pipeline" => {
                let stages: Vec<Node<'_>> = named_children(node);
                return self.walk_stages(&stages, src, io, io.stdin.clone());
            }
            "list" => return self.walk_list(node, src, io, &[]),
            "subshell" => {
                let scope = self.save();
                self.walk_children(node, src, io);
                self.restore(scope);
            }
            "command_substitution" | "process_substitution" => {
                let scope = self.save();
                let inner = Io {
                    captured: true,
                    ..Io::default()
                };
                self.listed = None;
                let printed = self.walk_sequence(node, src, &inner);
                self.restore(scope);
                // `$(ps -e -o pid=)` prints every process ID: one word that matches them all.
                let printed = match (printed, self.listed.take()) {
                    (None, Some(Stdin::AllPids)) => Some(words::EVERY_PID.to_owned()),
                    // `$(git ls-files)`, `$(find src -name x)`: paths under one start.
                    (None, Some(Stdin::Under(starts))) if starts.len() == 1 => starts[0]
                        .literal()
                        .map(|s| format!("{}{s}", words::PATHS_UNDER)),
                    (printed, _) => printed,
                };
                let subs = if node.kind() == "process_substitution" {
                    &mut self.procsubs
                } else {
                    &mut self.cmdsubs
                };
                let printed = printed.filter(|p| p.len() <= words::MAX_VALUE);
                subs.insert(text(node, src).to_owned(), printed);
            }
            "function_definition" => self.walk_function(node, src),
            "for_statement" => self.walk_for(node, src, io),
            "if_statement" | "while_statement" | "c_style_for_statement" | "case_statement" => {
                if let Some(f) = crate::hardline::spawning_loop(node, src) {
                    self.finding(f);
                }
                self.walk_compound(node, src, io);
            }
            "variable_assignment" => self.walk_assignment(node, src),
            "declaration_command" | "unset_command" => self.walk_declaration(node, src, io),
            "comment" => {}
            // `$(< FILE)`: bash reads the file, as `cat FILE` would.
            "file_redirect" => {
                let redirects = self.redirects(&[node], src);
                self.emit(Vec::new(), Vec::new(), redirects, io, Origin::Direct);
            }
            "compound_statement" | "program" => return self.walk_sequence(node, src, io),
            _ => self.walk_children(node, src, io),
        }
        None
    }

    fn walk_children(&mut self, node: Node<'_>, src: &str, io: &Io) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.walk(child, src, io);
        }
    }

    /// Walks the substitutions inside a word-like node (they run before the command).
    pub(crate) fn walk_subs(&mut self, node: Node<'_>, src: &str) {
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                self.walk(node, src, &Io::default());
            }
            "word" | "raw_string" | "ansi_c_string" | "number" | "variable_name"
            | "string_content" | "heredoc_content" => {}
            _ => {
                if self.node_depth >= MAX_NODE_DEPTH {
                    self.too_complex(&Reason::NestedTooDeeply);
                    return;
                }
                self.node_depth += 1;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.walk_subs(child, src);
                }
                self.node_depth -= 1;
            }
        }
    }

    /// Walks statements in order; returns what they print together when all of it is known
    /// (`$(echo ~; true)` prints the home directory).
    fn walk_sequence(&mut self, node: Node<'_>, src: &str, io: &Io) -> Option<String> {
        let mut printed = Some(String::new());
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            let out = self.walk(child, src, io);
            if child.kind() != "comment" {
                printed = printed.zip(out).map(|(a, b)| a + &b);
            }
        }
        printed
    }

    /// Walks `a && b`, `a; b` …; returns what the items print together when that is known.
    fn walk_list(
        &mut self,
        node: Node<'_>,
        src: &str,
        io: &Io,
        tail_redirects: &[Node<'_>],
    ) -> Option<String> {
        // Lists nest to the left: flatten the spine without recursion. Each item after the
        // first may not run; after `||` it usually does not.
        let mut items: Vec<(Node<'_>, bool, bool)> = Vec::new();
        let mut cur = node;
        loop {
            let kids = named_children(cur);
            let (Some(&left), Some(&right)) = (kids.first(), kids.last()) else {
                break;
            };
            if kids.len() == 1 {
                items.push((left, false, false));
                break;
            }
            let or = operator(cur, src).contains("||");
            items.push((right, true, or));
            if left.kind() == "list" {
                cur = left;
            } else {
                items.push((left, false, false));
                break;
            }
        }
        items.reverse();
        let mut printed = Some(String::new());
        let last = items.len().saturating_sub(1);
        // Where the chain may have stopped, when an `&&` item moved: the items after it run in
        // the new directory, the line after the list in either.
        let mut stopped: Option<Cwd> = None;
        for (k, (item, conditional, after_or)) in items.into_iter().enumerate() {
            if after_or && let Some(s) = stopped.take() {
                self.cwd.union(s);
            }
            if conditional {
                self.conditional += 1;
            }
            self.cwd_if_ran = None;
            let out = if k == last && !tail_redirects.is_empty() {
                if item.kind() == "command" {
                    self.walk_command(item, src, io, tail_redirects)
                } else {
                    let out = self.walk(item, src, io);
                    let redirects = self.redirects(tail_redirects, src);
                    self.emit(Vec::new(), Vec::new(), redirects, io, Origin::Direct);
                    out
                }
            } else {
                self.walk(item, src, io)
            };
            // What a fallback after `||` prints is only certain when it is nothing.
            printed = match (printed, out) {
                (Some(a), Some(b)) if !after_or || b.is_empty() => Some(a + &b),
                _ => None,
            };
            if conditional {
                self.conditional -= 1;
            }
            if !after_or
                && let Some(moved) = self.cwd_if_ran.take()
                && k != last
            {
                let either = std::mem::replace(&mut self.cwd, moved);
                match &mut stopped {
                    Some(s) => s.union(either),
                    None => stopped = Some(either),
                }
            }
        }
        if let Some(s) = stopped {
            self.cwd.union(s);
        }
        printed
    }

    /// Walks pipeline stages, each in a subshell; returns what the last one prints when known.
    fn walk_stages(
        &mut self,
        stages: &[Node<'_>],
        src: &str,
        io: &Io,
        first_stdin: Option<Stdin>,
    ) -> Option<String> {
        let n = stages.len();
        let mut stdin = first_stdin;
        let mut last = None;
        for (i, stage) in stages.iter().enumerate() {
            let stage_io = Io {
                piped_in: i > 0 || io.piped_in,
                piped_out: i + 1 < n || io.piped_out,
                captured: io.captured,
                stdin: stdin.take(),
            };
            let scope = self.save();
            self.listed = None;
            let out = self.walk(*stage, src, &stage_io);
            self.restore(scope);
            last.clone_from(&out);
            stdin = Some(match (out, self.listed.take()) {
                (Some(text), _) => Stdin::Text(text),
                (None, Some(listing)) => listing,
                (None, None) => Stdin::Unknown,
            });
        }
        last
    }

    fn walk_redirected(&mut self, node: Node<'_>, src: &str, io: &Io) -> Option<String> {
        let mut redirect_nodes: Vec<Node<'_>> = Vec::new();
        let mut continuation: Option<(Node<'_>, bool)> = None;
        let mut body: Option<Node<'_>> = None;
        for (field, child) in fields(node) {
            match field {
                Some("body") => body = Some(child),
                _ if child.kind().ends_with("redirect") => {
                    redirect_nodes.push(child);
                    if child.kind() == "heredoc_redirect" {
                        for (f, c) in fields(child) {
                            if c.kind() == "pipeline" {
                                continuation = Some((c, true));
                            } else if f == Some("right") {
                                continuation = Some((c, false));
                            } else if f == Some("redirect") {
                                redirect_nodes.push(c);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let body_io = Io {
            piped_out: io.piped_out || matches!(continuation, Some((_, true))),
            ..io.clone()
        };
        let out = match body {
            Some(b) if b.kind() == "command" => {
                self.walk_command(b, src, &body_io, &redirect_nodes)
            }
            // `a && b < f` parses with the redirection on the list; in bash it is `b`'s.
            Some(b) if b.kind() == "list" => self.walk_list(b, src, &body_io, &redirect_nodes),
            Some(b) => {
                self.walk(b, src, &body_io);
                let redirects = self.redirects(&redirect_nodes, src);
                if !redirects.is_empty() {
                    self.emit(Vec::new(), Vec::new(), redirects, &body_io, Origin::Direct);
                }
                None
            }
            // `> /etc/passwd` alone truncates the file like any other write.
            None => {
                for &r in &redirect_nodes {
                    self.walk_subs(r, src);
                }
                let redirects = self.redirects(&redirect_nodes, src);
                if !redirects.is_empty() {
                    self.emit(Vec::new(), Vec::new(), redirects, &body_io, Origin::Direct);
                }
                None
            }
        };
        match continuation {
            Some((pipe, true)) => {
                let stages = named_children(pipe);
                let pipe_io = Io {
                    piped_in: true,
                    ..io.clone()
                };
                self.walk_stages(
                    &stages,
                    src,
                    &pipe_io,
                    Some(out.map_or(Stdin::Unknown, Stdin::Text)),
                )
            }
            Some((right, false)) => {
                self.conditional += 1;
                self.walk(right, src, io);
                self.conditional -= 1;
                None
            }
            None => out,
        }
    }

    fn walk_command(
        &mut self,
        node: Node<'_>,
        src: &str,
        io: &Io,
        extra_redirects: &[Node<'_>],
    ) -> Option<String> {
        // Substitutions run first, in order.
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for &child in &children {
            self.walk_subs(child, src);
        }
        for &r in extra_redirects {
            self.walk_subs(r, src);
        }
        let mut words: Vec<Word> = Vec::new();
        let mut assigns: Vec<(String, Word)> = Vec::new();
        let mut redirect_nodes: Vec<Node<'_>> = Vec::new();
        for (field, child) in fields(node) {
            match (field, child.kind()) {
                (_, "variable_assignment") => {
                    if let Some(name) = child.child_by_field_name("name") {
                        let value = child
                            .child_by_field_name("value")
                            .map(|v| self.resolve(v, src))
                            .and_then(|w| w.into_iter().next())
                            .unwrap_or_default();
                        assigns.push((text(name, src).to_owned(), value));
                    }
                }
                (Some("name"), _) => {
                    let inner = child.named_child(0).unwrap_or(child);
                    words.extend(self.resolve(inner, src));
                }
                (Some("argument"), _) => words.extend(self.resolve(child, src)),
                (_, k) if k.ends_with("redirect") => redirect_nodes.push(child),
                _ => {}
            }
        }
        redirect_nodes.extend_from_slice(extra_redirects);
        let redirects = self.redirects(&redirect_nodes, src);
        let origin = if io.captured {
            Origin::Captured
        } else {
            Origin::Direct
        };
        self.emit(words, assigns, redirects, io, origin)
    }

    pub(crate) fn redirects(&mut self, nodes: &[Node<'_>], src: &str) -> Vec<Redir> {
        let mut out = Vec::new();
        for &node in nodes {
            let fd = node
                .child_by_field_name("descriptor")
                .and_then(|d| text(d, src).parse::<u32>().ok());
            match node.kind() {
                "file_redirect" => {
                    let op = operator(node, src);
                    let dests: Vec<Node<'_>> = node
                        .children_by_field_name("destination", &mut node.walk())
                        .collect();
                    for dest in dests {
                        let words = self.resolve(dest, src);
                        let dup = op.ends_with('&')
                            && words.iter().all(|w| {
                                w.literal().is_some_and(|t| {
                                    t == "-" || t.chars().all(|c| c.is_ascii_digit())
                                })
                            });
                        if dup {
                            continue;
                        }
                        let kind = if op.contains('>') || op == "<>" {
                            RedirKind::Out
                        } else {
                            RedirKind::In
                        };
                        let fd = if op.starts_with('&') { None } else { fd };
                        for w in words {
                            out.push(Redir {
                                fd,
                                kind: kind.clone(),
                                append: op.contains(">>"),
                                target: Some(w),
                            });
                        }
                    }
                }
                "heredoc_redirect" => {
                    let body_node = named_children(node)
                        .into_iter()
                        .find(|c| c.kind() == "heredoc_body");
                    let mut body = body_node
                        .map(|b| text(b, src).to_owned())
                        .unwrap_or_default();
                    // An unquoted here-document expands its command substitutions: their
                    // output when it is known, else the document is only known at run time.
                    let mut known = true;
                    for sub in body_node
                        .map(named_children)
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|c| c.kind() == "command_substitution")
                    {
                        let source = text(sub, src);
                        match self.cmdsubs.get(source) {
                            Some(Some(out)) => {
                                body = body.replacen(source, out.trim_end_matches('\n'), 1);
                            }
                            _ => known = false,
                        }
                    }
                    let body = known.then_some(body);
                    out.push(Redir {
                        fd,
                        kind: RedirKind::HereDoc(body),
                        append: false,
                        target: None,
                    });
                }
                "herestring_redirect" => {
                    let word = named_children(node)
                        .into_iter()
                        .rfind(|c| c.kind() != "file_descriptor")
                        .and_then(|c| self.resolve(c, src).into_iter().next());
                    out.push(Redir {
                        fd,
                        kind: RedirKind::HereString,
                        append: false,
                        target: word,
                    });
                }
                _ => {}
            }
        }
        out
    }

    /// Walks a script in its own scope (a child shell: `cd` does not leak out).
    pub(crate) fn walk_scoped(&mut self, script: &str, io: &Io) {
        let scope = self.save();
        self.walk_script(script, io);
        self.restore(scope);
    }

    /// Records one simple command and follows what it runs.
    pub(crate) fn emit(
        &mut self,
        words: Vec<Word>,
        assigns: Vec<(String, Word)>,
        redirects: Vec<Redir>,
        io: &Io,
        origin: Origin,
    ) -> Option<String> {
        // `cp /bin/rm ./clean; ./clean -rf ~`, `ln -s /bin/rm x; ./x …`: a copy of or a link
        // to a program runs that program.
        let mut words = words;
        // `hash -p /bin/rm ls`, `BASH_CMDS[ls]=/bin/rm`: the name runs that program.
        if let Some(first) = words.first().and_then(Word::literal)
            && let Some(program) = self.hashed.get(&first)
        {
            words[0] = Word::lit(program);
        }
        if let Some(first) = words.first().and_then(Word::literal)
            && first.contains('/')
            && let Some(cwd) = self.cwd.exact()
        {
            let path = normalize(cwd, Path::new(&first));
            let program = self.program_copies.get(&path).cloned().or_else(|| {
                self.out
                    .links
                    .get(&path)
                    .filter(|t| in_program_dir(t))
                    .cloned()
            });
            if let Some(program) = program {
                words[0] = Word::lit(&program.to_string_lossy());
            }
        }
        let unwrapped = unwrap(&words);
        let mut env_values = assigns;
        env_values.extend(crate::nested::env_words(&words, unwrapped.start()));
        let mut names: Vec<String> = env_values.iter().map(|(n, _)| n.clone()).collect();
        names.extend(unwrapped.env_assigns.iter().cloned());
        names.dedup();
        let mut cwd = self.cwd.clone();
        if let Some(dir) = &unwrapped.chdir {
            cwd = self.cd_target(Some(dir));
        }
        let origin = if self.remote > 0 {
            Origin::Remote
        } else {
            origin
        };
        let cmd = with_effects(Cmd {
            words,
            unwrapped,
            assigns: names,
            env_values,
            redirects,
            cwd,
            origin,
            piped_in: io.piped_in,
            piped_out: io.piped_out,
            effects: Effects::default(),
        });
        // `/bin/r? -rf ~`: the program is whichever file the pattern matches when it runs.
        if let Some(name) = cmd.argv().first()
            && name.is_static()
            && name.has_glob()
            && self.probing == 0
        {
            self.finding(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedCommandName,
                Reason::ProgramIsPattern { name: &name.text() }.text(),
            ));
            let probes: Vec<Follow> = glob_programs(&name.text())
                .into_iter()
                .map(|program| {
                    let mut words = cmd.argv().to_vec();
                    words[0] = Word::lit(&program);
                    Follow::exec(words)
                })
                .collect();
            self.probe(&cmd, probes);
        }
        if let Some(name) = cmd.argv().first()
            && !name.is_static()
        {
            self.finding(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedCommandName,
                Reason::CommandNameUnknown { name: &name.text() }.text(),
            ));
        }
        let program = cmd.program();
        match program.as_deref() {
            Some("cd" | "pushd") => {
                let target = cmd.args().iter().find(|w| !w.starts_with("-") || w.is("-"));
                // `CDPATH=/ cd usr` searches CDPATH for the directory.
                let saved = cmd
                    .env_values
                    .iter()
                    .rev()
                    .find(|(n, _)| n == "CDPATH")
                    .map(|(_, v)| {
                        let val = v.literal().map_or(Val::Unknown, Val::Str);
                        self.vars.insert("CDPATH".into(), val)
                    });
                let new = self.cd_target(target);
                if let Some(old) = saved {
                    match old {
                        Some(v) => self.vars.insert("CDPATH".into(), v),
                        None => self.vars.remove("CDPATH"),
                    };
                }
                self.set_cwd(new);
            }
            Some("popd") => self.set_cwd(Cwd::unknown()),
            Some("set") => self.set_positional(cmd.args()),
            Some("shift") => {
                let n = cmd
                    .args()
                    .first()
                    .and_then(Word::literal)
                    .and_then(|t| t.parse::<usize>().ok())
                    .unwrap_or(1);
                if self.conditional > 0 {
                    // It may or may not shift: what `$1` is no longer known.
                    if self.vars.contains_key("@") {
                        self.vars.insert("@".into(), Val::Unknown);
                    }
                } else if let Some(Val::List(items)) = self.vars.get_mut("@") {
                    items.drain(..n.min(items.len()));
                }
            }
            Some("hash") => {
                let args = cmd.args();
                if let Some(at) = args.iter().position(|a| a.is("-p"))
                    && let (Some(path), Some(name)) = (
                        args.get(at + 1).and_then(Word::literal),
                        args.get(at + 2).and_then(Word::literal),
                    )
                {
                    self.hashed.insert(name, path);
                }
            }
            Some("read") => self.assign_read(&cmd, io),
            Some("mapfile" | "readarray") => self.assign_lines(&cmd, io),
            // `let p=3-2`: arithmetic assignments.
            Some("let") => {
                for arg in cmd.args().iter().filter_map(Word::literal) {
                    if let Some((name, expr)) = arg.split_once('=')
                        && crate::unwrap::is_assignment(&arg).is_some()
                    {
                        let value =
                            words::arithmetic(expr, &self.variables()).map(|v| v.to_string());
                        self.set_var(name.to_owned(), value);
                    }
                }
            }
            Some("printf") => {
                // `printf -v NAME FORMAT ARGS`.
                let args = cmd.args();
                if args.first().is_some_and(|a| a.is("-v"))
                    && let Some(name) = args.get(1).and_then(Word::literal)
                {
                    let rest: Option<Vec<String>> = args[2..].iter().map(Word::literal).collect();
                    let value = rest
                        .and_then(|r| {
                            let (format, values) = r.split_first()?;
                            crate::nested::printf(format, values)
                        })
                        .filter(|_| self.conditional == 0)
                        .map_or(Val::Unknown, Val::Str);
                    self.vars.insert(name, value);
                }
            }
            Some("ln") => self.record_link(&cmd),
            Some("mount") => self.record_bind_mount(&cmd),
            _ => {}
        }
        // `read 'a[$(CMD)]'`, `printf -v 'a[$(CMD)]'`, `unset 'a[$(CMD)]'`: bash evaluates the
        // subscript of a variable name given to a builtin, substitutions and all.
        if matches!(
            program.as_deref(),
            Some(
                "read"
                    | "printf"
                    | "declare"
                    | "typeset"
                    | "local"
                    | "unset"
                    | "mapfile"
                    | "readarray"
                    | "export"
                    | "test"
                    | "["
                    | "[["
            )
        ) {
            for arg in cmd.args().iter().filter_map(Word::literal) {
                if let Some((name, subscript)) = arg.split_once('[')
                    && !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && (subscript.contains("$(") || subscript.contains('`'))
                {
                    let subscript = subscript.strip_suffix(']').unwrap_or(subscript);
                    self.walk_scoped(&format!(": {subscript}"), io);
                }
            }
        }
        self.out.cmds.push(cmd.clone());
        self.record_writes(&cmd, io);
        let mut follows = crate::nested::follow(&cmd, io, &self.known());
        // A function defined on the line runs its body with these arguments.
        if let Some(name) = &program
            && let Some(body) = self.functions.get(name).cloned()
            && self.script_depth < 4
        {
            self.uncalled.remove(name);
            follows.push(Follow::String {
                word: Word::lit(&body),
                what: format!("function {name}"),
                io: io.clone(),
                place: Place::Here,
                scoped: false,
                positional: Some(
                    std::iter::once(Word::lit(name))
                        .chain(cmd.args().iter().cloned())
                        .collect(),
                ),
            });
        }
        // What the command runs sees its prefix assignments (`x=/ bash -c 'rm -rf "$x"'`).
        let saved: Vec<(String, Option<Val>)> = cmd
            .env_values
            .iter()
            .map(|(name, value)| {
                let val = value.literal().map_or(Val::Unknown, Val::Str);
                (name.clone(), self.vars.insert(name.clone(), val))
            })
            .collect();
        self.apply(&cmd, follows);
        if let Some(name) = &program
            && self.probing == 0
            && crate::tools::lookup(name).is_none()
            && !crate::unwrap::is_wrapper(name)
            && !self.functions.contains_key(name)
        {
            self.probe_arguments(&cmd);
        }
        for (name, old) in saved.into_iter().rev() {
            match old {
                Some(v) => self.vars.insert(name, v),
                None => self.vars.remove(&name),
            };
        }
        if cmd.stdout_files().next().is_none() {
            self.listed = crate::nested::listing(&cmd, io);
        }
        crate::nested::static_output(&cmd, io)
    }

    /// What the walk knows about files and substitutions, for `follow`.
    fn known(&self) -> crate::nested::Known<'_> {
        crate::nested::Known {
            written: &self.written,
            procsubs: &self.procsubs,
        }
    }

    /// `read [-r] NAME… <<< TEXT`: the names get the words of the first line.
    fn assign_read(&mut self, cmd: &Cmd, io: &Io) {
        let args = cmd.args();
        let mut names: Vec<String> = Vec::new();
        let mut array = false;
        let mut i = 0;
        while i < args.len() {
            let Some(t) = args[i].literal() else { return };
            if let Some(opt) = t.strip_prefix('-') {
                // `-a NAME`: the words go into an array.
                array |= opt.contains('a');
                if opt.ends_with('a') {
                    i += 1;
                    if let Some(name) = args.get(i).and_then(Word::literal) {
                        names.push(name);
                    }
                    i += 1;
                    continue;
                }
                // Options with a value: -a -d -i -n -N -p -t -u.
                if opt.len() == 1 && "adinNptu".contains(opt) {
                    i += 1;
                }
            } else {
                names.push(t);
            }
            i += 1;
        }
        if names.is_empty() {
            names.push("REPLY".into());
        }
        let text = match crate::nested::input_text(cmd, io) {
            Some(t) if self.conditional == 0 => t,
            _ => {
                for n in names {
                    self.vars.insert(n, Val::Unknown);
                }
                return;
            }
        };
        let line = text.lines().next().unwrap_or("");
        // The fields are split on `$IFS`: the command's own `IFS=,` prefix, else the line's.
        let ifs = match cmd.env_values.iter().rev().find(|(n, _)| n == "IFS") {
            Some((_, v)) => match v.literal() {
                Some(ifs) => ifs,
                None => {
                    for n in names {
                        self.vars.insert(n, Val::Unknown);
                    }
                    return;
                }
            },
            None => match self.vars.get("IFS") {
                Some(Val::Str(ifs)) => ifs.clone(),
                _ => " \t\n".to_owned(),
            },
        };
        let split = |s: &str| -> Vec<String> {
            s.split(|c| ifs.contains(c))
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect()
        };
        if array {
            if let Some(name) = names.first() {
                self.vars.insert(name.clone(), Val::List(split(line)));
            }
            return;
        }
        let fields = split(line);
        let last = names.len() - 1;
        let joiner = ifs.chars().next().map_or(String::new(), String::from);
        for (k, n) in names.into_iter().enumerate() {
            let value = if k == last {
                fields.get(k..).unwrap_or_default().join(&joiner)
            } else {
                fields.get(k).cloned().unwrap_or_default()
            };
            self.vars.insert(n, Val::Str(value));
        }
    }

    /// `mapfile -t NAME`, `readarray -t NAME`: the lines of standard input, when known.
    fn assign_lines(&mut self, cmd: &Cmd, io: &Io) {
        let args = cmd.args();
        let name = args
            .iter()
            .filter_map(Word::literal)
            .rfind(|a| !a.starts_with('-'))
            .unwrap_or_else(|| "MAPFILE".to_owned());
        // Without `-t` each element keeps its newline; `-C`, `-c` run callbacks; `-d`, `-n`,
        // `-O`, `-s`, `-u` change what is read: only the plain `-t` form is computed.
        let plain = args
            .iter()
            .filter_map(Word::literal)
            .filter(|a| a.starts_with('-'))
            .all(|a| a == "-t");
        let value = match crate::nested::input_text(cmd, io) {
            Some(text) if plain && self.conditional == 0 && args.iter().any(|a| a.is("-t")) => {
                Val::List(text.lines().map(str::to_owned).collect())
            }
            _ => Val::Unknown,
        };
        self.vars.insert(name, value);
    }

    /// `set -- a b`, `set a b`: the positional parameters.
    fn set_positional(&mut self, args: &[Word]) {
        // Options first (`set -e -- a b`, `set -o pipefail x`), then the parameters.
        let mut i = 0;
        let mut ended = false;
        while let Some(w) = args.get(i) {
            if !w.is_static() {
                self.vars.insert("@".into(), Val::Unknown);
                return;
            }
            if w.is("--") {
                i += 1;
                ended = true;
                break;
            }
            if !(w.starts_with("-") || w.starts_with("+")) || w.is("-") {
                break;
            }
            i += 1 + usize::from(w.is("-o") || w.is("+o"));
        }
        let rest = args.get(i..).unwrap_or(&[]);
        if rest.is_empty() && !ended {
            return;
        }
        let value = if self.conditional > 0 {
            Val::Unknown
        } else {
            rest.iter()
                .map(Word::literal)
                .collect::<Option<Vec<String>>>()
                .map_or(Val::Unknown, Val::List)
        };
        self.vars.insert("@".into(), value);
    }

    /// `mount --bind SRC DST` (or `-B`, `--rbind`, `-o bind`): later paths under `DST` are
    /// `SRC`'s, like a link.
    fn record_bind_mount(&mut self, cmd: &Cmd) {
        let args = cmd.args();
        let bind = args.iter().any(|a| {
            a.is("--bind")
                || a.is("-B")
                || a.is("--rbind")
                || a.is("-R")
                || a.literal()
                    .is_some_and(|t| t.contains("bind") && !t.starts_with("--"))
        });
        let ops: Vec<String> = args
            .iter()
            .filter(|a| !a.starts_with("-") && !a.text().contains("bind"))
            .filter_map(Word::literal)
            .collect();
        let (Some(cwd), true, [src, dst]) = (cmd.cwd.exact(), bind, ops.as_slice()) else {
            return;
        };
        let dst = normalize(cwd, Path::new(dst));
        self.out.links.insert(dst, normalize(cwd, Path::new(src)));
    }

    /// `ln -s TARGET LINK`: remembered so later paths through `LINK` resolve.
    fn record_link(&mut self, cmd: &Cmd) {
        let Some(cwd) = cmd.cwd.exact().map(Path::to_path_buf) else {
            return;
        };
        let args = cmd.args();
        let p = crate::flags::parse(args, &crate::tools::spec_for("ln"));
        if !p.has('s', "symbolic") {
            return;
        }
        let ops: Vec<String> = p
            .positionals
            .iter()
            .map(|&i| {
                args[i]
                    .literal()
                    .unwrap_or_else(|| crate::paths::DYNAMIC_LINK.to_owned())
            })
            .collect();
        let (target, link) = match ops.as_slice() {
            [target] => {
                let name = Path::new(target).file_name().map(PathBuf::from);
                (target.clone(), name.unwrap_or_default())
            }
            [target, link] => (target.clone(), PathBuf::from(link)),
            _ => return,
        };
        let mut link = normalize(&cwd, &link);
        if crate::disk::is_real_dir(&link) {
            link = link.join(Path::new(&target).file_name().unwrap_or_default());
        }
        let base = link.parent().map_or(cwd.clone(), Path::to_path_buf);
        self.out
            .links
            .insert(link, normalize(&base, Path::new(&target)));
    }

    /// Follows what a command runs.
    pub(crate) fn apply(&mut self, cmd: &Cmd, follows: Vec<Follow>) {
        for f in follows {
            match f {
                Follow::String {
                    word,
                    what,
                    io,
                    place,
                    scoped,
                    positional,
                } => match word.literal() {
                    Some(script) => self.in_place(place, |w| {
                        let saved = positional.map(|args| {
                            let mut words = args.iter().map(Word::literal);
                            let zero = words.next().flatten().map_or(Val::Unknown, Val::Str);
                            let list = words
                                .collect::<Option<Vec<String>>>()
                                .map_or(Val::Unknown, Val::List);
                            (
                                w.vars.insert("0".into(), zero),
                                w.vars.insert("@".into(), list),
                            )
                        });
                        if scoped {
                            w.walk_scoped(&script, &io);
                        } else {
                            w.walk_script(&script, &io);
                        }
                        if let Some((zero, all)) = saved {
                            for (name, old) in [("0", zero), ("@", all)] {
                                match old {
                                    Some(v) => w.vars.insert(name.into(), v),
                                    None => w.vars.remove(name),
                                };
                            }
                        }
                    }),
                    None => self.finding(Finding::ask(
                        Class::Unresolved,
                        RuleId::UnresolvedShellString,
                        Reason::ShellStringUnknown {
                            program: &what,
                            string: &word.text(),
                        }
                        .text(),
                    )),
                },
                Follow::File { word, lang } => self.run_file(&word, lang, cmd),
                Follow::Exec {
                    words,
                    place,
                    stdin,
                } => {
                    self.in_place(place, |w| w.exec_child(cmd, words, stdin));
                }
                Follow::Code { text, lang } => self.run_code(&text, lang, cmd),
                Follow::Rough(text) => self.add_rough(&text),
                Follow::Finding(f) => self.finding(f),
            }
        }
    }

    /// Runs `f` where the followed command runs: on another host or in a container, the home
    /// directory and working directory are that side's, and no variable carries over.
    fn in_place(&mut self, place: Place, f: impl FnOnce(&mut Walker)) {
        if place == Place::Here {
            f(self);
            return;
        }
        let scope = self.save();
        let home = self.home.take();
        self.cwd = Cwd::known(PathBuf::from(UNKNOWN_HOME));
        self.oldcwd = Cwd::unknown();
        self.vars = Vars::new();
        self.remote += 1;
        f(self);
        self.remote -= 1;
        self.home = home;
        self.restore(scope);
    }

    fn run_code(&mut self, text: &str, lang: crate::command::CodeLang, cmd: &Cmd) {
        if self.script_depth >= MAX_SCRIPT_DEPTH {
            self.too_complex(&Reason::CodeNestedTooDeeply);
            return;
        }
        self.script_depth += 1;
        let follows = inline::analyse(text, lang);
        self.apply(cmd, follows);
        self.script_depth -= 1;
    }

    /// A file run as a script: written earlier on the line, a process substitution, or a
    /// descriptor only known at run time.
    fn run_file(&mut self, file: &Word, lang: Lang, cmd: &Cmd) {
        let text = file.text();
        let content = if text.starts_with("<(") {
            match self.procsubs.get(&text) {
                Some(Some(out)) => Some(Written::Known(out.clone())),
                _ => Some(Written::Unknown),
            }
        } else if text.starts_with("/dev/fd/") || text == "/dev/stdin" {
            Some(Written::Unknown)
        } else if !file.is_static() && !file.starts_temp() {
            // A script whose path is only known at run time (`at -f "$JOB"`).
            self.finding(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedScriptPath,
                Reason::ScriptPathUnknown {
                    program: &cmd.program().unwrap_or_default(),
                    script: &text,
                }
                .text(),
            ));
            return;
        } else {
            self.written_script(file, &cmd.cwd)
        };
        match (content, lang) {
            (Some(Written::Known(script)), Lang::Shell) => {
                self.walk_scoped(&script, &Io::default());
            }
            (
                Some(Written::Known(text)),
                Lang::Make
                | Lang::Crontab
                | Lang::SystemCrontab
                | Lang::Unit
                | Lang::PackageJson
                | Lang::Just,
            ) => {
                let script = crate::nested::embedded_commands(&text, lang);
                self.walk_scoped(&script, &Io::default());
            }
            (Some(Written::Known(code)), Lang::Code(l)) => self.run_code(&code, l, cmd),
            (Some(Written::Unknown), _) => self.finding(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedGeneratedScript,
                Reason::GeneratedScript { script: &text }.text(),
            )),
            (None, _) => {}
        }
    }

    /// A program the tool table does not know may run its arguments (`chronic CMD…`,
    /// `runner --exec 'CMD'`, `concurrently 'CMD'`): each suffix of its arguments that starts
    /// with a word, each value of an option named like a command option, and each argument that
    /// reads like a command line is walked as if it ran. Only what the
    /// hardline guard denies in them counts: they go to the guard's rough commands, and of
    /// their findings only hardline ones are kept. A program known to take data (`echo`,
    /// `grep`, `git commit -m`) has a row in the table and is never probed.
    fn probe_arguments(&mut self, cmd: &Cmd) {
        /// Suffixes walked for one command (a bound on the work, not on safety: each
        /// suffix starts later on the line, so the first ones matter).
        const MAX_PROBES: usize = 24;
        let args = cmd.args();
        let mut probes: Vec<Follow> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if probes.len() >= MAX_PROBES {
                break;
            }
            let Some(t) = a.literal() else { continue };
            if t.len() > 1 && t.starts_with('-') {
                let (name, inline) = match t.split_once('=') {
                    Some((n, v)) => (n, Some(Word::lit(v))),
                    None => (t.as_str(), None),
                };
                if crate::tools::COMMAND_OPTIONS.contains(&name)
                    && let Some(value) = inline.or_else(|| args.get(i + 1).cloned())
                    && value.literal().is_some()
                {
                    probes.push(Follow::string(value, name, &Io::default()));
                }
                continue;
            }
            // A command line in one word (`concurrently 'rm -rf ~'`): only when it reads like
            // one, a program with an option or a path after it, so a sentence passed as text
            // (`notify "reboot required"`) is not taken for a command.
            let mut shell_words = t.split_whitespace();
            if shell_words.next().is_some()
                && shell_words.any(|w| w.starts_with('-') || w.contains('/') || w.starts_with('~'))
            {
                probes.push(Follow::string(
                    a.clone(),
                    &Reason::UnknownProgram.text(),
                    &Io::default(),
                ));
                continue;
            }
            // Only a word that names a program the policy has something to say about (or a
            // path) starts a suffix worth walking: the guard denies nothing else.
            let plausible_program = !t.is_empty()
                && !t.contains('=')
                && t.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | '[')
                })
                && (t.contains('/') || t.contains('[') || guarded_name(&t));
            if plausible_program {
                probes.push(Follow::exec(args[i..].to_vec()));
            }
        }
        self.probe(cmd, probes);
    }

    /// Walks `probes` as if `cmd` ran them, keeping of what they find only what the hardline
    /// guard denies and shells fed from the network.
    fn probe(&mut self, cmd: &Cmd, probes: Vec<Follow>) {
        if probes.is_empty() {
            return;
        }
        let (cmds, findings) = (self.out.cmds.len(), self.out.findings.len());
        self.probing += 1;
        let scope = self.save();
        self.apply(cmd, probes);
        self.restore(scope);
        self.probing -= 1;
        let probed = self.out.cmds.split_off(cmds);
        let found = self.out.findings.split_off(findings);
        self.out.rough.extend(probed);
        self.out.findings.extend(found.into_iter().filter(|f| {
            (f.class == Class::Hardline && f.decision == crate::Decision::Deny)
                || f.rule == RuleId::UnresolvedNetworkShell.into()
        }));
    }

    /// Records a command run by another program (`xargs`, `find -exec`).
    fn exec_child(&mut self, parent: &Cmd, words: Vec<Word>, stdin: Option<Stdin>) {
        let saved = std::mem::replace(&mut self.cwd, parent.cwd.clone());
        let scope = self.save();
        let io = Io {
            piped_in: stdin.is_some(),
            stdin,
            ..Io::default()
        };
        self.emit(words, Vec::new(), Vec::new(), &io, Origin::Exec);
        self.restore(scope);
        self.cwd = saved;
    }

    /// Remembers what a command writes into files (its [effects](crate::effects)), with the
    /// content when it is known statically, and the directories it fills from the network.
    fn record_writes(&mut self, cmd: &Cmd, io: &Io) {
        let Some(cwd) = cmd.cwd.exact().map(Path::to_path_buf) else {
            return;
        };
        for dir in &cmd.effects.fetched_dirs {
            if let Some(t) = dir.literal() {
                self.fetched.push(normalize(&cwd, Path::new(&t)));
            }
        }
        let output = crate::nested::static_text(cmd, io);
        let input = match (&io.stdin, cmd.here_input()) {
            (_, Some(r)) => match (&r.kind, &r.target) {
                (RedirKind::HereDoc(body), _) => body.clone(),
                (_, Some(w)) => w.literal().map(|t| t + "\n"),
                _ => None,
            },
            (Some(Stdin::Text(t)), None) => Some(t.clone()),
            _ => None,
        };
        let mut later: Vec<(PathBuf, Lang)> = Vec::new();
        for write in &cmd.effects.writes {
            let Some(t) = write.target.literal() else {
                continue;
            };
            let path = normalize(&cwd, Path::new(&t));
            let text = match &write.source {
                Source::Output => output.clone(),
                Source::Input => input.clone(),
                Source::Empty => Some(String::new()),
                Source::Fetched => None,
                // A copy of a file the line wrote carries its content; a copy of a file that
                // was already there is as reviewed as the original.
                Source::CopyOf(from) => match self.written_script(from, &cmd.cwd) {
                    Some(Written::Known(text)) => Some(text),
                    Some(Written::Unknown) => None,
                    None => {
                        if let Some(program) = from
                            .literal()
                            .map(|f| normalize(&cwd, Path::new(&f)))
                            .filter(|f| in_program_dir(f))
                        {
                            self.program_copies.insert(path, program);
                        }
                        continue;
                    }
                },
                // An edit (`sed -i`) or a build product: only what the line wrote itself
                // becomes unknown.
                Source::Unknown if self.written.contains_key(&path) => None,
                Source::Unknown => continue,
            };
            let entry = self
                .written
                .entry(path.clone())
                .or_insert_with(|| Some(String::new()));
            match (entry.as_mut(), &text) {
                (Some(content), Some(new)) if content.len() + new.len() <= words::MAX_VALUE => {
                    content.push_str(new);
                }
                _ => *entry = None,
            }
            // A file something runs later (a git hook, a crontab, a shell's start file, a
            // systemd unit): follow what was written into it now.
            if let Some(lang) = crate::nested::runs_later(&path, self.home.as_deref()) {
                later.push((path, lang));
            }
        }
        for (file, lang) in later {
            let here = self.bare_cmd();
            self.run_file(&Word::lit(&file.to_string_lossy()), lang, &here);
        }
    }

    /// What a file written earlier on the line holds, if it was written here (or fetched, as
    /// part of a directory filled from the network).
    pub(crate) fn written_script(&self, word: &Word, cwd: &Cwd) -> Option<Written> {
        let t = word.literal()?;
        let cwd = cwd.exact()?;
        let path = normalize(cwd, Path::new(&t));
        if self.fetched.iter().any(|dir| path.starts_with(dir)) {
            return Some(Written::Unknown);
        }
        let content = self.written.get(&path)?;
        Some(match content {
            Some(text) => Written::Known(text.clone()),
            None => Written::Unknown,
        })
    }

    fn set_cwd(&mut self, new: Cwd) {
        self.cwd_if_ran = Some(new.clone());
        if self.conditional > 0 {
            self.oldcwd.union(self.cwd.clone());
            self.cwd.union(new);
        } else {
            self.oldcwd = std::mem::replace(&mut self.cwd, new);
        }
    }

    /// Where `cd WORD` goes from the current directory.
    pub(crate) fn cd_target(&self, target: Option<&Word>) -> Cwd {
        let Some(word) = target else {
            return match &self.home {
                Some(h) => Cwd::known(PathBuf::from(h)),
                None => Cwd::known(PathBuf::from(crate::paths::UNKNOWN_HOME)),
            };
        };
        if word.is("-") {
            return self.oldcwd.clone();
        }
        if word.starts_with("+") {
            return Cwd::unknown();
        }
        let Some(t) = word.literal() else {
            if word.segs.first() == Some(&crate::words::Seg::Home) && word.segs.len() == 1 {
                return Cwd::known(PathBuf::from(crate::paths::UNKNOWN_HOME));
            }
            return Cwd::unknown();
        };
        let t = if word.segs.first() == Some(&crate::words::Seg::Home) {
            t.replacen('~', crate::paths::UNKNOWN_HOME, 1)
        } else {
            t
        };
        if word.has_glob() {
            return Cwd::unknown();
        }
        let mut out = Cwd {
            options: Vec::new(),
            unknown: self.cwd.unknown && !t.starts_with('/'),
        };
        for base in &self.cwd.options {
            let p = normalize(base, Path::new(&t));
            if !out.options.contains(&p) {
                out.options.push(p);
            }
        }
        if t.starts_with('/') && out.options.is_empty() {
            out.options.push(normalize(Path::new("/"), Path::new(&t)));
            out.unknown = false;
        }
        // CDPATH, when the line sets it, is searched for a plain relative name.
        if !t.starts_with('/') && !t.starts_with('.') {
            match self.vars.get("CDPATH") {
                Some(Val::Str(list)) => {
                    for dir in list.split(':').filter(|d| !d.is_empty()) {
                        let p = normalize(Path::new("/"), &Path::new(dir).join(&t));
                        if !out.options.contains(&p) {
                            out.options.push(p);
                        }
                    }
                }
                Some(_) => out.unknown = true,
                None => {}
            }
        }
        out
    }

    fn walk_function(&mut self, node: Node<'_>, src: &str) {
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, src).to_owned())
            .unwrap_or_default();
        if let Some(body) = node.child_by_field_name("body") {
            if let Some(f) = crate::hardline::fork_bomb(body, src, &name) {
                self.finding(f);
            }
            if !name.is_empty() {
                self.functions
                    .insert(name.clone(), text(body, src).to_owned());
            }
        }
        // The body is walked now with its parameters unknown; what that finds counts only if
        // the line never calls the function (a call walks it again with the real arguments).
        let (cmds, findings) = (self.out.cmds.len(), self.out.findings.len());
        let scope = self.save();
        self.conditional += 1;
        self.walk_children(node, src, &Io::default());
        self.conditional -= 1;
        self.restore(scope);
        if !name.is_empty() {
            let body_cmds = self.out.cmds.split_off(cmds.min(self.out.cmds.len()));
            let body_findings = self
                .out
                .findings
                .split_off(findings.min(self.out.findings.len()));
            self.uncalled.insert(name, (body_cmds, body_findings));
        }
    }

    fn walk_compound(&mut self, node: Node<'_>, src: &str, io: &Io) {
        let loop_var = node
            .child_by_field_name("variable")
            .map(|v| text(v, src).to_owned());
        for (field, child) in fields(node) {
            if !child.is_named() {
                continue;
            }
            let first_run = matches!(field, Some("condition" | "value"))
                && node.kind() != "c_style_for_statement";
            if field == Some("variable") {
                continue;
            }
            if !first_run {
                self.conditional += 1;
            }
            if let Some(v) = &loop_var {
                self.vars.insert(v.clone(), Val::Unknown);
            }
            self.walk(child, src, io);
            if !first_run {
                self.conditional -= 1;
            }
        }
    }

    fn walk_assignment(&mut self, node: Node<'_>, src: &str) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name, src).to_owned();
        let value = node.child_by_field_name("value");
        if let Some(v) = value {
            self.walk_subs(v, src);
        }
        let appending = operator(node, src) == "+=";
        let resolved = match value {
            None => Val::Str(String::new()),
            Some(v) if v.kind() == "array" => {
                let items: Option<Vec<String>> = named_children(v)
                    .into_iter()
                    .flat_map(|item| self.resolve(item, src))
                    .map(|w| w.literal())
                    .collect();
                items.map_or(Val::Unknown, Val::List)
            }
            Some(v) => {
                let words = self.resolve(v, src);
                let follows = words
                    .first()
                    .map(|w| crate::nested::exec_var(&name, w))
                    .unwrap_or_default();
                if !follows.is_empty() {
                    let here = self.bare_cmd();
                    self.apply(&here, follows);
                }
                match words.as_slice() {
                    [w] if w.starts_temp() && w.segs.len() == 1 => Val::Temp,
                    [w] => w.literal().map_or(Val::Unknown, Val::Str),
                    [] => Val::Str(String::new()),
                    _ => Val::Unknown,
                }
            }
        };
        let too_long = match &resolved {
            Val::Str(s) | Val::Glob(s) => s.len() > words::MAX_VALUE,
            Val::List(items) => items.iter().map(String::len).sum::<usize>() > words::MAX_VALUE,
            Val::Unknown | Val::Temp => false,
        };
        // A variable declared `-i`, `-l` or `-u` takes its value through the attribute.
        let attribute = self.attributes.get(&name).copied();
        let resolved = match (attribute, resolved) {
            (Some('i'), Val::Str(expr)) => {
                let value = words::arithmetic(&expr, &self.variables());
                let old = match self.vars.get(&name) {
                    Some(Val::Str(s)) => s.parse::<i64>().ok(),
                    _ => None,
                };
                match (appending, value, old) {
                    (false, Some(v), _) => Val::Str(v.to_string()),
                    (true, Some(v), Some(o)) => {
                        return self.set_var(name, o.checked_add(v).map(|s| s.to_string()));
                    }
                    _ => Val::Unknown,
                }
            }
            (Some('l'), Val::Str(s)) => Val::Str(s.to_lowercase()),
            (Some('u'), Val::Str(s)) => Val::Str(s.to_uppercase()),
            (_, value) => value,
        };
        // `c+=m`: appended to what the variable held, when both are known.
        let resolved = match (appending, self.vars.get(&name), resolved) {
            (false, _, value) => value,
            (true, Some(Val::Str(old)), Val::Str(new)) => Val::Str(format!("{old}{new}")),
            (true, Some(Val::List(old)), Val::List(new)) => {
                Val::List(old.iter().chain(&new).cloned().collect())
            }
            (true, _, _) => Val::Unknown,
        };
        let known = self.conditional == 0 && !too_long;
        // `a[1]=x`, `a[2*3]=x` changes one element of the array `a`: known when the index
        // and the value are.
        let name = match name.split_once('[') {
            Some(("BASH_CMDS", key)) => {
                if let (true, Val::Str(path)) = (known, &resolved) {
                    self.hashed
                        .insert(key.trim_end_matches(']').to_owned(), path.clone());
                }
                return;
            }
            Some((base, index)) => {
                let index = index.trim_end_matches(']');
                let at = words::arithmetic(index, &self.variables())
                    .and_then(|i| usize::try_from(i).ok());
                let element = match (known, &resolved) {
                    (true, Val::Str(s)) => Some(s.clone()),
                    _ => None,
                };
                // Only a dense array is modelled: an element past its end would leave a gap
                // that `"${a[@]}"` skips.
                let updated = match (self.vars.get(base), at, element) {
                    (Some(Val::List(items)), Some(at), Some(value)) if at <= items.len() => {
                        let mut items = items.clone();
                        if at == items.len() {
                            items.push(value);
                        } else {
                            items[at] = value;
                        }
                        Val::List(items)
                    }
                    (None, Some(0), Some(value)) => Val::List(vec![value]),
                    _ => Val::Unknown,
                };
                self.vars.insert(base.to_owned(), updated);
                return;
            }
            None => name,
        };
        self.vars
            .insert(name, if known { resolved } else { Val::Unknown });
    }

    /// What arithmetic needs to read: the variables and the known substitutions.
    fn variables(&self) -> Env<'_> {
        Env {
            home: None,
            pwd: None,
            oldpwd: None,
            subs: &self.cmdsubs,
            vars: &self.vars,
        }
    }

    /// Sets a variable to a value computed here (`None`: only known at run time).
    fn set_var(&mut self, name: String, value: Option<String>) {
        let value = match value {
            Some(v) if self.conditional == 0 => Val::Str(v),
            _ => Val::Unknown,
        };
        self.vars.insert(name, value);
    }

    /// `for x in a b c; do …; done`: the body runs once per literal value (up to a bound),
    /// with `x` known each time.
    fn walk_for(&mut self, node: Node<'_>, src: &str, io: &Io) {
        let var = node
            .child_by_field_name("variable")
            .map(|v| text(v, src).to_owned());
        let mut values: Vec<Word> = Vec::new();
        let mut has_values = false;
        let mut body = None;
        for (field, child) in fields(node) {
            match field {
                Some("value") => {
                    has_values = true;
                    self.walk_subs(child, src);
                    values.extend(self.resolve(child, src));
                }
                Some("body") => body = Some(child),
                _ => {}
            }
        }
        let Some(body) = body else { return };
        // `for x; do` walks the positional parameters.
        let literal: Option<Vec<String>> = if has_values {
            values.iter().map(Word::literal).collect()
        } else {
            match self.vars.get("@") {
                Some(Val::List(items)) => Some(items.clone()),
                _ => None,
            }
        };
        let globbed = values.iter().any(Word::has_glob);
        let runs: Vec<Val> = match literal {
            // A glob value stays a glob (`for f in /*` is every entry of `/`).
            Some(v) if !v.is_empty() && v.len() <= 8 => v
                .into_iter()
                .map(|x| if globbed { Val::Glob(x) } else { Val::Str(x) })
                .collect(),
            _ => vec![Val::Unknown],
        };
        self.conditional += 1;
        for value in runs {
            if let Some(name) = &var {
                self.vars.insert(name.clone(), value);
            }
            self.walk(body, src, io);
        }
        self.conditional -= 1;
        if let Some(name) = &var {
            self.vars.insert(name.clone(), Val::Unknown);
        }
    }

    fn walk_declaration(&mut self, node: Node<'_>, src: &str, io: &Io) {
        let keyword = node
            .child(0)
            .map(|k| text(k, src).to_owned())
            .unwrap_or_default();
        let mut words = vec![Word::lit(&keyword)];
        let mut exported = keyword == "export";
        let mut nameref = false;
        let mut names = Vec::new();
        // `declare -i n=0+1`, `declare -l c=RM`: the value as the attribute makes it.
        let mut attribute = None;
        for child in named_children(node) {
            match child.kind() {
                "variable_assignment" => {
                    if let (Some(a), Some(n)) = (attribute, child.child_by_field_name("name")) {
                        self.attributes.insert(text(n, src).to_owned(), a);
                    }
                    self.walk_assignment(child, src);
                    if let Some(n) = child.child_by_field_name("name") {
                        names.push(text(n, src).to_owned());
                        // `declare -n r=HOME`: `$r` is `$HOME`.
                        if nameref && let Some(v) = child.child_by_field_name("value") {
                            let target = text(v, src);
                            let value = match (self.vars.get(target), target, &self.home) {
                                _ if self.conditional > 0 => Val::Unknown,
                                (Some(v), _, _) => v.clone(),
                                (None, "HOME", Some(h)) => Val::Str(h.clone()),
                                _ => Val::Unknown,
                            };
                            self.vars.insert(text(n, src).to_owned(), value);
                        }
                    }
                    words.push(Word::lit(text(child, src)));
                }
                "variable_name" => {
                    let n = text(child, src).to_owned();
                    if keyword == "unset" {
                        // Unset: `${n:-default}` takes the default.
                        let value = if self.conditional > 0 {
                            Val::Unknown
                        } else {
                            Val::Str(String::new())
                        };
                        self.vars.insert(n.clone(), value);
                    }
                    names.push(n.clone());
                    words.push(Word::lit(&n));
                }
                _ => {
                    self.walk_subs(child, src);
                    for w in self.resolve(child, src) {
                        if let Some(t) = w.literal().filter(|t| t.starts_with('-')) {
                            exported |= t.contains('x');
                            nameref |= t.contains('n');
                            attribute = t.chars().rev().find(|c| matches!(c, 'i' | 'l' | 'u'));
                        }
                        words.push(w);
                    }
                }
            }
        }
        let assigns = if exported {
            names.into_iter().map(|n| (n, Word::default())).collect()
        } else {
            Vec::new()
        };
        let origin = if io.captured {
            Origin::Captured
        } else {
            Origin::Direct
        };
        self.emit(words, assigns, Vec::new(), io, origin);
    }
}

/// The programs a pattern in a program's path may pick (`/bin/r?` is `/bin/rm`, `/bin/rb`,
/// …): the names in its directory on this machine and the names the policy knows (the tool
/// table's, the guard's), at most a few dozen.
fn glob_programs(pattern: &str) -> Vec<String> {
    const MAX_MATCHES: usize = 32;
    const MAX_LISTED: usize = 4096;
    let (dir, name) = match pattern.rsplit_once('/') {
        Some((dir, name)) if !dir.contains(['*', '?', '[']) => (Some(dir), name),
        Some(_) => return Vec::new(),
        None => (None, pattern),
    };
    let mut names: Vec<String> = dir
        .and_then(|dir| {
            crate::disk::names_in(
                Path::new(if dir.is_empty() { "/" } else { dir }),
                MAX_LISTED,
            )
        })
        .unwrap_or_default();
    names.extend(
        crate::tools::TOOLS
            .iter()
            .flat_map(|t| t.names.iter().copied())
            .chain(crate::hardline::known_programs())
            .map(str::to_owned),
    );
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter(|n| words::glob_match(name, n))
        .take(MAX_MATCHES)
        .map(|n| match dir {
            Some(dir) => format!("{dir}/{n}"),
            None => n,
        })
        .collect()
}

/// Whether a program name is one the tool table or the hardline guard knows (`mkfs.*`
/// included).
fn guarded_name(name: &str) -> bool {
    crate::tools::lookup(name).is_some()
        || name.starts_with("mkfs")
        || crate::hardline::known_programs().any(|p| p == name)
}

/// Whether `path` is in a directory of the system's programs.
fn in_program_dir(path: &Path) -> bool {
    const PROGRAM_DIRS: &[&str] = &["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"];
    path.parent()
        .is_some_and(|dir| PROGRAM_DIRS.iter().any(|d| dir == Path::new(d)))
}

/// The command with what it does to files worked out.
fn with_effects(mut cmd: Cmd) -> Cmd {
    cmd.effects = crate::effects::of(&cmd);
    cmd
}

pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Children with their field names.
fn fields(node: Node<'_>) -> Vec<(Option<&'static str>, Node<'_>)> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// The operator token of a redirect or assignment (`>`, `>>`, `&>`, `+=` ...).
fn operator(node: Node<'_>, src: &str) -> String {
    let mut op = String::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        // `3<> g` parses as `<` then an error holding `>`.
        if !child.is_named() || child.kind() == "ERROR" {
            op.push_str(text(child, src));
        } else if !op.is_empty() {
            break;
        }
    }
    op
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands the walk finds, each as its words.
    fn commands(script: &str) -> Vec<Vec<String>> {
        let mut w = Walker::new(Path::new("/work/proj"), Some(Path::new("/home/dev")));
        w.walk_script(script, &Io::default());
        w.out
            .cmds
            .iter()
            .map(|c| c.argv().iter().map(Word::text).collect())
            .collect()
    }

    fn last(script: &str) -> Vec<String> {
        commands(script).pop().unwrap_or_default()
    }

    #[test]
    fn unquoted_expansions_are_split_into_fields() {
        assert_eq!(last("x='-rf  /'; rm $x"), ["rm", "-rf", "/"]);
        assert_eq!(last("x='-rf /'; rm \"$x\""), ["rm", "-rf /"]);
        assert_eq!(last("x=''; rm $x f"), ["rm", "f"]);
        assert_eq!(last("IFS=:; x=a:b; cmd $x"), ["cmd", "a", "b"]);
        assert_eq!(last("rm${IFS}-rf${IFS}/"), ["rm", "-rf", "/"]);
    }

    #[test]
    fn arrays_and_positional_parameters_expand() {
        assert_eq!(last("a=(x 'y z'); cmd \"${a[@]}\""), ["cmd", "x", "y z"]);
        assert_eq!(last("a=(x 'y z'); cmd ${a[*]}"), ["cmd", "x", "y", "z"]);
        assert_eq!(last("a=(x y); cmd ${a[1]} $a"), ["cmd", "y", "x"]);
        assert_eq!(
            last("set -- a b c; shift; cmd \"$@\" $1"),
            ["cmd", "b", "c", "b"]
        );
        assert_eq!(
            last("read -ra w <<< 'p q'; cmd \"${w[@]}\""),
            ["cmd", "p", "q"]
        );
        assert_eq!(last("read x y <<< 'p q r'; cmd $y"), ["cmd", "q", "r"]);
        assert_eq!(last("printf -v x '%s-%s' a b; cmd $x"), ["cmd", "a-b"]);
    }

    #[test]
    fn for_loops_walk_each_literal_value() {
        let cmds = commands("for d in /a /b; do rm -rf \"$d\"; done");
        assert!(cmds.contains(&vec!["rm".into(), "-rf".into(), "/a".into()]));
        assert!(cmds.contains(&vec!["rm".into(), "-rf".into(), "/b".into()]));
        // A glob value stays a glob, quoted or not.
        let cmds = commands("for f in /*; do rm -rf \"$f\"; done");
        assert!(cmds.iter().any(|c| c == &["rm", "-rf", "/*"]));
    }

    #[test]
    fn parameter_expansion_operators_apply() {
        assert_eq!(
            last("x=/usr/bin; cmd ${x%/*} ${x#/} ${x/usr/opt} ${x:1:3} ${x^^} ${x##*/}"),
            [
                "cmd", "/usr", "usr/bin", "/opt/bin", "usr", "/USR/BIN", "bin"
            ]
        );
        assert_eq!(last("v=HOME; cmd ${!v}"), ["cmd", "/home/dev"]);
        assert_eq!(last("declare -n r=HOME; cmd $r"), ["cmd", "/home/dev"]);
        assert_eq!(last("unset Z; cmd ${Z:-/x}"), ["cmd", "/x"]);
    }

    #[test]
    fn substitutions_with_known_output_resolve() {
        assert_eq!(last("$(echo rm) -rf /"), ["rm", "-rf", "/"]);
        assert_eq!(last("cmd \"$(printf '\\x72\\x6d')\""), ["cmd", "rm"]);
        assert_eq!(last("cmd $(echo cm0= | base64 -d)"), ["cmd", "rm"]);
        assert_eq!(last("cmd $(dirname /etc/x) /$(true)"), ["cmd", "/etc", "/"]);
        assert_eq!(
            last("cmd ~root ~+ ~dev-nobody"),
            ["cmd", "/root", "/work/proj", "/home/dev-nobody"]
        );
    }

    #[test]
    fn cd_follows_cdpath_and_back() {
        let mut w = Walker::new(Path::new("/work/proj"), None);
        w.walk_script("CDPATH=/ cd usr; cd -; cd /tmp", &Io::default());
        let cwds: Vec<Cwd> = w.out.cmds.iter().map(|c| c.cwd.clone()).collect();
        // Either CDPATH's `/usr` or, when that does not exist, `./usr`.
        assert!(
            cwds[1].options.contains(&PathBuf::from("/usr")),
            "{:?}",
            cwds[1]
        );
        assert_eq!(w.cwd, Cwd::known(PathBuf::from("/tmp")));
        assert_eq!(w.oldcwd, Cwd::known(PathBuf::from("/work/proj")));
    }

    #[test]
    fn functions_run_their_body_with_arguments() {
        let cmds = commands("f() { rm -rf \"$1\"; }; f /x");
        assert!(cmds.iter().any(|c| c == &["rm", "-rf", "/x"]), "{cmds:?}");
    }
}
