//! The one test client of `agent-exec serve` and `agent-exec mcp`: JSON-RPC 2.0, one message
//! a line. A reader thread feeds a channel, so every read is bounded (a silent server fails
//! the test naming what it waited for); dropping a [`Server`] kills and reaps it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::process::{Guard, WAIT, exe};

/// A running `serve` or `mcp` and the messages it wrote that were not read yet.
pub(crate) struct Server {
    // Dropped first: the process goes before its directory.
    process: Guard,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    what: String,
    mcp: bool,
    /// Answers that came while the test waited for another one, oldest first.
    pending: VecDeque<Value>,
    /// The notifications [`Server::answer`] and [`Server::answer_to`] passed over, in order.
    pub(crate) notifications: Vec<Value>,
    next_id: u64,
    dir: Option<tempfile::TempDir>,
}

impl Server {
    /// `agent-exec serve FLAGS` in a directory of its own (see [`Server::start`]).
    pub(crate) fn serve(flags: &[&str]) -> Server {
        Server::start("serve", flags)
    }

    /// `agent-exec mcp FLAGS` in a directory of its own (see [`Server::start`]).
    pub(crate) fn mcp(flags: &[&str]) -> Server {
        Server::start("mcp", flags)
    }

    /// `agent-exec SUBCOMMAND FLAGS` run from a temporary directory of its own
    /// ([`Server::path`]), its artifacts under it.
    pub(crate) fn start(subcommand: &str, flags: &[&str]) -> Server {
        Server::start_with(subcommand, flags, |_| {})
    }

    /// [`Server::start`], the command adjusted by `adjust` first (more environment, say).
    pub(crate) fn start_with(
        subcommand: &str,
        flags: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Server {
        let mut cmd = Command::new(exe());
        cmd.arg(subcommand).args(flags);
        Server::in_own_dir(cmd, adjust)
    }

    /// [`Server::start`], started by `sh -c` after `prefix` (`ulimit -n 64;`).
    pub(crate) fn start_in_shell(subcommand: &str, flags: &[&str], prefix: &str) -> Server {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("{prefix} exec \"$0\" \"$@\""))
            .arg(exe())
            .arg(subcommand)
            .args(flags);
        Server::in_own_dir(cmd, |_| {})
    }

    fn in_own_dir(mut cmd: Command, adjust: impl FnOnce(&mut Command)) -> Server {
        let dir = tempfile::tempdir().expect("a temporary directory");
        cmd.env("AGENT_EXEC_ARTIFACTS", dir.path().join("artifacts"))
            .current_dir(dir.path());
        adjust(&mut cmd);
        Server::spawn(cmd).keeping(dir)
    }

