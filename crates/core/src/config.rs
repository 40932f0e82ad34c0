//! The tool's configuration, every default documented (and checked by a test).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use agent_exec_executor::env::EnvConfig;
use agent_exec_executor::jobs::JobLimits;
use agent_exec_executor::{
    DrainLimits, Limits, NetworkMode, PreparedSettings, SandboxMode, SandboxSpec,
};
use agent_exec_protocol::ViewStyle;
use agent_exec_remote::{Settings, Target, pattern_matches};
use agent_exec_sink::{Direction, Retention, TerminalSize};

/// How the tool runs commands.
///
/// Its serialized form (serde) is the operator's settings as a remote target's far side takes
/// them ([`Config::to_far_settings`]): every setting but what belongs to this machine — its
/// working directory, artifact store, shell, session cache and remote targets — which is
/// skipped, and so the far side's own.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
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
    /// How an output that fits the window is shown. Default: [`ViewStyle::Compact`]: the
    /// lines a model does not need (passing tests, progress, repeated compile steps) folded
    /// into counted markers, the raw output kept as an artifact; a request's `view` wins.
    pub view: ViewStyle,
    /// Artifact directory. Default: `$AGENT_EXEC_ARTIFACTS`, else the user's state dir
    /// (`~/.local/state/agent-exec/artifacts`).
    #[serde(skip)]
    pub artifacts_dir: PathBuf,
    /// Most bytes in one artifact. Default: 100 MiB.
    pub artifact_cap: u64,
    /// Artifact retention (count, total bytes). Default: 200 artifacts, 2 GiB.
    pub retention: Retention,
    /// Shell for `command`; `None` = `bash -o pipefail`, or `sh` where there is no bash. Default: `None`.
    #[serde(skip)]
    pub shell: Option<PathBuf>,
    /// Environment construction (inherit policy, hardening, overrides). Default: inherit all, hardened.
    pub env: EnvConfig,
    /// Draining pipes of background children after the main process exits. Default: idle 250 ms, max 2 s.
    pub drain: DrainLimits,
    /// The tool's working directory, against which request `cwd`s resolve. Default: the process's cwd.
    #[serde(skip)]
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
    #[serde(skip)]
    pub remote: RemoteConfig,
    /// The names the texts give the methods (`job_output`, or as MCP tools `bash_output`):
    /// the client's (a far side of a remote target is told the near side's). Default: the
    /// methods' own.
    pub vocabulary: agent_exec_protocol::Vocabulary,
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
    /// How long a call runs before it yields — answers with outcome `running`, its output so
    /// far and a job id, while the command goes on as a background job — when its request does
    /// not say (`yield_ms`). `None`, or zero (off, said explicitly): calls run to their end
    /// unless they ask. Default: `None` (`serve --yield-ms`, `[exec] yield_ms`; `mcp` sets
    /// 30 s unless either says).
    pub yield_after: Option<Duration>,
}

/// The operator's sandbox settings (flags `--sandbox`, `--sandbox-profile`, `--workspace`,
/// `--writable`, `--network`, `--allow-host`, `--deny-read`; the `[sandbox]` table of
/// `--config`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// The mode the operator chose. Default (`None`): `workspace-write` wherever this kernel can
    /// enforce it, else off with a warning in every call's `details.warnings` (a mode the
    /// operator names fails closed instead).
    pub mode: Option<SandboxMode>,
    /// What builds and installs may write besides the writable roots. Default:
    /// [`SandboxProfile::Dev`].
    pub profile: SandboxProfile,
    /// The workspace root. Default (`None`): the working directory ([`Config::workdir`]).
    pub workspace: Option<PathBuf>,
    /// More writable roots.
    pub writable: Vec<PathBuf>,
    /// The network of sandboxed calls. Default (`None`): on in the default sandbox; off when
    /// the operator names a mode or allows hosts (the proxy is their only way out).
    pub network: Option<NetworkMode>,
    /// With the network off, hosts still reachable through agent-exec's proxy.
    pub allow_hosts: Vec<String>,
    /// Paths no sandboxed command may read. Default: [`default_deny_read`].
    pub deny_read: Vec<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: None,
            profile: SandboxProfile::Dev,
            workspace: None,
            writable: Vec::new(),
            network: None,
            allow_hosts: Vec::new(),
            deny_read: default_deny_read(),
        }
    }
}

/// What a `workspace-write` sandbox lets builds and installs write besides the writable roots.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxProfile {
    /// The caches and stores of the usual toolchains ([`DEV_CACHES`]).
    #[default]
    Dev,
    /// Nothing more.
    None,
}

