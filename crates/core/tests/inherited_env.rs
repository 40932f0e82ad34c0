//! When commands see the variables of the process that runs them: a `Tool` reads its
//! environment at its first command and keeps it; a new `Tool` — also one made from a clone of
//! a configuration already used — reads it again. Its own test binary: it sets a variable.

use std::time::Duration;

use agent_exec_core::{Config, Request, Tool};
use agent_exec_executor::CancelToken;

fn seen(tool: &Tool) -> String {
    let result = tool.execute(
        &Request::shell("printf '%s' \"${AE_LATE_VARIABLE-unset}\""),
        &CancelToken::new(),
    );
    assert!(!result.is_error, "{}", result.text());
    result.text().to_owned()
}

#[test]
fn a_tool_reads_the_environment_at_its_first_command_and_a_new_tool_reads_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        artifacts_dir: dir.path().join("artifacts"),
        workdir: dir.path().to_path_buf(),
        grace: Duration::from_millis(300),
        ..Config::default()
    };
    let first = Tool::new(config.clone());
    assert_eq!(seen(&first), "unset");
    // SAFETY: this test binary has a single test; nothing else reads the environment now.
    unsafe { std::env::set_var("AE_LATE_VARIABLE", "set later") };
    assert_eq!(seen(&first), "unset", "read at its first command, and kept");
    let second = Tool::new(config.clone());
    assert_eq!(seen(&second), "set later");
    // A secret set later is withheld by a new tool, and named in its warnings.
    // SAFETY: as above.
    unsafe { std::env::set_var("AE_LATE_API_TOKEN", "s3cret") };
    let third = Tool::new(config);
    let result = third.execute(
        &Request::shell("printf '%s' \"${AE_LATE_API_TOKEN-withheld}\""),
        &CancelToken::new(),
    );
    // The command names it: the text says why it is missing.
    assert!(result.text().starts_with("withheld\n"), "{}", result.text());
    assert!(
        result.text().contains("AE_LATE_API_TOKEN"),
        "{}",
        result.text()
    );
    assert!(
        result
            .details
            .warnings
            .iter()
            .any(|w| w.contains("AE_LATE_API_TOKEN")),
        "{:?}",
        result.details.warnings
    );
}
