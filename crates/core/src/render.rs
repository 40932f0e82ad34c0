//! The text a model reads (contract §3, "The text").

use agent_exec_sink::format_size;

use crate::result::{Outcome, Truncation};

/// Everything the text is made of.
pub(crate) struct TextParts<'a> {
    pub(crate) outcome: Outcome,
    pub(crate) timeout_label: &'a str,
    pub(crate) output: &'a str,
    pub(crate) truncation: Option<&'a Truncation>,
    pub(crate) max_bytes: usize,
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<(i32, String)>,
    pub(crate) notes: &'a [String],
    /// The command was stopped early (a `| head` was satisfied): totals are lower bounds.
    pub(crate) stopped_early: bool,
}

/// `[Showing lines A-B of N (50.0KB limit). Full: artifact://ID]`, naming every range when
/// more than one is shown.
pub(crate) fn notice(t: &Truncation, max_bytes: usize, stopped_early: bool) -> String {
    let ranges: Vec<String> = if t.shown_ranges.is_empty() {
        vec![format!("{}-{}", t.shown_range[0], t.shown_range[1])]
    } else {
        t.shown_ranges
            .iter()
            .map(|[a, b]| format!("{a}-{b}"))
            .collect()
    };
    let limit = if t.truncated_by == "bytes" {
        format!(" ({} limit)", format_size(max_bytes as u64))
    } else {
        format!(" ({} lines limit)", t.output_lines)
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
    let plus = if stopped_early { "+" } else { "" };
    format!(
        "[Showing lines {} of {}{plus}{limit}{salient}{full}]",
        ranges.join(", "),
        t.total_lines
    )
}

pub(crate) fn render(p: &TextParts<'_>) -> String {
    let mut text = String::new();
    match p.outcome {
        Outcome::Timeout => text.push_str(&format!(
            "[Command timed out after {} seconds]\n",
            p.timeout_label
        )),
        Outcome::Cancelled => text.push_str("[Command cancelled]\n"),
        _ => {}
    }
    let output = if p.output.is_empty() {
        "(no output)"
    } else {
        p.output
    };
    let mut sections: Vec<String> = Vec::new();
    if let Some(t) = p.truncation {
        sections.push(notice(t, p.max_bytes, p.stopped_early));
    }
    sections.extend(p.notes.iter().cloned());
    if p.outcome != Outcome::Success {
        match (&p.signal, p.exit_code) {
            (Some((n, name)), _) => {
                sections.push(format!("Command terminated by signal {name} ({n})"));
            }
            (None, Some(code)) => sections.push(format!("Command exited with code {code}")),
            (None, None) => {}
        }
    }
    if sections.is_empty() {
        text.push_str(output);
    } else {
        text.push_str(output.trim_end_matches('\n'));
        for s in sections {
            text.push_str("\n\n");
            text.push_str(&s);
        }
    }
    text
}
