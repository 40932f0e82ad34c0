//! `agent-exec mcp` driven by the official MCP Python SDK (`mcp` on PyPI), as MCP clients
//! drive it: the handshake, the tool list with its schemas (the SDK validates every
//! `structuredContent` against the tool's `outputSchema`), each tool, a background job,
//! progress with a token, and cancellation. The checks are in `mcp_sdk_client.py`.
//!
//! The SDK lives in a venv under the target directory, made here when missing (`.ci/run`
//! makes it first; `AGENT_EXEC_TEST_PYTHON` points at another interpreter that has `mcp`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The SDK version the checks were written against.
const MCP_SDK: &str = "mcp==2.3.0";

fn python_with_sdk() -> PathBuf {
    if let Some(python) = std::env::var_os("AGENT_EXEC_TEST_PYTHON") {
        return PathBuf::from(python);
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let python = venv.join("bin/python");
    let has_sdk = |python: &Path| {
        Command::new(python)
            .args(["-c", "import mcp"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has_sdk(&python) {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs (the MCP SDK test needs python3 with venv)");
        assert!(made.success(), "python3 -m venv {} failed", venv.display());
        let installed = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", MCP_SDK])
            .status()
            .expect("pip runs");
        assert!(installed.success(), "pip install {MCP_SDK} failed");
    }
    python
}

#[test]
fn the_official_mcp_python_sdk_uses_every_tool() {
    let python = python_with_sdk();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_sdk_client.py");
    let work = tempfile::tempdir().unwrap();
    let mut child = Command::new(python)
        .arg(&script)
        .arg(common::exe())
        .arg(work.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The script bounds each of its waits; this bounds the whole.
    if !common::poll(Duration::from_mins(15), || {
        child.try_wait().unwrap().is_some()
    }) {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all MCP SDK checks passed"),
        "{stdout}\n{stderr}"
    );
}