impl SandboxProfile {
    /// The name of the flag and the config: `dev`, `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxProfile::Dev => "dev",
            SandboxProfile::None => "none",
        }
    }

    /// The profile of a name.
    pub fn parse(name: &str) -> Option<SandboxProfile> {
        match name {
            "dev" => Some(SandboxProfile::Dev),
            "none" => Some(SandboxProfile::None),
            _ => None,
        }
    }
}

/// A cache or store a toolchain writes outside the project: where it is and who uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheDir {
    /// Where it is by default, under the home directory.
    pub under_home: &'static str,
    /// Variables that move it, first set wins: `(NAME, SUBDIRECTORY)` means `$NAME/SUBDIRECTORY`
    /// (the first entry of a `:`-separated list, as `GOPATH`).
    pub moved_by: &'static [(&'static str, &'static str)],
    /// What is done when it does not exist yet (a directory that does not exist cannot be
    /// made writable, and the program's first run inside would fail to make it).
    pub when_missing: WhenMissing,
}

/// What is done about a [`CacheDir`] that does not exist when the sandbox is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenMissing {
    /// Made (empty).
    Make,
    /// Made when one of these programs is on `PATH`.
    MakeFor(&'static [&'static str]),
    /// Left out (it belongs to a tool that makes it when installed).
    Skip,
}

/// The `dev` profile's writable caches (contract §8): what `cargo build`, `npm ci`, `pip
/// install` (into a venv, or `--user`), `go build`, Maven, Gradle, pnpm, Yarn, Bun, NuGet and
/// ccache write outside the project. `~/.cache` holds pip's, uv's, Go's build cache, Yarn
/// classic's, Deno's, sccache's and most others'. `[sandbox] writable` adds to it.
pub const DEV_CACHES: &[CacheDir] = &[
    CacheDir {
        under_home: ".cache",
        moved_by: &[("XDG_CACHE_HOME", "")],
        when_missing: WhenMissing::Make,
    },
    CacheDir {
        under_home: ".cargo/registry",
        moved_by: &[("CARGO_HOME", "registry")],
        when_missing: WhenMissing::MakeFor(&["cargo"]),
    },
    CacheDir {
        under_home: ".cargo/git",
        moved_by: &[("CARGO_HOME", "git")],
        when_missing: WhenMissing::MakeFor(&["cargo"]),
    },
    CacheDir {
        under_home: ".npm",
        moved_by: &[("npm_config_cache", ""), ("NPM_CONFIG_CACHE", "")],
        when_missing: WhenMissing::MakeFor(&["npm", "npx"]),
    },
    CacheDir {
        under_home: ".local/share/pnpm",
        moved_by: &[("PNPM_HOME", "")],
        when_missing: WhenMissing::MakeFor(&["pnpm"]),
    },
    CacheDir {
        under_home: ".yarn",
        moved_by: &[],
        when_missing: WhenMissing::MakeFor(&["yarn"]),
    },
    CacheDir {
        under_home: ".m2",
        moved_by: &[],
        when_missing: WhenMissing::MakeFor(&["mvn"]),
    },
    CacheDir {
        under_home: ".gradle",
        moved_by: &[("GRADLE_USER_HOME", "")],
        when_missing: WhenMissing::MakeFor(&["gradle"]),
    },
    CacheDir {
        under_home: "go/pkg/mod",
        moved_by: &[("GOMODCACHE", ""), ("GOPATH", "pkg/mod")],
        when_missing: WhenMissing::MakeFor(&["go"]),
    },
    // `pip install --user`: the user site and its scripts.
    CacheDir {
        under_home: ".local/lib",
        moved_by: &[("PYTHONUSERBASE", "lib")],
        when_missing: WhenMissing::MakeFor(&["pip", "pip3", "python3"]),
    },
    CacheDir {
        under_home: ".local/bin",
        moved_by: &[("PYTHONUSERBASE", "bin")],
        when_missing: WhenMissing::MakeFor(&["pip", "pip3", "python3"]),
    },
    // Version managers' shims: their `pip`/`gem`/`npm` rehash after an install.
    CacheDir {
        under_home: ".pyenv/shims",
        moved_by: &[("PYENV_ROOT", "shims")],
        when_missing: WhenMissing::Skip,
    },
    CacheDir {
        under_home: ".rbenv/shims",
        moved_by: &[("RBENV_ROOT", "shims")],
        when_missing: WhenMissing::Skip,
    },
    CacheDir {
        under_home: ".nodenv/shims",
        moved_by: &[("NODENV_ROOT", "shims")],
        when_missing: WhenMissing::Skip,
    },
    CacheDir {
        under_home: ".bun/install/cache",
        moved_by: &[("BUN_INSTALL_CACHE_DIR", "")],
        when_missing: WhenMissing::MakeFor(&["bun"]),
    },
    CacheDir {
        under_home: ".nuget/packages",
        moved_by: &[("NUGET_PACKAGES", "")],
        when_missing: WhenMissing::MakeFor(&["dotnet"]),
    },
    CacheDir {
        under_home: ".ccache",
        moved_by: &[("CCACHE_DIR", "")],
        when_missing: WhenMissing::MakeFor(&["ccache"]),
    },
];

