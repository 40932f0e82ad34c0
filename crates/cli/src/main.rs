//! `agent-exec`: the command line and the servers. The only place that knows argv, stdio,
//! signals and exit codes.

mod containment;
mod remote;
mod server;
mod terminal;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_exec_core::{
    Approver, CancelToken, Config, Observer, Outcome, Policy, PolicyConfig, PolicyContext, Request,
    Retention, Tool, ToolResult, Verdict, request_schema,
};
use agent_exec_sink::ArtifactStore;
use anyhow::Context as _;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use containment::{ContainmentArgs, EnvTable, LimitsTable, SandboxTable};
use remote::RemoteArgs;
use serde::Deserialize as _;
use terminal::{TerminalArgs, TerminalTable};

/// What every command runs in unless the operator says otherwise (the help of `run`, `serve`,
/// `mcp` and the top level).
const DEFAULTS_HELP: &str = "By default commands run in agent-exec's sandbox (workspace-write, where this kernel can enforce it): they may write the working directory (or -C/--workspace), --writable roots, the build caches (~/.cache, cargo, npm, pip, Go, Maven, Gradle) and a private TMPDIR, use the network, but not read ~/.ssh and the other credentials; variables named like credentials (*KEY*, *TOKEN*, *SECRET*, ...) are withheld. --sandbox off opts out; --pass-env NAME passes a variable. `agent-exec --version` says what this machine enforces.";

/// Run shell commands for LLM agents: bounded output, no hangs, no survivors, a real policy.
#[derive(Debug, Parser)]
#[command(name = "agent-exec", version, about, after_help = DEFAULTS_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

/// The exit status of `agent-exec run` for a result (contract §6).
fn exit_code(result: &ToolResult) -> i32 {
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

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run one command and print the model-ready result.
    #[command(after_help = DEFAULTS_HELP)]
    Run(RunArgs),
    /// Print a spilled output (`artifact://ID`).
    Artifact(ArtifactArgs),
    /// JSON-RPC 2.0 over stdio, one message per line: sessions and background jobs live here.
    #[command(after_help = DEFAULTS_HELP)]
    Serve(ServeArgs),
    /// The same tools as a Model Context Protocol server over stdio.
    #[command(after_help = DEFAULTS_HELP)]
    Mcp(ServeArgs),
    /// Print the JSON Schema of the request.
    Schema,
    /// Print the policy's verdict on a command, without running it.
    Check(CheckArgs),
    /// Print a shell completion script: `agent-exec completions bash > /etc/bash_completion.d/agent-exec`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `agent-exec man | man -l -`.
    Man,
}

#[derive(Debug, Args, Clone, Default)]
struct PolicyArgs {
    /// Configuration (TOML): the policy (docs/policy.md) and an [artifacts] table.
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
    /// Ask on the terminal when the policy says "ask" (needs a terminal).
    #[arg(long)]
    approve: bool,
    #[command(flatten)]
    retention: RetentionArgs,
    #[command(flatten)]
    containment: ContainmentArgs,
    #[command(flatten)]
    terminal: TerminalArgs,
    #[command(flatten)]
    remote: RemoteArgs,
    /// Read the request as JSON from FILE, or `-` for stdin.
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["cwd", "timeout", "env", "head", "tail", "pty"])]
    request: Option<String>,
    /// The command. Options of agent-exec come first; the command starts at its first word
    /// (or after `--`) and runs to the end. One word is a shell line as it stands
    /// (`agent-exec run -- 'make 2>&1 | tail'`); several words reach the program intact, as
    /// argv (`agent-exec run -- sh -c 'echo hi'`), joined with spaces and quoted where needed.
    #[arg(trailing_var_arg = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// How many spilled outputs the artifact directory keeps (the oldest go first).
#[derive(Debug, Args, Clone, Default)]
struct RetentionArgs {
    /// Most artifacts kept (default 200; `artifacts.max_count` in --config).
    #[arg(long, value_name = "N")]
    keep_artifacts: Option<usize>,
    /// Most bytes all artifacts may take, e.g. 500M or 2G (default 2G; `artifacts.max_bytes`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    keep_artifact_bytes: Option<u64>,
}

