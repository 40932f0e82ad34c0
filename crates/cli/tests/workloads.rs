//! Real agent work under agent-exec's defaults — no sandbox flag at all — in several
//! ecosystems: `cargo build`/`cargo test` with a vendored dependency, `npm ci` from a local
//! cache, `pip install` of local wheels into a venv and with `--user`, `go build` against a
//! module proxy on disk, `make -j`, git (init, commit, branches, worktrees), `python -m pytest`,
//! Python multiprocessing, sqlite. Offline against caches and registries prepared here, as root
//! and as a throwaway unprivileged user. Every case must pass unchanged, and each checks that the
//! default sandbox was on (`details.sandbox`), so a default that silently degraded cannot pass.
//!
//! What each case needs outside the workspace is prepared the way a developer's machine has it:
//! by the same user, through agent-exec with `--sandbox off` (a warm npm cache, downloaded
//! wheels), or linked where both users can run it (the Rust toolchain, which lives under
//! `/root`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

mod common;
use common::*;

/// One piece of work: its files, the command an agent would run, what its output shows.
struct Workload {
    name: &'static str,
    /// Files written into the workspace first (path, content).
    files: Vec<(&'static str, String)>,
    /// Run by the same user with `--sandbox off` before the case (a warm cache).
    setup: Option<String>,
    /// Variables the request sets (`-e`), as an agent's call would.
    env: Vec<(&'static str, String)>,
    command: &'static str,
    /// A line of the output that proves the work was done.
    expected: &'static str,
}

/// The Rust toolchain this suite was built with, hard-linked (else copied) into a directory
/// every user can reach: rustup's lives under `/root`, which others cannot enter.
fn toolchain_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .expect("rustc");
        let sysroot =
            std::fs::canonicalize(String::from_utf8_lossy(&out.stdout).trim()).expect("sysroot");
        let name = sysroot.file_name().unwrap().to_string_lossy().into_owned();
        let shared = std::env::temp_dir().join(format!("agent-exec-test-toolchain-{name}"));
        if !shared.join("bin/cargo").is_file() {
            let partial = std::env::temp_dir().join(format!(
                "agent-exec-test-toolchain-{name}.{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&partial);
            let linked = Command::new("cp")
                .arg("-al")
                .arg(&sysroot)
                .arg(&partial)
                .status()
                .is_ok_and(|s| s.success());
            if !linked {
                let _ = std::fs::remove_dir_all(&partial);
                std::fs::create_dir_all(&partial).unwrap();
                for part in ["bin", "lib"] {
                    let copied = Command::new("cp")
                        .arg("-a")
                        .arg(sysroot.join(part))
                        .arg(&partial)
                        .status()
                        .unwrap();
                    assert!(copied.success(), "copying the toolchain's {part}");
                }
            }
            std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755)).unwrap();
            // Another test process may have won the race: either copy is whole.
            if std::fs::rename(&partial, &shared).is_err() {
                let _ = std::fs::remove_dir_all(&partial);
            }
        }
        shared.join("bin")
    })
}

/// pytest and its dependencies as wheels, downloaded once (PyPI) into the target directory.
fn pytest_wheels() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pytest-wheels");
        let has = |dir: &Path| {
            std::fs::read_dir(dir).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("pytest-"))
            })
        };
        if !has(&dir) {
            let got = Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--only-binary=:all:",
                    "-d",
                ])
                .arg(&dir)
                .arg("pytest==8.3.5")
                .status()
                .expect("python3 -m pip");
            assert!(got.success() && has(&dir), "downloading pytest's wheels");
        }
        dir
    })
}

