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
