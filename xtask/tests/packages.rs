//! The packages as users get them (issue 33). `cargo xtask dist` builds the wheel and the npm
//! tarballs from the workspace, and each is installed as a user installs it — into a fresh venv,
//! a fresh npm project, by `uvx` and `npx` from a local index or registry, as root and as a
//! throwaway unprivileged user — then run: `--version`, an MCP round trip through the installed
//! entry point with the official MCP Python SDK, and each client's own checks (one call, a
//! session, a job, progress, cancel). The commands the MCP clients run are the ones a registry
//! client derives from `server.json`, whose fields are checked against what the official MCP
//! registry takes. Nothing is uploaded; the registries here are local: a directory of wheels for
//! uv, and a static npm registry (packuments and tarballs served by `python3 -m http.server`).

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A bound on each command, so that nothing here can hang; generous, since a first install
/// downloads nothing but unpacks and links a 9 MB binary (and `dist` may build the release).
const LIMIT: Duration = Duration::from_mins(20);

/// Runs `command` to its end (killed at `LIMIT`), and fails the test, with its output, unless
/// it succeeded.
fn run(command: &mut Command) -> Output {
    let shown = format!("{command:?}");
    let out = run_to_end(command);
    assert!(
        out.status.success(),
        "{shown} ended {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `command` to its end, however it ends (killed at `LIMIT`). It leads a process group of
/// its own, which is killed when it ends: what it started (npx → node → agent-exec) can neither
/// outlive the test nor hold the pipes open.
fn run_to_end(command: &mut Command) -> Output {
    let shown = format!("{command:?}");
    let mut child = command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn xtask(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .args(["run", "--quiet", "-p", "xtask", "--"])
        .args(args)
        .current_dir(root());
    command
}

/// What `cargo xtask dist` made, copied with the scripts that check it into a directory of
/// this test process that any user may read.
struct Dist {
    dir: PathBuf,
    wheel: PathBuf,
    npm_main: PathBuf,
    npm_platform: PathBuf,
    /// The pinned build tools' `bin` (uv, check-jsonschema, zizmor).
    tools: PathBuf,
    version: String,
}

impl Dist {
    /// A copied script's path.
    fn script(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// The scripts the checks run, copied beside the packages (the checkout may be unreadable to
/// the throwaway user).
const SCRIPTS: [&str; 3] = [
    "packages/python/tests/check_client.py",
    "packages/npm/agent-exec/test/check-client.mjs",
    "xtask/tests/mcp_roundtrip.py",
];

/// Builds the packages once per test process. Test processes may run side by side (nextest):
/// a file lock keeps each build and its copy whole, and each process reads its own copy, in
/// `/tmp/agent-exec-dist-PID` (those of processes gone are removed).
fn dist() -> &'static Dist {
    static DIST: OnceLock<Dist> = OnceLock::new();
    DIST.get_or_init(|| {
        let built = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dist");
        std::fs::create_dir_all(&built).unwrap();
        let lock = std::fs::File::create(built.with_extension("lock")).unwrap();
        lock.lock().unwrap();
        run(&mut xtask(&["dist", "--out", built.to_str().unwrap()]));
        let tools = PathBuf::from(stdout(&run(&mut xtask(&["tools"]))).trim());
        for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("agent-exec-dist-")
                && !Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = std::env::temp_dir().join(format!("agent-exec-dist-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        for entry in std::fs::read_dir(&built).unwrap().flatten() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        for script in SCRIPTS {
            let name = Path::new(script).file_name().unwrap();
            std::fs::copy(root().join(script), dir.join(name)).unwrap();
        }
        drop(lock);
        let find = |prefix: &str, suffix: &str| {
            let names: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy();
                    name.starts_with(prefix) && name.ends_with(suffix)
                })
                .collect();
            assert_eq!(names.len(), 1, "one {prefix}*{suffix} in {}", dir.display());
            names.into_iter().next().unwrap()
        };
        let version = server_json()["version"].as_str().unwrap().to_owned();
        Dist {
            wheel: find("agent_exec-", ".whl"),
            npm_main: find(&format!("agent-exec-{version}"), ".tgz"),
            npm_platform: find("agent-exec-linux-", ".tgz"),
            dir,
            tools,
            version,
        }
    })
}

/// The MCP Python SDK the round trip was written against (as `crates/cli/tests/mcp_sdk.rs`).
const MCP_SDK_VERSION: &str = "2.3.0";

fn server_json() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("server.json")).unwrap()).unwrap()
}

