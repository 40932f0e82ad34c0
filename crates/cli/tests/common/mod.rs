//! What the suites share: the binary and processes ([`process`]: `alive`, bounded waits, a
//! child reaped on drop), the one client of `serve` and `mcp` ([`server`]), and for the
//! sandbox suites the users every case runs as (root and a throwaway unprivileged user), the
//! binary where both can run it, a world (workspace, a directory outside it, a home with a
//! credential) owned by the case's user, and bounded runs.

#![allow(dead_code)] // each suite uses its own part

pub(crate) mod process;
pub(crate) mod server;

pub(crate) use process::*;
pub(crate) use server::Server;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

pub(crate) const SECRET: &str = "s3cr3t-key-material";

/// Who runs agent-exec: root (the tests' own user) or the throwaway user.
#[derive(Debug, Clone)]
pub(crate) struct User {
    pub(crate) name: Option<String>,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

pub(crate) fn is_root() -> bool {
    // SAFETY: plain getter.
    unsafe { libc::geteuid() == 0 }
}

/// The users every case runs as: ourselves, and when we are root, an unprivileged user
/// created for the tests (idempotently).
pub(crate) fn users() -> Vec<User> {
    // SAFETY: plain getters.
    let me = User {
        name: None,
        uid: unsafe { libc::geteuid() },
        gid: unsafe { libc::getegid() },
    };
    if !is_root() {
        return vec![me];
    }
    static OTHER: OnceLock<User> = OnceLock::new();
    let other = OTHER.get_or_init(|| {
        let name = "agent-exec-sbx";
        let exists = Command::new("id")
            .arg("-u")
            .arg(name)
            .output()
            .is_ok_and(|o| o.status.success());
        if !exists {
            let made = Command::new("useradd")
                .args(["--no-create-home", "--home-dir", "/nonexistent", name])
                .status()
                .expect("useradd (package passwd)");
            assert!(made.success(), "useradd {name} failed");
        }
        let id = |flag: &str| -> u32 {
            let out = Command::new("id").args([flag, name]).output().expect("id");
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .expect("an id")
        };
        User {
            name: Some(name.to_owned()),
            uid: id("-u"),
            gid: id("-g"),
        }
    });
    vec![me, other.clone()]
}

/// The binary, linked (else copied) where any user may run it: the build directory may not be.
///
/// One place per build, named by the built file's identity, so that every test process of a
/// run shares it and no run leaves a copy behind (a copy per process filled the disk: 328 of
/// them, 96 MB each). A hard link costs no space; a copy is made aside and renamed in whole.
pub(crate) fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        use std::os::unix::fs::MetadataExt;
        let built = std::fs::metadata(exe()).expect("the built binary");
        let dir = std::env::temp_dir().join(format!(
            "agent-exec-sbx-bin-{:x}-{:x}-{:x}",
            built.dev(),
            built.ino(),
            built.mtime()
        ));
        let bin = dir.join("agent-exec");
        sweep_old_builds(&dir);
        if !bin.is_file() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            let partial = dir.join(format!("agent-exec.{}", std::process::id()));
            let _ = std::fs::remove_file(&partial);
            if std::fs::hard_link(exe(), &partial).is_err() {
                std::fs::copy(exe(), &partial).unwrap();
            }
            std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755)).unwrap();
            // Another test process may have won the race: either file is whole.
            if std::fs::rename(&partial, &bin).is_err() {
                let _ = std::fs::remove_file(&partial);
            }
        }
        bin
    })
}

/// Removes the links of earlier builds: each keeps its build's file alive. A day's grace
/// leaves alone a suite of another checkout that may still be running.
fn sweep_old_builds(current: &Path) {
    const GRACE: std::time::Duration = std::time::Duration::from_hours(24);
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry
            .file_name()
            .to_string_lossy()
            .starts_with("agent-exec-sbx-bin-");
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > GRACE));
        if ours && old && path != current {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// A world for one case: a workspace, a directory outside it with a file, and a home with a
/// credential under `~/.ssh` — all owned by `user`, so only the sandbox stands in the way.
pub(crate) struct World {
    pub(crate) _root: tempfile::TempDir,
    pub(crate) user: User,
    pub(crate) workspace: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) secret: PathBuf,
}

