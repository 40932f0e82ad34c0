//! The rc snapshot: a user's `~/.bashrc` functions, aliases, options and PATH reach sessions
//! without the rc running on every call. Its own test binary: it points HOME at a temp dir.

use std::time::Duration;

use agent_exec_core::{Config, Request, Tool};
use agent_exec_executor::CancelToken;

#[test]
fn sessions_get_the_users_functions_aliases_and_path() {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("mybin");
    std::fs::create_dir(&bin).unwrap();
    let counter = home.path().join("rc-runs");
    std::fs::write(
        home.path().join(".bashrc"),
        format!(
            "echo ran >> {counter}\nmyfn() {{ echo \"from rc: $1\"; }}\nalias hello='echo aliased hello'\nshopt -s extglob\nexport PATH=\"{bin}:$PATH\"\n",
            counter = counter.display(),
            bin = bin.display()
        ),
    )
    .unwrap();
    // SAFETY: this test binary has a single test; nothing else reads HOME concurrently.
    unsafe { std::env::set_var("HOME", home.path()) };
    let mut config = Config {
        artifacts_dir: home.path().join("artifacts"),
        workdir: home.path().to_path_buf(),
        grace: Duration::from_millis(300),
        ..Config::default()
    };
    config.sessions.rc_snapshot = true;
    config.sessions.cache_dir = home.path().join("cache");
    // The rc counts its runs in a file outside the snapshot's cache, which a sandboxed rc may
    // not write (`sandbox.rs` covers the rc in the sandbox).
    config.sandbox.mode = Some(agent_exec_core::SandboxMode::Off);
    let tool = Tool::new(config);
    let exec = |session: &str, command: &str| {
        let request = Request::shell(command).in_session(session);
        tool.execute(&request, &CancelToken::new())
            .text()
            .to_owned()
    };
    assert_eq!(
        exec("a", "myfn x; hello; shopt -q extglob && echo extglob on"),
        "from rc: x\naliased hello\nextglob on\n"
    );
    assert!(exec("a", "echo $PATH").starts_with(&format!("{}:", bin.display())));
    // A second session reuses the cached snapshot: the rc ran once, in the throwaway shell.
    assert_eq!(exec("b", "myfn y"), "from rc: y\n");
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap().lines().count(),
        1
    );
    // Without the option, sessions are plain.
    let plain = Tool::new(Config {
        artifacts_dir: home.path().join("artifacts"),
        workdir: home.path().to_path_buf(),
        ..Config::default()
    });
    let request =
        Request::shell("type myfn >/dev/null 2>&1 && echo has || echo none").in_session("c");
    assert_eq!(
        plain.execute(&request, &CancelToken::new()).text(),
        "none\n"
    );
}
