//! Real engines for the remote-target tests, each started by the test as root and torn down
//! after it: `sshd` on 127.0.0.1 with throwaway keys, `dockerd` with its own data root and
//! socket, rootful `podman` with its own storage, and a `kubectl` stand-in (no cluster can run
//! here) that records its argv and runs the command after `--` on this machine. `.ci/run`
//! installs openssh-server, docker.io and podman from Debian's packages.

#![allow(dead_code)] // each test binary uses some of the engines

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Every wait is bounded by this, so a broken engine fails a test instead of hanging it.
pub(crate) const WAIT: Duration = Duration::from_mins(2);

/// This build's agent-exec (each includer of this module says where it is: the tests through
/// cargo, the benches through their own lookup).
pub(crate) fn agent_exec() -> PathBuf {
    crate::agent_exec_under_test()
}

/// Runs a setup command; panics with its output when it fails.
pub(crate) fn sh(program: &str, args: &[&str], env: &[(String, String)]) -> String {
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("{program} could not start: {e} (is it installed? .ci/run installs it)")
        });
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `ready` holds, at most [`WAIT`].
pub(crate) fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < WAIT,
            "{what} did not happen within {WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A root filesystem tarball with bash, coreutils and this agent-exec (made once per test
/// binary): `with_binary` false leaves agent-exec out (but not its libraries), for `--install`.
pub(crate) fn rootfs_tar(with_binary: bool) -> PathBuf {
    static WITH: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    static WITHOUT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let cell = if with_binary { &WITH } else { &WITHOUT };
    cell.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("rootfs");
        let script = dir.path().join("make-rootfs.sh");
        std::fs::write(&script, include_str!("make-rootfs.sh")).unwrap();
        let binary = agent_exec();
        let mut args = vec![root.to_str().unwrap(), binary.to_str().unwrap()];
        if !with_binary {
            args.push("libs-only");
        }
        let mut with_script = vec![script.to_str().unwrap()];
        with_script.extend(args);
        sh("bash", &with_script, &[]);
        let tar = dir.path().join("rootfs.tar");
        sh(
            "tar",
            &[
                "-C",
                root.to_str().unwrap(),
                "-cf",
                tar.to_str().unwrap(),
                ".",
            ],
            &[],
        );
        (dir, tar)
    })
    .1
    .clone()
}

/// A target the tests can reach, and how to look at its processes.
pub(crate) trait Engine {
    /// The target URI.
    fn target(&self) -> String;
    /// The environment agent-exec needs to reach it (the engine's socket, a client command).
    fn env(&self) -> Vec<(String, String)>;
    /// The command lines of the processes running over there (zombies left out).
    fn processes(&self) -> Vec<String>;
    /// Whether the far side runs on this machine (ssh to 127.0.0.1, the kubectl stand-in).
    fn runs_here(&self) -> bool {
        false
    }
    /// How many zombies there are over there, where the target is a machine of its own (a
    /// container: one whose PID 1 never reaps keeps every orphan that exits as a zombie).
    fn zombies(&self) -> Option<usize> {
        None
    }
}

/// Counts zombies with pure bash.
const COUNT_ZOMBIES: &str = r#"n=0; for p in /proc/[0-9]*; do read -r _ _ s _ < "$p/stat" 2>/dev/null || continue; [ "$s" = Z ] && n=$((n + 1)); done; echo $n"#;

/// Lists live processes with pure bash (the images have no `ps`).
const LIST_PROCESSES: &str = r#"for p in /proc/[0-9]*; do read -r _ _ s _ < "$p/stat" 2>/dev/null || continue; [ "$s" = Z ] && continue; mapfile -d '' a < "$p/cmdline" 2>/dev/null; [ ${#a[@]} -gt 0 ] && echo "${p#/proc/} ${a[*]}"; done; true"#;

/// This machine's processes: each pid with the fields of its `/proc/PID/stat` after the
/// command name (state, ppid, …).
pub(crate) fn proc_stats() -> Vec<(i32, Vec<String>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let fields = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        out.push((pid, fields));
    }
    out
}

/// The processes of this machine (ssh and the kubectl stand-in run here), zombies left out.
fn local_processes() -> Vec<String> {
    proc_stats()
        .into_iter()
        .filter(|(_, fields)| fields.first().map(String::as_str) != Some("Z"))
        .filter_map(|(pid, _)| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let line = line.trim_end();
            (!line.is_empty()).then(|| format!("{pid} {line}"))
        })
        .collect()
}

