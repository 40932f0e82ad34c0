//! `agent-exec mcp`: the tool's methods as Model Context Protocol tools (spec 2025-11-25, and the
//! versions before it back to 2024-11-05): `initialize` with version negotiation, `ping`,
//! `tools/list` (titles, annotations, input and output schemas), `tools/call` with
//! progress (`_meta.progressToken`), and `notifications/cancelled`.
//!
//! Agents mostly reach these tools through a framework, which converts the schemas for its
//! model provider and picks what of a result the model sees. So the schemas keep to what every
//! converter takes (Google's, OpenAI's strict mode, LangChain's, the AI SDK's): `enum` for a
//! set of names, no `oneOf`/`const`, no `additionalProperties`, no `default` or bounds (the
//! descriptions say them, the server clamps and names what it refuses); parameters only where
//! the operator's settings make them usable; descriptions that name the MCP tools and the
//! window's size. And every result's `structuredContent` carries the text the model must read
//! (`output`), for frameworks that show the model only that.

use agent_exec_core::{
    Config, Details, Direction, Effect, METHODS, Method, MethodInfo, Outcome, Progress,
    SandboxMode, ToolResult, Vocabulary,
};
use agent_exec_executor::CancelToken;
use serde_json::{Map, Value, json};

use super::methods::{Reporting, call};
use super::{INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, Protocol, Reply, Server};

/// Protocol versions spoken, newest first.
const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The longest progress message (the last line of output), in characters.
const PROGRESS_MESSAGE_CHARS: usize = 200;

/// The MCP server: the tools as this operator's settings offer them.
pub(crate) struct Mcp {
    defs: Vec<ToolDef>,
    /// The `tools/list` answer, made once.
    list: Value,
    /// What the model is told of its sandbox (the instructions, `bash`'s description).
    sandbox_summary: String,
}

impl Mcp {
    pub(crate) fn new(config: &Config, sandbox_summary: String) -> Mcp {
        let defs: Vec<ToolDef> = METHODS
            .iter()
            .map(|info| ToolDef::new(info, config, &sandbox_summary))
            .collect();
        let list = tools_list(&defs, config.vocabulary);
        Mcp {
            defs,
            list,
            sandbox_summary,
        }
    }
}

/// One MCP tool: a method of the registry, with its description and schema as models take
/// them.
struct ToolDef {
    info: &'static MethodInfo,
    description: String,
    input_schema: Value,
}

impl ToolDef {
    fn new(info: &'static MethodInfo, config: &Config, sandbox_summary: &str) -> ToolDef {
        let mut input_schema = input_schema(info.params_schema());
        let props = props_of(&mut input_schema);
        if info.method == Method::Exec {
            // Progress comes through `_meta.progressToken` here; the request field is
            // `serve`'s. A model's bash tool takes a command line: `executable`/`argv` (still
            // accepted) would contradict `required: ["command"]`.
            for field in ["progress", "executable", "argv"] {
                props.remove(field);
            }
            offer_sandboxes(props, config);
        }
        offer_targets(props, config);
        if info.method == Method::Exec {
            input_schema["required"] = json!(["command"]);
        }
        if info.method == Method::Exec {
            state_defaults(props_of(&mut input_schema), config);
        }
        translate_descriptions(&mut input_schema, config.vocabulary);
        let mut description = config
            .vocabulary
            .translate(info.description)
            .replace("{window}", &window(config))
            .replace("{timeout}", &seconds(config.default_timeout));
        if info.method == Method::Exec && !sandbox_summary.is_empty() {
            description.push(' ');
            description.push_str(sandbox_summary);
        }
        ToolDef {
            info,
            description,
            input_schema,
        }
    }

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

fn tools_list(defs: &[ToolDef], vocabulary: Vocabulary) -> Value {
    let mut output = output_schema();
    translate_descriptions(&mut output, vocabulary);
    let tools: Vec<Value> = defs
        .iter()
        .map(|d| {
            let mut annotations = hints(d.info.effect);
            annotations["title"] = json!(d.info.title);
            json!({
                "name": d.tool_name(),
                "title": d.info.title,
                "description": d.description,
                "inputSchema": d.input_schema,
                "outputSchema": output,
                "annotations": annotations,
            })
        })
        .collect();
    json!({"tools": tools})
}

/// A schema's properties (an input schema always has them: [`input_schema`]).
fn props_of(schema: &mut Value) -> &mut Map<String, Value> {
    if !schema["properties"].is_object() {
        schema["properties"] = json!({});
    }
    schema["properties"]
        .as_object_mut()
        .expect("properties was just made an object")
}

/// What the output window keeps, as the descriptions state it: `over 50 KiB is cut to its
/// end, its start and the error lines between`.
fn window(config: &Config) -> String {
    let bytes = match config.max_bytes {
        n if n >= 1024 && n % 1024 == 0 => format!("{} KiB", n / 1024),
        n => format!("{n} bytes"),
    };
    let size = match config.max_lines {
        Some(lines) => format!("{bytes} or {lines} lines"),
        None => bytes,
    };
    let kept = match config.direction {
        Direction::Tail => "its end",
        Direction::Head => "its start",
        Direction::Both => "its start and its end",
        Direction::Smart => "its end, its start and the error lines between",
    };
    format!("over {size} is cut to {kept}")
}

/// `120 s`.
fn seconds(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs())
}

