//! The async API: a call is a future that cancels the command when dropped, streams progress,
//! follows a `CancellationToken`, and takes approvals given later.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_exec_core::{
    AsyncApprover, CancelToken, CancellationToken, Decision, JobOutputRequest, Outcome, Request,
    RunOptions,
};
use support::{alive, eventually, pid_in, tool_with};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn dropping_the_future_ends_the_command_and_its_children() {
    let (dir, tool) = tool_with(|_| {});
    let pidfile = dir.path().join("pid");
    let request = Request::shell(format!("sleep 300 & echo $! > {}; wait", pidfile.display()));
    let pid = runtime().block_on(async {
        let call = tool.start(request, RunOptions::default());
        let written = tokio::task::spawn_blocking(move || pid_in(&pidfile));
        // Dropped once the command is known to run: the select ends on the pid.
        tokio::select! {
            _ = call => panic!("the command should still be running"),
            pid = written => pid.expect("the pid is written"),
        }
    });
    assert!(eventually(|| !alive(pid)), "pid {pid} survived the drop");
}

#[test]
fn a_cancellation_token_cancels_the_call() {
    let (_dir, tool) = tool_with(|_| {});
    let token = CancellationToken::new();
    let result = runtime().block_on(async {
        let call = tool.start(
            Request::shell("echo partial; sleep 300"),
            RunOptions::default().cancel_on(token.clone()),
        );
        let canceller = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            canceller.cancel();
        });
        call.await
    });
    assert_eq!(result.outcome(), Outcome::Cancelled, "{}", result.text());
    assert!(
        result.text().starts_with("[Command cancelled]\npartial\n"),
        "{}",
        result.text()
    );
}

#[test]
fn progress_streams_while_the_command_runs_and_ends_with_it() {
    let (_dir, tool) = tool_with(|_| {});
    let (updates, result) = runtime().block_on(async {
        let mut call = tool.start(
            Request::shell("for i in 1 2 3; do echo line $i; sleep 0.4; done; echo err >&2"),
            RunOptions::default().with_progress(),
        );
        let mut updates = Vec::new();
        while let Some(u) = call.update().await {
            updates.push(u);
        }
        (updates, call.await)
    });
    assert_eq!(result.outcome(), Outcome::Success);
    assert!(updates.len() >= 2, "{updates:?}");
    assert!(
        updates
            .windows(2)
            .all(|w| w[0].elapsed <= w[1].elapsed && w[0].lines <= w[1].lines)
    );
    let last = updates.last().unwrap();
    // stdout and stderr share one pipe: everything counts as stdout.
    assert_eq!(
        (last.stdout_bytes, last.stderr_bytes, last.lines),
        (25, 0, 4)
    );
    assert_eq!(last.last_line(), "err");
    assert!(
        updates.iter().any(|u| u.tail.contains("line 1\n")),
        "{updates:?}"
    );
}

struct Answer(bool, AtomicUsize);

impl AsyncApprover for Answer {
    fn approve(
        &self,
        command: String,
        reason: String,
    ) -> Pin<Box<dyn Future<Output = bool> + Send>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        assert!(command.contains("-rf"), "{command}");
        assert!(!reason.is_empty());
        let yes = self.0;
        Box::pin(async move {
            // A human answers later.
            tokio::time::sleep(Duration::from_millis(50)).await;
            yes
        })
    }
}

#[test]
fn an_async_approver_answers_later_and_the_request_runs_as_approved() {
    let (dir, tool) = tool_with(|_| {});
    let marker = dir.path().join("ran");
    // `$CMD -rf …` cannot be resolved statically: the policy asks.
    let request =
        Request::shell(format!("$CMD -rf x && touch {}", marker.display())).env("CMD", "true");
    let no = Answer(false, AtomicUsize::new(0));
    let r = runtime().block_on(tool.run_with(request.clone(), Some(&no)));
    assert_eq!(r.outcome(), Outcome::NeedsApproval, "{}", r.text());
    assert_eq!(no.1.load(Ordering::SeqCst), 1);
    assert!(!marker.exists());
    let yes = Answer(true, AtomicUsize::new(0));
    let r = runtime().block_on(tool.run_with(request, Some(&yes)));
    assert_eq!(r.outcome(), Outcome::Success, "{}", r.text());
    assert!(marker.exists());
}

#[test]
fn approval_never_overrides_a_deny() {
    let (dir, tool) = tool_with(|_| {});
    let marker = dir.path().join("ran");
    let denied = Request::shell(format!("touch {} && rm -rf /", marker.display()));
    let r = tool.execute_approved(&denied, &CancelToken::new());
    assert_eq!(r.outcome(), Outcome::Denied);
    assert_eq!(r.details.policy.unwrap().decision, Decision::Deny);
    assert!(!marker.exists());
    let asked =
        Request::shell(format!("$CMD -rf x && touch {}", marker.display())).env("CMD", "true");
    assert_eq!(
        tool.execute(&asked, &CancelToken::new()).outcome(),
        Outcome::NeedsApproval
    );
    assert_eq!(
        tool.execute_approved(&asked, &CancelToken::new()).outcome(),
        Outcome::Success
    );
    assert!(marker.exists());
}

#[test]
fn job_output_waits_without_blocking_the_runtime() {
    let (_dir, tool) = tool_with(|_| {});
    let tool = Arc::new(tool);
    let out = runtime().block_on(async {
        let started = tool
            .run(Request::shell("sleep 0.3; echo done").in_background())
            .await;
        let job = started.details.job_id.clone().expect("job id");
        let ticks = tokio::spawn(async {
            let mut n = 0;
            for _ in 0..5 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                n += 1;
            }
            n
        });
        let out = tool
            .job_output_async(JobOutputRequest::new(job).wait(Duration::from_secs(10)))
            .await;
        assert_eq!(ticks.await.unwrap(), 5);
        out
    });
    assert!(out.text().ends_with("done\n"), "{}", out.text());
}

#[test]
fn a_cancellation_token_reaches_a_caller_looping_on_updates() {
    let (_dir, tool) = tool_with(|_| {});
    let token = CancellationToken::new();
    let result = runtime().block_on(async {
        let mut call = tool.start(
            Request::shell("echo partial; sleep 300"),
            RunOptions::default()
                .with_progress()
                .cancel_on(token.clone()),
        );
        let canceller = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            canceller.cancel();
        });
        while call.update().await.is_some() {}
        call.await
    });
    assert_eq!(result.outcome(), Outcome::Cancelled, "{}", result.text());
}
