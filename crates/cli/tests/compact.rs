//! The compact view (contract §3, issue 32) where users meet it: `run` and `serve` (one-shot,
//! session), as root and as an unprivileged user — passing tests folded with a note saying how
//! to see them, the raw output kept as an artifact `agent-exec artifact` prints, and
//! `--view raw` / `view: "raw"` showing the output as it is.

mod common;

use common::{World, in_every_server_mode, serve_with, text, users};
use serde_json::json;

/// A test runner's report: 240 passing tests around one failure.
const REPORT: &str = r#"echo 'running 241 tests'; for i in $(seq 1 120); do echo "test tests::case_$i ... ok"; done; echo 'test tests::totals ... FAILED'; for i in $(seq 121 240); do echo "test tests::case_$i ... ok"; done; echo "thread 'tests::totals' panicked at src/lib.rs:42:9:"; echo 'test result: FAILED. 240 passed; 1 failed; 0 ignored'"#;

fn assert_compact(result: &serde_json::Value, who: &str) {
    let shown = text(result);
    assert!(
        shown.contains("lines of passing tests folded ...]"),
        "{who}: {shown}"
    );
    for needed in [
        "test tests::totals ... FAILED\n",
        "thread 'tests::totals' panicked at src/lib.rs:42:9:\n",
        "test result: FAILED. 240 passed; 1 failed; 0 ignored",
        "view: \"raw\"",
    ] {
        assert!(shown.contains(needed), "{who}: {needed:?} not in {shown}");
    }
    assert!(!shown.contains("case_77 ... ok"), "{who}: {shown}");
    assert!(
        result["details"]["folded"]["lines"].as_u64().unwrap_or(0) >= 238,
        "{who}: {result}"
    );
}

#[test]
fn run_and_serve_fold_passing_tests_and_raw_shows_them_as_the_user_and_as_root() {
    for user in users() {
        let w = World::new(&user);
        let who = format!("{:?}", user.name);
        let compact = w.run(&[], REPORT);
        assert_compact(&compact, &who);
        // The raw output, read back as the notice says.
        let id = compact["details"]["folded"]["artifact_id"]
            .as_str()
            .expect("an artifact id")
            .to_owned();
        let raw = common::bounded(w.command(&["artifact", &id]));
        let raw = String::from_utf8_lossy(&raw);
        assert!(raw.contains("test tests::case_77 ... ok\n"), "{who}: {raw}");
        assert_eq!(raw.lines().count(), 244, "{who}");
        // `--view raw`: every line, nothing folded.
        let plain = w.run(&["--view", "raw"], REPORT);
        assert!(
            text(&plain).contains("test tests::case_77 ... ok\n"),
            "{who}"
        );
        assert!(!text(&plain).contains("folded"), "{who}");
        assert!(plain["details"].get("folded").is_none(), "{who}: {plain}");
        // serve: one-shot and session, compact by default; `view: "raw"` as asked.
        let mut requests = in_every_server_mode(REPORT)[..2].to_vec();
        requests.push(common::request(
            5,
            "exec",
            &json!({"command": REPORT, "view": "raw"}),
        ));
        requests.push(common::request(
            6,
            "exec",
            &json!({"command": "echo hi", "view": "folded"}),
        ));
        let answers = serve_with(w.command(&["serve"]), &requests);
        for id in [1, 2] {
            assert_compact(&answers[&id]["result"], &format!("{who} serve {id}"));
        }
        let raw = &answers[&5]["result"];
        assert!(
            text(raw).contains("test tests::case_77 ... ok\n"),
            "{who}: {raw}"
        );
        // A view that does not exist is refused, naming the field and what it takes.
        let bad = answers[&6].to_string();
        assert!(
            bad.contains("view") && bad.contains("compact"),
            "{who}: {bad}"
        );
    }
}