impl CacheDir {
    /// Where it is for this process's environment (`None` without a home or a variable).
    pub fn path(&self) -> Option<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        for (name, sub) in self.moved_by {
            if let Some(value) = var(name) {
                let first = value
                    .to_string_lossy()
                    .split(':')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let dir = PathBuf::from(first);
                if dir.is_absolute() {
                    return Some(if sub.is_empty() { dir } else { dir.join(sub) });
                }
            }
        }
        var("HOME").map(|home| PathBuf::from(home).join(self.under_home))
    }
}

/// The `dev` profile's caches here, made when missing and wanted (see [`CacheDir::when_missing`]);
/// worked out once per process.
pub fn dev_caches() -> &'static [PathBuf] {
    static CACHES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    CACHES.get_or_init(|| {
        let on_path = |program: &str| {
            std::env::var_os("PATH").is_some_and(|path| {
                std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
            })
        };
        let mut caches: Vec<PathBuf> = Vec::new();
        for cache in DEV_CACHES {
            let Some(dir) = cache.path() else { continue };
            let wanted = match cache.when_missing {
                WhenMissing::Make => true,
                WhenMissing::MakeFor(programs) => programs.iter().any(|p| on_path(p)),
                WhenMissing::Skip => false,
            };
            if !dir.exists() && wanted {
                // Best effort: without it the tool fails inside as it would have anyway.
                let _ = std::fs::create_dir_all(&dir);
            }
            if dir.is_dir() && !caches.contains(&dir) {
                caches.push(dir);
            }
        }
        caches
    })
}

/// Why the kernel refused the default sandbox in this process (`sandbox::enforceable`): from
/// then on the default is off, as where the kernel lacks a feature outright.
static DEFAULT_REFUSED: OnceLock<String> = OnceLock::new();

/// Why the default sandbox is off.
#[derive(Debug, Clone)]
pub(crate) enum DefaultOff {
    /// This kernel cannot enforce it.
    Unenforceable(agent_exec_executor::sandbox::Unenforceable),
    /// The kernel refused its spec in this process (already said in these words).
    Refused(String),
}

/// The default sandbox's spec was refused by the kernel: the default is off from now on.
pub(crate) fn default_refused(why: String) {
    let _ = DEFAULT_REFUSED.set(why);
}

/// Who set the mode a call runs in: the note of a blocked access says what can be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxOrigin {
    /// agent-exec's default: the operator may widen it (`--writable`, `--sandbox off`).
    Default,
    /// The operator chose it on purpose.
    Operator,
    /// The request tightened it.
    Request,
}

/// Credentials under the home directory that no sandboxed command may read (contract §8):
/// keys, cloud and registry credentials, forges' and agents' tokens, password stores, browser
/// profiles, shell histories. Under `$HOME` and, when it differs, the account's own home.
pub const DENY_READ_UNDER_HOME: &[&str] = &[
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
    ".config/git/credentials",
    ".git-credential-cache",
    ".config/gh",
    ".config/github-copilot",
    ".config/gitlab",
    ".config/hub",
    ".config/glab-cli",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings-security.xml",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".config/pypoetry/auth.toml",
    ".config/containers/auth.json",
    ".terraform.d/credentials.tfrc.json",
    ".terraformrc",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".oci",
    ".config/doctl",
    ".config/rclone",
    ".config/op",
    ".config/sops",
    ".config/helm/repositories.yaml",
    ".env",
    ".password-store",
    ".local/share/keyrings",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bash_history",
    ".zsh_history",
    ".psql_history",
    ".mysql_history",
];

