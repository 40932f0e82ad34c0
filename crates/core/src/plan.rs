//! The plan of one call: everything the request means, computed once, before anything runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_exec_executor::{ExecSpec, Program, SandboxSpec};
use agent_exec_normalize::{is_diff_command, merge_limits, normalize, shell_word, single_quoted};
use agent_exec_sink::{Direction, SinkConfig};

use crate::config::{Config, SandboxOrigin};
use crate::validate::{Invocation, Validated};
use agent_exec_protocol::{StreamKind, ViewStyle};

/// Where a call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Its own process, to the end (under a terminal with `pty`).
    OneShot { pty: bool },
    /// In the persistent shell of that session.
    Session(String),
    /// As a background job (under a terminal with `pty`).
    Job { pty: bool },
}

/// Which lines of the output are kept, from the request and the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lines {
    pub(crate) head: Option<usize>,
    pub(crate) tail: Option<usize>,
    /// The request gave both `head` and `tail`: keep both ends (else a tail applies to what
    /// the head kept, as pipes would).
    pub(crate) both: bool,
}

/// One call, planned.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// What the policy reads: the command as typed.
    pub(crate) checked: Invocation,
    /// What runs: with a trailing `| head`/`| tail` taken out (one-shot and session calls), or
    /// as typed (a background job has no output window for a limit to apply to).
    pub(crate) run: Invocation,
    /// The command as the model typed it, for the texts it reads (argv shell-quoted).
    pub(crate) shown: String,
    pub(crate) mode: Mode,
    /// The resolved working directory; `None` in a session without an explicit `cwd`.
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    /// When a one-shot or session call yields if it still runs (`None`: it runs to its end).
    pub(crate) yield_after: Option<Duration>,
    /// stdout and stderr on pipes of their own, windowed and kept apart.
    pub(crate) separate: bool,
    pub(crate) lines: Lines,
    pub(crate) sink: SinkConfig,
    pub(crate) stream_kind: StreamKind,
    /// What the sandbox lets the call do (`None`: no sandbox).
    pub(crate) sandbox: Option<Arc<SandboxSpec>>,
    /// Who set the sandbox's mode.
    pub(crate) sandbox_origin: SandboxOrigin,
}

impl Plan {
    /// `sandbox`: the spec of the mode `validated` asks for (`Runner::plan`).
    pub(crate) fn new(
        validated: Validated,
        config: &Config,
        sandbox: Option<Arc<SandboxSpec>>,
    ) -> Plan {
        let background = validated.background;
        let (run, extracted, shown) = match &validated.target {
            Invocation::Shell(command) => {
                let normalized = normalize(command);
                (
                    Invocation::Shell(normalized.command),
                    normalized.limit,
                    command.clone(),
                )
            }
            Invocation::Program(program, args) => {
                (validated.target.clone(), None, argv_line(program, args))
            }
        };
        let stream_kind = match &run {
            Invocation::Shell(c) if is_diff_command(c) => StreamKind::Diff,
            Invocation::Program(..) if is_diff_command(&shown) => StreamKind::Diff,
            _ => StreamKind::Plain,
        };
        let (head, tail) = merge_limits(validated.head, validated.tail, extracted);
        let lines = Lines {
            head,
            tail,
            both: validated.head.is_some() && validated.tail.is_some(),
        };
        let mut sink = sink_config(config, lines);
        sink.separate_streams = validated.separate;
        // The compact view folds what fits a smart window; lines the caller asked for (`head`,
        // `tail`, a `| tail` in the command) are shown as they are.
        if validated.view.unwrap_or(config.view) == ViewStyle::Compact
            && head.is_none()
            && tail.is_none()
        {
            sink.compact = Some(shown.clone());
        }
        if validated.separate {
            // Two windows share the one budget: the answer stays as bounded as any other.
            sink.max_bytes = (sink.max_bytes / 2).max(1);
        }
        // An infinite producer before `| head` must not run until its timeout: stop it once the
        // head is full, as the pipe would have (unless the caller asked for head explicitly).
        sink.stop_when_head_full = validated.head.is_none() && head.is_some() && tail.is_none();
        let mode = match (&validated.session, background) {
            (_, true) => Mode::Job { pty: validated.pty },
            (Some(name), false) => Mode::Session(name.clone()),
            (None, false) => Mode::OneShot { pty: validated.pty },
        };
        // What a PTY call printed is read as its terminal shows it.
        if mode == (Mode::OneShot { pty: true }) {
            sink.terminal = Some(config.pty_size);
        }
        let run = if background {
            validated.target.clone()
        } else {
            run
        };
        Plan {
            checked: validated.target,
            run,
            shown,
            mode,
            cwd: validated.cwd,
            env: validated.env,
            timeout: validated.timeout,
            yield_after: validated.yield_after,
            separate: validated.separate,
            lines,
            sink,
            stream_kind,
            sandbox_origin: validated.sandbox_origin,
            sandbox,
        }
    }

