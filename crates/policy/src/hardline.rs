//! The hardline guard: commands that are never allowed, whatever the configuration says.
//! Each check looks at the parsed command (program, normalised flags, resolved operands), so
//! the same words used as data (`echo reboot`, `grep -rn mkfs docs/`) pass.

use crate::rule::RuleId;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use tree_sitter::Node;

use crate::command::{Class, Cmd, Finding, Origin, WriteKind};
use crate::flags::parse;
use crate::paths::{
    Links, PathClass, classify, critical_file, display, in_system_tree, normalize, physical,
};
use crate::reasons::Reason;
use crate::tools::{Deletes, find_starts, lookup, spec_for};
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

/// Programs that destroy or lock the paths `find -exec` hands them.
const DELETERS: &[&str] = &[
    "rm", "unlink", "rmdir", "shred", "truncate", "srm", "trash", "rimraf", "chmod", "chown",
    "chgrp", "chattr", "setfacl", "mv",
];

/// Packages a system cannot run without (Debian's essential set, and their kin elsewhere).
const ESSENTIAL_PACKAGES: &[&str] = &[
    "libc6",
    "libc-bin",
    "glibc",
    "coreutils",
    "bash",
    "dash",
    "dpkg",
    "apt",
    "rpm",
    "yum",
    "dnf",
    "pacman",
    "systemd",
    "systemd-sysv",
    "init",
    "sysvinit",
    "sudo",
    "util-linux",
    "login",
    "passwd",
    "base-files",
    "base-passwd",
    "debianutils",
    "findutils",
    "grep",
    "gzip",
    "sed",
    "tar",
    "perl-base",
    "libpam-modules",
    "libpam0g",
    "openssh-server",
    "linux-image-generic",
    "grub-pc",
    "grub2",
    "filesystem",
    "shadow-utils",
    "busybox",
];

/// Device and volume destruction verbs: (program, words that make it destructive).
const DEVICE_DESTROYERS: &[(&str, &[&str])] = &[
    (
        "hdparm",
        &[
            "--security-erase",
            "--security-erase-enhanced",
            "--trim-sector-ranges",
            "--write-sector",
            "--make-bad-sector",
            "--fwdownload",
        ],
    ),
    ("nvme", &["format", "sanitize", "delete-ns"]),
    ("lvremove", &[]),
    ("vgremove", &[]),
    ("pvremove", &[]),
    ("zpool", &["destroy", "labelclear"]),
    ("zfs", &["destroy"]),
    ("flashrom", &["-E", "--erase", "-w", "--write"]),
    ("mdadm", &["--zero-superblock"]),
    ("sg_format", &[]),
    ("nwipe", &[]),
    ("debugfs", &["-w"]),
    ("dmsetup", &["remove_all", "wipe_table"]),
];

/// Programs that power the machine off, reboot or suspend it: (program, words that make it do
/// so; none means always).
const POWER_VERBS: &[(&str, &[&str])] = &[
    ("shutdown", &[]),
    ("reboot", &[]),
    ("halt", &[]),
    ("poweroff", &[]),
    ("openrc-shutdown", &[]),
    ("ipmitool", &["off", "cycle", "reset", "soft"]),
    (
        "xfce4-session-logout",
        &["--halt", "--reboot", "--suspend", "--hibernate"],
    ),
    ("gnome-session-quit", &["--power-off", "--reboot"]),
    ("qdbus-power", &[]),
    ("pm-suspend", &[]),
    ("pm-hibernate", &[]),
    ("zzz", &[]),
];

/// The programs the guard knows by name from its own lists (power, formatting, partitioning,
/// device destruction): with the tool table's names, what a pattern in a program's path is
/// matched against when the machine's directories do not say (`/usr/sbin/shutdow[n]`).
pub(crate) fn known_programs() -> impl Iterator<Item = &'static str> {
    POWER_VERBS
        .iter()
        .map(|(name, _)| *name)
        .chain(MKFS.iter().copied())
        .chain(PARTITIONERS.iter().copied())
        .chain(DEVICE_DESTROYERS.iter().map(|(name, _)| *name))
        .chain([
            "kill", "killall", "pkill", "killall5", "mkfs", "dd", "crontab", "init",
        ])
}

/// What the guard needs besides the command.
pub(crate) struct Ctx<'a> {
    pub(crate) home: &'a Path,
    /// Where the command starts (the request's working directory).
    pub(crate) start: &'a Path,
    /// Symbolic links the line makes.
    pub(crate) links: &'a Links,
}

