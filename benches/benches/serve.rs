//! Calls through `agent-exec serve`, driven over stdio by a client process (this one), as an
//! agent drives it, against yardsticks measured from the same client in the same run:
//! - a warm session's `true` vs a raw bash pipe round trip (target ≤ 2×);
//! - a one-shot `true` (in a prepared shell) vs a fresh `bash -c true` (target ≥ 3× faster).
//!
//! - a one-shot `true` that may yield (`yield_ms` far off: it ends first) vs the same call
//!   without (target: no measurable cost, ratio ≈ 1);
//! - a call that yields (`sleep 30`, `yield_ms` 50) vs the client sleeping those 50 ms: what
//!   answering at `yield_ms` costs beyond the wait itself.
//!
//! One-shot calls are timed with a pause before each (not timed), as an agent's calls come
//! with its thinking between them: the pause is when the server starts the next prepared
//! shell. Both sides get the same pause. The back-to-back row shows one-shot calls with no
//! pause at all, where each call also waits for a shell to be started.
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use agent_exec_benches::agent_exec_binary;
use criterion::{Criterion, criterion_group, criterion_main};

/// Between timed one-shot calls: an agent's think time, shortened.
const PAUSE: Duration = Duration::from_millis(20);

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    id: u64,
}

impl Server {
    fn start(bin: &std::path::Path, artifacts: &std::path::Path, flags: &[&str]) -> Server {
        let mut child = Command::new(bin)
            .arg("serve")
            .args(flags)
            .env("AGENT_EXEC_ARTIFACTS", artifacts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("agent-exec serve");
        Server {
            stdin: child.stdin.take().expect("stdin"),
            stdout: BufReader::new(child.stdout.take().expect("stdout")),
            child,
            line: String::new(),
            id: 0,
        }
    }

    /// One `exec` request and its answer (the text is built as a client would).
    fn exec(&mut self, params: &str) {
        self.call("exec", params);
    }

    /// One request and its answer, kept in `self.line`.
    fn call(&mut self, method: &str, params: &str) {
        self.id += 1;
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"{method}\",\"params\":{params}}}\n",
            self.id
        );
        self.stdin.write_all(request.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("read");
        assert!(self.line.contains("\"result\""), "{}", self.line);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `yield_ms` of the yielding row.
const YIELD: Duration = Duration::from_millis(50);

/// The `job_id` of an answer line.
fn job_id(line: &str) -> String {
    let answer: serde_json::Value = serde_json::from_str(line).expect("an answer");
    answer["result"]["details"]["job_id"]
        .as_str()
        .expect("a yielded call's job id")
        .to_owned()
}

/// Times `call` after an untimed pause, `iters` times.
fn paused(iters: u64, mut call: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        std::thread::sleep(PAUSE);
        let start = Instant::now();
        call();
        total += start.elapsed();
    }
    total
}

fn fresh_bash_c_true() {
    Command::new("bash")
        .args(["-c", "true"])
        .output()
        .expect("bash");
}

fn bench(c: &mut Criterion) {
    let Some(bin) = agent_exec_binary() else {
        return;
    };
    let artifacts = tempfile::tempdir().expect("tempdir");
    let mut group = c.benchmark_group("serve_session_true");
    let mut raw = agent_exec_benches::RawBashPipe::start();
    group.bench_function("raw_bash_pipe", |b| {
        b.iter(|| {
            raw.round_trip();
        });
    });
    drop(raw);
    // The default (the sandbox on) and `--sandbox off`, side by side: the default's cost.
    let mut unsandboxed = Server::start(&bin, artifacts.path(), &["--sandbox", "off"]);
    group.bench_function("agent_exec_serve_sandbox_off", |b| {
        b.iter(|| unsandboxed.exec(r#"{"command":"true","session":"bench"}"#));
    });
    drop(unsandboxed);
    let mut server = Server::start(&bin, artifacts.path(), &[]);
    group.bench_function("agent_exec_serve", |b| {
        b.iter(|| server.exec(r#"{"command":"true","session":"bench"}"#));
    });
    group.finish();

    let mut group = c.benchmark_group("serve_one_shot_true");
    group.sample_size(20);
    group.bench_function("fresh_bash_c_true", |b| {
        b.iter_custom(|iters| paused(iters, fresh_bash_c_true));
    });
    group.bench_function("agent_exec_serve_prepared", |b| {
        b.iter_custom(|iters| paused(iters, || server.exec(r#"{"command":"true"}"#)));
    });
    group.bench_function("agent_exec_serve_shell_prepared", |b| {
        b.iter_custom(|iters| paused(iters, || server.exec(r#"{"command":":; true"}"#)));
    });
    group.finish();

    let mut group = c.benchmark_group("serve_yield");
    group.sample_size(20);
    group.bench_function("agent_exec_serve_prepared", |b| {
        b.iter_custom(|iters| paused(iters, || server.exec(r#"{"command":"true"}"#)));
    });
    group.bench_function("agent_exec_serve_prepared_may_yield", |b| {
        b.iter_custom(|iters| {
            paused(iters, || {
                server.exec(r#"{"command":"true","yield_ms":30000}"#);
            })
        });
    });
    // A call that yields: its answer's time, against the wait it was asked for. The job it
    // leaves is killed untimed.
    group.bench_function("sleep_yield_wait", |b| {
        b.iter_custom(|iters| paused(iters, || std::thread::sleep(YIELD)));
    });
    group.bench_function("agent_exec_serve_yielded", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                std::thread::sleep(PAUSE);
                let start = Instant::now();
                server.exec(r#"{"command":"sleep 30","yield_ms":50}"#);
                total += start.elapsed();
                let job = job_id(&server.line);
                server.call("job_kill", &format!(r#"{{"job_id":"{job}"}}"#));
            }
            total
        });
    });
    group.finish();

    let mut group = c.benchmark_group("serve_one_shot_back_to_back");
    group.sample_size(20);
    group.bench_function("fresh_bash_c_true", |b| b.iter(fresh_bash_c_true));
    group.bench_function("agent_exec_serve", |b| {
        b.iter(|| server.exec(r#"{"command":":; true"}"#));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
