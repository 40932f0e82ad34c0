//! Every text a model reads (contract §3, "The text"), and only here: the call's text with its
//! banners, window markers, notices and notes, and the texts of jobs, sessions, the policy and
//! artifacts. The rest of the crate hands typed parts in; a change of wording is a change of
//! this file (and of the snapshot tests that pin it).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use agent_exec_executor::jobs::{JobError, NoInput};
use agent_exec_executor::session::{RcSnapshotError, SessionEnd};
use agent_exec_executor::{
    ExecOutcome, ExitStatus, LimitFallback, LimitUnavailable, Limits, SandboxSpec, SpawnError,
    Stop, Wait, WaitedOn, signal_name,
};
use agent_exec_sink::{OmittedSummary, TruncatedBy, View, ViewPart, format_size};

use crate::config::{DefaultOff, FarSettingsError, SandboxOrigin, SandboxSettings, TargetRefused};
use crate::denial::Denial;
use crate::ending::Ending;
use crate::parts::{NotRun, Note};
use agent_exec_protocol::{LimitHit, Method, Outcome, Truncation, Vocabulary};

/// The longest prompt quoted (in characters); a longer one is cut at the front.
const PROMPT_CHARS: usize = 200;

/// The prompt a call or job waits at: the last non-empty line of what it showed, trimmed and
/// cut to [`PROMPT_CHARS`] (its end kept: that is where the question is).
pub(crate) fn prompt_of(shown: &str) -> Option<String> {
    let line = shown.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let count = line.chars().count();
    Some(if count > PROMPT_CHARS {
        let tail: String = line.chars().skip(count - PROMPT_CHARS + 1).collect();
        format!("…{tail}")
    } else {
        line.to_owned()
    })
}

/// The longest command echoed back whole in a job's lines.
const COMMAND_SHOWN_CHARS: usize = 500;

/// A command as a job's answers echo it: its first 500 characters, then how long it is.
fn command_excerpt(command: &str) -> String {
    match command.char_indices().nth(COMMAND_SHOWN_CHARS) {
        None => command.to_owned(),
        Some((end, _)) => format!("{}… [{} bytes]", &command[..end], command.len()),
    }
}

/// `1 byte`, `2 bytes`.
fn count(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// `1 second`, `2 seconds`, `1.5 seconds`.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        count(d.as_secs(), "second")
    } else {
        format!("{:.1} seconds", d.as_secs_f64())
    }
}

/// `N seconds`, the contract's form of the timeout line (and its peers'): always plural, so
/// that a reader matching `after (\d+) seconds` reads `after 1 seconds` too.
fn contract_seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} seconds", d.as_secs())
    } else {
        format!("{:.1} seconds", d.as_secs_f64())
    }
}

impl Note {
    fn text(&self, v: Vocabulary) -> String {
        match self {
            Note::RcSnapshotDeferred { limit } => format!(
                "[rc snapshot skipped: ~/.bashrc did not finish within this call's {}; a later call tries again]",
                seconds(*limit)
            ),
            Note::RcSnapshotFailed(e) => format!(
                "[rc snapshot skipped: {}; sessions start without your ~/.bashrc functions and aliases]",
                rc_snapshot_error_text(e)
            ),
            Note::SessionRestarted(Some(end)) => {
                format!(
                    "[session restarted: {}]",
                    session_end_text(*end, Tense::Previous)
                )
            }
            Note::SessionRestarted(None) => "[session restarted: the shell had ended]".to_owned(),
            Note::SessionEnded(end) => format!(
                "[session ended: {}; the next call starts a fresh shell]",
                session_end_text(*end, Tense::This)
            ),
            Note::SigPipe { exit_code } => format!(
                "[Exit {} (SIGPIPE): a reader closed the pipe early; treated as success]",
                exit_code.map_or_else(|| "by signal 13".to_owned(), |c| c.to_string())
            ),
            Note::StoppedAtHead { lines: 1 } => {
                "[Stopped the command once the first line was captured, as `| head` would have]"
                    .to_owned()
            }
            Note::StoppedAtHead { lines } => format!(
                "[Stopped the command once the first {lines} lines were captured, as `| head` would have]"
            ),
            Note::ProcessesStopped(n) => format!(
                "[Stopped {} still running when the command ended. Use run_in_background for long-running processes.]",
                if *n == 1 {
                    "1 background process".to_owned()
                } else {
                    format!("{n} background processes")
                }
            ),
            Note::WaitingForInput { prompt } => {
                let after = prompt
                    .as_ref()
                    .map(|p| format!(" after {p:?}"))
                    .unwrap_or_default();
                let (output, input, _) = job_names(v);
                format!(
                    "[Waiting for input{after}: nothing can type into a one-shot call. To answer it, run the command with run_in_background: true, read the prompt with {output} and answer with {input}; or make it non-interactive (a flag such as --yes, or the answer piped in).]"
                )
            }
            Note::WaitingForTerminal(wait) => format!(
                "[{} waited for keys from a terminal, and this call has none (stdin is /dev/null, the output a pipe): nothing could ever answer it, so it was ended. {}]",
                who_waits(wait),
                terminal_hint(wait, v)
            ),
            Note::Warning(w) => format!("[warning: {w}]"),
        }
    }
}

/// What programs that wait for a terminal are run as without one: by the program found
/// waiting, or the program that started it (`git` opening an editor). Knowledge, as data; the
/// detection itself reads only what the kernel says (`waiting.rs` in the executor).
const TERMINAL_HINTS: &[(&[&str], &str)] = &[
    (
        &["git"],
        "git opened an editor or a pager: give the message on the command line (`git commit -m MSG`, `git merge --no-edit`, `git rebase --continue` with `GIT_EDITOR=true`), or `git --no-pager`",
    ),
    (
        &[
            "crontab",
            "visudo",
            "sudoedit",
            "vipw",
            "fc",
            "kubectl",
            "systemctl",
            "edquota",
        ],
        "it opened an editor: set EDITOR=true and VISUAL=true to accept the file as it is, or give the change another way (`crontab FILE`, `kubectl apply -f`, `kubectl patch`)",
    ),
    (
        &[
            "vi",
            "vim",
            "vim.basic",
            "vim.tiny",
            "nvim",
            "view",
            "nano",
            "pico",
            "emacs",
            "micro",
            "hx",
            "helix",
            "kak",
            "joe",
            "jed",
            "mcedit",
            "ne",
            "mg",
            "ex",
        ],
        "edit files without an editor: `sed -i 's/OLD/NEW/' FILE`, `ed -s FILE` with commands on stdin, a heredoc (`cat > FILE <<'EOF'`), or `vim -es -c 'CMD' -c wq FILE`",
    ),
    (
        &["less", "more", "most", "pg", "pager", "bat", "man"],
        "a pager shows its input page by page: read the file with `cat`, `head` or `sed -n '1,200p'`, or pass `--no-pager` (PAGER=cat)",
    ),
    (
        &[
            "top", "htop", "btop", "atop", "iotop", "watch", "nmtui", "tig", "mc", "ncdu",
            "vimdiff",
        ],
        "a full-screen program needs a terminal: use its batch form (`top -b -n 1`, `ps aux`, `du -sh *`), or run it with pty: true",
    ),
];

