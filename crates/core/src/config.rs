//! The tool's configuration, every default documented (and checked by a test).

use std::path::PathBuf;
use std::time::Duration;

use agent_exec_executor::env::EnvConfig;
use agent_exec_executor::jobs::JobLimits;
use agent_exec_executor::{
    DrainLimits, Limits, NetworkMode, PreparedSettings, SandboxMode, SandboxSpec,
};
use agent_exec_sink::{Direction, Retention, TerminalSize};

/// How the tool runs commands.
#[derive(Debug, Clone)]
pub struct Config {
    /// Timeout when the request gives none. Default: 120 s.
    pub default_timeout: Duration,
    /// Between SIGTERM and SIGKILL when a command is ended. Default: 2 s.
    pub grace: Duration,
    /// Bytes of output shown to the model. Default: 51200 (50 KiB).
    pub max_bytes: usize,
    /// Lines of output shown, if limited. Default: none.
    pub max_lines: Option<usize>,
    /// Which part of a long output is kept. Default: [`Direction::Smart`]: the tail, plus a
    /// small head and the salient lines (errors, failures, panics…) of the elided middle when
    /// there are any; exactly the tail otherwise.
    pub direction: Direction,
    /// Artifact directory. Default: `$AGENT_EXEC_ARTIFACTS`, else the user's state dir
    /// (`~/.local/state/agent-exec/artifacts`).
    pub artifacts_dir: PathBuf,
    /// Most bytes in one artifact. Default: 100 MiB.
    pub artifact_cap: u64,
    /// Artifact retention (count, total bytes). Default: 200 artifacts, 2 GiB.
    pub retention: Retention,
    /// Shell for `command`; `None` = `bash -o pipefail`, or `sh` where there is no bash. Default: `None`.
    pub shell: Option<PathBuf>,
    /// Environment construction (inherit policy, hardening, overrides). Default: inherit all, hardened.
    pub env: EnvConfig,
    /// Draining pipes of background children after the main process exits. Default: idle 250 ms, max 2 s.
    pub drain: DrainLimits,
    /// The tool's working directory, against which request `cwd`s resolve. Default: the process's cwd.
    pub workdir: PathBuf,
    /// Persistent sessions. Default: [`SessionSettings::default`].
    pub sessions: SessionSettings,
    /// Background jobs: at most 32 running, 256 KiB of recent output each, finished jobs kept
    /// an hour (at most 128 of them). Default: [`JobLimits::default`].
    pub jobs: JobLimits,
    /// The operator's sandbox (contract §8); a request may only tighten its mode.
    pub sandbox: SandboxSettings,
    /// Resource limits of every call (contract §8).
    pub limits: Limits,
    /// Prepared shells for one-shot shell calls: shells started ahead of time, each used for
    /// one call (see [`agent_exec_executor::prepared`]). Default: 2 per kind of call (shell,
    /// environment, sandbox, limits), at most 4 kinds, ended after a minute unused; `per_key`
    /// 0 turns them off (`agent-exec run` does: one call per process).
    pub prepared_shells: PreparedSettings,
    /// Remote targets (contract §9): where calls run when they name none, which a request may
    /// name, and how connections are made. Default: none; every call runs here.
    pub remote: crate::remote::RemoteConfig,
    /// The terminal of `pty` calls and jobs: the size programs see (`stty size`) and the screen
    /// their output is rendered on. Default: 80×24.
    pub pty_size: TerminalSize,
    /// A one-shot `pty` call whose output has been idle this long while it reads its terminal
    /// (a prompt nobody can answer) is ended with outcome `timeout` and a note quoting the
    /// prompt; `None`: it waits for its timeout. Default: 5 s
    /// ([`PROMPT_IDLE`](agent_exec_executor::PROMPT_IDLE)).
    pub prompt_idle: Option<Duration>,
    /// What the `smart` window counts as salient. Default: the sink's defaults
    /// ([`DEFAULT_PATTERNS`](agent_exec_sink::DEFAULT_PATTERNS)).
    pub salient: agent_exec_sink::SalientConfig,
}

/// The operator's sandbox settings (flags `--sandbox`, `--workspace`, `--writable`,
/// `--network`, `--allow-host`, `--deny-read`; the `[sandbox]` table of `--config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The mode. Default: `off`.
    pub mode: SandboxMode,
    /// The workspace root. Default (`None`): the working directory ([`Config::workdir`]).
    pub workspace: Option<PathBuf>,
    /// More writable roots.
    pub writable: Vec<PathBuf>,
    /// The network of sandboxed calls. Default (`None`): off.
    pub network: Option<NetworkMode>,
    /// With the network off, hosts still reachable through agent-exec's proxy.
    pub allow_hosts: Vec<String>,
    /// Paths no sandboxed command may read. Default: [`default_deny_read`].
    pub deny_read: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: SandboxMode::Off,
            workspace: None,
            writable: Vec::new(),
            network: None,
            allow_hosts: Vec::new(),
            deny_read: default_deny_read(),
        }
    }
}

