//! `agent-exec`: the command line and the servers. The only place that knows argv, stdio,
//! signals and exit codes.

mod args;
mod commands;
mod config_file;
mod containment;
mod remote;
mod server;
mod terminal;

use std::ffi::c_int;
use std::io::Write;
use std::sync::OnceLock;

use agent_exec_core::{CancelToken, request_schema};
use args::{Cli, Cmd};
use clap::{CommandFactory, FromArgMatches};

/// `--version`: the version and what this machine lets agent-exec do.
fn long_version() -> String {
    use agent_exec_executor::GroupKind;
    let containment = match agent_exec_executor::containment::default_kind() {
        GroupKind::CgroupV2 => {
            "cgroup v2 (every process of a call is ended, setsid escapees included)"
        }
        GroupKind::CgroupV1 => {
            "cgroup v1 freezer (every process of a call is ended, setsid escapees included)"
        }
        GroupKind::PidNamespace => {
            "a PID namespace per call, in a user namespace (no cgroup could be made here; every process of a call is ended, setsid escapees included)"
        }
        _ => {
            "process group + environment marker (no cgroup or user namespace could be made here: run as root, in a delegated cgroup v2 subtree, or allow user namespaces, to contain escapees)"
        }
    };
    agent_exec_executor::containment::cleanup();
    format!(
        "{}\nplatform: {}-{}\ncontainment: {containment}\n{}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH,
        std::env::consts::OS,
        containment::version_line(),
    )
}

static CANCEL: OnceLock<CancelToken> = OnceLock::new();

extern "C" fn on_signal(_: c_int) {
    // Async-signal-safe: an atomic swap and a write(2).
    if let Some(token) = CANCEL.get() {
        token.cancel();
    }
}

pub(crate) fn install_cancel_handlers(token: CancelToken) {
    let _ = CANCEL.set(token);
    on_stop_signals(on_signal);
}

/// Installs `handler` for SIGINT, SIGTERM and SIGHUP (the terminal or the parent went away: a
/// request to stop, like SIGTERM) — except SIGHUP when it was inherited ignored (`nohup`).
pub(crate) fn on_stop_signals(handler: extern "C" fn(c_int)) {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    // `SA_RESTART`, as `signal(2)` gives: a read the signal interrupts goes on.
    let action = SigAction::new(
        SigHandler::Handler(handler),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handlers only do async-signal-safe work (an atomic store, a write to a
        // pipe).
        let Ok(old) = (unsafe { sigaction(sig, &action) }) else {
            continue;
        };
        if sig == Signal::SIGHUP && matches!(old.handler(), SigHandler::SigIgn) {
            // SAFETY: putting back the disposition we were given.
            let _ = unsafe { sigaction(sig, &old) };
        }
    }
}

fn main() {
    let first = std::env::args().nth(1);
    if matches!(first.as_deref(), Some("run" | "serve" | "mcp")) {
        // First thing, before any thread exists (it forks) and while the process is small
        // (a fork copies its page tables): when this process dies, however it dies,
        // everything its calls, sessions and jobs started is ended.
        if let Err(e) = agent_exec_executor::containment::start_watchdog() {
            eprintln!("agent-exec: warning: no watchdog ({e}); processes may outlive a crash");
        }
    }
    let mut command = args::command_for(first.as_deref());
    if std::env::args().nth(1).as_deref() == Some("--version") {
        // Probing the machine costs a cgroup creation: only when asked. Leaked once, as
        // clap's version strings are static.
        command = command.long_version(&*Box::leak(long_version().into_boxed_str()));
    }
    let matches = command.try_get_matches().unwrap_or_else(|e| {
        // `--help`, a usage error: the watchdog is reaped before clap exits.
        agent_exec_executor::containment::release_at_exit();
        e.exit()
    });
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => {
            agent_exec_executor::containment::release_at_exit();
            e.exit()
        }
    };
    let code = match run_cli(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agent-exec: {e:#}");
            2
        }
    };
    // Every call, session and job has ended: the watchdog has nothing to sweep.
    agent_exec_executor::containment::release_at_exit();
    std::process::exit(code);
}

fn run_cli(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Cmd::Run(args) => commands::run::cmd_run(args),
        Cmd::Artifact(args) => commands::artifact::cmd_artifact(&args),
        Cmd::Serve(args) => commands::serve::serve(&args, false),
        Cmd::Mcp(args) => commands::serve::serve(&args, true),
        Cmd::Schema => {
            println!("{}", serde_json::to_string_pretty(&request_schema())?);
            Ok(0)
        }
        Cmd::Check(args) => commands::check::cmd_check(&args),
        Cmd::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "agent-exec", &mut script);
            // A reader that stops early (`| head`) is not an error.
            let _ = std::io::stdout().write_all(&script);
            Ok(0)
        }
        Cmd::Man => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut page)?;
            let _ = std::io::stdout().write_all(&page);
            Ok(0)
        }
    }
}
