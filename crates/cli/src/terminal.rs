//! The terminal of `pty` calls (issue 16): `--pty-size COLSxROWS` and `--prompt-idle SECONDS`
//! on `run`, `serve` and `mcp`, and the `[terminal]` table of `--config` (`pty_size`,
//! `prompt_idle`). Flags win over the file.

use std::time::Duration;

use agent_exec_core::{Config, TerminalSize};
use clap::Args;
use serde::Deserialize;

#[derive(Debug, Args, Clone, Default)]
pub(crate) struct TerminalArgs {
    /// The terminal of --pty calls and PTY jobs, COLSxROWS: the size programs see and the
    /// screen their output is rendered on (default 80x24; `terminal.pty_size`).
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_pty_size)]
    pty_size: Option<TerminalSize>,
    /// A --pty call blocked reading its terminal with no output for this many seconds is ended
    /// (outcome timeout, the prompt quoted); 0: never (default 5; `terminal.prompt_idle`).
    #[arg(long, value_name = "SECONDS")]
    prompt_idle: Option<u64>,
}

fn parse_pty_size(text: &str) -> Result<TerminalSize, String> {
    text.parse()
        .map_err(|e: agent_exec_core::TerminalSizeError| e.to_string())
}

/// `[terminal]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct TerminalTable {
    /// `"120x40"`.
    pty_size: Option<String>,
    /// Seconds; 0 turns it off.
    prompt_idle: Option<u64>,
}

impl TerminalArgs {
    /// Applies the file's table, then the flags, to `config`.
    pub(crate) fn apply(&self, table: &TerminalTable, config: &mut Config) -> anyhow::Result<()> {
        if let Some(text) = &table.pty_size {
            config.pty_size =
                parse_pty_size(text).map_err(|e| anyhow::anyhow!("terminal.pty_size: {e}"))?;
        }
        if let Some(size) = self.pty_size {
            config.pty_size = size;
        }
        if let Some(secs) = self.prompt_idle.or(table.prompt_idle) {
            config.prompt_idle = (secs > 0).then(|| Duration::from_secs(secs));
        }
        Ok(())
    }
}