/// The defaults that are the operator's, stated in the fields' descriptions as values (their
/// doc comments say `Default: the operator's.`): a strict caller must send every field, and
/// sends the default it is told of.
fn state_defaults(props: &mut Map<String, Value>, config: &Config) {
    const OPERATORS: &str = "Default: the operator's.";
    let yield_ms = config.yield_after.map_or(0, |after| after.as_millis());
    for (field, value) in [
        ("timeout", config.default_timeout.as_secs().to_string()),
        ("yield_ms", yield_ms.to_string()),
    ] {
        let description = props.get_mut(field).and_then(|p| p.get_mut("description"));
        if let Some(Value::String(text)) = description {
            let stated = format!("Default: {value}.");
            *text = if text.contains(OPERATORS) {
                text.replace(OPERATORS, &stated)
            } else {
                format!("{text} {stated}")
            };
        }
    }
}

/// `sandbox` offers the mode calls run in (first: what a strict caller that means nothing
/// sends) and the stricter ones that can be enforced — by the far side on a remote target, else
/// by this kernel (a call can only tighten the mode); it is not offered when there is nothing
/// stricter.
fn offer_sandboxes(props: &mut Map<String, Value>, config: &Config) {
    let remote = config.remote.target.is_some();
    let (operator, _) = config.sandbox.mode_of_calls(remote);
    let enforced = remote
        || agent_exec_executor::sandbox::support()
            .unenforceable()
            .is_none();
    let offered: Vec<&str> = SandboxMode::ALL
        .into_iter()
        .filter(|mode| *mode == operator || (enforced && *mode > operator))
        .map(SandboxMode::as_str)
        .collect();
    if offered.len() < 2 {
        props.remove("sandbox");
    } else if let Some(sandbox) = props.get_mut("sandbox") {
        sandbox["enum"] = json!(offered);
        sandbox["description"] = json!(format!(
            "This call's sandbox: {} (the default), or stricter; read-only lets it write only $TMPDIR.",
            offered[0]
        ));
    }
}

/// `target` is offered only when the operator allowed targets a call may name, which it
/// lists.
fn offer_targets(props: &mut Map<String, Value>, config: &Config) {
    let remote = &config.remote;
    if remote.allowed.is_empty() {
        props.remove("target");
    } else if let Some(target) = props.get_mut("target") {
        let mut allowed: Vec<String> = remote.target.iter().map(ToString::to_string).collect();
        allowed.extend(remote.allowed.iter().cloned());
        let description = target["description"].as_str().unwrap_or_default();
        target["description"] = json!(format!(
            "{description} Allowed (* is any text): {}.",
            allowed.join(", ")
        ));
    }
}

/// Every description in `schema` with the methods named as `vocabulary` names them.
fn translate_descriptions(schema: &mut Value, vocabulary: Vocabulary) {
    match schema {
        Value::Object(o) => {
            for (key, value) in o.iter_mut() {
                match value {
                    // Doc comments wrap their lines; a description is one paragraph.
                    Value::String(text) if key == "description" => {
                        *text = vocabulary.translate(&text.replace('\n', " "));
                    }
                    _ => translate_descriptions(value, vocabulary),
                }
            }
        }
        Value::Array(a) => a
            .iter_mut()
            .for_each(|v| translate_descriptions(v, vocabulary)),
        _ => {}
    }
}

