//! The policy configuration, read from TOML.
//!
//! ```toml
//! workspace_only = true
//! workspace_roots = ["/work/project"]
//! extra_readable_roots = ["/usr/include"]
//! allowlist_mode = false
//!
//! [rules]
//! deny = ["git push --force", "npm publish"]
//! ask = ["git push"]
//! allow = ["git", "cargo", "npm run"]
//! deny_regex = ['^curl .*\|']
//! denied_env = ["*_TOKEN", "AWS_SECRET_ACCESS_KEY"]
//!
//! [interception]
//! enabled = true
//! available_tools = ["read", "grep", "find", "edit", "write"]
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Everything the policy can be told. The hardline guard is not configurable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Deny any path argument or redirection target outside the workspace roots (after `cd`
    /// tracking, `~` expansion and, for paths that exist, symlinks). Default: `false`.
    pub workspace_only: bool,
    /// The workspace roots; relative ones resolve against the command's working directory.
    /// Default: empty, meaning the working directory of each check (`Context::cwd`).
    pub workspace_roots: Vec<PathBuf>,
    /// Extra directories that may be read (not written) when `workspace_only` is on.
    /// Default: empty.
    pub extra_readable_roots: Vec<PathBuf>,
    /// Only commands matching an `allow` rule (or a harmless shell builtin such as `cd`,
    /// `echo`, `true`) may run; everything else is denied. Default: `false`.
    pub allowlist_mode: bool,
    /// Deny / ask / allow rules. Default: none.
    pub rules: Rules,
    /// Interception of shell commands that have a dedicated tool. Default: off.
    pub interception: Interception,
}

/// Rules on the parsed command. Every simple command of a line must pass; for each one the
/// first match in the order deny, ask, allow decides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rules {
    /// Command prefixes to deny, matched against the words of each simple command after
    /// quote removal and unwrapping, and against each wrapper level (`sudo`, `timeout` ...).
    /// Flags in a rule match however they are spelled: `rm -rf` matches `rm -r -f`,
    /// `rm -fr` and `rm --recursive --force`. Default: empty.
    pub deny: Vec<String>,
    /// Command prefixes that need approval (decision `ask`). Default: empty.
    pub ask: Vec<String>,
    /// Command prefixes that are allowed; in `allowlist_mode`, the only ones that are.
    /// Default: empty.
    pub allow: Vec<String>,
    /// Regular expressions (Rust `regex` syntax) to deny, matched against each resolved simple
    /// command (words joined by single spaces), with and without its wrappers. They do not
    /// see quoted data as commands: `echo "rm -rf /"` is the command `echo rm -rf /`, not
    /// `rm`. Default: empty.
    pub deny_regex: Vec<String>,
    /// Regular expressions that need approval. Default: empty.
    pub ask_regex: Vec<String>,
    /// Regular expressions that allow (like `allow`). Default: empty.
    pub allow_regex: Vec<String>,
    /// Environment variable names that may not be set: exact names or globs with `*` and `?`
    /// (`*_TOKEN`). Triggered by `Context::env_keys`, `export K=`, `K=v cmd`, `env K=v cmd`,
    /// `declare -x`. Default: empty.
    pub denied_env: Vec<String>,
}

/// Interception: commands that a dedicated tool does better are blocked with a pointer to
/// the tool.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Interception {
    /// Turn interception on. Default: `false`.
    pub enabled: bool,
    /// The tools the agent has, by name; a rule applies only when its tool is listed
    /// (compared case-insensitively): `read`, `grep`, `find`, `edit`, `write`.
    /// Default: empty.
    pub available_tools: Vec<String>,
}

/// A problem with the policy configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read policy config {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown fields.
    #[error("invalid policy config {origin}: {source}")]
    Toml {
        /// The file, or `<string>`.
        origin: String,
        /// The parse error, with line and column.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A regular expression does not compile.
    #[error("invalid regex in rules.{field}[{index}] `{pattern}`: {source}")]
    Regex {
        /// The field: `deny_regex`, `ask_regex` or `allow_regex`.
        field: &'static str,
        /// Position in the list.
        index: usize,
        /// The pattern as written.
        pattern: String,
        /// The regex error.
        #[source]
        source: Box<regex::Error>,
    },
    /// A rule is empty or only whitespace.
    #[error(
        "empty rule in rules.{field}[{index}]: write a command prefix such as `git push`, or remove it"
    )]
    EmptyRule {
        /// The field.
        field: &'static str,
        /// Position in the list.
        index: usize,
    },
    /// A value is invalid for another reason.
    #[error("invalid value in {field}: {message}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong and what to write instead.
        message: String,
    },
}

impl PolicyConfig {
    /// Parses a TOML document.
    pub fn from_toml_str(text: &str) -> Result<PolicyConfig, ConfigError> {
        Self::parse(text, "<string>")
    }

    /// Reads and parses a TOML file; errors name the file.
    pub fn load(path: &Path) -> Result<PolicyConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    fn parse(text: &str, origin: &str) -> Result<PolicyConfig, ConfigError> {
        toml::from_str(text).map_err(|source| ConfigError::Toml {
            origin: origin.to_owned(),
            source: Box::new(source),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_documented() {
        let c = PolicyConfig::default();
        assert!(!c.workspace_only);
        assert!(c.workspace_roots.is_empty());
        assert!(c.extra_readable_roots.is_empty());
        assert!(!c.allowlist_mode);
        assert_eq!(c.rules, Rules::default());
        assert!(!c.interception.enabled);
        assert!(c.interception.available_tools.is_empty());
        assert_eq!(PolicyConfig::from_toml_str("").unwrap(), c);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = PolicyConfig::from_toml_str("workspace = true").unwrap_err();
        assert!(e.to_string().contains("unknown field `workspace`"), "{e}");
        let e = PolicyConfig::from_toml_str("[rules]\ndenny = []").unwrap_err();
        assert!(e.to_string().contains("denny"), "{e}");
    }

    #[test]
    fn load_names_the_file() {
        let e = PolicyConfig::load(Path::new("/nonexistent/policy.toml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/policy.toml"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, "workspace_only = 3").unwrap();
        let e = PolicyConfig::load(&path).unwrap_err();
        assert!(e.to_string().contains("p.toml"), "{e}");
    }
}
