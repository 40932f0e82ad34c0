//! Field readers that take what clients send: a number as a numeric string (`"30"`), a
//! boolean as `"true"`. Many MCP clients and models send every argument as a string; refusing
//! `"timeout": "30"` helps nobody. The errors name the expected kind; the caller adds the
//! field's name (through `serde_path_to_error`).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Any integer, as a number or a numeric string; out-of-range and fractional values saturate
/// or truncate, so a clamp, not a type error, decides what they mean.
pub(crate) fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    let number = match &value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.clone(),
        Some(Value::String(s)) => s
            .trim()
            .parse::<serde_json::Number>()
            .map_err(|_| D::Error::custom(format!("expected an integer, got {s:?}")))?,
        Some(other) => return Err(D::Error::custom(expected("an integer", other))),
    };
    Ok(Some(number.as_i64().unwrap_or_else(|| {
        if number.as_u64().is_some() {
            i64::MAX
        } else {
            number.as_f64().map_or(0, |f| f as i64)
        }
    })))
}

/// A non-negative integer, as a number or a numeric string.
pub(crate) fn uint<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    let fail =
        |shown: &str| D::Error::custom(format!("expected a non-negative integer, got {shown}"));
    match &value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| fail(&n.to_string())),
        Some(Value::String(s)) => s
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| fail(&format!("{s:?}"))),
        Some(other) => Err(D::Error::custom(expected("a non-negative integer", other))),
    }
}

/// [`uint`] for a field with a default of 0.
pub(crate) fn uint_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    uint(d).map(Option::unwrap_or_default)
}

/// An id: a string, or an integer given for one (`"job_id": 3`).
pub(crate) fn id<'de, D: Deserializer<'de>>(d: D) -> Result<crate::result::JobId, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(crate::result::JobId(s)),
        Value::Number(n) if n.is_u64() => Ok(crate::result::JobId(n.to_string())),
        other => Err(D::Error::custom(expected("a string id", &other))),
    }
}

/// `true` / `false`, also as the strings `"true"` / `"false"`.
fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(Value::String(s)) if s.trim() == "true" => Ok(Some(true)),
        Some(Value::String(s)) if s.trim() == "false" => Ok(Some(false)),
        Some(other) => Err(D::Error::custom(expected("true or false", &other))),
    }
}

/// [`boolean`] for a field that defaults to false.
pub(crate) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    boolean(d).map(Option::unwrap_or_default)
}

/// [`boolean`] for a field that defaults to true.
pub(crate) fn flag_default_true<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    boolean(d).map(|b| b.unwrap_or(true))
}

fn expected(what: &str, got: &Value) -> String {
    format!("expected {what}, got {}", json_kind(got))
}

/// What kind of JSON value `value` is, for messages (`an array`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Deserializes `value` into `T` (a request or a method's params), naming the field in the
/// error (`offset: expected a non-negative integer, got -1`).
pub fn parse_params<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // An unknown field's message names it already.
        if path == "." || path.is_empty() || inner.starts_with("unknown field") {
            inner
        } else {
            format!("{path}: {inner}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ArtifactRead, JobInput, JobOutputRequest};
    use serde_json::json;

    #[test]
    fn numbers_and_booleans_may_come_as_strings() {
        let r: JobOutputRequest =
            parse_params(json!({"job_id": 3, "wait_ms": " 250 ", "mode": "all"})).unwrap();
        assert_eq!((r.job_id.as_str(), r.wait_ms), ("3", 250));
        let i: JobInput =
            parse_params(json!({"job_id": "1", "enter": "false", "eof": "true"})).unwrap();
        assert!(!i.enter && i.eof);
        let i: JobInput = parse_params(json!({"job_id": "1"})).unwrap();
        assert!(i.enter && !i.eof);
    }

    #[test]
    fn errors_name_the_field_and_what_came() {
        let e = parse_params::<ArtifactRead>(json!({"id": "1", "offset": -1})).unwrap_err();
        assert_eq!(e, "offset: expected a non-negative integer, got -1");
        let e = parse_params::<ArtifactRead>(json!({"id": "1", "limit": "lots"})).unwrap_err();
        assert_eq!(e, "limit: expected a non-negative integer, got \"lots\"");
        let e = parse_params::<ArtifactRead>(json!({"id": "1", "context": [1]})).unwrap_err();
        assert_eq!(e, "context: expected a non-negative integer, got an array");
        let e = parse_params::<JobInput>(json!({"job_id": {"a": 1}})).unwrap_err();
        assert_eq!(e, "job_id: expected a string id, got an object");
        let e = parse_params::<ArtifactRead>(json!({"id": "1", "bogus": 1})).unwrap_err();
        assert!(e.starts_with("unknown field `bogus`"), "{e}");
    }
}
