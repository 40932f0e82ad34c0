//! The one spawn path: every process a call starts — a piped command, a PTY command, a
//! background job, a session shell, the rc snapshot — is started here, in its call's
//! containment group, with the call's marker, in its own process group (or session, for a PTY).

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::containment::{self, CallGroup, MARKER_VAR};
use crate::oneshot::Program;

/// How the child's standard descriptors are set up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Io {
    /// stdout and stderr on pipes to us; stdin `/dev/null`, or a pipe we write (a job's input).
    Pipes { stdin: bool },
    /// stdin, stdout and stderr on a new pseudo-terminal; the child leads its own session with
    /// it as controlling terminal.
    Pty,
    /// A session shell: pipes for stdout and stderr, stdin `/dev/null`, plus the control pipe's
    /// read end on fd 3 and the status pipe's write end on fd 4.
    SessionShell { control: RawFd, status: RawFd },
}

/// A started process and our ends of its descriptors.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: Child,
    /// Where we write its input: the stdin pipe, or the PTY master.
    pub(crate) input: Option<OwnedFd>,
    /// Its stdout (or the PTY master, where everything arrives).
    pub(crate) stdout: Option<OwnedFd>,
    /// Its stderr (none under a PTY).
    pub(crate) stderr: Option<OwnedFd>,
}

/// Why a process could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The working directory cannot be entered (missing, not a directory, no permission).
    #[error("cannot enter the working directory {}: {reason}", .path.display())]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// The program (or the shell) could not be executed.
    #[error("failed to start {program}: {reason}")]
    Program {
        /// The program or shell.
        program: String,
        /// The system's reason.
        reason: String,
        /// Its kind (not found, permission denied, …).
        kind: std::io::ErrorKind,
    },
    /// No pseudo-terminal could be opened.
    #[error("failed to open a pseudo-terminal: {reason}")]
    Pty {
        /// The system's reason.
        reason: String,
    },
}

/// Everything the spawn needs.
pub(crate) struct Launch<'a> {
    pub(crate) program: &'a Program,
    pub(crate) cwd: &'a Path,
    /// The environment, without the marker (added here).
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) io: Io,
}

/// Starts `launch` in `group`. The child joins the group's cgroup before it execs, so nothing
/// it ever starts is outside it; its pid is registered as supervised before any orphan sweep can
/// run, so its exit status always reaches its owner.
pub(crate) fn spawn(launch: Launch<'_>, group: &CallGroup) -> Result<Spawned, SpawnError> {
    let mut env = launch.env;
    env.push((MARKER_VAR.into(), group.marker().into()));
    let pty = match launch.io {
        Io::Pty => Some(nix::pty::openpty(None, None).map_err(|e| SpawnError::Pty {
            reason: e.desc().to_owned(),
        })?),
        _ => None,
    };
    let spawning = containment::SPAWNING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut child = None;
    // A command line of plain words runs without a shell (as make does for simple recipes);
    // anything unusual about it (no shebang, a race with PATH) falls back to the shell below.
    if let (Io::Pipes { .. }, Some(direct)) = (launch.io, direct_command(launch.program, &env)) {
        let (mut cmd, env) = direct;
        configure(&mut cmd, env, launch.cwd, launch.io, pty.as_ref(), group);
        child = cmd.spawn().ok();
    }
    let mut child = match child {
        Some(c) => c,
        None => {
            let mut cmd = base_command(launch.program);
            configure(&mut cmd, env, launch.cwd, launch.io, pty.as_ref(), group);
            cmd.spawn()
                .map_err(|e| spawn_error(launch.program, launch.cwd, &e))?
        }
    };
    let pid = child.id() as i32;
    containment::supervise_pid(pid);
    group.set_leader(pid);
    drop(spawning);
    let (input, stdout, stderr) = match pty {
        Some(pty) => {
            let master = pty.master;
            (master.try_clone().ok(), Some(master), None)
        }
        None => (
            child.stdin.take().map(OwnedFd::from),
            child.stdout.take().map(OwnedFd::from),
            child.stderr.take().map(OwnedFd::from),
        ),
    };
    Ok(Spawned {
        child,
        input,
        stdout,
        stderr,
    })
}

/// The `Command` for `program` through its shell (no stdio, env or cwd yet).
pub(crate) fn base_command(program: &Program) -> Command {
    match program {
        Program::Shell { command, shell } => {
            let (path, is_bash) = match shell {
                Some(s) => (s.clone(), s.file_name().is_some_and(|n| n == "bash")),
                None => crate::oneshot::default_shell().clone(),
            };
            let mut cmd = Command::new(path);
            if is_bash {
                cmd.args(["-o", "pipefail"]);
            }
            cmd.arg("-c").arg(command);
            cmd
        }
        Program::Argv { program, args } => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    }
}

