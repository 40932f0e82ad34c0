//! A long command's output streamed from tokio while it runs; dropping the call would end it.
use agent_exec_core::{Config, Request, RunOptions, Tool};

#[tokio::main]
async fn main() {
    let tool = Tool::new(Config::default());
    let request = Request::shell("for i in 1 2 3 4; do echo step $i; sleep 0.3; done");
    let mut call = tool.start(request, RunOptions::default().with_progress());
    while let Some(update) = call.update().await {
        println!(
            "[{:.1}s] {} lines so far, last: {}",
            update.elapsed.as_secs_f64(),
            update.lines,
            update.last_line()
        );
    }
    let result = call.await;
    println!("-- {}:\n{}", result.outcome(), result.text());
}