/// `sshd -D` on 127.0.0.1 with keys made for the test; the client is configured through
/// `AGENT_EXEC_SSH` / `AGENT_EXEC_SCP` (`ssh -F CONFIG`), so the user's own ssh config is not
/// touched.
pub(crate) struct Sshd {
    dir: tempfile::TempDir,
    child: Child,
    port: u16,
}

impl Sshd {
    pub(crate) fn start() -> Sshd {
        std::fs::create_dir_all("/run/sshd").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let p = |name: &str| d.join(name).to_str().unwrap().to_owned();
        sh(
            "ssh-keygen",
            &["-q", "-t", "ed25519", "-N", "", "-f", &p("host_key")],
            &[],
        );
        sh(
            "ssh-keygen",
            &["-q", "-t", "ed25519", "-N", "", "-f", &p("client_key")],
            &[],
        );
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        let port = free_port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nSetEnv PATH={}:/usr/local/bin:/usr/bin:/bin\n",
                p("host_key"),
                p("sshd.pid"),
                p("authorized_keys"),
                // This build's agent-exec on the far side's PATH, as an installed one is.
                agent_exec().parent().unwrap().display(),
            ),
        )
        .unwrap();
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host *\n  IdentityFile {}\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  IdentitiesOnly yes\n",
                p("client_key")
            ),
        )
        .unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f", &p("sshd_config")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .expect("sshd could not start (is openssh-server installed? .ci/run installs it)");
        wait_until("sshd listening", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Sshd { dir, child, port }
    }
}

impl Engine for Sshd {
    fn target(&self) -> String {
        format!("ssh://root@127.0.0.1:{}", self.port)
    }

    fn env(&self) -> Vec<(String, String)> {
        let config = self.dir.path().join("ssh_config");
        vec![
            (
                "AGENT_EXEC_SSH".into(),
                format!("ssh -F {}", config.display()),
            ),
            (
                "AGENT_EXEC_SCP".into(),
                format!("scp -F {}", config.display()),
            ),
        ]
    }

    fn processes(&self) -> Vec<String> {
        local_processes()
    }