/// Whether every other user may reach `path` (each directory on the way searchable by all).
fn reachable_by_all(path: &Path) -> bool {
    path.ancestors()
        .all(|dir| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// An interpreter with the official MCP Python SDK, in a venv of the system's Python, which any
/// user may run (the toolchain's own Python may live in root's home): under the target
/// directory when others may reach it, else in the system's temporary directory.
fn python_with_mcp_sdk() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let target_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let base = if reachable_by_all(target_tmp) {
            target_tmp.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let venv = base.join(format!("agent-exec-mcp-{MCP_SDK_VERSION}-venv"));
        let lock = std::fs::File::create(venv.with_extension("lock")).unwrap();
        lock.lock().unwrap();
        let python = venv.join("bin/python");
        let has_sdk = Command::new(&python)
            .args(["-c", "import mcp"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_sdk {
            run(Command::new("/usr/bin/python3")
                .args(["-m", "venv"])
                .arg(&venv));
            run(Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                &format!("mcp=={MCP_SDK_VERSION}"),
            ]));
        }
        python
    })
}

/// One MCP round trip through `command` (`mcp_roundtrip.py`), under `env`, as `user` when given.
fn mcp_round_trip(user: Option<&User>, workdir: &Path, env: &[(&str, String)], command: &[String]) {
    let mut args: Vec<String> = vec![
        python_with_mcp_sdk().display().to_string(),
        dist().script("mcp_roundtrip.py"),
        workdir.display().to_string(),
        dist().version.clone(),
        "--".into(),
    ];
    args.extend(command.iter().cloned());
    let out = run(&mut as_user(user, env, &args, workdir));
    assert!(
        stdout(&out).contains("mcp round trip ok"),
        "{}",
        stdout(&out)
    );
}

/// The MCP client configuration a registry client makes of `server.json`'s package of
/// `registry_type`: its runtime, the package at its version, its arguments.
fn launch_from_server_json(registry_type: &str) -> Vec<String> {
    let server = server_json();
    let package = server["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["registryType"] == registry_type)
        .unwrap_or_else(|| panic!("server.json has no {registry_type} package"))
        .clone();
    let (runtime, identifier, version) = (
        package["runtimeHint"].as_str().unwrap(),
        package["identifier"].as_str().unwrap(),
        package["version"].as_str().unwrap(),
    );
    let mut command = match runtime {
        // What MCP clients write for npm and PyPI servers: `npx -y NAME@V`, `uvx NAME@V`.
        "npx" => vec![
            "npx".to_owned(),
            "-y".to_owned(),
            format!("{identifier}@{version}"),
        ],
        "uvx" => vec!["uvx".to_owned(), format!("{identifier}@{version}")],
        other => panic!("no launch known for runtimeHint {other}"),
    };
    for argument in package["packageArguments"].as_array().into_iter().flatten() {
        assert_eq!(argument["type"], "positional", "{argument}");
        command.push(argument["value"].as_str().unwrap().to_owned());
    }
    command
}

/// A throwaway unprivileged user, and a home of its own.
struct User {
    name: &'static str,
    uid: u32,
    gid: u32,
}

/// The throwaway user when this test runs as root (made once; a `useradd` that lost a race to
/// another test process leaves the user there all the same); `None` when already unprivileged.
fn throwaway_user() -> Option<&'static User> {
    static USER: OnceLock<Option<User>> = OnceLock::new();
    USER.get_or_init(|| {
        if !rustix::process::geteuid().is_root() {
            return None;
        }
        let name = "agent-exec-pkg";
        let id = |flag: &str| {
            Command::new("id")
                .args([flag, name])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        };
        if id("-u").is_none() {
            let _ = run_to_end(Command::new("useradd").args([
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                name,
            ]));
        }
        Some(User {
            name,
            uid: id("-u").expect("useradd made the throwaway user (package passwd)"),
            gid: id("-g").expect("the throwaway user has a group"),
        })
    })
    .as_ref()
}

/// A fresh directory `user` owns (and anyone may enter: the SDK's venv reads the scripts).
fn home_for(user: Option<&User>) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if let Some(user) = user {
        std::os::unix::fs::chown(home.path(), Some(user.uid), Some(user.gid)).unwrap();
    }
    home
}

