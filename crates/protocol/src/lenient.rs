//! Field readers that take what clients send: a number as a numeric string (`"30"`) or as an
//! integral float (`5.0`, which JSON Schema counts an integer), a boolean as `"true"`. Many MCP
//! clients and models send every argument as a string; refusing `"timeout": "30"` helps nobody.
//!
//! And what strict callers send: a strict converter (OpenAI's strict mode, LangChain's
//! `strict=True`) makes every property required, so the model fills the ones it does not mean
//! with `null`, `""` or `0`. Each of those reads as absent where it can mean nothing else (an
//! empty session name, a timeout of 0, a zero-line head), so such a call always succeeds.
//!
//! The errors name the expected kind; the caller adds the field's name (through
//! `serde_path_to_error`).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};
use serde_json::Value;

/// Any integer, as a number or a numeric string; out-of-range and fractional values saturate
/// or truncate, so a clamp, not a type error, decides what they mean.
fn int_of(value: Option<&Value>) -> Result<Option<i64>, String> {
    let number = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.clone(),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse::<serde_json::Number>()
            .map_err(|_| format!("expected an integer, got {s:?}"))?,
        Some(other) => return Err(expected("an integer", other)),
    };
    Ok(Some(number.as_i64().unwrap_or_else(|| {
        if number.as_u64().is_some() {
            i64::MAX
        } else {
            number.as_f64().map_or(0, |f| f as i64)
        }
    })))
}

/// [`int`] where an exact 0 means "not given" (no caller means a timeout of 0); a fraction
/// or a negative is still a value, for the clamp.
pub(crate) fn nonzero_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    let zero = match &value {
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::String(s)) => s.trim().parse::<f64>() == Ok(0.0),
        _ => false,
    };
    if zero {
        return Ok(None);
    }
    int_of(value.as_ref()).map_err(D::Error::custom)
}

/// A non-negative integer, as a number, an integral float (`5.0`) or a numeric string.
pub(crate) fn uint<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    let fail =
        |shown: &str| D::Error::custom(format!("expected a non-negative integer, got {shown}"));
    let number = match &value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.clone(),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse::<serde_json::Number>()
            .map_err(|_| fail(&format!("{s:?}")))?,
        Some(other) => return Err(D::Error::custom(expected("a non-negative integer", other))),
    };
    number
        .as_u64()
        .or_else(|| whole(number.as_f64()?))
        .map(Some)
        .ok_or_else(|| fail(&value.map(|v| v.to_string()).unwrap_or_default()))
}

/// An integral, non-negative float as an integer (`5.0` → 5; `5.5` and `-1.0` → `None`).
fn whole(f: f64) -> Option<u64> {
    // Exact below 2^53; larger floats are not counts anyone means.
    (f >= 0.0 && f.fract() == 0.0 && f < 9_007_199_254_740_992.0).then_some(f as u64)
}

/// [`uint`] where 0 can mean nothing but "not given" (a zero-line head, a zero-byte page).
pub(crate) fn positive_uint<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    uint(d).map(|n| n.filter(|&n| n > 0))
}

/// A string where an empty one (or `null`) means "not given": a session, a directory, a
/// target, a pattern. Only the empty string: `" "` is a pattern, and a blank session name is
/// refused by name.
pub(crate) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(D::Error::custom(expected("a string", &other))),
    }
}

/// [`text`] for a field with a default of `""` (`null` is `""` too).
pub(crate) fn text_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    text(d).map(Option::unwrap_or_default)
}

/// One of a set of names (an enum's), where `""` (or `null`) means "not given".
pub(crate) fn choice<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(value) => T::deserialize(value).map(Some).map_err(D::Error::custom),
    }
}

/// [`choice`] for a field with a default.
pub(crate) fn choice_or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    choice(d).map(Option::unwrap_or_default)
}

/// Environment variables, as an array of `NAME=value` strings — the form every schema
/// converter can express (an open map is not: OpenAI's strict mode has no
/// `additionalProperties` but `false`) — or as an object of names to values.
pub(crate) fn env<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let mut vars = BTreeMap::new();
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                let Value::String(s) = &item else {
                    return Err(D::Error::custom(format!(
                        "expected \"NAME=value\" strings, got {}",
                        json_kind(&item)
                    )));
                };
                match s.split_once('=') {
                    Some((name, value)) if !name.is_empty() => {
                        vars.insert(name.to_owned(), value.to_owned());
                    }
                    _ => {
                        return Err(D::Error::custom(format!(
                            "expected \"NAME=value\", got {s:?}"
                        )));
                    }
                }
            }
        }
        Some(Value::Object(map)) => {
            for (name, value) in map {
                match value {
                    Value::String(v) => vars.insert(name, v),
                    Value::Number(_) | Value::Bool(_) => vars.insert(name, value.to_string()),
                    other => {
                        return Err(D::Error::custom(format!(
                            "{name}: expected a string value, got {}",
                            json_kind(&other)
                        )));
                    }
                };
            }
        }
        Some(other) => {
            return Err(D::Error::custom(expected(
                "an array of \"NAME=value\" strings",
                &other,
            )));
        }
    }
    Ok(vars)
}

