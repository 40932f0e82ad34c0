//! `agent-exec mcp` driven by the official MCP TypeScript SDK (`@modelcontextprotocol/sdk` on
//! npm), as Node MCP clients drive it: the tool list (the SDK compiles every `outputSchema` with
//! Ajv and validates each `structuredContent` against it; the schemas must also compile under
//! Ajv's strict mode), `bash`, a 12 MB output read back through the SDK's stdio transport (which
//! refuses a message over 10 MiB), progress with a token, a background job, and the server's
//! exit when the client closes. The checks are in `mcp_ts_sdk/client.mjs`.
//!
//! The SDK is installed (`npm ci`, from `mcp_ts_sdk/package-lock.json`) into a copy of
//! `mcp_ts_sdk` under the target directory, when that copy lacks the pinned version (`.ci/run`
//! installs it first).

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What the client needs beside it: `node_modules` is installed next to these.
const FILES: [&str; 3] = ["package.json", "package-lock.json", "client.mjs"];
const SDK: &str = "@modelcontextprotocol/sdk";

fn json_file(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The copy of `mcp_ts_sdk` with the SDK installed; returns the path of its `client.mjs`.
fn client_with_sdk() -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_ts_sdk");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-ts-sdk");
    std::fs::create_dir_all(&dir).unwrap();
    for file in FILES {
        std::fs::copy(source.join(file), dir.join(file))
            .unwrap_or_else(|e| panic!("copying {file} into {}: {e}", dir.display()));
    }
    let pinned = json_file(&source.join("package.json"))
        .and_then(|p| p["dependencies"][SDK].as_str().map(str::to_owned))
        .expect("mcp_ts_sdk/package.json pins @modelcontextprotocol/sdk");
    let installed = json_file(&dir.join("node_modules").join(SDK).join("package.json"))
        .and_then(|p| p["version"].as_str().map(str::to_owned));
    if installed.as_deref() != Some(pinned.as_str()) {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("npm runs (the TypeScript SDK test needs Node and npm)");
        assert!(
            out.status.success(),
            "npm ci in {} failed ({}):\n{}\n{}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir.join("client.mjs")
}

/// Reads a child's pipe to its end on a thread, so a chatty child never blocks on a full pipe.
fn drain(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut pipe = pipe;
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

#[test]
fn the_official_mcp_typescript_sdk_uses_every_tool() {
    let client = client_with_sdk();
    let work = tempfile::tempdir().unwrap();
    let mut child = Command::new("node")
        .arg(&client)
        .arg(common::exe())
        .arg(work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (the TypeScript SDK test needs Node)");
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    // The script bounds each of its waits; this bounds the whole.
    let killed = !common::poll(Duration::from_mins(10), || {
        child.try_wait().unwrap().is_some()
    });
    if killed {
        let _ = child.kill();
    }
    // Bounded: it was killed if it had not exited.
    let status = child.wait().unwrap();
    let stdout = stdout.join().unwrap();
    let stderr = stderr.join().unwrap();
    let killed = if killed {
        "(killed: the client did not finish within 10 minutes)\n"
    } else {
        ""
    };
    assert!(
        status.success() && stdout.contains("all TypeScript SDK checks passed"),
        "{killed}node {} exited with {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        client.display()
    );
}