/// Credentials under `~` (contract §8): `~/.ssh ~/.aws ~/.gnupg ~/.config/gcloud ~/.azure ~/.kube
/// ~/.docker/config.json ~/.netrc ~/.git-credentials ~/.npmrc ~/.pypirc`.
pub fn default_deny_read() -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return Vec::new();
    };
    let home = PathBuf::from(home);
    [
        ".ssh",
        ".aws",
        ".gnupg",
        ".config/gcloud",
        ".azure",
        ".kube",
        ".docker/config.json",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect()
}

impl SandboxSettings {
    /// What a call in `mode` may do (`None` for `off`); `workdir` is the default workspace,
    /// `artifacts` the artifact store (never writable from inside, wherever it lies).
    pub fn spec(
        &self,
        mode: SandboxMode,
        workdir: &std::path::Path,
        artifacts: &std::path::Path,
    ) -> Option<SandboxSpec> {
        (mode != SandboxMode::Off).then(|| SandboxSpec {
            mode,
            workspace: self
                .workspace
                .clone()
                .unwrap_or_else(|| workdir.to_path_buf()),
            writable: self.writable.clone(),
            deny_read: self.deny_read.clone(),
            read_only: vec![artifacts.to_path_buf()],
            network: self.network.unwrap_or(NetworkMode::Off),
            allow_hosts: self.allow_hosts.clone(),
        })
    }
}

/// How persistent sessions behave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSettings {
    /// Most sessions kept; the least recently used is closed first. Default: 16.
    pub max_sessions: usize,
    /// A session unused this long is closed. Default: 30 minutes.
    pub idle_expiry: Duration,
    /// Source a snapshot of the user's `~/.bashrc` (functions, aliases, options, PATH) when a
    /// session starts; the snapshot is made once and cached. Default: `false`.
    pub rc_snapshot: bool,
    /// Where rc snapshots are cached. Default: `$XDG_CACHE_HOME/agent-exec` or `~/.cache/agent-exec`.
    pub cache_dir: PathBuf,
    /// A prefix put before every session command (`<prefix> <command>`). Default: none.
    pub command_prefix: Option<String>,
}

impl Default for SessionSettings {
    fn default() -> Self {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        SessionSettings {
            max_sessions: 16,
            idle_expiry: Duration::from_mins(30),
            rc_snapshot: false,
            cache_dir: cache.join("agent-exec"),
            command_prefix: None,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_timeout: Duration::from_mins(2),
            grace: Duration::from_secs(2),
            max_bytes: Config::DEFAULT_MAX_BYTES,
            max_lines: None,
            direction: Direction::Smart,
            artifacts_dir: agent_exec_sink::ArtifactStore::default_dir(),
            artifact_cap: 100 << 20,
            retention: Retention::default(),
            shell: None,
            env: EnvConfig::default(),
            drain: DrainLimits::default(),
            workdir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            sessions: SessionSettings::default(),
            jobs: JobLimits::default(),
            sandbox: SandboxSettings::default(),
            limits: Limits::default(),
            prepared_shells: PreparedSettings::default(),
            remote: crate::remote::RemoteConfig::default(),
            pty_size: TerminalSize::DEFAULT,
            prompt_idle: Some(agent_exec_executor::PROMPT_IDLE),
            salient: agent_exec_sink::SalientConfig::default(),
        }
    }
}

impl Config {
    /// Bytes of output shown when nothing else is configured (50 KiB).
    pub const DEFAULT_MAX_BYTES: usize = 51_200;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults the doc comments state, checked.
    #[test]
    fn documented_defaults() {
        let c = Config::default();
        assert_eq!(c.default_timeout, Duration::from_mins(2));
        assert_eq!(c.grace, Duration::from_secs(2));
        assert_eq!(c.max_bytes, 51_200);
        assert_eq!(c.max_lines, None);
        assert_eq!(c.direction, Direction::Smart);
        assert_eq!(c.artifact_cap, 100 << 20);
        assert_eq!(
            c.retention,
            Retention {
                max_count: 200,
                max_total_bytes: 2 << 30
            }
        );
        assert_eq!(c.shell, None);
        assert_eq!(
            c.drain,
            DrainLimits {
                idle: Duration::from_millis(250),
                max: Duration::from_secs(2)
            }
        );
        assert_eq!(c.sessions.max_sessions, 16);
        assert_eq!(c.sessions.idle_expiry, Duration::from_mins(30));
        assert!(!c.sessions.rc_snapshot);
        assert_eq!(c.sessions.command_prefix, None);
        assert_eq!(c.jobs.max_live, 32);
        assert_eq!(c.jobs.ring_bytes, 256 * 1024);
        assert!(c.env.harden);
        assert_eq!(c.sandbox.mode, SandboxMode::Off);
        assert_eq!(c.sandbox.network, None);
        assert_eq!(c.sandbox.deny_read.len(), 11);
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.prepared_shells.per_key, 2);
        assert_eq!(c.prepared_shells.max_keys, 4);
        assert_eq!(c.prepared_shells.idle, Duration::from_mins(1));
        assert_eq!(c.pty_size.to_string(), "80x24");
        assert_eq!(c.prompt_idle, Some(Duration::from_secs(5)));
    }
}