/// [`env`] written back in the form its schema states: `["NAME=value", …]`.
pub(crate) fn env_as_list<S: Serializer>(
    vars: &BTreeMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(vars.iter().map(|(k, v)| format!("{k}={v}")))
}

/// [`uint`] for a field with a default of 0.
pub(crate) fn uint_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    uint(d).map(Option::unwrap_or_default)
}

/// An id: a string, or an integer given for one (`"job_id": 3`).
pub(crate) fn id<'de, D: Deserializer<'de>>(d: D) -> Result<crate::result::JobId, D::Error> {
    let value = Value::deserialize(d)?;
    if let Value::String(s) = value {
        return Ok(crate::result::JobId(s));
    }
    match value.as_u64().or_else(|| whole(value.as_f64()?)) {
        Some(n) => Ok(crate::result::JobId(n.to_string())),
        None => Err(D::Error::custom(expected("a string id", &value))),
    }
}

/// `true` / `false`, also as the strings `"true"` / `"false"`.
fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
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
    fn what_strict_callers_send_for_fields_they_do_not_mean_reads_as_absent() {
        let r = crate::Request::from_value(json!({
            "command": "ls", "cwd": "", "session": null, "sandbox": "", "target": "",
            "streams": "", "view": null, "head": 0, "tail": 0.0, "timeout": 0, "timeout_ms": 0,
            "env": [], "yield_ms": 0
        }))
        .unwrap();
        assert_eq!(
            r,
            crate::Request {
                yield_ms: Some(0),
                ..crate::Request::shell("ls")
            }
        );
        let a: ArtifactRead =
            parse_params(json!({"id": "1", "grep": "", "limit": 0, "context": 0, "offset": 0}))
                .unwrap();
        assert_eq!(a, ArtifactRead::new("1").range(0, None));
        let o: JobOutputRequest = parse_params(json!({"job_id": 2.0, "mode": ""})).unwrap();
        assert_eq!(o, JobOutputRequest::new("2"));
        let i: JobInput = parse_params(json!({"job_id": "1", "data": null, "eof": ""})).unwrap();
        assert_eq!(i, JobInput::line("1", ""));
    }

    #[test]
    fn only_what_can_mean_nothing_else_reads_as_absent() {
        // A blank is a pattern; a fraction or a negative timeout is a value, for the clamp.
        let a: ArtifactRead = parse_params(json!({"id": "1", "grep": " "})).unwrap();
        assert_eq!(a.grep.as_deref(), Some(" "));
        for (given, read) in [
            (json!(0.5), Some(0)),
            (json!(-5), Some(-5)),
            (json!("0"), None),
        ] {
            let r = crate::Request::from_value(json!({"command": "ls", "timeout": given})).unwrap();
            assert_eq!(r.timeout, read, "{given}");
        }
        // 0 is "wait for the end" for a yield, and a zero wait is no wait: kept.
        let r = crate::Request::from_value(json!({"command": "ls", "yield_ms": 0})).unwrap();
        assert_eq!(r.yield_ms, Some(0));
    }

    #[test]
    fn integral_floats_are_integers_and_others_are_named() {
        let r = crate::Request::from_value(json!({"command": "ls", "head": 5.0, "tail": "7.0"}))
            .unwrap();
        assert_eq!((r.head, r.tail), (Some(5), Some(7)));
        let e =
            parse_params::<JobOutputRequest>(json!({"job_id": "1", "wait_ms": 2.5})).unwrap_err();
        assert_eq!(e, "wait_ms: expected a non-negative integer, got 2.5");
        let e =
            parse_params::<JobOutputRequest>(json!({"job_id": "1", "wait_ms": -1.0})).unwrap_err();
        assert_eq!(e, "wait_ms: expected a non-negative integer, got -1.0");
    }

    #[test]
    fn env_comes_as_name_value_strings_or_an_object_and_goes_as_strings() {
        let r =
            crate::Request::from_value(json!({"command": "env", "env": ["A=1=2", "B="]})).unwrap();
        assert_eq!(r, crate::Request::shell("env").env("A", "1=2").env("B", ""));
        let o = crate::Request::from_value(json!({"command": "env", "env": {"A": "1=2", "B": ""}}))
            .unwrap();
        assert_eq!(o, r);
        assert_eq!(
            serde_json::to_value(&r).unwrap()["env"],
            json!(["A=1=2", "B="])
        );
        let e = crate::Request::from_value(json!({"command": "env", "env": ["=x"]})).unwrap_err();
        assert_eq!(
            e.0,
            "invalid request: env: expected \"NAME=value\", got \"=x\""
        );
        let e = crate::Request::from_value(json!({"command": "env", "env": "A=1"})).unwrap_err();
        assert!(
            e.0.contains("an array of \"NAME=value\" strings"),
            "{}",
            e.0
        );
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
