//! The containment group of a call, under every backend this kind of machine offers (cgroup
//! v2, the v1 freezer, and the process-group fallback): escapees are ended and counted exactly,
//! a timeout ends the whole tree, and a failed spawn names the working directory.

mod support;

use std::time::Duration;

use agent_exec_executor::{CancelToken, Containment, ExecSpec, GroupKind, SpawnError, run};
use agent_exec_sink::{OutputSink, SinkConfig};
use support::{PidFile, alive};

const CGROUPS: [(Containment, GroupKind); 2] = [
    (Containment::CgroupV2, GroupKind::CgroupV2),
    (Containment::CgroupV1, GroupKind::CgroupV1),
];

fn spec_in(containment: Containment, command: &str, pids: &PidFile) -> ExecSpec {
    let mut spec = support::spec(command, pids);
    spec.containment = containment;
    spec.timeout = Some(Duration::from_mins(1));
    spec
}

/// `n` escapees that leave the process group *and* scrub their environment (so no marker
/// finds them), each recording its pid in `file`; the command waits until all have recorded.
fn scrubbed_escapees(n: usize, file: &std::path::Path) -> String {
    let file = file.display();
    format!(
        "for i in $(seq {n}); do setsid env -i sh -c 'echo $$ >> {file}; exec sleep 600' & done; \
         while [ \"$(wc -l 2>/dev/null < {file} || echo 0)\" -lt {n} ]; do sleep 0.01; done; echo started"
    )
}

#[test]
fn escapees_with_a_scrubbed_environment_are_ended_and_counted() {
    for (containment, kind) in CGROUPS {
        let pids = PidFile::new();
        let spec = spec_in(containment, &scrubbed_escapees(8, &pids.path), &pids);
        let mut sink = OutputSink::new(SinkConfig::default(), None);
        let outcome = run(&spec, &mut sink, &CancelToken::new());
        assert_eq!(outcome.containment, Some(kind));
        assert_eq!(sink.finish_capture().view.text(), "started\n", "{kind:?}");
        assert_eq!(pids.pids().len(), 8, "{kind:?}");
        assert_eq!(outcome.processes_stopped, 8, "{kind:?}");
        assert_eq!(pids.survivors(), Vec::<i32>::new(), "{kind:?}");
    }
}

#[test]
fn the_fallback_counts_escapees_that_keep_the_marker() {
    let pids = PidFile::new();
    let command = "for i in 1 2 3; do setsid $MB ignore-term 600 & done; \
                   while [ \"$(wc -l 2>/dev/null < $MISBEHAVE_PIDS || echo 0)\" -lt 3 ]; do sleep 0.01; done";
    let spec = spec_in(Containment::ProcessGroup, command, &pids);
    let mut sink = OutputSink::new(SinkConfig::default(), None);
    let outcome = run(&spec, &mut sink, &CancelToken::new());
    assert_eq!(outcome.containment, Some(GroupKind::ProcessGroup));
    assert_eq!(outcome.processes_stopped, 3);
    assert_eq!(pids.survivors(), Vec::<i32>::new());
}

#[test]
fn a_timeout_ends_the_whole_tree_under_every_backend() {
    for (containment, kind) in CGROUPS {
        let pids = PidFile::new();
        let command = format!("{}; sleep 600", scrubbed_escapees(2, &pids.path));
        let mut spec = spec_in(containment, &command, &pids);
        spec.timeout = Some(Duration::from_secs(1));
        let mut sink = OutputSink::new(SinkConfig::default(), None);
        let outcome = run(&spec, &mut sink, &CancelToken::new());
        assert!(outcome.timed_out(), "{kind:?}");
        assert_eq!(pids.pids().len(), 2, "{kind:?}");
        assert_eq!(pids.survivors(), Vec::<i32>::new(), "{kind:?}");
    }
}

