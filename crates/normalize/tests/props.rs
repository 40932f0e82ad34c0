//! Property tests of `normalize`.

use agent_exec_normalize::{Limit, apply_head_tail, is_diff_command, normalize};
use proptest::prelude::*;

/// Simple pipelines: words in stages joined by `|`, all on one line.
fn simple_pipeline() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "ls",
        "-la",
        "'a b | head -n 3'",
        "\"x | y\"",
        "$(echo hi | wc -l)",
        "`date | head -1`",
        "a\\|b",
        "grep",
        "foo",
        "\"$HOME\"",
        "$(printf '%s' \")\")",
        "{a,b}",
        "x=1",
        "2>&1",
        ">/dev/null",
        "'#'",
        "a#b",
        "'; done'",
        "\"&& }\"",
    ]);
    let stage = prop::collection::vec(word, 1..4).prop_map(|w| w.join(" "));
    prop::collection::vec(stage, 1..3).prop_map(|s| s.join(" | "))
}

/// A list of at least `min` pipelines (`;`, `&&`, `||`, `&`, newlines), a heredoc maybe first.
fn list_of(min: usize) -> impl Strategy<Value = String> {
    let heredoc = Just("cat <<'EOF' | grep x\nbody | head -n 2; done\nEOF\n".to_owned());
    let list = prop::collection::vec(
        (
            simple_pipeline(),
            prop::sample::select(vec!["; ", " && ", " || ", " & ", "\n"]),
        ),
        min..min + 2,
    )
    .prop_map(|parts| {
        let mut s = String::new();
        for (i, (p, sep)) in parts.iter().enumerate() {
            if i > 0 {
                s.push_str(sep);
            }
            s.push_str(p);
        }
        s
    });
    (prop::option::of(heredoc), list).prop_map(|(h, l)| format!("{}{l}", h.unwrap_or_default()))
}

/// One stage that is a compound command holding a list: it is still one stage.
fn compound_stage() -> impl Strategy<Value = String> {
    (list_of(1), list_of(1), 0..8usize).prop_map(|(a, b, form)| match form {
        0 => format!("{{ {a}\n}}"),
        1 => format!("( {a}\n)"),
        2 => format!("for x in a b; do {a}\ndone"),
        3 => format!("while {a}\ndo {b}\ndone"),
        4 => format!("if {a}\nthen {b}\nelse {a}\nfi"),
        5 => format!("case $x in a) {a}\n;; b|c) {b}\n;; esac"),
        6 => format!("until {a}\ndo {{ {b}\n}}\ndone 2>&1"),
        _ => format!("! {{ {a}\n}} >/dev/null"),
    })
}

/// Commands that are one pipeline: simple stages and compound ones, blanks around.
fn one_pipeline() -> impl Strategy<Value = String> {
    let stage = prop_oneof![2 => simple_pipeline(), 1 => compound_stage()];
    (prop::collection::vec(stage, 1..3), "[ \t]{0,2}")
        .prop_map(|(stages, pad)| format!("{pad}{}", stages.join(" | ")))
}

/// Complete commands: they parse and end outside quotes, comments and heredocs.
fn complete_command() -> impl Strategy<Value = String> {
    prop_oneof![one_pipeline(), list_of(1)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_unchanged_is_identical(s in any::<String>()) {
        let n = normalize(&s);
        if n.limit.is_none() {
            prop_assert_eq!(n.command, s.clone());
        }
        let _ = is_diff_command(&s);
        let _ = apply_head_tail(&s, Some(3), Some(2));
    }

    #[test]
    fn never_panics_on_shell_shaped_noise(s in "[a-z |&;'\"`$()<>#\\\\\n\t-]{0,40}") {
        let n = normalize(&s);
        if n.limit.is_none() {
            prop_assert_eq!(n.command, s);
        }
    }

    #[test]
    fn trailing_head_of_one_pipeline_is_extracted(c in one_pipeline(), n in 1usize..100_000, tail in any::<bool>(), short in any::<bool>()) {
        let (name, limit) = if tail { ("tail", Limit::Tail(n)) } else { ("head", Limit::Head(n)) };
        let stage = if short { format!("{name} -{n}") } else { format!("{name} -n {n}") };
        let r = normalize(&format!("{c} | {stage}"));
        prop_assert_eq!(r.command, c.trim().to_owned());
        prop_assert_eq!(r.limit, Some(limit));
    }

    #[test]
    fn trailing_head_of_a_list_is_left_in_place(c in list_of(2), n in 1usize..100_000, tail in any::<bool>()) {
        let name = if tail { "tail" } else { "head" };
        let command = format!("{c} | {name} -n {n}");
        let r = normalize(&command);
        prop_assert_eq!(r.command, command);
        prop_assert_eq!(r.limit, None);
    }

    #[test]
    fn complete_commands_alone_are_unchanged(c in complete_command()) {
        let r = normalize(&c);
        if r.limit.is_none() {
            prop_assert_eq!(r.command, c);
        }
    }

    #[test]
    fn head_is_a_prefix_and_tail_a_suffix(lines in prop::collection::vec("[a-z]{0,5}", 0..30), n in 1usize..40) {
        let text = lines.join("\n");
        let head = apply_head_tail(&text, Some(n), None);
        prop_assert!(text.starts_with(&head));
        prop_assert!(head.matches('\n').count() <= n);
        let tail = apply_head_tail(&text, None, Some(n));
        prop_assert!(text.ends_with(&tail));
        prop_assert!(tail.matches('\n').count() <= n);
        let both = apply_head_tail(&text, Some(n), Some(n));
        prop_assert_eq!(both, head);
    }
}
