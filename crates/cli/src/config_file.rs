//! The `--config` file (TOML), one serde type: the policy's keys, plus the `[artifacts]`,
//! `[sandbox]`, `[limits]`, `[env]`, `[terminal]` and `[window]` tables; and the tool built from
//! it and the flags.

use std::path::Path;
use std::sync::Arc;

use agent_exec_core::{Config, Policy, PolicyConfig, Retention, Tool};
use anyhow::Context as _;

use crate::args::{PolicyArgs, RetentionArgs, ToolArgs, parse_size};
use crate::containment::{EnvTable, LimitsTable, SandboxTable};
use crate::terminal::TerminalTable;

/// The `--config` file: the policy's keys, plus the `[artifacts]`, `[sandbox]`, `[limits]`, `[env]`,
/// `[terminal]` and `[window]` tables.
/// The whole file. A key outside the tables is the policy's (docs/policy.md); an unknown key
/// anywhere is refused, named (in a table, with its line).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ConfigFile {
    artifacts: ArtifactsTable,
    sandbox: SandboxTable,
    limits: LimitsTable,
    env: EnvTable,
    terminal: TerminalTable,
    window: WindowTable,
    pub(crate) exec: ExecTable,
    /// The policy's keys: read by [`PolicyConfig`] itself afterwards, as serde's `flatten`
    /// would let an unknown key through unnoticed.
    #[serde(flatten)]
    policy_keys: toml::Table,
    #[serde(skip)]
    policy: PolicyConfig,
}

/// `[exec]` of the config file: how calls run when their request does not say.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ExecTable {
    /// Milliseconds before a call still running yields (0: never); `serve --yield-ms` wins.
    pub(crate) yield_ms: Option<u64>,
}

/// `[window]` of the config file: what the `smart` window counts as salient, beyond its
/// defaults. Every match of an added pattern must contain one of the anchors (added or
/// default), case-sensitively: anchors are the prefilter that keeps the window fast.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct WindowTable {
    /// Regexes (Rust syntax, ASCII) added to the default salient patterns.
    salient_patterns: Vec<String>,
    /// Literals added to the default anchors (each casing listed).
    salient_anchors: Vec<String>,
}

