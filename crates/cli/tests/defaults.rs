//! Safe by default (contract §5, §8): with no flag at all, every entry point (`run`, `serve`,
//! `mcp`) and every mode (one-shot, session, job) runs commands in `workspace-write` with the
//! dev profile and the network on; credential-looking variables do not reach commands unless
//! passed by name; a blocked access in the default sandbox says what the user can allow, in
//! other words than a mode the operator chose; `--sandbox off` opts out. As root and as a
//! throwaway unprivileged user, judged on the host.

use serde_json::{Value, json};

mod common;
use common::*;

/// Secret-looking variables put into agent-exec's own environment, and their values.
const SECRETS: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "sk-test-openai-VALUE"),
    ("GITHUB_TOKEN", "ghp-test-github-VALUE"),
    ("AWS_SECRET_ACCESS_KEY", "aws-test-secret-VALUE"),
    ("MY_DB_PASSWORD", "db-test-password-VALUE"),
];

/// `agent-exec ARGS` as the world's user with the secrets in its environment.
fn with_secrets(w: &World, args: &[&str]) -> std::process::Command {
    let mut cmd = w.command(args);
    for (k, v) in SECRETS {
        cmd.env(k, v);
    }
    // runuser keeps the environment it is given: the secrets reach agent-exec either way.
    cmd
}

fn outside_unchanged(w: &World) -> bool {
    w.outside_file() == "original\n"
}

#[test]
fn every_entry_point_and_mode_runs_commands_in_the_default_sandbox() {
    for user in users() {
        let w = World::new(&user);
        let file = sh_quote(&w.outside.join("file"));
        let payload = format!(
            "echo inside > in-ws && echo cached > ~/.cache/agent-work && echo pwned > {file}; cat in-ws ~/.cache/agent-work"
        );
        // run
        let r = w.run(&[], &payload);
        assert_eq!(r["details"]["sandbox"]["mode"], "workspace-write", "{r}");
        assert_eq!(r["details"]["sandbox"]["network"], "on", "{r}");
        assert!(
            text(&r).contains("inside\ncached\n"),
            "{user:?}: {}",
            text(&r)
        );
        assert!(outside_unchanged(&w), "{user:?}: run wrote outside");
        // serve: one-shot, session, job
        let answers = serve_with(w.command(&["serve"]), &in_every_server_mode(&payload));
        for id in [1, 2] {
            let result = &answers[&id]["result"];
            assert!(
                text(result).contains("inside\ncached\n"),
                "{user:?} {id}: {result}"
            );
        }
        // The job's first words: its write outside was refused.
        let job = &answers[&4]["result"];
        assert!(
            text(job).contains("Read-only file system"),
            "{user:?}: {job}"
        );
        assert_eq!(
            answers[&1]["result"]["details"]["sandbox"]["mode"],
            "workspace-write"
        );
        assert!(outside_unchanged(&w), "{user:?}: serve wrote outside");
        // mcp: the model is told, and its calls are confined
        let answers = serve_with(
            w.command(&["mcp"]),
            &[
                request(
                    1,
                    "initialize",
                    &json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
                ),
                request(
                    2,
                    "tools/call",
                    &json!({"name": "bash", "arguments": {"command": payload}}),
                ),
            ],
        );
        let instructions = answers[&1]["result"]["instructions"].as_str().unwrap();
        assert!(
            instructions.contains("agent-exec's default sandbox (workspace-write)")
                && instructions.contains(&w.workspace.display().to_string()),
            "{instructions}"
        );
        let call = &answers[&2]["result"];
        assert_eq!(
            call["structuredContent"]["sandbox"]["mode"], "workspace-write",
            "{call}"
        );
        assert!(outside_unchanged(&w), "{user:?}: mcp wrote outside");
    }
}

