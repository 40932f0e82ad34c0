//! The one server loop of `serve` (JSON-RPC 2.0) and `mcp` (the Model Context Protocol), both
//! over stdio, one JSON message per line (contract §7).
//!
//! A reader thread reads bounded byte lines and checks each message (an object, a valid id, a
//! method, named params). Cheap methods (`cancel`, `ping`, `tools/list`) are answered on the
//! spot; the others run on a bounded [`Pool`] of workers, and past its bound a request waits
//! its turn in a bounded queue (past that, the reader reads no more). Answers, batch answers and progress notifications are written whole,
//! one per line. When the client stops reading (stdout closed), everything in flight is
//! cancelled and the server ends; at end of input, what is in flight finishes and is answered
//! first. SIGTERM/SIGINT/SIGHUP cancel too.
//!
//! The protocols differ only in their methods ([`jsonrpc`], [`mcp`]); the MCP server is
//! written to the spec here rather than with the `rmcp` SDK so both share this loop: its
//! bounded lines, bad-input answers and worker bound, none of which an SDK transport gives.

mod jsonrpc;
mod mcp;
mod methods;
mod pool;
mod salvage;

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agent_exec_core::{Tool, json_kind};
use agent_exec_executor::CancelToken;
use serde_json::{Value, json};

use agent_exec_sink::BoundedLines;
use pool::Pool;

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;
/// A server error (JSON-RPC's range -32000..-32099): too many requests in flight.
const SERVER_BUSY: i64 = -32000;

/// The server's bounds (`--max-line-bytes`, `--max-inflight`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// The longest request line read; a longer one is answered with an error and skipped.
    pub(crate) max_line_bytes: usize,
    /// Requests running at once; past it, requests wait their turn.
    pub(crate) max_inflight: usize,
    /// End of input ends everything at once, as a client gone would (`--end-on-eof`: the far
    /// side of a remote target, whose input closing means the connection dropped).
    pub(crate) end_on_eof: bool,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: std::ffi::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What differs between `serve` and `mcp`.
pub(crate) trait Protocol: Send + Sync + 'static {
    /// Methods answered on the reader thread: they never block.
    fn is_quick(&self, method: &str) -> bool;
    /// Answers a request (`id` is set) or carries out a notification (the reply is dropped).
    fn answer(&self, server: &Server, call: &Incoming, cancel: &CancelToken) -> Reply;
    /// The params a method takes (for the error on positional params); `None`: no such method.
    fn params_of(&self, method: &str) -> Option<String>;
    /// Whether `"id": null` is a request id (JSON-RPC allows it; MCP does not).
    fn allows_null_id(&self) -> bool;
    /// Whether a JSON array of messages is a batch (JSON-RPC 2.0; MCP since 2025-06-18 not).
    fn takes_batches(&self) -> bool;
}

/// One request or notification, checked.
pub(crate) struct Incoming {
    /// `None`: a notification.
    pub(crate) id: Option<Value>,
    pub(crate) method: String,
    /// Always an object.
    pub(crate) params: Value,
}

/// The answer to a request.
pub(crate) enum Reply {
    Result(Value),
    /// A result already written as JSON text, straight from its type (no `Value` tree built
    /// and dropped per call).
    Serialized(String),
    Error(i64, String),
}

/// A request in flight: how to cancel it, and whether its answer is still wanted.
struct Inflight {
    token: CancelToken,
    /// MCP's `notifications/cancelled` came: no answer is sent.
    unwanted: bool,
}

/// A batch's answers, sent together once its last request is answered.
struct Batch {
    left: AtomicUsize,
    /// Each answer's JSON text.
    answers: Mutex<Vec<String>>,
}

/// The state every request shares.
pub(crate) struct Server {
    pub(crate) tool: Tool,
    out: Out,
    inflight: Mutex<HashMap<String, Inflight>>,
    pool: Arc<Pool>,
    protocol: Box<dyn Protocol>,
    /// The client can no longer read answers.
    gone: AtomicBool,
    /// Notifications received, for their keys in `inflight`.
    notifications: AtomicUsize,
    /// The request reader; the worker that holds it reads (`None` once the input ended).
    input: Mutex<Option<BoundedLines<std::io::BufReader<Stdin>>>>,
    /// The input ended (or can no longer be read).
    input_ended: AtomicBool,
    max_line_bytes: usize,
    end_on_eof: bool,
}

/// Standard input, read with `read(2)` from any thread (`std::io::Stdin`'s lock cannot move
/// between threads, and the reading role does).
struct Stdin;

