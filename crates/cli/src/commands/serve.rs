//! `agent-exec serve` and `agent-exec mcp`: the tool behind a server.

use std::sync::Arc;
use std::time::Duration;

use agent_exec_core::{Config, PolicyConfig, Tool};

use crate::args::ServeArgs;
use crate::config_file::{build_tool, policy_from};
use crate::server;

/// The yield of `mcp` calls when neither `--yield-ms` nor `[exec] yield_ms` says: under the
/// TypeScript SDK's 60 s request timeout (and the clients built on it, which give up on a call
/// that long), so that a long command answers before its client gives up on it; long enough
/// that most commands (a build step, a test run) answer in one call.
const MCP_YIELD: Duration = Duration::from_secs(30);

impl ServeArgs {
    pub(crate) fn tool(&self, mcp: bool) -> anyhow::Result<Tool> {
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
            if let Some(dir) = &self.tool.artifacts {
                config.artifacts_dir.clone_from(dir);
            }
            let policy = policy_from(PolicyConfig::default(), &self.tool.policy, &config.workdir)?;
            return Ok(Tool::new_with_policy(config, Arc::new(policy)));
        }
        build_tool(&self.tool, |c| {
            if let Some(dir) = workdir {
                c.workdir = dir;
            }
            c.sessions.rc_snapshot = self.rc_snapshot;
            c.sessions.command_prefix.clone_from(&self.command_prefix);
            c.sessions.max_sessions = self.max_sessions;
            c.prepared_shells.per_key = self.prepared_shells;
            if mcp {
                c.vocabulary = agent_exec_core::Vocabulary::McpTools;
            }
            // The flag wins over `[exec] yield_ms` (already applied: 0 there is off, kept).
            if let Some(ms) = self.yield_ms {
                c.yield_after = Some(Duration::from_millis(ms));
            } else if mcp && c.yield_after.is_none() {
                c.yield_after = Some(MCP_YIELD);
            }
        })
    }
}

/// `serve` (JSON-RPC) or `mcp`: runs until the client is done.
pub(crate) fn serve(args: &ServeArgs, mcp: bool) -> anyhow::Result<i32> {
    let _ = agent_exec_executor::containment::become_subreaper();
    let bounds = server::Bounds {
        max_line_bytes: usize::try_from(args.max_line_bytes).unwrap_or(usize::MAX),
        max_inflight: args.max_inflight as usize,
        end_on_eof: args.end_on_eof,
    };
    Ok(server::run(args.tool(mcp)?, bounds, mcp))
}