/// Checks one command; `None` when the guard has nothing to say.
pub(crate) fn check(cmd: &Cmd, ctx: &Ctx<'_>) -> Option<Finding> {
    if let Some(f) = writes(cmd, ctx) {
        return Some(f);
    }
    let program = cmd.program()?;
    let args = cmd.args();
    match program.as_str() {
        p if let Some(how) = lookup(p).and_then(|t| t.deletes) => rm(cmd, p, how, args, ctx),
        "find" => find(cmd, args, ctx),
        "rsync" => rsync(cmd, args, ctx),
        "scp" | "sftp" => {
            // `scp /dev/null host:/etc/passwd`: a critical file on the other side.
            let dest = args.iter().rev().find(|a| !a.starts_with("-"))?;
            let text = dest.literal()?;
            let (host, path) = text.split_once(':')?;
            (!host.contains('/') && critical_file(Path::new(path))).then(|| {
                Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineSystemFile,
                    Reason::RemoteCriticalFile {
                        program: &program,
                        path,
                        host,
                    }
                    .text(),
                )
            })
        }
        // `tar -x … -C /`, `unzip -d /`: an archive spread over the system.
        "tar" | "bsdtar" | "unzip" if extracts_over_system(&program, args) => Some(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedFileTarget,
            Reason::ExtractOverSystem { program: &program }.text(),
        )),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => chmod(cmd, &program, args, ctx),
        "mv" => mv(cmd, args, ctx),
        "tar" | "bsdtar" | "zip" | "7z" | "7za" | "7zz" => {
            archive_removing(cmd, &program, args, ctx)
        }
        // `rclone purge|delete|rmdirs PATH` on a local path is `rm -r`.
        // `rclone sync SRC DEST` deletes from DEST whatever SRC lacks.
        "rclone" if args.first().is_some_and(|a| a.is("sync")) => {
            let dest = args[1..]
                .iter()
                .rfind(|a| !a.starts_with("-") && !a.text().contains(':'))?;
            rm(
                cmd,
                "rclone sync",
                Deletes::Recursively,
                std::slice::from_ref(dest),
                ctx,
            )
        }
        "rclone"
            if args.first().is_some_and(|a| {
                a.is("purge") || a.is("delete") || a.is("rmdirs") || a.is("deletefile")
            }) =>
        {
            let targets: Vec<Word> = args[1..]
                .iter()
                .filter(|a| !a.starts_with("-") && !a.text().contains(':'))
                .cloned()
                .collect();
            let mut words = vec![Word::lit("-rf")];
            words.extend(targets);
            rm(cmd, "rclone", Deletes::Recursively, &words, ctx)
        }
        "shred" | "truncate" | "wipe"
            if cmd.origin == Origin::Exec
                && args
                    .iter()
                    .any(|a| matches!(a.segs.last(), Some(Seg::Dyn(d)) if d == "{}")) =>
        {
            rm(
                cmd,
                "rm",
                Deletes::WhenRecursive,
                &[Word::lit("-f")]
                    .iter()
                    .cloned()
                    .chain(args.iter().filter(|a| !a.starts_with("-")).cloned())
                    .collect::<Vec<_>>(),
                ctx,
            )
        }
        "shred" | "truncate" | "wipe" => {
            let p = parse(
                args,
                &crate::flags::Spec {
                    value_short: "nsr",
                    value_long: &["iterations", "size", "random-source", "reference"],
                    ..crate::flags::Spec::PLAIN
                },
            );
            p.positionals
                .iter()
                .find(|&&i| dynamic_path(&args[i]))
                .map(|&i| file_target_ask(Some(&program), &args[i]))
        }
        "source" | "." => args
            .first()
            .filter(|w| dynamic_path(w) && !w.text().starts_with("<("))
            .map(|w| script_path_ask(&program, w)),
        p if crate::tools::SHELLS.contains(&p) => {
            // `bash "$SCRIPT"`: the first operand, when it is a script file.
            let first = args
                .iter()
                .find(|a| !a.starts_with("-") && !a.starts_with("+"));
            let runs_string = args
                .iter()
                .take_while(|a| a.starts_with("-"))
                .any(|a| a.text().contains('c') && !a.text().starts_with("--"));
            first
                .filter(|w| !runs_string && dynamic_path(w) && !w.text().starts_with("<("))
                .map(|w| script_path_ask(p, w))
        }
        "crontab" => args
            .iter()
            .any(|a| {
                a.literal()
                    .is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('r'))
            })
            .then(|| {
                Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineCrontabRemove,
                    Reason::CrontabRemove.text(),
                )
            }),
        "docker" | "podman" | "nerdctl" | "systemd-nspawn" => host_root_mount(args),
        "apt" | "apt-get" | "aptitude" | "dpkg" | "rpm" | "yum" | "dnf" | "pacman" | "zypper"
        | "apk" | "xbps-remove" | "emerge" | "pkg" | "opkg" => system_package(&program, args),
        "userdel" | "deluser" => args
            .iter()
            .any(|a| {
                a.is("-r")
                    || a.is("--remove")
                    || a.is("--remove-home")
                    || a.is("--remove-all-files")
            })
            .then(|| {
                Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineRecursiveDeleteHome,
                    Reason::UserHomeRemoval { program: &program }.text(),
                )
            }),
        "kubectl" | "oc" | "kubecolor" | "k9s" => cluster_wipe(&program, args),
        p if DEVICE_DESTROYERS.iter().any(|(name, _)| *name == p) => {
            let (_, verbs) = DEVICE_DESTROYERS.iter().find(|(name, _)| *name == p)?;
            (verbs.is_empty()
                || args.iter().any(|a| {
                    verbs
                        .iter()
                        .any(|v| a.is(v) || a.text().starts_with(&format!("{v}=")))
                }))
            .then(|| {
                Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineDeviceFormat,
                    Reason::DestroysDisk { program: p }.text(),
                )
            })
        }
        "dbus-send" | "busctl" | "gdbus" | "qdbus" => dbus_power(&program, args),
        "dd" => None,
        "badblocks" => args
            .iter()
            .any(|a| {
                a.literal().is_some_and(|t| {
                    t.starts_with('-') && !t.starts_with("--") && t.contains(['w', 'n'])
                })
            })
            .then(|| device_tool(args, "badblocks -w", false))
            .flatten(),
        "cryptsetup" => args
            .iter()
            .any(|a| a.is("luksFormat") || a.is("erase") || a.is("luksErase") || a.is("reencrypt"))
            .then(|| device_tool(args, "cryptsetup", false))
            .flatten(),
        "rtcwake" => {
            let p = parse(
                args,
                &crate::flags::Spec {
                    value_short: "mstdA",
                    value_long: &["mode", "seconds", "time", "device", "adjfile", "date"],
                    ..crate::flags::Spec::PLAIN
                },
            );
            p.value(&["-m", "--mode"])
                .is_some_and(|m| !matches!(m, "no" | "on" | "show" | "disable"))
                .then(|| {
                    power(&Reason::Power {
                        command: "rtcwake -m",
                    })
                })
        }
        "gzip" | "bzip2" | "xz" | "lzma" | "zstd" | "lz4" | "lzip" | "pigz" => {
            compressor(cmd, &program, args, ctx)
        }
        p if let Some((_, verbs)) = POWER_VERBS.iter().find(|(name, _)| *name == p) => {
            (verbs.is_empty() || args.iter().any(|a| verbs.iter().any(|v| a.is(v))))
                .then(|| power(&Reason::Power { command: &program }))
        }
        "init" | "telinit" => {
            let level = args.iter().find(|a| !a.starts_with("-"))?;
            let Some(level) = level.literal() else {
                return Some(Finding::ask(
                    Class::Unresolved,
                    RuleId::UnresolvedPower,
                    Reason::RunlevelUnknown {
                        program: &program,
                        level: &level.text(),
                    }
                    .text(),
                ));
            };
            let harmless = matches!(
                level.as_str(),
                "q" | "Q" | "u" | "U" | "2" | "3" | "4" | "5"
            );
            (!harmless).then(|| {
                power(&Reason::Power {
                    command: &format!("{program} {level}"),
                })
            })
        }
        "systemctl" | "loginctl" => systemctl(&program, args),
        "kexec" => args.iter().any(|a| a.is("-e") || a.is("--exec")).then(|| {
            power(&Reason::Power {
                command: "kexec -e",
            })
        }),
        "kill" => kill(args),
        "fuser" => fuser(args),
        "killall5" => Some(kill_finding(&Reason::Killall5)),
        "pkill" | "killall" | "pgrep" => pkill(&program, args, ctx.home),
        // `skill -u USER`, `snice`: procps's older killers, by user, terminal or command.
        "skill" => pkill("killall", args, ctx.home),
        p if p.starts_with("mkfs") || MKFS.contains(&p) => device_tool(args, p, false),
        p if PARTITIONERS.contains(&p) => device_tool(args, p, true),
        _ => None,
    }
}

/// Which rules a destructive operation on a protected target answers to.
#[derive(Clone, Copy)]
enum Family {
    RecursiveDelete,
    FindDelete,
    RsyncDelete,
    RecursiveChmod,
    Move,
}

impl Family {
    /// The hardline rule for `/`, `~` and a system directory, and the rule when the target
    /// is only known at run time.
    fn rules(self) -> ([RuleId; 3], RuleId) {
        match self {
            Family::RecursiveDelete => (
                [
                    RuleId::HardlineRecursiveDeleteRoot,
                    RuleId::HardlineRecursiveDeleteHome,
                    RuleId::HardlineRecursiveDeleteSystem,
                ],
                RuleId::UnresolvedRecursiveDeleteTarget,
            ),
            Family::FindDelete => (
                [RuleId::HardlineFindDelete; 3],
                RuleId::UnresolvedFindDeleteTarget,
            ),
            Family::RsyncDelete => (
                [RuleId::HardlineRsyncDelete; 3],
                RuleId::UnresolvedRsyncDeleteTarget,
            ),
            Family::RecursiveChmod => (
                [RuleId::HardlineRecursiveChmod; 3],
                RuleId::UnresolvedRecursiveChmodTarget,
            ),
            Family::Move => (
                [RuleId::HardlineMoveSystem; 3],
                RuleId::UnresolvedMoveTarget,
            ),
        }
    }
}

/// Whether an operation aimed at a protected directory: the finding for `target`.
fn delete_finding(
    family: Family,
    what: &Reason<'_>,
    word: &Word,
    target: &PathClass,
    home: &Path,
) -> Option<Finding> {
    let shown = word.text();
    let word = shown.as_str();
    let ([root, home_rule, system], unknown) = family.rules();
    let deny = |rule: RuleId, reason: String| Some(Finding::deny(Class::Hardline, rule, reason));
    match target {
        PathClass::Root => deny(root, Reason::OfRoot { what, word }.text()),
        PathClass::HomeData(dir) => deny(home_rule, Reason::OfHomeData { what, dir, word }.text()),
        PathClass::Home => deny(home_rule, Reason::OfHome { what, word }.text()),
        PathClass::System(dir) => deny(
            system,
            Reason::OfSystemDir {
                what,
                dir: &display(Path::new(dir), home),
                word,
            }
            .text(),
        ),
        PathClass::Unknown(why) => Some(Finding::ask(
            Class::Unresolved,
            unknown,
            Reason::TargetUnknown { what, why }.text(),
        )),
        PathClass::Safe => None,
    }
}

