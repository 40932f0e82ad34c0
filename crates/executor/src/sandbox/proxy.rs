//! The allow-list proxy: with the network off, a sandboxed call reaches the allowed hosts
//! through this small HTTP proxy (plain requests, and `CONNECT` for HTTPS), which runs in
//! agent-exec, outside the sandbox. It accepts on a socket made inside the sandbox's network
//! namespace (its own loopback, see `namespaces.rs`) — the only way out of it — and connects
//! from the host's; inside, `HTTP_PROXY`/`HTTPS_PROXY` name it. Every other destination is
//! refused with a `403` naming the rule.
//!
//! Threads, not async: a proxy serves a handful of connections of one agent at a time, and
//! a blocking copy per direction is the simplest thing that streams at full speed. At most
//! [`MAX_CONNECTIONS`] at once, each ended after [`IDLE`] without traffic.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 64;
/// A tunnel or request with no traffic for this long is ended.
const IDLE: Duration = Duration::from_mins(10);

/// A running proxy; dropping it stops accepting (connections in progress finish).
#[derive(Debug)]
pub(crate) struct Proxy {
    listener: Arc<TcpListener>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Wakes the accept loop, which then ends.
        let _ = rustix::net::shutdown(&*self.listener, rustix::net::Shutdown::Both);
    }
}

/// Serves `allow_hosts` on `listener` (a listening TCP socket) until the [`Proxy`] is dropped.
pub(crate) fn serve(listener: OwnedFd, allow_hosts: &[String]) -> io::Result<Proxy> {
    let listener = Arc::new(TcpListener::from(listener));
    let rules: Arc<Vec<HostRule>> =
        Arc::new(allow_hosts.iter().map(|h| HostRule::parse(h)).collect());
    let accepting = listener.clone();
    std::thread::Builder::new()
        .name("agent-exec-proxy".into())
        .spawn(move || {
            let live = Arc::new(AtomicUsize::new(0));
            loop {
                match accepting.accept() {
                    Ok((stream, _)) => {
                        while live.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        live.fetch_add(1, Ordering::SeqCst);
                        let (rules, done) = (rules.clone(), live.clone());
                        let spawned = std::thread::Builder::new()
                            .name("agent-exec-proxy-conn".into())
                            .spawn(move || {
                                serve_connection(stream, &rules);
                                done.fetch_sub(1, Ordering::SeqCst);
                            });
                        if spawned.is_err() {
                            live.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                    // Shut down: the proxy was dropped.
                    Err(e) if e.kind() == io::ErrorKind::InvalidInput => return,
                    // Out of descriptors or memory: wait rather than spin.
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        })?;
    Ok(Proxy { listener })
}

/// One allowed host: `HOST` (any port) or `HOST:PORT`; `*.example.com` covers subdomains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostRule {
    host: String,
    port: Option<u16>,
}

impl HostRule {
    /// Reads `HOST`, `HOST:PORT`, `[V6]:PORT`.
    pub(crate) fn parse(text: &str) -> HostRule {
        let text = text.trim().to_ascii_lowercase();
        let (host, port) = split_host_port(&text);
        HostRule {
            host: host.to_owned(),
            port,
        }
    }

    /// Whether it lets `host:port` through.
    pub(crate) fn allows(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name_ok = match self.host.strip_prefix("*.") {
            Some(domain) => host.ends_with(&format!(".{domain}")),
            None => host == self.host.trim_start_matches('[').trim_end_matches(']'),
        };
        name_ok && self.port.is_none_or(|p| p == port)
    }
}

/// `host:port` → (host, port); a bare host, or `[v6]` without a port, has none.
fn split_host_port(text: &str) -> (&str, Option<u16>) {
    if let Some(rest) = text.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, tail)) => (host, tail.strip_prefix(':').and_then(|p| p.parse().ok())),
            None => (text, None),
        };
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host, Some(p)),
            Err(_) => (text, None),
        },
        _ => (text, None),
    }
}

/// The largest request head we read.
const MAX_HEAD: usize = 64 * 1024;

