//! The `id` of a request line too long to read whole (`--max-line-bytes`), from the start and
//! the end the reader kept of it: the error that answers it carries the id, so a client waiting
//! for that id hears back. Clients put the id first (the Python SDK) or last (the TypeScript
//! SDK: `…,"jsonrpc":"2.0","id":5}`).
//!
//! Hand-written: no JSON parser reads a document cut short, and this needs only to follow
//! strings and nesting until the top-level `id` member. It never guesses: an id nested in the
//! params, or one it cannot see whole, is not taken.

use serde_json::Value;

/// The request's top-level `id` (a string, a number or null), when the line's `head` or its
/// `tail` shows it whole.
pub(crate) fn id_of_cut_line(head: &[u8], tail: &[u8]) -> Option<Value> {
    // The last member wins where a key repeats (as serde_json reads it): the end first.
    id_at_end(tail).or_else(|| id_in_head(head))
}

/// The value of the last top-level `id` member among the members `head` holds whole.
fn id_in_head(head: &[u8]) -> Option<Value> {
    let mut found = None;
    let mut at = skip_space(head, 0);
    if head.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_space(head, at);
        let Some(key_end) = string_end(head, at) else {
            return found;
        };
        let key = &head[at..key_end];
        at = skip_space(head, key_end);
        if head.get(at) != Some(&b':') {
            return found;
        }
        at = skip_space(head, at + 1);
        if key == b"\"id\"" {
            match id_value(&head[at..]) {
                Some(id) => found = Some(id),
                None => return found,
            }
        }
        let Some(end) = value_end(head, at) else {
            return found;
        };
        at = skip_space(head, end);
        match head.get(at) {
            Some(b',') => at += 1,
            _ => return found,
        }
    }
}

/// The value of an `id` member that is the object's last: `tail` ends with `"id": VALUE }`,
/// the member preceded by `,` or `{`.
fn id_at_end(tail: &[u8]) -> Option<Value> {
    let end = tail.iter().rposition(|b| !b.is_ascii_whitespace())?;
    if tail[end] != b'}' {
        return None;
    }
    let body = &tail[..end];
    let key = body.windows(4).rposition(|w| w == b"\"id\"")?;
    let before = body[..key].iter().rposition(|b| !b.is_ascii_whitespace())?;
    if !matches!(body[before], b',' | b'{') {
        return None;
    }
    let colon = skip_space(body, key + 4);
    if body.get(colon) != Some(&b':') {
        return None;
    }
    // The value must be all that is left before the closing brace.
    let value = body[skip_space(body, colon + 1)..].trim_ascii_end();
    as_id(serde_json::from_slice(value).ok()?)
}

/// A string, number or null at the start of `bytes`, followed by something (a number cut
/// where the line was cut is not the id).
fn id_value(bytes: &[u8]) -> Option<Value> {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    let id = values.next()?.ok()?;
    if values.byte_offset() >= bytes.len() {
        return None;
    }
    as_id(id)
}

fn as_id(value: Value) -> Option<Value> {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Null).then_some(value)
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// Where the string starting at `at` ends (after its closing quote).
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Where the value starting at `at` ends: strings and nesting followed, so a `,` or `}`
/// inside it does not end it.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                i = string_end(bytes, i)?;
                if depth == 0 {
                    return Some(i);
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return Some(i);
                }
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// `message` serialized, cut as the reader cuts it: its first `max` bytes and its last
    /// `tail` bytes after those.
    fn cut(message: &Value, max: usize, tail: usize) -> (Vec<u8>, Vec<u8>) {
        let text = message.to_string().into_bytes();
        let head = text[..max.min(text.len())].to_vec();
        let rest = &text[head.len()..];
        (head, rest[rest.len().saturating_sub(tail)..].to_vec())
    }

    #[test]
    fn the_id_is_read_first_or_last_never_from_inside_the_params() {
        let big = "x".repeat(5000);
        let first =
            json!({"jsonrpc": "2.0", "id": 7, "method": "exec", "params": {"command": big}});
        let (head, tail) = cut(&first, 100, 1024);
        assert_eq!(id_of_cut_line(&head, &tail), Some(json!(7)));
        // The TypeScript SDK's order: method, params, jsonrpc, id.
        let text = format!(
            r#"{{"method":"tools/call","params":{{"arguments":{{"command":"{big}"}}}},"jsonrpc":"2.0","id":"req-9"}}"#
        );
        let (head, tail) = (
            &text.as_bytes()[..100],
            &text.as_bytes()[text.len() - 1024..],
        );
        assert_eq!(id_of_cut_line(head, tail), Some(json!("req-9")));
        // An id inside the params is not the request's.
        let text = format!(r#"{{"method":"exec","params":{{"command":"{big}","id":3}}}}"#);
        let (head, tail) = (
            &text.as_bytes()[..100],
            &text.as_bytes()[text.len() - 1024..],
        );
        assert_eq!(id_of_cut_line(head, tail), None);
        let text = format!(r#"{{"params":{{"x":{{"id":4}}}},"method":"exec","c":"{big}"}}"#);
        let (head, tail) = (
            &text.as_bytes()[..100],
            &text.as_bytes()[text.len() - 1024..],
        );
        assert_eq!(id_of_cut_line(head, tail), None);
    }

    fn id_strategy() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(Value::from),
            "[a-z0-9\"\\\\ ,:{}]{0,12}".prop_map(Value::from),
            Just(Value::Null),
        ]
    }

    proptest! {
        /// Wherever the id member is and however the line is cut, what is found is the
        /// request's own id; and it is found when its member lies whole in the head, or is
        /// the last member and lies whole in the tail.
        #[test]
        fn a_found_id_is_the_request_s_own(
            id in id_strategy(),
            decoy in id_strategy(),
            filler in "[a-z\"\\\\{}\\[\\],: ]{0,300}",
            id_first in any::<bool>(),
            max in 0usize..400,
            tail in 0usize..400,
        ) {
            let params = json!({"id": decoy, "text": filler, "nested": {"id": decoy}});
            let text = if id_first {
                json!({"id": id, "method": "exec", "params": params}).to_string()
            } else {
                format!(r#"{{"method":"exec","params":{params},"jsonrpc":"2.0","id":{id}}}"#)
            };
            let message: Value = serde_json::from_str(&text).unwrap();
            let bytes = text.as_bytes();
            let head = &bytes[..max.min(bytes.len())];
            let rest = &bytes[head.len()..];
            let kept_tail = &rest[rest.len().saturating_sub(tail)..];
            let found = id_of_cut_line(head, kept_tail);
            if let Some(found) = &found {
                prop_assert_eq!(found, &message["id"]);
            }
            let member = format!(r#""id":{id}"#);
            let in_head = id_first && head.len() > format!("{{{member}").len();
            let in_tail = !id_first && kept_tail.len() >= member.len() + 2;
            if in_head || in_tail {
                prop_assert_eq!(found, Some(message["id"].clone()));
            }
        }
    }
}
