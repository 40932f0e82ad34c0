//! The public API: configuration rules, denied environment, interception, `check_argv`,
//! verdict shape.

use std::path::Path;

use agent_exec_policy::{ConfigError, Context, Decision, Policy, PolicyConfig, Verdict};

fn ctx() -> Context<'static> {
    Context {
        cwd: Path::new("/work/proj"),
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    }
}

fn policy(toml: &str) -> Policy {
    Policy::new(PolicyConfig::from_toml_str(toml).expect("valid toml")).expect("valid config")
}

fn check(p: &Policy, cmd: &str) -> Verdict {
    p.check(cmd, &ctx())
}

fn rule(v: &Verdict) -> &str {
    v.rule.as_deref().unwrap_or("")
}

#[test]
fn prefix_rules_match_the_parsed_command() {
    let p = policy(
        r#"
        [rules]
        deny = ["git push --force", "npm publish"]
        ask = ["git push"]
        "#,
    );
    let v = check(&p, "git push --force origin main");
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(rule(&v), "config.deny-prefix:git push --force");
    assert!(v.reason.contains("git push --force"), "{}", v.reason);
    // Spelled differently, wrapped, nested.
    for cmd in [
        "git push -f",
        "git -C repo push origin main --force",
        "sudo git push --force",
        "cd x && git push --force",
        "bash -c 'git push --force'",
        "timeout 30 npm publish --tag next",
        "g\\it push --force",
    ] {
        assert_eq!(check(&p, cmd).decision, Decision::Deny, "{cmd}");
    }
    assert_eq!(check(&p, "git push origin main").decision, Decision::Ask);
    assert_eq!(rule(&check(&p, "git push")), "config.ask-prefix:git push");
    // The same words as data do not match.
    for cmd in [
        "git commit -m 'git push --force'",
        "echo npm publish",
        "grep -rn 'git push' docs/",
        "git pull",
    ] {
        assert_eq!(check(&p, cmd).decision, Decision::Allow, "{cmd}");
    }
}

#[test]
fn flag_rules_match_any_spelling() {
    let p = policy("[rules]\ndeny = [\"rm -rf\"]");
    for cmd in [
        "rm -rf x",
        "rm -r -f x",
        "rm -fr x",
        "rm --recursive --force x",
        "rm -R -f x",
    ] {
        assert_eq!(check(&p, cmd).decision, Decision::Deny, "{cmd}");
    }
    assert_eq!(check(&p, "rm -f x").decision, Decision::Allow);
}

#[test]
fn order_is_deny_then_ask_then_allow_and_every_command_must_pass() {
    let p = policy(
        r#"
        [rules]
        deny = ["curl"]
        ask = ["curl", "docker"]
        allow = ["curl", "docker", "ls"]
        "#,
    );
    assert_eq!(check(&p, "curl https://x").decision, Decision::Deny);
    assert_eq!(check(&p, "docker ps").decision, Decision::Ask);
    assert_eq!(check(&p, "ls").decision, Decision::Allow);
    assert_eq!(check(&p, "ls && docker ps").decision, Decision::Ask);
    assert_eq!(check(&p, "docker ps; curl x").decision, Decision::Deny);
}

#[test]
fn regex_rules_see_each_resolved_command() {
    let p = policy(
        r"
        [rules]
        deny_regex = ['^terraform (apply|destroy)\b']
        ask_regex = ['^kubectl .*delete']
        ",
    );
    let v = check(&p, "cd infra && terraform destroy -auto-approve");
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(rule(&v), r"config.deny-regex:^terraform (apply|destroy)\b");
    assert_eq!(check(&p, "t\"erraform\" apply").decision, Decision::Deny);
    assert_eq!(
        check(&p, "kubectl -n x delete pod y").decision,
        Decision::Ask
    );
    assert_eq!(
        check(&p, "echo terraform destroy").decision,
        Decision::Allow
    );
}

#[test]
fn allowlist_mode_denies_unlisted_commands() {
    let p = policy(
        r#"
        allowlist_mode = true
        [rules]
        allow = ["git", "cargo", "ls"]
        "#,
    );
    assert_eq!(
        check(&p, "cargo test && git status").decision,
        Decision::Allow
    );
    assert_eq!(check(&p, "cd src && ls -la").decision, Decision::Allow);
    let v = check(&p, "cargo build && curl https://x");
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(rule(&v), "config.allowlist");
    assert!(
        v.reason.starts_with("`curl` is not on the allow-list"),
        "{}",
        v.reason
    );
    // A privileged wrapper needs its own allow rule.
    assert_eq!(check(&p, "sudo git status").decision, Decision::Deny);
    assert_eq!(check(&p, "timeout 5 git status").decision, Decision::Allow);
    // The hardline guard is not overridable.
    let p = policy("allowlist_mode = true\n[rules]\nallow = [\"rm\"]");
    assert_eq!(
        rule(&check(&p, "rm -rf /")),
        "hardline.recursive-delete-root"
    );
}

