//! One connection per target: the engine's client running `agent-exec serve --end-on-eof`
//! over there, its stdio carrying newline-delimited JSON-RPC. Many calls share it (each has
//! its own id); it is reused across calls and reopened when it drops — the calls in flight
//! then end with [`RemoteError::Dropped`], and the next call says it reconnected.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel as channel_of};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_exec_executor::channel::Channel;
use agent_exec_executor::env::EnvConfig;
use agent_exec_executor::{CancelToken, ExecSpec, ExitStatus};
use agent_exec_sink::{Sink, Stream};
use serde_json::{Value, json};

use crate::target::Target;
use crate::transport::{Invocation, Transport};

/// How connections are made.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// The far side's `agent-exec` (default: `agent-exec` on its `PATH`, then where
    /// `--install` puts it).
    pub remote_binary: Option<String>,
    /// Copy `local_binary` there when the far side has none (and the architecture matches).
    pub install: bool,
    /// The binary `install` copies (the CLI: itself).
    pub local_binary: Option<PathBuf>,
    /// Arguments of the far side's `serve` after `--end-on-eof` (the operator's sandbox,
    /// limits and window, which the far side enforces).
    pub serve_args: Vec<String>,
    /// How long connecting (the client, its login, the far side's start) may take.
    pub connect_timeout: Duration,
    /// How long a cancelled call waits for the far side's answer before giving up on it.
    pub cancel_bound: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            remote_binary: None,
            install: false,
            local_binary: None,
            serve_args: Vec::new(),
            connect_timeout: Duration::from_mins(1),
            cancel_bound: Duration::from_secs(30),
        }
    }
}

/// Why a remote call did not get the far side's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The connection could not be made.
    #[error("cannot connect to {target}: {reason}")]
    Connect {
        /// The target.
        target: String,
        /// What failed (the client's own message where it gave one).
        reason: String,
    },
    /// No `agent-exec` over there.
    #[error(
        "agent-exec is not installed on {target} (tried {tried}; {detail}): install it there, pass --remote-binary PATH, or --install to copy this one"
    )]
    NotFound {
        /// The target.
        target: String,
        /// The paths tried.
        tried: String,
        /// What the far side said.
        detail: String,
    },
    /// The connection dropped before the answer came.
    #[error("the connection to {target} dropped: {reason}")]
    Dropped {
        /// The target.
        target: String,
        /// Why (the client's exit and last message).
        reason: String,
    },
    /// The call was cancelled before it was sent; nothing ran.
    #[error("the call was cancelled before it was sent")]
    Cancelled,
    /// The far side answered with a JSON-RPC error.
    #[error("{target} refused the call: {message}")]
    Refused {
        /// The target.
        target: String,
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
}

/// The far side's answer to one call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Answer {
    /// The JSON-RPC `result`.
    pub result: Value,
    /// This call opened a new connection because the previous one dropped: why it dropped.
    pub reconnected: Option<String>,
}

/// The connections of one tool, by target.
pub struct Remotes {
    settings: Settings,
    connections: Mutex<HashMap<Target, Arc<Connection>>>,
    /// [`close_all`](Remotes::close_all) ran: no connection is opened any more.
    closed: AtomicBool,
}

