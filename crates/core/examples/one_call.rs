//! One call, blocking: the ten-line embedding.
use agent_exec_core::{CancelToken, Config, Request, Tool};

fn main() {
    let tool = Tool::new(Config::default());
    let request = Request::shell("echo hello from agent-exec; ls /nonexistent");
    let result = tool.execute(&request, &CancelToken::new());
    println!("{}\n-- outcome: {}", result.text(), result.outcome());
}
