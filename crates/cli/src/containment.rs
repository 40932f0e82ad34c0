//! The operator's containment (contract §5, §8): the sandbox, limit and secret flags of `run`,
//! `serve` and `mcp`, and the `[sandbox]` / `[limits]` / `[env]` tables of `--config`. Flags win
//! over the file; deny-read paths and withheld names from either are added to the defaults
//! (never fewer than those).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_exec_core::{Config, NetworkMode, SandboxMode, SandboxProfile};
use clap::Args;
use serde::Deserialize;

use crate::args::parse_size;

#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ContainmentArgs {
    /// Sandbox of every command: workspace-write, read-only or off (`sandbox.mode`). Default:
    /// workspace-write with the network on, wherever this kernel can enforce it (else off, with
    /// a warning); a mode named here fails closed instead, and has the network off unless
    /// --network on.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    sandbox: Option<SandboxMode>,
    /// What workspace-write lets builds and installs write besides the workspace: dev (the
    /// default: ~/.cache, cargo's registry, npm, pnpm, Yarn, Maven, Gradle and Go caches, the
    /// pip --user site) or none (`sandbox.profile`).
    #[arg(long, value_name = "NAME", value_parser = parse_profile)]
    sandbox_profile: Option<SandboxProfile>,
    /// The workspace root, writable in workspace-write (default: the working directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Another writable root in workspace-write, e.g. ~/.cache (repeatable).
    #[arg(long, value_name = "DIR")]
    writable: Vec<PathBuf>,
    /// Network of sandboxed commands: on or off. Default: on, but off when --sandbox names a
    /// mode or --allow-host is given.
    #[arg(long, value_name = "MODE", value_parser = parse_network)]
    network: Option<NetworkMode>,
    /// With the network off, a host sandboxed commands may still reach over HTTP/HTTPS through
    /// agent-exec's proxy: HOST or HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST[:PORT]")]
    allow_host: Vec<String>,
    /// A path no sandboxed command may read, besides the defaults (~/.ssh, ~/.aws, …) (repeatable).
    #[arg(long, value_name = "PATH")]
    deny_read: Vec<PathBuf>,
    /// Processes and threads one call may have at once.
    #[arg(long, value_name = "N")]
    max_procs: Option<u64>,
    /// Memory of one call, all its processes together (512M, 2G).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
    /// CPU time of one call's processes, in seconds.
    #[arg(long, value_name = "SECONDS")]
    max_cpu: Option<u64>,
    /// The largest file a call may write (10M, 1G).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_file_size: Option<u64>,
    /// Pass this inherited variable to commands although its name looks like a credential
    /// (*KEY*, *SECRET*, *TOKEN*, *PASSWORD*, … are withheld by default); `*` wildcards, `*`
    /// alone passes every one (repeatable; `env.pass`).
    #[arg(long, value_name = "NAME")]
    pass_env: Vec<String>,
}

fn parse_mode(text: &str) -> Result<SandboxMode, String> {
    SandboxMode::parse(text).ok_or_else(|| {
        format!("{text:?} is not a sandbox mode: use off, read-only or workspace-write")
    })
}

fn parse_profile(text: &str) -> Result<SandboxProfile, String> {
    SandboxProfile::parse(text)
        .ok_or_else(|| format!("{text:?} is not a sandbox profile: use dev or none"))
}

fn parse_network(text: &str) -> Result<NetworkMode, String> {
    match text {
        "off" => Ok(NetworkMode::Off),
        "on" => Ok(NetworkMode::On),
        _ => Err(format!("{text:?} is not a network mode: use off or on")),
    }
}

/// `[sandbox]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct SandboxTable {
    mode: Option<String>,
    profile: Option<String>,
    workspace: Option<PathBuf>,
    writable: Vec<PathBuf>,
    network: Option<String>,
    allow_hosts: Vec<String>,
    deny_read: Vec<PathBuf>,
}

/// `[env]` of the config file: which inherited variables commands get.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct EnvTable {
    /// Names passed although they look like credentials (`*` wildcards).
    pass: Vec<String>,
    /// More names to withhold (`*` wildcards, case-insensitive), besides the defaults.
    withhold: Vec<String>,
    /// `false` turns the rule off: every inherited variable reaches commands.
    withhold_secrets: Option<bool>,
}

/// `[limits]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct LimitsTable {
    procs: Option<u64>,
    /// Bytes, or a size such as `512M`.
    memory: Option<toml::Value>,
    cpu: Option<u64>,
    file_size: Option<toml::Value>,
}

/// `~/x` → `$HOME/x`; a relative path → under `base`.
fn expand(path: &Path, base: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    };
    base.join(path)
}

