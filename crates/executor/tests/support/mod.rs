//! Shared helpers for executor integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use agent_exec_executor::{CancelToken, ExecOutcome, ExecSpec, run};
use agent_exec_sink::{Capture, OutputSink, SinkConfig};

/// The path of the misbehaving helper (`tests/programs/misbehave.rs`), built on first use.
pub fn misbehave() -> String {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(build_misbehave)
        .to_str()
        .expect("a UTF-8 target directory")
        .to_owned()
}

/// Compiles the helper with `rustc` (`$RUSTC`, else `rustc` on `PATH`) into
/// `$CARGO_TARGET_TMPDIR`, once per version of its source (the name carries a hash of it):
/// every test binary of the crate may be asking at once, so each compiles to a name of its
/// own and renames the result into place, which is atomic — the way trybuild builds its
/// fixtures. It is a test program, kept out of the published crate.
fn build_misbehave() -> PathBuf {
    use std::hash::{Hash, Hasher};
    let source =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/misbehave.rs");
    let text = std::fs::read(&source).expect("the helper's source");
    // SipHash with fixed keys: the same name for the same source in every test binary.
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("misbehave-{:016x}", hasher.finish()));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).expect("the target's temporary directory");
    let unique = dir.join(format!(
        "misbehave-{}-{}.tmp",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let status = std::process::Command::new(rustc)
        .args([
            "--edition",
            "2024",
            "-O",
            "--crate-type",
            "bin",
            "--crate-name",
            "misbehave",
        ])
        .arg("-o")
        .arg(&unique)
        .arg(&source)
        .status()
        .expect("rustc runs");
    assert!(status.success(), "compiling {} failed", source.display());
    std::fs::rename(&unique, &path).expect("the helper moved into place");
    path
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
