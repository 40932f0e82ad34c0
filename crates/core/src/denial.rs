//! Telling the model why a sandboxed command failed: its output, read for the marks a denied
//! write, read or connection leaves (the messages of the C library, coreutils, Python, curl,
//! pip, git and the proxy), names the rule it met — so the model can ask for a writable root
//! or a host instead of retrying blindly.

use std::path::{Path, PathBuf};

use agent_exec_executor::{NetworkMode, SandboxSpec};

/// The rule a sandboxed command met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denial {
    /// A write outside the writable roots; `git`: into `.git/hooks` or `.git/config`.
    Write { git: bool },
    /// A read of a deny-read path.
    Read(PathBuf),
    /// A file made directly in the shared `/tmp` or `/var/tmp` (read-only in the sandbox; each
    /// call has a private `$TMPDIR`).
    SharedTmp,
    /// A connection, with the network off.
    Connect,
}

/// Marks of a refused connection (with the network off every socket is refused, so a
/// program says so in one of these ways).
const CONNECT_MARKS: &[&str] = &[
    "could not resolve host",
    "couldn't resolve host",
    "couldn't connect",
    "failed to connect",
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "newconnectionerror",
    "connection refused",
    "socket: operation not permitted",
    "is not an allowed host",
    "failed to establish a new connection",
    "getaddrinfo",
    "unable to connect",
    "connecttimeout",
    "tunnel failed",
];

/// Marks of a refused file access.
const ACCESS_MARKS: &[&str] = &[
    "permission denied",
    "read-only file system",
    "operation not permitted",
    "eacces",
    "erofs",
];

/// What rule, if any, a failed sandboxed command's `output` shows it met.
pub(crate) fn detect(spec: &SandboxSpec, output: &str) -> Option<Denial> {
    let lower = output.to_ascii_lowercase();
    let has = |marks: &[&str]| marks.iter().any(|m| lower.contains(m));
    if spec.network == NetworkMode::Off
        && (has(CONNECT_MARKS)
            || ((lower.contains("operation not permitted") || lower.contains("permission denied"))
                && (lower.contains("socket") || lower.contains("connect"))))
    {
        return Some(Denial::Connect);
    }
    if !has(ACCESS_MARKS) {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for path in &spec.deny_read {
        if mentions(output, path, home.as_deref()) {
            return Some(Denial::Read(path.clone()));
        }
    }
    let git = lower.contains(".git/hooks") || lower.contains(".git/config");
    if !git && names_a_shared_tmp_file(output) {
        return Some(Denial::SharedTmp);
    }
    Some(Denial::Write { git })
}

/// Whether `output` names a file right in `/tmp` or `/var/tmp` (`/tmp/notes.txt`, not a
/// directory's content further down), where it starts a word.
fn names_a_shared_tmp_file(output: &str) -> bool {
    ["/tmp/", "/var/tmp/"].iter().any(|dir| {
        output.match_indices(dir).any(|(at, _)| {
            let starts_word = output[..at]
                .chars()
                .next_back()
                .is_none_or(|c| c.is_whitespace() || "'\"`‘(".contains(c))
                && !output[..at].ends_with("/var");
            let name: String = output[at + dir.len()..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !"'\"`’):".contains(*c))
                .collect();
            starts_word && !name.is_empty() && !name.contains('/')
        })
    })
}

/// Whether `output` names `path`, as written or with `~` for the home directory.
fn mentions(output: &str, path: &Path, home: Option<&Path>) -> bool {
    let full = path.display().to_string();
    if output.contains(&full) {
        return true;
    }
    home.and_then(|h| path.strip_prefix(h).ok())
        .is_some_and(|rest| output.contains(&format!("~/{}", rest.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_exec_executor::SandboxMode;

    fn spec(network: NetworkMode) -> SandboxSpec {
        SandboxSpec {
            mode: SandboxMode::WorkspaceWrite,
            workspace: "/w".into(),
            writable: vec![],
            caches: vec![],
            deny_read: vec!["/home/me/.ssh".into()],
            read_only: Vec::new(),
            network,
            allow_hosts: vec![],
        }
    }

    #[test]
    fn reads_the_rule_from_the_output() {
        let off = spec(NetworkMode::Off);
        assert_eq!(
            detect(&off, "touch: cannot touch '/etc/x': Permission denied"),
            Some(Denial::Write { git: false })
        );
        assert_eq!(
            detect(
                &off,
                "cp: cannot create '.git/hooks/pre-commit': Read-only file system"
            ),
            Some(Denial::Write { git: true })
        );
        assert_eq!(
            detect(&off, "cat: /home/me/.ssh/id_rsa: Permission denied"),
            Some(Denial::Read("/home/me/.ssh".into()))
        );
        assert_eq!(
            detect(
                &off,
                "PermissionError: [Errno 1] Operation not permitted\n  sock = socket(af)"
            ),
            Some(Denial::Connect)
        );
        assert_eq!(
            detect(&off, "curl: (7) Couldn't connect to server"),
            Some(Denial::Connect)
        );
        assert_eq!(
            detect(
                &spec(NetworkMode::On),
                "curl: (7) Couldn't connect to server"
            ),
            None
        );
        assert_eq!(detect(&off, "error: tests failed"), None);
    }

    #[test]
    fn a_file_right_in_the_shared_tmp_points_to_tmpdir() {
        let on = spec(NetworkMode::On);
        for output in [
            "bash: /tmp/notes.txt: Read-only file system",
            "touch: cannot touch '/tmp/x': Read-only file system",
            "OSError: [Errno 30] Read-only file system: '/var/tmp/cache.db'",
        ] {
            assert_eq!(detect(&on, output), Some(Denial::SharedTmp), "{output}");
        }
        // Deeper down is some directory's content, not the shared temporary directory's.
        assert_eq!(
            detect(&on, "bash: /tmp/build/outside/file: Read-only file system"),
            Some(Denial::Write { git: false })
        );
    }
}
