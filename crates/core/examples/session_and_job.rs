//! A persistent session (cd and exports persist) and a background job with its output.
use std::time::Duration;

use agent_exec_core::{CancelToken, Config, JobOutputRequest, Request, Tool};

fn main() {
    let tool = Tool::new(Config::default());
    let run = |r: Request| tool.execute(&r, &CancelToken::new());
    run(Request::shell("cd /tmp && export GREETING=hi").in_session("dev"));
    let r = run(Request::shell("echo $GREETING from $(pwd)").in_session("dev"));
    print!("session: {}", r.text());

    let started =
        run(Request::shell("for i in 1 2 3; do echo tick $i; sleep 0.2; done").in_background());
    let job = started.details.job_id.clone().expect("a job id");
    let read = JobOutputRequest::new(job.clone()).wait(Duration::from_secs(5));
    loop {
        let out = tool.job_output(&read);
        println!("{}", out.text());
        if out.details.exit_code.is_some() {
            break;
        }
    }
    tool.shutdown();
}
