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
    /// What it does, for the model (the MCP tool's description).
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
        description: "Run a shell command. Output is bounded (the full output is kept as artifact://ID, read it with read_artifact), the command is ended on timeout with no survivors, and a safety policy applies. Use run_in_background for servers and watchers, session to keep cd/exports between calls. A call still running after yield_ms (the server's default when not given) answers with outcome \"running\", the output so far and a job_id: the command goes on (read it with bash_output, type into a pty one with bash_input, stop it with bash_kill). streams: \"separate\" keeps stderr apart.",
        effect: Effect::RunsCommands,
        params_schema: schema_for::<Request>,
        params: serde_introspect::<Request>,
    },
    MethodInfo {
        method: Method::JobOutput,
        name: "job_output",
        tool: "bash_output",
        title: "Read a background job's output",
        description: "Read a background job's output: mode \"new\" (since the last read) or \"all\"; wait_ms waits for output or the job's end. structuredContent.running says whether it still runs.",
        effect: Effect::ReadOnly,
        params_schema: schema_for::<JobOutputRequest>,
        params: serde_introspect::<JobOutputRequest>,
    },
    MethodInfo {
        method: Method::JobInput,
        name: "job_input",
        tool: "bash_input",
        title: "Type into a background job",
        description: "Write to a background job's stdin (a newline is appended unless enter is false; eof closes it); with yield_ms, then return what it answers (its output once quiet, its end, or its next prompt).",
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
        description: "Read a spilled full output (artifact://ID) by byte offset and limit, or only its lines matching grep (a regex), numbered, with context lines around each.",
        effect: Effect::ReadOnly,
        params_schema: schema_for::<ArtifactRead>,
        params: serde_introspect::<ArtifactRead>,
    },
    MethodInfo {
        method: Method::SessionClose,
        name: "session_close",
        tool: "bash_session_close",
        title: "Close a shell session",
        description: "End a persistent session's shell and everything it started (a command running in it is cancelled).",
        effect: Effect::EndsProcesses,
        params_schema: schema_for::<SessionClose>,
        params: serde_introspect::<SessionClose>,
    },
];

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
