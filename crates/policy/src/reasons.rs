//! Every text the policy shows lives here, written for the model that reads it (after
//! `Blocked: ` or `Needs approval: `): one [`Reason`] variant per message, named after what it
//! says, and one `match` that holds the words. A text change touches this file only; the rule
//! ids and the decisions stay with the checks that make them.
//!
//! A few messages are built from a phrase (what a deletion-like operation is called, why a
//! target is unknown, why a kill reaches every process, what interception saw, how a write
//! changes a file): those phrases are variants too, near the end, and the message that frames
//! them takes them as a field. This module uses no other: every layer may show a text.

/// A text the policy shows, with the values it names.
#[derive(Debug)]
pub(crate) enum Reason<'a> {
    // The hardline guard (deny).
    /// `scp /dev/null host:/etc/passwd`.
    RemoteCriticalFile {
        program: &'a str,
        path: &'a str,
        host: &'a str,
    },
    /// `crontab -r`.
    CrontabRemove,
    /// `crontab /dev/null`, `echo -n | crontab -`.
    EmptyCrontab,
    /// `userdel -r`.
    UserHomeRemoval { program: &'a str },
    /// `nvme format`, `zpool destroy`, `lvremove`.
    DestroysDisk { program: &'a str },
    /// `OPERATION of / (…)`: `what` is a phrase ([`Reason::RecursiveDeletion`] …).
    OfRoot { what: &'a Reason<'a>, word: &'a str },
    /// `OPERATION of ~/.ssh in the home directory`.
    OfHomeData {
        what: &'a Reason<'a>,
        dir: &'a str,
        word: &'a str,
    },
    /// `OPERATION of the home directory`.
    OfHome { what: &'a Reason<'a>, word: &'a str },
    /// `OPERATION of the system directory /usr`.
    OfSystemDir {
        what: &'a Reason<'a>,
        dir: &'a str,
        word: &'a str,
    },
    /// `rm -rf ..` from the project.
    DeletesWorkingDirectory {
        dir: &'a str,
        word: &'a str,
        cwd: &'a str,
    },
    /// `rm /etc/passwd`, `mv /etc/shadow x`, `gzip /etc/sudoers`.
    CriticalFile {
        program: &'a str,
        file: &'a str,
        word: &'a str,
    },
    /// `apt remove libc6`, `dpkg --force-all -r x`; `essential` is the package named.
    SystemPackage {
        program: &'a str,
        essential: Option<&'a str>,
    },
    /// `kubectl delete --all --all-namespaces`.
    ClusterWipe { program: &'a str },
    /// `docker run -v /:/host`.
    HostRootMount { source: &'a str },
    /// `chmod 000 /`, `chmod 777 /etc/sudoers`.
    ChangesAccessToSystemFile {
        program: &'a str,
        path: &'a str,
        word: &'a str,
    },
    /// `reboot`, `systemctl poweroff`, `init 0`.
    Power { command: &'a str },
    /// `dbus-send … org.freedesktop.login1.Manager.PowerOff`.
    LogindPowerCall { program: &'a str },
    /// `kill -9 -1`, `pkill .`: `why` is a phrase ([`Reason::PidOneIsInit`] …).
    KillEveryProcess { why: &'a Reason<'a> },
    /// `mkfs.ext4 /dev/sda`.
    FormatDevice { program: &'a str, device: &'a str },
    /// `cp /dev/null /boot/vmlinuz-$(uname -r)`.
    SystemFileDynamicName { target: &'a str, dir: &'a str },
    /// `echo b > /proc/sysrq-trigger`.
    Sysrq,
    /// `dd of=/dev/sda`.
    DeviceWrite { target: &'a str },
    /// `> /etc/passwd`: `how` is a phrase ([`Reason::Overwriting`] …); `locks_out`: a file of
    /// the home directory every login reads.
    WriteSystemFile {
        how: &'a Reason<'a>,
        file: &'a str,
        target: &'a str,
        locks_out: bool,
    },
    /// `f() { f | f & }; f`.
    ForkBombFunction { name: &'a str },
    /// `while true; do bash & done`.
    ForkBombLoop,
    /// `while True: subprocess.Popen(…)`.
    InlineSpawnLoop,
    /// `while 1: os.fork()`.
    InlineForkLoop,
    /// `gdb -p 1 -ex 'call …'`.
    GdbCallInInit,

    // What cannot be resolved statically (ask).
    /// `tar -x -C /`.
    ExtractOverSystem { program: &'a str },
    /// `init "$LEVEL"`.
    RunlevelUnknown { program: &'a str, level: &'a str },
    /// `OPERATION: why`; `why` comes from [`Reason::CouldExpandToRoot`] and its kin.
    TargetUnknown { what: &'a Reason<'a>, why: &'a str },
    /// `find … | xargs rm`.
    RmNamesFromXargs,
    /// `rm $FLAGS /`.
    RmUnknownFlags { target: &'a str },
    /// `rm "$FILE"`; without a program, a redirection.
    FileTargetUnknown {
        program: Option<&'a str>,
        target: &'a str,
    },
    /// `bash "$SCRIPT"`, `source "$X"`, `at -f "$JOB"`.
    ScriptPathUnknown { program: &'a str, script: &'a str },
    /// `docker run -v "$DIR":/data`.
    MountSourceUnknown { source: &'a str },
    /// `systemctl isolate "$T"`.
    SystemdTargetUnknown { unit: &'a str },
    /// `systemctl "$VERB"`.
    PowerVerbUnknown { program: &'a str, verb: &'a str },
    /// `kill -9 -"$PGID"`.
    ProcessGroupUnknown { group: &'a str },
    /// `kill $(pgrep x)`, `xargs kill`.
    ProcessIdsUnknown { pids: &'a str },
    /// `pkill -u "$USER"`.
    KillUserUnknown { program: &'a str, user: &'a str },
    /// `pkill "$PATTERN"`.
    KillPatternUnknown { program: &'a str, pattern: &'a str },
    /// `mkfs.ext4 "$DEV"`.
    FormatDeviceUnknown { program: &'a str, device: &'a str },
    /// `dd of=/dev/$DISK`.
    DeviceWriteUnknown { target: &'a str },
    /// `eval "$X"`.
    EvalUnknown,
    /// `alias "$X"`.
    AliasUnknown,
    /// `curl … | crontab -`.
    CrontabFromInput,
    /// `python -c "$CODE"`, `python <<< "$CODE"`.
    CodeUnknown { program: &'a str, code: &'a str },
    /// `curl … | sh`.
    PipeToShell,
    /// `curl … | python`.
    PipeToInterpreter { interpreter: &'a str },
    /// `sh -c "$(curl …)"`.
    ShellRunsDownload,
    /// `GIT_SSH_COMMAND="$(curl …)" git fetch`.
    VariableFromDownload { name: &'a str },
    /// `nc -l -e /bin/sh`, `socat … EXEC:sh`.
    NetworkShell,
    /// `python -c 'exec(urlopen(…).read())'`.
    InlineRunsNetwork,
    /// `sed "$SCRIPT"`.
    SedScriptUnknown { script: &'a str },
    /// `sed e` on input only known at run time.
    SedRunsInput,
    /// `sed 's/x/&/e'`.
    SedSubstituteRuns,
    /// `… | parallel`.
    ParallelInput,
    /// `git -c "$KEY"=…`.
    GitAliasUnknown,
    /// `git -c core.hooksPath="$DIR" commit`.
    GitHooksDirUnknown,
    /// `npm pkg set "scripts.x=$CMD"`.
    NpmScriptUnknown,
    /// `PATH="$(cat .toolpath):$PATH" make`.
    PathSetAtRunTime { value: &'a str },
    /// Too deep, too large: `what` is a phrase ([`Reason::TooLarge`] …).
    TooComplex { what: &'a Reason<'a> },
    /// The parser gave up.
    Unparsable,
    /// `$CMD -rf /`.
    CommandNameUnknown { name: &'a str },
    /// `/bin/r? -rf ~`.
    ProgramIsPattern { name: &'a str },
    /// `bash -c "$X"`.
    ShellStringUnknown { program: &'a str, string: &'a str },
    /// `echo … > x.sh; bash x.sh`.
    GeneratedScript { script: &'a str },
    /// Inline code with more calls than the policy reads.
    InlineTooManyCalls,
    /// `os.remove(path)`.
    InlineCallUnknown { name: &'a str, args: &'a str },
    /// `awk '{ print $0 | "sh" }'`.
    AwkPrintsIntoShell,

    // Configured rules.
    /// A deny prefix or regex matched.
    ConfigDeny {
        command: &'a str,
        rule: &'a str,
        regex: bool,
    },
    /// An ask prefix or regex matched.
    ConfigAsk {
        command: &'a str,
        rule: &'a str,
        regex: bool,
    },
    /// Allow-list mode; `allowed` is the start of the allow-list.
    NotOnAllowList {
        program: &'a str,
        allowed: &'a [&'a str],
    },
    /// A denied environment variable.
    DeniedEnv { name: &'a str, pattern: &'a str },

    // The workspace restriction.
    /// The request's working directory.
    WorkingDirectoryOutside { dir: &'a str, roots: &'a str },
    /// `cd /etc && ls`.
    RunsOutside { dir: &'a str, roots: &'a str },
    /// `cat /etc/passwd`; `read_only`: it is written, and only readable.
    PathOutside {
        path: &'a str,
        roots: &'a str,
        read_only: bool,
    },
    /// More paths than are checked.
    TooManyPaths { max: usize, roots: &'a str },
    /// `cat "$FILE"`.
    PathUnknown { path: &'a str, roots: &'a str },

    // Interception.
    /// `SAYS; use the tool`: `does` is a phrase ([`Reason::ReadsFile`] …).
    UseTool { does: &'a Reason<'a>, tool: &'a str },

    // The verdict when nothing decided, or before any analysis.
    /// An empty command.
    EmptyCommand,
    /// A command longer than the policy analyses.
    TooLong { bytes: usize, max: usize },
    /// The analysis itself failed.
    AnalysisFailed,
    /// An allow rule matched.
    AllowedByRule { rule: &'a str },
    /// One command, no rule.
    NoRuleMatched,
    /// Several commands, no rule.
    NoRuleMatchedAny { count: usize },

    // Phrases: what a deletion-like operation is called ([`Reason::OfRoot`] and its kin).
    /// `rm -r`.
    RecursiveDeletion,
    /// `rm -f /etc/*`.
    DeletionOfEveryFileBy { program: &'a str },
    /// `gzip -r`, `chmod -R`.
    Recursive { program: &'a str },
    /// `chmod -R a-rwx ~`.
    RecursiveRemovingAccess { program: &'a str },
    /// `mv`.
    Moving,
    /// `tar --remove-files`, `find -delete`.
    DeletionBy { program: &'a str },
    /// `rsync --remove-source-files`.
    RsyncRemoveSourceFiles,
    /// `rsync --delete host:/`.
    RsyncDeleteToRemoteHost,
    /// `rsync --delete`.
    RsyncDelete,
    /// `chattr`, `setfacl`.
    Program { program: &'a str },

    // Phrases: why a target is only known at run time ([`Reason::TargetUnknown`]).
    /// `"$d"/*` with `d=$(mktemp -d)`.
    EmptyTempPath { word: &'a str, empty: &'a str },
    /// `"$DIR"`.
    CouldExpandToRoot { word: &'a str },
    /// `/usr/$X`.
    CouldExpandTo { word: &'a str, dir: &'a str },
    /// `x` after `cd "$D"`.
    RelativeToUnknownDir { word: &'a str },
    /// `ln -s "$T" l; rm -rf l/`.
    ThroughUnknownLink { word: &'a str },

    // Phrases: why a kill reaches every process ([`Reason::KillEveryProcess`]).
    /// `killall5`.
    Killall5,
    /// `loginctl terminate-user`.
    EndsSession,
    /// `kill -9 [0-9]*`.
    PidGlobMatchesAll { glob: &'a str },
    /// `kill -1`.
    KillMinusOne,
    /// `kill -9 -1`.
    PidMinusOne,
    /// `kill 1`.
    PidOneIsInit,
    /// `pkill -u root`.
    SignalsEveryRootProcess,
    /// `pkill -P 1`.
    SignalsChildrenOfInit,
    /// `pkill -v x`.
    InverseMatchesAll,
    /// `fuser -k -m /`.
    KillsUsersOfMount { mount: &'a str },
    /// `pkill systemd`.
    KillsInit,
    /// `pkill .`.
    PatternMatchesAll { pattern: &'a str },

    // Phrases: what makes a command too complex ([`Reason::TooComplex`]).
    /// More steps or commands than the walk takes.
    TooLarge,
    /// Syntax nested deeper than the walk goes.
    NestedTooDeeply,
    /// `bash -c "bash -c '…'"`, deeper than the walk goes.
    ShellsNestedTooDeeply,
    /// Inline code running inline code, deeper than the walk goes.
    CodeNestedTooDeeply,

    // Phrases: what interception saw ([`Reason::UseTool`]).
    /// `cat file`.
    ReadsFile { program: &'a str },
    /// `grep -rn x .`.
    SearchesFiles { program: &'a str },
    /// `find . -name x`.
    LooksForFiles { program: &'a str },
    /// `sed -i`.
    EditsInPlace { program: &'a str },
    /// `echo x > file`.
    WritesFile { program: &'a str, file: String },

    // Phrases: how a write changes a file ([`Reason::WriteSystemFile`]).
    /// `>`.
    Overwriting,
    /// `: >`, `truncate -s0`.
    Truncating,
    /// `>>`.
    AppendingTo,

    // Phrases: what runs a command string, when it has no name ([`Reason::ShellStringUnknown`]).
    /// `chronic "$CMD -rf ~"`: an argument of a program the tool table does not know.
    UnknownProgram,
}

impl Reason<'_> {
    /// The text, as the model reads it.
    pub(crate) fn text(&self) -> String {
        match self {
            // The hardline guard.
            Reason::RemoteCriticalFile {
                program,
                path,
                host,
            } => format!(
                "`{program}` overwrites the critical file {path} on {host}, which is never allowed (hardline guard)."
            ),
            Reason::CrontabRemove => "`crontab -r` deletes every scheduled job of the user without a copy, which is never allowed (hardline guard). Edit the crontab with `crontab -e` or remove one line instead.".into(),
            Reason::EmptyCrontab => "installing an empty crontab deletes every scheduled job of the user without a copy, which is never allowed (hardline guard). Edit the crontab with `crontab -e` or remove one line instead.".into(),
            Reason::UserHomeRemoval { program } => format!(
                "`{program}` with home removal deletes a user's home directory, which is never allowed (hardline guard). Remove the account without `-r`, or ask the user."
            ),
            Reason::DestroysDisk { program } => format!(
                "`{program}` here destroys a disk, a volume or firmware, which is never allowed (hardline guard). Ask the user to do it."
            ),
            Reason::OfRoot { what, word } => format!(
                "{} of / (`{word}`) is never allowed (hardline guard). Delete a specific project directory instead.",
                what.text()
            ),
            Reason::OfHomeData { what, dir, word } => format!(
                "{} of `{dir}` in the home directory (`{word}`) is never allowed (hardline guard): it holds the user's keys, settings or documents. Delete a specific file you created instead.",
                what.text()
            ),
            Reason::OfHome { what, word } => format!(
                "{} of the home directory (`{word}`) is never allowed (hardline guard). Delete a specific directory inside it instead.",
                what.text()
            ),
            Reason::OfSystemDir { what, dir, word } => format!(
                "{} of the system directory {dir} (`{word}`) is never allowed (hardline guard). Delete a specific project directory instead.",
                what.text()
            ),
            Reason::DeletesWorkingDirectory { dir, word, cwd } => format!(
                "recursive deletion of {dir} (`{word}`) would delete the working directory {cwd} and everything beside it, which is never allowed (hardline guard). Delete a specific directory inside the project instead."
            ),
            Reason::CriticalFile {
                program,
                file,
                word,
            } => format!(
                "`{program}` on the critical file {file} (`{word}`) would break the machine or lock the user out, which is never allowed (hardline guard). Work on a copy inside the project instead."
            ),
            Reason::SystemPackage { program, essential } => format!(
                "`{program}` would remove {} the system cannot run without, which is never allowed (hardline guard). Remove only the package you installed, without forcing.",
                essential.map_or_else(
                    || "packages with the safety checks off, which can take what".to_owned(),
                    |p| format!("`{p}`, a package")
                )
            ),
            Reason::ClusterWipe { program } => format!(
                "`{program} delete --all` across namespaces deletes everything in the cluster, which is never allowed (hardline guard). Delete the named resources instead."
            ),
            Reason::HostRootMount { source } => format!(
                "mounting the host's root (`{source}`) writable into a container hands it every file on the machine, which is never allowed (hardline guard). Mount the project directory instead, or add `:ro`."
            ),
            Reason::ChangesAccessToSystemFile {
                program,
                path,
                word,
            } => format!(
                "`{program}` on {path} (`{word}`) changes who may use a file the system depends on, which is never allowed (hardline guard). Change a file of the project instead."
            ),
            Reason::Power { command } => format!(
                "`{command}` would shut down or restart the machine, which is never allowed (hardline guard). Ask the user to do it if it is really needed."
            ),
            Reason::LogindPowerCall { program } => format!(
                "`{program} … login1 power call` would shut down or restart the machine, which is never allowed (hardline guard). Ask the user to do it if it is really needed."
            ),
            Reason::KillEveryProcess { why } => format!(
                "killing every process or PID 1 is never allowed (hardline guard): {}. Kill a specific process ID instead.",
                why.text()
            ),
            Reason::FormatDevice { program, device } => format!(
                "`{program}` on the device `{device}` would destroy the data on it, which is never allowed (hardline guard). Work on an image file instead."
            ),
            Reason::SystemFileDynamicName { target, dir } => format!(
                "writing `{target}`, a file in {dir} whose name is only known at run time, would break the machine, which is never allowed (hardline guard). Work on a copy inside the project instead."
            ),
            Reason::Sysrq => "writing to /proc/sysrq-trigger can crash or reboot the machine at once, which is never allowed (hardline guard).".into(),
            Reason::DeviceWrite { target } => format!(
                "writing to the device `{target}` would overwrite a disk, which is never allowed (hardline guard). Write to a regular file instead."
            ),
            Reason::WriteSystemFile {
                how,
                file,
                target,
                locks_out,
            } => format!(
                "{} the file {file} (`{target}`) {}, which is never allowed (hardline guard). Work on a copy inside the project instead.",
                how.text(),
                if *locks_out {
                    "would lock the user out or break every login shell"
                } else {
                    "would break the machine"
                }
            ),
            Reason::ForkBombFunction { name } => format!(
                "function `{name}` calls itself in a pipeline or in the background: that is a fork bomb and is never allowed (hardline guard)."
            ),
            Reason::ForkBombLoop => "the loop never ends and starts a background process on every turn: that is a fork bomb and is never allowed (hardline guard).".into(),
            Reason::InlineSpawnLoop => "the inline code starts processes in a loop that never ends: that is a fork bomb and is never allowed (hardline guard).".into(),
            Reason::InlineForkLoop => "the inline code forks in a loop: that is a fork bomb and is never allowed (hardline guard).".into(),
            Reason::GdbCallInInit => "`gdb -p 1` with `call` runs code inside init, which is never allowed (hardline guard).".into(),

            // What cannot be resolved statically.
            Reason::ExtractOverSystem { program } => format!(
                "`{program}` extracts an archive over `/` or a system directory, where it can replace any file, so it needs approval. Extract into the project and copy what is needed."
            ),
            Reason::RunlevelUnknown { program, level } => format!(
                "`{program} {level}` switches to a runlevel only known at run time, which could stop the machine, so it needs approval."
            ),
            Reason::TargetUnknown { what, why } => format!(
                "{}: {why}, so it needs approval. Write the target path literally.",
                what.text()
            ),
            Reason::RmNamesFromXargs => "`rm` gets file names only known at run time (from xargs or find), so it needs approval. List the files explicitly or use `find ... -delete` on a project directory.".into(),
            Reason::RmUnknownFlags { target } => format!(
                "`rm` with arguments only known at run time could delete `{target}` recursively, so it needs approval."
            ),
            Reason::FileTargetUnknown { program, target } => format!(
                "`{}` acts on `{target}`, a path only known at run time that could be any file on the machine, so it needs approval. Write the path literally.",
                program.unwrap_or("a redirection")
            ),
            Reason::ScriptPathUnknown { program, script } => format!(
                "`{program}` runs the script `{script}`, whose path is only known at run time, so it needs approval. Write the script's path literally."
            ),
            Reason::MountSourceUnknown { source } => format!(
                "the container mounts the host directory `{source}`, only known at run time, writable; it could be `/`, so it needs approval."
            ),
            Reason::SystemdTargetUnknown { unit } => format!(
                "`systemctl isolate {unit}` switches to a target only known at run time, which could stop the machine, so it needs approval."
            ),
            Reason::PowerVerbUnknown { program, verb } => format!(
                "`{program} {verb}` runs a verb only known at run time, which could stop the machine, so it needs approval."
            ),
            Reason::ProcessGroupUnknown { group } => format!(
                "`kill {group}` signals a process group only known at run time, which could be every process, so it needs approval."
            ),
            Reason::ProcessIdsUnknown { pids } => format!(
                "`kill {pids}` signals process IDs only known at run time, which could be init or every process, so it needs approval. Kill a specific process ID, or stop the process by a specific name with `pkill -f NAME`."
            ),
            Reason::KillUserUnknown { program, user } => format!(
                "`{program}` signals the processes of `{user}`, a user only known at run time, so it needs approval."
            ),
            Reason::KillPatternUnknown { program, pattern } => format!(
                "`{program}` with the pattern `{pattern}`, only known at run time, could match every process, so it needs approval."
            ),
            Reason::FormatDeviceUnknown { program, device } => format!(
                "`{program}` on `{device}`, only known at run time, could destroy a disk, so it needs approval."
            ),
            Reason::DeviceWriteUnknown { target } => format!(
                "the write target `{target}` is a device only known at run time and could be a disk, so it needs approval. Write the device path literally."
            ),
            Reason::EvalUnknown => "`eval` runs a string only known at run time, so it needs approval. Run the command directly instead.".into(),
            Reason::AliasUnknown => "the alias is only known at run time, so it needs approval.".into(),
            Reason::CrontabFromInput => "`crontab -` installs jobs read at run time, so it needs approval. Write the crontab to a file, review it, then install it.".into(),
            Reason::CodeUnknown { program, code } => format!(
                "`{program}` runs code only known at run time (`{code}`), so it needs approval. Write the code out literally."
            ),
            Reason::PipeToShell => "a script generated at run time is piped into a shell, so it needs approval. Save it to a file, review it, then run the file.".into(),
            Reason::PipeToInterpreter { interpreter } => format!(
                "a script generated at run time is piped into `{interpreter}`, so it needs approval. Save it to a file, review it, then run the file."
            ),
            Reason::ShellRunsDownload => "the shell runs a script downloaded at run time, so it needs approval. Download it, review it, then run it.".into(),
            Reason::VariableFromDownload { name } => format!(
                "`{name}` is set to what a download prints, and a program runs it, so it needs approval. Download the file, review it, then use it."
            ),
            Reason::NetworkShell => "the command runs what it reads from a network connection (a shell served over the network), so it needs approval.".into(),
            Reason::InlineRunsNetwork => "the inline code runs what it reads from the network (downloaded code, or a shell on a socket), so it needs approval. Download the file, review it, then run it.".into(),
            Reason::SedScriptUnknown { script } => format!(
                "`sed` runs the script `{script}`, only known at run time (sed's `e` runs commands), so it needs approval."
            ),
            Reason::SedRunsInput => "`sed e` runs the input lines as commands, only known at run time, so it needs approval.".into(),
            Reason::SedSubstituteRuns => "`sed s///e` runs the edited text as a command, only known at run time, so it needs approval.".into(),
            Reason::ParallelInput => "`parallel` runs commands read at run time, so it needs approval. List the commands literally.".into(),
            Reason::GitAliasUnknown => "a git alias is only known at run time, so it needs approval.".into(),
            Reason::GitHooksDirUnknown => "git's hooks directory is only known at run time, and git runs the hooks in it, so it needs approval. Write the directory literally.".into(),
            Reason::NpmScriptUnknown => "`npm pkg set` stores a script only known at run time, which npm then runs, so it needs approval. Write the script literally.".into(),
            Reason::PathSetAtRunTime { value } => format!(
                "`PATH` is set to `{value}`, only known at run time, so which program each name runs is too; it needs approval. Write the directories literally."
            ),
            Reason::TooComplex { what } => format!(
                "the command is {} to analyse completely, so it needs approval. Split it into simpler commands.",
                what.text()
            ),
            Reason::Unparsable => "the command could not be parsed, so it needs approval.".into(),
            Reason::CommandNameUnknown { name } => format!(
                "the program name `{name}` is only known at run time, so it needs approval. Write the program name literally."
            ),
            Reason::ProgramIsPattern { name } => format!(
                "the program `{name}` is a pattern that picks a file at run time, so it needs approval. Write the program name literally."
            ),
            Reason::ShellStringUnknown { program, string } => format!(
                "`{program}` runs a command string only known at run time (`{string}`), so it needs approval. Write the command out literally."
            ),
            Reason::GeneratedScript { script } => format!(
                "`{script}` is a script generated at run time (written earlier in the same command, or a process substitution) and then run, so it needs approval. Write the script in one step, review it, then run it."
            ),
            Reason::InlineTooManyCalls => "the inline code makes too many calls to analyse completely, so it needs approval. Put it in a file and review it.".into(),
            Reason::InlineCallUnknown { name, args } => format!(
                "inline code calls `{name}({args})` with an argument only known at run time, so it needs approval. Write the path or command literally."
            ),
            Reason::AwkPrintsIntoShell => "awk prints text only known at run time into a shell, so it needs approval.".into(),

            // Configured rules.
            Reason::ConfigDeny {
                command,
                rule,
                regex,
            } => format!(
                "`{command}` is denied by the policy rule `{rule}` (rules.deny{}). Do not retry it; ask the user if it is really needed.",
                if *regex { "_regex" } else { "" }
            ),
            Reason::ConfigAsk {
                command,
                rule,
                regex,
            } => format!(
                "`{command}` needs approval under the policy rule `{rule}` (rules.ask{}).",
                if *regex { "_regex" } else { "" }
            ),
            Reason::NotOnAllowList { program, allowed } => format!(
                "`{program}` is not on the allow-list (allowlist_mode is on){}. Use an allowed command or ask the user to allow it.",
                if allowed.is_empty() {
                    String::new()
                } else {
                    format!("; allowed: {}", allowed.join(", "))
                }
            ),
            Reason::DeniedEnv { name, pattern } => format!(
                "setting the environment variable `{name}` is denied by the policy (rules.denied_env `{pattern}`). Run the command without it."
            ),

            // The workspace restriction.
            Reason::WorkingDirectoryOutside { dir, roots } => format!(
                "the working directory `{dir}` is outside the workspace ({roots}); workspace_only allows only paths inside it. Use a path inside the workspace."
            ),
            Reason::RunsOutside { dir, roots } => format!(
                "the command runs in `{dir}` is outside the workspace ({roots}); workspace_only allows only paths inside it. Use a path inside the workspace."
            ),
            Reason::PathOutside {
                path,
                roots,
                read_only,
            } => format!(
                "`{path}` is outside the workspace ({roots}){}; workspace_only allows only paths inside it. Use a path inside the workspace.",
                if *read_only {
                    " and the extra readable roots are read-only"
                } else {
                    ""
                }
            ),
            Reason::TooManyPaths { max, roots } => format!(
                "the command names more than {max} paths, too many to check against the workspace ({roots}); it needs approval. Split it."
            ),
            Reason::PathUnknown { path, roots } => format!(
                "the path `{path}` is only known at run time, so whether it stays inside the workspace ({roots}) cannot be checked; it needs approval. Write the path literally."
            ),

            // Interception.
            Reason::UseTool { does, tool } => format!(
                "{}; use the `{tool}` tool instead of the shell for that.",
                does.text()
            ),

            // The verdict when nothing decided.
            Reason::EmptyCommand => "the command is empty; nothing runs.".into(),
            Reason::TooLong { bytes, max } => format!(
                "the command is {bytes} bytes long, more than the {max} the policy analyses, so it needs approval. Put long scripts in a file."
            ),
            Reason::AnalysisFailed => "the command could not be analysed, so it needs approval.".into(),
            Reason::AllowedByRule { rule } => format!("allowed by the policy rule `{rule}`."),
            Reason::NoRuleMatched => "no policy rule matched the command.".into(),
            Reason::NoRuleMatchedAny { count } => {
                format!("no policy rule matched any of the {count} commands.")
            }

            // Phrases: what a deletion-like operation is called.
            Reason::RecursiveDeletion => "recursive deletion".into(),
            Reason::DeletionOfEveryFileBy { program } => {
                format!("deletion of every file by `{program}`")
            }
            Reason::Recursive { program } => format!("recursive `{program}`"),
            Reason::RecursiveRemovingAccess { program } => {
                format!("recursive `{program}` that removes access")
            }
            Reason::Moving => "moving".into(),
            Reason::DeletionBy { program } => format!("deletion by `{program}`"),
            Reason::RsyncRemoveSourceFiles => "`rsync --remove-source-files`".into(),
            Reason::RsyncDeleteToRemoteHost => "`rsync --delete` to a remote host".into(),
            Reason::RsyncDelete => "`rsync --delete`".into(),
            Reason::Program { program } => format!("`{program}`"),

            // Phrases: why a target is only known at run time.
            Reason::EmptyTempPath { word, empty } => {
                format!("`{word}` is `{empty}` if the temporary path comes out empty")
            }
            Reason::CouldExpandToRoot { word } => {
                format!("`{word}` is only known at run time and could expand to /")
            }
            Reason::CouldExpandTo { word, dir } => {
                format!("`{word}` is only known at run time and could expand to {dir}")
            }
            Reason::RelativeToUnknownDir { word } => {
                format!("`{word}` is relative to a directory only known at run time")
            }
            Reason::ThroughUnknownLink { word } => format!(
                "`{word}` goes through a symbolic link whose target is only known at run time"
            ),

            // Phrases: why a kill reaches every process.
            Reason::Killall5 => "killall5 signals every process on the system".into(),
            Reason::EndsSession => "it ends a user's or a seat's whole session".into(),
            Reason::PidGlobMatchesAll { glob } => format!("`{glob}` matches every process ID"),
            Reason::KillMinusOne => "`kill -1` targets every process".into(),
            Reason::PidMinusOne => "PID -1 means every process".into(),
            Reason::PidOneIsInit => "PID 1 is init".into(),
            Reason::SignalsEveryRootProcess => {
                "it signals every process of root, init included".into()
            }
            Reason::SignalsChildrenOfInit => {
                "it signals every child of init, the system's services".into()
            }
            Reason::InverseMatchesAll => {
                "`-v` signals every process that does not match the pattern, init included".into()
            }
            Reason::KillsUsersOfMount { mount } => format!(
                "`fuser -k -m {mount}` kills every process using the file system at {mount}"
            ),
            Reason::KillsInit => "it kills PID 1 (init)".into(),
            Reason::PatternMatchesAll { pattern } => {
                format!("the pattern `{pattern}` matches every process")
            }

            // Phrases: what makes a command too complex.
            Reason::TooLarge => "too large".into(),
            Reason::NestedTooDeeply => "nested too deeply".into(),
            Reason::ShellsNestedTooDeeply => "nested too deeply (shells inside shells)".into(),
            Reason::CodeNestedTooDeeply => "nested too deeply (code inside code)".into(),

            // Phrases: what interception saw.
            Reason::ReadsFile { program } => format!("`{program}` reads a file here"),
            Reason::SearchesFiles { program } => format!("`{program}` searches files here"),
            Reason::LooksForFiles { program } => {
                format!("`{program}` looks for files by name or type here")
            }
            Reason::EditsInPlace { program } => format!("`{program}` edits a file in place here"),
            Reason::WritesFile { program, file } => {
                format!("`{program}` with a redirection writes the file `{file}` here")
            }

            // Phrases: how a write changes a file.
            Reason::Overwriting => "overwriting".into(),
            Reason::Truncating => "truncating".into(),
            Reason::AppendingTo => "appending to".into(),

            // Phrases: what runs a command string, when it has no name.
            Reason::UnknownProgram => "an unknown program".into(),
        }
    }
}
