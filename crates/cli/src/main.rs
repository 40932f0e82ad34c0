//! `agent-exec`: the command line and the servers. The only place that knows argv, stdio,
//! signals and exit codes.

mod mcp;
mod serve;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_exec_core::{Approver, Config, Request, Tool, ToolResult, request_schema};
use agent_exec_executor::CancelToken;
use agent_exec_policy::{Context, Policy, PolicyConfig, Verdict};
use agent_exec_sink::ArtifactStore;
use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

/// Run shell commands for LLM agents: bounded output, no hangs, no survivors, a real policy.
#[derive(Debug, Parser)]
#[command(name = "agent-exec", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run one command and print the model-ready result.
    Run(RunArgs),
    /// Print a spilled output (`artifact://ID`).
    Artifact(ArtifactArgs),
    /// JSON-RPC 2.0 over stdio, one message per line: sessions and background jobs live here.
    Serve(ServeArgs),
    /// The same tools as a Model Context Protocol server over stdio.
    Mcp(ServeArgs),
    /// Print the JSON Schema of the request.
    Schema,
    /// Print the policy's verdict on a command, without running it.
    Check(CheckArgs),
}

#[derive(Debug, Args, Clone, Default)]
struct PolicyArgs {
    /// Policy configuration (TOML).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Deny paths outside the workspace root (default: the working directory).
    #[arg(long)]
    workspace_only: bool,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// Working directory.
    #[arg(short = 'C', long)]
    cwd: Option<String>,
    /// Timeout in seconds (1-3600, default 120).
    #[arg(short = 't', long)]
    timeout: Option<i64>,
    /// Extra environment variable (repeatable).
    #[arg(short = 'e', long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Keep the first N lines.
    #[arg(long)]
    head: Option<u64>,
    /// Keep the last N lines.
    #[arg(long)]
    tail: Option<u64>,
    /// Run under a pseudo-terminal.
    #[arg(long)]
    pty: bool,
    /// Bytes of output shown (default 51200).
    #[arg(long)]
    max_bytes: Option<usize>,
    /// Which part of a long output is kept: tail, head, both or smart.
    #[arg(long)]
    direction: Option<String>,
    /// Artifact directory (default: $AGENT_EXEC_ARTIFACTS or the user's state dir).
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    #[command(flatten)]
    policy: PolicyArgs,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
    /// Ask on the terminal when the policy says "ask".
    #[arg(long)]
    approve: bool,
    /// Read the request as JSON from FILE, or `-` for stdin.
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["cwd", "timeout", "env", "head", "tail", "pty"])]
    request: Option<String>,
    /// The command; words are joined with spaces.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

#[derive(Debug, Args)]
struct ArtifactArgs {
    /// `ID` or `artifact://ID`.
    id: String,
    /// Only lines A to B (1-based, inclusive): `A:B`, `A:` or `:B`.
    #[arg(long, value_name = "A:B")]
    lines: Option<String>,
    /// Artifact directory.
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
}

#[derive(Debug, Args, Clone, Default)]
struct ServeArgs {
    /// Artifact directory.
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    #[command(flatten)]
    policy: PolicyArgs,
    /// Sessions source a cached snapshot of ~/.bashrc (functions, aliases, options, PATH).
    #[arg(long)]
    rc_snapshot: bool,
    /// Put this before every session command (`<prefix> <command>`).
    #[arg(long, value_name = "PREFIX")]
    command_prefix: Option<String>,
    /// Most sessions kept (least recently used closed first).
    #[arg(long, default_value_t = 16)]
    max_sessions: usize,
    /// Which part of a long output is kept: smart (default), tail, head or both.
    #[arg(long)]
    direction: Option<String>,
}

impl ServeArgs {
    fn tool(&self) -> anyhow::Result<Tool> {
        build_tool(
            self.artifacts.clone(),
            None,
            self.direction.as_deref(),
            &self.policy,
            |c| {
                c.sessions.rc_snapshot = self.rc_snapshot;
                c.sessions.command_prefix.clone_from(&self.command_prefix);
                c.sessions.max_sessions = self.max_sessions;
            },
        )
    }
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    policy: PolicyArgs,
    /// Working directory for resolving paths.
    #[arg(short = 'C', long)]
    cwd: Option<PathBuf>,
    /// The command; words are joined with spaces.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    command: Vec<String>,
}