/// The way on for a program that waited for a terminal: its own hint, else the generic way.
fn terminal_hint(wait: &Wait, v: Vocabulary) -> String {
    let named = |name: &str| {
        TERMINAL_HINTS
            .iter()
            .find(|(programs, _)| programs.contains(&name))
            .map(|(_, hint)| *hint)
    };
    wait.parent
        .as_deref()
        .and_then(named)
        .or_else(|| named(&wait.program))
        .map_or_else(
            || format!("give it what it asks for another way: a flag (`--yes`, `--batch`, `--no-input`, `-m MSG`), a file, or the answer on stdin (`printf 'y\\n' | cmd`); or run it with pty: true and answer it with {}", v.name(Method::JobInput)),
            str::to_owned,
        )
}

/// `` `vim` (started by `git`) ``.
fn who_waits(wait: &Wait) -> String {
    match &wait.parent {
        Some(parent) if *parent != wait.program => {
            format!("`{}` (started by `{parent}`)", wait.program)
        }
        _ => format!("`{}`", wait.program),
    }
}

/// The job methods as the client knows them: `job_output`, `job_input`, `job_kill` (`serve`,
/// the library), or the MCP tools.
fn job_names(v: Vocabulary) -> (&'static str, &'static str, &'static str) {
    (
        v.name(Method::JobOutput),
        v.name(Method::JobInput),
        v.name(Method::JobKill),
    )
}

/// What a call that yielded shows.
pub(crate) struct Yielded<'a> {
    pub(crate) id: &'a str,
    pub(crate) shown: &'a str,
    /// The output so far, through the window (or a terminal's screen as it shows now).
    pub(crate) output: &'a str,
    pub(crate) truncation: Option<&'a Truncation>,
    /// With `streams: "separate"`: stderr so far, through its window, and what was cut of it.
    pub(crate) stderr: Option<&'a str>,
    pub(crate) stderr_truncation: Option<&'a Truncation>,
    /// The budget of one window.
    pub(crate) max_bytes: usize,
    pub(crate) elapsed: Duration,
    pub(crate) timeout: Duration,
    /// What it waits on, when that made it yield early: a prompt (only a call under a terminal
    /// has input to wait on), or a terminal it does not have.
    pub(crate) wait: Option<&'a Wait>,
    /// The prompt it waits at, when it waits for input.
    pub(crate) prompt: Option<&'a str>,
    /// The names the client knows the methods by.
    pub(crate) vocabulary: Vocabulary,
}

/// The text of a call that yielded: the output so far, then what goes on and how to go on.
pub(crate) fn yielded(y: &Yielded<'_>) -> String {
    let mut text = if y.output.trim().is_empty() {
        "(no output yet)".to_owned()
    } else {
        y.output.trim_end().to_owned()
    };
    if let Some(t) = y.truncation {
        text.push_str("\n\n");
        text.push_str(&notice(t, y.max_bytes, None, false));
    }
    if let Some(stderr) = y.stderr {
        text.push_str("\n\nSTDERR:\n");
        text.push_str(stderr.trim_end());
        if let Some(t) = y.stderr_truncation {
            text.push_str("\n\n");
            text.push_str(&notice(t, y.max_bytes, None, false));
        }
    }
    let id = y.id;
    let left = y.timeout.saturating_sub(y.elapsed);
    let runs = format!(
        "job {id} (`{}`) goes on in the background, with its timeout ({} left of {})",
        command_excerpt(y.shown),
        whole_seconds(left),
        whole_seconds(y.timeout),
    );
    let (output, input, kill) = job_names(y.vocabulary);
    let status = match y.wait {
        Some(w) if w.on == WaitedOn::Terminal => format!(
            "[Still running, and stuck: {} waits for keys from a terminal, and this call has none, so nothing can answer it; {runs}. Stop it with {kill} {{\"job_id\": \"{id}\"}}, then {}.]",
            who_waits(w),
            terminal_hint(w, y.vocabulary)
        ),
        Some(_) => {
            let at = y.prompt.map(|p| format!(" at {p:?}")).unwrap_or_default();
            format!(
                "[Waiting for input{at}: {runs}. To go on, answer with {input} {{\"job_id\": \"{id}\", \"data\": \"…\", \"yield_ms\": 2000}}, which types it and returns what it prints next; stop it with {kill} {{\"job_id\": \"{id}\"}}.]"
            )
        }
        None => format!(
            "[Still running after {}: {runs}. Read what it prints next with {output} {{\"job_id\": \"{id}\", \"wait_ms\": 30000}} (it returns as soon as there is new output or the job ends); stop it with {kill} {{\"job_id\": \"{id}\"}}.]",
            seconds(Duration::from_millis(
                y.elapsed.as_millis() as u64 / 100 * 100
            )),
        ),
    };
    text.push_str("\n\n");
    text.push_str(&status);
    text
}

