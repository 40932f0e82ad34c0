//! Policy verdicts in-process: typical agent commands against the permissive policy and a
//! strict one (rules, workspace restriction, interception). Target: under 100 µs each.

use std::hint::black_box;
use std::path::Path;

use agent_exec_policy::{Context, Policy, PolicyConfig};
use criterion::{Criterion, criterion_group, criterion_main};

const COMMANDS: &[(&str, &str)] = &[
    ("simple", "ls -la"),
    (
        "typical",
        "cd crates/core && cargo test --all-features 2>&1 | tail -n 50",
    ),
    (
        "git",
        r#"git add -A && git commit -m "fix shutdown handler" && git push origin main"#,
    ),
    ("evasion", "sudo timeout 9 bash -c 'r\"\"m -r -f /'"),
    (
        "script",
        "for f in $(find . -name '*.rs'); do if grep -q TODO \"$f\"; then echo \"$f\"; fi; done > todo.txt",
    ),
];

fn strict() -> Policy {
    let config = PolicyConfig::from_toml_str(
        r#"
        workspace_only = true
        [rules]
        deny = ["git push --force", "npm publish"]
        ask = ["git push"]
        deny_regex = ['^terraform (apply|destroy)']
        denied_env = ["*_TOKEN"]
        [interception]
        enabled = true
        available_tools = ["read", "grep", "find", "edit", "write"]
        "#,
    )
    .expect("valid config");
    Policy::new(config).expect("valid config")
}

fn bench(c: &mut Criterion) {
    let ctx = Context {
        cwd: Path::new("/work/proj"),
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    let permissive = Policy::permissive();
    let strict = strict();
    let mut group = c.benchmark_group("policy");
    for (name, command) in COMMANDS {
        group.bench_function(format!("permissive/{name}"), |b| {
            b.iter(|| permissive.check(black_box(command), &ctx));
        });
        group.bench_function(format!("strict/{name}"), |b| {
            b.iter(|| strict.check(black_box(command), &ctx));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
