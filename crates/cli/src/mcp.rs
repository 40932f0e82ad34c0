//! `agent-exec mcp`: the server's tools as a Model Context Protocol server over stdio
//! (newline-delimited JSON-RPC): `bash`, `bash_output`, `bash_input`, `bash_kill`, `read_artifact`.
//!
//! The protocol surface an MCP client needs for tools is small (`initialize`, `tools/list`,
//! `tools/call`, `ping`), so it is served here over the same line loop as `serve`.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_exec_core::{Tool, ToolResult, request_schema};
use agent_exec_executor::CancelToken;
use serde_json::{Value, json};

use crate::serve::{
    BadParams, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Out, PARSE_ERROR, dispatch,
    error, success,
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
    inflight: &Mutex<HashMap<String, CancelToken>>,
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

#[allow(clippy::unnecessary_wraps)] // same signature as the other subcommands
pub(crate) fn serve(tool: Tool) -> anyhow::Result<i32> {
    crate::serve::install_stop_handlers();
    let tool = Arc::new(tool);
    let out = Out::new();
    let inflight: Arc<Mutex<HashMap<String, CancelToken>>> = Arc::new(Mutex::new(HashMap::new()));
    let lines = crate::serve::stdin_lines();
    let mut workers = Vec::new();
    loop {
        if crate::serve::stopping() {
            break;
        }
        let line = match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(l)) => l,
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
        };
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                out.send(&error(
                    &Value::Null,
                    PARSE_ERROR,
                    format!("parse error: {e}"),
                ));
                continue;
            }
        };
        let id = message.get("id").cloned();
        let Some(method) = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            if let Some(id) = id {
                out.send(&error(
                    &id,
                    INVALID_REQUEST,
                    "invalid request: missing \"method\"",
                ));
            }
            continue;
        };
        if method == "notifications/cancelled" {
            if let Some(rid) = message.pointer("/params/requestId")
                && let Some(t) = inflight
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&rid.to_string()).cloned())
            {
                t.cancel();
            }
            continue;
        }
        let Some(id) = id else { continue };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let token = CancelToken::new();
        if let Ok(mut m) = inflight.lock() {
            m.insert(id.to_string(), token.clone());
        }
        let (tool, out, inflight) = (tool.clone(), out.clone(), inflight.clone());
        workers.push(std::thread::spawn(move || {
            let answer = handle(&tool, &method, params, &token, &inflight);
            if let Ok(mut m) = inflight.lock() {
                m.remove(&id.to_string());
            }
            out.send(&match answer {
                Ok(result) => success(&id, &result),
                Err((code, message)) => error(&id, code, message),
            });
        }));
        workers.retain(|w| !w.is_finished());
    }
    crate::serve::finish(&tool, workers, &inflight);
    Ok(0)
}
