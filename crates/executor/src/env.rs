//! The hardened, non-interactive environment every command gets (contract §5).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Pager variables set to `cat`.
pub const PAGER_VARS: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "BAT_PAGER",
    "DELTA_PAGER",
    "GH_PAGER",
    "GLAB_PAGER",
    "PSQL_PAGER",
    "MYSQL_PAGER",
    "HOMEBREW_PAGER",
];

/// The fixed part of the hardened environment: no pagers, editors, prompts, colours or progress bars.
pub const HARDENED: &[(&str, &str)] = &[
    ("AWS_PAGER", ""),
    ("LESS", "FRX"),
    ("GIT_EDITOR", "true"),
    ("VISUAL", "true"),
    ("EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("SSH_ASKPASS", "/usr/bin/false"),
    ("CI", "1"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("npm_config_yes", "true"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_progress", "false"),
    ("PNPM_DISABLE_SELF_UPDATE_CHECK", "true"),
    ("YARN_ENABLE_PROGRESS_BARS", "0"),
    ("CARGO_TERM_PROGRESS_WHEN", "never"),
    ("TF_INPUT", "0"),
    ("TF_IN_AUTOMATION", "1"),
    ("GH_PROMPT_DISABLED", "1"),
    ("COMPOSER_NO_INTERACTION", "1"),
    ("CLOUDSDK_CORE_DISABLE_PROMPTS", "1"),
    ("NO_COLOR", "1"),
];

/// Names of inherited variables that look like credentials, withheld from commands by default
/// (contract §5): glob patterns (`*` for any run of characters), matched case-insensitively.
/// The cloud providers' credential variables all match one of them (`AWS_ACCESS_KEY_ID`,
/// `AWS_SESSION_TOKEN`, `AZURE_CLIENT_SECRET`, `GOOGLE_APPLICATION_CREDENTIALS`,
/// `DIGITALOCEAN_ACCESS_TOKEN`, …), as do the usual API keys (`OPENAI_API_KEY`,
/// `ANTHROPIC_API_KEY`, `GITHUB_TOKEN`, `NPM_TOKEN`, `HF_TOKEN`) and database passwords
/// (`PGPASSWORD`, `MYSQL_PWD`).
pub const SECRET_PATTERNS: &[&str] = &[
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*PGPASS*",
    "*CREDENTIAL*",
    "*CREDS*",
    "*_PWD",
    "*_PW",
    "PW",
    "*_PAT",
    "*_AUTH",
    "*AUTH_*",
    "*JWT*",
    "*BEARER*",
    "*COOKIE*",
    "*WEBHOOK*",
    "*_DSN",
    "*DATABASE_URL*",
    "*CONNECTION_STRING*",
];

/// Whether an inherited variable's value carries a password in a URL (`scheme://user:pass@host`:
/// a database URL, a proxy with credentials), whatever its name.
pub fn carries_credentials(value: &str) -> bool {
    value.split("://").skip(1).any(|rest| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// Names that match [`SECRET_PATTERNS`] but hold no secret, passed as they are.
pub const NOT_SECRETS: &[&str] = &["TOKENIZERS_PARALLELISM", "KEYTIMEOUT", "SSH_AUTH_SOCK"];

/// Which inherited variables a command sees.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvPolicy {
    /// Everything the tool inherited (the default), but the secrets [`SecretRule`] withholds.
    #[default]
    InheritAll,
    /// Nothing inherited but `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TMPDIR` and the locale.
    Minimal,
}

/// Which inherited variables are withheld because their names look like credentials.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SecretRule {
    /// Names withheld: glob patterns, case-insensitive. Default: [`SECRET_PATTERNS`]; empty
    /// turns the rule off.
    pub withhold: Vec<String>,
    /// Names passed all the same (the operator's `--pass-env`): exact names or glob patterns,
    /// case-sensitive; `*` passes every one. Default: [`NOT_SECRETS`].
    pub pass: Vec<String>,
}

impl Default for SecretRule {
    fn default() -> Self {
        SecretRule {
            withhold: SECRET_PATTERNS.iter().map(|p| (*p).to_owned()).collect(),
            pass: NOT_SECRETS.iter().map(|p| (*p).to_owned()).collect(),
        }
    }
}

impl SecretRule {
    /// Whether the inherited variable `name` (holding `value`) is withheld: its name looks
    /// like a credential, or its value carries one ([`carries_credentials`]).
    pub fn withholds(&self, name: &str, value: &std::ffi::OsStr) -> bool {
        if self.withhold.is_empty() || self.pass.iter().any(|p| glob_match(p, name)) {
            return false;
        }
        self.withhold
            .iter()
            .any(|p| glob_match_by(p, name, u8::eq_ignore_ascii_case))
            || carries_credentials(&value.to_string_lossy())
    }

    /// The names of this process's variables that commands do not get, sorted (read now).
    pub fn withheld(&self) -> Vec<String> {
        Inherited::read(&EnvPolicy::InheritAll, self).withheld
    }
}

/// This process's variables as an [`EnvConfig`]'s rules filter them: those commands inherit,
/// and the names withheld as credentials.
#[derive(Debug)]
pub struct Inherited {
    /// The rules it was filtered by.
    rules: (EnvPolicy, SecretRule),
    /// The variables commands inherit, in the environment's order.
    pub vars: Vec<(OsString, OsString)>,
    /// The names withheld as credentials, sorted.
    pub withheld: Vec<String>,
}

impl Inherited {
    fn read(policy: &EnvPolicy, secrets: &SecretRule) -> Inherited {
        let mut vars = Vec::new();
        let mut withheld = Vec::new();
        for (k, v) in std::env::vars_os() {
            match policy {
                EnvPolicy::InheritAll if secrets.withholds(&k.to_string_lossy(), &v) => {
                    withheld.extend(k.into_string().ok());
                }
                EnvPolicy::InheritAll => vars.push((k, v)),
                EnvPolicy::Minimal if MINIMAL_KEEP.iter().any(|m| k == *m) => vars.push((k, v)),
                EnvPolicy::Minimal => {
                    if secrets.withholds(&k.to_string_lossy(), &v) {
                        withheld.extend(k.into_string().ok());
                    }
                }
            }
        }
        withheld.sort();
        Inherited {
            rules: (policy.clone(), secrets.clone()),
            vars,
            withheld,
        }
    }
}

/// The [`Inherited`] variables of an [`EnvConfig`] and its clones, read from the environment
/// at their first command and kept: reading every variable and matching it against the secret
/// patterns cost a warm session call a fifth of its time. A `Tool` starts a cache of its own,
/// so a variable this process sets afterwards reaches the commands of a new `Tool`, not of one
/// that ran a command already.
#[derive(Clone, Default)]
pub struct InheritedCache(Arc<Mutex<Option<Arc<Inherited>>>>);

impl std::fmt::Debug for InheritedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InheritedCache")
    }
}

/// A cache is not part of what a configuration says.
impl PartialEq for InheritedCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for InheritedCache {}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob_match(pattern: &str, text: &str) -> bool {
    glob_match_by(pattern, text, u8::eq)
}

/// [`glob_match`] with characters compared by `same` (variable names are short: the
/// backtracking of the last `*` is all it needs; no allocation, as it runs per variable per
/// call).
fn glob_match_by(pattern: &str, text: &str, same: impl Fn(&u8, &u8) -> bool) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && same(&p[pi], &t[ti]) {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// How the environment of a command is built.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct EnvConfig {
    /// Inherited variables. Default: [`EnvPolicy::InheritAll`].
    pub policy: EnvPolicy,
    /// Inherited variables withheld as credentials. Default: [`SecretRule::default`].
    pub secrets: SecretRule,
    /// Apply the hardened variables of contract §5. Default: `true`.
    pub harden: bool,
    /// Overrides of hardened values (set to replace, applied after hardening). Default: empty.
    pub overrides: BTreeMap<String, String>,
    /// `TERM` for piped commands. Default: `dumb`.
    pub term: String,
    /// The variables inherited under these rules, read once.
    #[serde(skip)]
    pub inherited: InheritedCache,
}

impl EnvConfig {
    /// This process's variables as these rules filter them, read at the first call and kept
    /// (read again when the rules of a clone changed).
    pub fn inherited(&self) -> Arc<Inherited> {
        let mut cached = self.cached_inherited();
        if let Some(inherited) = cached.as_ref()
            && inherited.rules.0 == self.policy
            && inherited.rules.1 == self.secrets
        {
            return inherited.clone();
        }
        let inherited = Arc::new(Inherited::read(&self.policy, &self.secrets));
        *cached = Some(inherited.clone());
        inherited
    }

    fn cached_inherited(&self) -> std::sync::MutexGuard<'_, Option<Arc<Inherited>>> {
        self.inherited
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for EnvConfig {
    fn default() -> Self {
        EnvConfig {
            policy: EnvPolicy::InheritAll,
            secrets: SecretRule::default(),
            harden: true,
            overrides: BTreeMap::new(),
            term: "dumb".into(),
            inherited: InheritedCache::default(),
        }
    }
}

fn utf8_locale() -> Option<&'static str> {
    static LOCALE: OnceLock<Option<&'static str>> = OnceLock::new();
    *LOCALE.get_or_init(|| {
        ["C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8"]
            .into_iter()
            .find(|name| {
                ["/usr/lib/locale", "/usr/share/locale"]
                    .iter()
                    .any(|d| std::path::Path::new(d).join(name).exists())
            })
    })
}

/// The spelling a locale is installed under, when the name given is spelled otherwise and
/// has no directory of its own: Debian installs `C.UTF-8` as `C.utf8`, and glibc finds it only
/// after a failed open per category — 12 of the 27 files bash opens at every start. The
/// installed spelling names the same locale and costs none of them.
fn installed_spelling(name: &str) -> Option<&'static str> {
    static C_UTF8_AS_UTF8: OnceLock<bool> = OnceLock::new();
    let respelled = name == "C.UTF-8"
        && *C_UTF8_AS_UTF8.get_or_init(|| {
            let dir = std::path::Path::new("/usr/lib/locale");
            !dir.join("C.UTF-8").exists() && dir.join("C.utf8").is_dir()
        });
    respelled.then_some("C.utf8")
}

