//! A rough tokenizer for text the parser could not make sense of: splits on shell operators
//! and removes quotes, so the hardline guard still sees `rm -rf /` next to a syntax error.

/// Splits `text` into commands of words; never fails.
pub(crate) fn rough_commands(text: &str) -> Vec<Vec<String>> {
    let mut cmds: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                } else {
                    word.push(c);
                }
                continue;
            }
            Some(_) => {
                match c {
                    '"' => quote = None,
                    '\\' => {
                        if let Some(n) = chars.next() {
                            word.push(n);
                        }
                    }
                    _ => word.push(c),
                }
                continue;
            }
            None => {}
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_word = true;
            }
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    word.push(n);
                    in_word = true;
                }
            }
            ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '\n' | '<' | '>' => {
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    cmds.push(std::mem::take(&mut words));
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    cmds.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            _ => {
                word.push(c);
                in_word = true;
            }
        }
        if cmds.len() > 256 {
            break;
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        cmds.push(words);
    }
    cmds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_unquotes() {
        assert_eq!(
            rough_commands("echo 'a b' && r\"m\" -rf / )"),
            vec![vec!["echo", "a b"], vec!["rm", "-rf", "/"]]
        );
    }
}
