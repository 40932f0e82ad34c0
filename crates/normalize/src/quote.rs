//! Quoting words for a POSIX shell.

/// One word, quoted for a POSIX shell when it needs to be (single quotes; a `'` inside as
/// `'\''`): the one quoting of every command line agent-exec builds from words.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
    if plain {
        word.to_owned()
    } else {
        single_quoted(word)
    }
}

/// `word` in single quotes, whatever it holds.
pub fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}