fn worst(found: Option<Finding>, next: Option<Finding>) -> Option<Finding> {
    match (found, next) {
        (Some(a), Some(b)) => Some(if b.key() < a.key() { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn rm(cmd: &Cmd, program: &str, how: Deletes, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let home = ctx.home;
    let p = parse(args, &spec_for("rm"));
    let recursive = p.has('r', "recursive") || how == Deletes::Recursively;
    let no_preserve = p.has_long("no-preserve-root");
    let mut found = None;
    if recursive || no_preserve {
        for &i in &p.positionals {
            // A path `find`/`fd` hands over (`START/{}`) is anything under START.
            let listed = cmd.origin == Origin::Exec
                && matches!(args[i].segs.last(), Some(Seg::Dyn(d)) if d == "{}");
            let word = if listed {
                let mut w = args[i].clone();
                w.segs.pop();
                w.segs.push(Seg::Glob("*".into()));
                w
            } else {
                args[i].clone()
            };
            let t = classify(&word, &cmd.cwd, home, ctx.links);
            let f = delete_finding(
                Family::RecursiveDelete,
                &Reason::RecursiveDeletion,
                &args[i],
                &t,
                home,
            )
            .or_else(|| ancestor_of_start(cmd, &args[i], ctx));
            found = worst(found, f);
        }
        return found;
    }
    // Without `-r`: a critical system file (`rm /etc/passwd`), every file of a protected
    // directory (`rm -f /etc/*`), or every file `find` lists under one (`find / | xargs rm`).
    for &i in &p.positionals {
        found = worst(found, system_file(cmd, &args[i], program, ctx));
        let listed = cmd.origin == Origin::Exec
            && matches!(args[i].segs.last(), Some(Seg::Dyn(d)) if d == "{}");
        if args[i].has_glob() || listed {
            let mut under = args[i].clone();
            if listed {
                under.segs.pop();
                under.segs.push(Seg::Glob("*".into()));
            }
            let t = classify(&under, &cmd.cwd, home, ctx.links);
            if matches!(t, PathClass::Root | PathClass::System(_) | PathClass::Home) {
                found = worst(
                    found,
                    delete_finding(
                        Family::RecursiveDelete,
                        &Reason::DeletionOfEveryFileBy { program },
                        &args[i],
                        &t,
                        home,
                    ),
                );
            }
        }
    }
    if found.is_some() {
        return found;
    }
    if cmd.origin != Origin::Exec
        && let Some(&i) = p.positionals.iter().find(|&&i| dynamic_path(&args[i]))
    {
        return Some(file_target_ask(Some(program), &args[i]));
    }
    let unknown_target = p.positionals.iter().any(|&i| {
        !args[i].is_static()
            && !matches!(
                classify(&args[i], &cmd.cwd, ctx.home, ctx.links),
                PathClass::Safe
            )
    });
    if cmd.origin == Origin::Exec && unknown_target {
        found = Some(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedXargs,
            Reason::RmNamesFromXargs.text(),
        ));
    } else if args.iter().any(|a| !a.is_static() && !a.starts_temp()) {
        // `rm $FLAGS /`: the flags are unknown, so the targets matter as if recursive.
        for &i in &p.positionals {
            if !args[i].is_static() {
                continue;
            }
            let t = classify(&args[i], &cmd.cwd, home, ctx.links);
            if matches!(t, PathClass::Root | PathClass::Home | PathClass::System(_)) {
                found = worst(
                    found,
                    Some(Finding::ask(
                        Class::Unresolved,
                        RuleId::UnresolvedRecursiveDeleteTarget,
                        Reason::RmUnknownFlags {
                            target: &args[i].text(),
                        }
                        .text(),
                    )),
                );
            }
        }
    }
    found
}

/// A path only known at run time from its first character (`"$FILE"`, `$(cat list)`), which
/// could name anything; a fresh temporary path is not one.
fn dynamic_path(word: &Word) -> bool {
    word.starts_dynamic() && !word.starts_temp()
}

/// A directory every file of which is critical (`/boot`, `/usr/bin`, `/etc/sudoers.d`).
fn critical_dir(dir: &Path) -> bool {
    critical_file(&dir.join("x"))
}

/// A file only known at run time; without a program, a redirection's.
fn file_target_ask(program: Option<&str>, word: &Word) -> Finding {
    Finding::ask(
        Class::Unresolved,
        RuleId::UnresolvedFileTarget,
        Reason::FileTargetUnknown {
            program,
            target: &word.text(),
        }
        .text(),
    )
}

fn script_path_ask(program: &str, word: &Word) -> Finding {
    Finding::ask(
        Class::Unresolved,
        RuleId::UnresolvedScriptPath,
        Reason::ScriptPathUnknown {
            program,
            script: &word.text(),
        }
        .text(),
    )
}

/// A recursive deletion of a directory that holds the working directory the command started
/// in (`rm -rf ..` from the project): the project and everything beside it.
fn ancestor_of_start(cmd: &Cmd, word: &Word, ctx: &Ctx<'_>) -> Option<Finding> {
    let paths = target_paths(cmd, word, ctx)?;
    let hit = paths
        .iter()
        .find(|p| ctx.start.starts_with(p) && ctx.start != p.as_path())?;
    Some(Finding::deny(
        Class::Hardline,
        RuleId::HardlineRecursiveDeleteAncestor,
        Reason::DeletesWorkingDirectory {
            dir: &display(hit, ctx.home),
            word: &word.text(),
            cwd: &ctx.start.display().to_string(),
        }
        .text(),
    ))
}

/// A `chmod` mode that takes access away (`000`, `-x`, `u-s`, `a-rwx`) or gives everyone
/// write access (`777`, `o+w`).
fn harmful_mode(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        let (owner, other) = match digits.as_slice() {
            [.., o, _, t] => (*o, *t),
            [o] => (*o, 0),
            _ => return false,
        };
        return owner < 4 || other & 2 != 0;
    }
    mode.split(',').any(|clause| {
        let removes = clause.contains('-') || clause.contains('=');
        let opens = (clause.contains("o+") || clause.starts_with('+') || clause.starts_with("a+"))
            && clause.contains('w');
        (removes && clause.contains(['r', 'w', 'x', 's'])) || opens
    })
}

/// A static word's path text and the directories it is read from (`/`, or each possible
/// working directory); `None` when it is only known at run time.
fn path_bases(cmd: &Cmd, word: &Word) -> Option<(String, Vec<PathBuf>)> {
    if !word.is_static() {
        return None;
    }
    let text = word_path(word);
    let bases = if text.starts_with('/') {
        vec![PathBuf::from("/")]
    } else {
        cmd.cwd.options.clone()
    };
    Some((text, bases))
}

/// Where a word names a path from each possible working directory, links not followed.
fn lexical_paths(cmd: &Cmd, word: &Word) -> Option<Vec<PathBuf>> {
    let (text, bases) = path_bases(cmd, word)?;
    Some(
        bases
            .iter()
            .map(|b| normalize(b, Path::new(&text)))
            .collect(),
    )
}

/// The absolute paths a word may name from the command's directory, lexically and through
/// symbolic links; `None` when it is only known at run time.
fn target_paths(cmd: &Cmd, word: &Word, ctx: &Ctx<'_>) -> Option<Vec<PathBuf>> {
    let (text, bases) = path_bases(cmd, word)?;
    let mut out = Vec::new();
    for base in bases {
        out.push(normalize(&base, Path::new(&text)));
        out.push(physical(&base, &text, ctx.links, true));
    }
    Some(out)
}

/// Deleting, moving or truncating a critical system file, or a system directory itself.
fn system_file(cmd: &Cmd, word: &Word, program: &str, ctx: &Ctx<'_>) -> Option<Finding> {
    let paths = target_paths(cmd, word, ctx)?;
    let hit = paths
        .iter()
        .find(|p| critical_file(p) || crate::paths::home_critical(p, ctx.home))?;
    Some(Finding::deny(
        Class::Hardline,
        RuleId::HardlineSystemFile,
        Reason::CriticalFile {
            program,
            file: &display(hit, ctx.home),
            word: &word.text(),
        }
        .text(),
    ))
}

/// `tar -x -C DIR` / `unzip -d DIR` where DIR is `/` or a system directory.
fn extracts_over_system(program: &str, args: &[Word]) -> bool {
    let texts: Vec<String> = args.iter().map(Word::text).collect();
    let extracting = program == "unzip"
        || texts.iter().any(|t| {
            t == "--extract"
                || t == "--get"
                || (t.starts_with('-') && !t.starts_with("--") && t.contains('x'))
                || (!t.starts_with('-')
                    && t.len() <= 6
                    && t.contains('x')
                    && texts.first() == Some(t))
        });
    if !extracting {
        return false;
    }
    let flag = if program == "unzip" { "-d" } else { "-C" };
    let dir = texts
        .iter()
        .position(|t| t == flag || t == "--directory")
        .and_then(|i| texts.get(i + 1).cloned())
        .or_else(|| {
            texts
                .iter()
                .find_map(|t| t.strip_prefix("--directory=").map(str::to_owned))
        });
    // A directory only known at run time (`-C "$PREFIX"`) could be `/` as well.
    let dynamic_dir = args
        .iter()
        .position(|a| a.is(flag) || a.is("--directory"))
        .and_then(|i| args.get(i + 1))
        .is_some_and(dynamic_path);
    dynamic_dir
        || dir.is_some_and(|d| {
            let p = normalize(Path::new("/"), Path::new(&d));
            d.starts_with('/')
                && (p == Path::new("/")
                    || p == Path::new("/etc")
                    || p == Path::new("/usr")
                    || p == Path::new("/boot")
                    || in_system_tree(&p) && p.components().count() <= 2)
        })
}

/// Removing a package the system cannot run without, or removing with the safety off
/// (`--allow-remove-essential`, `--force-all`, `rpm -e --nodeps`, `pacman -Rdd`).
fn system_package(program: &str, args: &[Word]) -> Option<Finding> {
    let texts: Vec<String> = args.iter().map(Word::text).collect();
    let removes = texts.iter().any(|t| {
        matches!(
            t.as_str(),
            "remove"
                | "purge"
                | "autoremove"
                | "erase"
                | "del"
                | "uninstall"
                | "-r"
                | "-P"
                | "--remove"
                | "--purge"
                | "-e"
                | "--erase"
                | "rm"
                | "--unmerge"
                | "-C"
        ) || (program == "pacman" && t.starts_with("-R"))
            || program == "xbps-remove"
    });
    if !removes {
        return None;
    }
    let forced = texts.iter().any(|t| {
        matches!(
            t.as_str(),
            "--allow-remove-essential"
                | "--force-remove-essential"
                | "--force-all"
                | "--nodeps"
                | "--force-depends"
        ) || (program == "pacman" && t.starts_with("-R") && t.matches('d').count() >= 2)
            // aptitude's `~i` pattern: every installed package.
            || (program == "aptitude" && t.trim_matches(['\'', '"']) == "~i")
            || (program == "xbps-remove" && t.starts_with('-') && t.contains('F'))
    });
    let essential = texts.iter().filter(|t| !t.starts_with('-')).find(|t| {
        // `sys-libs/glibc`, `libc6:amd64`, `bash=5.2`: the package's own name.
        let name = t.rsplit('/').next().unwrap_or(t);
        ESSENTIAL_PACKAGES.contains(&name.split([':', '=']).next().unwrap_or(name))
    });
    if !forced && essential.is_none() {
        return None;
    }
    Some(Finding::deny(
        Class::Hardline,
        RuleId::HardlineSystemPackage,
        Reason::SystemPackage {
            program,
            essential: essential.map(String::as_str),
        }
        .text(),
    ))
}

/// `kubectl delete … --all --all-namespaces`: every resource of the cluster.
fn cluster_wipe(program: &str, args: &[Word]) -> Option<Finding> {
    let deletes = args.iter().any(|a| a.is("delete"));
    let all = args.iter().any(|a| a.is("--all"));
    let everywhere = args.iter().any(|a| a.is("--all-namespaces") || a.is("-A"));
    let namespaces = args.iter().any(|a| {
        a.is("ns") || a.is("namespace") || a.is("namespaces") || a.is("project") || a.is("projects")
    });
    (deletes && all && (everywhere || namespaces)).then(|| {
        Finding::deny(
            Class::Hardline,
            RuleId::HardlineClusterWipe,
            Reason::ClusterWipe { program }.text(),
        )
    })
}

/// `gzip FILE` replaces the file with `FILE.gz`: on a critical file, or recursively on a
/// protected directory, that is a deletion.
fn compressor(cmd: &Cmd, program: &str, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let p = parse(
        args,
        &crate::flags::Spec {
            value_short: "S",
            value_long: &["suffix"],
            aliases: &[
                ("recursive", 'r'),
                ("keep", 'k'),
                ("stdout", 'c'),
                ("to-stdout", 'c'),
                ("list", 'l'),
                ("test", 't'),
                ("decompress", 'd'),
            ],
            ..crate::flags::Spec::PLAIN
        },
    );
    if ['k', 'c', 'l', 't'].iter().any(|c| p.shorts.contains(c)) {
        return None;
    }
    let mut found = None;
    for &i in &p.positionals {
        let f = if p.shorts.contains(&'r') {
            let t = classify(&args[i], &cmd.cwd, ctx.home, ctx.links);
            delete_finding(
                Family::RecursiveDelete,
                &Reason::Recursive { program },
                &args[i],
                &t,
                ctx.home,
            )
        } else {
            system_file(cmd, &args[i], program, ctx)
        };
        found = worst(found, f);
    }
    found
}

/// `mv` of `/`, the home directory, a system directory or a critical file.
fn mv(cmd: &Cmd, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let p = parse(args, &spec_for("mv"));
    let sources: Vec<usize> = if p.value(&["-t", "--target-directory"]).is_some() {
        p.positionals.clone()
    } else {
        let n = p.positionals.len().saturating_sub(1);
        p.positionals[..n].to_vec()
    };
    let mut found = None;
    for i in sources {
        if dynamic_path(&args[i]) {
            found = worst(found, Some(file_target_ask(Some("mv"), &args[i])));
            continue;
        }
        let t = classify(&args[i], &cmd.cwd, ctx.home, ctx.links);
        let f = match t {
            PathClass::Root | PathClass::Home | PathClass::System(_) => {
                delete_finding(Family::Move, &Reason::Moving, &args[i], &t, ctx.home).map(
                    |mut f| {
                        f.rule = RuleId::HardlineMoveSystem.into();
                        f
                    },
                )
            }
            _ => system_file(cmd, &args[i], "mv", ctx),
        };
        found = worst(found, f);
    }
    found
}

/// `tar --remove-files`, `zip -m`: the archived paths are deleted afterwards.
fn archive_removing(cmd: &Cmd, program: &str, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let p = parse(args, &spec_for(program));
    let removes = match program {
        "zip" => p.shorts.contains(&'m') || p.has_long("move"),
        "7z" | "7za" | "7zz" => args.iter().any(|a| a.is("-sdel")),
        _ => p.has_long("remove-files"),
    };
    if !removes {
        return None;
    }
    // tar's archive (`-f X`), zip's first operand and 7z's subcommand and archive are written,
    // not removed.
    let skip = match program {
        "zip" => 1,
        "7z" | "7za" | "7zz" => 2,
        _ => 0,
    };
    // tar's members are read from `-C DIR` (`tar -C / --remove-files -cf x etc` is /etc).
    let base = crate::flags::option_words(args, &p, &["-C", "--directory"])
        .last()
        .and_then(Word::literal);
    let mut found = None;
    for &i in p.positionals.iter().skip(skip) {
        let member = match (&base, args[i].literal()) {
            (Some(dir), Some(m)) if !m.starts_with('/') => {
                Word::lit(&format!("{}/{m}", dir.trim_end_matches('/')))
            }
            _ => args[i].clone(),
        };
        let t = classify(&member, &cmd.cwd, ctx.home, ctx.links);
        found = worst(
            found,
            delete_finding(
                Family::RecursiveDelete,
                &Reason::DeletionBy { program },
                &member,
                &t,
                ctx.home,
            ),
        );
    }
    found
}

/// `docker run -v /:/host`: the host's root mounted writable into a container.
fn host_root_mount(args: &[Word]) -> Option<Finding> {
    let mut sources = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let Some(t) = a.literal() else { continue };
        let value = match t.as_str() {
            "-v" | "--volume" | "--mount" | "--bind" => args.get(i + 1).and_then(Word::literal),
            _ => t
                .strip_prefix("--volume=")
                .or_else(|| t.strip_prefix("--mount="))
                .or_else(|| t.strip_prefix("--bind="))
                .or_else(|| t.strip_prefix("-v"))
                .filter(|v| !v.is_empty())
                .map(str::to_owned),
        };
        let Some(v) = value else { continue };
        if v.contains("type=") || v.contains("source=") || v.contains("src=") {
            let read_only = v
                .split(',')
                .any(|kv| kv == "readonly" || kv == "ro" || kv == "readonly=true");
            let src = v.split(',').find_map(|kv| {
                kv.strip_prefix("source=")
                    .or_else(|| kv.strip_prefix("src="))
            });
            if let Some(src) = src
                && !read_only
            {
                sources.push(src.to_owned());
            }
        } else {
            let parts: Vec<&str> = v.split(':').collect();
            let read_only = parts
                .get(2)
                .is_some_and(|o| o.split(',').any(|x| x == "ro"));
            if parts.len() >= 2 && !read_only {
                sources.push(parts[0].to_owned());
            }
        }
    }
    // `-v "$DIR":/data`: a host directory only known at run time, mounted writable.
    for (i, a) in args.iter().enumerate() {
        let value = if a.is("-v") || a.is("--volume") {
            args.get(i + 1)
        } else {
            None
        };
        if let Some(v) = value
            && v.starts_dynamic()
            && !v.starts_temp()
            && !v.text().contains(":ro")
        {
            return Some(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedMountSource,
                Reason::MountSourceUnknown { source: &v.text() }.text(),
            ));
        }
    }
    let root = sources.iter().find(|s| {
        s.starts_with('/') && normalize(Path::new("/"), Path::new(s)) == Path::new("/")
    })?;
    Some(Finding::deny(
        Class::Hardline,
        RuleId::HardlineHostRootMount,
        Reason::HostRootMount { source: root }.text(),
    ))
}

