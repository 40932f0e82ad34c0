//! The same containment checks with this test process as a child subreaper (as the
//! `agent-exec` binary runs): orphans come back to us and are reaped, not left as zombies.

mod support;

use agent_exec_executor::containment::{become_subreaper, is_subreaper};
use support::{PidFile, exec, spec};

fn zombie_children() -> Vec<i32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                let f: Vec<&str> = s
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
                f.first() == Some(&"Z") && f.get(1) == Some(&me.as_str())
            })
        })
        .collect()
}

#[test]
fn escapees_and_orphans_are_ended_and_reaped() {
    become_subreaper().expect("prctl");
    assert!(is_subreaper());
    for command in [
        "$MB setsid-escape 30",
        "$MB fork-grandchild 30",
        "$MB fork-grandchild 30 close",
    ] {
        let pids = PidFile::new();
        let (outcome, _) = exec(&spec(command, &pids));
        assert_eq!(outcome.processes_stopped, 1, "{command}");
        assert_eq!(pids.survivors(), Vec::<i32>::new(), "{command}");
        assert_eq!(zombie_children(), Vec::<i32>::new(), "{command}");
    }
    // Nothing left behind: the fast path (no children, no group) applies.
    let pids = PidFile::new();
    let (outcome, capture) = exec(&spec("echo ok", &pids));
    assert_eq!(outcome.processes_stopped, 0);
    assert_eq!(capture.view.text(), "ok\n");
}