/// `12 s`, rounded down: a countdown never says more time is left than is.
fn whole_seconds(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

/// `512 MiB`, `2 GiB`, `1500 bytes`.
fn size(bytes: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    count(bytes, "byte")
}

/// What the model is told of its sandbox up front ([`Tool::sandbox_summary`](crate::Tool::sandbox_summary)).
pub(crate) fn sandbox_summary(config: &crate::Config) -> String {
    let settings = &config.sandbox;
    let (mode, origin) = settings.operator_mode();
    let secrets = if config.env.secrets.withhold.is_empty() {
        ""
    } else {
        " Environment variables whose names look like credentials (*KEY*, *TOKEN*, *SECRET*, …) are not passed to commands."
    };
    if mode == agent_exec_executor::SandboxMode::Off {
        return format!("Commands run without a sandbox.{secrets}");
    }
    let whose = match origin {
        SandboxOrigin::Default => "agent-exec's default sandbox",
        _ => "the operator's sandbox",
    };
    let workspace = settings
        .workspace
        .clone()
        .unwrap_or_else(|| config.workdir.clone());
    let writes = match mode {
        agent_exec_executor::SandboxMode::WorkspaceWrite => {
            let mut roots = vec![workspace.display().to_string()];
            roots.extend(settings.writable.iter().map(|p| p.display().to_string()));
            if settings.profile == crate::SandboxProfile::Dev {
                roots
                    .push("the build caches (~/.cache, cargo, npm, pip, Go, Maven, Gradle)".into());
            }
            roots.push("$TMPDIR".into());
            format!("they may write {}", roots.join(", "))
        }
        _ => "they may write only $TMPDIR".to_owned(),
    };
    let network = match settings.network() {
        agent_exec_executor::NetworkMode::On => "use the network",
        _ if settings.allow_hosts.is_empty() => "not use the network",
        _ => "reach only the allowed hosts, through HTTP_PROXY",
    };
    let ask = if origin == SandboxOrigin::Default {
        " and what the user can allow"
    } else {
        ""
    };
    format!(
        "Commands run in {whose} ({}): {writes}, {network}, and cannot read credentials (~/.ssh, ~/.aws, …).{secrets} A command that meets a rule ends with a [Sandbox: …] note naming it{ask}.",
        mode.as_str()
    )
}

/// `details.warnings` of a call whose environment lacked the inherited variables `names`,
/// withheld as credentials (names only, never values).
pub(crate) fn withheld_secrets(names: &[String]) -> String {
    format!(
        "not passed to the command because their names look like credentials: {}; if one is needed, ask the user to pass it (agent-exec --pass-env NAME)",
        names.join(", ")
    )
}

/// `details.warnings` of a call contained only by its process group and marker.
pub(crate) const PROCESS_GROUP_ONLY: &str = "containment is the process group and a marker variable here (no cgroup could be made, and no user namespace for a PID namespace): a process that leaves both (setsid env -i …) is not found or ended";

/// The first line of a call a resource limit ended or hampered (contract §8).
pub(crate) fn limit_text(hit: LimitHit, limits: &Limits) -> String {
    match hit {
        LimitHit::Memory => format!(
            "[Memory limit of {} reached: the command was killed]",
            size(limits.memory.unwrap_or(0))
        ),
        LimitHit::Procs => format!(
            "[Process limit of {} reached: new processes were refused]",
            limits.procs.unwrap_or(0)
        ),
        LimitHit::Cpu => format!(
            "[CPU time limit of {} reached: the command was killed]",
            seconds(limits.cpu.unwrap_or_default())
        ),
        _ => format!(
            "[File size limit of {} reached: a write was refused]",
            size(limits.file_size.unwrap_or(0))
        ),
    }
}

/// The last line of a sandboxed call that failed on a rule of the sandbox (contract §8).
/// `roots` are the writable roots to name (the workspace and the operator's, not the profile's
/// caches). In agent-exec's default sandbox the note says how the user can widen it; a sandbox
/// the operator or the request chose is stated as a fact, not as something to negotiate.
pub(crate) fn denial_text(
    denial: &Denial,
    spec: &SandboxSpec,
    origin: SandboxOrigin,
    roots: &[PathBuf],
) -> String {
    let mode = spec.mode.as_str();
    let by_default = origin == SandboxOrigin::Default;
    let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    match denial {
        Denial::Write { git: true } if by_default => format!(
            "[Sandbox: .git/hooks and .git/config are read-only in agent-exec's default sandbox ({mode}); if the change is needed, ask the user to run agent-exec with --sandbox off]"
        ),
        Denial::Write { git: true } => {
            format!("[Sandbox: .git/hooks and .git/config are read-only ({mode})]")
        }
        Denial::Write { git: false } if by_default => format!(
            "[Sandbox: writes outside {} are blocked by agent-exec's default sandbox ({mode}); if this write is needed, ask the user to allow it: --writable PATH, or --sandbox off]",
            roots.join(", ")
        ),
        Denial::Write { git: false } if roots.is_empty() => {
            format!("[Sandbox: writes outside $TMPDIR are blocked ({mode})]")
        }
        Denial::Write { git: false } => format!(
            "[Sandbox: writes outside {} are blocked ({mode})]",
            roots.join(", ")
        ),
        Denial::Read(path) if by_default => format!(
            "[Sandbox: reading {} is blocked by agent-exec's default sandbox (deny-read: credentials); if it is needed, ask the user to run agent-exec with --sandbox off]",
            path.display()
        ),
        Denial::Read(path) => format!(
            "[Sandbox: reading {} is blocked (deny-read)]",
            path.display()
        ),
        Denial::SharedTmp => format!(
            "[Sandbox: /tmp and /var/tmp are read-only ({mode}); temporary files go in $TMPDIR, private to this call]"
        ),
        Denial::Connect if spec.allow_hosts.is_empty() => {
            "[Sandbox: network connections are blocked (network off)]".to_owned()
        }
        Denial::Connect => format!(
            "[Sandbox: network connections are blocked except to {} through the proxy in HTTP_PROXY (network off)]",
            spec.allow_hosts.join(", ")
        ),
    }
}

/// Everything the text of a call is made of.
pub(crate) struct CallText<'a> {
    pub(crate) ending: Ending,
    pub(crate) timeout: Duration,
    pub(crate) view: &'a View,
    /// What the compact view folded, and where the raw output is.
    pub(crate) folded: Option<&'a agent_exec_protocol::Folded>,
    /// Why the program could not start (shown instead of output).
    pub(crate) spawn_error: Option<&'a SpawnError>,
    pub(crate) truncation: Option<&'a Truncation>,
    pub(crate) max_bytes: usize,
    /// The line limit that applied, if any.
    pub(crate) max_lines: Option<usize>,
    pub(crate) notes: &'a [Note],
    /// The command was stopped early (a `| head` was satisfied): totals are lower bounds.
    pub(crate) stopped_early: bool,
    /// The resource limit that ended or hampered it: the first line.
    pub(crate) limit: Option<String>,
    /// The sandbox rule it met: the last line.
    pub(crate) denial: Option<String>,
    /// It was ended as it waited for input (or for a terminal it does not have), after this
    /// long without output.
    pub(crate) waited: Option<(Duration, WaitedOn)>,
    /// With `streams: "separate"`: stderr's window and what was cut of it (`view` is then
    /// stdout's).
    pub(crate) stderr: Option<(&'a View, Option<&'a Truncation>)>,
    /// The names the client knows the methods by.
    pub(crate) vocabulary: Vocabulary,
}

