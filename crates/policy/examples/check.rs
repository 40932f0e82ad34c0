//! Prints the permissive policy's verdict for each argument:
//! `cargo run -p agent-exec-policy --example check -- 'rm -rf /' 'ls'`.

use std::path::Path;

use agent_exec_policy::{Context, Policy};

fn main() {
    let policy = Policy::permissive();
    let ctx = Context {
        cwd: Path::new("/work/proj"),
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    for command in std::env::args().skip(1) {
        let v = policy.check(&command, &ctx);
        println!(
            "{command}\n  {:?} {:?}: {}\n  {:?}",
            v.decision, v.rule, v.reason, v.commands
        );
    }
}