/// A wheel made by hand (a zip with its metadata and RECORD), with a console script.
const MAKE_WHEEL: &str = r#"
import base64, hashlib, os, zipfile
files = {
    "tinypkg/__init__.py": b"def hello():\n    return 'hello from tinypkg'\n\ndef main():\n    print(hello())\n",
    "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "tinypkg-1.0.dist-info/entry_points.txt": b"[console_scripts]\ntinycli = tinypkg:main\n",
}
def record(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"
os.makedirs("wheels", exist_ok=True)
with zipfile.ZipFile("wheels/tinypkg-1.0-py3-none-any.whl", "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    lines = [record(n, d) for n, d in files.items()] + ["tinypkg-1.0.dist-info/RECORD,,"]
    z.writestr("tinypkg-1.0.dist-info/RECORD", "\n".join(lines) + "\n")
"#;

/// A Go module served from a directory in the GOPROXY layout, zipped here.
const MAKE_GO_PROXY: &str = r#"
import os, zipfile
base = "goproxy/example.com/tiny/@v"
os.makedirs(base, exist_ok=True)
open(f"{base}/list", "w").write("v1.0.0\n")
open(f"{base}/v1.0.0.info", "w").write('{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}')
mod = "module example.com/tiny\n\ngo 1.19\n"
open(f"{base}/v1.0.0.mod", "w").write(mod)
with zipfile.ZipFile(f"{base}/v1.0.0.zip", "w") as z:
    z.writestr("example.com/tiny@v1.0.0/go.mod", mod)
    z.writestr("example.com/tiny@v1.0.0/tiny.go", "package tiny\n\nfunc Add(a, b int) int { return a + b }\n")
"#;

fn workloads(w: &World) -> Vec<Workload> {
    let ws = w.workspace.display().to_string();
    let toolchain_path = format!("{}:/usr/local/bin:/usr/bin:/bin", toolchain_bin().display());
    let mut cases = vec![
        Workload {
            name: "cargo build and test with a vendored dependency",
            files: vec![
                (
                    "crate/Cargo.toml",
                    "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntiny = \"1.0\"\n".into(),
                ),
                (
                    "crate/src/lib.rs",
                    "pub fn twice(x: u32) -> u32 { tiny::add(x, x) }\n#[cfg(test)]\nmod tests { #[test] fn adds() { assert_eq!(super::twice(2), 4); } }\n".into(),
                ),
                (
                    "crate/vendor/tiny/Cargo.toml",
                    "[package]\nname = \"tiny\"\nversion = \"1.0.0\"\nedition = \"2021\"\n".into(),
                ),
                (
                    "crate/vendor/tiny/src/lib.rs",
                    "pub fn add(a: u32, b: u32) -> u32 { a + b }\n".into(),
                ),
                (
                    "crate/vendor/tiny/.cargo-checksum.json",
                    format!("{{\"files\":{{}},\"package\":\"{}\"}}", "0".repeat(64)),
                ),
                (
                    "crate/.cargo/config.toml",
                    "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"vendor\"\n".into(),
                ),
            ],
            setup: None,
            env: vec![("PATH", toolchain_path)],
            command: "cd crate && cargo build --offline -q && cargo test --offline -q 2>&1 | grep -o 'test result: ok. 1 passed'",
            expected: "test result: ok. 1 passed",
        },
        Workload {
            name: "npm ci from a local cache",
            files: vec![
                (
                    "tinydep/package.json",
                    "{\"name\":\"tinydep\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n".into(),
                ),
                ("tinydep/index.js", "module.exports = (a, b) => a + b;\n".into()),
                (
                    "app/package.json",
                    "{\"name\":\"app\",\"version\":\"1.0.0\",\"dependencies\":{\"tinydep\":\"1.0.0\"}}\n".into(),
                ),
            ],
            // The package in the user's npm cache, and a lock file naming it by integrity.
            setup: Some(
                "cd tinydep && npm pack -q --pack-destination .. >/dev/null && cd .. && npm cache add ./tinydep-1.0.0.tgz -q && \
                 sri=$(node -e \"console.log('sha512-' + require('crypto').createHash('sha512').update(require('fs').readFileSync('tinydep-1.0.0.tgz')).digest('base64'))\") && rm -rf tinydep tinydep-1.0.0.tgz && \
                 printf '{\"name\":\"app\",\"version\":\"1.0.0\",\"lockfileVersion\":3,\"requires\":true,\"packages\":{\"\":{\"name\":\"app\",\"version\":\"1.0.0\",\"dependencies\":{\"tinydep\":\"1.0.0\"}},\"node_modules/tinydep\":{\"version\":\"1.0.0\",\"resolved\":\"https://registry.npmjs.org/tinydep/-/tinydep-1.0.0.tgz\",\"integrity\":\"%s\"}}}' \"$sri\" > app/package-lock.json"
                    .into(),
            ),
            env: Vec::new(),
            command: "cd app && npm ci --offline --no-audit --no-fund --loglevel=error && node -e 'console.log(\"sum\", require(\"tinydep\")(2, 3))'",
            expected: "sum 5",
        },
        Workload {
            name: "pip install of a local wheel into a venv",
            files: vec![("make_wheel.py", MAKE_WHEEL.into())],
            setup: None,
            env: Vec::new(),
            command: "python3 make_wheel.py && python3 -m venv venv && venv/bin/pip install -q --no-index --find-links wheels tinypkg && venv/bin/tinycli",
            expected: "hello from tinypkg",
        },
        Workload {
            name: "pip install --user of a local wheel",
            files: vec![("make_wheel.py", MAKE_WHEEL.into())],
            setup: None,
            // Debian marks its Python externally managed; its users pass this for --user.
            env: vec![("PIP_BREAK_SYSTEM_PACKAGES", "1".into())],
            command: "python3 make_wheel.py && python3 -m pip install -q --user --no-index --find-links wheels tinypkg && ~/.local/bin/tinycli && cd / && python3 -c 'import tinypkg; print(tinypkg.hello())'",
            expected: "hello from tinypkg",
        },
        Workload {
            name: "make -j",
            files: vec![
                (
                    "mk/Makefile",
                    "OBJS = a.o b.o c.o d.o\nprog: $(OBJS) main.o\n\tcc -o $@ $^\n%.o: %.c\n\tcc -c -o $@ $<\n".into(),
                ),
                ("mk/a.c", "int a(void){return 1;}\n".into()),
                ("mk/b.c", "int b(void){return 2;}\n".into()),
                ("mk/c.c", "int c(void){return 3;}\n".into()),
                ("mk/d.c", "int d(void){return 4;}\n".into()),
                (
                    "mk/main.c",
                    "#include <stdio.h>\nint a(void);int b(void);int c(void);int d(void);\nint main(void){printf(\"sum %d\\n\", a()+b()+c()+d());return 0;}\n".into(),
                ),
            ],
            setup: None,
            env: Vec::new(),
            command: "cd mk && make -s -j4 && ./prog",
            expected: "sum 10",
        },
        Workload {
            name: "git init, commit, branch, checkout, worktree",
            files: Vec::new(),
            setup: None,
            env: Vec::new(),
            command: "git init -q repo && cd repo && echo a > a && git add a && git commit -qm first && git checkout -qb topic && echo b > b && git add b && git commit -qm second && git checkout -q - && git worktree add -q wt topic && test -f wt/b && git log --oneline topic | wc -l | sed 's/^/commits /'",
            expected: "commits 2",
        },
        Workload {
            name: "python -m pytest",
            files: vec![
                (
                    "pt/test_math.py",
                    "def test_add():\n    assert 1 + 1 == 2\n\ndef test_tmp(tmp_path):\n    (tmp_path / 'f').write_text('x')\n    assert (tmp_path / 'f').read_text() == 'x'\n".into(),
                ),
            ],
            setup: None,
            env: Vec::new(),
            command: "python3 -m venv tv && tv/bin/pip install -q --no-index --find-links pywheels pytest && cd pt && ../tv/bin/python -m pytest -q -p no:cacheprovider 2>&1 | tail -1",
            expected: "2 passed",
        },
        Workload {
            name: "Python multiprocessing (a pool and a manager)",
            files: vec![(
                "mp.py",
                "import multiprocessing as mp\n\ndef square(x):\n    return x * x\n\nif __name__ == '__main__':\n    with mp.Pool(2) as pool:\n        squares = pool.map(square, [1, 2, 3])\n    with mp.Manager() as manager:\n        shared = manager.dict(a=1, b=2)\n        shared['c'] = 3\n        size = len(shared)\n    print('pool', squares, 'manager', size)\n".into(),
            )],
            setup: None,
            env: Vec::new(),
            command: "python3 mp.py",
            expected: "pool [1, 4, 9] manager 3",
        },
        Workload {
            name: "sqlite",
            files: Vec::new(),
            setup: None,
            env: Vec::new(),
            command: "python3 -c \"import sqlite3; c = sqlite3.connect('data.db'); c.execute('create table t(x)'); c.execute('insert into t values (42)'); c.commit()\" && sqlite3 data.db 'select x from t;' | sed 's/^/row /'",
            expected: "row 42",
        },
    ];
    assert!(
        which("go"),
        "go is missing: .ci/run installs it (Debian's golang-go)"
    );
    cases.push(Workload {
            name: "go build with a module cache",
            files: vec![
                ("goapp/go.mod", "module app\n\ngo 1.19\n\nrequire example.com/tiny v1.0.0\n".into()),
                (
                    "goapp/main.go",
                    "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/tiny\"\n)\n\nfunc main() { fmt.Println(\"sum\", tiny.Add(1, 2)) }\n".into(),
                ),
                ("make_proxy.py", MAKE_GO_PROXY.into()),
            ],
            setup: None,
            env: vec![
                ("GOPROXY", format!("file://{ws}/goproxy")),
                ("GOSUMDB", "off".into()),
                ("GOFLAGS", "-mod=mod".into()),
                ("GOTOOLCHAIN", "local".into()),
            ],
            command: "python3 make_proxy.py && cd goapp && go build -o app . && ./app && test -d ~/go/pkg/mod/example.com",
            expected: "sum 3",
        });
    cases
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Writes `content` at `path` under the workspace, owned by the world's user.
fn write_owned(w: &World, path: &str, content: &str) {
    let full = w.workspace.join(path);
    let mut made = Vec::new();
    for dir in full.parent().unwrap().ancestors() {
        if dir == w.workspace || dir.exists() {
            break;
        }
        made.push(dir.to_path_buf());
    }
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(&full, content).unwrap();
    for path in made.iter().chain([&full]) {
        std::os::unix::fs::lchown(path, Some(w.user.uid), Some(w.user.gid)).unwrap();
    }
}

/// Copies the pytest wheels into the workspace (`pywheels`), owned by the world's user.
fn copy_wheels(w: &World) {
    let dest = w.workspace.join("pywheels");
    std::fs::create_dir_all(&dest).unwrap();
    std::os::unix::fs::lchown(&dest, Some(w.user.uid), Some(w.user.gid)).unwrap();
    for entry in std::fs::read_dir(pytest_wheels()).unwrap().flatten() {
        let to = dest.join(entry.file_name());
        std::fs::copy(entry.path(), &to).unwrap();
        std::os::unix::fs::lchown(&to, Some(w.user.uid), Some(w.user.gid)).unwrap();
    }
}

fn run_case(w: &World, case: &Workload) -> Value {
    for (path, content) in &case.files {
        write_owned(w, path, content);
    }
    if let Some(setup) = &case.setup {
        let r = w.run(&["--sandbox", "off", "-t", "300"], setup);
        assert_eq!(
            outcome(&r),
            "success",
            "{:?} setup of {}: {}",
            w.user,
            case.name,
            text(&r)
        );
    }
    let mut args: Vec<String> = vec!["run".into(), "--json".into(), "-t".into(), "600".into()];
    for (k, v) in &case.env {
        args.push("-e".into());
        args.push(format!("{k}={v}"));
    }
    args.push("--".into());
    args.push(case.command.into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(w.command(&args))
}

#[test]
fn real_work_passes_unchanged_under_the_default_sandbox() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for user in users() {
        let w = World::new(&user);
        copy_wheels(&w);
        for case in workloads(&w) {
            ran += 1;
            let r = run_case(&w, &case);
            let passed = outcome(&r) == "success"
                && text(&r).lines().any(|l| l.contains(case.expected))
                && r["details"]["sandbox"]["mode"] == "workspace-write"
                && r["details"]["sandbox"]["network"] == "on";
            if !passed {
                failures.push(format!(
                    "{:?} {}: {}\n{}",
                    user.name,
                    case.name,
                    r["details"],
                    text(&r)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} workloads failed under the default sandbox:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