/// `find START … -delete` and `find START … -exec rm {} +` act on everything under the start
/// path, whatever the filters.
fn find(cmd: &Cmd, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let deletes = args.iter().any(|a| a.is("-delete"))
        || args.windows(2).any(|w| {
            ["-exec", "-execdir", "-ok", "-okdir"]
                .iter()
                .any(|e| w[0].is(e))
                && crate::command::program_name(&w[1])
                    .is_some_and(|p| DELETERS.contains(&p.as_str()))
        });
    if !deletes {
        return None;
    }
    let (starts, _) = find_starts(args);
    // `-L` and `-H` follow a start path that is a link (`ln -s ~ h; find -L h -delete`).
    let follows = args
        .iter()
        .take_while(|a| a.starts_with("-"))
        .any(|a| a.is("-L") || a.is("-H"));
    let mut found = None;
    for s in &starts {
        let mut s = s.clone();
        if follows && !s.text().ends_with('/') {
            s.segs.push(Seg::Lit("/".into()));
        }
        let s = &s;
        let t = classify(s, &cmd.cwd, ctx.home, ctx.links);
        found = worst(
            found,
            delete_finding(
                Family::FindDelete,
                &Reason::DeletionBy { program: "find" },
                s,
                &t,
                ctx.home,
            )
            .or_else(|| ancestor_of_start(cmd, s, ctx)),
        );
    }
    found.map(|mut f| {
        // One rule id for find, whatever the directory.
        if f.class == Class::Hardline {
            f.rule = RuleId::HardlineFindDelete.into();
        }
        f
    })
}