/// The window's parts, with a marker for what was left out between them.
pub(crate) fn view_text(view: &View) -> String {
    let mut text = String::new();
    for part in &view.parts {
        match part {
            ViewPart::Shown { text: t, .. } => text.push_str(t),
            ViewPart::Omitted { lines, bytes } => {
                let lines = count(*lines, "line");
                push_marker(
                    &mut text,
                    &match bytes {
                        Some(b) => format!("[... {lines} ({}) omitted ...]", count(*b, "byte")),
                        None => format!("[... {lines} omitted ...]"),
                    },
                );
            }
            ViewPart::Folded { lines, what, .. } => {
                push_marker(&mut text, &format!("[... {lines} {what} folded ...]"));
            }
            ViewPart::Similar { line, count: n } => push_marker(
                &mut text,
                &format!(
                    "[... {} like line {line} omitted ...]",
                    count(*n, "more line")
                ),
            ),
            _ => {}
        }
    }
    text
}

/// A marker on a line of its own, after the text so far.
fn push_marker(text: &mut String, marker: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(marker);
    text.push('\n');
}

/// What a truncated view left out, in a line or two: the most frequent templates of the lines
/// not shown, and the salient lines not shown with where they are and how to read them.
fn omitted_summary(summary: &OmittedSummary, artifact: Option<&str>, v: Vocabulary) -> Vec<String> {
    let mut lines = Vec::new();
    if !summary.frequent.is_empty() {
        let about = if summary.estimated { "~" } else { "" };
        let templates: Vec<String> = summary
            .frequent
            .iter()
            // Quoted as it reads (a non-breaking space is a space, not `\u{a0}`), and counted as
            // lines like the example: a template of a thousand file names is not one file.
            .map(|t| format!("{about}{} like \"{}\"", count(t.count, "line"), t.text))
            .collect();
        lines.push(format!(
            "[Most frequent omitted lines: {}]",
            templates.join(", ")
        ));
    }
    if !summary.standing_out.is_empty() {
        let standing: Vec<String> = summary
            .standing_out
            .iter()
            .map(|l| format!("{}: {}", l.line, l.text))
            .collect();
        lines.push(format!(
            "[Omitted lines that stand out, each the only one of its kind:\n{}]",
            standing.join("\n")
        ));
    }
    if summary.salient_lines > 0 {
        let mut at: Vec<String> = summary
            .salient_line_numbers
            .iter()
            .map(u64::to_string)
            .collect();
        if !at.is_empty() && (at.len() as u64) < summary.salient_lines {
            at.push("…".to_owned());
        }
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" (lines {})", at.join(", "))
        };
        let read_artifact = v.name(Method::ArtifactRead);
        let read = match (artifact, summary.salient_line_numbers.first()) {
            (Some(id), Some(first)) => format!(
                ": agent-exec artifact {id} --lines {}:{}, or --grep REGEX -C 3 ({read_artifact} with grep and context)",
                first.saturating_sub(3).max(1),
                first + 3
            ),
            (Some(id), None) => format!(
                ": agent-exec artifact {id} --grep REGEX -C 3 ({read_artifact} with grep and context)"
            ),
            _ => String::new(),
        };
        let what = count(summary.salient_lines, "matching line");
        let verb = if summary.salient_lines == 1 {
            "is"
        } else {
            "are"
        };
        lines.push(format!("[In all, {what} {verb} not shown{at}{read}]"));
    }
    lines
}

/// What a compact view folded, and how to see it: `[Compact view: 297 of 340 lines folded (296
/// lines of passing tests, …). Raw: artifact://ID — …]`.
fn folded_notice(
    folded: &agent_exec_protocol::Folded,
    summary: &agent_exec_sink::FoldSummary,
    v: Vocabulary,
) -> String {
    let groups: Vec<String> = summary
        .groups
        .iter()
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    let raw = match &folded.artifact_id {
        Some(id) => format!(
            "Raw output: artifact://{id} (agent-exec artifact {id} --grep REGEX, or {}), or run again with view: \"raw\"",
            v.name(Method::ArtifactRead)
        ),
        None => "Raw output could not be saved; run again with view: \"raw\" to see it".to_owned(),
    };
    format!(
        "[Compact view: {} folded ({}). {raw}]",
        count(folded.lines, "line"),
        groups.join(", ")
    )
}

/// Ranges a notice names, at most.
const NOTICE_RANGES: usize = 8;

/// `[Showing lines A-B of N (50.0KB limit). Full: artifact://ID]`, naming every range when
/// more than one is shown.
fn notice(
    t: &Truncation,
    max_bytes: usize,
    max_lines: Option<usize>,
    stopped_early: bool,
) -> String {
    let plus = if stopped_early { "+" } else { "" };
    // Always `lines A-B` (the contract's form), even for one line: readers parse it.
    let shown = if t.shown_ranges.is_empty() {
        format!("Showing no lines of {}{plus}", t.total_lines)
    } else {
        // Every range, up to a few; past that (a listing folded by directory shows hundreds),
        // the first and the last ones and how many: the notice stays a line.
        let all = &t.shown_ranges;
        let named: Vec<&[u64; 2]> = if all.len() > NOTICE_RANGES {
            all[..4].iter().chain(&all[all.len() - 3..]).collect()
        } else {
            all.iter().collect()
        };
        let mut ranges: Vec<String> = named.iter().map(|[a, b]| format!("{a}-{b}")).collect();
        if all.len() > NOTICE_RANGES {
            ranges.insert(4, format!("… ({} ranges in all) …", all.len()));
        }
        format!(
            "Showing lines {} of {}{plus}",
            ranges.join(", "),
            t.total_lines
        )
    };
    let limit = match (t.truncated_by, max_lines) {
        (TruncatedBy::Lines, Some(n)) => format!(" ({n}-line limit)"),
        _ => format!(" ({} limit)", format_size(max_bytes as u64)),
    };
    let salient = match t.salient_lines {
        0 => String::new(),
        1 => "; 1 matching line kept from the omitted middle".to_owned(),
        n => format!("; {n} matching lines kept from the omitted middle"),
    };
    let full = match &t.artifact_id {
        Some(id) => format!(". Full: artifact://{id}"),
        None => ". Full output could not be saved".to_owned(),
    };
    format!("[{shown}{limit}{salient}{full}]")
}

