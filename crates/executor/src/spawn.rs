//! The one spawn path: every process a call starts — a piped command, a PTY command, a
//! background job, a session shell, the rc snapshot — is started here, in its call's
//! containment group, with the call's marker, in its own process group (or session, for a PTY).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::containment::{CallGroup, MARKER_VAR};
use crate::process::{ChildPlan, Process, Step};
use crate::sandbox::{self, Prepared, SandboxSpec};
use crate::spec::{OutputPipes, Program};
use crate::sys;
use crate::waiting::Watched;
use agent_exec_sink::TerminalSize;

/// How the child's standard descriptors are set up. Wherever a command's output is read, its
/// stdout and stderr share one pipe (or the terminal), so it comes back in the order it was
/// written — unless `Pipes` asks for [`OutputPipes::Separate`] (a remote target's client,
/// whose stdout is the protocol).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Io {
    /// stdout and stderr on pipes to us (one shared, or one each); stdin `/dev/null`, or a pipe
    /// we write (a job's input, a channel's).
    Pipes { stdin: bool, output: OutputPipes },
    /// stdin, stdout and stderr on a new pseudo-terminal of this size; the child leads its own
    /// session with it as controlling terminal.
    Pty(TerminalSize),
    /// A session shell: one pipe for stdout and stderr, stdin `/dev/null`, plus the control
    /// pipe's read end on fd 3 and the status pipe's write end on fd 4.
    SessionShell { control: RawFd, status: RawFd },
    /// A prepared shell (see [`crate::prepared`]): one pipe for stdout and stderr, stdin
    /// `/dev/null`, plus the read end of the pipe its one command will come through on fd 3.
    Prepared { control: RawFd },
}

/// A started process and our ends of its descriptors.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: Process,
    /// Where we write its input: the stdin pipe, or the PTY master.
    pub(crate) input: Option<OwnedFd>,
    /// Its output: the pipe its stdout and stderr share (its stdout alone with
    /// [`OutputPipes::Separate`]), or the PTY master, where everything arrives.
    pub(crate) stdout: Option<OwnedFd>,
    /// Its stderr, only with [`OutputPipes::Separate`].
    pub(crate) stderr: Option<OwnedFd>,
    /// The sandbox it runs in: kept until the call is over (its temporary directory).
    pub(crate) sandbox: Option<Prepared>,
    /// What it may wait on (its terminal, a job's stdin pipe; without a terminal, the terminal
    /// it lacks), to tell when it waits.
    pub(crate) watched: Watched,
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
    /// The sandbox cannot be enforced here, or could not be entered; the command did not run.
    #[error("the sandbox cannot be enforced: {reason}")]
    Sandbox {
        /// What is missing or failed.
        reason: String,
        /// The way on, when this machine cannot give the sandbox (`agent-exec-core`'s render
        /// words it).
        remedy: Option<crate::sandbox::Remedy>,
    },
    /// A resource limit this machine cannot enforce.
    #[error("the resource limits cannot be enforced: {0}")]
    LimitUnavailable(crate::containment::LimitUnavailable),
    /// A resource limit could not be applied.
    #[error("the resource limits cannot be enforced: {reason}")]
    Limits {
        /// What is missing or failed.
        reason: String,
    },
    /// The process could not be set up (descriptors, process group, containment group).
    #[error("failed to set up the process ({step}): {reason}")]
    Setup {
        /// Which step failed.
        step: &'static str,
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
    /// The sandbox to run it in.
    pub(crate) sandbox: Option<&'a SandboxSpec>,
}

/// Our ends and the child's ends of its standard descriptors.
struct Wiring {
    /// The child's 0, 1, 2 (and 3, 4 for a session shell).
    child: Vec<OwnedFd>,
    input: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    watched: Watched,
}

