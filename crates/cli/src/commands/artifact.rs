//! `agent-exec artifact`: a spilled output printed, here or on a remote target.

use std::io::Write;

use agent_exec_core::{Config, Tool, ToolResult};
use agent_exec_sink::ArtifactStore;
use anyhow::Context as _;

use crate::args::ArtifactArgs;

/// `artifact --grep` (local or remote), and `artifact --target URI ID`: read through the tool's
/// `artifact_read`, the one reader the servers use too, so the CLI prints what a model reads.
pub(crate) fn artifact_through_tool(args: &ArtifactArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(
        args.lines.is_none() || args.target.is_none(),
        "--lines reads a local artifact; with --target, read the whole artifact, use --grep, or use artifact_read with offset/limit through serve"
    );
    let mut config = Config::default();
    config.prepared_shells.per_key = 0;
    if let Some(dir) = &args.artifacts {
        config.artifacts_dir.clone_from(dir);
    }
    if let Some(target) = &args.target {
        config.remote.target = Some(
            target
                .parse()
                .map_err(|e| anyhow::anyhow!("--target: {e}"))?,
        );
        config
            .remote
            .settings
            .remote_binary
            .clone_from(&args.remote_binary);
    }
    let tool = Tool::new(config);
    let read = agent_exec_core::ArtifactRead::new(args.id.clone());
    let mut out = std::io::stdout().lock();
    let code = match &args.grep {
        Some(pattern) => {
            let result = tool.artifact_read(&read.grep(pattern.clone(), args.context.unwrap_or(0)));
            print_artifact_page(&mut out, &result)?
        }
        // The whole artifact, page after page (one read is at most the output window).
        None => {
            let mut offset = 0;
            loop {
                let result = tool.artifact_read(&read.clone().range(offset, None));
                if print_artifact_page(&mut out, &result)? != 0 {
                    break 1;
                }
                match result.details.next_offset {
                    Some(next) => offset = next,
                    None => break 0,
                }
            }
        }
    };
    tool.shutdown();
    Ok(code)
}

/// Prints a page `artifact_read` answered (without the note that says where the next one
/// starts); an error goes to stderr and gives 1.
pub(crate) fn print_artifact_page(
    out: &mut impl Write,
    result: &ToolResult,
) -> anyhow::Result<i32> {
    if result.outcome() != agent_exec_core::Outcome::Success {
        eprintln!("agent-exec: {}", result.text());
        return Ok(1);
    }
    out.write_all(result.artifact_page().as_bytes())?;
    Ok(0)
}

pub(crate) fn cmd_artifact(args: &ArtifactArgs) -> anyhow::Result<i32> {
    if args.target.is_some() || args.grep.is_some() {
        return artifact_through_tool(args);
    }
    let dir = args
        .artifacts
        .clone()
        .unwrap_or_else(ArtifactStore::default_dir);
    let store = ArtifactStore::open(&dir)?;
    let bytes = match &args.lines {
        Some(range) => {
            let (a, b) = range.split_once(':').unwrap_or((range, range));
            let parse = |s: &str| -> anyhow::Result<Option<u64>> {
                if s.is_empty() {
                    Ok(None)
                } else {
                    let n: u64 = s.parse().with_context(|| {
                        format!("--lines expects A:B with line numbers from 1, got {range:?}")
                    })?;
                    anyhow::ensure!(n >= 1, "--lines counts from 1, got {range:?}");
                    Ok(Some(n))
                }
            };
            let first = parse(a)?.unwrap_or(1);
            let last = parse(b)?;
            if let Some(last) = last {
                anyhow::ensure!(
                    last >= first,
                    "--lines {range}: the range is empty (B is before A)"
                );
            }
            store.read_lines(&args.id, first, last)
        }
        None => store.read_bytes(&args.id, 0, None).map(|(b, _)| b),
    };
    match bytes {
        Ok(bytes) => {
            std::io::stdout().write_all(&bytes)?;
            Ok(0)
        }
        Err(e) => {
            eprintln!("agent-exec: {e}");
            Ok(1)
        }
    }
}