/// The text of a call that ran (or tried to).
pub(crate) fn call_text(p: &CallText<'_>) -> String {
    let mut text = String::new();
    match (p.ending.outcome, p.waited) {
        (Outcome::Timeout, Some((idle, on))) => text.push_str(&format!(
            "[Command timed out early: it waited for {} with no output for {}]\n",
            match on {
                WaitedOn::Terminal => "a terminal it does not have",
                _ => "input",
            },
            seconds(idle)
        )),
        (Outcome::Timeout, None) => text.push_str(&format!(
            "[Command timed out after {}]\n",
            contract_seconds(p.timeout)
        )),
        (Outcome::Cancelled, _) => text.push_str("[Command cancelled]\n"),
        _ => {}
    }
    if let Some(limit) = &p.limit {
        text.push_str(limit);
        text.push('\n');
    }
    let output = match p.spawn_error {
        Some(e) => spawn_error_text(e),
        None => view_text(p.view),
    };
    let output = match (output.is_empty(), p.stderr.is_some()) {
        (true, true) => "(no output on stdout)".to_owned(),
        (true, false) => "(no output)".to_owned(),
        (false, _) => output,
    };
    let mut sections: Vec<String> = Vec::new();
    if let Some(t) = p.truncation {
        if let Some(summary) = &p.view.omitted {
            let artifact = t.artifact_id.as_ref().map(|id| id.0.as_str());
            sections.extend(omitted_summary(summary, artifact, p.vocabulary));
        }
        sections.push(notice(t, p.max_bytes, p.max_lines, p.stopped_early));
    }
    if let (Some(folded), Some(summary)) = (p.folded, &p.view.folded) {
        sections.push(folded_notice(folded, summary, p.vocabulary));
    }
    // `streams: "separate"`: stderr's own section, windowed as stdout is.
    if let Some((view, truncation)) = p.stderr {
        let mut stderr = format!("STDERR:\n{}", view_text(view).trim_end_matches('\n'));
        if let Some(t) = truncation {
            stderr.push_str("\n\n");
            stderr.push_str(&notice(t, p.max_bytes, p.max_lines, p.stopped_early));
        }
        sections.push(stderr);
    }
    sections.extend(p.notes.iter().map(|note| note.text(p.vocabulary)));
    if p.ending.outcome != Outcome::Success && p.spawn_error.is_none() {
        match (p.ending.signal, p.ending.exit_code) {
            (Some(n), _) => {
                sections.push(format!(
                    "Command terminated by signal {} ({n})",
                    signal_name(n)
                ));
            }
            (None, Some(code)) => sections.push(format!("Command exited with code {code}")),
            (None, None) => {}
        }
    }
    sections.extend(p.denial.clone());
    if sections.is_empty() {
        text.push_str(&output);
    } else {
        text.push_str(output.trim_end_matches('\n'));
        for s in sections {
            text.push_str("\n\n");
            text.push_str(&s);
        }
    }
    text
}

/// The policy refused the command.
pub(crate) fn blocked(reason: &str, shown: &str) -> String {
    let shown = command_excerpt(shown);
    format!("Blocked: {reason}\nOriginal command: {shown}")
}

/// The policy asks for a human; nobody approved.
pub(crate) fn needs_approval(reason: &str, shown: &str) -> String {
    let shown = command_excerpt(shown);
    format!(
        "Needs approval: {reason}\nOriginal command: {shown}\nNothing was run. Ask the user to approve it, or run a command whose effect is explicit."
    )
}

/// What the model reads when a process could not be started: what failed and what to do.
pub(crate) fn spawn_error_text(e: &SpawnError) -> String {
    match e {
        SpawnError::Cwd { path, reason } => format!(
            "cannot enter the working directory {}: {reason} (choose a directory this user can enter, with cwd)",
            path.display()
        ),
        SpawnError::Program {
            program,
            reason,
            kind,
        } => {
            let hint = match kind {
                std::io::ErrorKind::NotFound => " (is it installed and on PATH?)",
                std::io::ErrorKind::PermissionDenied => " (is it executable?)",
                _ => "",
            };
            format!("failed to start {program}: {reason}{hint}")
        }
        SpawnError::LimitUnavailable(LimitUnavailable::Procs) => "the resource limits cannot be enforced: --max-procs needs the cgroup `pids` controller, which is not available here; run without it".to_owned(),
        other => spawn_error_with_remedy(other),
    }
}

/// A limit kept more loosely than the operator asked (a warning of the call).
pub(crate) fn limit_fallback(fallback: LimitFallback) -> String {
    match fallback {
        LimitFallback::ProcsPerUser => "--max-procs counts all of this user's processes here (RLIMIT_NPROC): no cgroup pids controller could be used",
        LimitFallback::MemoryPerProcess => "--max-memory limits each process's address space here (RLIMIT_AS), not the call's memory: no cgroup memory controller could be used",
        LimitFallback::CpuPerProcess => "--max-cpu limits each process's CPU time here (RLIMIT_CPU), not the call's: no cgroup cpuacct controller could be used",
    }
    .to_owned()
}

fn rc_snapshot_error_text(e: &RcSnapshotError) -> String {
    match e {
        RcSnapshotError::Spawn(s) => spawn_error_text(s),
        RcSnapshotError::TimedOut(d) => format!("~/.bashrc did not finish within {}", seconds(*d)),
        other => other.to_string(),
    }
}

