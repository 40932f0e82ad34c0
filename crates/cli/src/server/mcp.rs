//! `agent-exec mcp`: the tool's methods as Model Context Protocol tools (spec 2025-11-25, and the
//! versions before it back to 2024-11-05): `initialize` with version negotiation, `ping`,
//! `tools/list` (titles, annotations, input and output schemas), `tools/call` with
//! progress (`_meta.progressToken`), and `notifications/cancelled`.

use std::sync::OnceLock;

use agent_exec_core::{Details, Effect, METHODS, Method, MethodInfo, Progress, ToolResult};
use agent_exec_executor::CancelToken;
use serde_json::{Map, Value, json};

use super::methods::{Reporting, call};
use super::{INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, Protocol, Reply, Server};

/// Protocol versions spoken, newest first.
const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The longest progress message (the last line of output), in characters.
const PROGRESS_MESSAGE_CHARS: usize = 200;

pub(crate) struct Mcp;

/// One MCP tool: a method of the registry, with its schema as MCP clients take it.
struct ToolDef {
    info: &'static MethodInfo,
    input_schema: Value,
}

impl ToolDef {
    /// The tool's name (`bash_output`), not the method's.
    fn tool_name(&self) -> &'static str {
        self.info.tool
    }

    /// The arguments it takes, for messages: its schema's properties.
    fn params(&self) -> String {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    }
}

/// MCP's annotation hints of what a method does to the world: it either only reads, or acts
/// and may destroy.
fn hints(effect: Effect) -> Value {
    let (read_only, idempotent, open_world) = match effect {
        Effect::ReadOnly => (true, false, false),
        // `bash`, `bash_input`: whatever the command does.
        Effect::RunsCommands => (false, false, true),
        // `bash_kill`, `bash_session_close`: ending what runs; doing it twice changes nothing
        // more.
        Effect::EndsProcesses => (false, true, false),
    };
    json!({"readOnlyHint": read_only, "destructiveHint": !read_only, "idempotentHint": idempotent, "openWorldHint": open_world})
}

fn defs() -> &'static [ToolDef] {
    static DEFS: OnceLock<Vec<ToolDef>> = OnceLock::new();
    DEFS.get_or_init(|| {
        METHODS
            .iter()
            .map(|info| {
                let mut input_schema = input_schema(info.params_schema());
                if info.method == Method::Exec {
                    // Progress comes through `_meta.progressToken` here; the request field is
                    // `serve`'s. A model's bash tool takes a command line: `executable`/`argv`
                    // (still accepted) would contradict `required: ["command"]`.
                    if let Some(props) = input_schema
                        .get_mut("properties")
                        .and_then(Value::as_object_mut)
                    {
                        for field in ["progress", "executable", "argv"] {
                            props.remove(field);
                        }
                    }
                    input_schema["required"] = json!(["command"]);
                }
                ToolDef { info, input_schema }
            })
            .collect()
    })
}

fn tools_list() -> Value {
    static LIST: OnceLock<Value> = OnceLock::new();
    LIST.get_or_init(|| {
        let output = output_schema();
        let tools: Vec<Value> = defs()
            .iter()
            .map(|d| {
                let mut annotations = hints(d.info.effect);
                annotations["title"] = json!(d.info.title);
                json!({
                    "name": d.tool_name(),
                    "title": d.info.title,
                    "description": d.info.description,
                    "inputSchema": d.input_schema,
                    "outputSchema": output,
                    "annotations": annotations,
                })
            })
            .collect();
        json!({"tools": tools})
    })
    .clone()
}

/// An input schema as every client takes it: no `$schema`, no `$ref`s, no nullable unions or
/// `null` in enums (some clients reject them), `required` present.
fn input_schema(schema: Value) -> Value {
    let mut schema = self_contained(schema);
    drop_nulls(&mut schema);
    if let Some(top) = schema.as_object_mut() {
        // The type's doc comment is written for Rust users; the tool's description is the
        // model's.
        top.remove("description");
        // Some clients want both even when empty (`bash_jobs` takes nothing).
        top.entry("properties").or_insert_with(|| json!({}));
        top.entry("required").or_insert_with(|| json!([]));
        top.insert("type".into(), json!("object"));
    }
    schema
}

/// What `structuredContent` holds: the result's details (the same for every tool).
fn output_schema() -> Value {
    self_contained(agent_exec_core::schema_for::<Details>())
}

