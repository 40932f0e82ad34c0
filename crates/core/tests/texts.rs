//! Every kind of text a model reads, pinned: a change of wording shows up here, in one review.

mod support;

use std::time::Duration;

use agent_exec_core::{
    CancelToken, JobInput, JobOutputRequest, METHODS, Method, Request, Tool, Vocabulary,
};
use support::tool_with;

/// Texts with the parts that vary between runs (temp paths, artifact ids, times) masked.
fn masked(tool: &Tool, text: &str) -> String {
    let workdir = tool.config().workdir.display().to_string();
    let text = text.replace(&workdir, "<workdir>");
    let artifact = regex_lite(&text, "artifact://", |c| {
        c.is_ascii_alphanumeric() || c == '-'
    });
    let artifact = regex_lite(&artifact, "agent-exec artifact ", |c| {
        c.is_ascii_alphanumeric() || c == '-'
    });
    let running = regex_lite(&artifact, "running for ", |c| {
        c.is_ascii_digit() || c == '.'
    });
    // A producer stopped early got as far as the scheduler let it: `of N+` varies.
    match running.find("+ (") {
        Some(plus) => {
            let start = running[..plus].rfind(' ').map_or(0, |i| i + 1);
            format!("{}…{}", &running[..start], &running[plus..])
        }
        None => running,
    }
}

/// Replaces what follows each `marker` while `keep` holds with `…`.
fn regex_lite(text: &str, marker: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(marker) {
        out.push_str(&rest[..i + marker.len()]);
        rest = rest[i + marker.len()..].trim_start_matches(&keep);
        out.push('…');
    }
    out.push_str(rest);
    out
}

fn exec(tool: &Tool, request: &Request) -> String {
    masked(tool, tool.execute(request, &CancelToken::new()).text())
}

#[test]
fn texts_of_calls() {
    let (_dir, tool) = tool_with(|c| c.max_bytes = 400);
    let mut texts = Vec::new();
    let mut case = |name: &str, request: Request| {
        texts.push(format!("## {name}\n{}", exec(&tool, &request)));
    };
    case("success", Request::shell("echo hi"));
    case("no output", Request::shell("true"));
    case("exit code", Request::shell("echo out; exit 7"));
    case("signal", Request::shell("kill -KILL $$"));
    case("timeout", {
        let mut r = Request::shell("echo started; sleep 30");
        r.timeout = Some(1);
        r
    });
    case("tail by bytes", Request::shell("seq 1 1000"));
    case("tail by lines", Request::shell("seq 1 10").tail(1));
    case(
        "head from the command",
        Request::shell("seq 1 10 | head -n 3"),
    );
    case("head and tail", Request::shell("seq 1 10").head(2).tail(2));
    case("no lines shown", Request::shell("seq 1 5").head(0));
    case(
        "smart window",
        Request::shell("seq 1 300; echo 'error: the one line that matters'; seq 301 600"),
    );
    case(
        "smart window with a summary of what was left out",
        Request::shell(
            "for i in $(seq 1 80); do echo \"cc -O2 -c src/module_$i.c\"; echo \"ERROR client $i disconnected\"; done; echo 'fatal: disk full'; seq 1 60",
        ),
    );
    case("stopped producer", Request::shell("yes | head -n 2"));
    case("sigpipe", Request::shell("exit 141"));
    case(
        "background process stopped",
        Request::shell("sleep 300 & echo started"),
    );
    case("spawn failed", Request::program("/nonexistent/tool", ["x"]));
    case("blocked shell", Request::shell("sudo rm -rf /"));
    case("blocked argv", Request::program("bash", ["-c", "rm -rf /"]));
    case(
        "needs approval",
        Request::shell("$CMD -rf x").env("CMD", "true"),
    );
    case("invalid", Request::default());
    case("invalid cwd", Request::shell("ls").cwd("no/such/dir"));
    insta::assert_snapshot!(texts.join("\n\n"));
}

