//! Policy verdicts in-process: typical agent commands against the permissive policy and a
//! strict one (rules, workspace restriction, interception). Target: under 100 µs each. Each is
//! a first verdict (a fresh policy per check, made outside the timing): a policy remembers the
//! verdicts that read no file, and the `remembered` row times that.

use std::hint::black_box;
use std::path::Path;

use agent_exec_policy::{Context, Policy, PolicyConfig};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

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
    let mut group = c.benchmark_group("policy");
    for (name, command) in COMMANDS {
        group.bench_function(format!("permissive/{name}"), |b| {
            b.iter_batched(
                Policy::permissive,
                |policy| policy.check(black_box(command), &ctx),
                BatchSize::SmallInput,
            );
        });
        group.bench_function(format!("strict/{name}"), |b| {
            b.iter_batched(
                strict,
                |policy| policy.check(black_box(command), &ctx),
                BatchSize::SmallInput,
            );
        });
    }
    // The same line again, in the same context: its verdict remembered.
    let permissive = Policy::permissive();
    group.bench_function("remembered/simple", |b| {
        b.iter(|| permissive.check(black_box(COMMANDS[0].1), &ctx));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