impl WindowTable {
    pub(crate) fn apply(&self, config: &mut Config) -> anyhow::Result<()> {
        if self.salient_patterns.is_empty() && self.salient_anchors.is_empty() {
            return Ok(());
        }
        anyhow::ensure!(
            self.salient_anchors.iter().all(|a| !a.is_empty()),
            "window.salient_anchors: an anchor must not be empty (it would match every line)"
        );
        config
            .salient
            .patterns
            .extend(self.salient_patterns.iter().cloned());
        config
            .salient
            .anchors
            .extend(self.salient_anchors.iter().cloned());
        config
            .salient
            .validate()
            .map_err(|e| anyhow::anyhow!("window.salient_patterns: {e}"))
    }
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ArtifactsTable {
    max_count: Option<usize>,
    /// Bytes, or a size such as `2G`.
    max_bytes: Option<toml::Value>,
}

impl ArtifactsTable {
    pub(crate) fn retention(&self, flags: &RetentionArgs) -> anyhow::Result<Retention> {
        let mut r = Retention::default();
        if let Some(n) = flags.keep_artifacts.or(self.max_count) {
            r.max_count = n;
        }
        let bytes = match (&flags.keep_artifact_bytes, &self.max_bytes) {
            (Some(b), _) => Some(*b),
            (None, Some(toml::Value::Integer(n))) => Some(
                u64::try_from(*n)
                    .map_err(|_| anyhow::anyhow!("artifacts.max_bytes must not be negative"))?,
            ),
            (None, Some(toml::Value::String(s))) => {
                Some(parse_size(s).map_err(|e| anyhow::anyhow!("artifacts.max_bytes: {e}"))?)
            }
            (None, Some(other)) => anyhow::bail!(
                "artifacts.max_bytes must be a number of bytes or a size such as \"2G\", not {other}"
            ),
            (None, None) => None,
        };
        if let Some(b) = bytes {
            r.max_total_bytes = b;
        }
        Ok(r)
    }
}

pub(crate) fn load_config(path: Option<&Path>) -> anyhow::Result<ConfigFile> {
    let Some(path) = path else {
        return Ok(ConfigFile::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the config file {}", path.display()))?;
    let in_file = || format!("in the config file {}", path.display());
    let mut file: ConfigFile = toml::from_str(&text).with_context(in_file)?;
    file.policy = toml::Value::Table(std::mem::take(&mut file.policy_keys))
        .try_into()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(in_file)?;
    Ok(file)
}

pub(crate) fn load_policy(args: &PolicyArgs, workdir: &Path) -> anyhow::Result<Policy> {
    policy_from(load_config(args.config.as_deref())?.policy, args, workdir)
}

pub(crate) fn policy_from(
    mut config: PolicyConfig,
    args: &PolicyArgs,
    workdir: &Path,
) -> anyhow::Result<Policy> {
    if args.workspace_only {
        config.workspace_only = true;
    }
    if config.workspace_only && config.workspace_roots.is_empty() {
        config.workspace_roots.push(workdir.to_path_buf());
    }
    Policy::new(config).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The `Tool` of `run` or `serve`: the config file's tables, each with its flag group; `adjust`
/// sets what only one of the two commands has (it sees the file's tables applied that no flag
/// group of [`ToolArgs`] overrides: `[exec]`).
pub(crate) fn build_tool(
    args: &ToolArgs,
    adjust: impl FnOnce(&mut Config),
) -> anyhow::Result<Tool> {
    let file = load_config(args.policy.config.as_deref())?;
    let mut config = Config {
        retention: file.artifacts.retention(&args.retention)?,
        yield_after: file.exec.yield_ms.map(std::time::Duration::from_millis),
        ..Config::default()
    };
    adjust(&mut config);
    args.remote.apply(&mut config)?;
    args.containment
        .apply(&file.sandbox, &file.limits, &file.env, &mut config)?;
    args.terminal.apply(&file.terminal, &mut config)?;
    file.window.apply(&mut config)?;
    if let Some(dir) = &args.artifacts {
        config.artifacts_dir.clone_from(dir);
    }
    if let Some(m) = args.max_bytes {
        anyhow::ensure!(m > 0, "--max-bytes must be at least 1");
        config.max_bytes = m;
    }
    if let Some(d) = &args.direction {
        config.direction = d.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    }
    if let Some(v) = &args.view {
        config.view = v.parse().map_err(|e: String| anyhow::anyhow!(e))?;
    }
    let policy = policy_from(file.policy, &args.policy, &config.workdir)?;
    Ok(Tool::new_with_policy(config, Arc::new(policy)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> anyhow::Result<ConfigFile> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("agent-exec.toml");
        std::fs::write(&path, text)?;
        load_config(Some(&path))
    }

    #[test]
    fn one_file_type_reads_every_table_and_refuses_unknown_keys_anywhere() {
        let file = load(
            "workspace_only = true\n[artifacts]\nmax_count = 3\n[window]\nsalient_anchors = [\"ZZZ\"]\n",
        )
        .unwrap();
        assert!(file.policy.workspace_only);
        assert_eq!(file.artifacts.max_count, Some(3));
        assert_eq!(file.window.salient_anchors, ["ZZZ"]);
        // A policy key unknown at the top level: serde's `flatten` alone would let it through.
        let top = load("bogus_key = 1\n").unwrap_err();
        assert!(format!("{top:#}").contains("bogus_key"), "{top:#}");
        for (table, key) in [("sandbox", "nope"), ("limits", "max_memory"), ("env", "x")] {
            let error = load(&format!("[{table}]\n{key} = 1\n")).unwrap_err();
            let error = format!("{error:#}");
            assert!(error.contains(key) && error.contains("line 2"), "{error}");
        }
    }
}