/// A schema with its definitions inlined and without `$schema` or a title.
fn self_contained(mut schema: Value) -> Value {
    let defs = schema
        .as_object_mut()
        .and_then(|o| o.remove("$defs"))
        .unwrap_or(Value::Null);
    inline_refs(&mut schema, &defs);
    if let Some(top) = schema.as_object_mut() {
        top.remove("$schema");
        top.remove("title");
    }
    schema
}

/// Replaces each `{"$ref": "#/$defs/X"}` by the definition (the schemas here are not
/// recursive).
fn inline_refs(schema: &mut Value, defs: &Value) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref")
                && let Some(def) = r.strip_prefix("#/$defs/").and_then(|n| defs.get(n))
            {
                let mut def = def.clone();
                o.remove("$ref");
                inline_refs(&mut def, defs);
                if let Value::Object(d) = def {
                    for (k, v) in d {
                        o.entry(k).or_insert(v);
                    }
                }
            }
            for v in o.values_mut() {
                inline_refs(v, defs);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| inline_refs(v, defs)),
        _ => {}
    }
}

/// Removes `null` from types, enums and `anyOf`/`oneOf` alternatives, and `null` defaults.
fn drop_nulls(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::Array(types)) = o.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    o.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(values)) = o.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alternatives)) = o.get_mut(key) {
                    alternatives.retain(|a| a.get("type").is_none_or(|t| t != "null"));
                    if alternatives.len() == 1 {
                        let only = alternatives.remove(0);
                        o.remove(key);
                        if let Value::Object(fields) = only {
                            for (k, v) in fields {
                                o.entry(k).or_insert(v);
                            }
                        }
                    }
                }
            }
            if o.get("default").is_some_and(Value::is_null) {
                o.remove("default");
            }
            for v in o.values_mut() {
                drop_nulls(v);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

fn to_mcp(result: &ToolResult) -> Value {
    json!({
        "content": result.content,
        "isError": result.is_error,
        "structuredContent": result.details,
    })
}

impl Protocol for Mcp {
    fn is_quick(&self, method: &str) -> bool {
        method != "tools/call"
    }

    fn params_of(&self, method: &str) -> Option<String> {
        let params = match method {
            "initialize" => "protocolVersion, capabilities, clientInfo",
            "tools/call" => "name, arguments, _meta",
            "tools/list" => "cursor",
            "notifications/cancelled" => "requestId, reason",
            "notifications/progress" => "progressToken, progress, total, message",
            "ping" | "notifications/initialized" => "none",
            _ => return None,
        };
        Some(params.to_owned())
    }

    fn allows_null_id(&self) -> bool {
        false
    }

    fn takes_batches(&self) -> bool {
        // JSON-RPC batches left MCP in 2025-06-18: a batch is refused, per request.
        false
    }

    fn answer(&self, server: &Server, incoming: &Incoming, cancel: &CancelToken) -> Reply {
        let params = &incoming.params;
        match incoming.method.as_str() {
            "initialize" => Reply::Result(initialize(params, &server.tool.sandbox_summary())),
            "ping" => Reply::Result(json!({})),
            "tools/list" => Reply::Result(tools_list()),
            "tools/call" => tools_call(server, incoming, cancel),
            "notifications/cancelled" => {
                if let Some(id) = params.get("requestId") {
                    server.cancel_request(&id.to_string(), true);
                }
                Reply::Result(Value::Null)
            }
            // Other notifications (`notifications/initialized`, …) need nothing.
            other if other.starts_with("notifications/") => Reply::Result(Value::Null),
            other => Reply::Error(
                METHOD_NOT_FOUND,
                format!(
                    "method not found: {other:?}; methods: initialize, ping, tools/list, tools/call"
                ),
            ),
        }
    }
}

/// The client's protocol version when spoken here, else the newest one spoken.
fn initialize(params: &Value, sandbox: &str) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| SUPPORTED_VERSIONS.contains(v))
        .unwrap_or(SUPPORTED_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "agent-exec", "title": "agent-exec", "version": env!("CARGO_PKG_VERSION")},
        "instructions": format!("Run shell commands with bash. Long outputs are cut to a window that keeps the errors; the full output stays readable with read_artifact (grep finds lines in it). Use run_in_background for servers and watchers (read them with bash_output), and session to keep cd and exports between calls. {sandbox}"),
    })
}

