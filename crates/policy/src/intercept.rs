//! Interception: shell commands that a dedicated tool of the agent does better. Seven rules
//! on parsed commands: read (`cat head tail less more`), grep (`grep rg ag ack`), find
//! (`find fd locate` with name/type filters), edit (`sed -i`, `perl -i`, `awk -i inplace`) and
//! write (`echo`, `printf`, `cat <<` redirected into a file).

use crate::command::{Class, Cmd, Finding, Origin};
use crate::config::Interception;
use crate::flags::parse;
use crate::reasons::Reason;
use crate::rule::RuleId;
use crate::tools::spec_for;
use crate::words::Word;

/// Devices that are not files to write with a tool.
fn is_device(word: &Word) -> bool {
    word.text().starts_with("/dev/")
}

/// Checks one command against the interception rules.
pub(crate) fn check(cmd: &Cmd, config: &Interception) -> Option<Finding> {
    if !config.enabled || cmd.origin != Origin::Direct {
        return None;
    }
    let program = cmd.program()?;
    let (rule, tool, does) = rule_for(cmd, &program)?;
    let name = config
        .available_tools
        .iter()
        .find(|t| t.eq_ignore_ascii_case(tool))?;
    Some(Finding::deny(
        Class::Intercept,
        rule,
        Reason::UseTool {
            does: &does,
            tool: name,
        }
        .text(),
    ))
}

/// (rule, tool, what the command does) when a rule applies.
fn rule_for<'a>(cmd: &Cmd, program: &'a str) -> Option<(RuleId, &'static str, Reason<'a>)> {
    let args = cmd.args();
    let p = parse(args, &spec_for(program));
    let redirected_out = cmd.stdout_files().next().is_some();
    match program {
        "cat" if cmd.here_input().is_some() => write_rule(cmd, program, &p),
        "echo" | "printf" => write_rule(cmd, program, &p),
        "cat" | "head" | "tail" | "less" | "more" => {
            if cmd.piped_out || redirected_out || cmd.stdin_redirected() {
                return None;
            }
            if program == "tail" && p.has('f', "follow") {
                return None;
            }
            let files = p.positionals.iter().filter(|&&i| !args[i].is("-")).count();
            (files > 0).then_some((RuleId::InterceptRead, "read", Reason::ReadsFile { program }))
        }
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => {
            if cmd.piped_in || cmd.piped_out || redirected_out || cmd.stdin_redirected() {
                return None;
            }
            // `grep -q` is a test in a condition, not a search to read.
            if p.has('q', "quiet") || p.has_long("silent") {
                return None;
            }
            Some((
                RuleId::InterceptGrep,
                "grep",
                Reason::SearchesFiles { program },
            ))
        }
        "find" | "fd" | "fdfind" | "locate" | "plocate" | "mlocate" => {
            if cmd.piped_out || redirected_out {
                return None;
            }
            let filtered = match program {
                "find" => {
                    let actions = [
                        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf",
                        "-fls", "-fprint0",
                    ];
                    if args.iter().any(|a| actions.iter().any(|x| a.is(x))) {
                        return None;
                    }
                    let filters = [
                        "-name",
                        "-iname",
                        "-type",
                        "-path",
                        "-ipath",
                        "-regex",
                        "-iregex",
                        "-wholename",
                        "-iwholename",
                    ];
                    args.iter().any(|a| filters.iter().any(|x| a.is(x)))
                }
                "fd" | "fdfind" => {
                    if p.has('x', "exec") || p.has('X', "exec-batch") {
                        return None;
                    }
                    !p.positionals.is_empty()
                        || p.has('e', "extension")
                        || p.has('t', "type")
                        || p.has('g', "glob")
                }
                _ => !p.positionals.is_empty(),
            };
            filtered.then_some((
                RuleId::InterceptFind,
                "find",
                Reason::LooksForFiles { program },
            ))
        }
        _ if cmd.effects.in_place => Some((
            RuleId::InterceptEdit,
            "edit",
            Reason::EditsInPlace { program },
        )),
        _ => None,
    }
}

/// `echo`, `printf`, `cat <<EOF` redirected into a file.
fn write_rule<'a>(
    cmd: &Cmd,
    program: &'a str,
    p: &crate::flags::Parsed,
) -> Option<(RuleId, &'static str, Reason<'a>)> {
    if cmd.piped_in || (program == "cat" && !p.positionals.is_empty()) {
        return None;
    }
    let target = cmd.stdout_files().find(|w| !is_device(w))?;
    Some((
        RuleId::InterceptWrite,
        "write",
        Reason::WritesFile {
            program,
            file: target.text(),
        },
    ))
}
