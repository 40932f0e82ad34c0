//! `agent-exec serve`: the tool's methods as JSON-RPC 2.0 (contract §7).

use agent_exec_core::{Details, Outcome, Progress, ToolResult};
use agent_exec_executor::CancelToken;
use serde_json::{Value, json};

use super::methods::{Method, Reporting, call};
use super::{INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, Protocol, Reply, Server};

const METHODS: &str =
    "exec, job_output, job_input, job_kill, job_list, cancel, artifact_read, session_close";

pub(crate) struct JsonRpc;

fn method(name: &str) -> Option<Method> {
    Some(match name {
        "exec" => Method::Exec,
        "job_output" => Method::JobOutput,
        "job_input" => Method::JobInput,
        "job_kill" => Method::JobKill,
        "job_list" => Method::JobList,
        "artifact_read" => Method::ArtifactRead,
        "session_close" => Method::SessionClose,
        _ => return None,
    })
}

impl Protocol for JsonRpc {
    fn is_quick(&self, method: &str) -> bool {
        method == "cancel"
    }

    fn params_of(&self, name: &str) -> Option<&'static str> {
        match name {
            "cancel" => Some("id"),
            other => method(other).map(Method::params),
        }
    }

    fn allows_null_id(&self) -> bool {
        true
    }

    fn takes_batches(&self) -> bool {
        true
    }

    fn answer(&self, server: &Server, incoming: &Incoming, cancel: &CancelToken) -> Reply {
        if incoming.method == "cancel" {
            return cancel_exec(server, &incoming.params);
        }
        let Some(method) = method(&incoming.method) else {
            return Reply::Error(
                METHOD_NOT_FOUND,
                format!(
                    "method not found: {:?}; methods: {METHODS}",
                    incoming.method
                ),
            );
        };
        let report = |update: &Progress| {
            if let Some(id) = &incoming.id {
                server.notify("exec/progress", &progress_params(id, update));
            }
        };
        // A notification has no id to report progress under.
        let reporting = match incoming.id {
            Some(_) => Reporting::IfAsked(&report),
            None => Reporting::Off,
        };
        match call(server, method, incoming.params.clone(), cancel, reporting) {
            Ok(result) => Reply::Result(serde_json::to_value(result).unwrap_or_default()),
            Err(problem) => Reply::Error(INVALID_PARAMS, format!("invalid params: {problem}")),
        }
    }
}

/// `exec/progress` params (contract §7).
fn progress_params(id: &Value, update: &Progress) -> Value {
    json!({
        "id": id,
        "elapsed_ms": update.elapsed.as_millis() as u64,
        "stdout_bytes": update.stdout_bytes,
        "stderr_bytes": update.stderr_bytes,
        "lines": update.lines,
        "tail": update.tail,
    })
}

/// `cancel {id}`: cancels the request in flight with that JSON-RPC id (an `exec` ends its
/// command and answers `cancelled`; a `job_output` ends its wait).
fn cancel_exec(server: &Server, params: &Value) -> Reply {
    let cwd = server.tool.config().workdir.display().to_string();
    let id = match params.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        Some(_) => {
            return Reply::Error(
                INVALID_PARAMS,
                "invalid params: id: the JSON-RPC id of an exec in flight, a string or a number"
                    .into(),
            );
        }
        None => {
            return Reply::Error(
                INVALID_PARAMS,
                "invalid params: missing field `id` (the JSON-RPC id of the exec to cancel)".into(),
            );
        }
    };
    let key = id.to_string();
    let result = if server.cancel_request(&key, false) {
        ToolResult::new(
            format!("Cancelling request {key}: an exec answers with outcome cancelled."),
            Details::empty(Outcome::Success, cwd),
        )
    } else {
        ToolResult::invalid(format!("no request in flight with id {key}"), cwd)
    };
    Reply::Result(serde_json::to_value(result).unwrap_or_default())
}