#[test]
fn sandbox_off_opts_out_by_flag_and_by_config() {
    let w = World::new(&users()[0]);
    let file = sh_quote(&w.outside.join("file"));
    let r = w.run(&["--sandbox", "off"], &format!("echo one > {file}"));
    assert_eq!(outcome(&r), "success", "{}", text(&r));
    assert_eq!(r["details"]["sandbox"], Value::Null);
    assert_eq!(w.outside_file(), "one\n");
    let config = w.workspace.join("off.toml");
    std::fs::write(&config, "[sandbox]\nmode = \"off\"\n").unwrap();
    let config = config.display().to_string();
    let r = w.run(&["--config", &config], &format!("echo two > {file}"));
    assert_eq!(outcome(&r), "success", "{}", text(&r));
    assert_eq!(w.outside_file(), "two\n");
    // A profile without the caches: ~/.cache is read-only again.
    let r = w.run(
        &["--sandbox-profile", "none"],
        "echo x > ~/.cache/agent-work",
    );
    assert_ne!(outcome(&r), "success", "{}", text(&r));
    let bad = w
        .command(&["run", "--sandbox-profile", "everything", "--", "true"])
        .output_bounded()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("use dev or none"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn secrets_do_not_reach_commands_unless_passed_by_name() {
    for user in users() {
        let w = World::new(&user);
        let show = "env; cat /proc/self/environ | tr '\\0' '\\n'; echo token=$GITHUB_TOKEN";
        let leaked = |t: &str| SECRETS.iter().any(|(_, v)| t.contains(v));
        let r = run_json(with_secrets(&w, &["run", "--json", "--", show]));
        assert!(!leaked(text(&r)), "{user:?}: {}", text(&r));
        let warnings = r["details"]["warnings"].to_string();
        for (name, value) in SECRETS {
            assert!(warnings.contains(name), "{warnings}");
            assert!(!warnings.contains(value), "{warnings}");
        }
        // The command names one: the model reads what it lacks and what to ask for.
        assert!(
            text(&r).contains("--pass-env NAME") && text(&r).contains("GITHUB_TOKEN"),
            "{}",
            text(&r)
        );
        // Also with the sandbox off, in a server's session and job.
        let r = run_json(with_secrets(
            &w,
            &["run", "--json", "--sandbox", "off", "--", show],
        ));
        assert!(!leaked(text(&r)), "{user:?}: {}", text(&r));
        let answers = serve_with(with_secrets(&w, &["serve"]), &in_every_server_mode(show));
        for id in [1, 2, 4] {
            let t = answers[&id]["result"].to_string();
            assert!(!leaked(&t), "{user:?} {id}: {t}");
        }
        // Passed by name (flag or config), or set by the request itself: it arrives.
        let config = w.workspace.join("env.toml");
        let config_arg = config.display().to_string();
        let with_config: &[&str] = &["--config", &config_arg];
        for (file, flags, command, expected) in [
            (
                "",
                &["--pass-env", "GITHUB_TOKEN"][..],
                "echo token=$GITHUB_TOKEN key=$OPENAI_API_KEY",
                "token=ghp-test-github-VALUE key=\n",
            ),
            (
                "",
                &["-e", "OPENAI_API_KEY=from-the-request"],
                "echo key=$OPENAI_API_KEY",
                "key=from-the-request",
            ),
            (
                "[env]\npass = [\"AWS_*\"]\n",
                with_config,
                "echo aws=$AWS_SECRET_ACCESS_KEY",
                "aws=aws-test-secret-VALUE",
            ),
            (
                "[env]\nwithhold_secrets = false\n",
                with_config,
                "echo db=$MY_DB_PASSWORD",
                "db=db-test-password-VALUE",
            ),
        ] {
            std::fs::write(&config, file).unwrap();
            let mut args = vec!["run", "--json"];
            args.extend_from_slice(flags);
            args.extend(["--", command]);
            let r = run_json(with_secrets(&w, &args));
            assert!(text(&r).contains(expected), "{flags:?}: {}", text(&r));
            // What the request set arrived: it is not said to be withheld.
            if flags.contains(&"-e") {
                let warnings = r["details"]["warnings"].to_string();
                assert!(!warnings.contains("OPENAI_API_KEY"), "{warnings}");
            }
        }
    }
}

#[test]
fn a_blocked_write_says_what_the_user_can_allow_only_in_the_default_sandbox() {
    let w = World::new(&users()[0]);
    let file = sh_quote(&w.outside.join("file"));
    let r = w.run(&[], &format!("echo pwned > {file}"));
    let t = text(&r);
    assert!(
        t.contains("agent-exec's default sandbox")
            && t.contains("--writable PATH")
            && t.contains("--sandbox off"),
        "{t}"
    );
    // The operator chose it: stated, not offered for negotiation.
    let r = w.run(
        &["--sandbox", "workspace-write"],
        &format!("echo pwned > {file}"),
    );
    let t = text(&r);
    assert!(
        t.ends_with(&format!(
            "[Sandbox: writes outside {} are blocked (workspace-write)]",
            w.workspace.display()
        )),
        "{t}"
    );
    assert!(!t.contains("--sandbox off"), "{t}");
    // A deny-read path in the default sandbox.
    let r = w.run(&[], "cat ~/.ssh/id_test");
    let t = text(&r);
    assert!(!t.contains(SECRET), "{t}");
    assert!(t.contains("deny-read") && t.contains("ask the user"), "{t}");
    assert!(outside_unchanged(&w));
}

#[test]
fn agent_execs_own_files_stay_read_only_in_the_writable_caches() {
    for user in users() {
        let w = World::new(&user);
        // The program in ~/.local/bin (a writable root of the dev profile), run from there.
        let bin_dir = w.home.join(".local/bin");
        std::fs::create_dir_all(&bin_dir).unwrap();
        let installed = bin_dir.join("agent-exec");
        std::fs::copy(binary(), &installed).unwrap();
        for path in [w.home.join(".local"), bin_dir.clone(), installed.clone()] {
            std::os::unix::fs::lchown(&path, Some(user.uid), Some(user.gid)).unwrap();
        }
        let before = std::fs::read(&installed).unwrap();
        // Run from there, as installed by name: the program the operator will run again.
        let r = run_json(w.command_of(
            &installed,
            &[
                "run",
                "--json",
                "--",
                "echo '#!/bin/sh' > ~/.local/bin/agent-exec; mkdir -p ~/.cache/agent-exec && echo planted > ~/.cache/agent-exec/rc-planted; echo tried",
            ],
        ));
        assert!(text(&r).contains("tried"), "{user:?}: {}", text(&r));
        assert_eq!(std::fs::read(&installed).unwrap(), before, "{user:?}");
        assert!(
            !w.home.join(".cache/agent-exec/rc-planted").exists(),
            "{user:?}"
        );
        // pip --user's scripts still install there.
        let r = w.run(&[], "echo '#!/bin/sh' > ~/.local/bin/tool && echo ok");
        assert!(text(&r).contains("ok"), "{user:?}: {}", text(&r));
    }
}

#[test]
fn the_help_and_the_version_say_what_the_default_is() {
    for args in [&["--help"][..], &["run", "--help"], &["mcp", "--help"]] {
        let out = std::process::Command::new(binary())
            .args(args)
            .output_bounded()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("By default commands run in agent-exec's sandbox")
                && help.contains("--sandbox off opts out"),
            "{args:?}: {help}"
        );
    }
    let out = std::process::Command::new(binary())
        .arg("--version")
        .output_bounded()
        .unwrap();
    let version = String::from_utf8_lossy(&out.stdout);
    assert!(
        version.contains("default: workspace-write, profile dev, network on"),
        "{version}"
    );
}
