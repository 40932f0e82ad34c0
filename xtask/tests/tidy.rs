//! The layering of the workspace, checked: each crate depends only on the crates below it
//! (ARCHITECTURE.md), and only `executor` starts processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cargo metadata`'s packages of the workspace.
fn workspace_packages() -> Vec<serde_json::Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    match meta["packages"].take() {
        serde_json::Value::Array(packages) => packages,
        other => panic!("cargo metadata without packages: {other}"),
    }
}

/// Each workspace crate's normal (not dev, not build) dependencies on other workspace crates.
fn internal_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let packages = workspace_packages();
    let ours: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .filter(|d| ours.contains(d))
                .collect();
            (p["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// What crates.io shows and needs of a published crate: every crate that is not
/// `publish = false` carries all of it, so `cargo publish` of any of them is complete.
#[test]
fn every_published_crate_says_what_it_is() {
    let published: Vec<_> = workspace_packages()
        .into_iter()
        .filter(|p| p["publish"] != serde_json::json!([]))
        .collect();
    assert!(published.len() >= 8, "the workspace's crates are published");
    for p in &published {
        let name = p["name"].as_str().unwrap();
        for field in [
            "description",
            "license",
            "repository",
            "homepage",
            "documentation",
            "readme",
            "rust_version",
        ] {
            assert!(
                p[field].as_str().is_some_and(|v| !v.is_empty()),
                "{name} has no `{field}` in its Cargo.toml"
            );
        }
        for (field, most) in [("keywords", 5), ("categories", 5)] {
            let n = p[field].as_array().map_or(0, Vec::len);
            assert!(
                (1..=most).contains(&n),
                "{name} has {n} {field}; crates.io takes 1 to {most}"
            );
        }
        assert!(
            name.starts_with("agent-exec-"),
            "{name}: the crates.io name `agent-exec` belongs to another project, so every \
             crate of ours is named agent-exec-*"
        );
    }
}

#[test]
fn crates_depend_only_on_the_layers_below() {
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("agent-exec-normalize", &[][..]),
        // The wire types and the contract's words, which every layer speaks; the shell quoting
        // of `Request::from_words`.
        ("agent-exec-protocol", &["agent-exec-normalize"][..]),
        // The compact view tells a command's program by normalize's quote-aware split.
        (
            "agent-exec-sink",
            &["agent-exec-normalize", "agent-exec-protocol"][..],
        ),
        ("agent-exec-policy", &["agent-exec-protocol"][..]),
        (
            "agent-exec-executor",
            &["agent-exec-protocol", "agent-exec-sink"][..],
        ),
        // Remote targets: the client of `serve` over an engine's client, which the executor
        // starts (a `Channel`); the shell quoting of normalize for ssh's command line.
        (
            "agent-exec-remote",
            &[
                "agent-exec-executor",
                "agent-exec-normalize",
                "agent-exec-sink",
            ][..],
        ),
        (
            "agent-exec-core",
            &[
                "agent-exec-executor",
                "agent-exec-normalize",
                "agent-exec-policy",
                "agent-exec-protocol",
                "agent-exec-remote",
                "agent-exec-sink",
            ][..],
        ),
        // The binary: the tool, plus the executor's process-wide setup (watchdog, subreaper)
        // and the sink's artifact reader.
        (
            "agent-exec-cli",
            &["agent-exec-core", "agent-exec-executor", "agent-exec-sink"][..],
        ),
    ]);
    let actual = internal_dependencies();
    for (krate, deps) in &actual {
        let Some(ok) = allowed.get(krate.as_str()) else {
            // Benches and tasks may use anything.
            assert!(
                matches!(krate.as_str(), "xtask" | "agent-exec-benches"),
                "{krate} is new: say in this test which crates it may depend on"
            );
            continue;
        };
        for dep in deps {
            assert!(
                ok.contains(&dep.as_str()),
                "{krate} must not depend on {dep}"
            );
        }
    }
    for krate in allowed.keys() {
        assert!(
            actual.contains_key(*krate),
            "{krate} is gone: update this test"
        );
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_executor_starts_processes() {
    let crates = workspace_root().join("crates");
    let mut offenders = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap() {
        let krate = krate.unwrap().path();
        if !krate.join("src").is_dir() || krate.file_name().is_some_and(|n| n == "executor") {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        for file in files {
            // clap's `Command` builds a command line parser, not a process.
            let text = std::fs::read_to_string(&file)
                .unwrap()
                .replace("clap::Command::new", "");
            for needle in [
                "Command::new",
                "process::Command",
                "libc::fork",
                "libc::execv",
            ] {
                if text.contains(needle) {
                    offenders.push(format!("{} uses {needle}", file.display()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "processes start only in executor: {offenders:#?}"
    );
}

/// A crate's files as modules (`["containment", "cgroup"]`), each with the modules its
/// non-test code names: `crate::…`, `super::…`, `self::…`, a child module's name, and an item
/// the crate root re-exports (`crate::ExecSpec` is the module that defines it).
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module_of = |file: &Path| -> Option<Vec<String>> {
        let rel = file.strip_prefix(src).ok()?.with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") {
            return None;
        }
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        Some(parts)
    };
    let parsed: BTreeMap<Vec<String>, syn::File> = files
        .iter()
        .filter_map(|f| {
            let module = module_of(f)?;
            let text = std::fs::read_to_string(f).unwrap();
            let file = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", f.display()));
            Some((module, file))
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = parsed.keys().cloned().collect();
    // What the root re-exports: `pub use oneshot::{ExecSpec, …}` makes `crate::ExecSpec`
    // oneshot's.
    let mut reexported: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(root) = parsed.get(&Vec::new()) {
        for item in &root.items {
            if let syn::Item::Use(u) = item {
                let mut paths = Vec::new();
                flatten_use(&u.tree, &mut Vec::new(), &mut paths);
                for path in paths {
                    if let Some((name, module)) = path.split_last()
                        && modules.contains(module)
                    {
                        reexported.insert(name.clone(), module.to_vec());
                    }
                }
            }
        }
    }
    let mut graph = BTreeMap::new();
    for (module, file) in &parsed {
        let mut paths = PathCollector::default();
        for item in &file.items {
            if !is_test_only(item) {
                syn::visit::Visit::visit_item(&mut paths, item);
            }
        }
        let mut edges = BTreeSet::new();
        for path in paths.paths {
            let (base, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str) {
                Some("crate") => (Vec::new(), &path[1..]),
                Some("super") => {
                    let mut base = module.clone();
                    let mut rest = &path[..];
                    while rest.first().is_some_and(|s| s == "super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                    (base, rest)
                }
                Some("self") => (module.clone(), &path[1..]),
                Some(first)
                    if modules.contains(&[module.as_slice(), &[first.to_owned()]].concat()) =>
                {
                    (module.clone(), &path[..])
                }
                _ => continue,
            };
            let mut target = base;
            for segment in rest {
                let next = [target.as_slice(), std::slice::from_ref(segment)].concat();
                if modules.contains(&next) {
                    target = next;
                } else {
                    if target.is_empty()
                        && let Some(owner) = reexported.get(segment)
                    {
                        target.clone_from(owner);
                    }
                    break;
                }
            }
            if !target.is_empty() && &target != module {
                edges.insert(target);
            }
        }
        graph.insert(module.clone(), edges);
    }
    graph
}

fn flatten_use(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push([prefix.as_slice(), &[n.ident.to_string()]].concat()),
        syn::UseTree::Rename(r) => out.push([prefix.as_slice(), &[r.ident.to_string()]].concat()),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                flatten_use(tree, prefix, out);
            }
        }
    }
}

fn is_test_only(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Mod(m) => &m.attrs,
        syn::Item::Fn(f) => &f.attrs,
        syn::Item::Use(u) => &u.attrs,
        syn::Item::Impl(i) => &i.attrs,
        _ => return false,
    };
    is_cfg_test(attrs)
}

/// `#[cfg(test)]` among `attrs`: test code, which may use anything.
fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Every path in the code: `use` trees flattened, and the paths of expressions, types and
/// patterns.
#[derive(Default)]
struct PathCollector {
    paths: Vec<Vec<String>>,
}

impl<'ast> syn::visit::Visit<'ast> for PathCollector {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        flatten_use(&u.tree, &mut Vec::new(), &mut self.paths);
    }

    /// `pub(super)` says who may use an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.paths
            .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g Vec<String>, usize>,
        low: BTreeMap<&'g Vec<String>, usize>,
        stack: Vec<&'g Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g Vec<String>) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(&w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

/// core and executor are layered inside too: no two files need each other, directly or
/// round about (ARCHITECTURE.md's code map lists them bottom-up).
#[test]
fn no_file_cycle_inside_core_or_executor() {
    for krate in ["core", "executor"] {
        let graph = module_graph(&workspace_root().join("crates").join(krate).join("src"));
        let found = cycles(&graph);
        // Each cycle with the edges that make it, to say what to move.
        let explained: Vec<String> = found
            .iter()
            .map(|members| {
                let mut text = members.join(", ");
                for (from, to) in &graph {
                    for to in to {
                        if members.contains(&from.join("::")) && members.contains(&to.join("::")) {
                            text.push_str(&format!("\n  {} -> {}", from.join("::"), to.join("::")));
                        }
                    }
                }
                text
            })
            .collect();
        assert!(
            found.is_empty(),
            "crates/{krate}: files that need each other (move what both need below them):\n{}",
            explained.join("\n")
        );
    }
}

/// The operator's flags (`--max-sessions`), read from the command line's definitions: each
/// field with `#[arg(long)]` (its name) or `#[arg(long = "…")]`.
fn operator_flags() -> BTreeSet<String> {
    #[derive(Default)]
    struct Flags(BTreeSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for Flags {
        fn visit_field(&mut self, field: &'ast syn::Field) {
            let metas = field
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("arg"))
                .flat_map(|a| {
                    a.parse_args_with(
                        syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                    )
                    .unwrap()
                });
            for meta in metas {
                let long = match &meta {
                    syn::Meta::Path(p) if p.is_ident("long") => field
                        .ident
                        .as_ref()
                        .map(|name| name.to_string().replace('_', "-")),
                    syn::Meta::NameValue(nv) if nv.path.is_ident("long") => match &nv.value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                };
                self.0.extend(long);
            }
        }
    }
    let mut files = Vec::new();
    rust_files(&workspace_root().join("crates/cli/src"), &mut files);
    let mut flags = Flags::default();
    for file in files {
        let parsed = syn::parse_file(&std::fs::read_to_string(&file).unwrap()).unwrap();
        syn::visit::Visit::visit_file(&mut flags, &parsed);
    }
    flags.0
}

/// Every string literal of a file's non-test code, those inside macros (`format!`) included.
#[derive(Default)]
struct Strings {
    found: Vec<String>,
}

impl Strings {
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Literal(l) => {
                    if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                        self.found.push(s.value());
                    }
                }
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                _ => {}
            }
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for Strings {
    fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
        self.found.push(s.value());
    }

    /// Doc comments are for the code's readers; other attributes (`#[error("…")]`) say what
    /// the program says.
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if !attr.path().is_ident("doc")
            && let syn::Meta::List(list) = &attr.meta
        {
            self.tokens(list.tokens.clone());
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
}

/// Text for the model and the operator is written in core's `render.rs`: the executor, and
/// core's other files, name none of the operator's flags (what to do about a problem is
/// said where every text is, in the operator's words; the executor's types say what happened).
#[test]
fn only_render_names_the_operators_flags() {
    let flags = operator_flags();
    assert!(
        flags.contains("sandbox") && flags.contains("max-sessions") && flags.contains("env"),
        "the flags were not found: {flags:?}"
    );
    let mut files = Vec::new();
    rust_files(&workspace_root().join("crates/executor/src"), &mut files);
    rust_files(&workspace_root().join("crates/core/src"), &mut files);
    // Files that may, and why.
    let exempt = [
        // The text every model reads.
        "core/src/render.rs",
        // The allow-list proxy's HTTP answer to the sandboxed program: it runs apart from core,
        // and what it says reaches the model only as that program's output.
        "executor/src/sandbox/proxy.rs",
    ];
    let mut offenders = Vec::new();
    for file in files {
        if exempt.iter().any(|e| file.ends_with(e)) {
            continue;
        }
        let parsed = syn::parse_file(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut strings = Strings::default();
        for item in &parsed.items {
            if !is_test_only(item) {
                syn::visit::Visit::visit_item(&mut strings, item);
            }
        }
        // A literal that is a flag and nothing else is a word of a command line (the far side's
        // `serve --settings`), not text.
        for s in strings
            .found
            .iter()
            .filter(|s| !s.starts_with("--") || s.contains(' '))
        {
            for (at, _) in s.match_indices("--") {
                let name: String = s[at + 2..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if flags.contains(&name) {
                    offenders.push(format!("{}: --{name} in {s:?}", file.display()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "text naming the operator's flags belongs in core/src/render.rs:\n{}",
        offenders.join("\n")
    );
}
