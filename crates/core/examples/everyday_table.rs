//! Prints, for the everyday commands of `crates/sink/tests/everyday` (real outputs of the
//! commands an agent runs, each with the lines a model must see), the tokens a model reads —
//! o200k_base, counted with `bpe-openai`, the tokenizer data OpenAI's `tiktoken` uses — and
//! the needed lines kept: the raw output, agent-exec's text (compact, the default) and rtk's
//! output of the same command in the same state (`NAME.rtk`, recorded by `make_everyday.sh`).
//! Run with `cargo xtask corpus`; `EVERYDAY_SHOW=NAME` prints one case's text instead.
//!
//! agent-exec's text is the `Tool`'s own: each command runs as typed, its program a stand-in
//! on `PATH` that prints the recorded output, so the text is exactly what a model reads of it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agent_exec_core::{CancelToken, Config, Request, SandboxMode, Tool};

struct Case {
    name: String,
    command: String,
    log: PathBuf,
    raw: String,
    rtk: Option<String>,
    needles: Vec<String>,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sink/tests/everyday");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the everyday corpus")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".log").map(str::to_owned)
        })
        .collect();
    names.sort();
    let read = |name: &str, ext: &str| std::fs::read(dir.join(format!("{name}.{ext}"))).ok();
    names
        .into_iter()
        .map(|name| Case {
            command: read(&name, "cmd")
                .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
                .unwrap_or_default(),
            log: dir.join(format!("{name}.log")),
            raw: String::from_utf8_lossy(&read(&name, "log").unwrap_or_default()).into_owned(),
            rtk: read(&name, "rtk").map(|b| String::from_utf8_lossy(&b).into_owned()),
            needles: read(&name, "needle")
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .lines()
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            name,
        })
        .collect()
}

/// The text a model reads of `case`'s command: run by the `Tool`, its program (the command's
/// first word) a stand-in that prints the recorded output.
fn agent_exec_text(tool: &Tool, shims: &Path, case: &Case) -> String {
    let program = case.command.split_whitespace().next().unwrap_or("true");
    let shim = shims.join(program);
    std::fs::write(&shim, "#!/bin/sh\nexec /bin/cat \"$EVERYDAY_LOG\"\n").expect("a stand-in");
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).expect("executable");
    let path = format!(
        "{}:{}",
        shims.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let request = Request::shell(case.command.clone())
        .env("PATH", path)
        .env("EVERYDAY_LOG", case.log.display().to_string());
    let text = tool
        .execute(&request, &CancelToken::new())
        .text()
        .to_owned();
    let _ = std::fs::remove_file(shim);
    text
}

/// Needed lines shown whole (or named as standing out, which the text shows whole too).
fn kept(text: &str, needles: &[String]) -> usize {
    needles
        .iter()
        .filter(|n| {
            text.lines()
                .any(|l| l == n.as_str() || l.ends_with(&format!(": {n}")))
        })
        .count()
}

fn main() {
    let tokens = |t: &str| bpe_openai::o200k_base().count(t);
    let cases = cases();
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let shims = scratch.path().join("bin");
    std::fs::create_dir(&shims).expect("a directory");
    let mut config = Config {
        artifacts_dir: scratch.path().join("artifacts"),
        workdir: scratch.path().to_owned(),
        ..Config::default()
    };
    // The stand-ins run anywhere; the sandbox would only add its start-up to each call.
    config.sandbox.mode = Some(SandboxMode::Off);
    let tool = Tool::new(config);
    // `EVERYDAY_SHOW=NAME` prints that case's text as a model reads it, and nothing else.
    if let Ok(name) = std::env::var("EVERYDAY_SHOW") {
        for case in cases.iter().filter(|c| c.name == name) {
            println!("{}", agent_exec_text(&tool, &shims, case));
        }
        return;
    }
    println!("o200k_base tokens a model reads, and needed lines kept (whole lines)\n");
    println!("| command | raw | agent-exec | rtk | needed | agent-exec kept | rtk kept |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    // [raw, ours, rtk] tokens and [needles, ours, rtk] kept, over outputs above 4 KiB and all.
    let mut big = ([0usize; 3], [0usize; 3]);
    let mut all = ([0usize; 3], [0usize; 3]);
    for case in &cases {
        let ours = agent_exec_text(&tool, &shims, case);
        let rtk = case.rtk.clone().unwrap_or_else(|| case.raw.clone());
        let t = [tokens(&case.raw), tokens(&ours), tokens(&rtk)];
        let k = [
            case.needles.len(),
            kept(&ours, &case.needles),
            kept(&rtk, &case.needles),
        ];
        for (sum, add) in [(&mut all, true), (&mut big, case.raw.len() > 4096)] {
            if add {
                for i in 0..3 {
                    sum.0[i] += t[i];
                    sum.1[i] += k[i];
                }
            }
        }
        let pct = |n: usize| format!("{n} ({:.0} %)", 100.0 * n as f64 / t[0].max(1) as f64);
        println!(
            "| `{}` ({}) | {} | {} | {} | {} | {} | {} |",
            case.command.chars().take(60).collect::<String>(),
            case.name,
            t[0],
            pct(t[1]),
            pct(t[2]),
            k[0],
            k[1],
            k[2]
        );
    }
    for (label, (t, k)) in [("outputs over 4 KiB", big), ("all outputs", all)] {
        println!(
            "\n{label}: agent-exec {:.1} % of the raw tokens, {}/{} needed lines; rtk {:.1} %, {}/{}",
            100.0 * t[1] as f64 / t[0].max(1) as f64,
            k[1],
            k[0],
            100.0 * t[2] as f64 / t[0].max(1) as f64,
            k[2],
            k[0]
        );
    }
}