#[test]
fn hardline_wins_over_allow_rules() {
    let p = policy("[rules]\nallow = [\"rm\", \"shutdown\"]\nallow_regex = ['.*']");
    assert_eq!(check(&p, "rm -rf ~").decision, Decision::Deny);
    assert_eq!(check(&p, "shutdown now").decision, Decision::Deny);
}

#[test]
fn denied_env_keys() {
    let p = policy("[rules]\ndenied_env = [\"*_TOKEN\", \"LD_PRELOAD\"]");
    for cmd in [
        "GITHUB_TOKEN=x gh pr list",
        "export NPM_TOKEN=abc",
        "env LD_PRELOAD=/x.so ls",
        "sudo LD_PRELOAD=/x.so ls",
        "declare -x API_TOKEN=1",
        "bash -c 'export GH_TOKEN=1; gh auth status'",
    ] {
        let v = check(&p, cmd);
        assert_eq!(v.decision, Decision::Deny, "{cmd}");
        assert_eq!(rule(&v), "config.denied-env", "{cmd}");
    }
    assert_eq!(check(&p, "echo $GITHUB_TOKEN").decision, Decision::Allow);
    assert_eq!(check(&p, "TOKEN_FILE=x ls").decision, Decision::Allow);
    let keys = vec!["PATH".to_owned(), "SLACK_TOKEN".to_owned()];
    let c = Context {
        env_keys: &keys,
        ..ctx()
    };
    let v = p.check("ls", &c);
    assert_eq!(v.decision, Decision::Deny);
    assert!(v.reason.contains("SLACK_TOKEN"), "{}", v.reason);
}

#[test]
fn config_errors_name_the_rule() {
    let cfg =
        PolicyConfig::from_toml_str("[rules]\ndeny_regex = ['ok', '(unclosed']").expect("toml");
    let e = Policy::new(cfg).expect_err("bad regex");
    assert!(matches!(e, ConfigError::Regex { index: 1, .. }), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("invalid regex in rules.deny_regex[1] `(unclosed`"),
        "{e}"
    );
    let cfg = PolicyConfig::from_toml_str("[rules]\nask = ['git push', '  ']").expect("toml");
    let e = Policy::new(cfg).expect_err("empty rule");
    assert!(e.to_string().contains("rules.ask[1]"), "{e}");
}

fn intercepting(tools: &str) -> Policy {
    policy(&format!(
        "[interception]\nenabled = true\navailable_tools = [{tools}]"
    ))
}