fn rsync(cmd: &Cmd, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let home = ctx.home;
    let p = parse(args, &spec_for("rsync"));
    // `--remove-source-files` deletes what it copied: the sources.
    if p.has_long("remove-source-files") {
        let n = p.positionals.len().saturating_sub(1);
        let mut found = None;
        for &i in &p.positionals[..n] {
            let t = classify(&args[i], &cmd.cwd, home, ctx.links);
            found = worst(
                found,
                delete_finding(
                    Family::RsyncDelete,
                    &Reason::RsyncRemoveSourceFiles,
                    &args[i],
                    &t,
                    home,
                ),
            );
        }
        if found.is_some() {
            return found;
        }
    }
    let deletes = p.longs.iter().any(|l| l.starts_with("del"));
    if !deletes {
        return None;
    }
    let dest = &args[*p.positionals.last()?];
    let text = dest.text();
    if let Some((host, path)) = text.split_once(':')
        && !host.contains('/')
    {
        // A remote destination: its root, its home (`host:`), or a top system directory.
        let path = path.trim_start_matches(':');
        let remote = if path.is_empty() || path == "~" || path.starts_with("~/") && path.len() <= 2
        {
            Some(PathClass::Home)
        } else if path.starts_with('/') {
            let p = normalize(Path::new("/"), Path::new(path));
            match crate::paths::protected(&p, home) {
                PathClass::Root => Some(PathClass::Root),
                PathClass::System(s) if p.components().count() <= 2 => Some(PathClass::System(s)),
                _ => None,
            }
        } else {
            None
        };
        return remote.and_then(|t| {
            delete_finding(
                Family::RsyncDelete,
                &Reason::RsyncDeleteToRemoteHost,
                dest,
                &t,
                home,
            )
            .map(|mut f| {
                f.rule = RuleId::HardlineRsyncDelete.into();
                f
            })
        });
    }
    let t = classify(dest, &cmd.cwd, home, ctx.links);
    delete_finding(Family::RsyncDelete, &Reason::RsyncDelete, dest, &t, home).map(|mut f| {
        if f.class == Class::Hardline {
            f.rule = RuleId::HardlineRsyncDelete.into();
        }
        f
    })
}

fn chmod(cmd: &Cmd, program: &str, args: &[Word], ctx: &Ctx<'_>) -> Option<Finding> {
    let home = ctx.home;
    let p = parse(args, &spec_for(program));
    // The mode comes first, unless `--reference` gives it or it looks like options
    // (`chmod -x FILE` is the mode `-x`).
    let mode_as_flags = program == "chmod"
        && args.iter().any(|a| {
            a.literal().is_some_and(|t| {
                t.len() > 1 && t.starts_with('-') && t[1..].chars().all(|c| "rwxXst".contains(c))
            })
        });
    let skip = usize::from(!p.longs.iter().any(|l| l == "reference") && !mode_as_flags);
    // `chattr +i /etc/passwd` (and `setfacl`) on system files, recursive or not.
    let attributes = matches!(program, "chattr" | "setfacl");
    if attributes {
        let mut found = None;
        // setfacl's ACL spec is an option's value (`-m u:x:r FILE`): every operand is a file.
        let p = if program == "setfacl" {
            parse(
                args,
                &crate::flags::Spec {
                    value_short: "mxMX",
                    value_long: &[
                        "modify",
                        "remove",
                        "set",
                        "modify-file",
                        "remove-file",
                        "set-file",
                    ],
                    ..crate::flags::Spec::PLAIN
                },
            )
        } else {
            p
        };
        for &i in &p.positionals {
            if args[i].starts_with("+") || args[i].starts_with("=") {
                continue;
            }
            if dynamic_path(&args[i]) {
                found = worst(found, Some(file_target_ask(Some(program), &args[i])));
                continue;
            }
            let t = classify(&args[i], &cmd.cwd, home, ctx.links);
            let f = match t {
                PathClass::Root | PathClass::System(_) => Some(t),
                _ => target_paths(cmd, &args[i], ctx)
                    .filter(|ps| ps.iter().any(|p| critical_file(p) || in_system_tree(p)))
                    .map(|_| PathClass::System(args[i].text())),
            };
            if let Some(t) = f {
                found = worst(
                    found,
                    delete_finding(
                        Family::RecursiveChmod,
                        &Reason::Program { program },
                        &args[i],
                        &t,
                        home,
                    ),
                );
            }
        }
        return found.map(|mut f| {
            f.rule = RuleId::HardlineRecursiveChmod.into();
            f
        });
    }
    if !p.has('R', "recursive") {
        // `chmod 000 /`, `chmod 777 /etc/sudoers`, `chmod u-s /usr/bin/sudo`: a mode that takes
        // access away or opens a file to everyone (`chmod +x /usr/local/bin/x` is fine, and so
        // is `chown` of one's own files).
        let mode = if mode_as_flags {
            args.iter()
                .find_map(|a| a.literal().filter(|t| t.starts_with('-')))
        } else {
            p.positionals.first().and_then(|&i| args[i].literal())
        };
        // `chown dev /etc/sudoers`: a critical file given away from root (sudo and login
        // refuse files root does not own); to root it is a repair.
        let to_root = mode
            .as_deref()
            .is_some_and(|owner| matches!(owner.split([':', '.']).next(), Some("root" | "0" | "")));
        let harmful = match program {
            "chmod" => mode.as_deref().is_some_and(harmful_mode),
            _ => !to_root && !p.longs.iter().any(|l| l == "reference"),
        };
        if !harmful {
            return None;
        }
        for &i in p.positionals.iter().skip(skip) {
            let hit = target_paths(cmd, &args[i], ctx).and_then(|ps| {
                ps.into_iter().find(|p| {
                    p == Path::new("/")
                        || critical_file(p)
                        || p.starts_with("/usr/bin")
                        || p.starts_with("/bin")
                        || p.starts_with("/usr/sbin")
                        || p.starts_with("/sbin")
                })
            });
            if let Some(path) = hit {
                return Some(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineRecursiveChmod,
                    Reason::ChangesAccessToSystemFile {
                        program,
                        path: &path.display().to_string(),
                        word: &args[i].text(),
                    }
                    .text(),
                ));
            }
        }
        return None;
    }
    // `chmod -R a-rwx ~`: the user locked out of their own home.
    let locks_out = program == "chmod"
        && p.positionals
            .first()
            .and_then(|&i| args[i].literal())
            .is_some_and(|mode| {
                let numeric_owner = mode.chars().rev().nth(2).or_else(|| mode.chars().next());
                (mode.chars().all(|c| c.is_ascii_digit()) && numeric_owner.is_some_and(|d| d < '6'))
                    || (mode.contains('-')
                        && (mode.starts_with('a')
                            || mode.starts_with('u')
                            || mode.starts_with('-'))
                        && mode.contains(['r', 'w', 'x']))
            });
    let mut found = None;
    for &i in p.positionals.iter().skip(skip) {
        let t = classify(&args[i], &cmd.cwd, home, ctx.links);
        if locks_out && t == PathClass::Home {
            found = worst(
                found,
                delete_finding(
                    Family::RecursiveChmod,
                    &Reason::RecursiveRemovingAccess { program },
                    &args[i],
                    &t,
                    home,
                ),
            );
            continue;
        }
        // `chmod -R 700 ~/.ssh` is how keys are fixed, not broken.
        let t = if matches!(t, PathClass::Home | PathClass::HomeData(_)) {
            PathClass::Safe
        } else {
            t
        };
        found = worst(
            found,
            delete_finding(
                Family::RecursiveChmod,
                &Reason::Recursive { program },
                &args[i],
                &t,
                home,
            ),
        );
    }
    found.map(|mut f| {
        if f.class == Class::Hardline {
            f.rule = RuleId::HardlineRecursiveChmod.into();
        }
        f
    })
}

