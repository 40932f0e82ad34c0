//! The Python client of the PyPI package (`packages/python`), from its source, keeps working
//! against this build of `agent-exec serve`: its checks (sync and asyncio: calls, a session, a
//! job, progress, cancel) run here against the debug build. The installed packages, and the
//! TypeScript client, are checked as users get them by `xtask/tests/packages.rs`.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// The checks take seconds; this bound only keeps a broken build from hanging the suite.
const BOUND: Duration = Duration::from_mins(3);

/// A pipe read on a thread, chunk by chunk, so what it said so far can be taken at any time.
struct Collector {
    bytes: Arc<Mutex<Vec<u8>>>,
    reader: thread::JoinHandle<()>,
}

fn collect(mut pipe: impl Read + Send + 'static) -> Collector {
    let bytes = Arc::new(Mutex::new(Vec::new()));
    let sink = bytes.clone();
    let reader = thread::spawn(move || {
        let mut chunk = [0; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            sink.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    Collector { bytes, reader }
}

/// What the pipes said. A process the client started (the server, or a stray grandchild after a
/// kill) can hold them open past the client's end, so their end is awaited only briefly.
fn collected<const N: usize>(pipes: [Collector; N]) -> [String; N] {
    common::poll(Duration::from_secs(5), || {
        pipes.iter().all(|p| p.reader.is_finished())
    });
    pipes.map(|p| String::from_utf8_lossy(&p.bytes.lock().unwrap()).into_owned())
}

#[test]
fn python_client_checks_pass() {
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packages/python");
    let artifacts = tempfile::tempdir().expect("temp dir for artifacts");
    let mut child = Command::new("python3")
        .arg(package.join("tests/check_client.py"))
        .arg(common::exe())
        .env("PYTHONPATH", package.join("python"))
        .env("AGENT_EXEC_ARTIFACTS", artifacts.path())
        // Its progress lines then survive a kill at the bound.
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed to run the Python example client");
    let stdout = collect(child.stdout.take().expect("stdout is piped"));
    let stderr = collect(child.stderr.take().expect("stderr is piped"));

    let mut status = None;
    common::poll(BOUND, || {
        status = child.try_wait().expect("wait for python3");
        status.is_some()
    });
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }

    let [stdout, stderr] = collected([stdout, stderr]);
    let verdict = match status {
        Some(status) if status.success() && stdout.contains("all checks passed") => return,
        Some(status) => format!("exited with {status}"),
        None => format!("was killed after {} s", BOUND.as_secs()),
    };
    panic!("check_client.py {verdict}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
}