    /// A prepared `agent-exec serve|mcp …` command (under `runuser`, with its own environment
    /// and directory, …), its stdin and stdout piped to the test. `mcp` if its first
    /// `serve`/`mcp` word is `mcp`.
    pub(crate) fn spawn(mut cmd: Command) -> Server {
        let words: Vec<String> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        let mcp = cmd.get_args().find(|a| *a == "serve" || *a == "mcp") == Some("mcp".as_ref());
        let what = if mcp {
            "agent-exec mcp"
        } else {
            "agent-exec serve"
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} could not start ({e}): {words:?}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            process: Guard::new(child, what),
            lines,
            what: what.to_owned(),
            mcp,
            pending: VecDeque::new(),
            notifications: Vec::new(),
            next_id: 1,
            dir: None,
        }
    }

    /// Keeps `dir` (the server's directory, say) until the server is gone.
    pub(crate) fn keeping(mut self, dir: tempfile::TempDir) -> Server {
        self.dir = Some(dir);
        self
    }

    pub(crate) fn is_mcp(&self) -> bool {
        self.mcp
    }

    pub(crate) fn pid(&self) -> i32 {
        self.process.pid()
    }

    /// `name` in the directory the server was given to keep.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir().join(name)
    }

    pub(crate) fn dir(&self) -> &Path {
        self.dir
            .as_ref()
            .expect("a server started in a directory of its own")
            .path()
    }

    /// Writes `bytes` and a newline.
    pub(crate) fn send_bytes(&mut self, bytes: &[u8]) {
        let what = &self.what;
        let stdin = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("{what}: its stdin was closed already"));
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("{what} does not read its stdin: {e}"));
    }

    /// Writes one line as it is.
    pub(crate) fn send_line(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_bytes(message.to_string().as_bytes());
    }

    /// Sends the request `id` without waiting for its answer.
    pub(crate) fn send_request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "id": id.into(), "method": method});
        message["params"] = params;
        self.send(&message);
    }

    /// Sends a request under the next id of the server's own count (1, 2, …); that id.
    pub(crate) fn send_next(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send_request(id, method, params);
        id
    }

    /// The next line written, waiting at most `bound`; panics naming what was awaited.
    pub(crate) fn recv_line_within(&mut self, bound: Duration, awaited: &str) -> String {
        match self.lines.recv_timeout(bound) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("{}: no {awaited} within {bound:?}", self.what)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!(
                "{}: closed its output while the test waited for {awaited} (exit: {:?})",
                self.what,
                self.process.try_wait()
            ),
        }
    }

    /// The next line written ([`WAIT`] at most).
    pub(crate) fn recv_line(&mut self) -> String {
        self.recv_line_within(WAIT, "message")
    }

    fn parse(&self, line: &str) -> Value {
        serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line:?}", self.what))
    }

    /// The next message not read yet, whatever it is ([`WAIT`] at most).
    pub(crate) fn recv(&mut self) -> Value {
        if let Some(m) = self.pending.pop_front() {
            return m;
        }
        let line = self.recv_line();
        self.parse(&line)
    }

    /// The next message that is not a notification (those go to
    /// [`Server::notifications`]).
    pub(crate) fn answer(&mut self) -> Value {
        if let Some(m) = self.pending.pop_front() {
            return m;
        }
        loop {
            let line = self.recv_line_within(WAIT, "answer");
            let m = self.parse(&line);
            if m.get("method").is_none() {
                return m;
            }
            self.notifications.push(m);
        }
    }

    /// The answer to request `id`; other answers that come first wait their turn, for
    /// [`Server::answer`] and [`Server::recv`].
    pub(crate) fn answer_to(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        if let Some(at) = self.pending.iter().position(|m| m["id"] == id) {
            return self.pending.remove(at).expect("the position is in range");
        }
        loop {
            let line = self.recv_line_within(WAIT, &format!("answer to request {id}"));
            let m = self.parse(&line);
            if m.get("method").is_some() {
                self.notifications.push(m);
            } else if m["id"] == id {
                return m;
            } else {
                self.pending.push_back(m);
            }
        }
    }

    /// Sends request `id` and returns its answer.
    pub(crate) fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send_request(id.clone(), method, params);
        self.answer_to(id)
    }

    /// Sends a request under the next id of the server's own count; its answer.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_next(method, params);
        self.answer_to(id)
    }

    /// [`Server::call`]'s `result`.
    pub(crate) fn result(&mut self, method: &str, params: Value) -> Value {
        self.call(method, params)["result"].clone()
    }

    /// The answers to `n` requests, in whatever order they come, by their ids' JSON text.
    pub(crate) fn answers(&mut self, n: usize) -> std::collections::HashMap<String, Value> {
        let mut answers = std::collections::HashMap::new();
        while answers.len() < n {
            let m = self.answer();
            answers.insert(m["id"].to_string(), m);
        }
        answers
    }

    /// The MCP handshake: `initialize` (under the next id of the server's count), then
    /// `notifications/initialized`; the answer to `initialize`.
    pub(crate) fn initialize(&mut self) -> Value {
        let answer = self.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Ends the server's input (a clean end for it).
    pub(crate) fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    pub(crate) fn signal(&self, sig: i32) {
        self.process.signal(sig);
    }

    pub(crate) fn sigterm(&self) {
        self.signal(libc::SIGTERM);
    }

    /// SIGKILL, then reaps it.
    pub(crate) fn kill(&mut self) -> ExitStatus {
        self.process.kill()
    }

    /// Its exit status if it has exited (reaping it), without waiting.
    pub(crate) fn try_wait(&mut self) -> Option<ExitStatus> {
        self.process.try_wait()
    }

    /// Waits ([`WAIT`] at most) for the server to exit; its status.
    pub(crate) fn wait_exit(&mut self) -> ExitStatus {
        self.process.wait_exit()
    }

    /// Closes stdin and waits for the server to exit; its status.
    pub(crate) fn finish(mut self) -> ExitStatus {
        self.close_stdin();
        self.wait_exit()
    }
}