impl World {
    pub(crate) fn new(user: &User) -> World {
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let workspace = root.path().join("ws");
        let outside = root.path().join("outside");
        let home = root.path().join("home");
        for dir in [&workspace, &outside, &home.join(".ssh")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(outside.join("file"), "original\n").unwrap();
        let secret = home.join(".ssh/id_test");
        std::fs::write(&secret, SECRET).unwrap();
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = T\n\temail = t@example.com\n",
        )
        .unwrap();
        for entry in walk(root.path()) {
            std::os::unix::fs::lchown(&entry, Some(user.uid), Some(user.gid)).unwrap();
        }
        World {
            workspace,
            outside,
            home,
            secret,
            user: user.clone(),
            _root: root,
        }
    }

    /// `agent-exec ARGS` in the workspace, as the world's user, with `$HOME` the world's home
    /// (so the default deny-read paths are under it) and the artifacts under it.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        self.command_of(binary(), args)
    }

    /// [`World::command`] with agent-exec at `program`.
    pub(crate) fn command_of(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = match &self.user.name {
            Some(name) => {
                // runuser sets HOME to the user's own: `env` puts ours back.
                let mut c = Command::new("runuser");
                c.args(["-u", name, "--", "env"])
                    .arg(format!("HOME={}", self.home.display()))
                    .arg(program);
                c
            }
            None => Command::new(program),
        };
        cmd.args(args)
            .current_dir(&self.workspace)
            .env("HOME", &self.home)
            .env("AGENT_EXEC_ARTIFACTS", self.home.join("artifacts"))
            .stdin(Stdio::null());
        cmd
    }

    /// `agent-exec run --json FLAGS -- COMMAND` (see [`World::command`]).
    pub(crate) fn run(&self, flags: &[&str], command: &str) -> Value {
        run_json(self.run_command(flags, command))
    }

    pub(crate) fn run_command(&self, flags: &[&str], command: &str) -> Command {
        let mut args = vec!["run", "--json"];
        args.extend_from_slice(flags);
        args.extend(["--", command]);
        self.command(&args)
    }

    pub(crate) fn outside_file(&self) -> String {
        std::fs::read_to_string(self.outside.join("file")).unwrap()
    }
}

/// Runs a prepared `agent-exec run --json` to its end: its result.
pub(crate) fn run_json(cmd: Command) -> Value {
    let out = bounded(cmd);
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("not a JSON result ({e}): {}", String::from_utf8_lossy(&out)))
}

/// Runs `cmd` to its end (bounded: a hang fails the test instead of stalling it).
pub(crate) fn bounded(mut cmd: Command) -> Vec<u8> {
    let child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn agent-exec");
    output_within(child, "agent-exec", RUN).stdout
}

pub(crate) fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

pub(crate) fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

pub(crate) fn outcome(result: &Value) -> &str {
    result["details"]["outcome"].as_str().unwrap()
}

pub(crate) fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// Sends each of `requests` to a prepared `agent-exec serve` (or `mcp`) command and waits for
/// its answer before the next; the answers by id. Then closes its input and reaps it.
pub(crate) fn serve_with(
    cmd: Command,
    requests: &[Value],
) -> std::collections::HashMap<i64, Value> {
    let mut server = Server::spawn(cmd);
    let mut answers = std::collections::HashMap::new();
    for request in requests {
        server.send(request);
        let answer = server.recv();
        answers.insert(answer["id"].as_i64().unwrap(), answer);
    }
    let _ = server.finish();
    answers
}

pub(crate) fn request(id: i64, method: &str, params: &Value) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `payload` as a server runs it: a one-shot (1), in a session (2), as a job (3) whose output
/// is answer 4.
pub(crate) fn in_every_server_mode(payload: &str) -> [Value; 4] {
    [
        request(1, "exec", &serde_json::json!({"command": payload})),
        request(
            2,
            "exec",
            &serde_json::json!({"command": payload, "session": "s"}),
        ),
        request(
            3,
            "exec",
            &serde_json::json!({"command": payload, "run_in_background": true}),
        ),
        request(
            4,
            "job_output",
            &serde_json::json!({"job_id": "1", "wait_ms": 10000}),
        ),
    ]
}