#[test]
fn a_cgroup_is_reused_and_left_empty() {
    // Many calls in a row: each gets an empty group (none sees another's processes), and an
    // escapee of one call never counts in the next.
    for (containment, kind) in CGROUPS {
        for _ in 0..5 {
            let pids = PidFile::new();
            let spec = spec_in(containment, &scrubbed_escapees(1, &pids.path), &pids);
            let mut sink = OutputSink::new(SinkConfig::default(), None);
            let outcome = run(&spec, &mut sink, &CancelToken::new());
            assert_eq!(outcome.processes_stopped, 1, "{kind:?}");
            let pids = PidFile::new();
            let spec = spec_in(containment, "true", &pids);
            let outcome = run(&spec, &mut sink, &CancelToken::new());
            assert_eq!(outcome.processes_stopped, 0, "{kind:?}");
        }
    }
}

#[test]
fn a_missing_working_directory_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    for command in ["ls", "echo $PWD; true"] {
        let mut sink = OutputSink::new(SinkConfig::default(), None);
        let outcome = run(
            &ExecSpec::shell(command, &gone),
            &mut sink,
            &CancelToken::new(),
        );
        match outcome.spawn_error {
            Some(SpawnError::Cwd { path, .. }) => assert_eq!(path, gone),
            other => panic!("{command}: expected a cwd error, got {other:?}"),
        }
    }
}

#[test]
fn a_process_stopped_with_sigstop_is_ended_by_the_cgroup_too() {
    for (containment, kind) in CGROUPS {
        let pids = PidFile::new();
        let mut spec = spec_in(containment, "$MB stop-self 600", &pids);
        spec.timeout = Some(Duration::from_millis(500));
        let mut sink = OutputSink::new(SinkConfig::default(), None);
        let outcome = run(&spec, &mut sink, &CancelToken::new());
        assert!(outcome.timed_out(), "{kind:?}");
        assert!(pids.pids().iter().all(|&p| !alive(p)), "{kind:?}");
    }
}

#[test]
fn calls_after_a_group_was_killed_run_normally() {
    // A group ended by SIGKILL (TERM ignored) must not poison the next calls: on this kernel a
    // cgroup that saw `cgroup.kill` kills every child later created in it, so it is never reused.
    for (containment, kind) in CGROUPS {
        for _ in 0..3 {
            let pids = PidFile::new();
            let mut spec = spec_in(containment, "$MB ignore-term 600", &pids);
            spec.timeout = Some(Duration::from_millis(300));
            spec.grace = Duration::from_millis(100);
            let mut sink = OutputSink::new(SinkConfig::default(), None);
            let outcome = run(&spec, &mut sink, &CancelToken::new());
            assert!(outcome.timed_out(), "{kind:?}");
            for _ in 0..3 {
                let spec = spec_in(containment, "echo alive", &pids);
                let mut sink = OutputSink::new(SinkConfig::default(), None);
                let outcome = run(&spec, &mut sink, &CancelToken::new());
                assert_eq!(
                    outcome.status,
                    Some(agent_exec_executor::ExitStatus::Exited(0)),
                    "{kind:?}"
                );
                assert_eq!(sink.finish_capture().view.text(), "alive\n", "{kind:?}");
            }
        }
    }
}

#[test]
fn a_cgroup_the_command_made_inside_its_own_is_ended_too() {
    // A nested agent-exec (or any command) may make cgroups below the call's: their processes
    // belong to the call all the same.
    let pids = PidFile::new();
    let file = pids.path.display();
    let command = format!(
        "cg=$(findmnt -n -t cgroup2 -o TARGET | head -1)$(sed -n 's/^0:://p' /proc/self/cgroup); \
         mkdir \"$cg/inner\"; sh -c \"echo \\$\\$ > $cg/inner/cgroup.procs && echo \\$\\$ >> {file} && exec sleep 600\" & \
         while [ \"$(wc -l 2>/dev/null < {file} || echo 0)\" -lt 1 ]; do sleep 0.01; done; echo moved"
    );
    for _ in 0..2 {
        let spec = spec_in(Containment::CgroupV2, &command, &pids);
        let mut sink = OutputSink::new(SinkConfig::default(), None);
        let outcome = run(&spec, &mut sink, &CancelToken::new());
        assert_eq!(sink.finish_capture().view.text(), "moved\n");
        assert_eq!(outcome.processes_stopped, 1);
        assert_eq!(pids.survivors(), Vec::<i32>::new());
        std::fs::remove_file(&pids.path).unwrap();
    }
}
