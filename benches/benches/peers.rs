//! The library's one-shot call against std and the peers, side by side on the same commands
//! (performance.md): std `Command::new("bash").args(["-c", C]).output()` (the yardstick),
//! agent-exec's `Tool::execute` (policy, containment group, window, result), yoagent's
//! `BashTool` and agentkit's `ShellExecTool` (`bash -c C`), for `true` (a plain command) and
//! `:; true` (one that needs the shell). Target: `Tool::execute` ≤ 1.05× std, ahead of both
//! peers.
use std::hint::black_box;
use std::process::Command;

use agent_exec_core::{CancelToken, Config, Request, Tool};
use agentkit_capabilities::CapabilityContext;
use agentkit_tools_core::{AllowAllPermissions, Tool as _, ToolContext, ToolRequest};
use criterion::{Criterion, criterion_group, criterion_main};
use yoagent::types::AgentTool as _;

fn bench(c: &mut Criterion) {
    let _ = agent_exec_executor::containment::become_subreaper();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        workdir: dir.path().to_path_buf(),
        artifacts_dir: dir.path().join("artifacts"),
        ..Config::default()
    };
    let tool = Tool::new(config);
    let yoagent_bash = yoagent::tools::BashTool::new().with_cwd(dir.path().display().to_string());
    let agentkit_shell = agentkit_tool_shell::ShellExecTool::default();
    let metadata = agentkit_core::MetadataMap::new();

    for (group_name, command) in [("library_true", "true"), ("library_shell", ":; true")] {
        let mut group = c.benchmark_group(group_name);
        group.bench_function("std_command_bash_c", |b| {
            b.iter(|| {
                black_box(
                    Command::new("bash")
                        .args(["-c", command])
                        .current_dir(dir.path())
                        .output()
                        .expect("bash"),
                )
            });
        });
        let request = Request::shell(command);
        group.bench_function("agent_exec_tool_execute", |b| {
            b.iter(|| {
                let result = tool.execute(&request, &CancelToken::new());
                assert!(!result.is_error, "{}", result.text());
                black_box(result)
            });
        });
        group.bench_function("yoagent_bash_tool", |b| {
            b.iter(|| {
                let ctx = yoagent::types::ToolContext::new("call", "bash");
                let params = serde_json::json!({ "command": command });
                black_box(
                    runtime
                        .block_on(yoagent_bash.execute(params, ctx))
                        .expect("yoagent"),
                )
            });
        });
        group.bench_function("agentkit_shell_exec_tool", |b| {
            b.iter(|| {
                let request = ToolRequest::new(
                    "call",
                    "shell_exec",
                    serde_json::json!({
                        "executable": "bash",
                        "argv": ["-c", command],
                        "cwd": dir.path(),
                    }),
                    "session",
                    "turn",
                );
                let mut ctx = ToolContext {
                    capability: CapabilityContext {
                        session_id: None,
                        turn_id: None,
                        metadata: &metadata,
                    },
                    permissions: &AllowAllPermissions,
                    resources: &(),
                    cancellation: None,
                    execution_scope: None,
                    approved_request: None,
                };
                black_box(
                    runtime
                        .block_on(agentkit_shell.invoke(request, &mut ctx))
                        .expect("agentkit"),
                )
            });
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
