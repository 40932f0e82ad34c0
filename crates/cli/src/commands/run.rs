//! `agent-exec run`: one command, its result printed, its exit status (contract §6).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use agent_exec_core::{Approver, CancelToken, Observer, Outcome, Request, ToolResult, Verdict};
use anyhow::Context as _;

use crate::args::RunArgs;
use crate::config_file::build_tool;

/// The exit status of `agent-exec run` for a result (contract §6).
pub(crate) fn exit_code(result: &ToolResult) -> i32 {
    let d = &result.details;
    match d.outcome {
        Outcome::Success => 0,
        Outcome::ExitNonzero => d.exit_code.map_or(1, |c| if c == 0 { 1 } else { c & 0xff }),
        Outcome::Signaled => 128 + d.signal.unwrap_or(0),
        Outcome::Timeout => 124,
        Outcome::Cancelled => 130,
        Outcome::Denied | Outcome::NeedsApproval => 126,
        Outcome::InvalidRequest => 2,
        _ => 127,
    }
}

pub(crate) struct TerminalApprover;

impl Approver for TerminalApprover {
    fn approve(&self, command: &str, verdict: &Verdict) -> bool {
        let Ok(mut tty) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
        else {
            return false;
        };
        let _ = write!(
            tty,
            "agent-exec: {}\n  {command}\nRun it? [y/N] ",
            verdict.reason
        );
        let mut answer = [0u8; 8];
        let n = tty.read(&mut answer).unwrap_or(0);
        matches!(answer.get(..n).and_then(|a| a.first()), Some(b'y' | b'Y'))
    }
}

#[allow(clippy::needless_pass_by_value)] // the parsed arguments are owned by this subcommand
pub(crate) fn cmd_run(args: RunArgs) -> anyhow::Result<i32> {
    let _ = agent_exec_executor::containment::become_subreaper();
    // `-C DIR` is where the command runs and so the root the workspace (the policy's
    // `--workspace-only`, the sandbox's default workspace) is measured from.
    // On a remote target the directory is the far side's, resolved there.
    let workdir = match &args.fields.cwd {
        Some(dir) if !dir.is_empty() && !args.tool.remote.is_remote() => Some(named_dir(dir)?),
        _ => None,
    };
    let mut tool = build_tool(&args.tool, |config| {
        if let Some(dir) = &workdir {
            config.workdir.clone_from(dir);
        }
        // One call per process: a shell prepared for a next call would only be ended.
        config.prepared_shells.per_key = 0;
        // Nor can a call yield: its job would end with this process. It runs to its end.
        config.yield_after = None;
    })?;
    if args.approve {
        anyhow::ensure!(
            std::fs::File::open("/dev/tty").is_ok(),
            "--approve asks on the terminal, and this process has none; drop --approve (an \"ask\" verdict then ends with needs_approval, exit 126), or run it from a terminal"
        );
        tool = tool.with_approver(Arc::new(TerminalApprover));
    }
    let request = match &args.request {
        Some(source) => {
            anyhow::ensure!(
                args.command.is_empty(),
                "give the command either as words or in --request, not both"
            );
            let text = if source == "-" {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .context("reading the request from stdin")?;
                s
            } else {
                std::fs::read_to_string(source)
                    .with_context(|| format!("reading the request file {source}"))?
            };
            match Request::from_json(&text) {
                Ok(r) => r,
                Err(e) => {
                    return Ok(print_result(
                        &ToolResult::invalid(e.0, tool.config().workdir.display().to_string()),
                        args.json,
                    ));
                }
            }
        }
        None if args.command.is_empty() => anyhow::bail!(
            "no command given: write it after the options, e.g. `agent-exec run -- ls -la`, or give --request FILE"
        ),
        None => {
            let mut request = Request::from_words(&args.command);
            request.cwd = match &workdir {
                Some(dir) => Some(dir.display().to_string()),
                None => args.fields.cwd.clone(),
            };
            args.fields.apply(&mut request)?;
            request
        }
    };
    // A request's `yield_ms` too (contract §3, Yield): `run` has no server to keep the job in.
    let mut request = request;
    request.yield_ms = None;
    let cancel = CancelToken::new();
    crate::install_cancel_handlers(cancel.clone());
    // The output is watched only for a terminal's progress display: watching costs a count
    // and a copy per chunk.
    let result = if std::io::stderr().is_terminal() && !args.json {
        let observer = Arc::new(Observer::new());
        let (done, handle) = progress_thread(observer.clone());
        let result = tool.execute_observed(&request, &cancel, &observer);
        done.cancel();
        let _ = handle.join();
        result
    } else {
        tool.execute(&request, &cancel)
    };
    Ok(print_result(&result, args.json))
}

/// On a terminal, after a second, shows the elapsed time and the output so far on stderr until
/// the command ends.
pub(crate) fn progress_thread(
    observer: Arc<Observer>,
) -> (CancelToken, std::thread::JoinHandle<()>) {
    let done = CancelToken::new();
    let d = done.clone();
    let handle = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let mut shown = false;
        // Waits on the token, not a sleep: the call's end must not wait out a tick.
        while !d.wait_timeout(std::time::Duration::from_millis(200)) {
            let secs = start.elapsed().as_secs_f64();
            if secs >= 1.0 && !d.is_cancelled() {
                let msg = format!(
                    "running… {secs:.0}s, {} of output",
                    agent_exec_sink::format_size(observer.bytes())
                );
                if colour {
                    eprint!("\r\x1b[2m{msg}\x1b[0m\x1b[K");
                } else {
                    eprint!("\r{msg}");
                }
                shown = true;
            }
        }
        if shown {
            eprint!("\r{}\r", " ".repeat(48));
        }
    });
    (done, handle)
}

pub(crate) fn print_result(result: &ToolResult, json: bool) -> i32 {
    let mut out = std::io::stdout().lock();
    if json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(result).unwrap_or_default()
        );
    } else {
        let text = result.text();
        let _ = out.write_all(text.as_bytes());
        if !text.ends_with('\n') {
            let _ = out.write_all(b"\n");
        }
    }
    let _ = out.flush();
    exit_code(result)
}

/// A directory the user named on the command line, made absolute (`-C ../x`, `-C ~/p`).
/// Whether it exists is the request's check (an `invalid_request` result).
pub(crate) fn named_dir(dir: &str) -> anyhow::Result<PathBuf> {
    let expanded = match (dir.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(dir),
    };
    Ok(std::path::absolute(expanded)?)
}