/// `args` run in `dir` as `user` (else as this process's user) with `env` on top of a plain
/// environment: HOME and the caches in a home of the test's, PATH without any `agent-exec`.
fn as_user(
    user: Option<&User>,
    env: &[(&str, String)],
    args: &[impl AsRef<std::ffi::OsStr>],
    dir: &Path,
) -> Command {
    let mut command = match user {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user.name, "--", "env", "-i"]);
            c
        }
        None => {
            let mut c = Command::new("env");
            c.arg("-i");
            c
        }
    };
    for (key, value) in env {
        command.arg(format!("{key}={value}"));
    }
    command.args(args).current_dir(dir);
    command
}

/// The environment of a user with no agent-exec installed, whose home and caches are `home`.
fn plain_env(home: &Path, tools: &Path) -> Vec<(&'static str, String)> {
    // uv and uvx are the pinned tools' (linked alone: their venv's python3 is not for every
    // user); node, npm, npx and python3 are the machine's.
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["uv", "uvx"] {
        std::os::unix::fs::symlink(tools.join(tool), bin.join(tool)).unwrap();
    }
    vec![
        ("HOME", home.display().to_string()),
        (
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        ),
        ("LANG", "C.UTF-8".into()),
        ("UV_CACHE_DIR", home.join("uv-cache").display().to_string()),
        ("UV_TOOL_DIR", home.join("uv-tools").display().to_string()),
        ("UV_PYTHON_DOWNLOADS", "never".into()),
        (
            "npm_config_cache",
            home.join("npm-cache").display().to_string(),
        ),
        ("npm_config_update_notifier", "false".into()),
        ("npm_config_fund", "false".into()),
        ("npm_config_audit", "false".into()),
        // Artifacts of the servers the checks start stay in the throwaway home.
        (
            "AGENT_EXEC_ARTIFACTS",
            home.join("artifacts").display().to_string(),
        ),
    ]
}

