//! The tool's configuration, every default documented (and checked by a test).

use std::path::PathBuf;
use std::time::Duration;

use agent_exec_executor::DrainLimits;
use agent_exec_executor::env::EnvConfig;
use agent_exec_sink::{Direction, Retention};

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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_timeout: Duration::from_mins(2),
            grace: Duration::from_secs(2),
            max_bytes: 51_200,
            max_lines: None,
            direction: Direction::Smart,
            artifacts_dir: agent_exec_sink::ArtifactStore::default_dir(),
            artifact_cap: 100 << 20,
            retention: Retention::default(),
            shell: None,
            env: EnvConfig::default(),
            drain: DrainLimits::default(),
            workdir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }
}
