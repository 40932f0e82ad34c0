//! `agent-exec mcp` as agent frameworks load it, and as their models then see it (issue 35).
//!
//! - The tool list keeps to the schema subset every converter takes, names the MCP tools, and
//!   stays small (its tokens are counted); its parameters follow the operator's settings.
//! - What a strict caller sends (every field, the unmeant ones `""`, `0`, `null`) and what
//!   models write (`5.0` for 5) is taken.
//! - Every result's `structuredContent` carries the text; `isError` marks a failed call, not a
//!   command's non-zero exit.
//! - The frameworks themselves, installed by the test into the target directory (pinned:
//!   `frameworks/requirements.txt`, `frameworks_ts/package-lock.json`) and driven by their
//!   stand-in models and fake providers on 127.0.0.1 (no network): LangChain
//!   (`langchain-mcp-adapters`) and the OpenAI Agents SDK (`frameworks/check_openai_family.py`),
//!   Pydantic AI and google-genai (`frameworks/check_gemini_family.py`), the AI SDK
//!   (`frameworks_ts/check.mjs`): tools convert, in strict mode too where the framework has
//!   one, and a call's output and an error's message reach the model's next request — as
//!   root and as a throwaway user.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::Bounded;
use common::server::Server;
use serde_json::{Value, json};

/// The keywords some converter drops or refuses (see `converter_subset` in `server/mcp.rs`).
const REFUSED_KEYWORDS: [&str; 7] = [
    "oneOf",
    "const",
    "additionalProperties",
    "default",
    "minimum",
    "maximum",
    "$ref",
];

fn tools(server: &mut Server) -> Vec<Value> {
    server.initialize();
    server.result("tools/list", json!({}))["tools"]
        .as_array()
        .unwrap()
        .clone()
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap()
}

/// Every keyword of `schema` (not the names of properties), with where it is.
fn keywords(schema: &Value, at: &str, found: &mut Vec<(String, String)>) {
    if let Value::Object(o) = schema {
        for (k, v) in o {
            found.push((at.to_owned(), k.clone()));
            if k == "properties" {
                for (name, prop) in v.as_object().unwrap() {
                    keywords(prop, &format!("{at}.{name}"), found);
                }
            } else {
                keywords(v, at, found);
            }
        }
    }
}

