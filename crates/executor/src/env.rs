//! The hardened, non-interactive environment every command gets (contract §5).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::OnceLock;

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

/// Default name patterns of secret-looking variables (`*KEY*`, `*SECRET*`, …), matched
/// case-insensitively as substrings.
pub const SECRET_PATTERNS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD"];

/// Which inherited variables a command sees.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EnvPolicy {
    /// Everything the tool inherited (the default).
    #[default]
    InheritAll,
    /// Everything except names containing one of these substrings (case-insensitive).
    ExcludeSecrets(Vec<String>),
    /// Nothing inherited but `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TMPDIR` and the locale.
    Minimal,
}

/// How the environment of a command is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvConfig {
    /// Inherited variables. Default: [`EnvPolicy::InheritAll`].
    pub policy: EnvPolicy,
    /// Apply the hardened variables of contract §5. Default: `true`.
    pub harden: bool,
    /// Overrides of hardened values (set to replace, applied after hardening). Default: empty.
    pub overrides: BTreeMap<String, String>,
    /// `TERM` for piped commands. Default: `dumb`.
    pub term: String,
}

impl Default for EnvConfig {
    fn default() -> Self {
        EnvConfig {
            policy: EnvPolicy::InheritAll,
            harden: true,
            overrides: BTreeMap::new(),
            term: "dumb".into(),
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

/// Builds the full environment: inherited (per policy) → hardened → overrides → `extra`.
pub fn build_env(
    config: &EnvConfig,
    extra: &[(String, String)],
    pty: bool,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    for (k, v) in std::env::vars_os() {
        let keep = match &config.policy {
            EnvPolicy::InheritAll => true,
            EnvPolicy::ExcludeSecrets(patterns) => {
                let name = k.to_string_lossy().to_ascii_uppercase();
                !patterns
                    .iter()
                    .any(|p| name.contains(&p.to_ascii_uppercase()))
            }
            EnvPolicy::Minimal => MINIMAL_KEEP.iter().any(|m| k == *m),
        };
        if keep {
            env.insert(k, v);
        }
    }
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
    fn secrets_can_be_excluded() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("AGENT_EXEC_TEST_API_TOKEN", "s3cret") };
        let all = build_env(&EnvConfig::default(), &[], false);
        assert_eq!(get(&all, "AGENT_EXEC_TEST_API_TOKEN"), Some("s3cret"));
        let config = EnvConfig {
            policy: EnvPolicy::ExcludeSecrets(
                SECRET_PATTERNS.iter().map(|s| (*s).to_owned()).collect(),
            ),
            ..EnvConfig::default()
        };
        assert_eq!(
            get(&build_env(&config, &[], false), "AGENT_EXEC_TEST_API_TOKEN"),
            None
        );
    }
}
