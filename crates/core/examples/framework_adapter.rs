//! agent-exec as a tool of an agent framework. Frameworks (rig, agentkit, swarms…) share one
//! shape of tool trait: a name, a JSON Schema for the model, and an async call taking the
//! model's JSON arguments. This is that trait and the whole adapter.
use agent_exec_core::{Config, Request, Tool, request_schema};
use serde_json::{Value, json};

/// The framework's side: what a tool must provide.
trait AgentTool {
    fn name(&self) -> &'static str;
    fn parameters(&self) -> Value;
    async fn call(&self, arguments: Value) -> Result<String, String>;
}

/// The adapter: the model's JSON in, the model-ready text out; errors keep the text too.
struct Bash(Tool);

impl AgentTool for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }
    fn parameters(&self) -> Value {
        request_schema()
    }
    async fn call(&self, arguments: Value) -> Result<String, String> {
        let request = Request::from_value(arguments).map_err(|e| e.to_string())?;
        let result = self.0.run(request).await;
        if result.is_error {
            Err(result.text().to_owned())
        } else {
            Ok(result.text().to_owned())
        }
    }
}

#[tokio::main]
async fn main() {
    let bash = Bash(Tool::new(Config::default()));
    println!("tool {} takes {}", bash.name(), bash.parameters()["title"]);
    println!(
        "{:?}",
        bash.call(json!({"command": "echo adapted", "timeout": 10}))
            .await
    );
    println!("{:?}", bash.call(json!({"command": "exit 3"})).await);
    println!("{:?}", bash.call(json!({"comand": "typo"})).await);
}