fn wire(io: Io) -> Result<Wiring, SpawnError> {
    let setup = |e: std::io::Error| SpawnError::Setup {
        step: "pipes",
        reason: e.to_string(),
    };
    let dev_null = || {
        std::fs::File::open("/dev/null")
            .map(OwnedFd::from)
            .map_err(setup)
    };
    let dup = |fd: RawFd| sys::dup_cloexec(fd, 3).map_err(setup);
    let (out_r, out_w) = match io {
        Io::Pty(_) => (None, None),
        _ => {
            let (r, w) = sys::pipe().map_err(setup)?;
            (Some(r), Some(w))
        }
    };
    // The child's stderr: a pipe of its own, or (everywhere else) the stdout pipe again, so
    // that one queue holds every write in the order it was made — as `2>&1` does. A reader of
    // two pipes cannot rebuild that order: a poll wakeup finds both holding data, written in
    // some interleaving it cannot see.
    let (err_r, err_w) = match io {
        Io::Pty(_) => (None, None),
        Io::Pipes {
            output: OutputPipes::Separate,
            ..
        } => {
            let (r, w) = sys::pipe().map_err(setup)?;
            (Some(r), Some(w))
        }
        _ => (None, Some(dup(out_w.as_ref().expect("piped").as_raw_fd())?)),
    };
    Ok(match io {
        Io::Pipes { stdin, .. } => {
            let (input, child_in) = if stdin {
                let (r, w) = sys::pipe().map_err(setup)?;
                (Some(w), r)
            } else {
                (None, dev_null()?)
            };
            Wiring {
                watched: Watched::pipes(input.as_ref(), out_r.as_ref(), err_r.as_ref()),
                child: vec![child_in, out_w.expect("piped"), err_w.expect("piped")],
                input,
                stdout: out_r,
                stderr: err_r,
            }
        }
        Io::Prepared { control } => Wiring {
            child: vec![
                dev_null()?,
                out_w.expect("piped"),
                err_w.expect("piped"),
                dup(control)?,
            ],
            input: None,
            watched: Watched::pipes(None, out_r.as_ref(), None),
            stdout: out_r,
            stderr: err_r,
        },
        Io::SessionShell { control, status } => Wiring {
            child: vec![
                dev_null()?,
                out_w.expect("piped"),
                err_w.expect("piped"),
                dup(control)?,
                dup(status)?,
            ],
            input: None,
            watched: Watched::pipes(None, out_r.as_ref(), None),
            stdout: out_r,
            stderr: err_r,
        },
        Io::Pty(size) => {
            let (master, slave) = open_pty(size).map_err(|e| SpawnError::Pty {
                reason: e.to_string(),
            })?;
            Wiring {
                watched: Watched::terminal(&slave),
                child: vec![dup(slave.as_raw_fd())?, dup(slave.as_raw_fd())?, slave],
                input: Some(dup(master.as_raw_fd())?),
                stdout: Some(master),
                stderr: None,
            }
        }
    })
}

/// A new pseudo-terminal, both ends close-on-exec (glibc's `openpty` leaves them inheritable,
/// so every process started meanwhile — a session shell living for hours — would hold them).
fn open_pty(size: TerminalSize) -> std::io::Result<(OwnedFd, OwnedFd)> {
    use rustix::pty::OpenptFlags;
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let master = rustix::pty::openpt(flags)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    // TIOCGPTPEER (Linux 4.13) opens the slave without a path lookup.
    let slave = rustix::pty::ioctl_tiocgptpeer(&master, flags)?;
    // The size a program asking sees (`stty size`), and the screen its output is shown on.
    let size = rustix::termios::Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let _ = rustix::termios::tcsetwinsize(&master, size);
    Ok((master, slave))
}

/// Starts `launch` in `group`. The child joins the group's cgroup before it execs, so nothing
/// it ever starts is outside it; its pid is registered as supervised before any orphan sweep
/// can run, so its exit status always reaches its owner.
pub(crate) fn spawn(launch: &Launch<'_>, group: &mut CallGroup) -> Result<Spawned, SpawnError> {
    let sandbox = launch
        .sandbox
        .map(sandbox::prepare)
        .transpose()
        .map_err(|e| SpawnError::Sandbox {
            reason: e.reason,
            remedy: e.remedy,
        })?;
    let mut spawned = match spawn_in(launch, group, sandbox.as_ref()) {
        // A cgroup we could create but not move into (a partly delegated subtree): the call
        // falls back to the next mechanism rather than failing.
        Err((_, Some(Step::Join))) => {
            group.abandon_cgroup();
            spawn_in(launch, group, sandbox.as_ref()).map_err(|(e, _)| e)
        }
        // User or PID namespaces refused after all (a container's seccomp profile): this
        // call, and every later one, falls back to the process group.
        Err((_, Some(Step::Namespace))) => {
            group.abandon_pid_namespace();
            spawn_in(launch, group, sandbox.as_ref()).map_err(|(e, _)| e)
        }
        other => other.map_err(|(e, _)| e),
    }?;
    spawned.sandbox = sandbox.map(|mut prepared| {
        // Known only now: a failed cgroup join may have left the process group.
        prepared.contained_exactly = group.kind() != crate::containment::GroupKind::ProcessGroup;
        prepared
    });
    Ok(spawned)
}