fn serve_connection(mut client: TcpStream, rules: &[HostRule]) {
    let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
    let Some((head, rest)) = read_head(&mut client) else {
        return;
    };
    let text = String::from_utf8_lossy(&head);
    let mut first = text.lines().next().unwrap_or("").split_whitespace();
    let (method, target, version) = (
        first.next().unwrap_or(""),
        first.next().unwrap_or(""),
        first.next().unwrap_or("HTTP/1.1"),
    );
    let connect = method.eq_ignore_ascii_case("CONNECT");
    let parsed = if connect {
        let (host, port) = split_host_port(target);
        port.map(|p| (host.to_owned(), p, String::new()))
    } else {
        absolute_target(target)
    };
    let Some((host, port, path)) = parsed else {
        reply(
            &mut client,
            "400 Bad Request",
            "agent-exec proxy: send an absolute http:// URL or CONNECT host:port\n",
        );
        return;
    };
    if !rules.iter().any(|r| r.allows(&host, port)) {
        // The refusal names the operator's flag, in the executor rather than core's render:
        // it is the HTTP answer the sandboxed command itself reads (and shows), sent on its
        // connection, not text for the model.
        reply(
            &mut client,
            "403 Forbidden",
            &format!(
                "agent-exec proxy: {host}:{port} is not an allowed host; the operator allows it with --allow-host {host}\n"
            ),
        );
        return;
    }
    let mut upstream = match TcpStream::connect((host.as_str(), port)) {
        Ok(s) => s,
        Err(e) => {
            reply(
                &mut client,
                "502 Bad Gateway",
                &format!("agent-exec proxy: cannot reach {host}:{port}: {e}\n"),
            );
            return;
        }
    };
    for stream in [&client, &upstream] {
        let _ = stream.set_read_timeout(Some(IDLE));
    }
    if connect {
        if client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .is_err()
        {
            return;
        }
    } else if upstream
        .write_all(&origin_request(&text, method, &path, version, &host, port))
        .is_err()
    {
        return;
    }
    if !rest.is_empty() && upstream.write_all(&rest).is_err() {
        return;
    }
    splice(client, upstream);
}

/// The request as the origin expects it: the path alone on the first line, `Host` naming the
/// host that was checked (a different one could reach another site behind the same address),
/// and one request per connection (a second one on it would go to this host unchecked).
fn origin_request(
    head: &str,
    method: &str,
    path: &str,
    version: &str,
    host: &str,
    port: u16,
) -> Vec<u8> {
    let authority = if port == 80 {
        host.to_owned()
    } else {
        format!("{host}:{port}")
    };
    let mut out =
        format!("{method} {path} {version}\r\nHost: {authority}\r\nConnection: close\r\n");
    for line in head.split("\r\n").skip(1) {
        let name = line
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if line.is_empty()
            || ["host", "connection", "proxy-connection", "keep-alive"].contains(&name.as_str())
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// Reads up to the end of the request head; returns the head and what came after it.
fn read_head(client: &mut TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = memchr::memmem::find(&buf, b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Some((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
    }
}

/// `http://host[:port]/path` → (host, port, path).
fn absolute_target(target: &str) -> Option<(String, u16, String)> {
    let rest = target.strip_prefix("http://").or_else(|| {
        target
            .get(..7)
            .filter(|s| s.eq_ignore_ascii_case("http://"))
            .map(|_| &target[7..])
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = split_host_port(authority);
    Some((host.to_owned(), port.unwrap_or(80), path.to_owned()))
}

fn reply(client: &mut TcpStream, status: &str, body: &str) {
    let _ = write!(
        client,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Copies both ways until each side is done.
fn splice(client: TcpStream, upstream: TcpStream) {
    let (Ok(client_r), Ok(upstream_w)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || copy_then_close(client_r, upstream_w));
    copy_then_close(upstream, client);
    let _ = up.join();
}

fn copy_then_close(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_rules() {
        let any_port = HostRule::parse("pypi.org");
        assert!(any_port.allows("PyPI.org", 443));
        assert!(!any_port.allows("evil.org", 443));
        let one_port = HostRule::parse("127.0.0.1:8080");
        assert!(one_port.allows("127.0.0.1", 8080));
        assert!(!one_port.allows("127.0.0.1", 8081));
        let wildcard = HostRule::parse("*.example.com");
        assert!(wildcard.allows("a.example.com", 80));
        assert!(!wildcard.allows("example.com.evil", 80));
        let v6 = HostRule::parse("[::1]:80");
        assert!(v6.allows("[::1]", 80));
        assert_eq!(
            absolute_target("http://h:81/x?y"),
            Some(("h".into(), 81, "/x?y".into()))
        );
        let request = origin_request(
            "GET http://h:81/x HTTP/1.1\r\nHost: other.example\r\nAccept: */*\r\nProxy-Connection: keep-alive\r\n\r\n",
            "GET",
            "/x",
            "HTTP/1.1",
            "h",
            81,
        );
        assert_eq!(
            String::from_utf8(request).unwrap(),
            "GET /x HTTP/1.1\r\nHost: h:81\r\nConnection: close\r\nAccept: */*\r\n\r\n"
        );
    }
}