/// Every description in `value`.
fn descriptions(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(o) => {
            for (k, v) in o {
                match v {
                    Value::String(s) if k == "description" => out.push(s.clone()),
                    _ => descriptions(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| descriptions(v, out)),
        _ => {}
    }
}

#[test]
fn the_tool_list_keeps_to_what_every_converter_takes_and_names_the_mcp_tools() {
    let mut server = Server::mcp(&[]);
    let tools = tools(&mut server);
    assert_eq!(tools.len(), 7);
    let mut model_facing = Vec::new();
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let schema = &t["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        let mut found = Vec::new();
        keywords(schema, name, &mut found);
        let refused: Vec<_> = found
            .iter()
            .filter(|(_, k)| REFUSED_KEYWORDS.contains(&k.as_str()))
            .collect();
        assert!(refused.is_empty(), "{name}: {refused:?}");
        // Every property says its type (Gemini sends a typeless one with no values); an
        // enum is of strings.
        for (prop_name, prop) in schema["properties"].as_object().unwrap() {
            assert!(prop["type"].is_string(), "{name}.{prop_name}: {prop}");
            if let Some(values) = prop.get("enum") {
                assert_eq!(prop["type"], "string", "{name}.{prop_name}");
                assert!(values.as_array().unwrap().iter().all(Value::is_string));
            }
        }
        // A strict converter (OpenAI's Agents SDK) refuses an object with no properties
        // unless it is closed, which google-genai cannot take: every tool has one.
        assert!(
            !schema["properties"].as_object().unwrap().is_empty(),
            "{name} takes nothing"
        );
        let mut texts = vec![t["description"].as_str().unwrap().to_owned()];
        descriptions(schema, &mut texts);
        for text in &texts {
            assert!(!text.contains("contract"), "{name}: {text}");
            assert!(!text.contains("structuredContent"), "{name}: {text}");
            assert!(!text.contains('\n'), "{name}: {text:?}");
            for method in [
                "job_output",
                "job_input",
                "job_kill",
                "job_list",
                "artifact_read",
                "session_close",
            ] {
                assert!(!text.contains(method), "{name} names {method}: {text}");
            }
        }
        let mut results = Vec::new();
        descriptions(&t["outputSchema"], &mut results);
        for method in ["job_output", "job_input", "job_kill", "artifact_read"] {
            assert!(
                results.iter().all(|text| !text.contains(method)),
                "{name}'s output schema names {method}"
            );
        }
        model_facing
            .push(json!({"name": name, "description": t["description"], "parameters": schema}));
    }
    let bash = tool(&tools, "bash");
    let description = bash["description"].as_str().unwrap();
    for needed in [
        "bash_output",
        "bash_kill",
        "read_artifact",
        "50 KiB",
        "120 s",
    ] {
        assert!(description.contains(needed), "{needed}: {description}");
    }
    // The view's names and the streams' as an enum (not `oneOf` of `const`s).
    assert_eq!(
        bash["inputSchema"]["properties"]["view"]["enum"],
        json!(["compact", "raw"])
    );
    assert_eq!(
        bash["inputSchema"]["properties"]["env"],
        json!({"type": "array", "items": {"type": "string"}, "description": bash["inputSchema"]["properties"]["env"]["description"]})
    );
    // What the model reads of the tools on every request, in o200k_base tokens: 2,007 before
    // issue 35, with a shorter text for each tool and parameter now.
    let text = serde_json::to_string(&model_facing).unwrap();
    let tokens = bpe_openai::o200k_base().count(&text);
    eprintln!(
        "tools as a model reads them: {} bytes, {tokens} tokens",
        text.len()
    );
    assert!(tokens < 1_600, "{tokens} tokens: {text}");
}

#[test]
fn parameters_follow_the_operators_settings() {
    // No target a call may name: no `target`. The operator's sandbox and the stricter ones.
    let mut server = Server::mcp(&["--sandbox", "workspace-write"]);
    let list = tools(&mut server);
    assert!(
        list.iter()
            .all(|t| t["inputSchema"]["properties"].get("target").is_none())
    );
    let sandbox = &tool(&list, "bash")["inputSchema"]["properties"]["sandbox"];
    assert_eq!(sandbox["enum"], json!(["workspace-write", "read-only"]));

    // The operator's defaults, stated as values: a strict caller sends what it is told.
    let bash = &tool(&list, "bash");
    let props = &bash["inputSchema"]["properties"];
    let said = |field: &str| props[field]["description"].as_str().unwrap().to_owned();
    assert!(
        said("yield_ms").ends_with("Default: 30000."),
        "{}",
        said("yield_ms")
    );
    assert!(
        said("timeout").ends_with("Default: 120."),
        "{}",
        said("timeout")
    );
    assert!(
        bash["description"]
            .as_str()
            .unwrap()
            .contains("(default 120 s)")
    );
    let mut server = Server::mcp(&["--yield-ms", "500"]);
    let list = tools(&mut server);
    let yield_ms = &tool(&list, "bash")["inputSchema"]["properties"]["yield_ms"]["description"];
    assert!(
        yield_ms.as_str().unwrap().ends_with("Default: 500."),
        "{yield_ms}"
    );

    // Targets allowed: offered, naming them. The strictest sandbox: nothing to choose.
    let mut server = Server::mcp(&[
        "--sandbox",
        "read-only",
        "--allow-target",
        "docker://agent-*",
    ]);
    let list = tools(&mut server);
    let bash = &tool(&list, "bash")["inputSchema"]["properties"];
    assert!(bash.get("sandbox").is_none(), "{bash}");
    let target = bash["target"]["description"].as_str().unwrap();
    assert!(target.contains("docker://agent-*"), "{target}");
    assert!(
        tool(&list, "bash_output")["inputSchema"]["properties"]
            .get("target")
            .is_some()
    );
}

/// A `tools/call`'s result.
fn call(server: &mut Server, name: &str, arguments: &Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    server.result("tools/call", params)
}

#[test]
fn a_strict_caller_sending_every_field_succeeds() {
    let mut server = Server::mcp(&["--sandbox", "workspace-write"]);
    server.initialize();
    // Every field of bash, the unmeant ones as a strict model fills them.
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "echo STRICT-1; seq 1 3", "cwd": "", "env": [], "head": 0, "tail": 0,
               "pty": false, "run_in_background": false, "sandbox": "workspace-write",
               "session": "", "streams": "shared", "timeout": 120, "timeout_ms": 0,
               "view": "compact", "yield_ms": 0}),
    );
    assert_eq!(r["structuredContent"]["outcome"], "success", "{r}");
    assert!(common::text(&r).contains("STRICT-1\n1\n2\n3"), "{r}");
    // `null` and "" for every optional one; `5.0` for an integer; both timeouts.
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "seq 1 9", "cwd": null, "env": ["A=b=c"], "head": 3.0, "tail": null,
               "sandbox": "", "session": null, "streams": "", "view": "", "timeout": 5,
               "timeout_ms": 30000.0, "yield_ms": null}),
    );
    assert_eq!(r["structuredContent"]["outcome"], "success", "{r}");
    assert!(common::text(&r).starts_with("1\n2\n3\n"), "{r}");
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "printenv A B", "env": ["A=b=c"], "timeout": 0}),
    );
    assert!(common::text(&r).starts_with("b=c\n"), "{r}");
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "printenv B", "env": {"B": "map"}}),
    );
    assert!(common::text(&r).starts_with("map\n"), "{r}");
    // read_artifact: grep with offset and limit (grep wins), and a zero limit.
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "seq 1 20000", "tail": 2}),
    );
    let id = r["structuredContent"]["truncation"]["artifact_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = call(
        &mut server,
        "read_artifact",
        &json!({"id": id, "grep": "^1999[0-9]$", "offset": 0, "limit": 0, "context": 0}),
    );
    assert!(common::text(&r).contains("19999:19999"), "{r}");
    let r = call(
        &mut server,
        "read_artifact",
        &json!({"id": id, "grep": "", "offset": 0, "limit": 0, "context": 0}),
    );
    assert!(common::text(&r).starts_with("1\n2\n3\n"), "{r}");
    // The job tools: a strict model's zero wait and default mode.
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "echo JOB-1", "run_in_background": true}),
    );
    let job = r["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = call(
        &mut server,
        "bash_output",
        &json!({"job_id": job, "mode": "", "wait_ms": 5000.0}),
    );
    assert!(common::text(&r).contains("JOB-1"), "{r}");
    // Bounded: each read waits up to 5 s for the job's end.
    for _ in 0..20 {
        let r = call(
            &mut server,
            "bash_output",
            &json!({"job_id": job, "wait_ms": 5000}),
        );
        if r["structuredContent"]["running"] == false {
            break;
        }
    }
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "sleep 30", "run_in_background": true}),
    );
    let sleeper = r["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = call(&mut server, "bash_jobs", &json!({"running": false}));
    assert!(
        common::text(&r).contains("echo JOB-1") && common::text(&r).contains("sleep 30"),
        "{r}"
    );
    let r = call(&mut server, "bash_jobs", &json!({"running": true}));
    assert!(
        !common::text(&r).contains("echo JOB-1") && common::text(&r).contains("sleep 30"),
        "{r}"
    );
    call(&mut server, "bash_kill", &json!({"job_id": sleeper}));
}

