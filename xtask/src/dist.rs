//! `cargo xtask dist [--out DIR]`: the packages users install by name, built from the
//! workspace — the PyPI wheel (`agent-exec`: the binary and the `agent_exec` client) and the npm
//! packages (`agent-exec`: the launcher and the TypeScript client; `@agent-exec/<platform>`: the
//! binary, one per platform, as esbuild and biome ship theirs). Nothing is uploaded; the release
//! workflow (`.github/workflows/release.yml`) publishes what this makes.
//!
//! The version is the workspace's; every file that repeats it (the npm manifests, `server.json`)
//! is checked against it, so a release cannot ship two versions. The build and check tools
//! (maturin, uv, check-jsonschema, zizmor) are pinned with their hashes in
//! `packages/tools-requirements.txt` and installed into `target/tmp/dist-tools` when missing.
//! Concurrent runs (test processes side by side) take turns: each holds a lock file while it
//! installs the tools or builds.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Runs a command in `dir`, echoing it; an error names the command and how it ended.
fn run(dir: &Path, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Result<(), String> {
    run_with_path(
        dir,
        &std::env::var_os("PATH").unwrap_or_default(),
        program,
        args,
    )
}

/// `run` with `path` for `PATH` (maturin finds zig as the tools venv's `python -m ziglang`).
fn run_with_path(
    dir: &Path,
    path: &std::ffi::OsStr,
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
) -> Result<(), String> {
    let program = program.as_ref();
    eprintln!("$ {} {}", program.to_string_lossy(), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .status()
        .map_err(|e| format!("cannot start {}: {e}", program.to_string_lossy()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{} {}` in {} failed ({status})",
            program.to_string_lossy(),
            args.join(" "),
            dir.display()
        ))
    }
}

/// An exclusive lock on `path` (made if missing), held until the file is dropped.
fn lock(path: &Path) -> Result<fs::File, String> {
    let file =
        fs::File::create(path).map_err(|e| format!("cannot make {}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(file)
}

/// The directory cargo builds into (`CARGO_TARGET_DIR`, a config's `build.target-dir`, or
/// `target/`), as `cargo metadata` says.
pub(crate) fn target_directory(root: &Path) -> Result<PathBuf, String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    let meta: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata did not answer JSON: {e}"))?;
    meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata names no target_directory".to_owned())
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// The workspace's version: the CLI's, which every crate shares (`version.workspace = true`).
fn workspace_version(root: &Path) -> Result<String, String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let package = manifest
        .split("[workspace.package]")
        .nth(1)
        .ok_or("Cargo.toml has no [workspace.package]")?;
    package
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .map(str::to_owned)
        .ok_or_else(|| "[workspace.package] has no version".to_owned())
}

/// Every place outside Cargo.toml that names the version, with what it says.
fn versions_elsewhere(root: &Path) -> Result<Vec<(String, String)>, String> {
    let mut found = Vec::new();
    let npm = root.join("packages/npm/agent-exec/package.json");
    let manifest = read_json(&npm)?;
    found.push((
        "packages/npm/agent-exec/package.json: version".to_owned(),
        manifest["version"].as_str().unwrap_or_default().to_owned(),
    ));
    if let Some(optional) = manifest["optionalDependencies"].as_object() {
        for (name, version) in optional {
            found.push((
                format!("packages/npm/agent-exec/package.json: optionalDependencies.{name}"),
                version.as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    // The lock names the platform packages too (npm cannot lock a package it cannot fetch, so
    // their entries are written by hand: packages/npm/README.md).
    let lock = read_json(&root.join("packages/npm/agent-exec/package-lock.json"))?;
    for (path, entry) in lock["packages"].as_object().into_iter().flatten() {
        if path.is_empty() || path.starts_with("node_modules/@agent-exec/") {
            found.push((
                format!("packages/npm/agent-exec/package-lock.json: packages[{path:?}].version"),
                entry["version"].as_str().unwrap_or_default().to_owned(),
            ));
        }
        for (name, version) in entry["optionalDependencies"]
            .as_object()
            .into_iter()
            .flatten()
        {
            found.push((
                format!(
                    "packages/npm/agent-exec/package-lock.json: packages[{path:?}].optionalDependencies.{name}"
                ),
                version.as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    let server = read_json(&root.join("server.json"))?;
    found.push((
        "server.json: version".to_owned(),
        server["version"].as_str().unwrap_or_default().to_owned(),
    ));
    for package in server["packages"].as_array().into_iter().flatten() {
        found.push((
            format!(
                "server.json: packages[{}].version",
                package["registryType"].as_str().unwrap_or("?")
            ),
            package["version"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    Ok(found)
}

/// Fails, naming each file to change, when a file says another version than the workspace.
fn check_versions(root: &Path) -> Result<String, String> {
    let version = workspace_version(root)?;
    let wrong: Vec<String> = versions_elsewhere(root)?
        .into_iter()
        .filter(|(_, v)| *v != version)
        .map(|(place, v)| format!("  {place} is \"{v}\""))
        .collect();
    if wrong.is_empty() {
        Ok(version)
    } else {
        Err(format!(
            "the workspace's version is {version} (Cargo.toml), but:\n{}\nset them to {version}",
            wrong.join("\n")
        ))
    }
}

/// The pinned build tools, in a venv of their own under `target`; installed when missing or
/// when the pins changed. Returns the venv's `bin`.
pub(crate) fn tools(root: &Path, target: &Path) -> Result<PathBuf, String> {
    let pins_file = root.join("packages/tools-requirements.txt");
    let pins = fs::read_to_string(&pins_file)
        .map_err(|e| format!("cannot read {}: {e}", pins_file.display()))?;
    let tmp = target.join("tmp");
    fs::create_dir_all(&tmp).map_err(|e| format!("cannot make {}: {e}", tmp.display()))?;
    let _turn = lock(&tmp.join("dist-tools.lock"))?;
    let venv = tmp.join("dist-tools");
    let stamp = venv.join("installed-requirements.txt");
    if fs::read_to_string(&stamp).is_ok_and(|installed| installed == pins) {
        return Ok(venv.join("bin"));
    }
    let _ = fs::remove_dir_all(&venv);
    run(
        root,
        "python3",
        &["-m", "venv", venv.to_str().ok_or("non-UTF-8 path")?],
    )?;
    run(
        root,
        venv.join("bin/python"),
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--require-hashes",
            "-r",
            pins_file.to_str().ok_or("non-UTF-8 path")?,
        ],
    )?;
    fs::write(&stamp, pins).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(venv.join("bin"))
}

/// The Rust target this machine builds for (`rustc -vV`'s `host:`).
fn host_target() -> Result<String, String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV names no host".to_owned())
}

/// The licenses, which npm packs from the package's own directory only.
fn copy_licenses(root: &Path, into: &Path) -> Result<(), String> {
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        fs::copy(root.join(license), into.join(license))
            .map_err(|e| format!("cannot copy {license}: {e}"))?;
    }
    Ok(())
}

/// Fills the platform package's template (`packages/npm/platform`) for one platform of
/// `platforms.json` in `stage`, with the binary in `bin/`, and packs it into `out`.
fn pack_platform(
    root: &Path,
    stage: &Path,
    platform: &Value,
    version: &str,
    binary: &Path,
    out: &Path,
) -> Result<(), String> {
    let template = root.join("packages/npm/platform");
    let _ = fs::remove_dir_all(stage);
    fs::create_dir_all(stage.join("bin")).map_err(|e| e.to_string())?;
    let field = |name: &str| {
        platform[name]
            .as_str()
            .ok_or_else(|| format!("platforms.json: {} has no \"{name}\"", stage.display()))
    };
    let (name, os, cpu, libc) = (
        field("package")?,
        field("os")?,
        field("cpu")?,
        field("libc")?,
    );
    for entry in fs::read_dir(&template).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let file = entry.file_name().to_string_lossy().into_owned();
        let text = fs::read_to_string(entry.path()).map_err(|e| e.to_string())?;
        let filled = text
            .replace("@@NAME@@", name)
            .replace("@@VERSION@@", version)
            .replace("@@OS@@", os)
            .replace("@@CPU@@", cpu)
            .replace("@@LIBC@@", libc);
        let target = file.strip_suffix(".in").unwrap_or(&file);
        fs::write(stage.join(target), filled).map_err(|e| e.to_string())?;
    }
    copy_licenses(root, stage)?;
    let staged = stage.join("bin/agent-exec");
    fs::copy(binary, &staged).map_err(|e| format!("cannot copy {}: {e}", binary.display()))?;
    run(
        stage,
        "npm",
        &[
            "pack",
            "--pack-destination",
            out.to_str().ok_or("non-UTF-8 path")?,
        ],
    )
}

/// Whether a file in the output directory is one of the packages `dist` makes.
fn is_package(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name.starts_with("agent_exec-") || name.starts_with("agent-exec-")
}

/// Builds everything into `out`, and lists what it made.
pub(crate) fn dist(out: &Path) -> Result<(), String> {
    let root = workspace_root();
    let version = check_versions(&root)?;
    let target = target_directory(&root)?;
    let tools = tools(&root, &target)?;
    let _turn = lock(&target.join("dist.lock"))?;
    fs::create_dir_all(out).map_err(|e| format!("cannot make {}: {e}", out.display()))?;
    let out = out
        .canonicalize()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    // What an earlier run left would be found beside this run's packages.
    for entry in fs::read_dir(&out).map_err(|e| e.to_string())?.flatten() {
        if is_package(&entry.path()) {
            let _ = fs::remove_file(entry.path());
        }
    }
    let out_arg = out.to_str().ok_or("non-UTF-8 path")?;

    // The wheel: maturin builds the CLI (`--release`, the profile users get; symbols stripped)
    // and puts the binary and the Python client together (it reads `pyproject.toml` where it
    // runs). Zig links it against glibc 2.17 (manylinux2014), so that the one binary runs on
    // every glibc distribution still in use, not only on ones as new as the build machine. The
    // target is named so that this build has a directory of its own, apart from the host
    // build's `target/release`. The npm packages carry the same binary.
    let host = host_target()?;
    let tools_path = std::env::join_paths(std::iter::once(tools.clone()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .map_err(|e| e.to_string())?;
    run_with_path(
        &root.join("packages/python"),
        &tools_path,
        tools.join("maturin"),
        &[
            "build",
            "--release",
            "--quiet",
            "--zig",
            "--compatibility",
            "manylinux2014",
            "--target",
            &host,
            "--out",
            out_arg,
        ],
    )?;
    let binary = target.join(&host).join("release/agent-exec");

    // The npm packages: this host's platform package, then the launcher and client.
    let platforms = read_json(&root.join("packages/npm/agent-exec/platforms.json"))?;
    let platforms = platforms
        .as_object()
        .ok_or("platforms.json is not an object")?;
    let (key, platform) = platforms
        .iter()
        .find(|(_, p)| p["rustTarget"].as_str() == Some(host.as_str()))
        .ok_or_else(|| {
            format!("packages/npm/agent-exec/platforms.json has no platform for {host}: add one")
        })?;
    let staged = target.join("dist/npm").join(key);
    pack_platform(&root, &staged, platform, &version, &binary, &out)?;
    let main = root.join("packages/npm/agent-exec");
    copy_licenses(&root, &main)?;
    // Scripts off, and no optional dependency: the platform packages are this build's own (the
    // bundle below), never whatever a registry serves under their names.
    run(
        &main,
        "npm",
        &[
            "ci",
            "--ignore-scripts",
            "--omit=optional",
            "--no-audit",
            "--no-fund",
            "--silent",
        ],
    )?;
    run(&main, "npm", &["run", "build", "--silent"])?;
    // The platform package is also bundled into the launcher's tarball (`bundleDependencies`),
    // so that the tarball installs alone — from a file, offline, before or without the
    // registry's copy; the optional dependency is what a registry install resolves once more
    // platforms than one are built and the bundle goes.
    let name = platform["package"].as_str().unwrap_or_default();
    let bundled = main.join("node_modules").join(name);
    let _ = fs::remove_dir_all(&bundled);
    fs::create_dir_all(bundled.parent().ok_or("no parent")?).map_err(|e| e.to_string())?;
    run(
        &root,
        "cp",
        &[
            "-r",
            staged.to_str().ok_or("non-UTF-8 path")?,
            bundled.to_str().ok_or("non-UTF-8 path")?,
        ],
    )?;
    run(&main, "npm", &["pack", "--pack-destination", out_arg])?;

    let mut made: Vec<PathBuf> = fs::read_dir(&out)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_package(p))
        .collect();
    made.sort();
    let mut listing = String::new();
    for path in &made {
        let _ = writeln!(listing, "  {}", path.display());
    }
    eprintln!("made:\n{listing}");
    Ok(())
}