impl SandboxSettings {
    /// Why the default sandbox is off here (the kernel cannot enforce it), when it is.
    pub fn default_unavailable(&self) -> Option<String> {
        let why = match self.default_off()? {
            DefaultOff::Unenforceable(u) => sandbox_unenforceable(&u),
            DefaultOff::Refused(why) => why,
        };
        Some(format!(
            "commands run unconfined: agent-exec's default sandbox cannot be enforced here ({why})"
        ))
    }
}

impl fmt::Display for TargetRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetRefused::Invalid(why) => f.write_str(why),
            TargetRefused::NotAllowed { asked, allowed } => {
                let what = if allowed.is_empty() {
                    "none (the operator allows targets with --allow-target PATTERN)".to_owned()
                } else {
                    allowed.join(", ")
                };
                write!(
                    f,
                    "target {asked:?} is not allowed; allowed targets: {what}"
                )
            }
        }
    }
}

impl fmt::Display for FarSettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FarSettingsError::NotBase64(problem) => {
                write!(
                    f,
                    "--settings is not the base64 a near side sends: {problem}"
                )
            }
            FarSettingsError::NotThisVersion(problem) => write!(
                f,
                "--settings does not hold this version's settings ({problem}); install the same agent-exec on both sides (--install)"
            ),
            FarSettingsError::Invalid(problem) => write!(f, "--settings: {problem}"),
        }
    }
}

/// A far side's answer that is not a result of this version.
pub(crate) fn foreign_answer(uri: &str, problem: &str) -> String {
    format!(
        "the answer of {uri} is not a result of this version of agent-exec ({problem}); install the same version there"
    )
}

/// A remote call that did not reach the far side, or whose connection dropped: what
/// happened (the error names the target) and what follows from it.
pub(crate) fn remote_failed(message: &str, dropped: bool) -> String {
    if dropped {
        format!(
            "[{message}]\nWhat the call did there is unknown; its sessions and jobs there ended with the connection. The next call reconnects."
        )
    } else {
        format!("[{message}]\nNothing was run.")
    }
}

/// The first line of a call that opened a new connection after the previous one dropped.
pub(crate) fn reconnected(target: &str, why: &str) -> String {
    format!(
        "[Reconnected to {target}: the previous connection dropped ({why}); its sessions and jobs there ended]"
    )
}

/// A session's shell could not be started.
pub(crate) fn shell_start_failed(e: &SpawnError) -> String {
    format!("failed to start a session shell: {}", spawn_error_text(e))
}

/// A session call that ran nothing, and why.
pub(crate) fn not_run(why: &NotRun, v: Vocabulary) -> String {
    let (output, _, kill) = job_names(v);
    match why {
        NotRun::SessionsFull(limit) => sessions_full(*limit, v),
        NotRun::Cancelled => cancelled_before_run(),
        NotRun::ShellStartFailed(e) => shell_start_failed(e),
        NotRun::Closed => closed_before_run(),
        NotRun::SessionBusy {
            session,
            job,
            command,
        } => format!(
            "Session {session:?} is busy: job {job} (`{}`) still runs in it, as its call yielded. Nothing was run. Read that job with {output} {{\"job_id\": \"{job}\", \"wait_ms\": 30000}} or stop it with {kill} {{\"job_id\": \"{job}\"}}, then call again; or run this in another session (or without one).",
            command_excerpt(command)
        ),
    }
}

/// The call was cancelled before its command started.
pub(crate) fn cancelled_before_run() -> String {
    "[Command cancelled]\nThe call was cancelled before the command started; nothing was run."
        .to_owned()
}

/// A close came while the session's shell was starting.
pub(crate) fn closed_before_run() -> String {
    "[Command cancelled]\nThe session was closed before the command could run; nothing was run."
        .to_owned()
}

/// Whether a session's end is told in the call that ended it, or in the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tense {
    This,
    Previous,
}

/// Why a session's shell is gone, for the model.
fn session_end_text(end: SessionEnd, tense: Tense) -> String {
    let which = match tense {
        Tense::This => "this",
        Tense::Previous => "the previous",
    };
    match end {
        SessionEnd::Stopped(Stop::Timeout) => format!("{which} command timed out"),
        SessionEnd::Stopped(Stop::Cancelled) => format!("{which} command was cancelled"),
        SessionEnd::Stopped(Stop::SessionClosed) => "the session was closed".to_owned(),
        SessionEnd::Stopped(_) => {
            "the shell kept writing after the output window was full, so it was ended".to_owned()
        }
        SessionEnd::Exited(c) => format!("the shell exited with code {c}"),
        SessionEnd::Killed(s) => format!("the shell was killed by {}", signal_name(s)),
        SessionEnd::DescriptorsLost => {
            "a command closed or redirected the session's own descriptors".to_owned()
        }
        SessionEnd::Gone => "the shell had already exited".to_owned(),
        _ => "the shell ended".to_owned(),
    }
}

/// `session_close` answered.
pub(crate) fn session_closed(name: &str) -> String {
    format!("Session {name:?} closed.")
}

/// `session_close` of an unknown session.
pub(crate) fn no_session(name: &str) -> String {
    format!("no session named {name:?}")
}

/// How a job (or any execution) ended: "exited with code 0", "was killed by SIGTERM (15)",
/// "could not start: …".
pub(crate) fn describe_end(o: &ExecOutcome) -> String {
    if let Some(e) = &o.spawn_error {
        return format!("could not start: {}", spawn_error_text(e));
    }
    let signal = |s: i32| format!("{} ({s})", signal_name(s));
    match (o.status, o.cancelled(), o.timed_out()) {
        (Some(ExitStatus::Signaled(s)), true, _) => format!("was killed by {}", signal(s)),
        (Some(ExitStatus::Exited(c)), true, _) => {
            format!("was asked to stop and exited with code {c}")
        }
        (Some(ExitStatus::Signaled(s)), _, true) => {
            format!("timed out and was ended by {}", signal(s))
        }
        (Some(ExitStatus::Exited(c)), _, true) => {
            format!("timed out, was asked to stop and exited with code {c}")
        }
        (Some(ExitStatus::Exited(c)), ..) => format!("exited with code {c}"),
        (Some(ExitStatus::Signaled(s)), ..) => format!("was terminated by signal {}", signal(s)),
        (None, true, _) => "was killed".to_owned(),
        (None, ..) => "ended".to_owned(),
    }
}