impl std::fmt::Debug for Remotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remotes")
            .field("settings", &self.settings)
            .field("connections", &lock(&self.connections).len())
            .field("closed", &self.closed.load(Ordering::Relaxed))
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Remotes {
    /// No connections yet; each is made on its target's first call.
    pub fn new(settings: Settings) -> Remotes {
        Remotes {
            settings,
            connections: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// Calls `method` with `params` on `target`'s `agent-exec serve` and waits for the answer,
    /// at most `answer_within` (past it the connection is presumed lost: it is closed and the
    /// call ends with [`RemoteError::Dropped`]). `cancel` is forwarded (`cancel {id}`);
    /// `on_progress` gets the `exec/progress` params the far side sends for this call.
    pub fn call(
        &self,
        target: &Target,
        method: &str,
        params: Value,
        cancel: &CancelToken,
        answer_within: Duration,
        on_progress: &mut dyn FnMut(&Value),
    ) -> Result<Answer, RemoteError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(RemoteError::Connect {
                target: target.to_string(),
                reason: "the tool is shutting down".into(),
            });
        }
        let connection = lock(&self.connections)
            .entry(target.clone())
            .or_insert_with(|| {
                Arc::new(Connection {
                    target: target.clone(),
                    transport: target.transport(),
                    state: Mutex::new(State::default()),
                })
            })
            .clone();
        let (link, reconnected) = connection.link(&self.settings, cancel)?;
        // A close that came while this call connected: the new link is nobody's to close.
        if self.closed.load(Ordering::SeqCst) {
            link.end();
            return Err(RemoteError::Connect {
                target: target.to_string(),
                reason: "the tool is shutting down".into(),
            });
        }
        let deadline = Instant::now() + answer_within;
        let result = link.call(
            method,
            params,
            cancel,
            on_progress,
            &self.settings,
            Some(deadline),
        )?;
        Ok(Answer {
            result,
            reconnected,
        })
    }

    /// Closes every connection: the far sides see their input end and end everything they
    /// ran (sessions, jobs, calls in flight), then exit.
    pub fn close_all(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let connections: Vec<Arc<Connection>> =
            lock(&self.connections).drain().map(|(_, c)| c).collect();
        let links: Vec<Arc<Link>> = connections
            .iter()
            .filter_map(|c| lock(&c.state).link.take())
            .collect();
        for link in &links {
            link.close_input();
        }
        for link in links {
            link.end();
        }
    }
}

impl Drop for Remotes {
    fn drop(&mut self) {
        self.close_all();
    }
}

struct Connection {
    target: Target,
    transport: Box<dyn Transport>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    link: Option<Arc<Link>>,
    /// The far side's binary that worked last time.
    binary: Option<String>,
    /// Why the last link dropped, until a call on a new link tells it.
    dropped: Option<String>,
    /// The last attempt to connect failed, when and why: the calls that waited for it get
    /// its error rather than each trying again in turn.
    failed: Option<(Instant, RemoteError)>,
}

/// How long a failed attempt to connect answers the calls that come after it.
const FAILURE_HOLDS: Duration = Duration::from_secs(1);

/// Why opening a link failed.
enum OpenError {
    /// The binary is not there.
    NotFound(String),
    Other(RemoteError),
}

impl Connection {
    /// The live link, connecting first when there is none (the mutex makes concurrent first
    /// calls wait for one connection rather than each opening its own).
    fn link(
        &self,
        settings: &Settings,
        cancel: &CancelToken,
    ) -> Result<(Arc<Link>, Option<String>), RemoteError> {
        let mut state = lock(&self.state);
        if let Some(link) = &state.link
            && link.is_alive()
        {
            return Ok((link.clone(), None));
        }
        if let Some(old) = state.link.take() {
            state.dropped.get_or_insert_with(|| old.why_dropped());
            old.end();
        }
        if let Some((at, error)) = &state.failed
            && at.elapsed() < FAILURE_HOLDS
        {
            return Err(error.clone());
        }
        match self.connect(&mut state, settings, cancel) {
            Ok(link) => {
                state.failed = None;
                state.link = Some(link.clone());
                Ok((link, state.dropped.take()))
            }
            Err(e) => {
                if e != RemoteError::Cancelled {
                    state.failed = Some((Instant::now(), e.clone()));
                }
                Err(e)
            }
        }
    }