/// A plain-words shell command as a direct exec, with the environment the shell would give it.
fn direct_command(
    program: &Program,
    env: &[(OsString, OsString)],
) -> Option<(Command, Vec<(OsString, OsString)>)> {
    let Program::Shell {
        command,
        shell: None,
    } = program
    else {
        return None;
    };
    let words = crate::direct::plain_words(command)?;
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let resolved = crate::direct::resolve(words[0], path)?;
    let mut cmd = Command::new(&resolved);
    // As the shell would: argv[0] as typed (error messages say `ls:`, not `/usr/bin/ls:`) and
    // `_` the program's path. PWD is fixed up in `configure`.
    cmd.arg0(words[0]).args(&words[1..]);
    let mut env = env.to_vec();
    env.retain(|(k, _)| k != "_");
    env.push(("_".into(), resolved.into_os_string()));
    Some((cmd, env))
}

/// PWD as the shell sets it: the inherited one when it names the same directory (a logical
/// path through symlinks), else the cwd itself.
fn fix_pwd(env: &mut Vec<(OsString, OsString)>, cwd: &Path) {
    let inherited = env
        .iter()
        .find(|(k, _)| k == "PWD")
        .map(|(_, v)| PathBuf::from(v));
    let same_dir = |a: &Path| {
        std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(cwd).ok())
            .is_some_and(|(x, y)| x == y)
    };
    let pwd = inherited
        .filter(|p| p.is_absolute() && same_dir(p))
        .unwrap_or_else(|| cwd.to_path_buf());
    env.retain(|(k, _)| k != "PWD");
    env.push(("PWD".into(), pwd.into_os_string()));
}

fn configure(
    cmd: &mut Command,
    mut env: Vec<(OsString, OsString)>,
    cwd: &Path,
    io: Io,
    pty: Option<&nix::pty::OpenptyResult>,
    group: &CallGroup,
) {
    if matches!(io, Io::Pipes { .. }) {
        fix_pwd(&mut env, cwd);
    }
    cmd.env_clear().envs(env).current_dir(cwd);
    match (io, pty) {
        (Io::Pty, Some(pty)) => {
            let slave = |fd: &OwnedFd| fd.try_clone().map_or_else(|_| Stdio::null(), Stdio::from);
            cmd.stdin(slave(&pty.slave))
                .stdout(slave(&pty.slave))
                .stderr(slave(&pty.slave));
        }
        (Io::Pipes { stdin }, _) => {
            cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
        }
        _ => {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
        }
    }
    let join = group.join_fd();
    let (leads_session, shell_fds) = match io {
        Io::Pty => (true, None),
        Io::SessionShell { control, status } => (false, Some((control, status))),
        Io::Pipes { .. } => (false, None),
    };
    if join.is_none() && !leads_session && shell_fds.is_none() {
        // Nothing to do in the child: std can use posix_spawn (vfork), the cheaper start.
        return;
    }
    // SAFETY: write, setsid, ioctl, fcntl, dup2 and close are async-signal-safe; the closure
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(fd) = join
                && libc::write(fd, b"0".as_ptr().cast(), 1) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if leads_session && (libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0) {
                return Err(std::io::Error::last_os_error());
            }
            if let Some((control, status)) = shell_fds {
                // Copy both ends above 10 first: either may sit on 3 or 4 already, and dup2
                // onto the same descriptor would keep its close-on-exec flag.
                let c = libc::fcntl(control, libc::F_DUPFD, 10);
                let s = libc::fcntl(status, libc::F_DUPFD, 10);
                if c < 0 || s < 0 || libc::dup2(c, 3) < 0 || libc::dup2(s, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(c);
                libc::close(s);
            }
            Ok(())
        });
    }
}

/// Names what failed: the working directory (std reports a failed `chdir` as the program's
/// failure, "failed to start bash: Permission denied"), or the program itself.
fn spawn_error(program: &Program, cwd: &Path, e: &std::io::Error) -> SpawnError {
    if let Err(errno) = nix::unistd::access(cwd, nix::unistd::AccessFlags::X_OK) {
        return SpawnError::Cwd {
            path: cwd.to_path_buf(),
            reason: errno.desc().to_owned(),
        };
    }
    if !cwd.is_dir() {
        return SpawnError::Cwd {
            path: cwd.to_path_buf(),
            reason: "Not a directory".to_owned(),
        };
    }
    let name = match program {
        Program::Shell { shell, .. } => shell
            .clone()
            .unwrap_or_else(|| crate::oneshot::default_shell().0.clone())
            .display()
            .to_string(),
        Program::Argv { program, .. } => program.clone(),
    };
    SpawnError::Program {
        program: name,
        reason: e.to_string(),
        kind: e.kind(),
    }
}

/// The raw descriptor of an optional owned one.
pub(crate) fn raw(fd: Option<&OwnedFd>) -> Option<RawFd> {
    fd.map(AsRawFd::as_raw_fd)
}