/// A background job was started.
pub(crate) fn job_started(id: &str, shown: &str, v: Vocabulary) -> String {
    let shown = command_excerpt(shown);
    let (output, input, kill) = job_names(v);
    format!(
        "Started background job {id}: {shown}\nRead its output with {output} {{\"job_id\": \"{id}\"}} (mode \"new\" or \"all\", wait_ms to wait); send input with {input}; stop it with {kill}."
    )
}

/// What `job_output` read.
pub(crate) struct JobRead<'a> {
    pub(crate) id: &'a str,
    /// `None` while it runs.
    pub(crate) ended: Option<&'a ExecOutcome>,
    pub(crate) elapsed: Duration,
    pub(crate) stdout_bytes: u64,
    pub(crate) stderr_bytes: u64,
    pub(crate) dropped: u64,
    /// The output read, sanitized.
    pub(crate) output: &'a str,
    pub(crate) all: bool,
    pub(crate) max_bytes: usize,
    pub(crate) artifact: Option<&'a str>,
    /// Its stderr's artifact, when its streams were kept apart.
    pub(crate) stderr_artifact: Option<&'a str>,
    /// What it is blocked on, its output idle: its input, or a terminal it does not have.
    pub(crate) wait: Option<&'a Wait>,
    /// The prompt it waits at (its last non-empty line), when it waits.
    pub(crate) prompt: Option<&'a str>,
    /// Its timeout (a call that yielded keeps its own; a background job has none).
    pub(crate) timeout: Option<Duration>,
    /// A call that yielded and then ran nothing: why.
    pub(crate) not_run: Option<&'a NotRun>,
    /// A call that yielded: the notes of its end.
    pub(crate) notes: &'a [Note],
    /// The names the client knows the methods by.
    pub(crate) vocabulary: Vocabulary,
}

/// `job_output`'s text: a status line, then the output read.
pub(crate) fn job_output(r: &JobRead<'_>) -> String {
    let state = match (r.ended, r.timeout) {
        (None, Some(timeout)) => format!(
            "running for {:.1}s, {} left of its {} timeout",
            r.elapsed.as_secs_f64(),
            whole_seconds(timeout.saturating_sub(r.elapsed)),
            whole_seconds(timeout)
        ),
        (None, None) => format!("running for {:.1}s", r.elapsed.as_secs_f64()),
        (Some(o), _) => describe_end(o),
    };
    // stdout and stderr are one pipe (written order kept): one count says it all.
    let mut text = format!(
        "[job {} {state}; {} of output]\n",
        r.id,
        count(r.stdout_bytes + r.stderr_bytes, "byte"),
    );
    if r.dropped > 0 {
        text.push_str(&if r.dropped == 1 {
            "[1 earlier byte was dropped from the job's buffer]\n".to_owned()
        } else {
            format!(
                "[{} earlier bytes were dropped from the job's buffer]\n",
                r.dropped
            )
        });
    }
    let clean = r.output;
    if clean.is_empty() {
        text.push_str(if r.all {
            "(no output)"
        } else {
            "(no new output)"
        });
    } else if clean.len() > r.max_bytes {
        let mut start = clean.len() - r.max_bytes;
        while !clean.is_char_boundary(start) {
            start += 1;
        }
        text.push_str(&if start == 1 {
            "[... 1 earlier byte not shown]\n".to_owned()
        } else {
            format!("[... {start} earlier bytes not shown]\n")
        });
        text.push_str(&clean[start..]);
    } else {
        text.push_str(clean);
    }
    match (r.artifact, r.stderr_artifact) {
        (Some(id), Some(err)) => text.push_str(&format!(
            "\n\n[Full output: artifact://{id} (stdout), artifact://{err} (stderr)]"
        )),
        (Some(id), None) => text.push_str(&format!("\n\n[Full output: artifact://{id}]")),
        (None, Some(err)) => {
            text.push_str(&format!("\n\n[Full output of stderr: artifact://{err}]"));
        }
        (None, None) => {}
    }
    if let Some(why) = r.not_run {
        text.push_str("\n\n");
        text.push_str(&not_run(why, r.vocabulary));
    }
    for note in r.notes {
        text.push_str("\n\n");
        text.push_str(&note.text(r.vocabulary));
    }
    let (_, input, kill) = job_names(r.vocabulary);
    match r.wait {
        Some(w) if w.on == WaitedOn::Terminal => text.push_str(&format!(
            "\n\n[Job {} is stuck: {} waits for keys from a terminal, and the job has none, so nothing can answer it. Stop it with {kill}, then {}]",
            r.id,
            who_waits(w),
            terminal_hint(w, r.vocabulary)
        )),
        Some(_) => {
            let at = r.prompt.map(|p| format!(": {p:?}")).unwrap_or_default();
            text.push_str(&format!(
                "\n\n[Job {} is waiting for input{at} — send it with {input}]",
                r.id
            ));
        }
        None => {}
    }
    text
}

/// `job_input` delivered.
pub(crate) fn job_input_sent(id: &str, bytes: usize, closed: bool) -> String {
    let closed = if closed { " and closed its input" } else { "" };
    format!("Sent {} to job {id}{closed}.", count(bytes as u64, "byte"))
}

/// `job_input` wrote the data but could not close the input (a terminal that took no Ctrl-D).
pub(crate) fn job_input_not_closed(id: &str, bytes: usize) -> String {
    format!(
        "Sent {} to job {id}, but its input was not closed: it is not reading its terminal (the input buffer is full). Send eof again once it has read.",
        count(bytes as u64, "byte")
    )
}

/// `job_input` wrote only part of the data: the job's input was full.
pub(crate) fn job_input_partial(id: &str, written: usize, total: usize, eof: bool) -> String {
    let not_closed = if eof {
        " and its input was not closed"
    } else {
        ""
    };
    format!(
        "Job {id} took {} of {}: it is not reading its input (the input buffer is full). The other {} were not sent{not_closed}; send them again once the job has read what it has.",
        count(written as u64, "byte"),
        count(total as u64, "byte"),
        count((total - written) as u64, "byte"),
    )
}