#[test]
fn interception_rules() {
    let p = intercepting(r#""read", "grep", "find", "edit", "write""#);
    let cases = [
        ("cat src/main.rs", "intercept.read"),
        ("cd src && cat main.rs", "intercept.read"),
        ("head -n 50 README.md", "intercept.read"),
        ("tail -20 log.txt", "intercept.read"),
        ("less notes.md", "intercept.read"),
        ("grep -rn TODO src/", "intercept.grep"),
        ("rg -n 'fn main'", "intercept.grep"),
        ("find . -name '*.rs'", "intercept.find"),
        ("fd -e toml", "intercept.find"),
        ("sed -i 's/a/b/' src/lib.rs", "intercept.edit"),
        ("sed -Ei.bak 's/a/b/' x", "intercept.edit"),
        ("perl -pi -e 's/a/b/' x", "intercept.edit"),
        ("awk -i inplace '{print}' x", "intercept.edit"),
        ("echo 'hello' > notes.txt", "intercept.write"),
        ("printf '%s\\n' a >> list.txt", "intercept.write"),
        ("cat <<EOF > config.toml\na = 1\nEOF", "intercept.write"),
        ("cat > config.toml <<'EOF'\na = 1\nEOF", "intercept.write"),
    ];
    for (cmd, expected) in cases {
        let v = check(&p, cmd);
        assert_eq!(v.decision, Decision::Deny, "{cmd}: {v:?}");
        assert_eq!(rule(&v), expected, "{cmd}");
    }
    let v = check(&p, "cat src/main.rs");
    assert_eq!(
        format!("Blocked: {}", v.reason),
        "Blocked: `cat` reads a file here; use the `read` tool instead of the shell for that."
    );
    for cmd in [
        "git diff | grep x",
        "cat file | jq .",
        "ps aux | grep node",
        "tail -f server.log",
        "cat a b > c",
        "find . -name '*.tmp' -delete",
        "find . -type f | wc -l",
        "echo hi",
        "echo hi > /dev/null",
        "echo $(cat VERSION)",
        "sed 's/a/b/' x",
        "cargo test 2>&1 | grep FAILED",
        "grep -q x file && echo yes | grep y",
    ] {
        let v = check(&p, cmd);
        assert!(!rule(&v).starts_with("intercept."), "{cmd}: {v:?}");
    }
}

#[test]
fn interception_needs_the_tool_and_the_switch() {
    let p = intercepting(r#""Read""#);
    assert_eq!(rule(&check(&p, "cat x")), "intercept.read");
    assert!(check(&p, "cat x").reason.contains("`Read` tool"));
    assert_eq!(check(&p, "grep -r x .").decision, Decision::Allow);
    assert_eq!(
        check(&Policy::permissive(), "cat x").decision,
        Decision::Allow
    );
    // An explicit allow rule wins over interception.
    let p = policy(
        "[rules]\nallow = [\"cat\"]\n[interception]\nenabled = true\navailable_tools = [\"read\"]",
    );
    assert_eq!(check(&p, "cat x").decision, Decision::Allow);
}

#[test]
fn check_argv_runs_no_shell() {
    let p = Policy::permissive();
    let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let v = p.check_argv("rm", &args(&["-rf", "/"]), &ctx());
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(v.commands, ["rm -rf /"]);
    let v = p.check_argv("sudo", &args(&["bash", "-c", "rm -rf ~"]), &ctx());
    assert_eq!(v.decision, Decision::Deny);
    // No quote removal, globbing or expansion without a shell: `$HOME` is a literal name.
    let v = p.check_argv("echo", &args(&["$(reboot)", "; rm -rf /"]), &ctx());
    assert_eq!(v.decision, Decision::Allow);
    let v = p.check_argv("rm", &args(&["-rf", "$HOME"]), &ctx());
    assert_eq!(v.decision, Decision::Allow, "{v:?}");
}

#[test]
fn verdict_shape() {
    let p = Policy::permissive();
    let v = check(&p, "ls && echo hi | wc -l");
    assert_eq!(v.decision, Decision::Allow);
    assert_eq!(v.rule, None);
    assert_eq!(v.commands, ["ls", "echo hi", "wc -l"]);
    assert!(v.reason.contains("no policy rule matched"), "{}", v.reason);
    let v = check(&p, "   ");
    assert_eq!(v.decision, Decision::Allow);
    assert!(v.commands.is_empty());
}

#[test]
fn reasons_read_well_after_blocked() {
    let p = Policy::permissive();
    for cmd in [
        "rm -rf /",
        "rm -rf ~",
        "reboot",
        "kill -9 -1",
        "dd if=x of=/dev/sda",
        ":(){ :|:& };:",
    ] {
        let v = check(&p, cmd);
        assert_eq!(v.decision, Decision::Deny, "{cmd}");
        let first = v.reason.chars().next().unwrap_or(' ');
        assert!(!first.is_uppercase(), "{cmd}: {}", v.reason);
        assert!(v.reason.ends_with('.'), "{cmd}: {}", v.reason);
        assert!(v.reason.contains("hardline guard"), "{cmd}: {}", v.reason);
    }
}

#[test]
fn run_time_process_ids_ask_unless_they_name_the_agents_own_processes() {
    let p = Policy::permissive();
    for own in [
        "kill -KILL $$",
        "kill $BASHPID",
        "sleep 9 & kill $!",
        "kill %1",
        "kill $(jobs -p)",
        "kill -9 $(lsof -t -i :3000)",
        "kill -TERM \"$(cat server.pid)\"",
    ] {
        assert_eq!(check(&p, own).decision, Decision::Allow, "{own}");
    }
    for unknown in [
        "kill -9 $(pgrep -f \"$PATTERN\")",
        "kill $(cat /run/sshd.pid)",
        "pgrep node | xargs kill",
        "kill -9 $PID",
    ] {
        let v = check(&p, unknown);
        assert_eq!(v.decision, Decision::Ask, "{unknown}");
        assert_eq!(rule(&v), "unresolved.kill-pattern", "{unknown}");
    }
}

#[test]
fn a_verdict_that_read_the_file_system_is_made_afresh_and_others_are_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().canonicalize().expect("canonical");
    let ctx = Context {
        cwd: &cwd,
        home: Some(Path::new("/home/dev")),
        env_keys: &[],
    };
    let p = Policy::permissive();
    std::fs::create_dir(cwd.join("build")).expect("dir");
    let command = "rm -rf build/";
    assert_eq!(p.check(command, &ctx).decision, Decision::Allow);
    // The same line, once `build` is a link to the root: the link is read again.
    std::fs::remove_dir(cwd.join("build")).expect("rmdir");
    std::os::unix::fs::symlink("/", cwd.join("build")).expect("link");
    let v = p.check(command, &ctx);
    assert_eq!(v.decision, Decision::Deny, "{v:?}");
    // A line that reads nothing gets the same verdict every time, in any order of calls.
    for _ in 0..3 {
        assert_eq!(p.check("true", &ctx).decision, Decision::Allow);
        assert_eq!(p.check("sudo rm -rf /", &ctx).decision, Decision::Deny);
    }
}