/// An input schema as every client and converter takes it: no `$schema`, no `$ref`s, no
/// nullable unions or `null` in enums (some clients reject them), `required` present, and in
/// the subset of [`converter_subset`].
fn input_schema(schema: Value) -> Value {
    let mut schema = self_contained(schema);
    drop_nulls(&mut schema);
    converter_subset(&mut schema);
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

/// What `structuredContent` holds: the text the model reads (`output`) and the result's
/// details (the same for every tool).
fn output_schema() -> Value {
    let mut schema = self_contained(agent_exec_core::schema_for::<Details>());
    schema["properties"][STRUCTURED_OUTPUT] = json!({
        "type": "string",
        "description": "What the call shows the model, as the text content has it: the output (through the window), the notes on how it ended, or the error message.",
    });
    if let Some(required) = schema["required"].as_array_mut() {
        required.push(json!(STRUCTURED_OUTPUT));
    }
    schema
}

/// The field of `structuredContent` with the result's text.
const STRUCTURED_OUTPUT: &str = "output";

/// Keeps `schema` to what the schema converters of the model providers take (each rule is a
/// converter's):
/// - a set of names is an `enum` of strings: Google's converters (google-genai, the AI SDK's
///   Google provider) know neither `oneOf` nor `const`, and pass the field on with no type;
/// - no `additionalProperties`: google-genai's MCP path fails on a boolean one, and strict
///   converters add their own `false` (unknown fields are still refused, by name);
/// - no `default`, `minimum` or `maximum`: OpenAI's strict mode and Gemini refuse or drop some
///   of them; the descriptions say the defaults and bounds, and the server clamps.
fn converter_subset(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            for key in ["oneOf", "anyOf"] {
                let names: Option<Vec<Value>> =
                    o.get(key).and_then(Value::as_array).and_then(|alts| {
                        alts.iter()
                            .map(|alt| alt.get("const").filter(|c| c.is_string()).cloned())
                            .collect()
                    });
                if let Some(names) = names {
                    o.remove(key);
                    o.insert("type".into(), json!("string"));
                    o.insert("enum".into(), Value::Array(names));
                }
            }
            for key in ["additionalProperties", "default", "minimum", "maximum"] {
                o.remove(key);
            }
            if let Some(Value::Object(props)) = o.get_mut("properties") {
                props.values_mut().for_each(converter_subset);
            }
            if let Some(items) = o.get_mut("items") {
                converter_subset(items);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(converter_subset),
        _ => {}
    }
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

/// A result as MCP carries it: the text, and the structured content with the same text
/// beside the details (some frameworks show the model only the structured content).
///
/// `isError` says the call failed — a bad request, a refusal, a program that could not start,
/// a timeout, a cancel — not that a command which ran exited non-zero or was killed by a
/// signal: that is the command's answer (`outcome`, `exit_code`). Frameworks act on
/// `isError`: Pydantic AI spends a retry on each (its default budget ends the run at the
/// second failing test run in a row), LangChain raises when told not to handle tool errors.
fn to_mcp(result: &ToolResult) -> Value {
    let mut structured = serde_json::to_value(&result.details).unwrap_or_else(|_| json!({}));
    if let Some(fields) = structured.as_object_mut() {
        fields.insert(STRUCTURED_OUTPUT.into(), json!(result.text()));
    }
    let command_answered = matches!(
        result.details.outcome,
        Outcome::ExitNonzero | Outcome::Signaled
    );
    json!({
        "content": result.content,
        "isError": result.is_error && !command_answered,
        "structuredContent": structured,
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
            "initialize" => Reply::Result(initialize(params, &self.sandbox_summary)),
            "ping" => Reply::Result(json!({})),
            "tools/list" => Reply::Result(self.list.clone()),
            "tools/call" => self.tools_call(server, incoming, cancel),
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

impl Mcp {
    fn tools_call(&self, server: &Server, incoming: &Incoming, cancel: &CancelToken) -> Reply {
        let params = &incoming.params;
        let names = || {
            self.defs
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
        let Some(def) = self.defs.iter().find(|d| d.tool_name() == name) else {
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
            // The model made the mistake: it sees the message and can correct the call. The
            // fields it may give are the tool's, listed last (not the request type's, which
            // serde's unknown-field message lists: `serve`'s `executable`, `argv`, `progress`).
            Err(problem) => {
                let mut problem = problem
                    .split_once(", expected one of")
                    .or_else(|| problem.split_once(", expected `"))
                    .filter(|_| problem.starts_with("unknown field"))
                    .map_or(problem.as_str(), |(head, _)| head)
                    .to_owned();
                // It may quote a value of the request: bounded as every answer's strings.
                agent_exec_core::cut_string(&mut problem, agent_exec_core::DETAIL_STRING_BYTES);
                ToolResult::invalid(
                    format!(
                        "invalid arguments for {name}: {problem}. It takes: {}",
                        def.params()
                    ),
                    cwd(),
                )
                .bounded(server.tool.config().max_bytes)
            }
        };
        Reply::Result(to_mcp(&result))
    }
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
        let mcp = Mcp::new(&Config::default(), String::new());
        for def in &mcp.defs {
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
        let bash = &mcp.defs[0].input_schema;
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