    fn runs_here(&self) -> bool {
        true
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A container engine (`docker` with a `dockerd` of the test's own, or rootful `podman` with
/// storage of its own) and one running container made from the test rootfs.
pub(crate) struct Containers {
    engine: &'static str,
    dir: tempfile::TempDir,
    daemon: Option<Child>,
    /// The client command (`podman --root … --runroot …`): program and arguments.
    client: Vec<String>,
    env: Vec<(String, String)>,
    pub(crate) started: Vec<String>,
}

impl Containers {
    pub(crate) fn docker() -> Containers {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap().to_owned();
        let socket = format!("unix://{d}/docker.sock");
        let daemon = Command::new("dockerd")
            .args([
                "--data-root",
                &format!("{d}/data"),
                "--exec-root",
                &format!("{d}/exec"),
                "--pidfile",
                &format!("{d}/docker.pid"),
                "-H",
                &socket,
                "--iptables=false",
                "--ip6tables=false",
                "--bridge=none",
                "--ip-masq=false",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("dockerd.log")).unwrap())
            .spawn()
            .expect("dockerd could not start (is docker.io installed? .ci/run installs it)");
        let env = vec![("DOCKER_HOST".to_owned(), socket)];
        let mut c = Containers {
            engine: "docker",
            dir,
            daemon: Some(daemon),
            client: vec!["docker".into()],
            env,
            started: Vec::new(),
        };
        wait_until("dockerd answering", || {
            Command::new("docker")
                .arg("version")
                .envs(c.env.iter().map(|(k, v)| (k, v)))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        c.import();
        c
    }

    pub(crate) fn podman() -> Containers {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap().to_owned();
        let client: Vec<String> = [
            "podman",
            "--root",
            &format!("{d}/root"),
            "--runroot",
            &format!("{d}/run"),
            "--storage-driver",
            "vfs",
            "--cgroup-manager",
            "cgroupfs",
            "--events-backend",
            "file",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let env = vec![("AGENT_EXEC_PODMAN".to_owned(), client.join(" "))];
        let mut c = Containers {
            engine: "podman",
            dir,
            daemon: None,
            client,
            env,
            started: Vec::new(),
        };
        c.import();
        c
    }

    /// The engine's client, with its options, running `args`.
    pub(crate) fn run(&self, args: &[&str]) -> String {
        let mut all: Vec<&str> = self.client[1..].iter().map(String::as_str).collect();
        all.extend_from_slice(args);
        sh(&self.client[0], &all, &self.env)
    }

    fn import(&mut self) {
        for (image, with) in [
            ("agent-exec-test:with", true),
            ("agent-exec-test:bare", false),
        ] {
            let tar = rootfs_tar(with);
            self.run(&["import", tar.to_str().unwrap(), image]);
        }
    }

    /// Starts a container of the image with agent-exec on its PATH (`bare`: without it).
    pub(crate) fn start(&mut self, name: &str, bare: bool) -> String {
        let image = if bare {
            "agent-exec-test:bare"
        } else {
            "agent-exec-test:with"
        };
        // Root cannot raise hard limits here: rootful podman needs them given.
        let mut args = vec!["run", "-d", "--network", "none", "--name", name];
        if self.engine == "podman" {
            args.extend([
                "--ulimit",
                "nofile=20000:20000",
                "--ulimit",
                "nproc=32768:32768",
            ]);
        } else {
            args.push("--init");
        }
        args.extend([image, "sleep", "infinity"]);
        self.run(&args);
        self.started.push(name.to_owned());
        format!("{}://{name}", self.engine)
    }

    /// The processes in container `name`.
    pub(crate) fn processes_in(&self, name: &str) -> Vec<String> {
        self.run(&["exec", name, "bash", "-c", LIST_PROCESSES])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    pub(crate) fn env(&self) -> Vec<(String, String)> {
        self.env.clone()
    }
}

impl Drop for Containers {
    fn drop(&mut self) {
        for name in &self.started {
            let mut args: Vec<String> = self.client[1..].to_vec();
            args.extend(["rm".into(), "-f".into()]);
            if self.engine == "podman" {
                args.extend(["-t".into(), "0".into()]);
            }
            args.push(name.clone());
            let _ = Command::new(&self.client[0])
                .args(&args)
                .envs(self.env.iter().map(|(k, v)| (k, v)))
                .output();
        }
        if let Some(mut daemon) = self.daemon.take() {
            // SIGTERM: dockerd stops its containerd and cleans up its mounts.
            // SAFETY: signalling our own child.
            unsafe { libc::kill(daemon.id() as i32, libc::SIGTERM) };
            let start = Instant::now();
            while daemon.try_wait().ok().flatten().is_none() && start.elapsed() < WAIT {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        // Storage made by root holds mounts and read-only layers; a failure here only leaves
        // a temporary directory behind.
        let _ = Command::new("umount")
            .args(["-R", "-l"])
            .arg(self.dir.path())
            .output();
    }
}

/// One container of an engine, as a target.
pub(crate) struct Container<'a> {
    pub(crate) engines: &'a Containers,
    pub(crate) name: String,
    pub(crate) uri: String,
}

impl Engine for Container<'_> {
    fn target(&self) -> String {
        self.uri.clone()
    }

    fn env(&self) -> Vec<(String, String)> {
        self.engines.env()
    }

    fn processes(&self) -> Vec<String> {
        self.engines.processes_in(&self.name)
    }

    fn zombies(&self) -> Option<usize> {
        let said = self
            .engines
            .run(&["exec", &self.name, "bash", "-c", COUNT_ZOMBIES]);
        Some(said.trim().parse().expect("a count of zombies"))
    }
}

/// A `kubectl` stand-in on PATH: it appends its argv to a log and runs what follows `--` on
/// this machine (with this build's agent-exec on PATH), as `kubectl exec -i` runs it in a pod.
pub(crate) struct KubectlStandIn {
    dir: tempfile::TempDir,
    pub(crate) uri: String,
}

impl KubectlStandIn {
    pub(crate) fn new(uri: &str) -> KubectlStandIn {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("kubectl");
        // Written here, installed as the program by `install`: a file this process held open
        // for writing could be inherited by a child another test thread forks at that moment,
        // and executing it then fails with "Text file busy" (ETXTBSY).
        let source = dir.path().join("kubectl.sh");
        std::fs::write(
            &source,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\nwhile [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n",
                dir.path().join("argv.log").display()
            ),
        )
        .unwrap();
        sh(
            "install",
            &[
                "-m",
                "755",
                source.to_str().unwrap(),
                script.to_str().unwrap(),
            ],
            &[],
        );
        KubectlStandIn {
            dir,
            uri: uri.to_owned(),
        }
    }

    /// Every argv the stand-in was run with, one per line.
    pub(crate) fn argv_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("argv.log")).unwrap_or_default()
    }
}

impl Engine for KubectlStandIn {
    fn target(&self) -> String {
        self.uri.clone()
    }

    fn env(&self) -> Vec<(String, String)> {
        let bin_dir = agent_exec().parent().unwrap().to_owned();
        let path = format!(
            "{}:{}:{}",
            self.dir.path().display(),
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        vec![("PATH".into(), path)]
    }

    fn processes(&self) -> Vec<String> {
        local_processes()
    }

    fn runs_here(&self) -> bool {
        true
    }
}
