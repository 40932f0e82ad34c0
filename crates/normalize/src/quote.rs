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

/// A leading `NAME=value` word of a command line, kept an assignment: `NAME=` and the value
/// quoted. `None` when the word is not an assignment.
pub fn assignment_word(word: &str) -> Option<String> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| {
        if value.is_empty() {
            format!("{name}=")
        } else {
            format!("{name}={}", shell_word(value))
        }
    })
}
