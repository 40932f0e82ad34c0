//! Benchmarks live in `benches/`; this is what several of them share.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_exec_executor::{NetworkMode, SandboxMode, SandboxSpec};

/// The sandbox of the contract's defaults: workspace-write in `workspace`, network off, the
/// credential paths under `~` unreadable.
pub fn sandbox_spec(workspace: &Path) -> Arc<SandboxSpec> {
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    Arc::new(SandboxSpec {
        mode: SandboxMode::WorkspaceWrite,
        workspace: workspace.to_path_buf(),
        writable: Vec::new(),
        deny_read: [".ssh", ".aws", ".gnupg", ".netrc"]
            .iter()
            .map(|p| home.join(p))
            .collect(),
        network: NetworkMode::Off,
        allow_hosts: Vec::new(),
    })
}

/// The release `agent-exec` binary next to the bench executables (benches run from
/// `target/<profile>/deps`), when it was built (`cargo build --release -p agent-exec`).
pub fn agent_exec_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("agent-exec");
    if bin.is_file() {
        Some(bin)
    } else {
        eprintln!(
            "skipping: build {} first (cargo build --release -p agent-exec)",
            bin.display()
        );
        None
    }
}
