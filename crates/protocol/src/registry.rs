//! The methods of the tool (contract §7), each once: its `serve` name, its MCP tool name, title
//! and description, what it does to the world, and its params type. The servers' dispatch,
//! their messages naming the params, the MCP tool list and its schemas are all read from here.

use serde_aux::serde_introspection::serde_introspect;
use serde_json::Value;

use crate::methods::{ArtifactRead, JobInput, JobKill, JobList, JobOutputRequest, SessionClose};
use crate::request::{Request, schema_for};

/// A method of the tool. Exhaustive on purpose: a server that does not answer a new method
/// does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Run a command: a [`Request`] in, a `ToolResult` out.
    Exec,
    /// A background job's output ([`JobOutputRequest`]).
    JobOutput,
    /// Type into a background job ([`JobInput`]).
    JobInput,
    /// End a background job ([`JobKill`]).
    JobKill,
    /// The background jobs ([`JobList`]).
    JobList,
    /// Read a spilled output ([`ArtifactRead`]).
    ArtifactRead,
    /// End a session ([`SessionClose`]).
    SessionClose,
}

/// What a method does to the world (MCP's annotation hints are derived from it; exhaustive on
/// purpose, so that every kind gets its hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Only reads.
    ReadOnly,
    /// Runs or feeds commands: whatever they do (not idempotent, open world).
    RunsCommands,
    /// Ends processes: doing it twice changes nothing more (idempotent, closed world).
    EndsProcesses,
}

/// One method, as both servers offer it.
#[derive(Debug)]
#[non_exhaustive]
pub struct MethodInfo {
    /// Which method.
    pub method: Method,
    /// Its name in `serve` (`job_output`).
    pub name: &'static str,
    /// Its MCP tool name (`bash_output`).
    pub tool: &'static str,
    /// Its MCP title.
    pub title: &'static str,
    /// What it does, for the model (the MCP tool's description), naming the methods in
    /// backticks (`` `job_output` ``, which [`Vocabulary::translate`] names as the client knows
    /// them); `{window}` stands for what the output window keeps (`over 50 KiB is cut to …`),
    /// `{timeout}` for the default timeout.
    pub description: &'static str,
    /// What it does to the world.
    pub effect: Effect,
    params_schema: fn() -> Value,
    params: fn() -> &'static [&'static str],
}

impl MethodInfo {
    /// The JSON Schema (2020-12) of its params.
    pub fn params_schema(&self) -> Value {
        (self.params_schema)()
    }

    /// The names of its params in the order the type declares them, for messages
    /// (`job_id, mode, wait_ms, target`).
    pub fn params(&self) -> String {
        (self.params)().join(", ")
    }
}

