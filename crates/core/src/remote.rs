//! A call carried to `agent-exec serve` on a remote target (contract §9) by
//! `agent-exec-remote`, and its answer as a result of this tool.
//!
//! The far side does the work as it would locally (sandbox, limits, window, artifacts,
//! sessions, jobs); the tool checks and polices the request first (`tool.rs`), and the answer
//! gets `details.target` and, after a dropped connection, a line saying so. The operator's
//! targets are settings (`config.rs`).

use std::time::Duration;

use agent_exec_protocol::{Details, Outcome, ToolResult};
use agent_exec_remote::{Answer, RemoteError, Target};

use crate::render;

/// How long past its own bound (the command's timeout, a job read's wait) a remote call waits
/// for its answer before the connection is presumed lost (ssh notices a dead peer sooner, in
/// 45 s: `ServerAliveInterval`).
pub(crate) const NO_ANSWER_BOUND: Duration = Duration::from_mins(2);

/// The far side's answer as a result of this tool: `details.target` set; a failure to reach
/// it is `spawn_failed` (contract §9).
pub(crate) fn remote_result(
    target: &Target,
    answer: Result<Answer, RemoteError>,
    cwd: &str,
) -> ToolResult {
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
                render::remote_failed(&render::foreign_answer(&uri, &e.to_string()), true),
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