fn spawn_in(
    launch: &Launch<'_>,
    group: &CallGroup,
    sandbox: Option<&Prepared>,
) -> Result<Spawned, (SpawnError, Option<Step>)> {
    let mut env = launch.env.clone();
    env.push((MARKER_VAR.into(), group.marker().into()));
    if let Some(sandbox) = sandbox {
        let names: Vec<&OsString> = sandbox.env.iter().map(|(k, _)| k).collect();
        env.retain(|(k, _)| !names.contains(&k));
        env.extend(sandbox.env.iter().cloned());
    }
    let confine = Confine { group, sandbox };
    let wiring = wire(launch.io).map_err(|e| (e, None))?;
    let fds: Vec<RawFd> = wiring.child.iter().map(AsRawFd::as_raw_fd).collect();
    let spawning = crate::pids::SPAWNING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut child = None;
    // A command line of plain words runs without a shell (as make does for simple recipes);
    // anything unusual about it (no shebang, a race with PATH) falls back to the shell below.
    if matches!(launch.io, Io::Pipes { .. })
        && let Some(plan) = direct_plan(launch.program, &env, launch.cwd, launch.io, &fds, &confine)
    {
        child = crate::process::spawn(&plan).ok();
    }
    let child = match child {
        Some(c) => c,
        None => {
            let plan = shell_plan(launch.program, &env, launch.cwd, launch.io, &fds, &confine)
                .map_err(|e| (program_error(launch.program, &e), None))?;
            crate::process::spawn(&plan).map_err(|(e, step)| {
                (
                    spawn_error(launch.program, launch.cwd, &e, step),
                    Some(step),
                )
            })?
        }
    };
    let pid = child.id() as i32;
    crate::pids::supervise_pid(pid);
    group.set_leader(pid);
    if let Some(init) = child.init() {
        group.add_namespace(init.namespace());
    }
    drop(spawning);
    drop(wiring.child);
    Ok(Spawned {
        child,
        input: wiring.input,
        stdout: wiring.stdout,
        stderr: wiring.stderr,
        sandbox: None,
        watched: wiring.watched,
    })
}

/// Where the child goes: its containment group (with its limits) and its sandbox.
struct Confine<'a> {
    group: &'a CallGroup,
    sandbox: Option<&'a Prepared>,
}

fn c_string(s: &OsStr) -> std::io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a NUL byte in an argument or variable",
        )
    })
}

fn env_strings(env: &[(OsString, OsString)]) -> std::io::Result<Vec<CString>> {
    env.iter()
        .map(|(k, v)| {
            let mut entry = k.clone();
            entry.push("=");
            entry.push(v);
            c_string(&entry)
        })
        .collect()
}

fn plan<'a>(
    path: &Path,
    argv: impl IntoIterator<Item = OsString>,
    env: &[(OsString, OsString)],
    cwd: &Path,
    fds: &[RawFd],
    io: Io,
    confine: &Confine<'a>,
) -> std::io::Result<ChildPlan<'a>> {
    let group = confine.group;
    Ok(ChildPlan {
        path: c_string(path.as_os_str())?,
        argv: argv
            .into_iter()
            .map(|a| c_string(&a))
            .collect::<Result<_, _>>()?,
        envp: env_strings(env)?,
        cwd: c_string(cwd.as_os_str())?,
        fds: fds.to_vec(),
        join: group.join_fd(),
        cgroup_dir: group.cgroup_dir_fd(),
        session_with_tty: matches!(io, Io::Pty(_)),
        extra_joins: group.limits.join_fds(),
        rlimits: &group.limits.rlimits,
        sandbox: confine.sandbox,
        pid_namespace: group.wants_pid_namespace(),
    })
}

/// The program run through its shell (or as given, for argv).
fn shell_plan<'a>(
    program: &Program,
    env: &[(OsString, OsString)],
    cwd: &Path,
    io: Io,
    fds: &[RawFd],
    confine: &Confine<'a>,
) -> std::io::Result<ChildPlan<'a>> {
    let not_found = || std::io::Error::from(std::io::ErrorKind::NotFound);
    match program {
        Program::Shell { command, shell } => {
            let (path, is_bash) = match shell {
                Some(s) => (s.clone(), s.file_name().is_some_and(|n| n == "bash")),
                None => crate::spec::default_shell().clone(),
            };
            let resolved = lookup(&path, env).ok_or_else(not_found)?;
            let mut argv: Vec<OsString> = vec![path.into_os_string()];
            if is_bash {
                argv.extend(["-o".into(), "pipefail".into()]);
            }
            argv.push("-c".into());
            if command.starts_with('-') {
                // Else the shell reads the command as its own options.
                argv.push("--".into());
            }
            argv.push(command.into());
            let mut env = env.to_vec();
            if matches!(io, Io::Pipes { .. }) {
                fix_pwd(&mut env, cwd);
            }
            plan(&resolved, argv, &env, cwd, fds, io, confine)
        }
        Program::Argv { program, args } => {
            let resolved = lookup(Path::new(program), env).ok_or_else(not_found)?;
            let argv =
                std::iter::once(OsString::from(program)).chain(args.iter().map(OsString::from));
            plan(&resolved, argv, env, cwd, fds, io, confine)
        }
    }
}

