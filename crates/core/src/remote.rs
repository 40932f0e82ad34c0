//! Calls on remote targets (contract §9): the operator's target and allow-list, the far side's
//! settings, and a call carried to `agent-exec serve` over there by `agent-exec-remote`.
//!
//! The far side does the work as it would locally (sandbox, limits, window, artifacts,
//! sessions, jobs); here the request is checked and policed first, and the answer gets
//! `details.target` and, after a dropped connection, a line saying so.

use std::time::Duration;

use agent_exec_executor::{CancelToken, SandboxMode};
use agent_exec_remote::{Answer, RemoteError, Settings, Target, pattern_matches};
use serde_json::Value;

use crate::config::{Config, SandboxOrigin};
use crate::plan::Plan;
use crate::progress::Observer;
use crate::render;
use crate::tool::{Approval, Tool};
use agent_exec_protocol::Request;
use agent_exec_protocol::{Details, Outcome, ToolResult};

/// The operator's remote targets (flags `--target`, `--allow-target`, `--remote-binary`,
/// `--install`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RemoteConfig {
    /// Where calls run when they name no target; `None`: here.
    pub target: Option<Target>,
    /// Targets a request may name, as patterns (`*` stands for any run of characters). The
    /// operator's own `target` is always allowed.
    pub allowed: Vec<String>,
    /// How connections are made.
    pub settings: Settings,
}

impl RemoteConfig {
    /// Where a call goes: the target it names (when allowed), else the operator's.
    pub(crate) fn resolve(&self, asked: Option<&str>) -> Result<Option<Target>, String> {
        let Some(asked) = asked.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(self.target.clone());
        };
        let target: Target = asked
            .parse()
            .map_err(|e: agent_exec_remote::TargetError| e.0)?;
        let uri = target.to_string();
        // The URI as printed back from what was parsed: what the client will reach.
        let allowed = self.target.as_ref() == Some(&target)
            || self.allowed.iter().any(|p| pattern_matches(p, &uri));
        if allowed {
            return Ok(Some(target));
        }
        let what = match (&self.target, self.allowed.is_empty()) {
            (None, true) => {
                "none (the operator allows targets with --allow-target PATTERN)".to_owned()
            }
            _ => self
                .target
                .iter()
                .map(ToString::to_string)
                .chain(self.allowed.iter().cloned())
                .collect::<Vec<_>>()
                .join(", "),
        };
        Err(format!(
            "target {asked:?} is not allowed; allowed targets: {what}"
        ))
    }
}

/// The arguments of the far side's `serve` that carry the operator's settings there, all of
/// them in one serialization ([`Config::to_far_settings`]): the far side enforces them for its
/// calls, and a setting added to [`Config`] reaches it with no list to keep.
pub(crate) fn far_side_args(config: &Config) -> Vec<String> {
    vec!["--settings".to_owned(), config.to_far_settings()]
}

impl Tool {
    /// Where a call goes: `Ok(None)` here; why the target named cannot be used.
    pub(crate) fn target_of(&self, asked: Option<&str>) -> Result<Option<Target>, String> {
        self.runner().config.remote.resolve(asked)
    }