#[test]
fn texts_of_jobs_and_sessions() {
    let (_dir, tool) = tool_with(|_| {});
    let mut texts = Vec::new();
    let started = tool.execute(
        &Request::shell("read line; echo got $line; exit 3").in_background(),
        &CancelToken::new(),
    );
    let job = started.details.job_id.clone().unwrap();
    texts.push(format!("## started\n{}", masked(&tool, started.text())));
    let sent = tool.job_input(&JobInput::line(job.clone(), "x"));
    texts.push(format!("## input\n{}", masked(&tool, sent.text())));
    let mut read = String::new();
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(50));
        let r = tool.job_output(&JobOutputRequest::new(job.clone()).all());
        if r.details.exit_code.is_some() {
            read = masked(&tool, r.text());
            break;
        }
    }
    texts.push(format!("## output after exit\n{read}"));
    let one = tool.job_input(&JobInput::line("nope", "x"));
    texts.push(format!("## unknown job\n{}", masked(&tool, one.text())));
    let sleeper = tool.execute(
        &Request::shell("sleep 300").in_background(),
        &CancelToken::new(),
    );
    let id = sleeper.details.job_id.clone().unwrap();
    texts.push(format!(
        "## killed\n{}",
        masked(&tool, tool.job_kill(&id).text())
    ));
    texts.push(format!(
        "## killed again\n{}",
        masked(&tool, tool.job_kill(&id).text())
    ));
    let one_byte = tool.execute(
        &Request::shell("cat >/dev/null").in_background(),
        &CancelToken::new(),
    );
    let id = one_byte.details.job_id.clone().unwrap();
    let sent = tool.job_input(&JobInput::line(id.clone(), "x").without_enter().then_eof());
    texts.push(format!(
        "## one byte and eof\n{}",
        masked(&tool, sent.text())
    ));
    tool.execute(
        &Request::shell("cd /tmp").in_session("s"),
        &CancelToken::new(),
    );
    let ended = tool.execute(
        &Request::shell("exit 4").in_session("s"),
        &CancelToken::new(),
    );
    texts.push(format!("## session ended\n{}", masked(&tool, ended.text())));
    let again = tool.execute(&Request::shell("pwd").in_session("s"), &CancelToken::new());
    texts.push(format!(
        "## session restarted\n{}",
        masked(&tool, again.text())
    ));
    texts.push(format!(
        "## session closed\n{}",
        masked(&tool, tool.session_close("s").text())
    ));
    texts.push(format!(
        "## no session\n{}",
        masked(&tool, tool.session_close("s").text())
    ));
    tool.shutdown();
    insta::assert_snapshot!(texts.join("\n\n"));
}

#[test]
fn texts_of_pty_calls() {
    let (_dir, tool) = tool_with(|c| {
        c.max_bytes = 400;
        c.prompt_idle = Some(Duration::from_secs(1));
    });
    let mut texts = Vec::new();
    let mut case = |name: &str, request: Request| {
        texts.push(format!("## {name}\n{}", exec(&tool, &request)));
    };
    case(
        "progress bar and colours",
        Request::shell(r"printf '10%%\r50%%\r\033[32m100%%\033[0m done\n'").with_pty(),
    );
    case(
        "a cursor-addressed screen",
        Request::shell(r"printf 'old\n\033[2J\033[H\033[2;3Hsecond row\033[1;1Htop'").with_pty(),
    );
    case("waiting at a prompt", {
        let mut r = Request::shell("echo Installing; read -p 'Continue? [y/N] ' x").with_pty();
        r.timeout = Some(600);
        r
    });
    case("waiting with nothing shown", {
        let mut r = Request::shell("read x").with_pty();
        r.timeout = Some(600);
        r
    });
    let started = tool.execute(
        &Request::shell("printf 'Password: '; read -r x; echo ok").in_background(),
        &CancelToken::new(),
    );
    let job = started.details.job_id.clone().unwrap();
    let mut waiting = String::from("(the job never said it waited)");
    for _ in 0..300 {
        std::thread::sleep(Duration::from_millis(100));
        let r = tool.job_output(&JobOutputRequest::new(job.clone()).all());
        if r.text().contains("waiting for input") {
            waiting = masked(&tool, r.text());
            break;
        }
    }
    texts.push(format!("## job waiting for input\n{waiting}"));
    tool.shutdown();
    insta::assert_snapshot!(texts.join("\n\n"));
}

/// A test runner's report: 240 passing tests around one failure, as `cargo test` prints it.
const TEST_REPORT: &str = r#"echo 'running 241 tests'
for i in $(seq 1 120); do echo "test tests::case_$i ... ok"; done
echo 'test tests::totals ... FAILED'
for i in $(seq 121 240); do echo "test tests::case_$i ... ok"; done
printf '\nfailures:\n\n---- tests::totals stdout ----\n'
echo "thread 'tests::totals' panicked at src/lib.rs:42:9:"
echo 'assertion `left == right` failed'
printf '  left: 1205\n right: 1250\n\n'
echo 'test result: FAILED. 240 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out'
exit 101"#;