fn size_value(key: &str, value: Option<&toml::Value>) -> anyhow::Result<Option<u64>> {
    Ok(match value {
        None => None,
        Some(toml::Value::Integer(n)) => Some(
            u64::try_from(*n).map_err(|_| anyhow::anyhow!("limits.{key} must not be negative"))?,
        ),
        Some(toml::Value::String(s)) => {
            Some(parse_size(s).map_err(|e| anyhow::anyhow!("limits.{key}: {e}"))?)
        }
        Some(other) => anyhow::bail!(
            "limits.{key} must be a number of bytes or a size such as \"512M\", not {other}"
        ),
    })
}

impl ContainmentArgs {
    /// Applies the file's tables, then the flags, to `config`.
    pub(crate) fn apply(
        &self,
        sandbox: &SandboxTable,
        limits: &LimitsTable,
        env: &EnvTable,
        config: &mut Config,
    ) -> anyhow::Result<()> {
        let secrets = &mut config.env.secrets;
        if env.withhold_secrets == Some(false) {
            secrets.withhold.clear();
        }
        secrets.withhold.extend(env.withhold.iter().cloned());
        secrets
            .pass
            .extend(env.pass.iter().chain(&self.pass_env).cloned());
        for name in &secrets.pass {
            anyhow::ensure!(
                !name.is_empty() && !name.contains('='),
                "--pass-env {name:?}: give a variable's name (or a pattern with *), not a value"
            );
        }
        let base = config.workdir.clone();
        let s = &mut config.sandbox;
        if let Some(mode) = &sandbox.mode {
            s.mode = Some(parse_mode(mode).map_err(|e| anyhow::anyhow!("sandbox.mode: {e}"))?);
        }
        if let Some(profile) = &sandbox.profile {
            s.profile =
                parse_profile(profile).map_err(|e| anyhow::anyhow!("sandbox.profile: {e}"))?;
        }
        if let Some(network) = &sandbox.network {
            s.network =
                Some(parse_network(network).map_err(|e| anyhow::anyhow!("sandbox.network: {e}"))?);
        }
        s.workspace = self
            .workspace
            .as_deref()
            .or(sandbox.workspace.as_deref())
            .map(|p| expand(p, &base));
        s.writable = sandbox
            .writable
            .iter()
            .chain(&self.writable)
            .map(|p| expand(p, &base))
            .collect();
        s.allow_hosts = sandbox
            .allow_hosts
            .iter()
            .chain(&self.allow_host)
            .cloned()
            .collect();
        s.deny_read.extend(
            sandbox
                .deny_read
                .iter()
                .chain(&self.deny_read)
                .map(|p| expand(p, &base)),
        );
        if let Some(mode) = self.sandbox {
            s.mode = Some(mode);
        }
        if let Some(profile) = self.sandbox_profile {
            s.profile = profile;
        }
        if let Some(network) = self.network {
            s.network = Some(network);
        }
        if let Some(dir) = &s.workspace {
            anyhow::ensure!(
                dir.is_dir(),
                "the workspace {} is not a directory; give an existing one with --workspace",
                dir.display()
            );
        }
        let l = &mut config.limits;
        l.procs = self.max_procs.or(limits.procs);
        l.memory = match self.max_memory {
            Some(n) => Some(n),
            None => size_value("memory", limits.memory.as_ref())?,
        };
        l.cpu = self.max_cpu.or(limits.cpu).map(Duration::from_secs);
        l.file_size = match self.max_file_size {
            Some(n) => Some(n),
            None => size_value("file_size", limits.file_size.as_ref())?,
        };
        for (flag, value) in [
            ("--max-procs", l.procs),
            ("--max-cpu", l.cpu.map(|d| d.as_secs())),
        ] {
            anyhow::ensure!(value != Some(0), "{flag} must be at least 1");
        }
        for (flag, value) in [("--max-memory", l.memory), ("--max-file-size", l.file_size)] {
            anyhow::ensure!(value != Some(0), "{flag} must be more than 0 bytes");
        }
        Ok(())
    }
}

/// The sandbox line of `agent-exec --version`: whether the default sandbox is on here.
pub(crate) fn version_line() -> String {
    let support = agent_exec_core::sandbox::support();
    match agent_exec_core::sandbox_unavailable_here() {
        None => format!(
            "sandbox: available ({}; modes read-only, workspace-write); default: workspace-write, profile dev, network on (--sandbox off opts out)",
            support.describe()
        ),
        Some(why) => format!(
            "sandbox: not available ({}): {why}; default: off here, so commands run unconfined",
            support.describe()
        ),
    }
}
