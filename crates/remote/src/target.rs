//! Where a call runs: `ssh://[user@]host[:port]`, `docker://CONTAINER`, `podman://CONTAINER`,
//! `kubectl://[NAMESPACE/]POD[/CONTAINER]` (contract §9).

use std::fmt;
use std::str::FromStr;

/// A remote target, parsed from its URI.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// A machine reached with `ssh` (options from the user's ssh config, as usual).
    Ssh {
        /// The login name, when the URI names one.
        user: Option<String>,
        /// Host name, address, or an alias of the ssh config.
        host: String,
        /// The port, when the URI names one.
        port: Option<u16>,
    },
    /// A running Docker container (`docker exec -i`).
    Docker {
        /// Its name or id.
        container: String,
    },
    /// A running Podman container (`podman exec -i`).
    Podman {
        /// Its name or id.
        container: String,
    },
    /// A container of a Kubernetes pod (`kubectl exec -i`).
    Kubectl {
        /// The namespace, when the URI names one (else kubectl's current one).
        namespace: Option<String>,
        /// The pod.
        pod: String,
        /// The container, when the URI names one (else the pod's default one).
        container: Option<String>,
    },
}

/// A target URI that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

const FORMS: &str = "ssh://[user@]host[:port], docker://CONTAINER, podman://CONTAINER or kubectl://[NAMESPACE/]POD[/CONTAINER]";

/// A name handed to an engine's client as one argument: never empty, never an option
/// (`-oProxyCommand=…` as a "host" would run a command here), no spaces or controls.
fn name(kind: &str, value: &str, uri: &str) -> Result<String, TargetError> {
    let bad = value.is_empty()
        || value.starts_with('-')
        || value
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "/@'\"\\`$;&|<>(){}*?".contains(c));
    if bad {
        return Err(TargetError(format!(
            "target {uri:?}: {kind} {value:?} is not a valid name (letters, digits, `.`, `_`, `-`, `:`; not starting with `-`)"
        )));
    }
    Ok(value.to_owned())
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(uri: &str) -> Result<Target, TargetError> {
        let Some((scheme, rest)) = uri.split_once("://") else {
            return Err(TargetError(format!(
                "target {uri:?} is not a URI: write {FORMS}"
            )));
        };
        match scheme {
            "ssh" => {
                let (user, hostport) = match rest.rsplit_once('@') {
                    Some((u, h)) => (Some(name("user", u, uri)?), h),
                    None => (None, rest),
                };
                // `[::1]:2222` or `host:2222` or a bare IPv6 address in brackets.
                let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
                    let Some((h, after)) = inner.split_once(']') else {
                        return Err(TargetError(format!("target {uri:?}: `[` without `]`")));
                    };
                    if !after.is_empty() && !after.starts_with(':') {
                        return Err(TargetError(format!(
                            "target {uri:?}: only `:PORT` may follow `[ADDRESS]`"
                        )));
                    }
                    (h, after.strip_prefix(':'))
                } else {
                    match hostport.split_once(':') {
                        Some((h, p)) => (h, Some(p)),
                        None => (hostport, None),
                    }
                };
                let port = port
                    .map(|p| {
                        p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| {
                            TargetError(format!(
                                "target {uri:?}: port {p:?} is not a port (1-65535)"
                            ))
                        })
                    })
                    .transpose()?;
                Ok(Target::Ssh {
                    user,
                    host: name("host", host, uri)?,
                    port,
                })
            }
            "docker" | "podman" => {
                let container = name("container", rest, uri)?;
                Ok(if scheme == "docker" {
                    Target::Docker { container }
                } else {
                    Target::Podman { container }
                })
            }
            "kubectl" => {
                let parts: Vec<&str> = rest.split('/').collect();
                let (namespace, pod, container) = match parts.as_slice() {
                    [pod] => (None, *pod, None),
                    [ns, pod] => (Some(*ns), *pod, None),
                    [ns, pod, c] => (Some(*ns), *pod, Some(*c)),
                    _ => {
                        return Err(TargetError(format!(
                            "target {uri:?}: write kubectl://[NAMESPACE/]POD[/CONTAINER]"
                        )));
                    }
                };
                Ok(Target::Kubectl {
                    namespace: namespace.map(|n| name("namespace", n, uri)).transpose()?,
                    pod: name("pod", pod, uri)?,
                    container: container.map(|c| name("container", c, uri)).transpose()?,
                })
            }
            other => Err(TargetError(format!(
                "target {uri:?}: unknown engine {other:?}; write {FORMS}"
            ))),
        }
    }
}

