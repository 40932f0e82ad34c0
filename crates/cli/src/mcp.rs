//! `agent-exec mcp`: the server's tools as a Model Context Protocol server over stdio
//! (newline-delimited JSON-RPC): `bash`, `bash_output`, `bash_input`, `bash_kill`, `read_artifact`.
//!
//! The protocol surface an MCP client needs for tools is small (`initialize`, `tools/list`,
//! `tools/call`, `ping`), so it is served here over the same line loop as `serve`
//! ([`run_protocol`]); only the answers differ.

use agent_exec_core::{Tool, ToolResult, request_schema};
use agent_exec_executor::CancelToken;
use serde_json::{Value, json};

use crate::serve::{
    BadParams, INVALID_PARAMS, Inflight, METHOD_NOT_FOUND, Protocol, dispatch, run_protocol,
};

fn tools() -> Value {
    let id_schema = |field: &str, what: &str| json!({"type": "object", "properties": {field: {"type": "string", "description": what}}, "required": [field]});
    json!([
        {"name": "bash", "description": "Run a shell command. Output is bounded (the full output is kept as artifact://ID), the command is ended on timeout with no survivors, and a safety policy applies. Use run_in_background for servers and watchers, session to keep cd/exports between calls.", "inputSchema": request_schema()},
        {"name": "bash_output", "description": "Read a background job's output: mode \"new\" (since the last read) or \"all\"; wait_ms waits for output or the job's end.", "inputSchema": {"type": "object", "properties": {"job_id": {"type": "string"}, "mode": {"type": "string", "enum": ["new", "all"]}, "wait_ms": {"type": "integer", "minimum": 0}}, "required": ["job_id"]}},
        {"name": "bash_input", "description": "Write to a background job's stdin (a newline is appended unless enter is false; eof closes it).", "inputSchema": {"type": "object", "properties": {"job_id": {"type": "string"}, "data": {"type": "string"}, "enter": {"type": "boolean"}, "eof": {"type": "boolean"}}, "required": ["job_id"]}},
        {"name": "bash_kill", "description": "End a background job and everything it started (TERM, then KILL).", "inputSchema": id_schema("job_id", "the job")},
        {"name": "read_artifact", "description": "Read a spilled full output (artifact://ID) by byte offset and limit.", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}}, "required": ["id"]}}
    ])
}

fn to_mcp(result: &ToolResult) -> Value {
    json!({
        "content": result.content,
        "isError": result.is_error,
        "structuredContent": result.details,
    })
}

#[allow(clippy::needless_pass_by_value)] // params are moved into dispatch on the main path
fn handle(
    tool: &Tool,
    method: &str,
    params: Value,
    cancel: &CancelToken,
    inflight: &Inflight,
) -> Result<Value, (i64, String)> {
    match method {
        "initialize" => {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("2025-06-18")
                .to_owned();
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": "agent-exec", "version": env!("CARGO_PKG_VERSION")},
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools()})),
        "tools/call" => {
            let name = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let args = params
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let method = match name {
                "bash" => "exec",
                "bash_output" => "job_output",
                "bash_input" => "job_input",
                "bash_kill" => "job_kill",
                "read_artifact" => "artifact_read",
                other => {
                    return Err((
                        INVALID_PARAMS,
                        format!(
                            "unknown tool {other:?}; tools: bash, bash_output, bash_input, bash_kill, read_artifact"
                        ),
                    ));
                }
            };
            match dispatch(tool, method, args, cancel, inflight) {
                Some(Ok(result)) => Ok(to_mcp(&result)),
                Some(Err(BadParams(m))) => Err((INVALID_PARAMS, m)),
                None => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
            }
        }
        other => Err((METHOD_NOT_FOUND, format!("method not found: {other:?}"))),
    }
}

/// MCP notifications: only a client's cancellation of a request in flight needs action.
#[allow(clippy::needless_pass_by_value)] // the shared loop hands params over
fn notify(_: &Tool, method: &str, params: Value, inflight: &Inflight) {
    if method == "notifications/cancelled"
        && let Some(id) = params.get("requestId")
        && let Some(token) = inflight
            .lock()
            .ok()
            .and_then(|m| m.get(&id.to_string()).cloned())
    {
        token.cancel();
    }
}

#[allow(clippy::unnecessary_wraps)] // same signature as the other subcommands
pub(crate) fn serve(tool: Tool) -> anyhow::Result<i32> {
    run_protocol(
        tool,
        Protocol {
            answer: handle,
            notify,
            reject_methodless_without_id: false,
        },
    );
    Ok(0)
}