/// `512K`, `100M`, `2G`, `1T` (powers of 1024) or plain bytes.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let shift = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => {
            return Err(format!(
                "{text:?} is not a size: write bytes, or a number with K, M, G or T (e.g. 500M)"
            ));
        }
    };
    let n: u64 = digits.parse().map_err(|_| {
        format!("{text:?} is not a size: write bytes, or a number with K, M, G or T (e.g. 500M)")
    })?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[derive(Debug, Args)]
struct ArtifactArgs {
    /// `ID` or `artifact://ID`.
    id: String,
    /// Only lines A to B (1-based, inclusive): `A:B`, `A:` or `:B`.
    #[arg(long, value_name = "A:B", conflicts_with = "grep")]
    lines: Option<String>,
    /// Only the lines matching this regular expression, numbered (`N:line`, as `grep -n`).
    #[arg(long, value_name = "REGEX")]
    grep: Option<String>,
    /// With --grep: N lines of context around each match (`N-line`, `--` between groups).
    #[arg(short = 'C', long, value_name = "N", requires = "grep")]
    context: Option<u64>,
    /// Artifact directory.
    #[arg(long, value_name = "DIR")]
    artifacts: Option<PathBuf>,
    /// Read the artifact of a call that ran on this target (ssh://…, docker://…, podman://…,
    /// kubectl://…), through its agent-exec.
    #[arg(long, value_name = "URI")]
    target: Option<String>,
    /// The far side's agent-exec (with --target).
    #[arg(long, value_name = "PATH")]
    remote_binary: Option<String>,
}

#[derive(Debug, Args, Clone, Default)]
struct ServeArgs {
    /// The working directory of calls (relative `cwd`s resolve against it; the default
    /// workspace). Default: where agent-exec runs. MCP clients often start servers in `/`.
    #[arg(short = 'C', long, value_name = "DIR")]
    cwd: Option<PathBuf>,
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
    /// Most sessions kept (least recently used closed first; when every one is running a
    /// command, a call on a new session waits for one, up to its timeout).
    #[arg(long, default_value_t = 16)]
    max_sessions: usize,
    /// Most requests running at once; past it a request waits its turn in a bounded queue
    /// (past that, the server reads no more input until there is room).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    max_inflight: u32,
    /// The longest request line read (`8M`, `512K`); a longer one is answered with an error
    /// naming the limit, skipped, and the server goes on.
    #[arg(long, value_name = "SIZE", default_value = "8M", value_parser = parse_size)]
    max_line_bytes: u64,
    /// Which part of a long output is kept: smart (default), tail, head or both.
    #[arg(long)]
    direction: Option<String>,
    /// Shells kept started ahead of one-shot calls, per kind of call (shell, environment,
    /// sandbox, limits); each runs one call and is replaced in the background. 0: off.
    #[arg(long, value_name = "N", default_value_t = 2)]
    prepared_shells: usize,
    /// End of input ends everything at once: calls in flight are cancelled, sessions and jobs
    /// end, the server exits (how a remote target's far side runs: its input closing means the
    /// connection dropped). Without it, calls in flight finish and are answered first.
    #[arg(long)]
    end_on_eof: bool,
    /// The operator's settings as a near side sends them to a remote target's far side (one
    /// word, made by agent-exec): they replace the settings flags and --config.
    #[arg(long, value_name = "WORD", hide = true)]
    settings: Option<String>,
    /// Bytes of output shown (default 51200).
    #[arg(long)]
    max_bytes: Option<usize>,
    #[command(flatten)]
    retention: RetentionArgs,
    #[command(flatten)]
    containment: ContainmentArgs,
    #[command(flatten)]
    terminal: TerminalArgs,
    #[command(flatten)]
    remote: RemoteArgs,
}

