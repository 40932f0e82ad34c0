//! What the compact view knows of everyday outputs, as data: which programs print which kind
//! of output, the lines of each kind a model does not need (passing tests, progress, repeated
//! compile steps), and the lines it always needs (summaries and verdicts). The mechanism that
//! reads these tables is `compact.rs`; a new tool's output is a row here.

/// What an output is, as far as folding goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A test runner's report.
    Tests,
    /// A build or compiler log.
    Build,
    /// A package manager's install or download.
    Install,
    /// A service's or a script's log.
    Log,
    /// A listing of files (`ls`, `find`, `tree`, `du`).
    Listing,
    /// A file's content, or part of it (`cat`, `head`, `sed -n`).
    Content,
    /// Version-control output (`git status`, `diff`, `log`, `show`).
    VersionControl,
    /// Search results (`grep`, `rg`).
    Search,
    /// Tabular state (`ps`, `env`, `df`, `docker ps`).
    Table,
    /// Not known from the command.
    Unknown,
}

impl Kind {
    /// Whether lines of this kind may be folded: reports and logs may, and version control's
    /// hints and transfer progress; what the model asked to read (a listing, a file, search
    /// hits, a table of state) never is.
    pub(crate) fn folds(self) -> bool {
        !matches!(
            self,
            Kind::Listing | Kind::Content | Kind::Search | Kind::Table
        )
    }

    /// Whether runs of lines alike but for numbers, ids and paths fold: in a report or a log
    /// (in an output not known by name, only when its lines show it is one).
    pub(crate) fn folds_templates(self) -> bool {
        matches!(self, Kind::Tests | Kind::Build | Kind::Install | Kind::Log)
    }
}

/// The kinds whose lines are reports or logs: every folding group applies to them.
const REPORTS: &[Kind] = &[
    Kind::Tests,
    Kind::Build,
    Kind::Install,
    Kind::Log,
    Kind::Unknown,
];

/// Reports, logs and version control (`git clone`, `git pull`, `git status`).
const WITH_VERSION_CONTROL: &[Kind] = &[
    Kind::Tests,
    Kind::Build,
    Kind::Install,
    Kind::Log,
    Kind::Unknown,
    Kind::VersionControl,
];

/// Programs by the kind of output they print: `program` or `program subcommand` (the first
/// word after the program that is neither an option nor an option's value, [`OPTIONS`]).
/// `program subcommand` wins over `program`; a program with no row is not known by name (its
/// lines tell).
pub(crate) const PROGRAMS: &[(&[&str], Kind)] = &[
    (
        &[
            "cargo test",
            "cargo nextest",
            "cargo t",
            "pytest",
            "py.test",
            "go test",
            "npm test",
            "npm t",
            "yarn test",
            "pnpm test",
            "bun test",
            "deno test",
            "jest",
            "vitest",
            "mocha",
            "tox",
            "nox",
            "ctest",
            "rspec",
            "phpunit",
            "unittest",
            "mvn test",
            "gradle test",
            "make test",
            "make check",
            "dotnet test",
        ],
        Kind::Tests,
    ),
    (
        &[
            "cargo build",
            "cargo b",
            "cargo check",
            "cargo c",
            "cargo clippy",
            "cargo doc",
            "make",
            "cmake",
            "ninja",
            "gcc",
            "g++",
            "cc",
            "clang",
            "clang++",
            "rustc",
            "tsc",
            "go build",
            "go vet",
            "go install",
            "mvn",
            "gradle",
            "docker build",
            "podman build",
            "javac",
            "meson",
            "dotnet build",
        ],
        Kind::Build,
    ),
    (
        &[
            "pip install",
            "pip3 install",
            "pip download",
            "pip uninstall",
            "uv sync",
            "uv add",
            "uv pip",
            "poetry install",
            "poetry add",
            "poetry update",
            "npm install",
            "npm i",
            "npm ci",
            "npm update",
            "npm uninstall",
            "yarn install",
            "yarn add",
            "pnpm install",
            "pnpm i",
            "pnpm add",
            "bun install",
            "bun add",
            "apt install",
            "apt-get install",
            "apt update",
            "apt-get update",
            "apt upgrade",
            "apt-get upgrade",
            "dnf install",
            "yum install",
            "apk add",
            "brew install",
            "cargo install",
            "cargo fetch",
            "cargo update",
            "go get",
            "gem install",
            "bundle install",
            "conda install",
            "conda create",
        ],
        Kind::Install,
    ),
    (
        &["journalctl", "docker logs", "kubectl logs", "podman logs"],
        Kind::Log,
    ),
    (
        &[
            "ls",
            "find",
            "tree",
            "du",
            "fd",
            "fdfind",
            "locate",
            "exa",
            "eza",
            "git ls-files",
            "git ls-tree",
        ],
        Kind::Listing,
    ),
    (
        &[
            "cat",
            "head",
            "tail",
            "less",
            "more",
            "bat",
            "batcat",
            "sed",
            "awk",
            "nl",
            "tac",
            "jq",
            "yq",
            "xxd",
            "od",
            "hexdump",
            "sqlite3",
            "psql",
            "mysql",
            "diff",
            "git diff",
            "git show",
            "git log",
            "git whatchanged",
            "git blame",
            "git format-patch",
            "git reflog",
            "git shortlog",
        ],
        Kind::Content,
    ),
    (&["git", "hg", "svn", "patch"], Kind::VersionControl),
    (
        &["grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep"],
        Kind::Search,
    ),
    (
        &[
            "ps",
            "env",
            "printenv",
            "df",
            "free",
            "top",
            "lsof",
            "ss",
            "netstat",
            "ip",
            "mount",
            "lsblk",
            "docker ps",
            "docker images",
            "podman ps",
            "kubectl get",
            "kubectl describe",
            "systemctl",
            "crontab",
            "id",
        ],
        Kind::Table,
    ),
];

