//! Property tests of `normalize`.

use agent_exec_normalize::{Limit, apply_head_tail, is_diff_command, normalize};
use proptest::prelude::*;

/// Complete commands: they parse and end outside quotes, comments and heredocs.
fn complete_command() -> impl Strategy<Value = String> {
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
    ]);
    let stage = prop::collection::vec(word, 1..4).prop_map(|w| w.join(" "));
    let pipeline = prop::collection::vec(stage, 1..3).prop_map(|s| s.join(" | "));
    let heredoc = Just("cat <<'EOF' | grep x\nbody | head -n 2\nEOF\n".to_owned());
    let list = prop::collection::vec(
        (
            pipeline,
            prop::sample::select(vec!["; ", " && ", " || ", "\n"]),
        ),
        1..3,
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
    (prop::option::of(heredoc), list, "[ \t]{0,2}")
        .prop_map(|(h, l, pad)| format!("{pad}{}{l}", h.unwrap_or_default()))
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
    fn trailing_head_is_extracted(c in complete_command(), n in 1usize..100_000, tail in any::<bool>(), short in any::<bool>()) {
        let (name, limit) = if tail { ("tail", Limit::Tail(n)) } else { ("head", Limit::Head(n)) };
        let stage = if short { format!("{name} -{n}") } else { format!("{name} -n {n}") };
        let r = normalize(&format!("{c} | {stage}"));
        prop_assert_eq!(r.command, c.trim().to_owned());
        prop_assert_eq!(r.limit, Some(limit));
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