/// The child's `PATH`.
fn env_path(env: &[(OsString, OsString)]) -> Option<&OsStr> {
    env.iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str())
}

/// A path as given when it has a `/`, else the first match in the child's `PATH`.
fn lookup(program: &Path, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Some(program.to_path_buf());
    }
    crate::direct::resolve(program.to_str()?, env_path(env))
}

/// A plain-words shell command as a direct exec, with the environment the shell would give it.
fn direct_plan<'a>(
    program: &Program,
    env: &[(OsString, OsString)],
    cwd: &Path,
    io: Io,
    fds: &[RawFd],
    confine: &Confine<'a>,
) -> Option<ChildPlan<'a>> {
    let Program::Shell {
        command,
        shell: None,
    } = program
    else {
        return None;
    };
    let words = crate::direct::plain_words(command)?;
    let resolved = crate::direct::resolve(words[0], env_path(env))?;
    // As the shell would: argv[0] as typed (error messages say `ls:`, not `/usr/bin/ls:`),
    // `_` the program's path, and PWD the logical cwd.
    let mut env = env.to_vec();
    env.retain(|(k, _)| k != "_");
    env.push(("_".into(), resolved.clone().into_os_string()));
    fix_pwd(&mut env, cwd);
    let argv = words.iter().map(OsString::from);
    plan(&resolved, argv, &env, cwd, fds, io, confine).ok()
}

/// PWD as the shell sets it: the inherited one when it names the same directory (a logical
/// path through symlinks), else the cwd itself.
fn fix_pwd(env: &mut Vec<(OsString, OsString)>, cwd: &Path) {
    let pwd = logical_pwd(env, cwd);
    env.retain(|(k, _)| k != "PWD");
    env.push(("PWD".into(), pwd.into_os_string()));
}

/// The PWD a shell started in `cwd` with `env` would have.
pub(crate) fn logical_pwd(env: &[(OsString, OsString)], cwd: &Path) -> PathBuf {
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
    inherited
        .filter(|p| p.is_absolute() && same_dir(p))
        .unwrap_or_else(|| cwd.to_path_buf())
}

fn program_name(program: &Program) -> String {
    match program {
        Program::Shell { shell, .. } => shell
            .clone()
            .unwrap_or_else(|| crate::spec::default_shell().0.clone())
            .display()
            .to_string(),
        Program::Argv { program, .. } => program.clone(),
    }
}

fn program_error(program: &Program, e: &std::io::Error) -> SpawnError {
    SpawnError::Program {
        program: program_name(program),
        reason: e.to_string(),
        kind: e.kind(),
    }
}

/// Names what failed: the working directory, the program, or a step of the setup.
fn spawn_error(program: &Program, cwd: &Path, e: &std::io::Error, step: Step) -> SpawnError {
    let reason = || {
        let text = e.to_string();
        // "Permission denied (os error 13)" → "Permission denied".
        text.split(" (os error").next().unwrap_or(&text).to_owned()
    };
    match step {
        Step::Chdir => SpawnError::Cwd {
            path: cwd.to_path_buf(),
            reason: reason(),
        },
        Step::Exec => program_error(program, e),
        Step::Join => SpawnError::Setup {
            step: "joining the containment group",
            reason: reason(),
        },
        Step::Group => SpawnError::Setup {
            step: "a process group of its own",
            reason: reason(),
        },
        Step::Fds => SpawnError::Setup {
            step: "its descriptors",
            reason: reason(),
        },
        Step::Tty => SpawnError::Setup {
            step: "the terminal",
            reason: reason(),
        },
        Step::Limits => SpawnError::Limits {
            reason: format!("joining the limit cgroups or setting rlimits: {}", reason()),
        },
        Step::Namespace => SpawnError::Setup {
            step: "a PID namespace of its own",
            reason: reason(),
        },
        Step::Sandbox => SpawnError::Sandbox {
            reason: format!("entering it failed in the child ({})", reason()),
            remedy: Some(crate::sandbox::Remedy::GoWithout),
        },
    }
}

/// The raw descriptor of an optional owned one.
pub(crate) fn raw(fd: Option<&OwnedFd>) -> Option<RawFd> {
    fd.map(AsRawFd::as_raw_fd)
}
