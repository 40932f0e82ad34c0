//! `agent-exec serve`: the tool's methods as JSON-RPC 2.0 (contract §7).

use agent_exec_core::{Details, METHODS, Method, Outcome, Progress, ToolResult};
use agent_exec_executor::CancelToken;
use serde_json::{Value, json};

use super::methods::{Reporting, call};
use super::{INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, Protocol, Reply, Server};

pub(crate) struct JsonRpc;

/// `serve`'s methods for messages: the tool's, and `cancel`.
fn method_names() -> String {
    let mut names: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
    names.push("cancel");
    names.join(", ")
}

impl Protocol for JsonRpc {
    fn is_quick(&self, method: &str) -> bool {
        method == "cancel"
    }

    fn params_of(&self, name: &str) -> Option<String> {
        match name {
            "cancel" => Some("id".to_owned()),
            other => Method::named(other).map(|m| m.info().params()),
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
        let Some(method) = Method::named(&incoming.method) else {
            return Reply::Error(
                METHOD_NOT_FOUND,
                format!(
                    "method not found: {:?}; methods: {}",
                    incoming.method,
                    method_names()
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
            Ok(result) => Reply::Serialized(
                serde_json::to_string(&result).unwrap_or_else(|_| "null".to_owned()),
            ),
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