#[test]
fn structured_content_carries_the_text_and_is_error_marks_a_failed_call() {
    let mut server = Server::mcp(&[]);
    server.initialize();
    // A command that ran and failed: its answer, not a failed call.
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "echo OUT-1; echo ERR-2 >&2; exit 3"}),
    );
    let structured = &r["structuredContent"];
    assert_eq!(structured["outcome"], "exit_nonzero");
    assert_eq!(structured["output"], r["content"][0]["text"]);
    assert!(
        structured["output"]
            .as_str()
            .unwrap()
            .contains("OUT-1\nERR-2")
    );
    assert_eq!(r["isError"], false, "{r}");
    // A call that failed: the message in both.
    for (name, args, needle) in [
        ("bash_output", json!({"job_id": "424242"}), "424242"),
        ("bash", json!({"command": "true", "bogus": 1}), "bogus"),
        ("bash", json!({"command": "true", "head": 1.5}), "head"),
    ] {
        let r = call(&mut server, name, &args);
        assert_eq!(r["isError"], true, "{r}");
        assert_eq!(r["structuredContent"]["outcome"], "invalid_request");
        let output = r["structuredContent"]["output"].as_str().unwrap();
        assert!(output.contains(needle), "{output}");
        assert_eq!(output, common::text(&r));
    }
    // A value quoted in a message is cut (as every answer's strings are).
    let huge = "x".repeat(1 << 20);
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "true", "view": huge}),
    );
    let text = common::text(&r);
    assert!(
        text.len() < 8 << 10 && text.contains("[cut: "),
        "{} bytes",
        text.len()
    );
    // The unknown field's message lists the tool's fields, not the request type's.
    let r = call(&mut server, "bash", &json!({"command": "true", "bogus": 1}));
    let text = common::text(&r);
    assert!(
        text.contains("timeout_ms") && !text.contains("executable"),
        "{text}"
    );
    // A yielded call names the MCP tools to go on with.
    let r = call(
        &mut server,
        "bash",
        &json!({"command": "sleep 30", "yield_ms": 200}),
    );
    let text = common::text(&r);
    assert!(
        text.contains("bash_output {")
            && text.contains("bash_kill {")
            && !text.contains("job_output")
            && !text.contains("job_kill"),
        "{text}"
    );
    let job = r["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_owned();
    call(&mut server, "bash_kill", &json!({"job_id": job}));
    // The output schema says so.
    let list = tools(&mut server);
    let schema = &tool(&list, "bash")["outputSchema"];
    assert_eq!(schema["properties"]["output"]["type"], "string");
    assert!(
        schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("output"))
    );
}