impl std::io::Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(rustix::io::read(rustix::stdio::stdin(), buf)?)
    }
}

/// Runs `serve` (`mcp` false) or `mcp` until the client is done; the exit code.
pub(crate) fn run(tool: Tool, bounds: Bounds, mcp: bool) -> i32 {
    crate::on_stop_signals(on_stop);
    let protocol: Box<dyn Protocol> = if mcp {
        Box::new(mcp::Mcp::new(tool.config(), tool.sandbox_summary()))
    } else {
        Box::new(jsonrpc::JsonRpc)
    };
    let server = Arc::new(Server {
        tool,
        out: Out::default(),
        inflight: Mutex::new(HashMap::new()),
        pool: Pool::new(bounds.max_inflight),
        protocol,
        gone: AtomicBool::new(false),
        notifications: AtomicUsize::new(0),
        input: Mutex::new(Some(BoundedLines::new(
            std::io::BufReader::with_capacity(64 << 10, Stdin),
            bounds.max_line_bytes,
        ))),
        input_ended: AtomicBool::new(false),
        max_line_bytes: bounds.max_line_bytes,
        end_on_eof: bounds.end_on_eof,
    });
    if let Err(e) = server.hand_over_reading() {
        eprintln!("agent-exec: cannot start a thread to read requests: {e}");
        return 1;
    }
    {
        let server = server.clone();
        // Without this watch a client that dies while a command runs leaves the command to its
        // timeout: nothing is written until it ends, so no write can fail.
        let _ = std::thread::Builder::new()
            .name("agent-exec-client-watch".into())
            .spawn(move || {
                if wait_stdout_closed() {
                    server.client_gone();
                }
            });
    }
    loop {
        if STOP.load(Ordering::SeqCst) || server.is_gone() {
            server.cancel_all();
            break;
        }
        if server.input_ended.load(Ordering::SeqCst) && server.pool.active() == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Cancelled calls end within their grace period. A call that does not (a worker stuck
    // writing to a client that stopped reading) must not keep the server, its jobs and its
    // sessions alive: past a bound the server ends without it.
    let bound = server.tool.config().grace + CANCELLED_CALLS_END_WITHIN;
    let mut cancelled_at = None;
    while !server.pool.wait_idle(Duration::from_millis(100)) {
        if STOP.load(Ordering::SeqCst) || server.is_gone() {
            server.cancel_all();
            let at = *cancelled_at.get_or_insert_with(std::time::Instant::now);
            if at.elapsed() > bound {
                eprintln!(
                    "agent-exec: {} requests did not end after being cancelled; ending without them",
                    server.pool.active()
                );
                break;
            }
        }
    }
    server.tool.shutdown();
    0
}

/// How long after its grace period a cancelled call may take to end before the server ends
/// without it.
const CANCELLED_CALLS_END_WITHIN: Duration = Duration::from_secs(10);

/// Blocks until the client closes its end of stdout (or stdout is unusable); false if that
/// cannot be watched.
fn wait_stdout_closed() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    // No events asked: poll reports only errors and hang-ups, which a pipe's write end gets
    // once its reader is gone (a file or terminal never does).
    let stdout = rustix::stdio::stdout();
    let mut pfd = [PollFd::new(&stdout, PollFlags::empty())];
    loop {
        match poll(&mut pfd, None) {
            Ok(n) if n > 0 => {
                return pfd[0]
                    .revents()
                    .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL);
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}

impl Server {
    /// Gives the reading role to a worker.
    fn hand_over_reading(self: &Arc<Self>) -> std::io::Result<()> {
        let server = self.clone();
        self.pool.lead(Box::new(move || server.lead()))
    }

    /// The reading role: reads requests and answers the quick ones, until one is to be run;
    /// then hands the reading to another worker and runs that one here.
    fn lead(self: &Arc<Self>) {
        while let Some(task) = self.read_until_a_call() {
            match self.hand_over_reading() {
                Ok(()) => return task(),
                Err(e) => {
                    // No thread to read on: this one reads again once the request is answered.
                    eprintln!(
                        "agent-exec: no thread to read requests while one runs ({e}); reading after it"
                    );
                    task();
                }
            }
        }
    }

    /// Reads until a request is to be run on this thread (`None`: the input ended).
    fn read_until_a_call(self: &Arc<Self>) -> Option<pool::Task> {
        /// Ends the input if the reading is lost to a panic (nobody would read again).
        struct EndOnPanic<'a>(&'a AtomicBool);
        impl Drop for EndOnPanic<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
        }
        let _guard = EndOnPanic(&self.input_ended);
        let mut input = lock(&self.input);
        loop {
            let reader = input.as_mut()?;
            let line = match reader.next_line() {
                Ok(Some(line)) if !self.is_gone() => line,
                Ok(_) => break,
                Err(e) => {
                    eprintln!("agent-exec: reading stdin: {e}");
                    break;
                }
            };
            if line.is_cut() {
                let max = self.max_line_bytes;
                // Answered with the request's id when its start or end shows it, so a client
                // waiting for that id hears back.
                let id = salvage::id_of_cut_line(&line.bytes, &line.tail)
                    .filter(|id| !id.is_null() || self.protocol.allows_null_id())
                    .unwrap_or(Value::Null);
                self.out.send(&error(
                    &id,
                    INVALID_REQUEST,
                    format!(
                        "request too long: {} bytes on one line, and the limit is {max} bytes (--max-line-bytes); it was skipped. Put large data in a file and pass its path",
                        line.len
                    ),
                ));
            } else if let Some(task) = self.handle_line(&line.bytes) {
                return Some(task);
            }
        }
        *input = None;
        self.input_ended.store(true, Ordering::SeqCst);
        if self.end_on_eof {
            self.client_gone();
        }
        None
    }

    /// Handles one request line; a request to run on this thread comes back as a task.
    fn handle_line(self: &Arc<Self>, bytes: &[u8]) -> Option<pool::Task> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                self.out.send(&error(
                    &Value::Null,
                    PARSE_ERROR,
                    format!(
                        "parse error: the line is not valid UTF-8 (at byte {}); JSON text is UTF-8",
                        e.valid_up_to()
                    ),
                ));
                return None;
            }
        };
        let message: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                self.out.send(&error(
                    &Value::Null,
                    PARSE_ERROR,
                    format!("parse error: {e}"),
                ));
                return None;
            }
        };
        match message {
            Value::Array(items) if !self.protocol.takes_batches() => self.refuse_batch(&items),
            Value::Array(items) if items.is_empty() => self.out.send(&error(
                &Value::Null,
                INVALID_REQUEST,
                "invalid request: an empty batch; a batch is an array of one or more requests",
            )),
            Value::Array(items) if items.len() > self.pool.max() => {
                let max = self.pool.max();
                self.out.send(&error(
                    &Value::Null,
                    INVALID_REQUEST,
                    format!(
                        "invalid request: a batch of {} requests; at most {max} per batch (--max-inflight {max}). Send fewer at once",
                        items.len()
                    ),
                ));
            }
            Value::Array(items) => {
                let batch = Arc::new(Batch {
                    left: AtomicUsize::new(items.len()),
                    answers: Mutex::new(Vec::new()),
                });
                let size = bytes.len() / items.len();
                for item in items {
                    self.handle_message(item, size, Some(&batch));
                }
            }
            single => return self.handle_message(single, bytes.len(), None),
        }
        None
    }

    /// A batch where batches are not taken (MCP): each request in it is answered with an
    /// error under its own id, so no client waits for an answer that never comes; one error
    /// with a null id when none has an id.
    fn refuse_batch(&self, items: &[Value]) {
        let text = "invalid request: MCP takes no batches (JSON arrays of messages) since protocol version 2025-06-18; send each message as a line of its own";
        let ids: Vec<&Value> = items
            .iter()
            .filter_map(|item| item.get("id"))
            .filter(|id| id.is_string() || id.is_number())
            .collect();
        if ids.is_empty() {
            self.out.send(&error(&Value::Null, INVALID_REQUEST, text));
        }
        for id in ids {
            self.out.send(&error(id, INVALID_REQUEST, text));
        }
    }

    /// Checks one message and answers it at once, or gives it to a worker; a request that is
    /// not part of a batch comes back as a task for the calling (reading) thread to run.
    fn handle_message(
        self: &Arc<Self>,
        message: Value,
        size: usize,
        batch: Option<&Arc<Batch>>,
    ) -> Option<pool::Task> {
        let call = match check_message(message, self.protocol.as_ref()) {
            Checked::Call(call) => call,
            Checked::Ignore => {
                self.answered(batch, None);
                return None;
            }
            Checked::Refuse(id, code, text) => {
                self.answered(batch, Some(error(&id, code, text)));
                return None;
            }
        };
        if STOP.load(Ordering::SeqCst) || self.is_gone() {
            let answer = call.id.map(|id| {
                error(
                    &id,
                    SERVER_BUSY,
                    "the server is shutting down: nothing new is started",
                )
            });
            self.answered(batch, answer);
            return None;
        }
        let token = CancelToken::new();
        // A request is in flight under its id's JSON text; a notification under a key no id
        // can have (`#N`), so that shutdown reaches it too.
        let key = match &call.id {
            Some(id) => id.to_string(),
            None => format!("#{}", self.notifications.fetch_add(1, Ordering::Relaxed)),
        };
        {
            let mut inflight = lock(&self.inflight);
            if inflight.contains_key(&key) {
                drop(inflight);
                let text = format!(
                    "invalid request: id {key} is already used by a request in flight; give each request its own id"
                );
                self.answered(batch, Some(error(&Value::Null, INVALID_REQUEST, text)));
                return None;
            }
            inflight.insert(
                key.clone(),
                Inflight {
                    token: token.clone(),
                    unwanted: false,
                },
            );
        }
        if self.protocol.is_quick(&call.method) {
            self.finish(&call, &key, batch, &token);
            return None;
        }
        let (server, batch_owned) = (self.clone(), batch.cloned());
        let task_token = token.clone();
        let id = call.id.clone();
        let task_key = key.clone();
        let finish = move || server.finish(&call, &task_key, batch_owned.as_ref(), &task_token);
        // Run here (after handing the reading on), or past `--max-inflight` wait its turn.
        if batch.is_none()
            && let Some(reservation) = self.pool.reserve()
        {
            return Some(Box::new(move || {
                finish();
                drop(reservation);
            }));
        }
        if let Err(pool::NoThread(e)) = self.pool.submit(Box::new(finish), size, token) {
            let text = format!(
                "out of threads: no thread could be started for this request ({e}); retry once a request has been answered"
            );
            lock(&self.inflight).remove(&key);
            let answer = id.map(|id| error(&id, SERVER_BUSY, text));
            self.answered(batch, answer);
        }
        None
    }

    /// Answers `call` and sends (or batches) the answer, unless it is a notification or its
    /// answer is no longer wanted.
    fn finish(&self, call: &Incoming, key: &str, batch: Option<&Arc<Batch>>, token: &CancelToken) {
        let reply =
            std::panic::catch_unwind(AssertUnwindSafe(|| self.protocol.answer(self, call, token)))
                .unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Reply::Error(
                        INTERNAL_ERROR,
                        format!("internal error: the request failed ({what}); the server goes on"),
                    )
                });
        let wanted = lock(&self.inflight)
            .remove(key)
            .is_some_and(|e| !e.unwanted);
        let answer = match (&call.id, wanted) {
            (Some(id), true) => Some(match reply {
                Reply::Result(result) => {
                    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
                }
                Reply::Serialized(result) => {
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
                }
                Reply::Error(code, text) => error(id, code, text),
            }),
            _ => None,
        };
        self.answered(batch, answer);
    }

    /// Sends an answer, or adds it to its batch (sent whole once the batch's last request
    /// is done).
    fn answered(&self, batch: Option<&Arc<Batch>>, answer: Option<String>) {
        let Some(batch) = batch else {
            if let Some(answer) = answer {
                self.out.send(&answer);
            }
            return;
        };
        let mut answers = lock(&batch.answers);
        answers.extend(answer);
        if batch.left.fetch_sub(1, Ordering::SeqCst) == 1 && !answers.is_empty() {
            let all = format!("[{}]", answers.join(","));
            answers.clear();
            drop(answers);
            self.out.send(&all);
        }
    }

    /// Sends a notification to the client (progress).
    pub(crate) fn notify(&self, method: &str, params: &Value) {
        self.out
            .send(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Cancels the request in flight with this id (its JSON text); whether there was one.
    /// `unwanted`: its answer is not sent either (MCP's cancellation).
    pub(crate) fn cancel_request(&self, key: &str, unwanted: bool) -> bool {
        match lock(&self.inflight).get_mut(key) {
            Some(entry) => {
                entry.unwanted |= unwanted;
                entry.token.cancel();
                // Queued behind running requests: answered now, not in its turn.
                self.pool.cancelled();
                true
            }
            None => false,
        }
    }

    fn cancel_all(&self) {
        for entry in lock(&self.inflight).values() {
            entry.token.cancel();
        }
        self.pool.cancelled();
    }

    /// The client no longer reads: its stdout was closed, or a write failed.
    fn is_gone(&self) -> bool {
        self.gone.load(Ordering::SeqCst) || self.out.broken.load(Ordering::SeqCst)
    }

    fn client_gone(&self) {
        if !self.gone.swap(true, Ordering::SeqCst) {
            self.cancel_all();
        }
    }
}

/// What [`check_message`] made of a message.
enum Checked {
    Call(Incoming),
    /// A response from the client, which needs nothing.
    Ignore,
    /// Answer with this error (id, code, message).
    Refuse(Value, i64, String),
}

/// Checks the shape of one JSON-RPC message: an object with a valid id, a method, and named
/// params. Nothing runs for a message that fails.
fn check_message(message: Value, protocol: &dyn Protocol) -> Checked {
    let Value::Object(mut fields) = message else {
        return Checked::Refuse(
            Value::Null,
            INVALID_REQUEST,
            format!(
                "invalid request: a JSON-RPC message is an object such as {{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"exec\", \"params\": {{…}}}}, not {}",
                json_kind(&message)
            ),
        );
    };
    let id = fields.remove("id");
    if id.as_ref().is_some_and(Value::is_null) && !protocol.allows_null_id() {
        return Checked::Refuse(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: id must be a string or a number (MCP does not allow null)".into(),
        );
    }
    if let Some(bad) = id
        .as_ref()
        .filter(|id| !matches!(id, Value::String(_) | Value::Number(_) | Value::Null))
    {
        return Checked::Refuse(
            Value::Null,
            INVALID_REQUEST,
            format!(
                "invalid request: id must be a string, a number or null, not {}",
                json_kind(bad)
            ),
        );
    }
    let refuse =
        |code, text: String| Checked::Refuse(id.clone().unwrap_or(Value::Null), code, text);
    // A notification whose params are wrong gets no answer: there is no id to answer.
    let refuse_params = |text: String| match &id {
        Some(id) => Checked::Refuse(id.clone(), INVALID_PARAMS, text),
        None => Checked::Ignore,
    };
    match fields.get("jsonrpc") {
        None => {}
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => {
            return refuse(
                INVALID_REQUEST,
                format!("invalid request: \"jsonrpc\" must be \"2.0\", not {other}"),
            );
        }
    }
    let method = match fields.remove("method") {
        Some(Value::String(m)) => m,
        None if id.is_some() && (fields.contains_key("result") || fields.contains_key("error")) => {
            return Checked::Ignore;
        }
        None => {
            return refuse(
                INVALID_REQUEST,
                "invalid request: a request needs a \"method\" string".into(),
            );
        }
        Some(other) => {
            return refuse(
                INVALID_REQUEST,
                format!(
                    "invalid request: \"method\" must be a string, not {}",
                    json_kind(&other)
                ),
            );
        }
    };
    let known = protocol.params_of(&method);
    let params = match fields.remove("params") {
        Some(p @ Value::Object(_)) => p,
        // An unknown method's params are not looked at: the method error says more.
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        Some(Value::Array(_)) if known.is_none() => Value::Object(serde_json::Map::new()),
        Some(Value::Array(_)) => {
            let takes = known.unwrap_or_default();
            return refuse_params(format!(
                "invalid params: {method} takes named params, an object ({takes}), not an array"
            ));
        }
        Some(other) => {
            return refuse_params(format!(
                "invalid params: params must be an object, not {}",
                json_kind(&other)
            ));
        }
    };
    Checked::Call(Incoming { id, method, params })
}

/// An error answer; its message (which may quote a name or value from the request) is
/// bounded like every answer's strings.
fn error(id: &Value, code: i64, message: impl Into<String>) -> String {
    let mut message = message.into();
    agent_exec_core::cut_string(&mut message, agent_exec_core::DETAIL_STRING_BYTES);
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Writes one JSON message per line, whole, under a lock. A failed write means the client no
/// longer reads: nothing more is written.
#[derive(Default)]
struct Out {
    stdout: Mutex<()>,
    broken: AtomicBool,
}

impl Out {
    /// Sends one message, given as its JSON text.
    fn send(&self, message: &str) {
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message.as_bytes());
        line.push(b'\n');
        let _held = lock(&self.stdout);
        if self.broken.load(Ordering::SeqCst) {
            return;
        }
        if write_stdout(&line).is_err() {
            self.broken.store(true, Ordering::SeqCst);
        }
    }
}

/// Writes all of `bytes` to fd 1, also when it is non-blocking (a descriptor shared with a
/// terminal or a parent may be): a full pipe is waited on, not taken for a client gone.
// Straight to the descriptor, not through `std::io::stdout()`: only this writer uses stdout in
// the servers, and its buffer would hide how much of a line a failed write took.
fn write_stdout(mut bytes: &[u8]) -> std::io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdout = rustix::stdio::stdout();
    while !bytes.is_empty() {
        match rustix::io::write(stdout, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let _ = poll(&mut [PollFd::new(&stdout, PollFlags::OUT)], None);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