/// The `package.json` an npm tarball carries.
fn manifest_of(tarball: &Path) -> Value {
    let out = run(Command::new("tar")
        .arg("-xzOf")
        .arg(tarball)
        .arg("package/package.json"));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A static npm registry: a packument per package and the tarballs, served over HTTP on
/// loopback by `python3 -m http.server` for as long as it lives.
struct NpmRegistry {
    server: Child,
    url: String,
    _files: tempfile::TempDir,
}

impl Drop for NpmRegistry {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl NpmRegistry {
    fn serving(tarballs: &[&Path]) -> Self {
        let files = tempfile::tempdir().unwrap();
        std::fs::set_permissions(files.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut server = Command::new("python3")
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .current_dir(files.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 serves the registry");
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let mut line = String::new();
        BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        let url = format!("http://127.0.0.1:{port}/");
        std::fs::create_dir_all(files.path().join("-")).unwrap();
        for tarball in tarballs {
            let file_name = tarball.file_name().unwrap().to_str().unwrap();
            std::fs::copy(tarball, files.path().join("-").join(file_name)).unwrap();
            let mut manifest = manifest_of(tarball);
            let name = manifest["name"].as_str().unwrap().to_owned();
            let version = manifest["version"].as_str().unwrap().to_owned();
            manifest["dist"] = json!({ "tarball": format!("{url}-/{file_name}") });
            let packument = json!({
                "name": name,
                "dist-tags": { "latest": version },
                "versions": { version: manifest },
            });
            // npm asks for `/@scope%2fname`; the server unquotes it to `@scope/name`.
            let path = files.path().join(&name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, packument.to_string()).unwrap();
        }
        NpmRegistry {
            server,
            url,
            _files: files,
        }
    }
}

fn wheel_in_a_fresh_venv(user: Option<&User>) {
    let dist = dist();
    let home = home_for(user);
    let env = plain_env(home.path(), &dist.tools);
    let venv = home.path().join("venv");
    let sh = |args: &[&str]| run(&mut as_user(user, &env, args, home.path()));
    sh(&["python3", "-m", "venv", venv.to_str().unwrap()]);
    let pip = venv.join("bin/pip");
    sh(&[
        pip.to_str().unwrap(),
        "install",
        "--quiet",
        "--no-index",
        dist.wheel.to_str().unwrap(),
    ]);
    let binary = venv.join("bin/agent-exec");
    let version = stdout(&sh(&[binary.to_str().unwrap(), "--version"]));
    assert!(
        version.starts_with(&format!("agent-exec {}\n", dist.version)),
        "{version}"
    );
    // `python -m agent_exec` is the binary too; the client finds it with no help.
    let python = venv.join("bin/python");
    let module = stdout(&sh(&[
        python.to_str().unwrap(),
        "-m",
        "agent_exec",
        "--version",
    ]));
    assert_eq!(module, version);
    let checked = sh(&[python.to_str().unwrap(), &dist.script("check_client.py")]);
    assert!(
        stdout(&checked).contains("all checks passed"),
        "{}",
        stdout(&checked)
    );
    mcp_round_trip(
        user,
        home.path(),
        &env,
        &[binary.display().to_string(), "mcp".into()],
    );
}

#[test]
fn pip_install_of_the_wheel_gives_the_binary_and_a_working_client() {
    wheel_in_a_fresh_venv(None);
}

#[test]
fn an_unprivileged_user_installs_the_wheel_and_uses_it() {
    if let Some(user) = throwaway_user() {
        wheel_in_a_fresh_venv(Some(user));
    } else {
        // Already unprivileged: the plain test is this user's.
        wheel_in_a_fresh_venv(None);
    }
}

#[test]
fn uvx_serves_mcp_from_the_wheel_file_and_by_name() {
    let dist = dist();
    let home = home_for(None);
    let mut env = plain_env(home.path(), &dist.tools);
    // `uvx --from ./dist/….whl agent-exec mcp`, as the README shows for a local build.
    mcp_round_trip(
        None,
        home.path(),
        &env,
        &[
            "uvx".into(),
            "--from".into(),
            dist.wheel.display().to_string(),
            "agent-exec".into(),
            "mcp".into(),
        ],
    );
    // By name, as server.json tells a registry client to start it; the index is the
    // directory of wheels, and nothing else is reachable.
    env.push(("UV_FIND_LINKS", dist.dir.display().to_string()));
    env.push(("UV_OFFLINE", "1".into()));
    mcp_round_trip(None, home.path(), &env, &launch_from_server_json("pypi"));
}

fn npx_by_name_and_from_the_tarball(user: Option<&User>) {
    let dist = dist();
    let registry = NpmRegistry::serving(&[&dist.npm_main, &dist.npm_platform]);
    let home = home_for(user);
    let mut env = plain_env(home.path(), &dist.tools);
    env.push(("npm_config_registry", registry.url.clone()));
    mcp_round_trip(user, home.path(), &env, &launch_from_server_json("npm"));
    // `npx ./agent-exec-….tgz mcp` where the tarball is, with no registry reachable: the
    // tarball installs alone (it bundles its platform package). (npx takes a file for a
    // package only as a relative `./` path; an absolute one it runs as a command.)
    let registry = env
        .iter_mut()
        .find(|(k, _)| *k == "npm_config_registry")
        .unwrap();
    registry.1 = "http://127.0.0.1:9/".into();
    let file_name = dist.npm_main.file_name().unwrap().to_string_lossy();
    mcp_round_trip(
        user,
        &dist.dir,
        &env,
        &[
            "npx".into(),
            "-y".into(),
            format!("./{file_name}"),
            "mcp".into(),
        ],
    );
}

#[test]
fn npx_serves_mcp_by_name_and_from_the_tarball() {
    npx_by_name_and_from_the_tarball(None);
}

#[test]
fn an_unprivileged_user_runs_the_npm_package() {
    npx_by_name_and_from_the_tarball(throwaway_user());
}

#[test]
fn the_typescript_client_works_from_an_installed_package() {
    let dist = dist();
    let registry = NpmRegistry::serving(&[&dist.npm_main, &dist.npm_platform]);
    let home = home_for(None);
    let mut env = plain_env(home.path(), &dist.tools);
    env.push(("npm_config_registry", registry.url.clone()));
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "probe", "private": true, "type": "module"}"#,
    )
    .unwrap();
    let sh = |args: &[&str]| run(&mut as_user(None, &env, args, &project));
    sh(&[
        "npm",
        "install",
        "--silent",
        &format!("agent-exec@{}", dist.version),
    ]);
    let version = stdout(&sh(&["./node_modules/.bin/agent-exec", "--version"]));
    assert!(
        version.starts_with(&format!("agent-exec {}\n", dist.version)),
        "{version}"
    );
    // The platform package, as a registry install of another platform's launcher would fetch
    // it: by name, its binary the same.
    let platform = manifest_of(&dist.npm_platform);
    let name = platform["name"].as_str().unwrap();
    sh(&[
        "npm",
        "install",
        "--silent",
        &format!("{name}@{}", dist.version),
    ]);
    let binary = format!("./node_modules/{name}/bin/agent-exec");
    assert_eq!(stdout(&sh(&[&binary, "--version"])), version);
    // The check imports `agent-exec` by name, so it runs from inside the project.
    std::fs::copy(
        dist.script("check-client.mjs"),
        project.join("check-client.mjs"),
    )
    .unwrap();
    let checked = sh(&["node", "check-client.mjs"]);
    assert!(
        stdout(&checked).contains("all client checks passed"),
        "{}",
        stdout(&checked)
    );
}

/// What the official MCP registry takes of a `server.json`, written down from where it is said:
/// - the JSON Schema the file names (`$schema`, 2025-12-11): `name` 3–200 characters matching
///   `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`; `description` 1–100; `version` at most 255 and not a
///   range; `repository` with `url` and `source`; a package has `registryType`, `identifier`,
///   `version` (not `latest`) and `transport`, and no other keys than the schema's; a positional
///   argument has a `value` or a `valueHint`, a named one a `name`;
/// - the registry's own rules (modelcontextprotocol/registry,
///   docs/reference/server-json/official-registry-requirements.md): npm packages from
///   `https://registry.npmjs.org` only, PyPI from `https://pypi.org` only; a GitHub namespace
///   (`io.github.OWNER/…`) is the repository's owner;
/// - package ownership (the registry's publishing guide, "Package types"): the npm package's
///   `mcpName` is the server's name; the PyPI package's README says `mcp-name: NAME`.
///
/// The registry's schema is not in any package these registries carry, so these are checked
/// here; the commands MCP clients derive from the file are run by the tests above.
#[test]
fn server_json_is_what_the_mcp_registry_takes() {
    let server = server_json();
    let text = |v: &Value, key: &str| -> String {
        v[key]
            .as_str()
            .unwrap_or_else(|| panic!("server.json: `{key}` is missing in {v}"))
            .to_owned()
    };
    assert_eq!(
        text(&server, "$schema"),
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "the checks below are the 2025-12-11 schema's: check them again for another"
    );
    let known = [
        "$schema",
        "name",
        "title",
        "description",
        "repository",
        "version",
        "websiteUrl",
        "icons",
        "packages",
        "remotes",
        "_meta",
    ];
    for key in server.as_object().unwrap().keys() {
        assert!(
            known.contains(&key.as_str()),
            "server.json: unknown key `{key}`"
        );
    }
    let name = text(&server, "name");
    let (namespace, short) = name.split_once('/').expect("a name has one slash");
    let allowed = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c) || extra.contains(c))
    };
    assert!(
        (3..=200).contains(&name.len()) && allowed(namespace, "") && allowed(short, "_"),
        "server.json: name {name:?} is not reverse-DNS/name"
    );
    let description = text(&server, "description");
    assert!(
        (1..=100).contains(&description.chars().count()),
        "server.json: the description has {} characters; the registry takes 1 to 100",
        description.chars().count()
    );
    let not_a_range = |version: &str, place: &str| {
        assert!(
            !version.is_empty()
                && version.len() <= 255
                && version != "latest"
                && !version.contains(['^', '~', '>', '<', '=', '*', ' '])
                && !version.split('.').any(|part| part == "x"),
            "{place}: {version:?} is not one version"
        );
    };
    let version = text(&server, "version");
    not_a_range(&version, "server.json: version");
    let cargo_toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(
        cargo_toml.contains(&format!("\nversion = \"{version}\"\n")),
        "server.json's version {version} is not the workspace's"
    );
    let repository = &server["repository"];
    let url = text(repository, "url");
    assert_eq!(text(repository, "source"), "github");
    assert!(
        cargo_toml.contains(&format!("repository = \"{url}\"")),
        "server.json's repository {url} is not Cargo.toml's"
    );
    let owner = url
        .strip_prefix("https://github.com/")
        .and_then(|rest| rest.split('/').next())
        .expect("a GitHub repository");
    assert_eq!(
        namespace,
        format!("io.github.{owner}"),
        "a GitHub namespace is the repository's owner"
    );

    let package_keys = [
        "registryType",
        "registryBaseUrl",
        "identifier",
        "version",
        "fileSha256",
        "runtimeHint",
        "transport",
        "runtimeArguments",
        "packageArguments",
        "environmentVariables",
    ];
    let packages = server["packages"].as_array().expect("packages");
    let mut types: Vec<String> = Vec::new();
    for package in packages {
        for key in package.as_object().unwrap().keys() {
            assert!(
                package_keys.contains(&key.as_str()),
                "server.json: a package has the unknown key `{key}`"
            );
        }
        let registry_type = text(package, "registryType");
        let identifier = text(package, "identifier");
        not_a_range(
            &text(package, "version"),
            "server.json: a package's version",
        );
        assert_eq!(text(package, "version"), version);
        assert_eq!(package["transport"]["type"], "stdio");
        for argument in package["packageArguments"]
            .as_array()
            .into_iter()
            .chain(package["runtimeArguments"].as_array())
            .flatten()
        {
            match argument["type"].as_str() {
                Some("positional") => assert!(
                    argument["value"].is_string() || argument["valueHint"].is_string(),
                    "a positional argument needs a value or a valueHint: {argument}"
                ),
                Some("named") => assert!(argument["name"].is_string(), "{argument}"),
                other => panic!("an argument's type is positional or named, not {other:?}"),
            }
        }
        match registry_type.as_str() {
            "npm" => {
                assert_eq!(
                    text(package, "registryBaseUrl"),
                    "https://registry.npmjs.org"
                );
                let manifest: Value = serde_json::from_str(
                    &std::fs::read_to_string(root().join("packages/npm/agent-exec/package.json"))
                        .unwrap(),
                )
                .unwrap();
                assert_eq!(text(&manifest, "name"), identifier);
                assert_eq!(text(&manifest, "mcpName"), name, "npm ownership: mcpName");
            }
            "pypi" => {
                assert_eq!(text(package, "registryBaseUrl"), "https://pypi.org");
                let pyproject: toml::Table =
                    std::fs::read_to_string(root().join("packages/python/pyproject.toml"))
                        .unwrap()
                        .parse()
                        .unwrap();
                let project = &pyproject["project"];
                assert_eq!(project["name"].as_str(), Some(identifier.as_str()));
                let readme = project["readme"].as_str().expect("a readme");
                let readme =
                    std::fs::read_to_string(root().join("packages/python").join(readme)).unwrap();
                assert!(
                    readme.contains(&format!("mcp-name: {name}")),
                    "PyPI ownership: the README says `mcp-name: {name}`"
                );
            }
            other => panic!("server.json: no check written for registryType {other}"),
        }
        types.push(registry_type);
    }
    types.sort();
    assert_eq!(types, ["npm", "pypi"], "one package on npm, one on PyPI");
}