/// The default deny-read paths: [`DENY_READ_UNDER_HOME`] under `$HOME` and under the account's
/// home from the password database, when it differs.
pub fn default_deny_read() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if let Some(account) = agent_exec_executor::sandbox::account_home()
        && !homes.contains(&account)
    {
        homes.push(account);
    }
    homes
        .iter()
        .flat_map(|home| DENY_READ_UNDER_HOME.iter().map(move |p| home.join(p)))
        .collect()
}

impl SandboxSettings {
    /// The mode calls run in when they ask for none, and who set it. The default is
    /// `workspace-write` where this kernel can enforce it, else off.
    pub fn operator_mode(&self) -> (SandboxMode, SandboxOrigin) {
        match self.mode {
            Some(mode) => (mode, SandboxOrigin::Operator),
            None if self.default_off().is_some() => (SandboxMode::Off, SandboxOrigin::Default),
            None => (SandboxMode::WorkspaceWrite, SandboxOrigin::Default),
        }
    }

    /// The mode calls run in when they ask for none, and who set it: here, the
    /// [`operator_mode`](Self::operator_mode); on a remote target (`remote`), the operator's
    /// mode, else the far side's default, workspace-write (the far side enforces it or fails).
    pub fn mode_of_calls(&self, remote: bool) -> (SandboxMode, SandboxOrigin) {
        match self.mode {
            None if remote => (SandboxMode::WorkspaceWrite, SandboxOrigin::Default),
            _ => self.operator_mode(),
        }
    }

    /// Why the default sandbox is off here, when it is (its text: `render.rs`'s
    /// [`SandboxSettings::default_unavailable`]).
    pub(crate) fn default_off(&self) -> Option<DefaultOff> {
        if self.mode.is_some() {
            return None;
        }
        agent_exec_executor::sandbox::support()
            .unenforceable()
            .map(DefaultOff::Unenforceable)
            .or_else(|| DEFAULT_REFUSED.get().cloned().map(DefaultOff::Refused))
    }

    /// The network of sandboxed calls: as set, else on in the default sandbox and off when
    /// the operator names a mode or allows hosts.
    pub fn network(&self) -> NetworkMode {
        self.network
            .unwrap_or(if self.mode.is_some() || !self.allow_hosts.is_empty() {
                NetworkMode::Off
            } else {
                NetworkMode::On
            })
    }

    /// The profile's writable caches.
    pub fn caches(&self) -> Vec<PathBuf> {
        match self.profile {
            SandboxProfile::Dev => dev_caches().to_vec(),
            SandboxProfile::None => Vec::new(),
        }
    }

    /// What a call in `mode` may do (`None` for `off`); `workdir` is the default workspace,
    /// `held` what stays read-only wherever it lies (agent-exec's own files: the artifact
    /// store, its cache, its program).
    pub fn spec(
        &self,
        mode: SandboxMode,
        workdir: &std::path::Path,
        held: impl FnOnce() -> Vec<PathBuf>,
    ) -> Option<SandboxSpec> {
        (mode != SandboxMode::Off).then(|| {
            let workspace = self
                .workspace
                .clone()
                .unwrap_or_else(|| workdir.to_path_buf());
            SandboxSpec {
                mode,
                writable: self.writable.clone(),
                caches: self.caches(),
                deny_read: self.deny_read.clone(),
                read_only: held(),
                workspace,
                network: self.network(),
                allow_hosts: self.allow_hosts.clone(),
            }
        })
    }
}

/// How persistent sessions behave.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SessionSettings {
    /// Most sessions kept; the least recently used is closed first. Default: 16.
    pub max_sessions: usize,
    /// A session unused this long is closed. Default: 30 minutes.
    pub idle_expiry: Duration,
    /// Source a snapshot of the user's `~/.bashrc` (functions, aliases, options, PATH) when a
    /// session starts; the snapshot is made once and cached. Default: `false`.
    pub rc_snapshot: bool,
    /// Where rc snapshots are cached. Default: `$XDG_CACHE_HOME/agent-exec` or `~/.cache/agent-exec`.
    #[serde(skip)]
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
            grace: agent_exec_executor::DEFAULT_GRACE,
            max_bytes: Config::DEFAULT_MAX_BYTES,
            max_lines: None,
            direction: Direction::Smart,
            view: ViewStyle::Compact,
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
            remote: RemoteConfig::default(),
            vocabulary: agent_exec_protocol::Vocabulary::default(),
            pty_size: TerminalSize::DEFAULT,
            prompt_idle: Some(agent_exec_executor::PROMPT_IDLE),
            salient: agent_exec_sink::SalientConfig::default(),
            yield_after: None,
        }
    }
}

