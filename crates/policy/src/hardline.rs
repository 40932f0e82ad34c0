//! The hardline guard: commands that are never allowed, whatever the configuration says.
//! Each check looks at the parsed command (program, normalised flags, resolved operands), so
//! the same words used as data (`echo reboot`, `grep -rn mkfs docs/`) pass.

use std::path::{Path, PathBuf};

use crate::command::{Class, Cmd, Finding, Origin};
use crate::flags::{find_expression_start, parse, spec_for};
use crate::paths::{Target, classify, display, normalize};
use crate::words::{Seg, Word};

/// Devices a command may write to without harm.
const SAFE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/console",
    "/dev/ptmx",
];
const SAFE_DEVICE_DIRS: &[&str] = &[
    "/dev/fd/",
    "/dev/pts/",
    "/dev/shm/",
    "/dev/tcp/",
    "/dev/udp/",
    "/dev/mqueue/",
];

const MKFS: &[&str] = &[
    "mke2fs",
    "mkswap",
    "mkdosfs",
    "mkntfs",
    "mkexfatfs",
    "wipefs",
    "blkdiscard",
];
const PARTITIONERS: &[&str] = &[
    "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "cgdisk",
];

/// Checks one command; `None` when the guard has nothing to say.
pub(crate) fn check(cmd: &Cmd, home: &Path) -> Option<Finding> {
    if let Some(f) = writes(cmd) {
        return Some(f);
    }
    let program = cmd.program()?;
    let args = cmd.args();
    match program.as_str() {
        "rm" => rm(cmd, args, home),
        "find" => find(cmd, args, home),
        "rsync" => rsync(cmd, args, home),
        "chmod" | "chown" | "chgrp" => chmod(cmd, &program, args, home),
        "dd" => None,
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(power(&program)),
        "init" | "telinit" => {
            let level = args.iter().find(|a| !a.starts_with("-"))?.literal()?;
            let harmless = matches!(
                level.as_str(),
                "q" | "Q" | "u" | "U" | "2" | "3" | "4" | "5"
            );
            (!harmless).then(|| power(&format!("{program} {level}")))
        }
        "systemctl" | "loginctl" => systemctl(&program, args),
        "kexec" => args
            .iter()
            .any(|a| a.is("-e") || a.is("--exec"))
            .then(|| power("kexec -e")),
        "kill" => kill(args),
        "killall5" => Some(kill_finding("killall5 signals every process on the system")),
        "pkill" | "killall" => {
            let p = parse(args, &spec_for("kill"));
            p.positionals
                .iter()
                .filter_map(|&i| args[i].literal())
                .any(|t| t == "init" || t == "systemd" || t == "launchd")
                .then(|| kill_finding("it kills PID 1 (init)"))
        }
        p if p.starts_with("mkfs") || MKFS.contains(&p) => device_tool(args, p, false),
        p if PARTITIONERS.contains(&p) => device_tool(args, p, true),
        _ => None,
    }
}

/// Whether `rm` aimed at a protected directory: the finding for `target`.
fn delete_finding(
    rule: &str,
    what: &str,
    word: &Word,
    target: &Target,
    home: &Path,
) -> Option<Finding> {
    let shown = word.text();
    let deny = |kind: &str, reason: String| {
        Some(Finding::deny(
            Class::Hardline,
            format!("hardline.{rule}-{kind}"),
            reason,
        ))
    };
    match target {
        Target::Root => deny(
            "root",
            format!(
                "{what} of / (`{shown}`) is never allowed (hardline guard). Delete a specific project directory instead."
            ),
        ),
        Target::Home => deny(
            "home",
            format!(
                "{what} of the home directory (`{shown}`) is never allowed (hardline guard). Delete a specific directory inside it instead."
            ),
        ),
        Target::System(dir) => deny(
            "system",
            format!(
                "{what} of the system directory {} (`{shown}`) is never allowed (hardline guard). Delete a specific project directory instead.",
                display(Path::new(dir), home)
            ),
        ),
        Target::Unknown(why) => Some(Finding::ask(
            Class::Unresolved,
            format!("unresolved.{rule}-target"),
            format!("{what}: {why}, so it needs approval. Write the target path literally."),
        )),
        Target::Safe => None,
    }
}