/// The workflows (CI and the release) are what GitHub takes — its workflow schema, which
/// check-jsonschema carries — and zizmor finds nothing in them: actions pinned to commits, no
/// persisted credentials, least permissions, no cache in a release.
#[test]
fn the_workflows_are_valid_and_lint_clean() {
    let tools = PathBuf::from(stdout(&run(&mut xtask(&["tools"]))).trim());
    let workflows: Vec<String> = std::fs::read_dir(root().join(".github/workflows"))
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    assert!(workflows.iter().any(|w| w.ends_with("release.yml")));
    run(Command::new(tools.join("check-jsonschema"))
        .args(["--builtin-schema", "vendor.github-workflows"])
        .args(&workflows));
    let linted = run(Command::new(tools.join("zizmor"))
        .args(["--offline", "--format", "plain", "--no-progress"])
        .arg(root().join(".github/workflows")));
    assert!(
        stdout(&linted).contains("No findings"),
        "{}",
        stdout(&linted)
    );
}

/// The README's two commands are the ones that work: the first builds and runs a real
/// command (run here as written), the second is `.ci/run`, which installs what the suite needs
/// and runs it (CI runs it on a clean checkout).
#[test]
fn the_readme_commands_work() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("\n## Two commands\n")
        .nth(1)
        .expect("the README has its two commands")
        .split("\n## ")
        .next()
        .unwrap();
    let blocks: Vec<&str> = section
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().trim())
        .collect();
    assert_eq!(blocks.len(), 2, "two commands: {blocks:?}");
    assert_eq!(blocks[1], ".ci/run");
    let ci = std::fs::metadata(root().join(".ci/run")).unwrap();
    assert!(
        ci.permissions().mode() & 0o111 != 0,
        ".ci/run is executable"
    );
    // The first, as a user types it (the release build it needs is the one `dist` made).
    dist();
    let out = run_to_end(
        Command::new("sh")
            .args(["-c", blocks[0]])
            .current_dir(root())
            .env_remove("CARGO_TARGET_DIR"),
    );
    // The exit status mirrors the command's: `ls` of a missing path fails with 2.
    let text = stdout(&out);
    assert!(
        out.status.code() == Some(2)
            && text.contains("99999\n100000")
            && text.contains("No such file or directory"),
        "{}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