// --- The frameworks themselves.

/// The system's Python where there is one: the throwaway user runs the venv too, which it
/// could not through a Python under root's home (pyenv's).
const SYSTEM_PYTHON: &str = "/usr/bin/python3";

/// The venv with the Python frameworks, made (from `frameworks/requirements.txt`) when it
/// lacks them; `.ci/run` makes it first.
fn python_with_frameworks() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("frameworks-venv");
    let python = venv.join("bin/python");
    // Test processes side by side take turns: one makes the venv, the next finds it made.
    let lock = std::fs::File::create(venv.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let has_them = |python: &Path| {
        Command::new(python)
            .args([
                "-c",
                "import langchain_mcp_adapters, langchain_openai, agents, pydantic_ai, google.genai",
            ])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let base = if Path::new(SYSTEM_PYTHON).exists() {
        SYSTEM_PYTHON
    } else {
        "python3"
    };
    let of_base = std::fs::read_to_string(venv.join("pyvenv.cfg"))
        .is_ok_and(|cfg| base == "python3" || cfg.lines().any(|l| l.trim() == "home = /usr/bin"));
    if !(of_base && has_them(&python)) {
        let _ = std::fs::remove_dir_all(&venv);
        let made = Command::new(base)
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs (the framework tests need python3 with venv)");
        assert!(made.success(), "python3 -m venv {} failed", venv.display());
        let requirements =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/frameworks/requirements.txt");
        let installed = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "-r"])
            .arg(&requirements)
            .status()
            .expect("pip runs");
        assert!(
            installed.success(),
            "pip install -r {} failed",
            requirements.display()
        );
    }
    python
}

/// The AI SDK installed (`npm ci`) beside a copy of `frameworks_ts/check.mjs`, when the copy
/// lacks the pinned `ai`; the path of the copy.
fn ai_sdk_check() -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/frameworks_ts");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("frameworks-ts");
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["package.json", "package-lock.json", "check.mjs"] {
        std::fs::copy(source.join(file), dir.join(file))
            .unwrap_or_else(|e| panic!("copying {file} into {}: {e}", dir.display()));
    }
    let read = |path: &Path| -> Value {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    };
    let pinned = read(&source.join("package.json"))["dependencies"]["ai"].clone();
    let installed = read(&dir.join("node_modules/ai/package.json"))["version"].clone();
    if !pinned.is_string() || installed != pinned {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("npm runs (the AI SDK test needs Node and npm)");
        assert!(
            out.status.success(),
            "npm ci in {} failed:\n{}\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir.join("check.mjs")
}

/// Runs a framework check script (`PROGRAM SCRIPT BINARY WORKDIR`) to its end, bounded, as
/// each user (root, and a throwaway user when we are root): it must print the success line.
fn run_check(program: &Path, script: &Path) {
    for user in common::users() {
        let world = common::World::new(&user);
        let workspace = world.workspace.display().to_string();
        let binary = common::binary().display().to_string();
        let script = script.display().to_string();
        let mut cmd = world.command_of(program, &[&script, &binary, &workspace]);
        // The fake providers are on loopback: no proxy of the environment's in between.
        cmd.env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        // The scripts bound each of their waits; this bounds the whole.
        let out = cmd
            .output_within(Duration::from_mins(6))
            .unwrap_or_else(|e| panic!("{cmd:?} runs: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("all framework checks passed"),
            "{cmd:?} as {user:?} exited with {}\n--- stdout\n{stdout}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/frameworks")
        .join(name)
}

#[test]
fn langchain_and_the_openai_agents_sdk_show_the_model_the_output_and_the_errors() {
    run_check(&python_with_frameworks(), &script("check_openai_family.py"));
}

#[test]
fn pydantic_ai_and_google_genai_show_the_model_the_output_and_the_errors() {
    run_check(&python_with_frameworks(), &script("check_gemini_family.py"));
}

#[test]
fn the_ai_sdk_shows_the_model_the_output_and_the_errors() {
    run_check(Path::new("node"), &ai_sdk_check());
}