/// A new session could not be opened: every session was busy for as long as the call could
/// wait (its timeout).
pub(crate) fn sessions_full(limit: usize, v: Vocabulary) -> String {
    format!(
        "{limit} sessions are open and each kept running a command while this call could wait (its timeout; the limit is --max-sessions {limit}, and at most {} calls wait for room at once); close one with {}, or run this without a session",
        2 * limit,
        v.name(Method::SessionClose)
    )
}

/// `job_list`: one line per job; `finished_left_out`: the jobs held but not listed (only the
/// running ones were asked for).
pub(crate) fn job_list(
    jobs: &[agent_exec_protocol::JobSummary],
    finished_left_out: usize,
) -> String {
    if jobs.is_empty() && finished_left_out > 0 {
        return format!(
            "No running background jobs ({} held: without running they are listed).",
            count(finished_left_out as u64, "finished job")
        );
    }
    if jobs.is_empty() {
        return "No background jobs.".to_owned();
    }
    let mut text = String::new();
    for j in jobs {
        let status = match j.exit_code {
            Some(code) if j.status != "running" => format!("{} (exit {code})", j.status),
            _ => j.status.clone(),
        };
        text.push_str(&format!(
            "job {}: {status}, {:.1}s, {} of output: {}\n",
            j.job_id.as_str(),
            j.elapsed_ms as f64 / 1000.0,
            format_size(j.stdout_bytes + j.stderr_bytes),
            command_excerpt(&j.command)
        ));
    }
    text
}

/// `job_kill` answered: `None` when it did not end within the wait.
pub(crate) fn job_killed(id: &str, ended: Option<&ExecOutcome>, was_running: bool) -> String {
    match ended {
        Some(o) if was_running => format!("Job {id} {}.", describe_end(o)),
        Some(o) => format!("Job {id} had already ended: it {}.", describe_end(o)),
        None => format!("Job {id} did not end within the wait; it was sent SIGKILL."),
    }
}

/// A job operation's error, for the model: what went wrong and what to do next.
pub(crate) fn job_error_text(e: &JobError, v: Vocabulary) -> String {
    match e {
        JobError::NotFound { id, known } => format!(
            "no job with id {id}; jobs held: {}",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        ),
        JobError::TooMany(n) => format!(
            "{n} background jobs are already running (the limit); stop one with {} or wait for one to finish",
            v.name(Method::JobKill)
        ),
        JobError::NoInput { id, why } => {
            let why = match why {
                NoInput::Ended(o) => describe_end(o),
                NoInput::Closed => "has closed its input".to_owned(),
                NoInput::NotReading(e) => format!("stopped reading its input ({e})"),
                _ => "cannot take input now".to_owned(),
            };
            format!("job {id} {why}; it cannot take input")
        }
        other => other.to_string(),
    }
}

/// The artifact store could not be opened.
pub(crate) fn artifacts_disabled() -> String {
    "artifacts are disabled: the artifact directory could not be opened".to_owned()
}

/// `artifact_read` with `grep`: the numbered lines, and a footer saying how many matched.
pub(crate) fn grep_hits(hits: &agent_exec_sink::GrepHits, pattern: &str) -> String {
    let mut text = hits.text.clone();
    if hits.matches == 0 {
        return format!(
            "No line of the {} matches {pattern:?}.",
            count(hits.total_lines, "line")
        );
    }
    if hits.truncated {
        text.push_str("\n[Output limit reached: narrow the pattern, or read by offset.]");
    }
    text.push_str(&format!(
        "\n[{} of {} matched {pattern:?}.]",
        count(hits.matches, "line"),
        hits.total_lines
    ));
    text
}

/// `artifact_read`'s footer when more follows.
/// The note under a page of an artifact that goes on; `capped`: the read asked for more than
/// one page holds (the output window's bytes).
pub(crate) fn artifact_more(from: u64, to: u64, size: u64, capped: Option<u64>) -> String {
    let page = match capped {
        Some(page) => format!(" One read returns at most {page} bytes (the output window)."),
        None => String::new(),
    };
    format!("{ARTIFACT_MORE}{from}-{to} of {size}.{page} Read on with offset {to}.]")
}

use agent_exec_protocol::ARTIFACT_MORE;

/// `artifact_read` from an offset at or past the end.
pub(crate) fn artifact_past_end(id: &str, offset: u64, size: u64) -> String {
    format!(
        "offset {offset} is past the end of artifact {id}: it holds {size} bytes, so offsets run from 0 to {}; read from a smaller offset",
        size.saturating_sub(1)
    )
}

// ---------------------------------------------------------------------------------------------
// The executor's sandbox failures, with the way on in the CLI's words (issue 29). The executor
// says what happened and names a `Remedy`; the flags are worded here, where the model's text is.
// ---------------------------------------------------------------------------------------------

/// The way on from a sandbox this machine cannot give, appended to what happened.
pub(crate) fn sandbox_remedy(remedy: agent_exec_executor::sandbox::Remedy) -> &'static str {
    use agent_exec_executor::sandbox::Remedy;
    match remedy {
        Remedy::EnableUserNamespaces => {
            "; enable them (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone=1) or run with --sandbox off"
        }
        _ => "; run with --sandbox off to go without",
    }
}

/// Why the sandbox cannot be had here, and the way on.
pub(crate) fn sandbox_unenforceable(u: &agent_exec_executor::sandbox::Unenforceable) -> String {
    format!("{}{}", u.reason, sandbox_remedy(u.remedy))
}

/// Why this machine cannot give the sandbox, and the way on; `None` where it can (the CLI's
/// `--version` line says it).
pub fn sandbox_unavailable_here() -> Option<String> {
    agent_exec_executor::sandbox::support()
        .unenforceable()
        .map(|u| sandbox_unenforceable(&u))
}

/// A spawn error [`spawn_error_text`] has no wording of its own for: its message, and for a
/// sandbox this machine cannot give, the way on.
fn spawn_error_with_remedy(e: &SpawnError) -> String {
    match e {
        SpawnError::Sandbox {
            remedy: Some(remedy),
            ..
        } => format!("{e}{}", sandbox_remedy(*remedy)),
        other => other.to_string(),
    }
}