/// Every method, in the order the servers list them.
pub const METHODS: &[MethodInfo] = &[
    MethodInfo {
        method: Method::Exec,
        name: "exec",
        tool: "bash",
        title: "Run a shell command",
        description: "Run a shell command (bash) and return its output and exit code. An output {window}; the whole output stays readable with `artifact_read` (artifact://ID). A command is ended at its timeout (default {timeout}) with all it started. For servers and watchers use run_in_background, then `job_output` to read and `job_kill` to stop; a call still running after yield_ms answers with a job id the same way. session keeps cd and exports between calls.",
        effect: Effect::RunsCommands,
        params_schema: schema_for::<Request>,
        params: serde_introspect::<Request>,
    },
    MethodInfo {
        method: Method::JobOutput,
        name: "job_output",
        tool: "bash_output",
        title: "Read a background job's output",
        description: "Read a background job's output: what is new since the last read (or all of it), waiting up to wait_ms for more or for its end. The answer says whether it still runs, or how it ended.",
        effect: Effect::ReadOnly,
        params_schema: schema_for::<JobOutputRequest>,
        params: serde_introspect::<JobOutputRequest>,
    },
    MethodInfo {
        method: Method::JobInput,
        name: "job_input",
        tool: "bash_input",
        title: "Type into a background job",
        description: "Type into a background job: data, then Enter unless enter is false; eof closes its input. With yield_ms, wait for what it answers and return it.",
        effect: Effect::RunsCommands,
        params_schema: schema_for::<JobInput>,
        params: serde_introspect::<JobInput>,
    },
    MethodInfo {
        method: Method::JobKill,
        name: "job_kill",
        tool: "bash_kill",
        title: "Stop a background job",
        description: "End a background job and everything it started (TERM, then KILL).",
        effect: Effect::EndsProcesses,
        params_schema: schema_for::<JobKill>,
        params: serde_introspect::<JobKill>,
    },
    MethodInfo {
        method: Method::JobList,
        name: "job_list",
        tool: "bash_jobs",
        title: "List background jobs",
        description: "List the background jobs: id, command, status, exit code, bytes of output.",
        effect: Effect::ReadOnly,
        params_schema: schema_for::<JobList>,
        params: serde_introspect::<JobList>,
    },
    MethodInfo {
        method: Method::ArtifactRead,
        name: "artifact_read",
        tool: "read_artifact",
        title: "Read a full output",
        description: "Read a whole output kept as artifact://ID: a page of bytes from offset, or with grep (a regular expression) its matching lines, numbered, with context lines around each.",
        effect: Effect::ReadOnly,
        params_schema: schema_for::<ArtifactRead>,
        params: serde_introspect::<ArtifactRead>,
    },
    MethodInfo {
        method: Method::SessionClose,
        name: "session_close",
        tool: "bash_session_close",
        title: "Close a shell session",
        description: "End a session's shell and everything it started (a command running in it is cancelled).",
        effect: Effect::EndsProcesses,
        params_schema: schema_for::<SessionClose>,
        params: serde_introspect::<SessionClose>,
    },
];

/// The names a text gives the methods: `serve`'s (`job_output`), or the MCP tools'
/// (`bash_output`), so that a model is told of the tools it has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Vocabulary {
    /// The methods' names (`serve`, the library).
    #[default]
    Methods,
    /// The MCP tools' names (`mcp`).
    McpTools,
}

impl Vocabulary {
    /// What `method` is called.
    pub fn name(self, method: Method) -> &'static str {
        let info = method.info();
        match self {
            Vocabulary::Methods => info.name,
            Vocabulary::McpTools => info.tool,
        }
    }

    /// `text` (one of ours: a description) with each method named in backticks
    /// (`` `job_output` ``) named as this vocabulary names it.
    pub fn translate(self, text: &str) -> String {
        let mut out = text.to_owned();
        if self != Vocabulary::Methods {
            for info in METHODS {
                out = out.replace(
                    &format!("`{}`", info.name),
                    &format!("`{}`", self.name(info.method)),
                );
            }
        }
        out
    }
}

impl Method {
    /// Its entry in [`METHODS`].
    pub fn info(self) -> &'static MethodInfo {
        METHODS
            .iter()
            .find(|m| m.method == self)
            .expect("every method is registered")
    }

    /// Its name in `serve`.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The method of a `serve` name.
    pub fn named(name: &str) -> Option<Method> {
        METHODS.iter().find(|m| m.name == name).map(|m| m.method)
    }

    /// The method of an MCP tool name.
    pub fn of_tool(tool: &str) -> Option<&'static MethodInfo> {
        METHODS.iter().find(|m| m.tool == tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_registered_once_with_its_params() {
        for (i, info) in METHODS.iter().enumerate() {
            assert_eq!(info.method.info().name, info.name);
            assert_eq!(Method::named(info.name), Some(info.method));
            assert_eq!(
                Method::of_tool(info.tool).map(|m| m.method),
                Some(info.method)
            );
            assert!(
                METHODS[..i].iter().all(|m| m.method != info.method),
                "{} registered twice",
                info.name
            );
        }
        assert!(Method::JobOutput.info().params().contains("job_id"));
        assert!(Method::Exec.info().params().contains("command"));
    }
}
