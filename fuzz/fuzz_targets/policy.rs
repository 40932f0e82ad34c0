//! Any UTF-8 input gets a decision from `Policy::check`, and the same one twice, without
//! panicking. `cargo fuzz run -s none policy` (stable toolchain).

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use agent_exec_policy::{Context, Policy, PolicyConfig};
use libfuzzer_sys::fuzz_target;

fn policies() -> &'static [Policy; 2] {
    static POLICIES: OnceLock<[Policy; 2]> = OnceLock::new();
    POLICIES.get_or_init(|| {
        let strict = PolicyConfig::from_toml_str(
            r#"
            workspace_only = true
            [rules]
            deny = ["git push --force"]
            ask_regex = ["^curl"]
            denied_env = ["*_TOKEN"]
            [interception]
            enabled = true
            available_tools = ["read", "grep", "find", "edit", "write"]
            "#,
        )
        .expect("valid config");
        [
            Policy::permissive(),
            Policy::new(strict).expect("valid config"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = Context {
        cwd: Path::new("/work/proj"),
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    for policy in policies() {
        let verdict = policy.check(command, &ctx);
        assert!(!verdict.reason.is_empty());
        assert_eq!(policy.check(command, &ctx), verdict);
        let args: Vec<String> = command.split(' ').map(str::to_owned).collect();
        let _ = policy.check_argv("sh", &args, &ctx);
    }
});
