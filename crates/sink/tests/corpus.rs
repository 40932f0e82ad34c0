//! Real tool output (see `tests/corpus/README.md`): at the default budget, fed in pipe-sized
//! chunks, the `smart` window keeps every needle of at least 95 % of the outputs, never loses a
//! needle a plain tail of the same budget keeps, and stays within the budget.

mod common;

use agent_exec_sink::Direction;
use common::corpus::{cases, view_of};

const BUDGET: usize = 51_200;

#[test]
fn smart_keeps_the_needles_and_is_never_worse_than_the_tail() {
    let cases = cases();
    assert!(cases.len() >= 40, "the corpus has {} logs", cases.len());
    for chunk in [4096, 65_536] {
        let mut missed = Vec::new();
        let mut worse = Vec::new();
        for case in &cases {
            assert!(case.needles() > 0, "{} has no needle", case.name);
            let smart = view_of(&case.data, Direction::Smart, BUDGET, chunk);
            let tail = view_of(&case.data, Direction::Tail, BUDGET, chunk);
            assert!(smart.output_bytes <= BUDGET as u64, "{}", case.name);
            let kept = case.each_kept(&smart);
            if kept.iter().any(|k| !k) {
                missed.push(format!("{}: {kept:?}", case.name));
            }
            let by_tail = case.each_kept(&tail);
            if kept.iter().zip(&by_tail).any(|(s, t)| *t && !s) {
                worse.push(case.name.clone());
            }
        }
        assert!(
            worse.is_empty(),
            "chunk {chunk}: smart lost what tail kept: {worse:?}"
        );
        assert!(
            missed.len() * 100 <= cases.len() * 5,
            "chunk {chunk}: outputs with a needle lost by smart: {missed:?}"
        );
    }
}