    /// Opens a link: the binaries the far side may have, in turn, then `--install`.
    fn connect(
        &self,
        state: &mut State,
        settings: &Settings,
        cancel: &CancelToken,
    ) -> Result<Arc<Link>, RemoteError> {
        let mut candidates: Vec<String> = Vec::new();
        match &settings.remote_binary {
            Some(bin) => candidates.push(bin.clone()),
            None => {
                for bin in state
                    .binary
                    .iter()
                    .cloned()
                    .chain(["agent-exec".to_owned(), self.transport.install_path()])
                {
                    if !candidates.contains(&bin) {
                        candidates.push(bin);
                    }
                }
            }
        }
        let mut not_found = Vec::new();
        for bin in &candidates {
            match self.open(bin, settings, cancel) {
                Ok(link) => {
                    state.binary = Some(bin.clone());
                    return Ok(link);
                }
                Err(OpenError::NotFound(detail)) => not_found.push((bin.clone(), detail)),
                Err(OpenError::Other(e)) => return Err(e),
            }
        }
        if settings.install {
            let bin = settings
                .remote_binary
                .clone()
                .unwrap_or_else(|| self.transport.install_path());
            self.install(settings, &bin, cancel)?;
            return match self.open(&bin, settings, cancel) {
                Ok(link) => {
                    state.binary = Some(bin);
                    Ok(link)
                }
                Err(OpenError::NotFound(detail)) => Err(self.connect_error(format!(
                    "the copied binary {bin} does not start there: {detail}"
                ))),
                Err(OpenError::Other(e)) => Err(e),
            };
        }
        Err(RemoteError::NotFound {
            target: self.target.to_string(),
            tried: not_found
                .iter()
                .map(|(b, _)| b.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            detail: not_found.last().map(|(_, d)| d.clone()).unwrap_or_default(),
        })
    }

    fn connect_error(&self, reason: String) -> RemoteError {
        RemoteError::Connect {
            target: self.target.to_string(),
            reason,
        }
    }

    /// Starts `bin serve` over there and waits for its first answer.
    fn open(
        &self,
        bin: &str,
        settings: &Settings,
        cancel: &CancelToken,
    ) -> Result<Arc<Link>, OpenError> {
        let mut remote = vec![
            bin.to_owned(),
            "serve".into(),
            "--end-on-eof".into(),
            "--max-line-bytes".into(),
            MAX_REQUEST_BYTES.to_string(),
        ];
        remote.extend(settings.serve_args.iter().cloned());
        let inv = self.transport.exec(&remote);
        let link = Link::start(&self.target, &inv).map_err(OpenError::Other)?;
        // The handshake: a quick method, proving the far side is agent-exec and serving.
        let deadline = Instant::now() + settings.connect_timeout;
        match link.call(
            "job_list",
            json!({}),
            cancel,
            &mut |_| {},
            settings,
            Some(deadline),
        ) {
            Ok(_) => Ok(link),
            Err(RemoteError::Dropped { reason, .. }) => {
                // 127 from a shell (ssh, kubectl), 126/127 from a container runtime's exec;
                // an engine's own failures (no such container, no such pod) are 1.
                let missing = matches!(link.exit_code(), Some(126 | 127));
                link.end();
                Err(if missing {
                    OpenError::NotFound(reason)
                } else {
                    OpenError::Other(self.connect_error(reason))
                })
            }
            Err(RemoteError::Cancelled) => {
                link.end();
                Err(OpenError::Other(RemoteError::Cancelled))
            }
            Err(e) => {
                link.end();
                Err(OpenError::Other(self.connect_error(e.to_string())))
            }
        }
    }

    /// Copies `settings.local_binary` to `bin` over there, when the architectures match.
    fn install(
        &self,
        settings: &Settings,
        bin: &str,
        cancel: &CancelToken,
    ) -> Result<(), RemoteError> {
        let Some(local) = &settings.local_binary else {
            return Err(self.connect_error(
                "--install has no local agent-exec binary to copy (Settings::local_binary)".into(),
            ));
        };
        let run = |inv: Invocation| -> Result<String, RemoteError> {
            run_to_end(&inv, cancel).map_err(|e| self.connect_error(e))
        };
        let arch = run(self.transport.exec(&["uname".into(), "-m".into()]))?;
        let arch = arch.trim();
        let here = std::env::consts::ARCH;
        if arch != here {
            return Err(self.connect_error(format!(
                "it runs on {arch} and this agent-exec is built for {here}: install an {arch} build there and pass --remote-binary PATH"
            )));
        }
        if let Some(dir) = self.transport.install_dir() {
            run(self.transport.exec(&["mkdir".into(), "-p".into(), dir]))?;
        }
        run(self.transport.copy(local, bin))?;
        run(self
            .transport
            .exec(&["chmod".into(), "755".into(), bin.to_owned()]))?;
        Ok(())
    }
}

/// What the reader hands a waiting call.
enum Event {
    Answer(Value),
    Progress(Value),
    Dropped(String),
}

/// One running client process and the calls waiting on it.
struct Link {
    target: String,
    program: String,
    input: Mutex<Option<File>>,
    pending: Mutex<HashMap<u64, Sender<Event>>>,
    alive: AtomicBool,
    next_id: AtomicU64,
    channel: Mutex<Option<Channel>>,
    exit: Mutex<Option<ExitStatus>>,
    errors: Arc<Mutex<Vec<u8>>>,
    /// Says when the client's stderr has ended (its last words are all in `errors`).
    errors_done: Mutex<Option<Receiver<()>>>,
    why: Mutex<Option<String>>,
}

/// The client's last words kept for messages.
const ERRORS_KEPT: usize = 4096;

/// The longest request line sent (the far side is told to read lines this long; a longer
/// request is refused here rather than answered there with an error nobody waits for).
const MAX_REQUEST_BYTES: usize = 64 << 20;

impl Link {
    fn start(target: &Target, inv: &Invocation) -> Result<Arc<Link>, RemoteError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut channel = Channel::start(&inv.program, &inv.args, &cwd, &EnvConfig::default())
            .map_err(|e| RemoteError::Connect {
                target: target.to_string(),
                reason: e.to_string(),
            })?;
        let output = channel.take_output().expect("stdout is piped");
        let errors_file = channel.take_errors().expect("stderr is piped");
        let (done_tx, done_rx) = channel_of();
        let link = Arc::new(Link {
            target: target.to_string(),
            program: inv.program.clone(),
            input: Mutex::new(channel.take_input()),
            pending: Mutex::new(HashMap::new()),
            alive: AtomicBool::new(true),
            next_id: AtomicU64::new(1),
            channel: Mutex::new(Some(channel)),
            exit: Mutex::new(None),
            errors: Arc::new(Mutex::new(Vec::new())),
            errors_done: Mutex::new(Some(done_rx)),
            why: Mutex::new(None),
        });
        let errors = link.errors.clone();
        let spawned = std::thread::Builder::new()
            .name("agent-exec-remote-stderr".into())
            .spawn(move || {
                keep_last_words(errors_file, &errors);
                let _ = done_tx.send(());
            })
            .and_then(|_| {
                let reader = link.clone();
                std::thread::Builder::new()
                    .name("agent-exec-remote-reader".into())
                    .spawn(move || reader.read_answers(output))
            });
        if let Err(e) = spawned {
            link.end();
            return Err(RemoteError::Connect {
                target: target.to_string(),
                reason: format!("no thread to read the connection: {e}"),
            });
        }
        Ok(link)
    }

    fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    fn exit_code(&self) -> Option<i32> {
        match *lock(&self.exit) {
            Some(ExitStatus::Exited(code)) => Some(code),
            _ => None,
        }
    }

    fn why_dropped(&self) -> String {
        lock(&self.why)
            .clone()
            .unwrap_or_else(|| "it was closed".into())
    }

    /// The reader: routes answers and progress to the waiting calls, until end of file.
    fn read_answers(self: Arc<Self>, output: File) {
        let mut reader = BufReader::with_capacity(64 << 10, output);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            // Anything that is not JSON (a login banner, a noisy shell profile, an engine's
            // error — `docker exec` prints "executable file not found" on stdout) is kept
            // with the client's last words.
            let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                remember(&self.errors, &line);
                continue;
            };
            let (id, event) = if message.get("result").is_some() || message.get("error").is_some() {
                (
                    message.get("id").and_then(Value::as_u64),
                    Event::Answer(message),
                )
            } else if message.get("method").and_then(Value::as_str) == Some("exec/progress") {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                (
                    params.get("id").and_then(Value::as_u64),
                    Event::Progress(params),
                )
            } else {
                continue;
            };
            let Some(id) = id else { continue };
            let mut pending = lock(&self.pending);
            match event {
                Event::Answer(_) => {
                    if let Some(tx) = pending.remove(&id) {
                        let _ = tx.send(event);
                    }
                }
                _ => {
                    if let Some(tx) = pending.get(&id) {
                        let _ = tx.send(event);
                    }
                }
            }
        }
        // The far side's output ended: the client exited or is exiting.
        let status = lock(&self.channel)
            .as_mut()
            .and_then(|c| c.wait_for(Duration::from_secs(2)));
        *lock(&self.exit) = status;
        // The client's last words on stderr may come a moment after its stdout closed.
        if let Some(done) = lock(&self.errors_done).take() {
            let _ = done.recv_timeout(Duration::from_millis(500));
        }
        let why = self.describe_end(status);
        *lock(&self.why) = Some(why.clone());
        self.alive.store(false, Ordering::SeqCst);
        for (_, tx) in lock(&self.pending).drain() {
            let _ = tx.send(Event::Dropped(why.clone()));
        }
    }

    fn describe_end(&self, status: Option<ExitStatus>) -> String {
        let errors = lock(&self.errors);
        let said = String::from_utf8_lossy(&errors);
        let said: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
        let last = said[said.len().saturating_sub(3)..].join(" / ");
        let program = Path::new(&self.program)
            .file_name()
            .map_or(self.program.clone(), |n| n.to_string_lossy().into_owned());
        let ended = match status {
            Some(ExitStatus::Exited(code)) => format!("{program} exited with code {code}"),
            Some(ExitStatus::Signaled(sig)) => format!(
                "{program} was killed by {}",
                agent_exec_executor::signal_name(sig)
            ),
            None => format!("{program} closed its output"),
        };
        if last.is_empty() {
            ended
        } else {
            format!("{ended}: {last}")
        }
    }

    fn send(&self, message: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).expect("JSON values serialize");
        line.push(b'\n');
        match lock(&self.input).as_mut() {
            Some(input) => input.write_all(&line),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        }
    }

    /// One call over this link.
    fn call(
        &self,
        method: &str,
        params: Value,
        cancel: &CancelToken,
        on_progress: &mut dyn FnMut(&Value),
        settings: &Settings,
        deadline: Option<Instant>,
    ) -> Result<Value, RemoteError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if cancel.is_cancelled() {
            return Err(RemoteError::Cancelled);
        }
        let (tx, rx): (Sender<Event>, Receiver<Event>) = channel_of();
        lock(&self.pending).insert(id, tx);
        let dropped = |reason: String| RemoteError::Dropped {
            target: self.target.clone(),
            reason,
        };
        if !self.is_alive() {
            lock(&self.pending).remove(&id);
            return Err(dropped(self.why_dropped()));
        }
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        request["params"] = params;
        let size = request.to_string().len();
        if size >= MAX_REQUEST_BYTES {
            lock(&self.pending).remove(&id);
            return Err(RemoteError::Refused {
                target: self.target.clone(),
                code: -32600,
                message: format!(
                    "the request is {size} bytes, and a remote target takes at most {MAX_REQUEST_BYTES}: put large data in a file there"
                ),
            });
        }
        if self.send(&request).is_err() {
            // The reader will report why, once the client's end is seen.
            return match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(Event::Dropped(why)) => Err(dropped(why)),
                _ => {
                    lock(&self.pending).remove(&id);
                    Err(dropped("the request could not be written".into()))
                }
            };
        }
        let mut cancelled_at: Option<Instant> = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(Event::Answer(message)) => return self.answer_of(&message),
                Ok(Event::Progress(params)) => on_progress(&params),
                Ok(Event::Dropped(why)) => return Err(dropped(why)),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(dropped(self.why_dropped()));
                }
                Err(RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    if let Some(d) = deadline
                        && now >= d
                    {
                        // Nothing came back in time: the connection is presumed lost, and
                        // closed so that the next call opens a new one.
                        lock(&self.pending).remove(&id);
                        self.end();
                        return Err(dropped(format!(
                            "no answer from {} in time; the connection was closed",
                            self.program
                        )));
                    }
                    if cancel.is_cancelled() {
                        match cancelled_at {
                            None => {
                                cancelled_at = Some(now);
                                let _ = self.send(&json!({
                                    "jsonrpc": "2.0", "id": format!("cancel-{id}"),
                                    "method": "cancel", "params": {"id": id}
                                }));
                            }
                            Some(at) if now - at > settings.cancel_bound => {
                                lock(&self.pending).remove(&id);
                                self.end();
                                return Err(dropped(format!(
                                    "no answer {} s after the call was cancelled; the connection was closed",
                                    settings.cancel_bound.as_secs()
                                )));
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
        }
    }

    fn answer_of(&self, message: &Value) -> Result<Value, RemoteError> {
        if let Some(error) = message.get("error") {
            return Err(RemoteError::Refused {
                target: self.target.clone(),
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned(),
            });
        }
        Ok(message.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Closes the far side's input: it ends everything it ran and exits.
    fn close_input(&self) {
        drop(lock(&self.input).take());
    }

    /// Closes the input, gives the far side a moment to end its work and exit, then ends
    /// the client (and anything it started here).
    fn end(&self) {
        self.close_input();
        let channel = lock(&self.channel).take();
        if let Some(mut channel) = channel
            && channel.wait_for(Duration::from_secs(3)).is_none()
        {
            channel.end(Duration::from_secs(1));
        }
        self.alive.store(false, Ordering::SeqCst);
    }
}

/// Keeps the last [`ERRORS_KEPT`] bytes the client wrote to stderr.
fn keep_last_words(mut errors: File, kept: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 4096];
    loop {
        match errors.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => remember(kept, &buf[..n]),
        }
    }
}

fn remember(kept: &Mutex<Vec<u8>>, bytes: &[u8]) {
    let mut kept = lock(kept);
    kept.extend_from_slice(bytes);
    if kept.len() > ERRORS_KEPT {
        let cut = kept.len() - ERRORS_KEPT;
        kept.drain(..cut);
    }
}

/// Output of a short helper command (bounded).
#[derive(Default)]
struct Collected {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Sink for Collected {
    type Error = std::convert::Infallible;

    fn push(&mut self, stream: Stream, chunk: &[u8]) -> Result<bool, Self::Error> {
        let buf = match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        };
        if buf.len() < 64 << 10 {
            buf.extend_from_slice(chunk);
        }
        Ok(true)
    }
}

/// Runs a helper command of the engine's client (`uname`, a copy) to its end; its stdout, or
/// what went wrong.
fn run_to_end(inv: &Invocation, cancel: &CancelToken) -> Result<String, String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut spec = ExecSpec::argv(&inv.program, inv.args.clone(), cwd);
    spec.timeout = Some(Duration::from_mins(5));
    // Its stdout is the answer (`uname -m`), its stderr what went wrong (ssh's warnings).
    spec.output = agent_exec_executor::OutputPipes::Separate;
    let mut out = Collected::default();
    let outcome = agent_exec_executor::run(&spec, &mut out, cancel);
    let shown = || format!("{} {}", inv.program, inv.args.join(" "));
    if let Some(e) = outcome.spawn_error {
        return Err(format!("`{}` could not start: {e}", shown()));
    }
    match outcome.status {
        Some(ExitStatus::Exited(0)) => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        status => Err(format!(
            "`{}` failed ({}): {}",
            shown(),
            match status {
                Some(ExitStatus::Exited(c)) => format!("exit code {c}"),
                Some(ExitStatus::Signaled(s)) => agent_exec_executor::signal_name(s),
                None => "stopped".into(),
            },
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}