#[test]
fn texts_of_compact_views() {
    let (_dir, tool) = tool_with(|_| {});
    let compact = tool.execute(&Request::shell(TEST_REPORT), &CancelToken::new());
    insta::assert_snapshot!(masked(&tool, compact.text()));
    // What was folded is in the details, with the artifact that holds the raw output.
    let raw_output = std::process::Command::new("bash")
        .args(["-c", TEST_REPORT])
        .output()
        .expect("bash runs")
        .stdout;
    let folded = compact
        .details
        .folded
        .clone()
        .expect("passing tests are folded");
    assert_eq!(folded.lines, 239, "{folded:?}");
    let id = folded.artifact_id.expect("the raw output is kept");
    let read = tool.artifact_read(&agent_exec_core::ArtifactRead::new(id.0.clone()));
    assert!(read.text().contains("test tests::case_77 ... ok"));
    let (_, mut stored) = tool
        .artifacts()
        .expect("a store")
        .open_artifact(&id.0)
        .expect("the artifact exists");
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut stored, &mut bytes).expect("readable");
    assert_eq!(bytes, raw_output);
    // `view: "raw"`: the output as it is, nothing folded, no artifact.
    let raw = tool.execute(&Request::shell(TEST_REPORT).raw_view(), &CancelToken::new());
    let expected = format!(
        "{}\n\nCommand exited with code 101",
        String::from_utf8_lossy(&raw_output).trim_end()
    );
    assert_eq!(raw.text(), expected);
    assert!(raw.details.folded.is_none());
    assert!(raw.details.truncation.is_none());
    // Lines asked for are shown as they are, compact or not.
    let tail = tool.execute(&Request::shell(TEST_REPORT).tail(300), &CancelToken::new());
    assert_eq!(tail.text(), expected);
}

/// A listing too long for the window, folded by directory: every path shown whole, the folded
/// directories counted, the notice one line however many ranges are shown.
#[test]
fn a_long_listing_is_folded_by_directory() {
    let (_dir, tool) = tool_with(|_| {});
    // 90 directories: 60 of 6 files, 30 of 150 (about twice the window in all).
    let tree = tempfile::tempdir().expect("a temporary directory");
    for d in 10..100 {
        let dir = tree.path().join(format!("area_{d}"));
        std::fs::create_dir(&dir).expect("a directory");
        for f in 1..=(if d % 3 == 0 { 150 } else { 6 }) {
            std::fs::write(dir.join(format!("module_{f}.ts")), "").expect("a file");
        }
    }
    let result = tool.execute(
        &Request::shell("find . -name '*.ts'").cwd(tree.path().display().to_string()),
        &CancelToken::new(),
    );
    let text = result.text();
    assert!(text.contains("./area_10/module_6.ts\n"), "{text}");
    assert!(text.contains("[... 150 entries in ./area_"), "{text}");
    assert!(text.contains(" ranges in all) …"), "{text}");
    let notice = text
        .lines()
        .find(|l| l.starts_with("[Showing lines"))
        .expect("a notice");
    assert!(notice.len() < 300, "{notice}");
    let truncation = result.details.truncation.as_ref().expect("cut to fit");
    assert!(truncation.output_bytes <= 51_200);
    assert!(result.details.folded.is_some());
}

/// Served as MCP tools, every text that tells the model how to go on names the tools it has
/// (`bash_output`), never `serve`'s methods (`job_output`).
#[test]
fn texts_name_the_tools_in_the_clients_vocabulary() {
    let (_dir, tool) = tool_with(|c| {
        c.vocabulary = Vocabulary::McpTools;
        c.prompt_idle = Some(Duration::from_secs(1));
    });
    let run = |request: Request| tool.execute(&request, &CancelToken::new());
    let started = run(Request::shell("sleep 300").in_background());
    let waiting = run({
        let mut r = Request::shell("read -p 'Continue? [y/N] ' x").with_pty();
        r.timeout = Some(600);
        r
    });
    let yielded = run(Request::shell("sleep 300")
        .in_session("s")
        .yield_after(Duration::from_millis(200)));
    let busy = run(Request::shell("true").in_session("s"));
    let folded = run(Request::shell(TEST_REPORT));
    let unknown = tool.job_kill("nope");
    let texts = [
        ("a background job", started.text(), "bash_output"),
        ("a one-shot call at a prompt", waiting.text(), "bash_input"),
        ("a yielded call", yielded.text(), "bash_kill {"),
        ("a busy session", busy.text(), "bash_output {"),
        ("a folded view", folded.text(), "read_artifact"),
        ("an unknown job", unknown.text(), "no job"),
    ];
    for (what, text, named) in texts {
        assert!(text.contains(named), "{what}: {text}");
        // (`exec` is a word of other texts, and no text tells the model to call it.)
        for info in METHODS.iter().filter(|m| m.method != Method::Exec) {
            assert!(
                !text.contains(info.name),
                "{what} names {}: {text}",
                info.name
            );
        }
    }
    tool.shutdown();
}