impl Config {
    /// Bytes of output shown when nothing else is configured (50 KiB).
    pub const DEFAULT_MAX_BYTES: usize = 51_200;

    /// The operator's settings for a remote target's far side, as one word (base64 of the
    /// JSON serialization: no character a remote shell would read): the far side's
    /// `serve --settings` takes it ([`Config::from_far_settings`]). The default deny-read
    /// paths name this machine's home: only the operator's own are sent, and the far side adds
    /// its defaults.
    pub fn to_far_settings(&self) -> String {
        use base64::Engine as _;
        let mut sent = self.clone();
        let defaults = default_deny_read();
        sent.sandbox.deny_read.retain(|p| !defaults.contains(p));
        let json = serde_json::to_vec(&sent).expect("settings serialize");
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// The arguments of the far side's `serve` that carry the operator's settings there, all
    /// of them in one serialization ([`Config::to_far_settings`]): the far side enforces them
    /// for its calls, and a setting added to [`Config`] reaches it with no list to keep.
    pub(crate) fn far_side_args(&self) -> Vec<String> {
        vec!["--settings".to_owned(), self.to_far_settings()]
    }

    /// The settings a near side sent ([`Config::to_far_settings`]), on this machine: what
    /// belongs to it (its working directory, artifact store, session cache, default deny-read
    /// paths) is its own.
    pub fn from_far_settings(word: &str) -> Result<Config, FarSettingsError> {
        use base64::Engine as _;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(word.trim())
            .map_err(|e| FarSettingsError::NotBase64(e.to_string()))?;
        let mut config: Config = serde_json::from_slice(&json)
            .map_err(|e| FarSettingsError::NotThisVersion(e.to_string()))?;
        let mut deny_read = default_deny_read();
        for path in std::mem::take(&mut config.sandbox.deny_read) {
            if !deny_read.contains(&path) {
                deny_read.push(path);
            }
        }
        config.sandbox.deny_read = deny_read;
        config
            .salient
            .validate()
            .map_err(FarSettingsError::Invalid)?;
        Ok(config)
    }

    /// What a sandboxed command may not change wherever it lies, a writable cache included:
    /// the artifact store, the session cache (rc snapshots a later session sources), and the
    /// running program (which the operator runs again, unconfined or not).
    /// The session cache must exist to be held (a command could otherwise make it in a
    /// writable `~/.cache` and plant a snapshot): the tool makes it when it starts.
    pub fn held_read_only(&self) -> Vec<PathBuf> {
        static PROGRAM: OnceLock<Option<PathBuf>> = OnceLock::new();
        let program = PROGRAM.get_or_init(|| std::env::current_exe().ok());
        let mut held = vec![self.artifacts_dir.clone(), self.sessions.cache_dir.clone()];
        let workspace = self.sandbox.workspace.as_ref().unwrap_or(&self.workdir);
        // A program being built in the workspace is the project's, not ours to hold.
        held.extend(
            program
                .iter()
                .filter(|exe| !exe.starts_with(workspace))
                .cloned(),
        );
        held
    }
}

/// Why a far side cannot take the settings a near side sent (its text: `render.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FarSettingsError {
    /// Not the base64 a near side sends.
    NotBase64(String),
    /// Not this version's settings.
    NotThisVersion(String),
    /// A value the settings refuse.
    Invalid(String),
}

impl std::error::Error for FarSettingsError {}

/// Why a request cannot use the target it names (its text: `render.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TargetRefused {
    /// Not a target URI.
    Invalid(String),
    /// A target the operator did not allow; what they allow.
    NotAllowed { asked: String, allowed: Vec<String> },
}

/// The operator's remote targets (flags `--target`, `--allow-target`, `--remote-binary`,
/// `--install`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RemoteConfig {
    /// Where calls run when they name no target; `None`: here.
    pub target: Option<Target>,
    /// Targets a request may name, as patterns (`*` stands for any run of characters). The
    /// operator's own `target` is always allowed.
    pub allowed: Vec<String>,
    /// How connections are made.
    pub settings: Settings,
}