fn tools_call(server: &Server, incoming: &Incoming, cancel: &CancelToken) -> Reply {
    let params = &incoming.params;
    let names = || {
        defs()
            .iter()
            .map(ToolDef::tool_name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Reply::Error(
            INVALID_PARAMS,
            format!(
                "invalid params: tools/call needs \"name\", a string: one of {}",
                names()
            ),
        );
    };
    let Some(def) = defs().iter().find(|d| d.tool_name() == name) else {
        return Reply::Error(
            INVALID_PARAMS,
            format!("unknown tool {name:?}; tools: {}", names()),
        );
    };
    let cwd = || server.tool.config().workdir.display().to_string();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(a @ Value::Object(_)) => a.clone(),
        Some(other) => {
            return Reply::Result(to_mcp(&ToolResult::invalid(
                format!(
                    "invalid arguments for {name}: arguments must be an object, not {}",
                    agent_exec_core::json_kind(other)
                ),
                cwd(),
            )));
        }
    };
    let token = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number())
        .cloned();
    let report = |update: &Progress| {
        if let Some(token) = &token {
            server.notify("notifications/progress", &progress_params(token, update));
        }
    };
    let reporting = match token {
        Some(_) => Reporting::Always(&report),
        None => Reporting::Off,
    };
    let result = match call(server, def.info.method, arguments, cancel, reporting) {
        Ok(result) => result,
        // The model made the mistake: it sees the message and can correct the call.
        Err(problem) => ToolResult::invalid(
            format!(
                "invalid arguments for {name}: {problem}. It takes: {}",
                def.params()
            ),
            cwd(),
        )
        .bounded(server.tool.config().max_bytes),
    };
    Reply::Result(to_mcp(&result))
}

/// `notifications/progress` params: seconds elapsed (increasing) and a message, always: the
/// last line of output, or how long it has run with nothing to show.
fn progress_params(token: &Value, update: &Progress) -> Value {
    let message: String = update
        .message()
        .chars()
        .take(PROGRESS_MESSAGE_CHARS)
        .collect();
    json!({
        "progressToken": token,
        "progress": update.elapsed.as_millis() as f64 / 1000.0,
        "message": message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_exec_core::Outcome;

    fn walk(schema: &Value, found: &mut Vec<String>, at: &str) {
        match schema {
            Value::Object(o) => {
                for (k, v) in o {
                    if k == "$schema" || k == "$ref" || k == "$defs" {
                        found.push(format!("{at}/{k}"));
                    }
                    if k == "type" && v.is_array() {
                        found.push(format!("{at}/type {v}"));
                    }
                    if k == "enum" && v.as_array().is_some_and(|a| a.contains(&Value::Null)) {
                        found.push(format!("{at}/enum with null"));
                    }
                    walk(v, found, &format!("{at}/{k}"));
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, found, at)),
            _ => {}
        }
    }

    #[test]
    fn input_schemas_have_no_nullable_unions_refs_or_dialect_and_say_what_is_required() {
        for def in defs() {
            let mut found = Vec::new();
            walk(&def.input_schema, &mut found, def.tool_name());
            assert!(found.is_empty(), "{}: {found:?}", def.tool_name());
            assert_eq!(def.input_schema["type"], "object", "{}", def.tool_name());
            assert!(
                def.input_schema["required"].is_array(),
                "{}",
                def.tool_name()
            );
            assert!(
                def.input_schema["properties"].is_object(),
                "{}",
                def.tool_name()
            );
        }
        let bash = &defs()[0].input_schema;
        assert_eq!(bash["required"], json!(["command"]));
        assert_eq!(bash["properties"]["timeout"]["type"], "integer");
        assert!(bash["properties"].get("progress").is_none());
    }

    #[test]
    fn the_client_version_is_answered_when_spoken_else_the_newest() {
        let v = |asked: &str| {
            initialize(&json!({"protocolVersion": asked}), "")["protocolVersion"].clone()
        };
        assert_eq!(v("2025-06-18"), "2025-06-18");
        assert_eq!(v("2024-11-05"), "2024-11-05");
        assert_eq!(v("1999-01-01"), SUPPORTED_VERSIONS[0]);
        assert_eq!(
            initialize(&json!({}), "")["protocolVersion"],
            SUPPORTED_VERSIONS[0]
        );
    }

    #[test]
    fn the_output_schema_describes_the_details_sent() {
        let schema = output_schema();
        assert_eq!(schema["type"], "object");
        let details = serde_json::to_value(Details::empty(Outcome::Success, "/".into())).unwrap();
        for key in details.as_object().unwrap().keys() {
            assert!(
                schema["properties"].get(key).is_some(),
                "structuredContent field {key} is not in the output schema"
            );
        }
    }
}