fn power(reason: &Reason<'_>) -> Finding {
    Finding::deny(Class::Hardline, RuleId::HardlinePower, reason.text())
}

fn systemctl(program: &str, args: &[Word]) -> Option<Finding> {
    if program == "loginctl"
        && args.iter().any(|a| {
            a.is("terminate-user")
                || a.is("terminate-seat")
                || a.is("kill-user")
                || a.is("terminate-session")
                || a.is("kill-session")
        })
    {
        return Some(kill_finding(&Reason::EndsSession));
    }
    let p = parse(args, &spec_for("systemctl"));
    if let [v, unit, ..] = p.positionals.as_slice()
        && args[*v].is("isolate")
        && !args[*unit].is_static()
    {
        return Some(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedPower,
            Reason::SystemdTargetUnknown {
                unit: &args[*unit].text(),
            }
            .text(),
        ));
    }
    if let Some(&v) = p.positionals.first()
        && !args[v].is_static()
    {
        return Some(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedPower,
            Reason::PowerVerbUnknown {
                program,
                verb: &args[v].text(),
            }
            .text(),
        ));
    }
    let mut ops = p.positionals.iter().filter_map(|&i| args[i].literal());
    let verb = ops.next()?;
    let power_verbs = [
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "soft-reboot",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "suspend-then-hibernate",
    ];
    if power_verbs.contains(&verb.as_str())
        || (program == "systemctl" && matches!(verb.as_str(), "emergency" | "rescue"))
    {
        return Some(power(&Reason::Power {
            command: &format!("{program} {verb}"),
        }));
    }
    if matches!(
        verb.as_str(),
        "isolate" | "start" | "restart" | "reload-or-restart" | "try-restart" | "enable"
    ) && program == "systemctl"
        && let Some(t) = ops.find(|t| power_unit(t))
    {
        return Some(power(&Reason::Power {
            command: &format!("{program} {verb} {t}"),
        }));
    }
    None
}

/// Units that stop or restart the machine when started (`reboot.target`, `runlevel0.target`,
/// `systemd-poweroff.service`, `ctrl-alt-del.target` …).
fn power_unit(unit: &str) -> bool {
    let name = unit
        .strip_suffix(".target")
        .or_else(|| unit.strip_suffix(".service"))
        .unwrap_or(unit);
    let name = name.strip_prefix("systemd-").unwrap_or(name);
    matches!(
        name,
        "poweroff"
            | "reboot"
            | "halt"
            | "kexec"
            | "shutdown"
            | "final"
            | "exit"
            | "rescue"
            | "emergency"
            | "ctrl-alt-del"
            | "soft-reboot"
            | "suspend"
            | "hibernate"
            | "hybrid-sleep"
            | "suspend-then-hibernate"
            | "sleep"
            | "runlevel0"
            | "runlevel1"
            | "runlevel6"
    )
}

/// `dbus-send`/`busctl`/`gdbus` calls on logind's power methods.
fn dbus_power(program: &str, args: &[Word]) -> Option<Finding> {
    let texts: Vec<String> = args.iter().map(Word::text).collect();
    let logind = texts.iter().any(|t| t.contains("login1"));
    let systemd_start = texts.iter().any(|t| t.contains("systemd1"))
        && texts
            .iter()
            .any(|t| t.contains("StartUnit") || t.contains("Isolate"))
        && texts.iter().any(|t| power_unit(t));
    const METHODS: &[&str] = &[
        "PowerOff",
        "Reboot",
        "Halt",
        "KExec",
        "Suspend",
        "Hibernate",
        "HybridSleep",
        "SuspendThenHibernate",
        "SoftReboot",
        "ScheduleShutdown",
    ];
    let method = texts
        .iter()
        .filter_map(|t| t.rsplit(['.', ' ']).next())
        .any(|m| METHODS.contains(&m));
    ((logind && method) || systemd_start).then(|| power(&Reason::LogindPowerCall { program }))
}

fn kill_finding(why: &Reason<'_>) -> Finding {
    Finding::deny(
        Class::Hardline,
        RuleId::HardlineKillAll,
        Reason::KillEveryProcess { why }.text(),
    )
}

/// A process ID as `kill` reads it (`01`, `-0001` and `+1` are numbers too).
fn pid(text: &str) -> Option<i64> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(d) => (-1, d),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    let value: i64 = if trimmed.is_empty() {
        0
    } else {
        trimmed.parse().ok()?
    };
    Some(sign * value)
}

fn kill(args: &[Word]) -> Option<Finding> {
    // `kill -9 [0-9]*` (a glob over `/proc` entries): every PID, init's included.
    if let Some(g) = args.iter().find(|a| a.has_glob() && a.is_static()) {
        let t = g.text();
        let name = t.rsplit('/').next().unwrap_or(&t);
        if crate::words::glob_match(name, "1") {
            return Some(kill_finding(&Reason::PidGlobMatchesAll { glob: &t }));
        }
    }
    let texts: Vec<String> = args.iter().map(Word::text).collect();
    let mut i = 0;
    match texts.first().map(String::as_str) {
        Some("-l" | "-L" | "--list" | "--table") => return None,
        Some("-s" | "-n" | "--signal") => i = 2,
        Some("--") => {}
        Some(t) if t.starts_with('-') && t.len() > 1 => {
            if texts.len() == 1 && pid(t) == Some(-1) {
                return Some(kill_finding(&Reason::KillMinusOne));
            }
            i = 1;
        }
        _ => {}
    }
    if texts.get(i).is_some_and(|t| t == "--") {
        i += 1;
    }
    // `kill -9 -"$PGID"`: a process group only known at run time could be -1.
    if let Some(w) = args
        .iter()
        .skip(i)
        .find(|a| a.text().starts_with('-') && !a.is_static() && a.segs.len() > 1)
    {
        return Some(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedKillPattern,
            Reason::ProcessGroupUnknown { group: &w.text() }.text(),
        ));
    }
    for t in texts.iter().skip(i) {
        match pid(t) {
            Some(-1) => return Some(kill_finding(&Reason::PidMinusOne)),
            Some(1) => return Some(kill_finding(&Reason::PidOneIsInit)),
            _ => {}
        }
    }
    // `kill $(pgrep …)`, `xargs kill`: process IDs only known at run time could be init's or
    // every process's, unless their source names one process the agent started.
    if let Some(w) = args
        .iter()
        .skip(i)
        .find(|a| !a.is_static() && !scoped_pid_source(&a.text()))
    {
        return Some(Finding::ask(
            Class::Unresolved,
            RuleId::UnresolvedKillPattern,
            Reason::ProcessIdsUnknown { pids: &w.text() }.text(),
        ));
    }
    None
}