impl RemoteConfig {
    /// Where a call goes: the target it names (when allowed), else the operator's.
    pub(crate) fn resolve(&self, asked: Option<&str>) -> Result<Option<Target>, TargetRefused> {
        let Some(asked) = asked.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(self.target.clone());
        };
        let target: Target = asked
            .parse()
            .map_err(|e: agent_exec_remote::TargetError| TargetRefused::Invalid(e.0))?;
        let uri = target.to_string();
        // The URI as printed back from what was parsed: what the client will reach.
        let allowed = self.target.as_ref() == Some(&target)
            || self.allowed.iter().any(|p| pattern_matches(p, &uri));
        if allowed {
            return Ok(Some(target));
        }
        let allowed: Vec<String> = self
            .target
            .iter()
            .map(ToString::to_string)
            .chain(self.allowed.iter().cloned())
            .collect();
        Err(TargetRefused::NotAllowed {
            asked: asked.to_owned(),
            allowed,
        })
    }
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
        assert_eq!(c.sandbox.mode, None);
        assert_eq!(c.sandbox.profile, SandboxProfile::Dev);
        assert_eq!(c.sandbox.network, None);
        assert_eq!(c.sandbox.network(), NetworkMode::On);
        assert!(!c.env.secrets.withhold.is_empty());
        assert!(c.sandbox.deny_read.len() >= DENY_READ_UNDER_HOME.len());
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.prepared_shells.per_key, 2);
        assert_eq!(c.prepared_shells.max_keys, 4);
        assert_eq!(c.prepared_shells.idle, Duration::from_mins(1));
        assert_eq!(c.pty_size.to_string(), "80x24");
        assert_eq!(c.prompt_idle, Some(Duration::from_secs(5)));
    }
}

#[cfg(test)]
mod remote_tests {
    use super::*;

    fn config(target: Option<&str>, allowed: &[&str]) -> RemoteConfig {
        RemoteConfig {
            target: target.map(|t| t.parse().unwrap()),
            allowed: allowed.iter().map(|s| (*s).to_owned()).collect(),
            settings: Settings::default(),
        }
    }

    #[test]
    fn a_request_names_only_an_allowed_target() {
        let c = config(Some("docker://main"), &["docker://agent-*"]);
        assert_eq!(
            c.resolve(None).unwrap().unwrap().to_string(),
            "docker://main"
        );
        assert_eq!(
            c.resolve(Some("docker://agent-3"))
                .unwrap()
                .unwrap()
                .to_string(),
            "docker://agent-3"
        );
        assert_eq!(
            c.resolve(Some("docker://main"))
                .unwrap()
                .unwrap()
                .to_string(),
            "docker://main"
        );
        let refused = c.resolve(Some("ssh://prod")).unwrap_err().to_string();
        assert!(
            refused.contains("\"ssh://prod\" is not allowed")
                && refused.contains("docker://agent-*"),
            "{refused}"
        );
        let none = config(None, &[])
            .resolve(Some("docker://x"))
            .unwrap_err()
            .to_string();
        assert!(none.contains("--allow-target"), "{none}");
        assert!(config(None, &[]).resolve(None).unwrap().is_none());
        let bad = config(None, &["*"])
            .resolve(Some("docker://-x"))
            .unwrap_err()
            .to_string();
        assert!(bad.contains("not a valid name"), "{bad}");
    }

    #[test]
    fn the_operators_settings_reach_the_far_side_whole() {
        let mut c = Config::default();
        c.sandbox.mode = Some(SandboxMode::WorkspaceWrite);
        c.sandbox.deny_read.push("/srv/secrets".into());
        c.limits.memory = Some(512 << 20);
        c.max_bytes = 1000;
        c.max_lines = Some(40);
        c.retention.max_count = 7;
        c.env.secrets.pass.push("MY_TOKEN".into());
        c.env.overrides.insert("PAGER".into(), "less".into());
        c.salient.patterns = vec!["BOOM".into()];
        c.sessions.max_sessions = 3;
        c.prompt_idle = None;
        c.pty_size = "120x40".parse().unwrap();
        let args = c.far_side_args();
        assert_eq!(args[0], "--settings");
        assert!(
            args[1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "one word no shell reads: {}",
            args[1]
        );
        let far = Config::from_far_settings(&args[1]).unwrap();
        let json = |c: &Config| serde_json::to_value(c).unwrap();
        assert_eq!(json(&far), json(&c));
        // What is this machine's own stays the far side's.
        c.workdir = "/near/only".into();
        c.artifacts_dir = "/near/artifacts".into();
        let far = Config::from_far_settings(&c.to_far_settings()).unwrap();
        assert_eq!(far.workdir, Config::default().workdir);
        assert_eq!(far.artifacts_dir, Config::default().artifacts_dir);
        assert!(Config::from_far_settings("not base64!").is_err());
    }
}
