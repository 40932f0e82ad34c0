//! The remote-target flags of `run`, `serve` and `mcp` (contract §9).

use agent_exec_core::{Config, RemoteTarget};
use clap::Args;

#[derive(Debug, Args, Clone, Default)]
pub(crate) struct RemoteArgs {
    /// Run the calls on another machine or container: ssh://[user@]host[:port],
    /// docker://CONTAINER, podman://CONTAINER or kubectl://[NAMESPACE/]POD[/CONTAINER].
    #[arg(long, value_name = "URI")]
    target: Option<String>,
    /// A target a request may name in its `target` field; `*` matches any run of characters
    /// (repeatable): `--allow-target 'docker://agent-*'`.
    #[arg(long, value_name = "PATTERN")]
    allow_target: Vec<String>,
    /// The far side's agent-exec (default: `agent-exec` on its PATH, then where --install
    /// puts it).
    #[arg(long, value_name = "PATH")]
    remote_binary: Option<String>,
    /// Copy this agent-exec to the target when it has none and the architecture matches
    /// (scp, docker cp, podman cp, kubectl cp).
    #[arg(long)]
    install: bool,
}

impl RemoteArgs {
    /// Whether calls run elsewhere by default.
    pub(crate) fn is_remote(&self) -> bool {
        self.target.is_some()
    }

    /// Applies the flags to `config`.
    pub(crate) fn apply(&self, config: &mut Config) -> anyhow::Result<()> {
        let remote = &mut config.remote;
        remote.target = self
            .target
            .as_deref()
            .map(str::parse::<RemoteTarget>)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--target: {e}"))?;
        for pattern in &self.allow_target {
            anyhow::ensure!(
                !pattern.trim().is_empty(),
                "--allow-target needs a pattern such as 'docker://agent-*'"
            );
        }
        remote.allowed.clone_from(&self.allow_target);
        remote
            .settings
            .remote_binary
            .clone_from(&self.remote_binary);
        remote.settings.install = self.install;
        if self.install {
            remote.settings.local_binary = Some(
                std::env::current_exe()
                    .map_err(|e| anyhow::anyhow!("--install: cannot find this binary: {e}"))?,
            );
        }
        Ok(())
    }
}