fn is_utf8_locale(value: &str) -> bool {
    let v = value.to_ascii_lowercase();
    v.contains("utf-8") || v.contains("utf8")
}

const MINIMAL_KEEP: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
];

/// Builds the full environment: inherited (per policy, less the withheld secrets) → hardened →
/// overrides → `extra` (the operator's overrides and a request's own variables always pass).
pub fn build_env(
    config: &EnvConfig,
    extra: &[(String, String)],
    pty: bool,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = config.inherited().vars.iter().cloned().collect();
    if config.harden {
        for p in PAGER_VARS {
            env.insert((*p).into(), "cat".into());
        }
        for (k, v) in HARDENED {
            env.insert((*k).into(), (*v).into());
        }
        let term = if pty {
            "xterm-256color"
        } else {
            config.term.as_str()
        };
        env.insert("TERM".into(), term.into());
        let current = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|k| env.get(&OsString::from(*k)).filter(|v| !v.is_empty()))
            .map(|v| v.to_string_lossy().into_owned());
        if !current.as_deref().is_some_and(is_utf8_locale)
            && let Some(locale) = utf8_locale()
        {
            env.insert("LC_ALL".into(), locale.into());
        }
        for (name, value) in &mut env {
            if (name == "LANG" || name.as_encoded_bytes().starts_with(b"LC_"))
                && let Some(spelling) = value.to_str().and_then(installed_spelling)
            {
                *value = spelling.into();
            }
        }
    }
    for (k, v) in &config.overrides {
        env.insert(k.into(), v.into());
    }
    for (k, v) in extra {
        env.insert(k.into(), v.into());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(env: &'a [(OsString, OsString)], k: &str) -> Option<&'a str> {
        env.iter()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| v.to_str())
    }

    #[test]
    fn hardened_values_are_set_and_extra_wins() {
        let env = build_env(
            &EnvConfig::default(),
            &[("EDITOR".into(), "vim".into())],
            false,
        );
        assert_eq!(get(&env, "GIT_PAGER"), Some("cat"));
        assert_eq!(get(&env, "AWS_PAGER"), Some(""));
        assert_eq!(get(&env, "TERM"), Some("dumb"));
        assert_eq!(get(&env, "GIT_TERMINAL_PROMPT"), Some("0"));
        assert_eq!(get(&env, "EDITOR"), Some("vim"));
        let env = build_env(&EnvConfig::default(), &[], true);
        assert_eq!(get(&env, "TERM"), Some("xterm-256color"));
    }

    #[test]
    fn a_locale_is_passed_in_the_spelling_it_is_installed_under() {
        let installed = std::path::Path::new("/usr/lib/locale/C.utf8").is_dir()
            && !std::path::Path::new("/usr/lib/locale/C.UTF-8").exists();
        let env = build_env(
            &EnvConfig::default(),
            &[("LANG".into(), "C.UTF-8".into())],
            false,
        );
        // `extra` is applied as given (it comes after hardening).
        assert_eq!(get(&env, "LANG"), Some("C.UTF-8"));
        assert_eq!(installed_spelling("C.UTF-8"), installed.then_some("C.utf8"));
        assert_eq!(installed_spelling("en_US.UTF-8"), None);
    }

    #[test]
    fn overrides_replace_hardened_values() {
        let mut config = EnvConfig::default();
        config.overrides.insert("CI".into(), "0".into());
        assert_eq!(get(&build_env(&config, &[], false), "CI"), Some("0"));
    }

    #[test]
    fn secrets_are_withheld_unless_passed_and_a_requests_own_pass() {
        // SAFETY: tests in this module do not read these variables concurrently.
        unsafe {
            std::env::set_var("AGENT_EXEC_TEST_API_TOKEN", "s3cret");
            std::env::set_var("AGENT_EXEC_TEST_PLAIN", "plain");
        }
        let env = build_env(&EnvConfig::default(), &[], false);
        assert_eq!(get(&env, "AGENT_EXEC_TEST_API_TOKEN"), None);
        assert_eq!(get(&env, "AGENT_EXEC_TEST_PLAIN"), Some("plain"));
        let own = [("AGENT_EXEC_TEST_API_TOKEN".to_owned(), "mine".to_owned())];
        let env = build_env(&EnvConfig::default(), &own, false);
        assert_eq!(get(&env, "AGENT_EXEC_TEST_API_TOKEN"), Some("mine"));
        let mut config = EnvConfig::default();
        config.secrets.pass.push("AGENT_EXEC_TEST_*".into());
        let env = build_env(&config, &[], false);
        assert_eq!(get(&env, "AGENT_EXEC_TEST_API_TOKEN"), Some("s3cret"));
        assert!(
            EnvConfig::default()
                .secrets
                .withheld()
                .contains(&"AGENT_EXEC_TEST_API_TOKEN".to_owned())
        );
    }

    #[test]
    fn credential_names_are_withheld_and_ordinary_names_pass() {
        let rule = SecretRule::default();
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "AZURE_CLIENT_SECRET",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "PGPASSWORD",
            "MYSQL_PWD",
            "NPM_CONFIG__AUTH",
            "my_db_password",
            "SSH_PASSPHRASE",
            "apikey",
            "GH_PAT",
            "PGPASS",
            "SENTRY_DSN",
            "DATABASE_URL",
            "SLACK_WEBHOOK_URL",
            "CI_JOB_JWT",
            "KUBE_BEARER",
            "DOCKER_AUTH_CONFIG",
            "AZURE_STORAGE_CONNECTION_STRING",
            "SESSION_COOKIE",
            "AUTH_HEADER",
            "PW",
            "CREDS",
        ] {
            assert!(rule.withholds(name, "x".as_ref()), "{name}");
        }
        // A password in a URL, whatever the name.
        for value in [
            "postgres://app:hunter2@db:5432/app",
            "http://me:pw@proxy.corp:3128",
            "redis://:secret@cache:6379/0",
        ] {
            assert!(rule.withholds("SOME_URL", value.as_ref()), "{value}");
        }
        for value in [
            "https://example.com/a@b",
            "git@github.com:org/repo.git",
            "postgres://localhost/app",
        ] {
            assert!(!rule.withholds("SOME_URL", value.as_ref()), "{value}");
        }
        for name in [
            "PATH",
            "HOME",
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "TOKENIZERS_PARALLELISM",
            "LANG",
            "SSH_AUTH_SOCK",
            "GIT_AUTHOR_NAME",
            "INSTA_FORCE_PASS",
            "DBUS_SESSION_BUS_ADDRESS",
            "XDG_SESSION_ID",
        ] {
            assert!(!rule.withholds(name, "x".as_ref()), "{name}");
        }
        let off = SecretRule {
            withhold: Vec::new(),
            ..SecretRule::default()
        };
        assert!(!off.withholds("GITHUB_TOKEN", "x".as_ref()));
        let all = SecretRule {
            pass: vec!["*".into()],
            ..SecretRule::default()
        };
        assert!(!all.withholds("GITHUB_TOKEN", "x".as_ref()));
    }

    #[test]
    fn globs_match_as_shells_do() {
        for (pattern, text, matched) in [
            ("*KEY*", "API_KEY_ID", true),
            ("*KEY*", "KEY", true),
            ("*_PWD", "MYSQL_PWD", true),
            ("*_PWD", "OLDPWD", false),
            ("A*B*C", "AXXBYYC", true),
            ("A*B*C", "AXXBYY", false),
            ("*", "", true),
            ("ABC", "ABCD", false),
            ("**X", "YX", true),
        ] {
            assert_eq!(glob_match(pattern, text), matched, "{pattern} {text}");
        }
    }

    proptest::proptest! {
        /// A name always matches itself and `*`-wrapped pieces of itself.
        #[test]
        fn a_name_matches_its_own_pieces(name in "[A-Z_]{0,12}", cut in 0usize..12) {
            let cut = cut.min(name.len());
            proptest::prop_assert!(glob_match(&name, &name));
            let inner = format!("*{}*", &name[cut..]);
            let prefix = format!("{}*", &name[..cut]);
            proptest::prop_assert!(glob_match(&inner, &name));
            proptest::prop_assert!(glob_match(&prefix, &name));
        }
    }
}
