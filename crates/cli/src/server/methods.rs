//! The methods both servers offer (contract §7, listed once in the protocol's registry), with
//! their params checked: one place that turns params into a call of the
//! [`Tool`](agent_exec_core::Tool).

use agent_exec_core::{
    ArtifactRead, JobInput, JobKill, JobList, JobOutputRequest, Method, Progress, Request,
    SessionClose, ToolResult, parse_params,
};
use agent_exec_executor::CancelToken;
use serde_json::Value;

use super::Server;

/// Where an `exec`'s progress goes.
#[derive(Clone, Copy)]
pub(crate) enum Reporting<'a> {
    /// Nowhere.
    Off,
    /// To this, when the request asks with `"progress": true` (`serve`).
    IfAsked(&'a (dyn Fn(&Progress) + Sync)),
    /// To this (MCP: the call carried a progress token).
    Always(&'a (dyn Fn(&Progress) + Sync)),
}

/// Runs `method`; `Err` names what is wrong with the params. An `exec`'s progress goes where
/// `reporting` says, on the contract's schedule, until the call is cancelled. Every answer is
/// bounded ([`ToolResult::bounded`]), a far side's too.
pub(crate) fn call(
    server: &Server,
    method: Method,
    params: Value,
    cancel: &CancelToken,
    reporting: Reporting<'_>,
) -> Result<ToolResult, String> {
    let answer = answer(server, method, params, cancel, reporting)?;
    Ok(answer.bounded(server.tool.config().max_bytes))
}

fn answer(
    server: &Server,
    method: Method,
    params: Value,
    cancel: &CancelToken,
    reporting: Reporting<'_>,
) -> Result<ToolResult, String> {
    let tool = &server.tool;
    // A job, session or artifact on a remote target is the far side's to answer (`exec`
    // routes itself: its request is checked and policed here first).
    if method != Method::Exec {
        let target = params.get("target").and_then(Value::as_str);
        if let Some(result) = tool.forward(target, method.name(), params.clone(), cancel) {
            return Ok(result);
        }
    }
    Ok(match method {
        Method::Exec => {
            let request = Request::from_value(params)
                .map_err(|e| e.0.trim_start_matches("invalid request: ").to_owned())?;
            let send = match reporting {
                Reporting::Always(send) => Some(send),
                Reporting::IfAsked(send) if request.progress => Some(send),
                _ => None,
            };
            match send {
                // A cancelled call's progress is no longer wanted (MCP: none may follow).
                Some(send) => tool.execute_reporting(&request, cancel, &|update| {
                    if !cancel.is_cancelled() {
                        send(update);
                    }
                }),
                None => tool.execute(&request, cancel),
            }
        }
        Method::JobOutput => {
            tool.job_output_cancellable(&parse_params::<JobOutputRequest>(params)?, Some(cancel))
        }
        Method::JobInput => tool.job_input(&parse_params::<JobInput>(params)?),
        Method::JobKill => tool.job_kill(parse_params::<JobKill>(params)?.job_id.as_str()),
        Method::JobList => tool.job_list(&parse_params::<JobList>(params)?),
        Method::ArtifactRead => tool.artifact_read(&parse_params::<ArtifactRead>(params)?),
        Method::SessionClose => tool.session_close(&parse_params::<SessionClose>(params)?.session),
    })
}
