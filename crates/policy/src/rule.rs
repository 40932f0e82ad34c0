//! Rule ids: every reason the policy gives has a stable id, listed once here. The crate's
//! documentation lists them too; a test keeps the two the same.

macro_rules! rule_ids {
    ($($(#[$doc:meta])* $variant:ident = $id:literal,)*) => {
        /// The stable id of the rule behind a verdict (`Verdict::rule` is its text, with
        /// `:RULE` after the configured rule for `config.*-prefix` and `config.*-regex`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum RuleId {
            $($(#[$doc])* $variant,)*
        }

        impl RuleId {
            /// Every rule id.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant,)*];

            /// The id as written in verdicts (`hardline.recursive-delete-root`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$variant => $id,)*
                }
            }
        }
    };
}

rule_ids! {
    /// Recursive deletion of `/`.
    HardlineRecursiveDeleteRoot = "hardline.recursive-delete-root",
    /// Recursive deletion of the home directory.
    HardlineRecursiveDeleteHome = "hardline.recursive-delete-home",
    /// Recursive deletion of a system directory, at any depth of a system tree.
    HardlineRecursiveDeleteSystem = "hardline.recursive-delete-system",
    /// Recursive deletion of a directory that holds the working directory.
    HardlineRecursiveDeleteAncestor = "hardline.recursive-delete-ancestor",
    /// `find -delete` or `find -exec rm` over `/`, `~` or a system directory.
    HardlineFindDelete = "hardline.find-delete",
    /// `rsync --delete` into `/`, `~` or a system directory (a remote host's too).
    HardlineRsyncDelete = "hardline.rsync-delete",
    /// Recursive `chmod`/`chown`/`chgrp`, or `chattr`/`setfacl`, on system paths.
    HardlineRecursiveChmod = "hardline.recursive-chmod",
    /// `mv` of `/`, `~`, a system directory or a critical file.
    HardlineMoveSystem = "hardline.move-system",
    /// Deleting, truncating or overwriting a critical system file.
    HardlineSystemFile = "hardline.system-file",
    /// Formatting or partitioning a device.
    HardlineDeviceFormat = "hardline.device-format",
    /// Writing to a block device.
    HardlineDeviceWrite = "hardline.device-write",
    /// Writing to `/proc/sysrq-trigger`.
    HardlineSysrq = "hardline.sysrq",
    /// Shutting down, rebooting, suspending.
    HardlinePower = "hardline.power",
    /// Killing every process or PID 1.
    HardlineKillAll = "hardline.kill-all",
    /// A fork bomb, in the shell or in inline code.
    HardlineForkBomb = "hardline.fork-bomb",
    /// `crontab -r`.
    HardlineCrontabRemove = "hardline.crontab-remove",
    /// Removing a package the system cannot run without, or removing with the checks off.
    HardlineSystemPackage = "hardline.system-package",
    /// Deleting every resource of a cluster.
    HardlineClusterWipe = "hardline.cluster-wipe",
    /// The host's root mounted writable into a container.
    HardlineHostRootMount = "hardline.host-root-mount",
    /// A configured deny prefix matched.
    ConfigDenyPrefix = "config.deny-prefix",
    /// A configured deny regex matched.
    ConfigDenyRegex = "config.deny-regex",
    /// A configured ask prefix matched.
    ConfigAskPrefix = "config.ask-prefix",
    /// A configured ask regex matched.
    ConfigAskRegex = "config.ask-regex",
    /// A configured allow prefix matched.
    ConfigAllowPrefix = "config.allow-prefix",
    /// A configured allow regex matched.
    ConfigAllowRegex = "config.allow-regex",
    /// Allow-list mode, and nothing allowed the command.
    ConfigAllowlist = "config.allowlist",
    /// A denied environment variable is set.
    ConfigDeniedEnv = "config.denied-env",
    /// A path outside the workspace.
    WorkspaceOutside = "workspace.outside",
    /// A path only known at run time under the workspace restriction.
    WorkspaceUnresolved = "workspace.unresolved",
    /// A file read that the `read` tool does better.
    InterceptRead = "intercept.read",
    /// A search that the `grep` tool does better.
    InterceptGrep = "intercept.grep",
    /// A file search that the `find` tool does better.
    InterceptFind = "intercept.find",
    /// An in-place edit that the `edit` tool does better.
    InterceptEdit = "intercept.edit",
    /// A file write that the `write` tool does better.
    InterceptWrite = "intercept.write",
    /// The program name is only known at run time.
    UnresolvedCommandName = "unresolved.command-name",
    /// A script generated at run time piped into a shell.
    UnresolvedPipeToShell = "unresolved.pipe-to-shell",
    /// A script generated at run time piped into an interpreter.
    UnresolvedPipeToInterpreter = "unresolved.pipe-to-interpreter",
    /// A script generated at run time and then run.
    UnresolvedGeneratedScript = "unresolved.generated-script",
    /// A shell or code that runs what it reads from the network (a reverse shell, `nc -e`,
    /// `iex (iwr URL)`).
    UnresolvedNetworkShell = "unresolved.network-shell",
    /// A command string only known at run time.
    UnresolvedShellString = "unresolved.shell-string",
    /// `eval` of a string only known at run time.
    UnresolvedEval = "unresolved.eval",
    /// Deletion of names only known at run time (from xargs or find).
    UnresolvedXargs = "unresolved.xargs",
    /// A recursive deletion whose target is only known at run time.
    UnresolvedRecursiveDeleteTarget = "unresolved.recursive-delete-target",
    /// `find -delete` from a start path only known at run time.
    UnresolvedFindDeleteTarget = "unresolved.find-delete-target",
    /// `rsync --delete` to a destination only known at run time.
    UnresolvedRsyncDeleteTarget = "unresolved.rsync-delete-target",
    /// A recursive `chmod` of a path only known at run time.
    UnresolvedRecursiveChmodTarget = "unresolved.recursive-chmod-target",
    /// `mv` of a path only known at run time that could be a system directory.
    UnresolvedMoveTarget = "unresolved.move-target",
    /// Deleting, truncating or moving a file only known at run time.
    UnresolvedFileTarget = "unresolved.file-target",
    /// Running a script whose path is only known at run time.
    UnresolvedScriptPath = "unresolved.script-path",
    /// Formatting a device only known at run time.
    UnresolvedDeviceFormat = "unresolved.device-format",
    /// Writing to a device only known at run time.
    UnresolvedDeviceWrite = "unresolved.device-write",
    /// A git alias only known at run time.
    UnresolvedGitAlias = "unresolved.git-alias",
    /// A shell alias only known at run time.
    UnresolvedAlias = "unresolved.alias",
    /// Inline code that deletes or runs something only known at run time.
    UnresolvedInlineCode = "unresolved.inline-code",
    /// A `pkill`/`killall` pattern only known at run time.
    UnresolvedKillPattern = "unresolved.kill-pattern",
    /// A container mount of a host directory only known at run time.
    UnresolvedMountSource = "unresolved.mount-source",
    /// A runlevel or systemd target only known at run time.
    UnresolvedPower = "unresolved.power",
    /// The command is too complex to analyse completely.
    UnresolvedTooComplex = "unresolved.too-complex",
    /// The command is longer than the policy analyses.
    UnresolvedTooLong = "unresolved.too-long",
    /// The command could not be parsed.
    UnresolvedParse = "unresolved.parse",
    /// The analysis itself failed.
    UnresolvedAnalysisFailed = "unresolved.analysis-failed",
}

impl RuleId {
    /// The id of a verdict's rule text (`config.deny-prefix:git push` is
    /// `ConfigDenyPrefix`).
    pub fn parse(rule: &str) -> Option<RuleId> {
        let id = rule.split_once(':').map_or(rule, |(id, _)| id);
        RuleId::ALL.iter().copied().find(|r| r.as_str() == id)
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule as a finding carries it: the id, and for configured rules the rule's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) id: RuleId,
    pub(crate) detail: Option<String>,
}

impl Rule {
    pub(crate) fn configured(id: RuleId, text: impl Into<String>) -> Rule {
        Rule {
            id,
            detail: Some(text.into()),
        }
    }
}

impl From<RuleId> for Rule {
    fn from(id: RuleId) -> Rule {
        Rule { id, detail: None }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.detail {
            Some(d) => write!(f, "{}:{d}", self.id),
            None => f.write_str(self.id.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate documentation lists every rule id, and lists nothing else.
    #[test]
    fn the_documented_list_is_complete() {
        let doc = include_str!("lib.rs");
        let section = doc
            .split("# Rule ids")
            .nth(1)
            .and_then(|s| s.split("\n//!\n//! The crate does").next())
            .expect("lib.rs has a `# Rule ids` section");
        let mut documented: Vec<String> = section
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|id| id.trim_end_matches(":RULE").to_owned())
            .filter(|id| id.contains('.'))
            .collect();
        documented.sort();
        documented.dedup();
        let mut known: Vec<String> = RuleId::ALL.iter().map(|r| r.as_str().to_owned()).collect();
        known.sort();
        assert_eq!(documented, known);
    }

    #[test]
    fn ids_parse_back() {
        for r in RuleId::ALL {
            assert_eq!(RuleId::parse(r.as_str()), Some(*r));
        }
        assert_eq!(
            RuleId::parse("config.deny-prefix:git push"),
            Some(RuleId::ConfigDenyPrefix)
        );
        assert_eq!(RuleId::parse("nonsense"), None);
    }
}
