//! The command line: every subcommand's arguments (the flag groups of containment, the
//! terminal and remote targets are in their own files), and the parser built for `run` alone.

use std::path::PathBuf;

use agent_exec_core::Request;
use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::containment::ContainmentArgs;
use crate::remote::RemoteArgs;
use crate::terminal::TerminalArgs;

/// What every command runs in unless the operator says otherwise (the help of `run`, `serve`,
/// `mcp` and the top level).
pub(crate) const DEFAULTS_HELP: &str = "By default commands run in agent-exec's sandbox (workspace-write, where this kernel can enforce it): they may write the working directory (or -C/--workspace), --writable roots, the build caches (~/.cache, cargo, npm, pip, Go, Maven, Gradle) and a private TMPDIR, use the network, but not read ~/.ssh and the other credentials; variables named like credentials (*KEY*, *TOKEN*, *SECRET*, ...) are withheld. --sandbox off opts out; --pass-env NAME passes a variable. `agent-exec --version` says what this machine enforces.";

/// Run shell commands for LLM agents: bounded output, no hangs, no survivors, a real policy.
#[derive(Debug, Parser)]
#[command(name = "agent-exec", version, about, after_help = DEFAULTS_HELP)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Cmd,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Cmd {
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
pub(crate) struct PolicyArgs {
    /// Configuration (TOML): the policy (docs/policy.md) and an [artifacts] table.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Deny paths outside the workspace root (default: the working directory).
    #[arg(long)]
    pub(crate) workspace_only: bool,
}

/// The flags of `run` that set a request's fields: each says where it is declared that it
/// cannot go with `--request` (the whole request as JSON), and [`RequestArgs::apply`] sets its
/// field. A new request field's flag is these two places.
#[derive(Debug, Args)]
pub(crate) struct RequestArgs {
    /// Working directory.
    #[arg(short = 'C', long, conflicts_with = "request")]
    pub(crate) cwd: Option<String>,
    /// Timeout in seconds (1-3600, default 120).
    #[arg(short = 't', long, conflicts_with = "request")]
    pub(crate) timeout: Option<i64>,
    /// Extra environment variable (repeatable).
    #[arg(
        short = 'e',
        long = "env",
        value_name = "K=V",
        conflicts_with = "request"
    )]
    pub(crate) env: Vec<String>,
    /// Keep the first N lines.
    #[arg(long, conflicts_with = "request")]
    pub(crate) head: Option<u64>,
    /// Keep the last N lines.
    #[arg(long, conflicts_with = "request")]
    pub(crate) tail: Option<u64>,
    /// Run under a pseudo-terminal.
    #[arg(long, conflicts_with = "request")]
    pub(crate) pty: bool,
}

impl RequestArgs {
    /// Sets the request's fields the flags give (the working directory is `run`'s to resolve).
    pub(crate) fn apply(&self, request: &mut Request) -> anyhow::Result<()> {
        for kv in &self.env {
            let Some((k, v)) = kv.split_once('=') else {
                anyhow::bail!("--env expects K=V, got {kv:?}");
            };
            request.env.insert(k.to_owned(), v.to_owned());
        }
        request.timeout = self.timeout;
        request.head = self.head;
        request.tail = self.tail;
        request.pty = self.pty;
        Ok(())
    }
}

/// `run`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) fields: RequestArgs,
    #[command(flatten)]
    pub(crate) tool: ToolArgs,
    /// Print the whole result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Ask on the terminal when the policy says "ask" (needs a terminal).
    #[arg(long)]
    pub(crate) approve: bool,
    /// Read the request as JSON from FILE, or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    pub(crate) request: Option<String>,
    /// The command. Options of agent-exec come first; the command starts at its first word
    /// (or after `--`) and runs to the end. One word is a shell line as it stands
    /// (`agent-exec run -- 'make 2>&1 | tail'`); several words reach the program intact, as
    /// argv (`agent-exec run -- sh -c 'echo hi'`), joined with spaces and quoted where needed.
    #[arg(trailing_var_arg = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// How many spilled outputs the artifact directory keeps (the oldest go first).
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct RetentionArgs {
    /// Most artifacts kept (default 200; `artifacts.max_count` in --config).
    #[arg(long, value_name = "N")]
    pub(crate) keep_artifacts: Option<usize>,
    /// Most bytes all artifacts may take, e.g. 500M or 2G (default 2G; `artifacts.max_bytes`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) keep_artifact_bytes: Option<u64>,
}

