//! Wrappers: programs that run another program given in their arguments (`sudo`, `env`,
//! `timeout`, `nice`, ...). Unwrapping finds the program that really runs.

use crate::flags::canonical_long;
use crate::words::Word;

/// The word a program name resolves to, without its directory (`/usr/bin/sudo` → `sudo`).
pub(crate) fn program_name(word: &Word) -> Option<String> {
    let text = word.literal()?;
    let base = text.rsplit('/').next().unwrap_or(&text);
    Some(base.to_owned())
}

struct Wrapper {
    names: &'static [&'static str],
    /// Options taking a value (`-u`, `--user`); short ones may have it attached.
    value_opts: &'static [&'static str],
    /// Options after which no command follows (`command -v`, `sudo -l`).
    stop_opts: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot NEWROOT`).
    skip: usize,
    /// `NAME=value` words before the command are environment assignments.
    assignments: bool,
    /// Options that change the directory the command runs in.
    chdir: &'static [&'static str],
    /// The wrapper runs the command with other privileges.
    privileged: bool,
    /// A subcommand that must follow the name for the rest to be a command (`poetry run`,
    /// `pnpm exec`); empty when the name alone wraps.
    sub: &'static [&'static str],
}

const W: Wrapper = Wrapper {
    sub: &[],
    names: &[],
    value_opts: &[],
    stop_opts: &[],
    skip: 0,
    assignments: false,
    chdir: &[],
    privileged: false,
};

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["sudo"],
        value_opts: &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-r",
            "-t",
            "-T",
            "-U",
            "-C",
            "-D",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--close-from",
            "--chdir",
        ],
        stop_opts: &[
            "-l",
            "-v",
            "-k",
            "-K",
            "-e",
            "-V",
            "--list",
            "--validate",
            "--reset-timestamp",
            "--remove-timestamp",
            "--edit",
            "--version",
            "--help",
        ],
        chdir: &["-D", "--chdir"],
        privileged: true,
        assignments: true,
        ..W
    },
    Wrapper {
        names: &["doas"],
        value_opts: &["-u", "-C"],
        stop_opts: &["-L"],
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["pkexec"],
        value_opts: &["--user"],
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["env"],
        value_opts: &[
            "-u",
            "--unset",
            "-C",
            "--chdir",
            "-S",
            "--split-string",
            "-P",
        ],
        stop_opts: &["--help", "--version"],
        assignments: true,
        chdir: &["-C", "--chdir"],
        ..W
    },
    Wrapper {
        names: &["nice"],
        value_opts: &["-n", "--adjustment"],
        ..W
    },
    Wrapper {
        names: &["ionice"],
        value_opts: &["-c", "-n", "--class", "--classdata"],
        stop_opts: &["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
        ..W
    },
    Wrapper {
        names: &["timeout", "gtimeout"],
        value_opts: &["-s", "--signal", "-k", "--kill-after"],
        skip: 1,
        ..W
    },
    Wrapper {
        names: &["time"],
        value_opts: &["-f", "--format", "-o", "--output"],
        ..W
    },
    Wrapper {
        names: &["command"],
        stop_opts: &["-v", "-V"],
        ..W
    },
    Wrapper {
        names: &["exec"],
        value_opts: &["-a"],
        ..W
    },
    Wrapper {
        names: &["stdbuf", "gstdbuf"],
        value_opts: &["-i", "-o", "-e", "--input", "--output", "--error"],
        ..W
    },
    Wrapper {
        names: &["chroot"],
        value_opts: &["--userspec", "--groups"],
        skip: 1,
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["flock"],
        value_opts: &[
            "-w",
            "--wait",
            "--timeout",
            "-E",
            "--conflict-exit-code",
            "-c",
            "--command",
        ],
        skip: 1,
        ..W
    },
    Wrapper {
        names: &["strace", "ltrace"],
        value_opts: &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-P", "-X",
        ],
        ..W
    },
    Wrapper {
        names: &["chrt"],
        value_opts: &[
            "-T",
            "-P",
            "-D",
            "--sched-runtime",
            "--sched-period",
            "--sched-deadline",
        ],
        stop_opts: &["-p", "--pid", "-m", "--max"],
        skip: 1,
        ..W
    },
    Wrapper {
        names: &["taskset"],
        stop_opts: &["-p", "--pid"],
        skip: 1,
        ..W
    },
    Wrapper {
        names: &["runuser"],
        value_opts: &[
            "-u",
            "-g",
            "-G",
            "--user",
            "--group",
            "--supp-group",
            "-s",
            "--shell",
            "-w",
            "--whitelist-environment",
            "-c",
            "--command",
        ],
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["systemd-run"],
        value_opts: &[
            "-p",
            "--property",
            "-u",
            "--unit",
            "-E",
            "--setenv",
            "-M",
            "--machine",
            "-H",
            "--host",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--nice",
            "-D",
            "--working-directory",
            "--on-active",
            "--on-calendar",
            "--timer-property",
        ],
        chdir: &["-D", "--working-directory"],
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["setpriv"],
        value_opts: &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
        ],
        stop_opts: &["-d", "--dump", "--help", "--version"],
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["nsenter"],
        value_opts: &["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
        stop_opts: &["--help", "--version"],
        privileged: true,
        ..W
    },
    Wrapper {
        names: &[
            "poetry",
            "pdm",
            "hatch",
            "rye",
            "uv",
            "pipenv",
            "pixi",
            "conda",
            "mamba",
            "micromamba",
        ],
        value_opts: &[
            "-n",
            "--name",
            "-p",
            "--prefix",
            "--cwd",
            "--with",
            "--python",
            "--project",
            "--directory",
            "--package",
            "--extra",
            "--group",
            "--env-file",
            "--index",
            "-e",
            "--env",
            "--environment",
        ],
        chdir: &["--cwd", "--directory"],
        sub: &["run"],
        ..W
    },
    Wrapper {
        names: &["npm", "pnpm", "yarn", "bun", "mise", "rtx"],
        value_opts: &[
            "-p",
            "--package",
            "-c",
            "--call",
            "-w",
            "--workspace",
            "-C",
            "--cd",
        ],
        chdir: &["-C", "--cd"],
        sub: &["exec", "dlx", "x"],
        ..W
    },
    Wrapper {
        names: &["perf"],
        value_opts: &[
            "-e", "--event", "-o", "--output", "-p", "--pid", "-r", "--repeat", "-F", "--freq",
            "-c", "--count", "-t", "--tid", "-C", "--cpu", "-G", "--cgroup",
        ],
        sub: &["stat", "record", "trace", "top"],
        ..W
    },
    Wrapper {
        names: &["toolbox", "distrobox"],
        value_opts: &[
            "-c",
            "--container",
            "-r",
            "--release",
            "-d",
            "--distro",
            "-n",
            "--name",
        ],
        sub: &["run", "enter"],
        ..W
    },
    Wrapper {
        names: &[
            "flatpak-spawn",
            "host-spawn",
            "tini",
            "dumb-init",
            "catatonit",
            "shx",
            "chpst",
            "s6-setuidgid",
            "with-contenv",
        ],
        value_opts: &["--directory", "--env", "-u", "-U", "-e", "-g"],
        ..W
    },
    Wrapper {
        names: &["gosu", "su-exec", "setuidgid"],
        skip: 1,
        privileged: true,
        ..W
    },
    Wrapper {
        names: &["bundle"],
        sub: &["exec"],
        ..W
    },
    Wrapper {
        names: &["direnv"],
        sub: &["exec"],
        skip: 1,
        ..W
    },
    Wrapper {
        names: &["npx", "pnpx", "bunx", "uvx", "pipx"],
        value_opts: &[
            "-p",
            "--package",
            "-c",
            "--call",
            "--from",
            "--with",
            "--python",
        ],
        ..W
    },
    Wrapper {
        names: &["doppler", "op", "infisical", "dotenvx"],
        value_opts: &["-p", "--project", "-c", "--config", "--env-file", "-f"],
        sub: &["run"],
        ..W
    },
    Wrapper {
        names: &["aws-vault"],
        value_opts: &["-d", "--duration", "-t", "--mfa-token", "--region"],
        sub: &["exec"],
        skip: 1,
        ..W
    },
    Wrapper {
        names: &["xvfb-run"],
        value_opts: &[
            "-n",
            "-s",
            "-f",
            "-e",
            "-p",
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
        ],
        ..W
    },
    Wrapper {
        names: &["fakeroot"],
        value_opts: &["-l", "-s", "-i", "-b", "--lib", "--faked"],
        ..W
    },
    Wrapper {
        names: &["proxychains", "proxychains4"],
        value_opts: &["-f"],
        ..W
    },
    Wrapper {
        names: &["torsocks"],
        value_opts: &["-u", "-p", "-a", "-P"],
        ..W
    },
    Wrapper {
        names: &["caffeinate"],
        value_opts: &["-t", "-w"],
        ..W
    },
    Wrapper {
        names: &["unshare"],
        value_opts: &[
            "--map-user",
            "--map-group",
            "-S",
            "-G",
            "--setuid",
            "--setgid",
            "-R",
            "--root",
            "-w",
            "--wd",
        ],
        ..W
    },
    Wrapper {
        names: &[
            "nohup",
            "builtin",
            "setsid",
            "busybox",
            "toybox",
            "coproc",
            "nocorrect",
            "noglob",
            "unbuffer",
            "catchsegv",
            "firejail",
            "valgrind",
            "dbus-run-session",
            "ssh-agent",
        ],
        stop_opts: &["--list", "--help", "--version"],
        ..W
    },
];

impl Wrapper {
    /// The long options the wrapper's lists name, without `--`, for abbreviations.
    fn longs(&self) -> Vec<&'static str> {
        let mut longs: Vec<&'static str> = self
            .value_opts
            .iter()
            .chain(self.stop_opts)
            .chain(self.chdir)
            .filter_map(|o| o.strip_prefix("--"))
            .collect();
        longs.sort_unstable();
        longs.dedup();
        longs
    }
}

pub(crate) fn is_wrapper(name: &str) -> bool {
    wrapper(name).is_some()
}

fn wrapper(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.names.contains(&name))
}

/// The result of unwrapping one command's words.
#[derive(Clone, Debug, Default)]
pub(crate) struct Unwrapped {
    /// Where each level starts: `[0]` is the whole command, the last is the real program.
    pub(crate) levels: Vec<usize>,
    /// Levels (indices into `levels`) whose wrapper escalates privileges.
    pub(crate) privileged: Vec<usize>,
    /// Environment names set by `env K=v` / `sudo K=v`.
    pub(crate) env_assigns: Vec<String>,
    /// A directory the inner command runs in (`sudo -D`, `env -C`).
    pub(crate) chdir: Option<Word>,
    /// `env -S STRING`: the string, re-split by env as a command line.
    pub(crate) split_string: Option<Word>,
    /// Every wrapper option's value, by option (`strace -o /tmp/trace`): paths among them
    /// are checked like the command's own.
    pub(crate) option_values: Vec<(String, Word)>,
}

impl Unwrapped {
    /// Index of the word that names the real program.
    pub(crate) fn start(&self) -> usize {
        self.levels.last().copied().unwrap_or(0)
    }
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
            match words.get(from).and_then(Word::literal) {
                Some(sub) if spec.sub.contains(&sub.as_str()) => from += 1,
                _ => break,
            }
        }
        match inner_start(words, from, spec, &mut u) {
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

fn inner_start(words: &[Word], mut j: usize, spec: &Wrapper, u: &mut Unwrapped) -> Option<usize> {
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
                note_value(spec, &name, value, u);
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
                    note_value(spec, &opt, value, u);
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

fn note_value(spec: &Wrapper, opt: &str, value: Option<Word>, u: &mut Unwrapped) {
    if let Some(v) = &value {
        u.option_values.push((opt.to_owned(), v.clone()));
    }
    if spec.chdir.contains(&opt) {
        u.chdir = value;
    } else if spec.names.contains(&"env") && (opt == "-S" || opt == "--split-string") {
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
