//! `agent-exec check`: the policy's verdict on a command, without running it.

use std::io::Write;
use std::path::PathBuf;

use agent_exec_core::{PolicyContext, Request};

use crate::args::CheckArgs;
use crate::config_file::load_policy;

pub(crate) fn cmd_check(args: &CheckArgs) -> anyhow::Result<i32> {
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
