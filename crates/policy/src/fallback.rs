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
            // `{a,b}` is a brace expansion (part of a word); `{ ` opens a group.
            '{' if chars.peek().is_some_and(|n| !n.is_whitespace()) => {
                word.push(c);
                in_word = true;
            }
            '}' if word.contains('{') => word.push(c),
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
        if cmds.len() > 20_000 {
            break;
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        cmds.push(words);
    }
    cmds.into_iter()
        .map(|c| c.iter().flat_map(|w| expand_braces(w, 0)).collect())
        .collect()
}

/// Comma brace expansion of one word (`{rm,-rf,/}` → `rm -rf /`), bounded.
fn expand_braces(word: &str, depth: u32) -> Vec<String> {
    let Some(open) = word.find('{') else {
        return vec![word.to_owned()];
    };
    let mut level = 0;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, c) in word.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '{' => level += 1,
            '}' => {
                level -= 1;
                if level == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if level == 1 => commas.push(i),
            _ => {}
        }
    }
    let (Some(close), false) = (close, commas.is_empty()) else {
        return vec![word.to_owned()];
    };
    if depth > 4 {
        return vec![word.to_owned()];
    }
    let (prefix, suffix) = (&word[..open], &word[close + 1..]);
    let mut out = Vec::new();
    let mut from = open + 1;
    for end in commas.into_iter().chain(std::iter::once(close)) {
        let alt = &word[from..end];
        out.extend(expand_braces(&format!("{prefix}{alt}{suffix}"), depth + 1));
        from = end + 1;
        if out.len() > 64 {
            break;
        }
    }
    out
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
        assert_eq!(rough_commands("{rm,-rf,/}"), vec![vec!["rm", "-rf", "/"]]);
        assert_eq!(rough_commands("{ ls; }"), vec![vec!["ls"]]);
    }
}