    /// The session the call runs in, if any.
    pub(crate) fn session(&self) -> Option<&str> {
        match &self.mode {
            Mode::Session(name) => Some(name),
            _ => None,
        }
    }

    /// What runs, as one shell line (a session's shell reads lines): argv words shell-quoted,
    /// the program always, so no alias, function or keyword of the session can stand in for it.
    pub(crate) fn shell_line(&self) -> String {
        match &self.run {
            Invocation::Shell(c) => c.clone(),
            Invocation::Program(program, args) => join_words(single_quoted(program), args),
        }
    }

    /// The executor's spec for running this plan in `cwd`.
    pub(crate) fn spec(&self, config: &Config, cwd: &Path) -> ExecSpec {
        let program = match &self.run {
            Invocation::Shell(c) => Program::Shell {
                command: c.clone(),
                shell: config.shell.clone(),
            },
            Invocation::Program(p, args) => Program::Argv {
                program: p.clone(),
                args: args.clone(),
            },
        };
        ExecSpec {
            program,
            cwd: cwd.to_path_buf(),
            env: config.env.clone(),
            extra_env: self.env.clone(),
            timeout: Some(self.timeout),
            grace: config.grace,
            drain: config.drain,
            containment: agent_exec_executor::Containment::default(),
            sandbox: self.sandbox.clone(),
            limits: config.limits,
            pty_size: config.pty_size,
            prompt_idle: config.prompt_idle,
            // One pipe for stdout and stderr, the output in the order it was written, unless
            // the request keeps them apart.
            output: if self.separate {
                agent_exec_executor::OutputPipes::Separate
            } else {
                agent_exec_executor::OutputPipes::Shared
            },
        }
    }
}

/// The sink for line limits `lines`. With `both` the first `head` and the last `tail` lines
/// are kept, the middle elided; else a head limit comes first and a tail limit applies to
/// what it kept, as pipes would.
pub(crate) fn sink_config(config: &Config, lines: Lines) -> SinkConfig {
    let (direction, max_lines) = match (lines.head, lines.tail) {
        (Some(h), Some(t)) if lines.both => (Direction::Both, Some(h.saturating_add(t))),
        (Some(h), _) => (Direction::Head, Some(h)),
        (None, Some(t)) => (Direction::Tail, Some(t)),
        (None, None) => (config.direction, config.max_lines),
    };
    SinkConfig {
        max_bytes: config.max_bytes,
        max_lines,
        direction,
        artifact_cap: config.artifact_cap,
        // A model reads lines: no fragment of a line at the edge of the window.
        align_lines: true,
        salient: config.salient.clone(),
        head_share: match (lines.head, lines.tail) {
            (Some(h), Some(t)) if lines.both && h + t > 0 => h as f64 / (h + t) as f64,
            _ => 0.5,
        },
        // Each field given: `..SinkConfig::default()` would build default salient settings
        // (some eighty strings) only to drop them, on every call.
        split_streams: false,
        separate_streams: false,
        stop_when_head_full: false,
        terminal: None,
        compact: None,
    }
}

/// A program and its arguments as one shell line: words quoted only where a shell would
/// otherwise read them differently (`bash -c 'rm -rf /'`).
pub(crate) fn argv_line(program: &str, args: &[String]) -> String {
    // A first word with `=` would be read as an assignment: always quote that one.
    let first = if program.contains('=') {
        single_quoted(program)
    } else {
        shell_word(program)
    };
    join_words(first, args)
}

/// An already-quoted program word and its arguments, quoted where needed, as one line.
fn join_words(program: String, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(|a| shell_word(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_words_are_quoted_only_when_needed() {
        let args = ["-c".to_owned(), "rm -rf /".to_owned(), "it's".to_owned()];
        assert_eq!(argv_line("bash", &args), r"bash -c 'rm -rf /' 'it'\''s'");
        assert_eq!(argv_line("ls", &["-la".into(), String::new()]), "ls -la ''");
        assert_eq!(argv_line("X=1", &["a=b".into()]), "'X=1' a=b");
    }

    #[test]
    fn words_from_a_command_line_reach_the_program_intact() {
        use agent_exec_protocol::Request;
        let line = |w: &[&str]| Request::from_words(w).command.unwrap_or_default();
        assert_eq!(line(&["ls | wc -l"]), "ls | wc -l");
        assert_eq!(line(&["sh", "-c", "echo hi"]), "sh -c 'echo hi'");
        assert_eq!(line(&["FOO=1", "env"]), "FOO=1 env");
        assert_eq!(
            line(&["FOO=a b", "X=$y", "env", "Z=1"]),
            "FOO='a b' X='$y' env Z=1"
        );
        assert_eq!(line(&["echo", "a  b", "$HOME"]), "echo 'a  b' '$HOME'");
    }
}
