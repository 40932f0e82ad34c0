//! `agent-exec serve`: JSON-RPC 2.0 over stdio, one message per line (contract §7).
//!
//! Requests are handled concurrently, each on its own thread; responses are written whole, one
//! per line, under a lock. `cancel {id}` cancels the `exec` whose JSON-RPC id that is. When
//! stdin closes or SIGTERM/SIGINT/SIGHUP arrives, every job and session ends with the server.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agent_exec_core::{JobInput, JobOutputRequest, Request, Tool, ToolResult};
use agent_exec_executor::CancelToken;
use serde_json::{Value, json};

/// JSON-RPC error codes.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes one JSON message per line.
#[derive(Clone)]
pub(crate) struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    pub(crate) fn new() -> Self {
        Out(Arc::new(Mutex::new(std::io::stdout())))
    }

    pub(crate) fn send(&self, message: &Value) {
        let line = serde_json::to_string(message).unwrap_or_default();
        let mut out = lock(&self.0);
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

pub(crate) fn error(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

pub(crate) fn success(id: &Value, result: &impl serde::Serialize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Reads stdin lines on a thread; the receiver sees `None` at EOF.
pub(crate) fn stdin_lines() -> mpsc::Receiver<Option<String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            match line {
                Ok(l) => {
                    if tx.send(Some(l)).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    rx
}

pub(crate) fn install_stop_handlers() {
    crate::on_stop_signals(on_stop);
}

pub(crate) fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// A parameter problem, reported as JSON-RPC "invalid params".
pub(crate) struct BadParams(pub(crate) String);

fn param_str(params: &Value, name: &str) -> Result<String, BadParams> {
    match params.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(BadParams(format!(
            "invalid params: {name} must be a string"
        ))),
        None => Err(BadParams(format!("invalid params: missing field `{name}`"))),
    }
}

fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, BadParams> {
    serde_json::from_value(params).map_err(|e| BadParams(format!("invalid params: {e}")))
}

/// Job ids may arrive as numbers; the tool's types take strings.
fn stringify_job_id(mut params: Value) -> Value {
    if let Some(obj) = params.as_object_mut()
        && let Some(Value::Number(n)) = obj.get("job_id").cloned()
    {
        obj.insert("job_id".into(), Value::String(n.to_string()));
    }
    params
}

/// Handles one method call. `None` = unknown method.
pub(crate) fn dispatch(
    tool: &Tool,
    method: &str,
    params: Value,
    cancel: &CancelToken,
    inflight: &Inflight,
) -> Option<Result<ToolResult, BadParams>> {
    let params = if params.is_null() { json!({}) } else { params };
    Some(match method {
        "exec" => Request::from_value(params)
            .map(|r| tool.execute(&r, cancel))
            .map_err(|e| {
                BadParams(format!(
                    "invalid params: {}",
                    e.0.trim_start_matches("invalid request: ")
                ))
            }),
        "job_output" => {
            parse::<JobOutputRequest>(stringify_job_id(params)).map(|r| tool.job_output(&r))
        }
        "job_input" => parse::<JobInput>(stringify_job_id(params)).map(|r| tool.job_input(&r)),
        "job_kill" => param_str(&params, "job_id").map(|id| tool.job_kill(&id)),
        "session_close" => param_str(&params, "session").map(|s| tool.session_close(&s)),
        "artifact_read" => param_str(&params, "id").map(|id| {
            let offset = params.get("offset").and_then(Value::as_u64).unwrap_or(0);
            let limit = params.get("limit").and_then(Value::as_u64);
            tool.artifact_read(&id, offset, limit)
        }),
        "cancel" => params
            .get("id")
            .cloned()
            .ok_or_else(|| BadParams("invalid params: missing field `id`".into()))
            .map(|id| {
                let key = id.to_string();
                let cwd = tool.config().workdir.display().to_string();
                match lock(inflight).get(&key) {
                    Some(token) => {
                        token.cancel();
                        let d =
                            agent_exec_core::Details::empty(agent_exec_core::Outcome::Success, cwd);
                        ToolResult::new(
                            format!(
                                "Cancelling exec {key}: it will answer with outcome cancelled."
                            ),
                            d,
                        )
                    }
                    None => ToolResult::invalid(format!("no exec in flight with id {key}"), cwd),
                }
            }),
        _ => return None,
    })
}

/// Requests in flight, by the string form of their JSON-RPC id: what `cancel` reaches.
pub(crate) type Inflight = Mutex<HashMap<String, CancelToken>>;

/// Answers one request: its result, or a JSON-RPC error code and message.
pub(crate) type Answer =
    fn(&Tool, &str, Value, &CancelToken, &Inflight) -> Result<Value, (i64, String)>;

/// What differs between the JSON-RPC server and the MCP server; the line loop is shared.
#[derive(Clone, Copy)]
pub(crate) struct Protocol {
    /// Answers a request that has an id.
    pub(crate) answer: Answer,
    /// Handles a message without an id (a notification); nothing is written back.
    pub(crate) notify: fn(&Tool, &str, Value, &Inflight),
    /// A message with no `method` gets an "invalid request" error even without an id (JSON-RPC
    /// says so; an MCP client also sends responses, which have no method, so MCP stays quiet).
    pub(crate) reject_methodless_without_id: bool,
}

fn answer_jsonrpc(
    tool: &Tool,
    method: &str,
    params: Value,
    cancel: &CancelToken,
    inflight: &Inflight,
) -> Result<Value, (i64, String)> {
    match dispatch(tool, method, params, cancel, inflight) {
        None => Err((
            METHOD_NOT_FOUND,
            format!(
                "method not found: {method:?}; methods: exec, job_output, job_input, job_kill, cancel, artifact_read, session_close"
            ),
        )),
        Some(Err(BadParams(m))) => Err((INVALID_PARAMS, m)),
        Some(Ok(result)) => Ok(serde_json::to_value(result).unwrap_or_default()),
    }
}

/// A JSON-RPC notification is carried out; it just gets no answer.
fn notify_jsonrpc(tool: &Tool, method: &str, params: Value, inflight: &Inflight) {
    let _ = dispatch(tool, method, params, &CancelToken::new(), inflight);
}

#[allow(clippy::unnecessary_wraps)] // same signature as the other subcommands
pub(crate) fn serve(tool: Tool) -> anyhow::Result<i32> {
    run_protocol(
        tool,
        Protocol {
            answer: answer_jsonrpc,
            notify: notify_jsonrpc,
            reject_methodless_without_id: true,
        },
    );
    Ok(0)
}

/// The line loop of both servers: one JSON message per line in, each request answered on its
/// own thread, one JSON message per line out; then [`finish`].
pub(crate) fn run_protocol(tool: Tool, protocol: Protocol) {
    install_stop_handlers();
    let tool = Arc::new(tool);
    let out = Out::new();
    let inflight: Arc<Inflight> = Arc::new(Mutex::new(HashMap::new()));
    let lines = stdin_lines();
    let mut workers = Vec::new();
    while !stopping() {
        let line = match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(line)) => line,
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
            if id.is_some() || protocol.reject_methodless_without_id {
                out.send(&error(
                    &id.unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    "invalid request: a JSON-RPC 2.0 request needs a \"method\" string",
                ));
            }
            continue;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let (tool, out, inflight) = (tool.clone(), out.clone(), inflight.clone());
        let (answer, notify) = (protocol.answer, protocol.notify);
        workers.push(match id {
            None => std::thread::spawn(move || notify(&tool, &method, params, &inflight)),
            Some(id) => {
                let key = id.to_string();
                let token = CancelToken::new();
                lock(&inflight).insert(key.clone(), token.clone());
                std::thread::spawn(move || {
                    let answer = answer(&tool, &method, params, &token, &inflight);
                    lock(&inflight).remove(&key);
                    out.send(&match answer {
                        Ok(result) => success(&id, &result),
                        Err((code, message)) => error(&id, code, message),
                    });
                })
            }
        });
        workers.retain(|w| !w.is_finished());
    }
    finish(&tool, workers, &inflight);
}

/// Ends the server: requests already received finish and are answered (at end of input), or
/// are cancelled (on SIGTERM/SIGINT, also while waiting); then every job and session ends.
fn finish(tool: &Tool, workers: Vec<std::thread::JoinHandle<()>>, inflight: &Inflight) {
    let mut cancelled = false;
    while !workers.iter().all(std::thread::JoinHandle::is_finished) {
        if stopping() && !cancelled {
            for token in lock(inflight).values() {
                token.cancel();
            }
            cancelled = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for w in workers {
        let _ = w.join();
    }
    tool.shutdown();
}