fn worst(found: Option<Finding>, next: Option<Finding>) -> Option<Finding> {
    match (found, next) {
        (Some(a), Some(b)) => Some(if b.key() < a.key() { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn rm(cmd: &Cmd, args: &[Word], home: &Path) -> Option<Finding> {
    let p = parse(args, &spec_for("rm"));
    let recursive = p.has('r', "recursive");
    let no_preserve = p.has_long("no-preserve-root");
    let mut found = None;
    if recursive || no_preserve {
        for &i in &p.positionals {
            let t = classify(&args[i], &cmd.cwd, home);
            found = worst(
                found,
                delete_finding("recursive-delete", "recursive deletion", &args[i], &t, home),
            );
        }
        // A dynamic word may hide more flags; a dynamic flag word next to `/` is still `/`.
    } else if cmd.origin == Origin::Exec && p.positionals.iter().any(|&i| !args[i].is_static()) {
        found = Some(Finding::ask(
            Class::Unresolved,
            "unresolved.xargs",
            "`rm` gets file names only known at run time (from xargs or find), so it needs approval. List the files explicitly or use `find ... -delete` on a project directory.",
        ));
    } else if args.iter().any(|a| !a.is_static()) {
        // `rm $FLAGS /`: the flags are unknown, so the targets matter as if recursive.
        for &i in &p.positionals {
            if !args[i].is_static() {
                continue;
            }
            let t = classify(&args[i], &cmd.cwd, home);
            if matches!(t, Target::Root | Target::Home | Target::System(_)) {
                found = worst(
                    found,
                    Some(Finding::ask(
                        Class::Unresolved,
                        "unresolved.recursive-delete-target",
                        format!(
                            "`rm` with arguments only known at run time could delete `{}` recursively, so it needs approval.",
                            args[i].text()
                        ),
                    )),
                );
            }
        }
    }
    found
}

fn find(cmd: &Cmd, args: &[Word], home: &Path) -> Option<Finding> {
    if !args.iter().any(|a| a.is("-delete")) {
        return None;
    }
    let first_expr = find_expression_start(args);
    let starts: Vec<Word> = if first_expr == 0 {
        vec![Word::lit(".")]
    } else {
        args[..first_expr].to_vec()
    };
    let mut found = None;
    for s in &starts {
        let t = classify(s, &cmd.cwd, home);
        found = worst(
            found,
            delete_finding("find-delete", "`find -delete`", s, &t, home),
        );
    }
    found.map(|mut f| {
        // One rule id for find, whatever the directory.
        if f.class == Class::Hardline {
            f.rule = "hardline.find-delete".into();
        }
        f
    })
}

fn rsync(cmd: &Cmd, args: &[Word], home: &Path) -> Option<Finding> {
    let p = parse(args, &spec_for("rsync"));
    let deletes = p
        .longs
        .iter()
        .any(|l| l.starts_with("del") || l == "remove-source-files");
    if !deletes {
        return None;
    }
    let dest = &args[*p.positionals.last()?];
    let text = dest.text();
    if let Some((host, _)) = text.split_once(':')
        && !host.contains('/')
    {
        return None; // Remote destination.
    }
    let t = classify(dest, &cmd.cwd, home);
    delete_finding("rsync-delete", "`rsync --delete`", dest, &t, home).map(|mut f| {
        if f.class == Class::Hardline {
            f.rule = "hardline.rsync-delete".into();
        }
        f
    })
}

fn chmod(cmd: &Cmd, program: &str, args: &[Word], home: &Path) -> Option<Finding> {
    let p = parse(args, &spec_for(program));
    if !p.has('R', "recursive") {
        return None;
    }
    let skip = usize::from(!p.longs.iter().any(|l| l == "reference"));
    let mut found = None;
    for &i in p.positionals.iter().skip(skip) {
        let t = classify(&args[i], &cmd.cwd, home);
        let t = if t == Target::Home { Target::Safe } else { t };
        found = worst(
            found,
            delete_finding(
                "recursive-chmod",
                &format!("recursive `{program}`"),
                &args[i],
                &t,
                home,
            ),
        );
    }
    found.map(|mut f| {
        if f.class == Class::Hardline {
            f.rule = "hardline.recursive-chmod".into();
        }
        f
    })
}

fn power(what: &str) -> Finding {
    Finding::deny(
        Class::Hardline,
        "hardline.power",
        format!(
            "`{what}` would shut down or restart the machine, which is never allowed (hardline guard). Ask the user to do it if it is really needed."
        ),
    )
}

fn systemctl(program: &str, args: &[Word]) -> Option<Finding> {
    let p = parse(args, &spec_for("systemctl"));
    let mut ops = p.positionals.iter().filter_map(|&i| args[i].literal());
    let verb = ops.next()?;
    let power_verbs = [
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "soft-reboot",
        "suspend-then-hibernate",
    ];
    if power_verbs.contains(&verb.as_str())
        || (program == "systemctl" && matches!(verb.as_str(), "emergency" | "rescue"))
    {
        return Some(power(&format!("{program} {verb}")));
    }
    if matches!(verb.as_str(), "isolate" | "start") {
        let targets = [
            "poweroff.target",
            "reboot.target",
            "halt.target",
            "kexec.target",
            "rescue.target",
            "emergency.target",
            "poweroff",
            "reboot",
            "halt",
        ];
        if let Some(t) = ops.find(|t| targets.contains(&t.as_str())) {
            return Some(power(&format!("{program} {verb} {t}")));
        }
    }
    None
}

fn kill_finding(why: &str) -> Finding {
    Finding::deny(
        Class::Hardline,
        "hardline.kill-all",
        format!(
            "killing every process or PID 1 is never allowed (hardline guard): {why}. Kill a specific process ID instead."
        ),
    )
}

fn kill(args: &[Word]) -> Option<Finding> {
    let texts: Vec<String> = args.iter().map(Word::text).collect();
    let mut i = 0;
    match texts.first().map(String::as_str) {
        Some("-l" | "-L" | "--list" | "--table") => return None,
        Some("-s" | "-n" | "--signal") => i = 2,
        Some("--") => {}
        Some(t) if t.starts_with('-') && t.len() > 1 => {
            if texts.len() == 1 && t == "-1" {
                return Some(kill_finding("`kill -1` targets every process"));
            }
            i = 1;
        }
        _ => {}
    }
    if texts.get(i).is_some_and(|t| t == "--") {
        i += 1;
    }
    for t in texts.iter().skip(i) {
        if t == "-1" {
            return Some(kill_finding("PID -1 means every process"));
        }
        if t == "1" {
            return Some(kill_finding("PID 1 is init"));
        }
    }
    None
}

fn device_tool(args: &[Word], program: &str, partitioner: bool) -> Option<Finding> {
    if partitioner
        && args.iter().any(|a| {
            a.is("-l")
                || a.is("--list")
                || a.is("print")
                || a.is("-p")
                || a.is("--print")
                || a.is("--help")
        })
    {
        return None;
    }
    for a in args {
        if a.starts_with("-") {
            continue;
        }
        if is_device(a) {
            return Some(Finding::deny(
                Class::Hardline,
                "hardline.device-format",
                format!(
                    "`{program}` on the device `{}` would destroy the data on it, which is never allowed (hardline guard). Work on an image file instead.",
                    a.text()
                ),
            ));
        }
        if a.starts_dynamic() {
            return Some(Finding::ask(
                Class::Unresolved,
                "unresolved.device-format",
                format!(
                    "`{program}` on `{}`, only known at run time, could destroy a disk, so it needs approval.",
                    a.text()
                ),
            ));
        }
    }
    None
}

/// A device node that is not one of the harmless ones.
fn is_device(word: &Word) -> bool {
    let text = word_path(word);
    let p = normalize(Path::new("/"), Path::new(&text));
    let s = p.to_string_lossy();
    text.starts_with("/dev/")
        && !SAFE_DEVICES.contains(&s.as_ref())
        && !SAFE_DEVICE_DIRS.iter().any(|d| s.starts_with(d))
        && s != "/dev"
}

fn word_path(word: &Word) -> String {
    word.segs
        .iter()
        .map(|s| match s {
            Seg::Lit(t) | Seg::Glob(t) | Seg::Dyn(t) => t.as_str(),
            Seg::Home => "~",
        })
        .collect()
}

/// Writes to block devices and to `/proc/sysrq-trigger`: redirections, `tee`, `dd of=`,
/// `cp`/`mv`/`install` destinations, `shred`.
fn writes(cmd: &Cmd) -> Option<Finding> {
    let mut targets: Vec<&Word> = Vec::new();
    targets.extend(cmd.redirects.iter().filter_map(|r| match r.kind {
        crate::command::RedirKind::Out => r.target.as_ref(),
        _ => None,
    }));
    let program = cmd.program();
    let args = cmd.args();
    let mut owned: Vec<Word> = Vec::new();
    match program.as_deref() {
        Some("tee" | "shred" | "truncate") => {
            targets.extend(args.iter().filter(|a| !a.starts_with("-")));
        }
        Some("dd") => {
            for a in args {
                if let Some(t) = a.literal()
                    && let Some(of) = t.strip_prefix("of=")
                {
                    owned.push(Word::lit(of));
                }
            }
        }
        Some(p @ ("cp" | "mv" | "install" | "ln")) => {
            let p = parse(args, &spec_for(p));
            if let Some(&last) = p.positionals.last() {
                targets.push(&args[last]);
            }
            if let Some(t) = p.value(&["-t", "--target-directory"]) {
                owned.push(Word::lit(t));
            }
        }
        _ => {}
    }
    targets.extend(owned.iter());
    for t in targets {
        let text = word_path(t);
        let path: PathBuf = match cmd.cwd.exact() {
            Some(cwd) => normalize(cwd, Path::new(&text)),
            None => normalize(Path::new("/"), Path::new(&text)),
        };
        if path == Path::new("/proc/sysrq-trigger") {
            return Some(Finding::deny(
                Class::Hardline,
                "hardline.sysrq",
                "writing to /proc/sysrq-trigger can crash or reboot the machine at once, which is never allowed (hardline guard).",
            ));
        }
        if text.starts_with("/dev/") && is_device(t) {
            return Some(Finding::deny(
                Class::Hardline,
                "hardline.device-write",
                format!(
                    "writing to the device `{}` would overwrite a disk, which is never allowed (hardline guard). Write to a regular file instead.",
                    t.text()
                ),
            ));
        }
    }
    None
}
