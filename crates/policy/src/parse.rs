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
pub(crate) fn parse(text: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut guard = cell.try_borrow_mut().ok()?;
        let parser = guard.as_mut()?;
        parser.parse(text, None)
    })
}
