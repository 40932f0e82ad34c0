//! Shared helpers for executor integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use agent_exec_executor::{CancelToken, ExecOutcome, ExecSpec, run};
use agent_exec_sink::{Capture, OutputSink, SinkConfig};

pub fn misbehave() -> String {
    env!("CARGO_BIN_EXE_misbehave").to_owned()
}

pub struct PidFile {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl PidFile {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pids");
        PidFile { _dir: dir, path }
    }

    pub fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Recorded processes still running (zombies count as ended).
    pub fn survivors(&self) -> Vec<i32> {
        self.pids().into_iter().filter(|&p| alive(p)).collect()
    }
}

pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

pub fn spec(command: &str, pids: &PidFile) -> ExecSpec {
    let mut spec = ExecSpec::shell(command, std::env::temp_dir());
    spec.extra_env
        .push(("MISBEHAVE_PIDS".into(), pids.path.display().to_string()));
    spec.extra_env.push(("MB".into(), misbehave()));
    spec.grace = Duration::from_millis(300);
    spec
}

pub fn exec(spec: &ExecSpec) -> (ExecOutcome, Capture) {
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = run(spec, &mut sink, &CancelToken::new());
    (outcome, sink.finish_capture())
}