    /// Carries a server method (`job_output`, `job_input`, `job_kill`, `job_list`,
    /// `artifact_read`, `session_close`) to the target its params name (`target`), or the
    /// operator's; `None` when it is for here. The params are those of the method (contract
    /// §7).
    pub fn forward(
        &self,
        target: Option<&str>,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Option<ToolResult> {
        let target = match self.target_of(target) {
            Ok(Some(t)) => t,
            Ok(None) => return None,
            Err(refused) => {
                return Some(ToolResult::invalid(refused, self.runner().workdir_text()));
            }
        };
        let mut params = params;
        if let Some(object) = params.as_object_mut() {
            object.remove("target");
        }
        // A job's output may be waited for (at most 10 minutes); the rest answer at once.
        let waits = params
            .get("wait_ms")
            .and_then(Value::as_u64)
            .map_or(Duration::ZERO, |ms| Duration::from_millis(ms.min(600_000)));
        let answer = self.runner().remotes.call(
            &target,
            method,
            params,
            cancel,
            waits + NO_ANSWER_BOUND,
            &mut |_| {},
        );
        Some(remote_result(&target, answer, ""))
    }

    /// An `exec` on `target`: checked and policed here, run over there.
    pub(crate) fn remote_exec(
        &self,
        request: &Request,
        target: &Target,
        cancel: &CancelToken,
        approval: Approval,
        observer: Option<&Observer>,
    ) -> ToolResult {
        let config = &self.runner().config;
        // The working directory is the far side's: it is resolved there.
        let mut here = request.clone();
        here.cwd = None;
        // The far side enforces its own default; this side only checks a request tightens it.
        let far_mode = config.sandbox.mode.map_or(
            (SandboxMode::WorkspaceWrite, SandboxOrigin::Default),
            |mode| (mode, SandboxOrigin::Operator),
        );
        let validated = match crate::validate::validate(
            &here,
            &config.workdir,
            config.default_timeout,
            far_mode,
        ) {
            Ok(v) => v,
            Err(e) => {
                let mut invalid = ToolResult::invalid(e.0, request.cwd.clone().unwrap_or_default());
                invalid.details.target = Some(target.to_string());
                return invalid;
            }
        };
        let plan = Plan::new(validated, config);
        if let Some(mut refused) = self.police(&plan, approval) {
            refused.details.target = Some(target.to_string());
            return refused;
        }
        let mut forwarded = request.clone();
        forwarded.target = None;
        if forwarded.timeout.is_none() && forwarded.timeout_ms.is_none() {
            forwarded.timeout_ms = i64::try_from(config.default_timeout.as_millis()).ok();
        }
        forwarded.progress |= observer.is_some();
        let params = serde_json::to_value(&forwarded).expect("a request serializes");
        let answer = self.runner().remotes.call(
            target,
            "exec",
            params,
            cancel,
            plan.timeout + config.grace + NO_ANSWER_BOUND,
            &mut |update| {
                if let Some(observer) = observer {
                    observer.absorb(update);
                }
            },
        );
        remote_result(target, answer, request.cwd.as_deref().unwrap_or(""))
    }
}

/// How long past its own bound (the command's timeout, a job read's wait) a remote call waits
/// for its answer before the connection is presumed lost (ssh notices a dead peer sooner, in
/// 45 s: `ServerAliveInterval`).
const NO_ANSWER_BOUND: Duration = Duration::from_mins(2);

/// The far side's answer as a result of this tool: `details.target` set; a failure to reach
/// it is `spawn_failed` (contract §9).
fn remote_result(target: &Target, answer: Result<Answer, RemoteError>, cwd: &str) -> ToolResult {
    let uri = target.to_string();
    let mut result = match answer {
        Ok(answer) => match serde_json::from_value::<ToolResult>(answer.result) {
            Ok(mut result) => {
                if let Some(why) = answer.reconnected
                    && let Some(first) = result.content.first_mut()
                {
                    first.text = format!("{}\n{}", render::reconnected(&uri, &why), first.text);
                }
                result
            }
            Err(e) => ToolResult::new(
                render::remote_failed(
                    &format!(
                        "the answer of {uri} is not a result of this version of agent-exec ({e}); install the same version there"
                    ),
                    true,
                ),
                Details::empty(Outcome::SpawnFailed, cwd.to_owned()),
            ),
        },
        // The far side found the params wrong: the model's to fix, as here.
        Err(RemoteError::Refused { message, code, .. }) if code == -32602 || code == -32600 => {
            ToolResult::invalid(message, cwd.to_owned())
        }
        Err(RemoteError::Cancelled) => {
            let mut d = Details::empty(Outcome::Cancelled, cwd.to_owned());
            d.cancelled = true;
            ToolResult::new(render::cancelled_before_run(), d)
        }
        Err(e) => ToolResult::new(
            render::remote_failed(&e.to_string(), matches!(e, RemoteError::Dropped { .. })),
            Details::empty(Outcome::SpawnFailed, cwd.to_owned()),
        ),
    };
    result.details.target = Some(uri);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(target: Option<&str>, allowed: &[&str]) -> RemoteConfig {
        RemoteConfig {
            target: target.map(|t| t.parse().unwrap()),
            allowed: allowed.iter().map(|s| (*s).to_owned()).collect(),
            settings: Settings::default(),
        }
    }

    #[test]
    fn a_request_names_only_an_allowed_target() {
        let c = config(Some("docker://main"), &["docker://agent-*"]);
        assert_eq!(
            c.resolve(None).unwrap().unwrap().to_string(),
            "docker://main"
        );
        assert_eq!(
            c.resolve(Some("docker://agent-3"))
                .unwrap()
                .unwrap()
                .to_string(),
            "docker://agent-3"
        );
        assert_eq!(
            c.resolve(Some("docker://main"))
                .unwrap()
                .unwrap()
                .to_string(),
            "docker://main"
        );
        let refused = c.resolve(Some("ssh://prod")).unwrap_err();
        assert!(
            refused.contains("\"ssh://prod\" is not allowed")
                && refused.contains("docker://agent-*"),
            "{refused}"
        );
        let none = config(None, &[]).resolve(Some("docker://x")).unwrap_err();
        assert!(none.contains("--allow-target"), "{none}");
        assert!(config(None, &[]).resolve(None).unwrap().is_none());
        let bad = config(None, &["*"])
            .resolve(Some("docker://-x"))
            .unwrap_err();
        assert!(bad.contains("not a valid name"), "{bad}");
    }

    #[test]
    fn the_operators_settings_reach_the_far_side_whole() {
        let mut c = Config::default();
        c.sandbox.mode = Some(SandboxMode::WorkspaceWrite);
        c.sandbox.deny_read.push("/srv/secrets".into());
        c.limits.memory = Some(512 << 20);
        c.max_bytes = 1000;
        c.max_lines = Some(40);
        c.retention.max_count = 7;
        c.env.secrets.pass.push("MY_TOKEN".into());
        c.env.overrides.insert("PAGER".into(), "less".into());
        c.salient.patterns = vec!["BOOM".into()];
        c.sessions.max_sessions = 3;
        c.prompt_idle = None;
        c.pty_size = "120x40".parse().unwrap();
        let args = far_side_args(&c);
        assert_eq!(args[0], "--settings");
        assert!(
            args[1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "one word no shell reads: {}",
            args[1]
        );
        let far = Config::from_far_settings(&args[1]).unwrap();
        let json = |c: &Config| serde_json::to_value(c).unwrap();
        assert_eq!(json(&far), json(&c));
        // What is this machine's own stays the far side's.
        c.workdir = "/near/only".into();
        c.artifacts_dir = "/near/artifacts".into();
        let far = Config::from_far_settings(&c.to_far_settings()).unwrap();
        assert_eq!(far.workdir, Config::default().workdir);
        assert_eq!(far.artifacts_dir, Config::default().artifacts_dir);
        assert!(Config::from_far_settings("not base64!").is_err());
    }
}