/// `512K`, `100M`, `2G`, `1T` (powers of 1024) or plain bytes.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
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
pub(crate) struct ArtifactArgs {
    /// `ID` or `artifact://ID`.
    pub(crate) id: String,
    /// Only lines A to B (1-based, inclusive): `A:B`, `A:` or `:B`.
    #[arg(long, value_name = "A:B", conflicts_with = "grep")]
    pub(crate) lines: Option<String>,
    /// Only the lines matching this regular expression, numbered (`N:line`, as `grep -n`).
    #[arg(long, value_name = "REGEX")]
    pub(crate) grep: Option<String>,
    /// With --grep: N lines of context around each match (`N-line`, `--` between groups).
    #[arg(short = 'C', long, value_name = "N", requires = "grep")]
    pub(crate) context: Option<u64>,
    /// Artifact directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) artifacts: Option<PathBuf>,
    /// Read the artifact of a call that ran on this target (ssh://…, docker://…, podman://…,
    /// kubectl://…), through its agent-exec.
    #[arg(long, value_name = "URI")]
    pub(crate) target: Option<String>,
    /// The far side's agent-exec (with --target).
    #[arg(long, value_name = "PATH")]
    pub(crate) remote_binary: Option<String>,
}

#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ServeArgs {
    /// The working directory of calls (relative `cwd`s resolve against it; the default
    /// workspace). Default: where agent-exec runs. MCP clients often start servers in `/`.
    #[arg(short = 'C', long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) tool: ToolArgs,
    /// Sessions source a cached snapshot of ~/.bashrc (functions, aliases, options, PATH).
    #[arg(long)]
    pub(crate) rc_snapshot: bool,
    /// Put this before every session command (`<prefix> <command>`).
    #[arg(long, value_name = "PREFIX")]
    pub(crate) command_prefix: Option<String>,
    /// A call still running after this many milliseconds answers with outcome `running`, its
    /// output so far and a job id, and goes on as a background job (a request's `yield_ms`
    /// wins; 0: calls run to their end). Default: `[exec] yield_ms`, else off for `serve` and
    /// 30000 for `mcp`.
    #[arg(long, value_name = "MS")]
    pub(crate) yield_ms: Option<u64>,
    /// Most sessions kept (least recently used closed first; when every one is running a
    /// command, a call on a new session waits for one, up to its timeout).
    #[arg(long, default_value_t = 16)]
    pub(crate) max_sessions: usize,
    /// Most requests running at once; past it a request waits its turn in a bounded queue
    /// (past that, the server reads no more input until there is room).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_inflight: u32,
    /// The longest request line read (`8M`, `512K`); a longer one is answered with an error
    /// naming the limit, skipped, and the server goes on.
    #[arg(long, value_name = "SIZE", default_value = "8M", value_parser = parse_size)]
    pub(crate) max_line_bytes: u64,
    /// Shells kept started ahead of one-shot calls, per kind of call (shell, environment,
    /// sandbox, limits); each runs one call and is replaced in the background. 0: off.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub(crate) prepared_shells: usize,
    /// End of input ends everything at once: calls in flight are cancelled, sessions and jobs
    /// end, the server exits (how a remote target's far side runs: its input closing means the
    /// connection dropped). Without it, calls in flight finish and are answered first.
    #[arg(long)]
    pub(crate) end_on_eof: bool,
    /// The operator's settings as a near side sends them to a remote target's far side (one
    /// word, made by agent-exec): they replace the settings flags and --config.
    #[arg(long, value_name = "WORD", hide = true)]
    pub(crate) settings: Option<String>,
}

/// The settings that make a `Tool`, the same for `run` and `serve`.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ToolArgs {
    /// Bytes of output shown (default 51200).
    #[arg(long)]
    pub(crate) max_bytes: Option<usize>,
    /// Which part of a long output is kept: smart (default), tail, head or both.
    #[arg(long)]
    pub(crate) direction: Option<String>,
    /// How an output that fits the window is shown: compact (default: passing tests, progress
    /// and repeated lines folded into counted markers, the raw output kept as an artifact) or
    /// raw (as it is).
    #[arg(long, value_name = "compact|raw")]
    pub(crate) view: Option<String>,
    /// Artifact directory (default: $AGENT_EXEC_ARTIFACTS or the user's state dir).
    #[arg(long, value_name = "DIR")]
    pub(crate) artifacts: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
    #[command(flatten)]
    pub(crate) retention: RetentionArgs,
    #[command(flatten)]
    pub(crate) containment: ContainmentArgs,
    #[command(flatten)]
    pub(crate) terminal: TerminalArgs,
    #[command(flatten)]
    pub(crate) remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Print the verdict as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
    /// Working directory for resolving paths.
    #[arg(short = 'C', long)]
    pub(crate) cwd: Option<PathBuf>,
    /// The command, read as `run` reads it: one word is a shell line; several are joined
    /// with spaces, each quoted where needed (see `run --help`).
    #[arg(trailing_var_arg = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// The command line: for `run` (one process per call: its start is on every call's path) only
/// that subcommand is built; building all nine cost ~0.2 ms, a sixth of a `bash -c true`.
/// A test checks that `run`'s help and parsing are the same either way.
pub(crate) fn command_for(first: Option<&str>) -> clap::Command {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

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