/// Run-time process IDs that name the agent's own processes: the shell itself (`$$`,
/// `$BASHPID`), the jobs it started (`$!`, `%1`, `$(jobs -p)`), the process listening on a port (`$(lsof -t -i:3000)`), a PID file in
/// the project or in /tmp (`$(cat server.pid)`), not a daemon's in /run.
fn scoped_pid_source(text: &str) -> bool {
    static SCOPED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?:\$!|%\S*|\$\$|\$\{\$\}|\$BASHPID|\$\{BASHPID\}|",
            r#"\$\(\s*lsof\s+(?:-t\s+-i|-ti|-i\s*\S+\s+-t)\s*:?\S*\s*\)|"#,
            r"\$\(\s*jobs\s+-p\s*\)|",
            r#"\$\(\s*cat\s+(?:\./|/tmp/)?[\w.-]+(?:/[\w.-]+)*\.pid\s*\))$"#,
        ))
        .expect("a valid pattern")
    });
    SCOPED.is_match(text.trim_matches('"'))
}

/// `fuser -k -m MOUNT`: every process using the file system at MOUNT; on `/` or a system
/// tree, every process of the machine.
fn fuser(args: &[Word]) -> Option<Finding> {
    let p = parse(args, &spec_for("fuser"));
    if !(p.has('k', "kill") && p.has('m', "mount")) {
        return None;
    }
    let mount = p.positionals.iter().find_map(|&i| {
        let t = args[i].literal()?;
        let path = normalize(Path::new("/"), Path::new(&t));
        (path == Path::new("/") || in_system_tree(&path)).then_some(t)
    })?;
    Some(kill_finding(&Reason::KillsUsersOfMount { mount: &mount }))
}

/// `pkill`/`killall` with a pattern that matches every process (`.`, `''`, `.*`), `-v`
/// (everything that does not match), or init by name.
fn pkill(program: &str, args: &[Word], home: &Path) -> Option<Finding> {
    // The home directory's owner is the user whose every process `-u NAME` would signal.
    let home_user = home.file_name().and_then(|n| n.to_str());
    if program == "pgrep" {
        return None;
    }
    let spec = crate::flags::Spec {
        value_short: if program == "killall" {
            "sunoy"
        } else {
            "gGPstuUFn"
        },
        value_long: &[
            "signal",
            "group",
            "parent",
            "session",
            "terminal",
            "euid",
            "uid",
            "pidfile",
            "ns",
            "nslist",
            "cgroup",
            "older",
            "runstates",
        ],
        ..crate::flags::Spec::PLAIN
    };
    let p = parse(args, &spec);
    let regex = program == "pkill" || p.shorts.contains(&'r') || p.has_long("regexp");
    // `pkill -u "$USER"`: a user only known at run time could be root.
    for (k, a) in args.iter().enumerate() {
        if ["-u", "-U", "--uid", "--euid", "--user"]
            .iter()
            .any(|o| a.is(o))
            && let Some(v) = args.get(k + 1)
            && !v.is_static()
        {
            return Some(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedKillPattern,
                Reason::KillUserUnknown {
                    program,
                    user: &v.text(),
                }
                .text(),
            ));
        }
    }
    // `pkill -U 0`, `killall -u root`: every process of root, init included.
    let root_user = ["-u", "-U", "--uid", "--euid", "--user"]
        .iter()
        .filter_map(|o| p.value(&[o]))
        .any(|u| {
            u.split(',')
                .any(|u| u == "0" || u == "root" || Some(u) == home_user)
        });
    if root_user && p.positionals.is_empty() {
        return Some(kill_finding(&Reason::SignalsEveryRootProcess));
    }
    // `pkill -P 1`: every child of init, the system's daemons.
    if p.value(&["-P", "--parent"])
        .is_some_and(|ppid| ppid.split(',').any(|p| p == "1"))
    {
        return Some(kill_finding(&Reason::SignalsChildrenOfInit));
    }
    // `pkill -v PATTERN`: every process that does not match, init included.
    if program == "pkill" && (p.shorts.contains(&'v') || p.has_long("inverse")) {
        return Some(kill_finding(&Reason::InverseMatchesAll));
    }
    let mut patterns: Vec<String> = Vec::new();
    for &i in &p.positionals {
        match args[i].literal() {
            Some(t) => patterns.push(t),
            None => {
                return Some(Finding::ask(
                    Class::Unresolved,
                    RuleId::UnresolvedKillPattern,
                    Reason::KillPatternUnknown {
                        program,
                        pattern: &args[i].text(),
                    }
                    .text(),
                ));
            }
        }
    }
    if p.positionals.is_empty() {
        return None;
    }
    for t in &patterns {
        if matches!(
            t.as_str(),
            "init"
                | "systemd"
                | "launchd"
                | "sshd"
                | "dbus-daemon"
                | "systemd-logind"
                | "systemd-journald"
                | "agetty"
                | "login"
        ) {
            return Some(kill_finding(&Reason::KillsInit));
        }
        if regex && matches_everything(t) {
            return Some(kill_finding(&Reason::PatternMatchesAll { pattern: t }));
        }
    }
    None
}

/// A process-name regex that matches any name (and so every process).
pub(crate) fn matches_everything(pattern: &str) -> bool {
    const PROBES: &[&str] = &["systemd", "sshd", "bash", "x", "1", "kworker/0:1", "Z"];
    match regex::Regex::new(pattern) {
        Ok(re) => PROBES.iter().all(|p| re.is_match(p)),
        Err(_) => pattern.is_empty(),
    }
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
                RuleId::HardlineDeviceFormat,
                Reason::FormatDevice {
                    program,
                    device: &a.text(),
                }
                .text(),
            ));
        }
        if a.starts_dynamic() || (!a.is_static() && a.text().starts_with("/dev/")) {
            return Some(Finding::ask(
                Class::Unresolved,
                RuleId::UnresolvedDeviceFormat,
                Reason::FormatDeviceUnknown {
                    program,
                    device: &a.text(),
                }
                .text(),
            ));
        }
    }
    None
}

/// A device node that is not one of the harmless ones (`path` absolute and normalised).
fn is_device_path(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.starts_with("/dev/")
        && !SAFE_DEVICES.contains(&s.as_ref())
        && !SAFE_DEVICE_DIRS.iter().any(|d| s.starts_with(d))
}

/// A word naming a device node, after normalisation (`//dev/sda`, `/./dev/sda`).
fn is_device(word: &Word) -> bool {
    let text = word_path(word);
    text.starts_with('/')
        && word.is_static()
        && is_device_path(&normalize(Path::new("/"), Path::new(&text)))
}

fn word_path(word: &Word) -> String {
    word.segs
        .iter()
        .map(|s| match s {
            Seg::Lit(t) | Seg::Glob(t) | Seg::Dyn(t) | Seg::Temp(t) => t.as_str(),
            Seg::Home => "~",
        })
        .collect()
}

