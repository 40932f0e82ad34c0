//! Benchmarks live in `benches/`; this is what several of them share.

use std::path::PathBuf;

/// The release `agent-exec` binary next to the bench executables (benches run from
/// `target/<profile>/deps`), when it was built (`cargo build --release -p agent-exec-cli`).
pub fn agent_exec_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("agent-exec");
    if bin.is_file() {
        Some(bin)
    } else {
        eprintln!(
            "skipping: build {} first (cargo build --release -p agent-exec-cli)",
            bin.display()
        );
        None
    }
}

/// A bash whose stdin and stdout the bench owns: the yardstick of a warm round trip (one line
/// in, `true; printf marker`, one line out), measured from the same client as what it is
/// compared with.
pub struct RawBashPipe {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    line: String,
}

impl RawBashPipe {
    /// Starts `bash --noprofile --norc` on pipes.
    pub fn start() -> RawBashPipe {
        use std::process::{Command, Stdio};
        let mut child = Command::new("bash")
            .args(["--noprofile", "--norc"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("bash");
        RawBashPipe {
            stdin: child.stdin.take(),
            stdout: std::io::BufReader::new(child.stdout.take().expect("stdout")),
            child,
            line: String::new(),
        }
    }

    /// One round trip: `true`, then a marker line read back.
    pub fn round_trip(&mut self) -> &str {
        use std::io::{BufRead, Write};
        let stdin = self.stdin.as_mut().expect("open until drop");
        stdin
            .write_all(b"true; printf 'marker\\n'\n")
            .expect("write");
        stdin.flush().expect("flush");
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("read");
        &self.line
    }
}

impl Drop for RawBashPipe {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// A `serve` process driven over its pipes, one JSON-RPC line per request and answer, as an
/// agent's client drives it.
pub struct Serve {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    line: String,
    id: u64,
}

impl Serve {
    /// Starts `agent-exec serve FLAGS` with `env` added.
    pub fn start(
        bin: &std::path::Path,
        flags: &[String],
        env: &[(String, String)],
        artifacts: &std::path::Path,
    ) -> Serve {
        use std::process::{Command, Stdio};
        let mut child = Command::new(bin)
            .arg("serve")
            .args(flags)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("AGENT_EXEC_ARTIFACTS", artifacts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("agent-exec serve");
        Serve {
            stdin: child.stdin.take().expect("stdin"),
            stdout: std::io::BufReader::new(child.stdout.take().expect("stdout")),
            child,
            line: String::new(),
            id: 0,
        }
    }

    /// Sends one `exec` request (its params as JSON text).
    pub fn send(&mut self, params: &str) {
        use std::io::Write;
        self.id += 1;
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"exec\",\"params\":{params}}}\n",
            self.id
        );
        self.stdin.write_all(request.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Reads the next answer, which must be a successful call.
    pub fn answer(&mut self) -> &str {
        use std::io::BufRead;
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("read");
        assert!(
            self.line.contains("\"outcome\":\"success\""),
            "{}",
            self.line
        );
        &self.line
    }

    /// One call and its answer.
    pub fn exec(&mut self, params: &str) {
        self.send(params);
        self.answer();
    }

    /// The server's resident memory now and at its peak (KiB), and its threads.
    pub fn footprint(&self) -> (u64, u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"), field("Threads:"))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A session call's params: `true` in session `name`, on `target` when given.
pub fn session_call(name: &str, target: Option<&str>) -> String {
    match target {
        Some(t) => format!(r#"{{"command":"true","session":"{name}","target":"{t}"}}"#),
        None => format!(r#"{{"command":"true","session":"{name}"}}"#),
    }
}

/// Scale figures of one `serve` (issue 34): warm session calls per second with 1, 16 and 64
/// sessions in flight at once (each round sends one call per session, then reads the
/// answers); then, with 1,000 sessions open and idle, the server's resident memory and the
/// median warm round trip of one more session. `target`: every session on that remote target.
pub fn scale_figures(
    bin: &std::path::Path,
    flags: &[String],
    env: &[(String, String)],
    target: Option<&str>,
    artifacts: &std::path::Path,
) -> serde_json::Value {
    use std::time::{Duration, Instant};
    const IDLE_SESSIONS: usize = 1000;
    const CALLS: usize = 1024;
    let mut flags = flags.to_vec();
    flags.extend(
        [
            "--max-inflight",
            "128",
            "--max-sessions",
            &(IDLE_SESSIONS + 1).to_string(),
        ]
        .map(str::to_owned),
    );
    let mut figures = serde_json::Map::new();
    for sessions in [1usize, 16, 64] {
        let mut serve = Serve::start(bin, &flags, env, artifacts);
        let calls: Vec<String> = (0..sessions)
            .map(|i| session_call(&format!("s{i}"), target))
            .collect();
        for call in &calls {
            serve.exec(call);
        }
        let rounds = (CALLS / sessions).max(4);
        let start = Instant::now();
        for _ in 0..rounds {
            for call in &calls {
                serve.send(call);
            }
            for _ in &calls {
                serve.answer();
            }
        }
        let per_second = (rounds * sessions) as f64 / start.elapsed().as_secs_f64();
        figures.insert(
            format!("calls_per_second_{sessions}_sessions"),
            serde_json::json!(per_second.round()),
        );
    }
    let mut serve = Serve::start(bin, &flags, env, artifacts);
    let (rss_before, _, _) = serve.footprint();
    // Opened a batch at a time (each a shell of its own), then left idle.
    let batch = 50;
    for first in (0..IDLE_SESSIONS).step_by(batch) {
        let calls: Vec<String> = (first..(first + batch).min(IDLE_SESSIONS))
            .map(|i| session_call(&format!("idle{i}"), target))
            .collect();
        for call in &calls {
            serve.send(call);
        }
        for _ in &calls {
            serve.answer();
        }
    }
    let warm = session_call("warm", target);
    serve.exec(&warm);
    let mut times: Vec<Duration> = (0..200)
        .map(|_| {
            let start = Instant::now();
            serve.exec(&warm);
            start.elapsed()
        })
        .collect();
    times.sort();
    let (rss, peak, threads) = serve.footprint();
    figures.insert("idle_sessions".into(), serde_json::json!(IDLE_SESSIONS));
    figures.insert("rss_kib_empty".into(), serde_json::json!(rss_before));
    figures.insert("rss_kib_with_idle_sessions".into(), serde_json::json!(rss));
    figures.insert("peak_rss_kib".into(), serde_json::json!(peak));
    figures.insert("threads".into(), serde_json::json!(threads));
    figures.insert(
        "warm_round_trip_us_with_idle_sessions".into(),
        serde_json::json!(times[times.len() / 2].as_micros()),
    );
    serde_json::Value::Object(figures)
}

/// Writes a figures file under `target/criterion/NAME/summary.json`, for `cargo xtask bench`.
pub fn write_summary(name: &str, summary: &serde_json::Value) {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/criterion")
        .join(name);
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join("summary.json"), summary.to_string());
    println!("{name}: {summary}");
}
