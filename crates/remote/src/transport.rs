//! How each engine's own client gives a stdio pipe to a process on the far side, and copies a
//! file there. Nothing here speaks SSH or an engine's API: it builds the client's argv.

use std::path::Path;

use agent_exec_normalize::shell_word;

use crate::target::Target;

/// A program and its arguments, run here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The engine's client (`ssh`, `docker`, …), looked up on `PATH` when it has no `/`.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// An engine: the client commands that reach the far side.
pub trait Transport: Send + Sync {
    /// The client command that runs `remote` (a program and its arguments) over there, its
    /// stdin and stdout connected to the client's.
    fn exec(&self, remote: &[String]) -> Invocation;
    /// The client command that copies the local file `local` to `remote_path` over there.
    fn copy(&self, local: &Path, remote_path: &str) -> Invocation;
    /// Where `--install` puts the binary over there.
    fn install_path(&self) -> String {
        format!("/tmp/agent-exec-{}", env!("CARGO_PKG_VERSION"))
    }
    /// The directory [`install_path`](Self::install_path) is in, made before the copy.
    fn install_dir(&self) -> Option<String> {
        None
    }
}

/// The client program of an engine: `default`, or what the environment variable `var` says
/// (a program and arguments separated by spaces, as `GIT_SSH_COMMAND`), for a client that is
/// elsewhere or needs options everywhere (`AGENT_EXEC_SSH="ssh -F /etc/agent/ssh_config"`).
fn client(var: &str, default: &str) -> Invocation {
    let configured = std::env::var(var).unwrap_or_default();
    let mut words = configured.split_whitespace().map(str::to_owned);
    match words.next() {
        Some(program) => Invocation {
            program,
            args: words.collect(),
        },
        None => Invocation {
            program: default.to_owned(),
            args: Vec::new(),
        },
    }
}

/// OpenSSH's `ssh` and `scp`; keys, `ProxyCommand`, `ControlMaster` and the rest come from
/// the user's ssh config as usual.
#[derive(Debug, Clone)]
pub struct Ssh {
    user: Option<String>,
    host: String,
    port: Option<u16>,
}

impl Ssh {
    fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

impl Transport for Ssh {
    fn exec(&self, remote: &[String]) -> Invocation {
        let mut inv = client("AGENT_EXEC_SSH", "ssh");
        // No terminal (the pipe carries JSON), never a password prompt (nobody can answer), and
        // a peer that stops answering is noticed (45 s) rather than waited on for hours.
        inv.args.extend(
            [
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ServerAliveInterval=15",
                "-o",
                "ServerAliveCountMax=3",
            ]
            .map(str::to_owned),
        );
        if let Some(p) = self.port {
            inv.args.extend(["-p".into(), p.to_string()]);
        }
        inv.args.push("--".into());
        inv.args.push(self.destination());
        // sshd hands the command to the login shell as one line. Debian's bash sources
        // ~/.bashrc for every `bash -c` that sees SSH_CLIENT (150-270 ms a call): the far
        // side's commands must not inherit it.
        let line: Vec<String> = [
            "env",
            "-u",
            "SSH_CLIENT",
            "-u",
            "SSH2_CLIENT",
            "-u",
            "SSH_CONNECTION",
        ]
        .iter()
        .map(|w| (*w).to_owned())
        .chain(remote.iter().map(|w| shell_word(w)))
        .collect();
        inv.args.push(line.join(" "));
        inv
    }

    fn copy(&self, local: &Path, remote_path: &str) -> Invocation {
        let mut inv = client("AGENT_EXEC_SCP", "scp");
        inv.args.extend(["-q".into(), "-B".into()]);
        if let Some(p) = self.port {
            inv.args.extend(["-P".into(), p.to_string()]);
        }
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let destination = match &self.user {
            Some(u) => format!("{u}@{host}:{remote_path}"),
            None => format!("{host}:{remote_path}"),
        };
        inv.args
            .extend(["--".into(), local.display().to_string(), destination]);
        inv
    }

    /// In the login's home (the far side's `/tmp` is shared with its other users, who could
    /// put a binary there first).
    fn install_path(&self) -> String {
        format!(".cache/agent-exec/agent-exec-{}", env!("CARGO_PKG_VERSION"))
    }

    fn install_dir(&self) -> Option<String> {
        Some(".cache/agent-exec".into())
    }
}

/// `docker` or `podman`: the same client commands.
#[derive(Debug, Clone)]
pub struct Container {
    engine: &'static str,
    name: String,
}

impl Transport for Container {
    fn exec(&self, remote: &[String]) -> Invocation {
        let mut inv = client(&engine_var(self.engine), self.engine);
        inv.args
            .extend(["exec".into(), "-i".into(), self.name.clone()]);
        inv.args.extend(remote.iter().cloned());
        inv
    }