/// Writes to block devices, `/proc/sysrq-trigger` and critical system files: redirections,
/// `tee`, `dd of=`, `cp`/`mv`/`install` destinations, `shred`, `truncate`.
fn writes(cmd: &Cmd, ctx: &Ctx<'_>) -> Option<Finding> {
    let program = cmd.program();
    let targets = cmd
        .effects
        .writes
        .iter()
        .map(|w| (w.target.clone(), w.kind));
    for (t, kind) in targets {
        let text = word_path(&t);
        if !t.is_static() {
            // `of=/dev/$DISK`: a device only known at run time.
            let fixed: String = t
                .segs
                .iter()
                .map_while(|s| match s {
                    Seg::Lit(x) => Some(x.as_str()),
                    _ => None,
                })
                .collect();
            let dir = normalize(Path::new("/"), Path::new(&fixed));
            let device_dir = dir == Path::new("/dev") || is_device_path(&dir.join("x"));
            let dd_unknown =
                program.as_deref() == Some("dd") && t.starts_dynamic() && !t.starts_temp();
            if (fixed.starts_with('/') && device_dir) || dd_unknown {
                return Some(Finding::ask(
                    Class::Unresolved,
                    RuleId::UnresolvedDeviceWrite,
                    Reason::DeviceWriteUnknown { target: &t.text() }.text(),
                ));
            }
            // A file only known at run time (`> "$OUT"`, `cp x "$DEST"`): it could be any file
            // on the machine. A critical tree with a dynamic name in it is as bad as a literal
            // one (`cp /dev/null /boot/vmlinuz-$(uname -r)`).
            if fixed.starts_with('/') && kind != WriteKind::Append && critical_dir(&dir) {
                return Some(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineSystemFile,
                    Reason::SystemFileDynamicName {
                        target: &t.text(),
                        dir: &dir.display().to_string(),
                    }
                    .text(),
                ));
            }
            if dynamic_path(&t) {
                return Some(file_target_ask(program.as_deref(), &t));
            }
            continue;
        }
        // A link is made or replaced where it is named (`ln -sf /usr/bin/python3 ./py`
        // replaces the link `./py`, not the program it points to): its path is not followed.
        let links_here = program
            .as_deref()
            .and_then(lookup)
            .is_some_and(|t| t.symbolic.is_some());
        let paths = if links_here {
            lexical_paths(cmd, &t)
        } else {
            target_paths(cmd, &t, ctx)
        };
        let Some(paths) = paths else {
            continue;
        };
        for path in paths {
            if path == Path::new("/proc/sysrq-trigger") {
                return Some(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineSysrq,
                    Reason::Sysrq.text(),
                ));
            }
            if is_device_path(&path) && (kind != WriteKind::Append || text.starts_with("/dev/sd")) {
                return Some(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineDeviceWrite,
                    Reason::DeviceWrite { target: &t.text() }.text(),
                ));
            }
            // Appending to `~/.bashrc` is how tools are set up; replacing it is not.
            let system = critical_file(&path)
                || (kind != WriteKind::Append && crate::paths::home_critical(&path, ctx.home))
                || (kind == WriteKind::Truncate
                    && in_system_tree(&path)
                    && !path.starts_with("/proc")
                    && !path.starts_with("/sys"));
            if system {
                return Some(Finding::deny(
                    Class::Hardline,
                    RuleId::HardlineSystemFile,
                    Reason::WriteSystemFile {
                        how: &match kind {
                            WriteKind::Truncate => Reason::Truncating,
                            WriteKind::Append => Reason::AppendingTo,
                            WriteKind::Overwrite => Reason::Overwriting,
                        },
                        file: &display(&path, ctx.home),
                        target: &t.text(),
                        locks_out: crate::paths::home_critical(&path, ctx.home),
                    }
                    .text(),
                ));
            }
        }
    }
    None
}

/// A shell function that calls itself in a pipeline or in the background: a fork bomb.
pub(crate) fn fork_bomb(body: Node<'_>, src: &str, name: &str) -> Option<Finding> {
    if name.is_empty() {
        return None;
    }
    let mut calls = 0;
    let mut piped = false;
    let mut background = false;
    let mut stack = vec![(body, false)];
    let mut seen = 0;
    while let Some((node, in_pipe)) = stack.pop() {
        seen += 1;
        if seen > 10_000 {
            break;
        }
        if node.kind() == "&" {
            background = true;
        }
        if node.kind() == "command"
            && node
                .child_by_field_name("name")
                .is_some_and(|n| src.get(n.byte_range()) == Some(name))
        {
            calls += 1;
            piped |= in_pipe;
        }
        let pipe = in_pipe || node.kind() == "pipeline";
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            stack.push((child, pipe));
        }
    }
    (calls > 0 && (piped || background)).then(|| {
        Finding::deny(
            Class::Hardline,
            RuleId::HardlineForkBomb,
            Reason::ForkBombFunction { name }.text(),
        )
    })
}

/// A shell loop that never ends and starts a background process on every turn without
/// waiting (`while true; do bash & done`): a fork bomb by another name.
pub(crate) fn spawning_loop(node: Node<'_>, src: &str) -> Option<Finding> {
    let text = src.get(node.byte_range())?;
    let endless = match node.kind() {
        "while_statement" => node.child_by_field_name("condition").is_some_and(|c| {
            let cond = src
                .get(c.byte_range())
                .unwrap_or("")
                .trim()
                .trim_end_matches(';')
                .trim();
            matches!(
                cond,
                "true" | ":" | "[ 1 ]" | "((1))" | "(( 1 ))" | "/bin/true"
            )
        }),
        "c_style_for_statement" => {
            let head = text.split("do").next().unwrap_or("");
            head.replace([' ', '\t'], "").contains("((;;))")
        }
        _ => false,
    };
    let body = node.child_by_field_name("body")?;
    // The statements of the body that run in the background (`cmd &`; not `2>&1`, not `&&`),
    // and whether one in the foreground waits (`sleep 1`, `wait`; a `sleep 1 &` does not).
    let mut backgrounds = false;
    let mut paced = false;
    let mut stack = vec![body];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 10_000 {
            break;
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.children(&mut cursor).collect();
        for (k, child) in children.iter().enumerate() {
            if child.kind() == "&" {
                backgrounds = true;
            }
            if child.kind() == "command" {
                let name = child
                    .child_by_field_name("name")
                    .and_then(|c| src.get(c.byte_range()))
                    .unwrap_or("");
                let in_background = children.get(k + 1).is_some_and(|next| next.kind() == "&");
                if matches!(name, "sleep" | "wait" | "read" | "timeout") && !in_background {
                    paced = true;
                }
            }
            stack.push(*child);
        }
    }
    (endless && backgrounds && !paced).then(|| {
        Finding::deny(
            Class::Hardline,
            RuleId::HardlineForkBomb,
            Reason::ForkBombLoop.text(),
        )
    })
}

/// Inline code that forks in a loop (`while True: os.fork()`, `fork while 1`).
pub(crate) fn fork_loop(code: &str) -> Option<Finding> {
    let has_word = |w: &str| {
        code.match_indices(w).any(|(i, _)| {
            let before = code[..i].chars().next_back();
            let after = code[i + w.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let forks = has_word("fork") || has_word("pcntl_fork");
    // Starting processes in a loop that never ends (`while(1) spawn(…)`, `while True:
    // Popen(…)`) floods the machine the same way.
    let spawns = [
        "spawn",
        "Popen",
        "system",
        "exec",
        "execSync",
        "popen",
        "spawnSync",
    ]
    .iter()
    .any(|w| has_word(w));
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let endless = [
        "while(1)",
        "while(true)",
        "whileTrue:",
        "while1:",
        "for(;;)",
        "loop{",
        "while1{",
        "whiletrue",
    ]
    .iter()
    .any(|p| compact.contains(p));
    // A loop that waits (`time.sleep`, `sleep`, `wait`, `waitpid`, `setTimeout`) is paced.
    let waits = ["sleep", "wait", "waitpid", "setTimeout", "usleep", "join"]
        .iter()
        .any(|w| has_word(w));
    if spawns && endless && !waits {
        return Some(Finding::deny(
            Class::Hardline,
            RuleId::HardlineForkBomb,
            Reason::InlineSpawnLoop.text(),
        ));
    }
    let loops = [
        "while",
        "for",
        "loop",
        "until",
        "times",
        "setInterval",
        "repeat",
    ]
    .iter()
    .any(|w| has_word(w));
    (forks && loops && !waits).then(|| {
        Finding::deny(
            Class::Hardline,
            RuleId::HardlineForkBomb,
            Reason::InlineForkLoop.text(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_ids_are_read_as_numbers() {
        assert_eq!(pid("1"), Some(1));
        assert_eq!(pid("0001"), Some(1));
        assert_eq!(pid("-01"), Some(-1));
        assert_eq!(pid("+1"), Some(1));
        assert_eq!(pid("-KILL"), None);
        assert_eq!(pid("12"), Some(12));
    }

    #[test]
    fn match_all_patterns_are_recognised() {
        for p in ["", ".", ".*", "^", "[a-z0-9]*", "(?s).*"] {
            assert!(matches_everything(p), "{p:?}");
        }
        for p in ["node", "^sshd$", "python3"] {
            assert!(!matches_everything(p), "{p:?}");
        }
    }
}
