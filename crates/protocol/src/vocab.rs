//! The contract's small words, defined once for every crate that speaks them: which part of
//! an output is kept and what cut it (the sink's), the policy's decision, and the sandbox
//! modes (the executor's). Each crate re-exports what it uses, so its paths stay its own.

/// Which part of an output that does not fit is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Keep the end (the default).
    #[default]
    Tail,
    /// Keep the start.
    Head,
    /// Keep the start and the end; the middle is elided with a marker.
    Both,
    /// Keep a small head, the tail, and the salient lines (errors, failures, panics…) of the
    /// elided middle.
    Smart,
}

impl Direction {
    /// The name used in results and options.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Tail => "tail",
            Direction::Head => "head",
            Direction::Both => "both",
            Direction::Smart => "smart",
        }
    }
}

impl std::str::FromStr for Direction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tail" => Ok(Direction::Tail),
            "head" => Ok(Direction::Head),
            "both" => Ok(Direction::Both),
            "smart" => Ok(Direction::Smart),
            other => Err(format!(
                "unknown direction {other:?}: use tail, head, both or smart"
            )),
        }
    }
}

/// What cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The byte budget.
    Bytes,
    /// The line budget.
    Lines,
}

/// What to do with a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it.
    Allow,
    /// Run it only with approval.
    Ask,
    /// Do not run it.
    Deny,
}

/// How much a call may change.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// No sandbox.
    #[default]
    Off,
    /// The workspace, the writable roots and a private temporary directory are writable.
    WorkspaceWrite,
    /// Only a private temporary directory is writable.
    ReadOnly,
}

impl SandboxMode {
    /// Every mode, from the loosest to the strictest.
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::Off,
        SandboxMode::WorkspaceWrite,
        SandboxMode::ReadOnly,
    ];

    /// The contract's name: `off`, `workspace-write`, `read-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
        }
    }

    /// The mode of a contract name.
    pub fn parse(name: &str) -> Option<SandboxMode> {
        match name {
            "off" => Some(SandboxMode::Off),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "read-only" => Some(SandboxMode::ReadOnly),
            _ => None,
        }
    }
}
