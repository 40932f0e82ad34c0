//! The policy's modules form layers: a module uses only the modules below it, so knowledge
//! (the tool table) sits under the mechanism that reads it and nothing imports in a circle.

use std::path::Path;

/// Bottom first. `lib` (the crate root) may use every module.
const LAYERS: &[&str] = &[
    "disk",
    "config",
    "rule",
    "reasons",
    "parse",
    "fallback",
    "words",
    "paths",
    "flags",
    "command",
    "tools",
    "unwrap",
    "effects",
    "hardline",
    "inline",
    "nested",
    "walk",
    "workspace",
    "intercept",
    "rules",
];

/// The modules `source` refers to as `crate::NAME`, outside comments and its test module.
fn uses(source: &str) -> Vec<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or_default();
    let mut found = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            // `crate::{a, b::C}` names several.
            let paths: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .collect(),
                None => vec![rest],
            };
            for path in paths {
                let name: String = path
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    found
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut upward = Vec::new();
    for (level, module) in LAYERS.iter().enumerate() {
        let path = src.join(format!("{module}.rs"));
        let source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for used in uses(&source) {
            match LAYERS.iter().position(|m| *m == used) {
                Some(l) if l < level => {}
                Some(l) if l == level => {}
                Some(_) => upward.push(format!("{module} uses {used}, a layer above it")),
                None => upward.push(format!("{module} uses {used}, which is in no layer")),
            }
        }
    }
    let listed: Vec<String> = std::fs::read_dir(&src)
        .expect("src")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".rs").map(str::to_owned))
        .filter(|n| n != "lib" && !LAYERS.contains(&n.as_str()))
        .collect();
    assert!(listed.is_empty(), "modules in no layer: {listed:?}");
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}

/// Only `disk.rs` looks at the file system during a check (and `config.rs`, which reads the
/// policy's own file when it is loaded): a look anywhere else would let a remembered verdict
/// outlive the file it depended on.
#[test]
fn only_the_disk_module_looks_at_the_file_system() {
    // The file system, and what else a verdict could depend on besides its inputs: the
    // process's environment, the clock, another program.
    const LOOKS: &[&str] = &[
        "std::fs",
        "fs::",
        "File::open",
        "File::create",
        "OpenOptions",
        ".is_dir()",
        ".is_file()",
        ".is_symlink()",
        ".exists()",
        "try_exists(",
        "metadata(",
        "canonicalize(",
        "read_link(",
        "read_dir(",
        "std::env::var",
        "env::var",
        "Instant::now",
        "SystemTime",
        "Command::new",
    ];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if matches!(name, "disk" | "config") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("readable");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(look) = LOOKS.iter().find(|look| line.contains(*look)) {
                found.push(format!("{name}.rs:{}: {look}", n + 1));
            }
        }
    }
    assert!(found.is_empty(), "looks outside disk.rs: {found:?}");
}