    fn copy(&self, local: &Path, remote_path: &str) -> Invocation {
        let mut inv = client(&engine_var(self.engine), self.engine);
        inv.args.extend([
            "cp".into(),
            local.display().to_string(),
            format!("{}:{remote_path}", self.name),
        ]);
        inv
    }
}

fn engine_var(engine: &str) -> String {
    format!("AGENT_EXEC_{}", engine.to_ascii_uppercase())
}

/// `kubectl exec -i` into a pod's container.
#[derive(Debug, Clone)]
pub struct Kubectl {
    namespace: Option<String>,
    pod: String,
    container: Option<String>,
}

impl Transport for Kubectl {
    fn exec(&self, remote: &[String]) -> Invocation {
        let mut inv = client("AGENT_EXEC_KUBECTL", "kubectl");
        inv.args.extend(["exec".into(), "-i".into()]);
        if let Some(ns) = &self.namespace {
            inv.args.extend(["-n".into(), ns.clone()]);
        }
        inv.args.push(self.pod.clone());
        if let Some(c) = &self.container {
            inv.args.extend(["-c".into(), c.clone()]);
        }
        inv.args.push("--".into());
        inv.args.extend(remote.iter().cloned());
        inv
    }

    fn copy(&self, local: &Path, remote_path: &str) -> Invocation {
        let mut inv = client("AGENT_EXEC_KUBECTL", "kubectl");
        inv.args.push("cp".into());
        if let Some(ns) = &self.namespace {
            inv.args.extend(["-n".into(), ns.clone()]);
        }
        if let Some(c) = &self.container {
            inv.args.extend(["-c".into(), c.clone()]);
        }
        inv.args.extend([
            local.display().to_string(),
            format!("{}:{remote_path}", self.pod),
        ]);
        inv
    }
}

impl Target {
    /// The engine that reaches this target.
    pub fn transport(&self) -> Box<dyn Transport> {
        match self {
            Target::Ssh { user, host, port } => Box::new(Ssh {
                user: user.clone(),
                host: host.clone(),
                port: *port,
            }),
            Target::Docker { container } => Box::new(Container {
                engine: "docker",
                name: container.clone(),
            }),
            Target::Podman { container } => Box::new(Container {
                engine: "podman",
                name: container.clone(),
            }),
            Target::Kubectl {
                namespace,
                pod,
                container,
            } => Box::new(Kubectl {
                namespace: namespace.clone(),
                pod: pod.clone(),
                container: container.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(uri: &str, remote: &[&str]) -> Vec<String> {
        let remote: Vec<String> = remote.iter().map(|s| (*s).to_owned()).collect();
        let inv = uri.parse::<Target>().unwrap().transport().exec(&remote);
        std::iter::once(inv.program).chain(inv.args).collect()
    }

    #[test]
    fn each_engine_builds_its_own_clients_argv() {
        let serve = ["agent-exec", "serve", "--end-on-eof"];
        assert_eq!(
            argv("ssh://me@box:2222", &serve),
            [
                "ssh",
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ServerAliveInterval=15",
                "-o",
                "ServerAliveCountMax=3",
                "-p",
                "2222",
                "--",
                "me@box",
                "env -u SSH_CLIENT -u SSH2_CLIENT -u SSH_CONNECTION agent-exec serve --end-on-eof"
            ]
        );
        assert_eq!(
            argv("docker://c1", &serve),
            [
                "docker",
                "exec",
                "-i",
                "c1",
                "agent-exec",
                "serve",
                "--end-on-eof"
            ]
        );
        assert_eq!(
            argv("podman://c1", &serve),
            [
                "podman",
                "exec",
                "-i",
                "c1",
                "agent-exec",
                "serve",
                "--end-on-eof"
            ]
        );
        assert_eq!(
            argv("kubectl://ns/pod/side", &serve),
            [
                "kubectl",
                "exec",
                "-i",
                "-n",
                "ns",
                "pod",
                "-c",
                "side",
                "--",
                "agent-exec",
                "serve",
                "--end-on-eof"
            ]
        );
        assert_eq!(
            argv("kubectl://pod", &serve),
            [
                "kubectl",
                "exec",
                "-i",
                "pod",
                "--",
                "agent-exec",
                "serve",
                "--end-on-eof"
            ]
        );
    }

    #[test]
    fn words_reach_the_far_shell_intact_over_ssh() {
        let line = argv("ssh://box", &["/opt/my tools/agent-exec", "serve", "it's"]);
        assert_eq!(
            line.last().unwrap(),
            "env -u SSH_CLIENT -u SSH2_CLIENT -u SSH_CONNECTION '/opt/my tools/agent-exec' serve 'it'\\''s'"
        );
    }

    #[test]
    fn copies_use_each_engines_copy_command() {
        let copy = |uri: &str| {
            let t = uri.parse::<Target>().unwrap().transport();
            let inv = t.copy(Path::new("/usr/bin/agent-exec"), &t.install_path());
            std::iter::once(inv.program)
                .chain(inv.args)
                .collect::<Vec<_>>()
        };
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            copy("ssh://me@box:2222"),
            [
                "scp".to_owned(),
                "-q".into(),
                "-B".into(),
                "-P".into(),
                "2222".into(),
                "--".into(),
                "/usr/bin/agent-exec".into(),
                format!("me@box:.cache/agent-exec/agent-exec-{v}")
            ]
        );
        assert_eq!(
            copy("docker://c1"),
            [
                "docker".to_owned(),
                "cp".into(),
                "/usr/bin/agent-exec".into(),
                format!("c1:/tmp/agent-exec-{v}")
            ]
        );
        assert_eq!(
            copy("kubectl://ns/pod/side"),
            [
                "kubectl".to_owned(),
                "cp".into(),
                "-n".into(),
                "ns".into(),
                "-c".into(),
                "side".into(),
                "/usr/bin/agent-exec".into(),
                format!("pod:/tmp/agent-exec-{v}")
            ]
        );
    }
}