/// Options that take a value, of programs whose subcommand comes after their options
/// (`git -C dir status`, `make -C dir test`), and of runners.
pub(crate) const OPTIONS: &[(&str, &[&str])] = &[
    (
        "git",
        &["-C", "-c", "--git-dir", "--work-tree", "--namespace"],
    ),
    (
        "make",
        &[
            "-C",
            "-f",
            "-j",
            "-l",
            "-o",
            "-W",
            "-I",
            "--directory",
            "--file",
        ],
    ),
    (
        "cargo",
        &["-C", "--manifest-path", "--config", "-Z", "-p", "--package"],
    ),
    ("go", &["-C"]),
    ("npm", &["--prefix", "-w", "--workspace"]),
    ("docker", &["-H", "--context", "-c", "--host"]),
    (
        "kubectl",
        &["-n", "--namespace", "--context", "-l", "--kubeconfig"],
    ),
    (
        "sudo",
        &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
    ),
    ("doas", &["-u"]),
    ("env", &["-u", "-C", "-S"]),
    ("nice", &["-n"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("time", &["-f", "-o"]),
    ("exec", &["-a"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("xargs", &["-n", "-I", "-d", "-L", "-P", "-s", "-E", "-a"]),
    ("watch", &["-n"]),
    ("npx", &["-p", "--package"]),
];

/// Words that run the command after them (after their options, and a duration for
/// `timeout`): the command's program is the word after. Alone, a runner is the program
/// (`env` prints the environment).
pub(crate) const RUNNERS: &[&str] = &[
    "sudo", "doas", "time", "env", "nice", "nohup", "exec", "command", "npx", "pnpx", "bunx",
    "timeout", "stdbuf", "ionice", "xargs", "watch", "unbuffer",
];

/// Subcommands that run the command after them: `uv run pytest` is pytest; `cargo run`,
/// `npm run` and `go run` print their program's output, known by its lines.
pub(crate) const RUN_SUBCOMMANDS: &[&str] = &[
    "uv run",
    "poetry run",
    "pipenv run",
    "pdm run",
    "hatch run",
    "rye run",
    "pnpm exec",
    "pnpm dlx",
    "yarn dlx",
    "yarn exec",
    "npm exec",
    "bundle exec",
];

/// Shell keywords a simple command may start with (the command is after them) or be (`fi`:
/// none).
pub(crate) const KEYWORDS: &[&str] = &[
    "!", "{", "}", "then", "do", "done", "else", "elif", "if", "fi", "while", "until", "time",
    "esac",
];

/// Directories whose entries a listing's reader seldom wants one by one — dependencies, build
/// output, caches, test fixtures: a listing too long for the window folds them first.
pub(crate) const BULKY_DIRECTORIES: &[&str] = &[
    "node_modules",
    "vendor",
    "dist",
    "build",
    "target",
    ".git",
    "__pycache__",
    ".venv",
    "venv",
    "site-packages",
    "coverage",
    ".next",
    ".cache",
    "generated",
    "__generated__",
    "__snapshots__",
    "__tests__",
    "__mocks__",
    "__fixtures__",
    "fixtures",
    "testdata",
];

/// A stage after a pipe that passes the output on as it is: the stage before it decides
/// (`cat FILE`, though, shows a file).
pub(crate) const PASS_THROUGH: &[&str] = &["tee", "head", "tail", "cat", "less", "more"];

/// Rules are byte regexes with ASCII semantics (`\b`, `\s`, `(?i)` over ASCII); a character
/// beyond ASCII is written as a literal or an alternation of literals, never in a class.
///
/// Lines a model does not need, by what they are: each folded into a counted marker where a
/// few of the same group follow each other. A line that is salient (an error, a failure, a
/// warning) or a summary is never folded, whatever it matches.
/// Each group: what its lines are, the kinds of output it folds in, its rules. Version
/// control's diffs and logs are the model's to read: only git's own hints and transfer
/// progress fold there, by rules no line of a diff (led by ` `, `+` or `-`) can match.
pub(crate) const FOLDS: &[(&str, &[Kind], &[&str])] = &[
    (
        "lines of passing tests",
        REPORTS,
        &[
            // libtest, unittest -v: `test a::b ... ok`, `test_x (m.C.test_x) ... ok`.
            r"^\S.* \.\.\. ok$",
            // pytest -v: `tests/test_a.py::test_b PASSED   [ 12%]`.
            r"^\S+::\S.* PASSED\b",
            // pytest's progress: dots (a line holding an F or an E is not one).
            r"^(\S+\.py )?[.sxX]+ *(\[ *\d+%\])?$",
            // go test -v.
            r"^=== (RUN|PAUSE|CONT|NAME)\s",
            r"^\s*--- PASS: ",
            r"^ok\s+\S+\s+(\(cached\)|[\d.]+s)",
            r"^PASS$",
            // TAP, node --test: `ok 3 - name`, its YAML block and subtest headers.
            r"^\s*ok \d+ - ",
            r"^\s*# Subtest: ",
            r"^\s+(---|\.\.\.)$",
            r"^\s+duration_ms: [\d.]+$",
            r"^\s+type: '?(test|suite)'?$",
            // Spec reporters (jest, mocha, vitest, node): a check mark.
            r"^\s*(?:✓|✔|√) ",
            r"^\s*PASS ",
            // googletest.
            r"^\[ +(RUN|OK) +\] ",
        ],
    ),
    (
        "progress lines",
        REPORTS,
        &[
            // cargo: `   Compiling serde v1.0.200`, `  Downloaded libc v0.2.150`.
            r"^\s*(Compiling|Checking|Documenting|Fresh|Downloaded|Downloading|Locking|Adding|Packaging|Verifying|Archiving|Updating|Unpacking) \S+ v\d",
            r"^\s*(Updating|Downloading) (crates\.io index|\d+ crates?)",
            // pip.
            r"^Requirement already satisfied: ",
            r"^Collecting ",
            r"^Processing \.{0,2}/",
            r"^\s+Downloading \S",
            r"^\s+Using cached ",
            r"^\s+(Preparing|Getting|Installing) (metadata|requirements|build dependencies|backend dependencies)",
            r"^\s+(Building|Created) wheel for ",
            r"^\s+Stored in directory: ",
            r"^Building wheels for collected packages",
            r"^\s+(Attempting uninstall|Found existing installation|Uninstalling|Successfully uninstalled) ",
            r"^\s*(?:━|╸|╺|─){4,}",
            r"^\s*(Obtaining|Looking in indexes|Link requires|Skipping link) ",
            // npm's verbose lines.
            r"^npm (http|timing|verbose|sill|info) ",
            // apt, dpkg.
            r"^(Get|Hit|Ign):\d+ ",
            r"^(Selecting previously unselected package|Preparing to unpack|Unpacking|Setting up|Processing triggers for) ",
            r"^\(Reading database \.\.\. ",
            // go, maven, gradle, docker.
            r"^go: (downloading|finding|extracting) ",
            r"^(\[INFO\] )?Download(ing|ed) from ",
            r"^> Task :\S+( (UP-TO-DATE|NO-SOURCE|FROM-CACHE|SKIPPED))?$",
            r"^#\d+ (\[internal\]|DONE|CACHED|sha256:|resolve |transferring )",
            r"^ ---> ",
        ],
    ),
    (
        "transfer progress lines",
        WITH_VERSION_CONTROL,
        &[
            r"^(remote: )?(Enumerating|Counting|Compressing|Receiving|Resolving|Writing|Total|Unpacking|Updating files|Checking out files|Filtering content)\b.*(done|\d+%)",
        ],
    ),
    (
        "hint lines",
        WITH_VERSION_CONTROL,
        &[
            // git status: `  (use "git add <file>..." to update what will be committed)`.
            r#"^\s+\(use "git [^)]*\)$"#,
            r"^hint: ",
        ],
    ),
    (
        "compile-step lines",
        REPORTS,
        &[
            r"^(\S*/)?(gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(-\d+)? .*-c ",
            r"^\s*(CC|CXX|LD|AR|AS|GEN|CCLD|CXXLD|HOSTCC|INSTALL|RANLIB|MOC|UIC)\s+\S+$",
            r"^\[ *\d+%\] (Building|Linking|Built target|Scanning)",
            r"^\[\d+/\d+\] (Building|Linking|Compiling|Generating|Running|Installing|Scanning|Copying) ",
            r"^make(\[\d+\])?: (Entering|Leaving) directory ",
            r"^make(\[\d+\])?: Nothing to be done",
        ],
    ),
];

/// Summaries and verdicts: never folded, though a folding rule matches them.
pub(crate) const KEEP: &[&str] = &[
    r"^test result: ",
    r"^running \d+ tests?$",
    r"\b\d+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b",
    r"^=+ .* =+$",
    r"^(Tests?|Test Suites|Snapshots|Time):\s",
    r"^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d",
    r"^\s*not ok \d+",
    r"^(Ran \d+ tests?|OK\b|FAILED \()",
    r"^\s*Finished ",
    r"^Successfully (installed|built) ",
    r"^(added|removed|changed|up to date|found) ",
    r"^\d+ (upgraded|newly installed)",
    r"(?i)\bwarn(ing)?s?\b",
    // A failed test's mark (jest, vitest), and the list of failures a runner ends with.
    r"^\s*(?:✕|×|✗) ",
    r"^failures:$",
    r"(?i)\bdeprecat",
];
