//! A custom policy on top of the built-in one, and an approver for its "ask" verdicts.
use std::sync::Arc;

use agent_exec_core::{
    Approver, CancelToken, CommandPolicy, Config, Decision, Invocation, Policy, PolicyConfig,
    PolicyContext, Request, Tool, Verdict,
};

/// Asks before anything that talks to the network; the built-in policy decides the rest.
struct NoSurpriseNetwork(Policy);

impl CommandPolicy for NoSurpriseNetwork {
    fn check(&self, target: &Invocation, ctx: &PolicyContext<'_>) -> Verdict {
        let verdict = CommandPolicy::check(&self.0, target, ctx);
        let network = verdict
            .commands
            .iter()
            .any(|c| c.starts_with("curl ") || c.starts_with("wget "));
        if verdict.decision == Decision::Allow && network {
            return Verdict {
                decision: Decision::Ask,
                reason: "it uses the network".into(),
                rule: Some("example.network".into()),
                commands: verdict.commands,
            };
        }
        verdict
    }
}

/// Approves what a human would: here, anything that only fetches from localhost.
struct LocalOnly;

impl Approver for LocalOnly {
    fn approve(&self, command: &str, verdict: &Verdict) -> bool {
        println!("asked about `{command}` ({})", verdict.reason);
        command.contains("localhost") || command.contains("127.0.0.1")
    }
}

fn main() {
    let config: PolicyConfig =
        PolicyConfig::from_toml_str("[rules]\ndeny = [\"git push --force\"]").expect("valid TOML");
    let policy = NoSurpriseNetwork(Policy::new(config).expect("valid rules"));
    let tool = Tool::new(Config::default())
        .with_policy(Arc::new(policy))
        .with_approver(Arc::new(LocalOnly));
    for command in [
        "git push --force origin main",
        "curl -sS https://example.com",
        "curl -sS http://127.0.0.1:9 || true",
        "echo fine",
    ] {
        let result = tool.execute(&Request::shell(command), &CancelToken::new());
        println!("{command}: {}", result.outcome());
    }
}
