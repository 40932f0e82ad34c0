//! The tree-sitter parser, built once per thread.

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Parses `text` as bash; `None` when no parser is available or parsing gave up.
///
/// The parser sees every non-ASCII byte as `x`: tree-sitter-bash 0.25's scanner hands code
/// points to `isdigit` and its kin, undefined past 255 — random Unicode crashed the process
/// (SIGSEGV in `scan`, found by the property tests one run in ten). Bash itself reads those
/// bytes as word characters, as it reads `x`, and byte offsets stay the same, so the tree
/// matches `text` (its words are sliced from `text` with checked ranges).
pub(crate) fn parse(text: &str) -> Option<Tree> {
    let ascii: String;
    let text = if text.is_ascii() {
        text
    } else {
        ascii = text
            .bytes()
            .map(|b| if b.is_ascii() { char::from(b) } else { 'x' })
            .collect();
        &ascii
    };
    PARSER.with(|cell| {
        let mut guard = cell.try_borrow_mut().ok()?;
        let parser = guard.as_mut()?;
        parser.parse(text, None)
    })
}