impl fmt::Display for Target {
    /// The URI, in the form it was parsed from.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Ssh { user, host, port } => {
                f.write_str("ssh://")?;
                if let Some(u) = user {
                    write!(f, "{u}@")?;
                }
                if host.contains(':') {
                    write!(f, "[{host}]")?;
                } else {
                    f.write_str(host)?;
                }
                if let Some(p) = port {
                    write!(f, ":{p}")?;
                }
                Ok(())
            }
            Target::Docker { container } => write!(f, "docker://{container}"),
            Target::Podman { container } => write!(f, "podman://{container}"),
            Target::Kubectl {
                namespace,
                pod,
                container,
            } => {
                f.write_str("kubectl://")?;
                match (namespace, container) {
                    (Some(ns), Some(c)) => write!(f, "{ns}/{pod}/{c}"),
                    (Some(ns), None) => write!(f, "{ns}/{pod}"),
                    // A container needs the namespace before it (`POD/CONTAINER` would read
                    // as `NAMESPACE/POD`); kubectl's own default is `default`.
                    (None, Some(c)) => write!(f, "default/{pod}/{c}"),
                    (None, None) => f.write_str(pod),
                }
            }
        }
    }
}

/// Whether `uri` matches `pattern`, where `*` stands for any run of characters (the operator's
/// `--allow-target docker://agent-*`).
pub fn pattern_matches(pattern: &str, uri: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = uri.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(uri: &str) -> Target {
        uri.parse().unwrap()
    }

    #[test]
    fn every_form_parses_and_prints_back() {
        for uri in [
            "ssh://box",
            "ssh://me@box:2222",
            "ssh://[::1]:22",
            "docker://agent-1",
            "podman://c0ffee",
            "kubectl://pod",
            "kubectl://ns/pod",
            "kubectl://ns/pod/side",
        ] {
            assert_eq!(t(uri).to_string(), uri);
        }
        assert_eq!(
            t("ssh://me@box:2222"),
            Target::Ssh {
                user: Some("me".into()),
                host: "box".into(),
                port: Some(2222)
            }
        );
    }

    #[test]
    fn bad_uris_say_what_is_wrong() {
        let err = |uri: &str| uri.parse::<Target>().unwrap_err().0;
        assert!(err("box").contains("is not a URI"), "{}", err("box"));
        assert!(err("ftp://box").contains("unknown engine \"ftp\""));
        assert!(err("ssh://box:0").contains("is not a port"));
        assert!(err("ssh://box:99999").contains("is not a port"));
        assert!(err("docker://").contains("is not a valid name"));
        assert!(err("kubectl://a/b/c/d").contains("kubectl://[NAMESPACE/]POD[/CONTAINER]"));
    }

    #[test]
    fn a_name_can_never_become_an_option_of_the_client() {
        for uri in [
            "ssh://-oProxyCommand=touch%20x",
            "ssh://me@-oProxyCommand=x",
            "ssh://-me@box",
            "docker://--privileged",
            "podman://-it",
            "kubectl://-n/pod",
            "kubectl://ns/--all",
            "docker://a b",
            "docker://$(x)",
            "ssh://[prod.corp].dev.corp",
        ] {
            assert!(uri.parse::<Target>().is_err(), "{uri} was accepted");
        }
    }

    #[test]
    fn patterns_match_with_wildcards() {
        assert!(pattern_matches("docker://agent-*", "docker://agent-7"));
        assert!(pattern_matches("*", "ssh://box"));
        assert!(pattern_matches("ssh://*:22", "ssh://box:22"));
        assert!(!pattern_matches("ssh://*:22", "ssh://box:2222"));
        assert!(!pattern_matches("docker://agent-*", "podman://agent-7"));
        assert!(pattern_matches("docker://a", "docker://a"));
        assert!(!pattern_matches("docker://a", "docker://ab"));
        assert!(pattern_matches("a*b*c", "abc"));
        assert!(!pattern_matches("a*b*c", "acb"));
    }

    proptest! {
        /// Printing a parsed target and parsing it again gives the same target.
        #[test]
        fn printing_and_parsing_round_trip(
            engine in 0..4usize,
            a in "[a-z][a-z0-9.-]{0,12}",
            b in "[a-z][a-z0-9_-]{0,12}",
            port in proptest::option::of(1u16..),
        ) {
            let uri = match engine {
                0 => match port {
                    Some(p) => format!("ssh://{b}@{a}:{p}"),
                    None => format!("ssh://{a}"),
                },
                1 => format!("docker://{a}"),
                2 => format!("podman://{b}"),
                _ => format!("kubectl://{a}/{b}"),
            };
            let target: Target = uri.parse().unwrap();
            prop_assert_eq!(target.to_string().parse::<Target>().unwrap(), target);
        }

        /// A pattern with no wildcard matches exactly itself.
        #[test]
        fn a_plain_pattern_is_equality(p in "[a-z:/.-]{0,16}", u in "[a-z:/.-]{0,16}") {
            prop_assert_eq!(pattern_matches(&p, &u), p == u);
        }
    }
}