static CANCEL: OnceLock<CancelToken> = OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: an atomic swap and a write(2).
    if let Some(token) = CANCEL.get() {
        token.cancel();
    }
}

fn install_cancel_handlers(token: CancelToken) {
    let _ = CANCEL.set(token);
    on_stop_signals(on_signal);
}

/// Installs `handler` for SIGINT, SIGTERM and SIGHUP (the terminal or the parent went away: a
/// request to stop, like SIGTERM) — except SIGHUP when it was inherited ignored (`nohup`).
pub(crate) fn on_stop_signals(handler: extern "C" fn(libc::c_int)) {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: querying and setting dispositions; the handlers only do async-signal-safe
        // work (an atomic store, a write to a pipe).
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &raw mut current);
            if sig == libc::SIGHUP && current.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            libc::signal(sig, handler as *const () as libc::sighandler_t);
        }
    }
}

fn main() {
    let cli = Cli::parse();
    if matches!(cli.command, Cmd::Run(_) | Cmd::Serve(_) | Cmd::Mcp(_)) {
        // Before any thread exists (it forks): when this process dies, however it dies,
        // everything its calls, sessions and jobs started is ended.
        if let Err(e) = agent_exec_executor::containment::start_watchdog() {
            eprintln!("agent-exec: warning: no watchdog ({e}); processes may outlive a crash");
        }
    }
    let code = match run_cli(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("agent-exec: {e:#}");
            2
        }
    };
    std::process::exit(code);
}

fn run_cli(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Cmd::Run(args) => cmd_run(args),
        Cmd::Artifact(args) => cmd_artifact(&args),
        Cmd::Serve(args) => {
            let _ = agent_exec_executor::containment::become_subreaper();
            serve::serve(args.tool()?)
        }
        Cmd::Mcp(args) => {
            let _ = agent_exec_executor::containment::become_subreaper();
            mcp::serve(args.tool()?)
        }
        Cmd::Schema => {
            println!("{}", serde_json::to_string_pretty(&request_schema())?);
            Ok(0)
        }
        Cmd::Check(args) => cmd_check(args),
    }
}

fn load_policy(args: &PolicyArgs, workdir: &std::path::Path) -> anyhow::Result<Policy> {
    let mut config = match &args.config {
        Some(path) => PolicyConfig::load(path)?,
        None => PolicyConfig::default(),
    };
    if args.workspace_only {
        config.workspace_only = true;
    }
    if config.workspace_only && config.workspace_roots.is_empty() {
        config.workspace_roots.push(workdir.to_path_buf());
    }
    Ok(Policy::new(config)?)
}

fn build_tool(
    artifacts: Option<PathBuf>,
    max_bytes: Option<usize>,
    direction: Option<&str>,
    policy: &PolicyArgs,
    adjust: impl FnOnce(&mut Config),
) -> anyhow::Result<Tool> {
    let mut config = Config::default();
    adjust(&mut config);
    if let Some(dir) = artifacts {
        config.artifacts_dir = dir;
    }
    if let Some(m) = max_bytes {
        anyhow::ensure!(m > 0, "--max-bytes must be at least 1");
        config.max_bytes = m;
    }
    if let Some(d) = direction {
        config.direction = d.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    }
    let policy = load_policy(policy, &config.workdir)?;
    Ok(Tool::new(config).with_policy(Arc::new(policy)))
}

