//! Wrappers: programs that run another program given in their arguments (`sudo`, `env`,
//! `timeout`, `nice`, ...). Unwrapping finds the program that really runs.

use crate::command::{Unwrapped, program_name};
use crate::flags::canonical_long;
use crate::tools::{Runs, lookup};
use crate::words::Word;

/// Whether the tool table knows `name` as a wrapper.
pub(crate) fn is_wrapper(name: &str) -> bool {
    wrapper(name).is_some()
}

fn wrapper(name: &str) -> Option<&'static Runs> {
    lookup(name)?.runs.as_ref()
}

/// True for `NAME=value`.
pub(crate) fn is_assignment(text: &str) -> Option<&str> {
    let (name, _) = text.split_once('=')?;
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    ok.then_some(name)
}

/// Finds the program that runs, level by level.
pub(crate) fn unwrap(words: &[Word]) -> Unwrapped {
    let mut u = Unwrapped {
        levels: vec![0],
        ..Unwrapped::default()
    };
    for _ in 0..32 {
        let idx = u.start();
        let Some(name) = words.get(idx).and_then(program_name) else {
            break;
        };
        let Some(spec) = wrapper(&name) else {
            break;
        };
        let mut from = idx + 1;
        if !spec.sub.is_empty() {
            // Options may come before the subcommand (`pnpm --package=x dlx …`).
            while let Some(option) = words.get(from).and_then(Word::literal) {
                if !option.starts_with('-') || spec.sub.contains(&option.as_str()) {
                    break;
                }
                if let Some((opt, value)) = option.split_once('=') {
                    note_value(&name, spec, opt, Some(Word::lit(value)), &mut u);
                    from += 1;
                } else if spec.value_opts.contains(&option.as_str()) {
                    note_value(&name, spec, &option, words.get(from + 1).cloned(), &mut u);
                    from += 2;
                } else {
                    from += 1;
                }
            }
            match words.get(from).and_then(Word::literal) {
                Some(sub) if spec.sub.contains(&sub.as_str()) => from += 1,
                _ => break,
            }
        }
        match inner_start(&name, words, from, spec, &mut u) {
            Some(next) if next < words.len() => {
                if spec.privileged {
                    u.privileged.push(u.levels.len() - 1);
                }
                u.levels.push(next);
            }
            _ => break,
        }
    }
    u
}

fn inner_start(
    wrapper_name: &str,
    words: &[Word],
    mut j: usize,
    spec: &Runs,
    u: &mut Unwrapped,
) -> Option<usize> {
    let mut skip = spec.skip;
    while j < words.len() {
        let Some(text) = words[j].literal() else {
            // A dynamic word: the command (or an operand) starts here.
            if skip > 0 {
                skip -= 1;
                j += 1;
                continue;
            }
            return Some(j);
        };
        if text == "--" {
            j += 1;
            while skip > 0 && j < words.len() {
                skip -= 1;
                j += 1;
            }
            return Some(j);
        }
        if spec.assignments
            && let Some(name) = is_assignment(&text)
        {
            u.env_assigns.push(name.to_owned());
            j += 1;
            continue;
        }
        if text.len() > 1 && text.starts_with('-') {
            if spec.stop_opts.contains(&text.as_str()) {
                return None;
            }
            if let Some(long) = text.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_owned())),
                    None => (long, None),
                };
                let name = format!("--{}", canonical_long(name, &spec.longs()));
                if spec.stop_opts.contains(&name.as_str()) {
                    return None;
                }
                let value = if inline.is_some() {
                    inline.map(|v| Word::lit(&v))
                } else if spec.value_opts.contains(&name.as_str()) {
                    j += 1;
                    words.get(j).cloned()
                } else {
                    None
                };
                note_value(wrapper_name, spec, &name, value, u);
                j += 1;
                continue;
            }
            let chars: Vec<char> = text.chars().skip(1).collect();
            for (k, c) in chars.iter().enumerate() {
                let opt = format!("-{c}");
                if spec.stop_opts.contains(&opt.as_str()) {
                    return None;
                }
                if spec.value_opts.contains(&opt.as_str()) {
                    let rest: String = chars[k + 1..].iter().collect();
                    let value = if rest.is_empty() {
                        j += 1;
                        words.get(j).cloned()
                    } else {
                        Some(Word::lit(&rest))
                    };
                    note_value(wrapper_name, spec, &opt, value, u);
                    break;
                }
            }
            j += 1;
            continue;
        }
        if skip > 0 {
            skip -= 1;
            j += 1;
            continue;
        }
        return Some(j);
    }
    None
}

fn note_value(wrapper_name: &str, spec: &Runs, opt: &str, value: Option<Word>, u: &mut Unwrapped) {
    if let Some(v) = &value {
        u.option_values.push((opt.to_owned(), v.clone()));
    }
    if spec.chdir.contains(&opt) {
        u.chdir = value;
    } else if wrapper_name == "env" && (opt == "-S" || opt == "--split-string") {
        u.split_string = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inner(cmd: &str) -> String {
        let words: Vec<Word> = cmd.split(' ').map(Word::lit).collect();
        let u = unwrap(&words);
        words[u.start()..]
            .iter()
            .map(Word::text)
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn unwraps_nested_wrappers() {
        assert_eq!(inner("sudo timeout 9 rm -rf /"), "rm -rf /");
        assert_eq!(
            inner("sudo -u root -E nice -n 5 ionice -c3 env A=1 rm x"),
            "rm x"
        );
        assert_eq!(
            inner("timeout -s KILL --foreground 5 nohup stdbuf -oL ls"),
            "ls"
        );
        assert_eq!(inner("/usr/bin/sudo -- /bin/rm -rf /"), "/bin/rm -rf /");
        assert_eq!(inner("busybox rm -rf /"), "rm -rf /");
        assert_eq!(inner("chroot /mnt rm -rf /"), "rm -rf /");
        assert_eq!(inner("command -v rm"), "command -v rm");
        assert_eq!(inner("sudo"), "sudo");
    }
}