impl ServeArgs {
    fn tool(&self) -> anyhow::Result<Tool> {
        let workdir = match &self.cwd {
            Some(dir) => {
                let dir = std::path::absolute(dir)?;
                anyhow::ensure!(
                    dir.is_dir(),
                    "--cwd {}: not a directory; give the directory calls run in",
                    dir.display()
                );
                Some(dir)
            }
            None => None,
        };
        if let Some(word) = &self.settings {
            // A far side: the near side's settings, whole; this machine's own directories.
            let mut config = Config::from_far_settings(word).map_err(|e| anyhow::anyhow!("{e}"))?;
            if let Some(dir) = workdir {
                config.workdir = dir;
            }
            if let Some(dir) = &self.artifacts {
                config.artifacts_dir.clone_from(dir);
            }
            let policy = policy_from(PolicyConfig::default(), &self.policy, &config.workdir)?;
            return Ok(Tool::new_with_policy(config, Arc::new(policy)));
        }
        build_tool(
            self.artifacts.clone(),
            self.max_bytes,
            self.direction.as_deref(),
            &self.policy,
            &self.retention,
            &self.containment,
            &self.terminal,
            |c| {
                if let Some(dir) = workdir {
                    c.workdir = dir;
                }
                c.sessions.rc_snapshot = self.rc_snapshot;
                c.sessions.command_prefix.clone_from(&self.command_prefix);
                c.sessions.max_sessions = self.max_sessions;
                c.prepared_shells.per_key = self.prepared_shells;
                self.remote.apply(c)
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
    /// The command, read as `run` reads it: one word is a shell line; several are joined
    /// with spaces, each quoted where needed (see `run --help`).
    #[arg(trailing_var_arg = true, required = true, value_name = "COMMAND")]
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

/// `serve` (JSON-RPC) or `mcp`: runs until the client is done.
fn serve(args: &ServeArgs, mcp: bool) -> anyhow::Result<i32> {
    let _ = agent_exec_executor::containment::become_subreaper();
    let bounds = server::Bounds {
        max_line_bytes: usize::try_from(args.max_line_bytes).unwrap_or(usize::MAX),
        max_inflight: args.max_inflight as usize,
        end_on_eof: args.end_on_eof,
    };
    Ok(server::run(args.tool()?, bounds, mcp))
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
    let mut command = command_for(first.as_deref());
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

/// The command line: for `run` (one process per call: its start is on every call's path) only
/// that subcommand is built; building all nine cost ~0.2 ms, a sixth of a `bash -c true`.
/// A test checks that `run`'s help and parsing are the same either way.
fn command_for(first: Option<&str>) -> clap::Command {
    if first != Some("run") {
        return Cli::command();
    }
    let run = RunArgs::augment_args(clap::Command::new("run"))
        .about("Run one command and print the model-ready result")
        .long_about(None)
        .after_help(DEFAULTS_HELP);
    clap::Command::new("agent-exec")
        .version(env!("CARGO_PKG_VERSION"))
        .about(env!("CARGO_PKG_DESCRIPTION"))
        .after_help(DEFAULTS_HELP)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(run)
}

fn run_cli(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Cmd::Run(args) => cmd_run(args),
        Cmd::Artifact(args) => cmd_artifact(&args),
        Cmd::Serve(args) => serve(&args, false),
        Cmd::Mcp(args) => serve(&args, true),
        Cmd::Schema => {
            println!("{}", serde_json::to_string_pretty(&request_schema())?);
            Ok(0)
        }
        Cmd::Check(args) => cmd_check(&args),
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

/// The `--config` file: the policy's keys, plus the `[artifacts]`, `[sandbox]`, `[limits]`, `[env]`,
/// `[terminal]` and `[window]` tables.
#[derive(Debug, Default)]
struct FileConfig {
    policy: PolicyConfig,
    artifacts: ArtifactsTable,
    sandbox: SandboxTable,
    limits: LimitsTable,
    env: EnvTable,
    terminal: TerminalTable,
    window: WindowTable,
}

/// `[window]` of the config file: what the `smart` window counts as salient, beyond its
/// defaults. Every match of an added pattern must contain one of the anchors (added or
/// default), case-sensitively: anchors are the prefilter that keeps the window fast.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct WindowTable {
    /// Regexes (Rust syntax, ASCII) added to the default salient patterns.
    salient_patterns: Vec<String>,
    /// Literals added to the default anchors (each casing listed).
    salient_anchors: Vec<String>,
}

impl WindowTable {
    fn apply(&self, config: &mut Config) -> anyhow::Result<()> {
        if self.salient_patterns.is_empty() && self.salient_anchors.is_empty() {
            return Ok(());
        }
        anyhow::ensure!(
            self.salient_anchors.iter().all(|a| !a.is_empty()),
            "window.salient_anchors: an anchor must not be empty (it would match every line)"
        );
        config
            .salient
            .patterns
            .extend(self.salient_patterns.iter().cloned());
        config
            .salient
            .anchors
            .extend(self.salient_anchors.iter().cloned());
        config
            .salient
            .validate()
            .map_err(|e| anyhow::anyhow!("window.salient_patterns: {e}"))
    }
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ArtifactsTable {
    max_count: Option<usize>,
    /// Bytes, or a size such as `2G`.
    max_bytes: Option<toml::Value>,
}

fn load_config(path: Option<&std::path::Path>) -> anyhow::Result<FileConfig> {
    let Some(path) = path else {
        return Ok(FileConfig::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the config file {}", path.display()))?;
    let in_file = || format!("in the config file {}", path.display());
    let mut table: toml::Table = toml::from_str(&text).with_context(in_file)?;
    let artifacts = match table.remove("artifacts") {
        Some(v) => ArtifactsTable::deserialize(v)
            .map_err(|e| anyhow::anyhow!("[artifacts]: {e}"))
            .with_context(in_file)?,
        None => ArtifactsTable::default(),
    };
    let sandbox = match table.remove("sandbox") {
        Some(v) => SandboxTable::deserialize(v)
            .map_err(|e| anyhow::anyhow!("[sandbox]: {e}"))
            .with_context(in_file)?,
        None => SandboxTable::default(),
    };
    let env = match table.remove("env") {
        Some(v) => EnvTable::deserialize(v)
            .map_err(|e| anyhow::anyhow!("[env]: {e}"))
            .with_context(in_file)?,
        None => EnvTable::default(),
    };
    let limits = match table.remove("limits") {
        Some(v) => LimitsTable::deserialize(v)
            .map_err(|e| anyhow::anyhow!("[limits]: {e}"))
            .with_context(in_file)?,
        None => LimitsTable::default(),
    };
    let terminal = match table.remove("terminal") {
        Some(v) => TerminalTable::deserialize(v)
            .map_err(|e| anyhow::anyhow!("[terminal]: {e}"))
            .with_context(in_file)?,
        None => TerminalTable::default(),
    };
    let window = match table.remove("window") {
        Some(v) => WindowTable::deserialize(v)
            .map_err(|e| anyhow::anyhow!("[window]: {e}"))
            .with_context(in_file)?,
        None => WindowTable::default(),
    };
    let policy = PolicyConfig::deserialize(toml::Value::Table(table))
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(in_file)?;
    Ok(FileConfig {
        policy,
        artifacts,
        sandbox,
        limits,
        env,
        terminal,
        window,
    })
}

impl ArtifactsTable {
    fn retention(&self, flags: &RetentionArgs) -> anyhow::Result<Retention> {
        let mut r = Retention::default();
        if let Some(n) = flags.keep_artifacts.or(self.max_count) {
            r.max_count = n;
        }
        let bytes = match (&flags.keep_artifact_bytes, &self.max_bytes) {
            (Some(b), _) => Some(*b),
            (None, Some(toml::Value::Integer(n))) => Some(
                u64::try_from(*n)
                    .map_err(|_| anyhow::anyhow!("artifacts.max_bytes must not be negative"))?,
            ),
            (None, Some(toml::Value::String(s))) => {
                Some(parse_size(s).map_err(|e| anyhow::anyhow!("artifacts.max_bytes: {e}"))?)
            }
            (None, Some(other)) => anyhow::bail!(
                "artifacts.max_bytes must be a number of bytes or a size such as \"2G\", not {other}"
            ),
            (None, None) => None,
        };
        if let Some(b) = bytes {
            r.max_total_bytes = b;
        }
        Ok(r)
    }
}

fn load_policy(args: &PolicyArgs, workdir: &std::path::Path) -> anyhow::Result<Policy> {
    policy_from(load_config(args.config.as_deref())?.policy, args, workdir)
}

fn policy_from(
    mut config: PolicyConfig,
    args: &PolicyArgs,
    workdir: &std::path::Path,
) -> anyhow::Result<Policy> {
    if args.workspace_only {
        config.workspace_only = true;
    }
    if config.workspace_only && config.workspace_roots.is_empty() {
        config.workspace_roots.push(workdir.to_path_buf());
    }
    Policy::new(config).map_err(|e| anyhow::anyhow!("{e}"))
}

#[allow(clippy::too_many_arguments)] // the operator's flag groups, each applied with its table
fn build_tool(
    artifacts: Option<PathBuf>,
    max_bytes: Option<usize>,
    direction: Option<&str>,
    policy: &PolicyArgs,
    retention: &RetentionArgs,
    containment: &ContainmentArgs,
    terminal: &TerminalArgs,
    adjust: impl FnOnce(&mut Config) -> anyhow::Result<()>,
) -> anyhow::Result<Tool> {
    let file = load_config(policy.config.as_deref())?;
    let mut config = Config {
        retention: file.artifacts.retention(retention)?,
        ..Config::default()
    };
    adjust(&mut config)?;
    containment.apply(&file.sandbox, &file.limits, &file.env, &mut config)?;
    terminal.apply(&file.terminal, &mut config)?;
    file.window.apply(&mut config)?;
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
    let policy = policy_from(file.policy, policy, &config.workdir)?;
    Ok(Tool::new_with_policy(config, Arc::new(policy)))
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
    // `-C DIR` is where the command runs and so the root the workspace (the policy's
    // `--workspace-only`, the sandbox's default workspace) is measured from.
    // On a remote target the directory is the far side's, resolved there.
    let workdir = match &args.cwd {
        Some(dir) if !dir.is_empty() && !args.remote.is_remote() => Some(named_dir(dir)?),
        _ => None,
    };
    let mut tool = build_tool(
        args.artifacts.clone(),
        args.max_bytes,
        args.direction.as_deref(),
        &args.policy,
        &args.retention,
        &args.containment,
        &args.terminal,
        |config| {
            if let Some(dir) = &workdir {
                config.workdir.clone_from(dir);
            }
            // One call per process: a shell prepared for a next call would only be ended.
            config.prepared_shells.per_key = 0;
            args.remote.apply(config)
        },
    )?;
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
            let mut env = std::collections::BTreeMap::new();
            for kv in &args.env {
                let Some((k, v)) = kv.split_once('=') else {
                    anyhow::bail!("--env expects K=V, got {kv:?}");
                };
                env.insert(k.to_owned(), v.to_owned());
            }
            let mut request = Request::from_words(&args.command);
            request.cwd = match &workdir {
                Some(dir) => Some(dir.display().to_string()),
                None => args.cwd.clone(),
            };
            request.env = env;
            request.timeout = args.timeout;
            request.head = args.head;
            request.tail = args.tail;
            request.pty = args.pty;
            request
        }
    };
    let cancel = CancelToken::new();
    install_cancel_handlers(cancel.clone());
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
fn progress_thread(observer: Arc<Observer>) -> (CancelToken, std::thread::JoinHandle<()>) {
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

/// `artifact --grep` (local or remote), and `artifact --target URI ID`: read through the tool's
/// `artifact_read`, the one reader the servers use too, so the CLI prints what a model reads.
fn artifact_through_tool(args: &ArtifactArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(
        args.lines.is_none() || args.target.is_none(),
        "--lines reads a local artifact; with --target, read the whole artifact, use --grep, or use artifact_read with offset/limit through serve"
    );
    let mut config = Config::default();
    config.prepared_shells.per_key = 0;
    if let Some(dir) = &args.artifacts {
        config.artifacts_dir.clone_from(dir);
    }
    if let Some(target) = &args.target {
        config.remote.target = Some(
            target
                .parse()
                .map_err(|e| anyhow::anyhow!("--target: {e}"))?,
        );
        config
            .remote
            .settings
            .remote_binary
            .clone_from(&args.remote_binary);
    }
    let tool = Tool::new(config);
    let read = agent_exec_core::ArtifactRead::new(args.id.clone());
    let mut out = std::io::stdout().lock();
    let code = match &args.grep {
        Some(pattern) => {
            let result = tool.artifact_read(&read.grep(pattern.clone(), args.context.unwrap_or(0)));
            print_artifact_page(&mut out, &result)?
        }
        // The whole artifact, page after page (one read is at most the output window).
        None => {
            let mut offset = 0;
            loop {
                let result = tool.artifact_read(&read.clone().range(offset, None));
                if print_artifact_page(&mut out, &result)? != 0 {
                    break 1;
                }
                match result.details.next_offset {
                    Some(next) => offset = next,
                    None => break 0,
                }
            }
        }
    };
    tool.shutdown();
    Ok(code)
}

/// Prints a page `artifact_read` answered (without the note that says where the next one
/// starts); an error goes to stderr and gives 1.
fn print_artifact_page(out: &mut impl Write, result: &ToolResult) -> anyhow::Result<i32> {
    if result.outcome() != agent_exec_core::Outcome::Success {
        eprintln!("agent-exec: {}", result.text());
        return Ok(1);
    }
    out.write_all(result.artifact_page().as_bytes())?;
    Ok(0)
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
    exit_code(result)
}

fn cmd_artifact(args: &ArtifactArgs) -> anyhow::Result<i32> {
    if args.target.is_some() || args.grep.is_some() {
        return artifact_through_tool(args);
    }
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

/// A directory the user named on the command line, made absolute (`-C ../x`, `-C ~/p`).
/// Whether it exists is the request's check (an `invalid_request` result).
fn named_dir(dir: &str) -> anyhow::Result<PathBuf> {
    let expanded = match (dir.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(dir),
    };
    Ok(std::path::absolute(expanded)?)
}

fn cmd_check(args: &CheckArgs) -> anyhow::Result<i32> {
    // A relative `-C` is relative to where `check` runs; the directory need not exist (the
    // command is only judged).
    let cwd = match &args.cwd {
        Some(c) => std::path::absolute(c)?,
        None => std::env::current_dir()?,
    };
    let policy = load_policy(&args.policy, &cwd)?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let command = Request::from_words(&args.command)
        .command
        .unwrap_or_default();
    let verdict = policy.check(
        &command,
        &PolicyContext {
            cwd: &cwd,
            home: home.as_deref(),
            env_keys: &[],
        },
    );
    let mut text = String::new();
    if args.json {
        text = serde_json::to_string_pretty(&verdict)?;
        text.push('\n');
    } else {
        let decision = serde_json::to_value(verdict.decision)?;
        text.push_str(&format!(
            "{}: {}\n",
            decision.as_str().unwrap_or("?"),
            verdict.reason
        ));
        if let Some(rule) = &verdict.rule {
            text.push_str(&format!("rule: {rule}\n"));
        }
        for c in &verdict.commands {
            text.push_str(&format!("command: {c}\n"));
        }
    }
    // A reader that stops early (`| head -n 1`) is not an error.
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(match verdict.decision {
        agent_exec_core::Decision::Allow => 0,
        _ => 126,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parser built for `run` alone helps and parses `run` as the whole one does.
    #[test]
    fn runs_own_parser_matches_the_whole_one() {
        let help = |mut command: clap::Command| {
            command.build();
            command
                .find_subcommand_mut("run")
                .expect("run")
                .render_long_help()
                .to_string()
        };
        assert_eq!(help(command_for(Some("run"))), help(Cli::command()));
        for argv in [
            vec!["agent-exec", "run", "--", "echo", "hi"],
            vec!["agent-exec", "run", "--timeout", "5", "--json", "ls -la"],
            vec!["agent-exec", "run", "--sandbox", "read-only", "--", "true"],
        ] {
            let parse = |command: clap::Command| {
                let matches = command.try_get_matches_from(&argv).expect("parses");
                format!(
                    "{:?}",
                    Cli::from_arg_matches(&matches).expect("a command").command
                )
            };
            assert_eq!(
                parse(command_for(Some("run"))),
                parse(Cli::command()),
                "{argv:?}"
            );
        }
        let error = |command: clap::Command| {
            command
                .try_get_matches_from(["agent-exec", "run", "--bogus"])
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(error(command_for(Some("run"))), error(Cli::command()));
    }
}