struct TerminalApprover;

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
fn cmd_run(args: RunArgs) -> anyhow::Result<i32> {
    let _ = agent_exec_executor::containment::become_subreaper();
    let mut tool = build_tool(
        args.artifacts.clone(),
        args.max_bytes,
        args.direction.as_deref(),
        &args.policy,
        |_| {},
    )?;
    if args.approve && std::io::stderr().is_terminal() {
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
        None => {
            let mut env = std::collections::BTreeMap::new();
            for kv in &args.env {
                let Some((k, v)) = kv.split_once('=') else {
                    anyhow::bail!("--env expects K=V, got {kv:?}");
                };
                env.insert(k.to_owned(), v.to_owned());
            }
            Request {
                command: Some(args.command.join(" ")),
                cwd: args.cwd.clone(),
                env,
                timeout: args.timeout,
                head: args.head,
                tail: args.tail,
                pty: args.pty,
                ..Request::default()
            }
        }
    };
    let cancel = CancelToken::new();
    install_cancel_handlers(cancel.clone());
    let bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let progress =
        (std::io::stderr().is_terminal() && !args.json).then(|| progress_thread(bytes.clone()));
    let result = tool.execute_observed(&request, &cancel, &bytes);
    if let Some((done, handle)) = progress {
        done.cancel();
        let _ = handle.join();
    }
    Ok(print_result(&result, args.json))
}

/// On a terminal, after a second, shows the elapsed time and the output so far on stderr until
/// the command ends.
fn progress_thread(
    bytes: Arc<std::sync::atomic::AtomicU64>,
) -> (CancelToken, std::thread::JoinHandle<()>) {
    let done = CancelToken::new();
    let d = done.clone();
    let handle = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let mut shown = false;
        while !d.is_cancelled() {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let secs = start.elapsed().as_secs_f64();
            if secs >= 1.0 && !d.is_cancelled() {
                let so_far = bytes.load(std::sync::atomic::Ordering::Relaxed);
                let msg = format!(
                    "running… {secs:.0}s, {} of output",
                    agent_exec_sink::format_size(so_far)
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

fn print_result(result: &ToolResult, json: bool) -> i32 {
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
    result.cli_exit_code()
}

fn cmd_artifact(args: &ArtifactArgs) -> anyhow::Result<i32> {
    let dir = args
        .artifacts
        .clone()
        .unwrap_or_else(ArtifactStore::default_dir);
    let store = ArtifactStore::open(&dir)?;
    let bytes = match &args.lines {
        Some(range) => {
            let (a, b) = range.split_once(':').unwrap_or((range, range));
            let parse = |s: &str| -> anyhow::Result<Option<u64>> {
                if s.is_empty() {
                    Ok(None)
                } else {
                    let n: u64 = s.parse().with_context(|| {
                        format!("--lines expects A:B with line numbers from 1, got {range:?}")
                    })?;
                    anyhow::ensure!(n >= 1, "--lines counts from 1, got {range:?}");
                    Ok(Some(n))
                }
            };
            let first = parse(a)?.unwrap_or(1);
            let last = parse(b)?;
            if let Some(last) = last {
                anyhow::ensure!(
                    last >= first,
                    "--lines {range}: the range is empty (B is before A)"
                );
            }
            store.read_lines(&args.id, first, last)
        }
        None => store.read_bytes(&args.id, 0, None).map(|(b, _)| b),
    };
    match bytes {
        Ok(bytes) => {
            std::io::stdout().write_all(&bytes)?;
            Ok(0)
        }
        Err(e) => {
            eprintln!("agent-exec: {e}");
            Ok(1)
        }
    }
}

fn cmd_check(args: CheckArgs) -> anyhow::Result<i32> {
    let cwd = match args.cwd {
        Some(c) => c,
        None => std::env::current_dir()?,
    };
    let policy = load_policy(&args.policy, &cwd)?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let command = args.command.join(" ");
    let verdict = policy.check(
        &command,
        &Context {
            cwd: &cwd,
            home: home.as_deref(),
            env_keys: &[],
        },
    );
    if args.json {
        println!("{}", serde_json::to_string_pretty(&verdict)?);
    } else {
        let decision = serde_json::to_value(verdict.decision)?;
        println!("{}: {}", decision.as_str().unwrap_or("?"), verdict.reason);
        if let Some(rule) = &verdict.rule {
            println!("rule: {rule}");
        }
        for c in &verdict.commands {
            println!("command: {c}");
        }
    }
    Ok(match verdict.decision {
        agent_exec_policy::Decision::Allow => 0,
        _ => 126,
    })
}
