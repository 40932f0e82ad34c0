//! The sandbox and the limits (contract §8), through the built binary, with real commands:
//! an escape suite (writes through every path trick, reads of deny-read files, connections
//! to servers on the host's loopback, attempts to widen the sandbox, limits) and a benign
//! suite that must keep working in workspace-write (git, a venv, gcc, make, mktemp, reading
//! the system). Each runs as root and as a throwaway unprivileged user made here (when the
//! tests run as root; else as the user running them).
//!
//! Every escape is judged on the host, not by the command's word: the file outside is
//! unchanged, the listener never accepted, the secret never appears in the output.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::*;

const WW: &[&str] = &["--sandbox", "workspace-write"];
const RO: &[&str] = &["--sandbox", "read-only"];
/// The control runs: the same route unconfined, to show it works without the sandbox.
const OFF: &[&str] = &["--sandbox", "off"];

#[test]
fn writes_outside_the_workspace_fail_by_every_path() {
    for user in users() {
        let w = World::new(&user);
        let out = sh_quote(&w.outside);
        let file = sh_quote(&w.outside.join("file"));
        let ws = sh_quote(&w.workspace);
        let attempts = [
            format!("echo pwned > {file}"),
            format!("echo pwned >> {file}"),
            format!("ln -s {out} link && echo pwned > link/file"),
            "echo pwned > ../outside/file".to_owned(),
            format!(
                "echo pwned > /proc/self/root{}",
                w.outside.join("file").display()
            ),
            "cd /proc/self/cwd/.. && echo pwned > outside/file".to_owned(),
            format!("ln {file} hard && echo pwned >> hard"),
            format!("mv {file} {ws}/moved"),
            format!("mv {out} {ws}/moved-dir"),
            format!("rm -f {file}"),
            format!("chmod 000 {file}"),
            format!("touch -d 2001-01-01 {file}"),
            format!("truncate -s 0 {file}"),
            format!(
                "python3 -c \"open('{}', 'w').write('pwned')\"",
                w.outside.join("file").display()
            ),
            format!("mkdir {out}/newdir"),
            format!("mount --bind {ws} {out}"),
            format!("unshare -rm sh -c 'mount --bind {ws} {out} && echo pwned > {file}'"),
        ];
        for attempt in &attempts {
            let r = w.run(WW, attempt);
            assert_ne!(outcome(&r), "success", "{user:?} {attempt}: {}", text(&r));
            assert_eq!(
                w.outside_file(),
                "original\n",
                "{user:?} {attempt} changed the file"
            );
            assert!(
                w.outside.join("file").exists(),
                "{user:?} {attempt} removed the file"
            );
            let mode = std::fs::metadata(w.outside.join("file"))
                .unwrap()
                .permissions()
                .mode();
            assert_ne!(mode & 0o777, 0, "{user:?} {attempt} changed the mode");
            assert!(!w.outside.join("newdir").exists(), "{user:?} {attempt}");
        }
        // The note names the rule, so the model can ask for a writable root.
        let r = w.run(WW, &format!("echo pwned > {file}"));
        assert!(
            text(&r).ends_with(&format!(
                "[Sandbox: writes outside {} are blocked (workspace-write)]",
                w.workspace.display()
            )),
            "{}",
            text(&r)
        );
        assert_eq!(r["details"]["sandbox"]["mode"], "workspace-write");
        assert_eq!(r["details"]["sandbox"]["network"], "off");
    }
}

#[test]
fn read_only_mode_writes_nothing_but_its_temporary_directory() {
    for user in users() {
        let w = World::new(&user);
        let r = w.run(RO, "echo x > inside.txt");
        assert_eq!(outcome(&r), "exit_nonzero", "{}", text(&r));
        assert!(!w.workspace.join("inside.txt").exists());
        assert!(text(&r).contains("(read-only)]"), "{}", text(&r));
        let r = w.run(
            RO,
            "f=$(mktemp) && echo kept > $f && cat $f && echo $TMPDIR",
        );
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert!(text(&r).starts_with("kept\n"), "{}", text(&r));
        // Nothing is left of it after the call.
        let tmpdir = text(&r).lines().nth(1).unwrap().to_owned();
        assert!(!Path::new(&tmpdir).exists(), "{tmpdir} outlived the call");
    }
}

#[test]
fn writes_to_tmp_never_reach_the_hosts_tmp() {
    for user in users() {
        let w = World::new(&user);
        let name = format!("agent-exec-escape-{}-{}", std::process::id(), user.uid);
        for mode in [WW, RO] {
            let r = w.run(
                mode,
                &format!("echo x > /tmp/{name}; echo y > /var/tmp/{name}"),
            );
            assert_ne!(outcome(&r), "success", "{}", text(&r));
            assert!(!Path::new("/tmp").join(&name).exists());
            assert!(!Path::new("/var/tmp").join(&name).exists());
        }
    }
}

#[test]
fn git_hooks_and_config_stay_read_only_while_git_works() {
    for user in users() {
        let w = World::new(&user);
        let r = w.run(OFF, "git init -q . && git config core.x 1");
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        let config_before = std::fs::read_to_string(w.workspace.join(".git/config")).unwrap();
        let r = w.run(
            WW,
            "echo hi > a.txt && git add a.txt && git commit -qm one && git checkout -qb topic && git log --oneline | wc -l",
        );
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert_eq!(text(&r).trim(), "1");
        for attempt in [
            "echo 'touch /tmp/pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
            "git config core.hooksPath /tmp",
            "echo '[core] fsmonitor = evil' >> .git/config",
            "rm -rf .git/hooks",
            "mv .git/hooks .git/hooks-old",
            "mv .git .git-old && git init -q . && echo pwned > .git/hooks/pre-commit",
            "cp .git/config c && echo x >> c && mv c .git/config",
        ] {
            let r = w.run(WW, attempt);
            assert_ne!(outcome(&r), "success", "{user:?} {attempt}: {}", text(&r));
            assert!(
                !w.workspace.join(".git/hooks/pre-commit").exists(),
                "{attempt}"
            );
            assert!(w.workspace.join(".git/hooks").is_dir(), "{attempt}");
            let config = std::fs::read_to_string(w.workspace.join(".git/config")).unwrap();
            assert_eq!(config, config_before, "{attempt}");
        }
        let r = w.run(WW, "touch .git/hooks/x");
        assert!(
            text(&r)
                .ends_with("[Sandbox: .git/hooks and .git/config are read-only (workspace-write)]"),
            "{}",
            text(&r)
        );
    }
}

#[test]
fn deny_read_paths_cannot_be_read_by_any_path() {
    for user in users() {
        let w = World::new(&user);
        let secret = sh_quote(&w.secret);
        let ssh = sh_quote(w.secret.parent().unwrap());
        let extra = w.outside.join("private.txt");
        std::fs::write(&extra, SECRET).unwrap();
        std::os::unix::fs::lchown(&extra, Some(user.uid), Some(user.gid)).unwrap();
        let deny_extra = extra.display().to_string();
        for mode in [WW, RO] {
            let mut flags = mode.to_vec();
            flags.extend(["--deny-read", &deny_extra]);
            for attempt in [
                format!("cat {secret}"),
                "cat ~/.ssh/id_test".to_owned(),
                format!("cat {ssh}/*"),
                format!("cat /proc/self/root{}", w.secret.display()),
                format!("ln -s {secret} l && cat l"),
                format!("ln {secret} h; cat h"),
                format!("cp {secret} copy; cat copy"),
                format!("tar cf - {ssh} | tar tvf - ; tar cf - {ssh} | strings"),
                format!(
                    "python3 -c 'print(open(\"{}\").read())'",
                    w.secret.display()
                ),
                format!("cat {}", sh_quote(&extra)),
            ] {
                let r = w.run(&flags, &attempt);
                assert!(
                    !text(&r).contains(SECRET),
                    "{user:?} {attempt} read the secret: {}",
                    text(&r)
                );
            }
        }
        let r = w.run(WW, &format!("cat {secret}"));
        assert!(
            text(&r).ends_with(&format!(
                "[Sandbox: reading {} is blocked (deny-read)]",
                w.secret.parent().unwrap().display()
            )),
            "{}",
            text(&r)
        );
        // The rest of the home stays readable.
        let r = w.run(WW, "cat ~/.gitconfig");
        assert_eq!(outcome(&r), "success", "{}", text(&r));
    }
}

/// A TCP server on the host's loopback that counts the connections it accepts and answers
/// each with an HTTP response naming itself.
struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    fn start(addr: &str, name: &'static str) -> Option<Server> {
        let listener = TcpListener::bind((addr, 0)).ok()?;
        let port = listener.local_addr().ok()?.port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = stream.read(&mut buf);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{name}",
                    name.len()
                );
            }
        });
        Some(Server { port, accepted })
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

#[test]
fn the_network_off_reaches_nothing_not_even_the_hosts_loopback() {
    let v4 = Server::start("127.0.0.1", "v4").expect("a loopback listener");
    let v6 = Server::start("::1", "v6");
    for user in users() {
        let w = World::new(&user);
        let sock = w.outside.join("sock");
        let unix = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o777)).unwrap();
        unix.set_nonblocking(true).unwrap();
        let mut attempts = vec![
            format!(
                "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', {})); s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); print(s.recv(99))\"",
                v4.port
            ),
            format!("exec 3<>/dev/tcp/127.0.0.1/{}; cat <&3", v4.port),
            format!(
                "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{}/').read())\"",
                v4.port
            ),
            format!(
                "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}')\"",
                sock.display()
            ),
        ];
        if let Some(v6) = &v6 {
            attempts.push(format!(
                "python3 -c \"import socket; socket.create_connection(('::1', {})).recv(9)\"",
                v6.port
            ));
        }
        let before = (v4.accepted(), v6.as_ref().map_or(0, Server::accepted));
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let udp_port = udp.local_addr().unwrap().port();
        for mode in [WW, RO] {
            for attempt in &attempts {
                let r = w.run(mode, attempt);
                assert_ne!(outcome(&r), "success", "{user:?} {attempt}: {}", text(&r));
            }
            // Datagrams and raw packets leave no error behind: the host side says whether
            // anything arrived.
            w.run(
                mode,
                &format!(
                    "python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', {udp_port}))\"; ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1; true"
                ),
            );
        }
        let mut buf = [0u8; 16];
        assert!(
            udp.recv_from(&mut buf).is_err(),
            "a datagram reached the host's loopback"
        );
        assert_eq!(
            (v4.accepted(), v6.as_ref().map_or(0, Server::accepted)),
            before,
            "a sandboxed command reached the loopback"
        );
        assert!(
            unix.accept().is_err(),
            "a sandboxed command reached a Unix socket"
        );
        let r = w.run(WW, &attempts[0]);
        assert!(
            text(&r).ends_with("[Sandbox: network connections are blocked (network off)]"),
            "{}",
            text(&r)
        );
        // `--network on` is unrestricted.
        let r = w.run(
            &["--sandbox", "workspace-write", "--network", "on"],
            &attempts[0],
        );
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert_eq!(r["details"]["sandbox"]["network"], "on");
    }
}

#[test]
fn allowed_hosts_pass_through_the_proxy_and_nothing_else() {
    let allowed = Server::start("127.0.0.1", "allowed").expect("listener");
    let other = Server::start("127.0.0.1", "other").expect("listener");
    for user in users() {
        let w = World::new(&user);
        let allow = format!("127.0.0.1:{}", allowed.port);
        let flags = ["--sandbox", "workspace-write", "--allow-host", &allow];
        let fetch = |port: u16| {
            format!(
                "python3 -c \"
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen('http://127.0.0.1:{port}/').read().decode())
except urllib.error.HTTPError as e:
    sys.exit(f'{{e}}: {{e.read().decode()}}')
\""
            )
        };
        let before = allowed.accepted();
        let r = w.run(&flags, &fetch(allowed.port));
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert_eq!(text(&r).trim(), "allowed");
        assert_eq!(allowed.accepted(), before + 1);
        // HTTPS goes through CONNECT: a tunnel to the allowed host, a 403 for another.
        let tunnel = |port: u16| {
            format!(
                "python3 -c \"
import http.client, os, urllib.parse
proxy = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])
c = http.client.HTTPConnection(proxy.hostname, proxy.port)
c.set_tunnel('127.0.0.1', {port})
c.request('GET', '/')
print(c.getresponse().read().decode())
\""
            )
        };
        let r = w.run(&flags, &tunnel(allowed.port));
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert_eq!(text(&r).trim(), "allowed");
        assert_eq!(allowed.accepted(), before + 2);
        let r = w.run(&flags, &tunnel(other.port));
        assert_ne!(outcome(&r), "success", "{}", text(&r));
        assert!(text(&r).contains("403"), "{}", text(&r));
        let r = w.run(&flags, &fetch(other.port));
        assert_ne!(outcome(&r), "success", "{}", text(&r));
        assert!(text(&r).contains("403"), "{}", text(&r));
        // Around the proxy: no direct connection, to the allowed host or any other.
        for port in [allowed.port, other.port] {
            let r = w.run(
                &flags,
                &format!(
                    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})).recv(9)\""
                ),
            );
            assert_ne!(outcome(&r), "success", "{}", text(&r));
        }
        assert_eq!(other.accepted(), 0);
        assert_eq!(allowed.accepted(), before + 2);
        assert!(text(&r).contains("except to"), "{}", text(&r));
    }
}

#[test]
fn attempts_to_widen_the_sandbox_fail() {
    // A process outside the sandbox, owned by each user in turn.
    for user in users() {
        let w = World::new(&user);
        let mut outsider = Command::new("sleep");
        outsider.arg("60");
        if user.name.is_some() {
            use std::os::unix::process::CommandExt as _;
            outsider.uid(user.uid).gid(user.gid);
        }
        let mut outsider = Guard::new(outsider.spawn().unwrap(), "sleep 60");
        let pid = outsider.pid();
        for attempt in [
            "unshare -r true".to_owned(),
            "unshare -m true".to_owned(),
            "unshare -n true".to_owned(),
            "mount -t tmpfs none /mnt".to_owned(),
            "mount -o remount,rw /".to_owned(),
            "chroot / true".to_owned(),
            format!("kill -TERM {pid}"),
            format!("cat /proc/{pid}/environ"),
            format!(
                "python3 -c \"import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16, {pid}, 0, 0) == 0 else 1)\""
            ),
            "python3 -c \"import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).syscall(425, 8, 0) >= 0 else 1)\"".to_owned(),
            "ls /dev/pts/ && cat /dev/pts/0".to_owned(),
        ] {
            let r = w.run(WW, &attempt);
            assert_ne!(outcome(&r), "success", "{user:?} {attempt}: {}", text(&r));
        }
        // Typing into the terminal the command runs on (TIOCSTI): what a command would do to
        // push commands into the shell agent-exec was started from.
        let r = w.run(
            &["--sandbox", "workspace-write", "--pty"],
            "python3 -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')\"",
        );
        assert_ne!(outcome(&r), "success", "{}", text(&r));
        assert!(text(&r).contains("Operation not permitted"), "{}", text(&r));
        assert!(
            outsider.try_wait().is_none(),
            "the process outside was touched"
        );
        let _ = outsider.kill();
    }
}

#[test]
fn a_fork_bomb_ends_at_the_timeout_under_max_procs_with_no_survivors() {
    for user in users() {
        let w = World::new(&user);
        let marker = format!("bomb-{}-{}", std::process::id(), user.uid);
        // The script is a file: written inline, the policy would deny the fork loop before
        // it runs (hardline.fork-bomb), and this test is about the limit that contains it.
        let script = w.workspace.join("bomb.py");
        std::fs::write(
            &script,
            format!(
                "import os, time\ntag = '{marker}'\nwhile True:\n    try: os.fork()\n    except OSError: time.sleep(0.01)\n"
            ),
        )
        .unwrap();
        std::os::unix::fs::lchown(&script, Some(user.uid), Some(user.gid)).unwrap();
        let bomb = format!("python3 bomb.py {marker}");
        let r = w.run(&["--max-procs", "64", "--timeout", "3"], &bomb);
        assert_eq!(outcome(&r), "timeout", "{}", text(&r));
        if user.name.is_none() && is_root() {
            // With the pids cgroup (root here), the refused forks are counted.
            assert_eq!(r["details"]["limit_hit"], "procs", "{}", text(&r));
            assert!(
                text(&r).contains("[Process limit of 64 reached: new processes were refused]"),
                "{}",
                text(&r)
            );
        }
        let survivors = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        assert!(
            survivors.stdout.is_empty(),
            "survivors: {}",
            String::from_utf8_lossy(&survivors.stdout)
        );
    }
}

#[test]
fn limits_end_or_hamper_the_command_and_say_which() {
    // The memory and process limits need the v1 cgroups root can make here; the CPU and file
    // size limits are rlimits, for anyone.
    let w = World::new(&users()[0]);
    if is_root() {
        let r = w.run(
            &["--max-memory", "64M"],
            "python3 -c 'x = bytearray(512 * 1024 * 1024); print(len(x))'",
        );
        assert_eq!(r["details"]["limit_hit"], "memory", "{}", text(&r));
        assert!(
            text(&r).starts_with("[Memory limit of 64 MiB reached: the command was killed]\n"),
            "{}",
            text(&r)
        );
        let r = w.run(&["--max-memory", "64M"], "python3 -c 'print(1)'");
        assert_eq!(r["details"]["limit_hit"], Value::Null, "{}", text(&r));
    }
    for user in users() {
        let w = World::new(&user);
        let r = w.run(
            &["--max-file-size", "1M"],
            "head -c 2000000 /dev/zero > big",
        );
        assert_eq!(r["details"]["limit_hit"], "file_size", "{}", text(&r));
        assert!(
            text(&r).starts_with("[File size limit of 1 MiB reached: a write was refused]\n"),
            "{}",
            text(&r)
        );
        assert!(std::fs::metadata(w.workspace.join("big")).unwrap().len() <= 1 << 20);
        let r = w.run(
            &["--max-cpu", "1", "--timeout", "60"],
            "python3 -c 'while True: pass'",
        );
        assert_eq!(r["details"]["limit_hit"], "cpu", "{}", text(&r));
        assert!(
            text(&r).starts_with("[CPU time limit of 1 second reached: the command was killed]\n"),
            "{}",
            text(&r)
        );
        let r = w.run(&["--max-cpu", "5", "--max-file-size", "1M"], "echo fine");
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert_eq!(r["details"]["limit_hit"], Value::Null);
        if user.name.is_some() {
            // No cgroup for this user here: the limit is kept per process, and it says so.
            let r = w.run(&["--max-memory", "100M"], "true");
            assert_eq!(outcome(&r), "success", "{}", text(&r));
            assert!(
                r["details"]["warnings"][0]
                    .as_str()
                    .is_some_and(|w| w.contains("RLIMIT_AS")),
                "{r}"
            );
        }
    }
}

#[test]
fn benign_work_keeps_working_in_workspace_write() {
    for user in users() {
        let w = World::new(&user);
        std::fs::write(
            w.workspace.join("hello.c"),
            "#include <stdio.h>\nint main(void){puts(\"hello from c\");return 0;}\n",
        )
        .unwrap();
        std::fs::write(
            w.workspace.join("Makefile"),
            "out.txt: hello.c\n\tcc -o hello hello.c && ./hello > out.txt\n",
        )
        .unwrap();
        for path in [w.workspace.join("hello.c"), w.workspace.join("Makefile")] {
            std::os::unix::fs::lchown(&path, Some(user.uid), Some(user.gid)).unwrap();
        }
        for (command, expected) in [
            (
                "git init -q . && git add hello.c && git commit -qm first && git log --format=%s",
                "first",
            ),
            (
                "git checkout -qb feature && git branch --show-current",
                "feature",
            ),
            (
                "python3 -m venv venv && venv/bin/python -c 'import sys; print(sys.prefix != sys.base_prefix)'",
                "True",
            ),
            ("gcc -O1 -o hello hello.c && ./hello", "hello from c"),
            (
                "rm -f hello out.txt && make -s && cat out.txt",
                "hello from c",
            ),
            (
                "f=$(mktemp) && echo temp > \"$f\" && cat \"$f\" && rm \"$f\"",
                "temp",
            ),
            ("d=$(mktemp -d) && touch $d/a && ls $d", "a"),
            ("seq 100000 | sort -rn > sorted && head -1 sorted", "100000"),
            ("head -1 /etc/passwd | cut -d: -f1", "root"),
            (
                "ls /usr/bin | grep -c . | awk '$1 > 10 {print \"many\"}'",
                "many",
            ),
            ("echo x > /dev/null && head -c 3 /dev/zero | wc -c", "3"),
            (
                "mkdir -p sub/dir && echo deep > sub/dir/f && chmod +x sub/dir/f && cat sub/dir/f",
                "deep",
            ),
            (
                "tar czf a.tgz sub && tar tzf a.tgz > list && head -1 list",
                "sub/",
            ),
            ("ln -s sub/dir/f link && cat link", "deep"),
            ("cat ~/.gitconfig | head -1", "[user]"),
        ] {
            let r = w.run(WW, command);
            assert_eq!(outcome(&r), "success", "{user:?} {command}: {}", text(&r));
            assert!(
                text(&r).lines().any(|l| l == expected),
                "{user:?} {command}: {}",
                text(&r)
            );
        }
        // Sessions, jobs and terminals run sandboxed too.
        let r = w.run(
            &["--sandbox", "workspace-write", "--pty"],
            "tty && touch /etc/pty-escape",
        );
        assert_ne!(outcome(&r), "success", "{}", text(&r));
        assert!(text(&r).contains("/dev/pts/"), "{}", text(&r));
        assert!(!Path::new("/etc/pty-escape").exists());
    }
}

/// `agent-exec serve FLAGS` in the world's workspace: each request answered before the next is
/// sent (the server runs requests concurrently), so a session's calls come in order.
fn serve(w: &World, flags: &[&str], requests: &[Value]) -> std::collections::HashMap<i64, Value> {
    let mut args = vec!["serve"];
    args.extend_from_slice(flags);
    serve_with(w.command(&args), requests)
}

#[test]
fn a_sandboxed_sessions_rc_snapshot_runs_sandboxed() {
    let w = World::new(&users()[0]);
    let file = w.outside.join("file");
    std::fs::write(
        w.home.join(".bashrc"),
        format!(
            "greet() {{ echo hello from rc; }}\necho pwned > {} 2>/dev/null\n",
            file.display()
        ),
    )
    .unwrap();
    let requests = [
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"exec","params":{"command":"greet","session":"s"}}),
    ];
    let answers = serve(
        &w,
        &["--sandbox", "workspace-write", "--rc-snapshot"],
        &requests,
    );
    let result = &answers[&1]["result"];
    assert!(
        text(result).starts_with("hello from rc"),
        "{}",
        text(result)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "original\n");
}

#[test]
fn sessions_and_jobs_run_in_the_sandbox_and_requests_only_tighten_it() {
    let w = World::new(&users()[0]);
    let file = w.outside.join("file");
    let requests = [
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"exec","params":{"command":"export X=kept; touch in-session","session":"s"}}),
        serde_json::json!({"jsonrpc":"2.0","id":2,"method":"exec","params":{"command":format!("echo $X; echo pwned > {}", file.display()),"session":"s"}}),
        serde_json::json!({"jsonrpc":"2.0","id":3,"method":"exec","params":{"command":format!("echo pwned > {}", file.display()),"run_in_background":true}}),
        serde_json::json!({"jsonrpc":"2.0","id":4,"method":"job_output","params":{"job_id":"1","wait_ms":10000}}),
        serde_json::json!({"jsonrpc":"2.0","id":5,"method":"exec","params":{"command":"true","sandbox":"off"}}),
        serde_json::json!({"jsonrpc":"2.0","id":6,"method":"exec","params":{"command":"touch tightened","sandbox":"read-only"}}),
        serde_json::json!({"jsonrpc":"2.0","id":7,"method":"exec","params":{"command":"true","sandbox":"bogus"}}),
    ];
    let answers = serve(&w, &["--sandbox", "workspace-write"], &requests);
    let result = |id: i64| answers[&id]["result"].clone();
    assert_eq!(outcome(&result(1)), "success");
    assert!(w.workspace.join("in-session").exists());
    assert!(
        text(&result(2)).starts_with("kept\n"),
        "{}",
        text(&result(2))
    );
    assert_eq!(result(2)["details"]["sandbox"]["mode"], "workspace-write");
    assert!(
        text(&result(4)).contains("Read-only file system"),
        "{}",
        text(&result(4))
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "original\n");
    assert_eq!(outcome(&result(5)), "invalid_request");
    assert_eq!(
        text(&result(5)),
        "a request can only tighten the sandbox (operator: workspace-write)"
    );
    assert_eq!(result(6)["details"]["sandbox"]["mode"], "read-only");
    assert!(!w.workspace.join("tightened").exists());
    assert_eq!(outcome(&result(7)), "invalid_request");
}

/// Runs agent-exec with one system call refused with `errno` (a seccomp filter installed by
/// Python before it execs agent-exec): what a kernel without Landlock (`landlock_create_ruleset`
/// answering ENOSYS) or with user namespaces disabled (`unshare` answering EPERM) looks like
/// to it.
fn with_refused_syscall(nr: u32, errno: u32, args: &[&str], cwd: &Path) -> Vec<u8> {
    const REFUSE: &str = r"
import ctypes, os, struct, sys
nr, errno = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
# seccomp_data.nr == nr ? ERRNO(errno) : ALLOW
prog = [(0x20, 0, 0, 0), (0x15, 0, 1, nr), (0x06, 0, 0, 0x00050000 | errno), (0x06, 0, 0, 0x7fff0000)]
buf = ctypes.create_string_buffer(b''.join(struct.pack('HBBI', *i) for i in prog))
fprog = ctypes.create_string_buffer(struct.pack('HxxxxxxQ', len(prog), ctypes.addressof(buf)))
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.syscall(317, 1, 0, fprog) == 0, ctypes.get_errno()
os.execv(sys.argv[3], sys.argv[3:])
";
    let mut cmd = Command::new("python3");
    cmd.args(["-c", REFUSE, &nr.to_string(), &errno.to_string()])
        .arg(binary())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null());
    bounded(cmd)
}

/// `landlock_create_ruleset` and `unshare` on x86_64.
const LANDLOCK_CREATE_RULESET: u32 = 444;
const UNSHARE: u32 = 272;

#[test]
fn a_sandbox_the_kernel_cannot_enforce_fails_the_call() {
    if std::env::consts::ARCH != "x86_64" {
        // The filter above names x86_64's system call numbers; elsewhere the same is
        // checked by the support probe's unit test.
        return;
    }
    let w = World::new(&users()[0]);
    let run = |nr, errno, args: &[&str]| with_refused_syscall(nr, errno, args, &w.workspace);
    let sandboxed = ["run", "--json", "--sandbox", "read-only", "--", "touch x"];
    let r: Value = serde_json::from_slice(&run(LANDLOCK_CREATE_RULESET, 38, &sandboxed)).unwrap();
    assert_eq!(outcome(&r), "spawn_failed", "{}", text(&r));
    assert!(text(&r).contains("Landlock"), "{}", text(&r));
    assert!(text(&r).contains("--sandbox off"), "{}", text(&r));
    assert!(!w.workspace.join("x").exists());
    // The default degrades: the command runs unconfined, and the details say so and why.
    let plain = ["run", "--json", "--", "touch y"];
    for (nr, errno, why) in [
        (LANDLOCK_CREATE_RULESET, 38, "Landlock"),
        (UNSHARE, 1, "namespace"),
    ] {
        let r: Value = serde_json::from_slice(&run(nr, errno, &plain)).unwrap();
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        assert_eq!(r["details"]["sandbox"], Value::Null, "{r}");
        let warnings = r["details"]["warnings"].to_string();
        assert!(
            warnings.contains("commands run unconfined") && warnings.contains(why),
            "{warnings}"
        );
    }
    let version =
        String::from_utf8_lossy(&run(LANDLOCK_CREATE_RULESET, 38, &["--version"])).into_owned();
    assert!(
        version.contains("sandbox: not available") && version.contains("default: off here"),
        "{version}"
    );
    // No user namespace: a mode asked for is refused, never run unconfined.
    let r: Value = serde_json::from_slice(&run(UNSHARE, 1, &sandboxed)).unwrap();
    assert_eq!(outcome(&r), "spawn_failed", "{}", text(&r));
    assert!(text(&r).contains("namespaces"), "{}", text(&r));
    assert!(!w.workspace.join("x").exists());
}

/// A Unix socket listening at `path`: [`Accepted::any`] says whether it accepted a
/// connection, judged by the listener itself.
struct Accepted(std::os::unix::net::UnixListener);

impl Accepted {
    fn listen(path: &Path) -> Accepted {
        let _ = std::fs::remove_file(path);
        let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
        listener.set_nonblocking(true).unwrap();
        Accepted(listener)
    }

    /// Whether a connection is waiting or was made (the commands have ended: a connection they
    /// made is queued in the backlog).
    fn any(&self) -> bool {
        self.0.accept().is_ok()
    }
}

#[test]
fn with_the_network_on_the_hosts_unix_sockets_are_out_of_reach() {
    let connect = "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"connected\")'";
    for user in users() {
        let w = World::new(&user);
        // Where daemons listen: a runtime directory, the home, a directory outside.
        let run_dir = Path::new("/run").join(format!("agent-exec-test-{}", std::process::id()));
        std::fs::create_dir_all(&run_dir).unwrap();
        std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        // git's credential cache listens in ~/.cache, a writable root of the dev profile.
        let in_cache = w.home.join(".cache/git/credential");
        std::fs::create_dir_all(&in_cache).unwrap();
        for path in [
            run_dir.join("daemon.sock"),
            w.home.join("agent.sock"),
            w.outside.join("service.sock"),
            in_cache.join("socket"),
        ] {
            let quoted = sh_quote(&path);
            // Control: the route works unconfined.
            let accepted = Accepted::listen(&path);
            let r = w.run(OFF, &format!("{connect} {quoted}"));
            assert!(
                text(&r).contains("connected"),
                "control {user:?}: {}",
                text(&r)
            );
            assert!(accepted.any(), "control {user:?}");
            // The default (network on), and workspace-write with --network on.
            for flags in [
                &[][..],
                &["--sandbox", "workspace-write", "--network", "on"][..],
            ] {
                let accepted = Accepted::listen(&path);
                let through_link = format!("ln -sf {quoted} l.sock && {connect} l.sock");
                for command in [format!("{connect} {quoted}"), through_link] {
                    let r = w.run(flags, &command);
                    assert!(
                        !text(&r).contains("connected"),
                        "{user:?} {flags:?} {command}: {}",
                        text(&r)
                    );
                }
                assert!(!accepted.any(), "{user:?} {flags:?}: {path:?} accepted");
            }
        }
        let _ = std::fs::remove_dir_all(&run_dir);
        // The sandbox's own sockets work: a server and a client in the workspace.
        let r = w.run(
            &[],
            "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"own.sock\"); s.listen(); c=socket.socket(socket.AF_UNIX); c.connect(\"own.sock\"); print(\"own ok\")'",
        );
        assert!(text(&r).contains("own ok"), "{user:?}: {}", text(&r));
    }
}

// ---- Escape classes of issue 26: each route judged on the host, as root and as the
// unprivileged user, with a control run where the route needs one to mean anything.

/// Writes `content` to `name` in the workspace, owned by the world's user.
fn plant(w: &World, name: &str, content: &str) -> PathBuf {
    let path = w.workspace.join(name);
    std::fs::write(&path, content).unwrap();
    std::os::unix::fs::lchown(&path, Some(w.user.uid), Some(w.user.gid)).unwrap();
    path
}

/// `cmd` with `files` on its fds 3, 4, … and inheritable, as a careless parent leaves them.
/// The returned descriptors are the parent's copies (dropped after the run).
fn with_inherited(cmd: &mut Command, files: Vec<std::fs::File>) -> Vec<std::os::fd::OwnedFd> {
    use std::os::unix::process::CommandExt as _;
    let owned: Vec<std::os::fd::OwnedFd> = files.into_iter().map(Into::into).collect();
    let raw: Vec<i32> = owned.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
    // SAFETY: only dup2 runs in the forked child.
    unsafe {
        cmd.pre_exec(move || {
            for (i, &fd) in raw.iter().enumerate() {
                if libc::dup2(fd, 3 + i as i32) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    owned
}

#[test]
fn descriptors_the_caller_left_open_never_reach_a_command() {
    for user in users() {
        let w = World::new(&user);
        let payload = "echo pwned >&3; cat <&4; echo pwned >&5; ls /proc/self/fd | tr '\\n' ' '";
        let inherited = || {
            let append = std::fs::OpenOptions::new()
                .append(true)
                .open(w.outside.join("file"))
                .unwrap();
            let secret = std::fs::File::open(&w.secret).unwrap();
            let again = std::fs::OpenOptions::new()
                .append(true)
                .open(w.outside.join("file"))
                .unwrap();
            vec![append, secret, again]
        };
        for flags in [WW, RO, &["--sandbox", "workspace-write", "--pty"][..]] {
            let mut cmd = w.run_command(flags, payload);
            let _held = with_inherited(&mut cmd, inherited());
            let r = run_json(cmd);
            assert!(
                !text(&r).contains(SECRET),
                "{user:?} {flags:?}: {}",
                text(&r)
            );
            assert!(
                text(&r).contains("Bad file descriptor"),
                "{user:?}: {}",
                text(&r)
            );
        }
        let mut cmd = w.command(&["serve", "--sandbox", "workspace-write"]);
        let _held = with_inherited(&mut cmd, inherited());
        let answers = serve_with(cmd, &in_every_server_mode(payload));
        for id in 1..=4 {
            let t = text(&answers[&id]["result"]);
            assert!(!t.contains(SECRET), "{user:?} request {id}: {t}");
        }
        assert_eq!(w.outside_file(), "original\n", "{user:?}");
    }
}

/// A new pseudo-terminal (master, slave), the slave owned by `user` as a login gives it.
fn terminal_for(user: &User) -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd as _;
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty fills two descriptors; fchown on the slave we own.
    unsafe {
        assert_eq!(
            libc::openpty(
                &raw mut master,
                &raw mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null()
            ),
            0
        );
        libc::fchown(slave, user.uid, user.gid);
        (
            std::os::fd::OwnedFd::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    }
}

/// Makes `slave` the controlling terminal of `cmd`'s new session, as a terminal's shell is.
fn on_terminal(cmd: &mut Command, slave: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::process::CommandExt as _;
    let slave = slave.as_raw_fd();
    // SAFETY: setsid and ioctl only, in the forked child.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            if libc::ioctl(slave, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Everything written to a terminal so far (its master, read without waiting).
fn terminal_output(master: &std::os::fd::OwnedFd) -> String {
    use std::os::fd::AsRawFd as _;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll and read on a descriptor we own, into a local buffer.
        let n = unsafe {
            if libc::poll(&raw mut poll, 1, 200) <= 0 {
                break;
            }
            libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
        };
        if n <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_call_without_a_pty_has_no_controlling_terminal() {
    for user in users() {
        let w = World::new(&user);
        let payload = "echo leaked-to-the-operator > /dev/tty";
        // Control: a command on the operator's terminal reaches it.
        let (master, slave) = terminal_for(&user);
        let mut control = match &user.name {
            Some(name) => {
                let mut c = Command::new("runuser");
                c.args(["-u", name, "--", "bash", "-c", payload]);
                c
            }
            None => {
                let mut c = Command::new("bash");
                c.args(["-c", payload]);
                c
            }
        };
        control.stdin(Stdio::null());
        on_terminal(&mut control, &slave);
        bounded(control);
        assert!(terminal_output(&master).contains("leaked-to-the-operator"));

        for flags in [&[][..], WW, RO] {
            let (master, slave) = terminal_for(&user);
            let mut cmd = w.run_command(flags, payload);
            on_terminal(&mut cmd, &slave);
            let r = run_json(cmd);
            assert!(
                text(&r).contains("No such device or address"),
                "{user:?} {flags:?}: {}",
                text(&r)
            );
            let seen = terminal_output(&master);
            assert!(!seen.contains("leaked"), "{user:?} {flags:?}: {seen}");
        }
        let (master, slave) = terminal_for(&user);
        let mut cmd = w.command(&["serve"]);
        on_terminal(&mut cmd, &slave);
        let answers = serve_with(cmd, &in_every_server_mode(payload));
        for id in [1, 2, 4] {
            let t = text(&answers[&id]["result"]);
            assert!(
                t.contains("No such device or address"),
                "{user:?} request {id}: {t}"
            );
        }
        let seen = terminal_output(&master);
        assert!(!seen.contains("leaked"), "{user:?} serve: {seen}");
    }
}

/// Host side of the IPC case: `python3 -c IPC_HOST ACTION KEY`.
const IPC_HOST: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.mq_open.restype = ctypes.c_int
action, key = sys.argv[1], int(sys.argv[2])
queue = f"/ae-q-{key}".encode()
if action == "create":
    shm = libc.shmget(key, 4096, 0o1000 | 0o666)
    addr = libc.shmat(shm, None, 0)
    ctypes.memmove(addr, b"original", 8)
    assert libc.msgget(key, 0o1000 | 0o666) >= 0
    assert libc.semget(key, 1, 0o1000 | 0o666) >= 0
elif action == "check":
    shm = libc.shmget(key, 0, 0)
    addr = libc.shmat(shm, None, 0)
    print("shm", ctypes.string_at(addr, 8).decode())
    print("own", "exists" if libc.shmget(key + 1, 0, 0) >= 0 else "gone")
    print("mq", "exists" if libc.mq_open(queue, os.O_RDWR) >= 0 else "gone")
else:
    for k in (key, key + 1):
        libc.shmctl(libc.shmget(k, 0, 0), 0, None)
    libc.msgctl(libc.msgget(key, 0), 0, None)
    libc.semctl(libc.semget(key, 0, 0), 0, 0)
    libc.mq_unlink(queue)
"#;

/// The command's side: reach the host's objects, make some of its own, try other sockets.
const IPC_PAYLOAD: &str = r#"
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.mq_open.restype = ctypes.c_int
key = int(sys.argv[1])
shm = libc.shmget(key, 0, 0)
if shm >= 0:
    addr = libc.shmat(shm, None, 0)
    if addr not in (None, 2**64 - 1):
        ctypes.memmove(addr, b"pwned!!!", 8)
print("host-shm", "open" if shm >= 0 else "refused")
print("host-msg", "open" if libc.msgget(key, 0) >= 0 else "refused")
print("host-sem", "open" if libc.semget(key, 0, 0) >= 0 else "refused")
libc.shmget(key + 1, 4096, 0o1000 | 0o600)
libc.mq_open(f"/ae-q-{key}".encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
for name, family, kind, proto in [
    ("vsock", socket.AF_VSOCK, socket.SOCK_STREAM, 0),
    ("packet", socket.AF_PACKET, socket.SOCK_RAW, 0),
    ("netlink-audit", socket.AF_NETLINK, socket.SOCK_RAW, 9),
]:
    try:
        socket.socket(family, kind, proto)
        print(name, "made")
    except OSError:
        print(name, "refused")
socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
print("netlink-route made")
"#;

#[test]
fn the_hosts_ipc_is_out_of_reach_and_a_calls_own_goes_with_it() {
    let ipc_host = |action: &str, key: u32| {
        let out = Command::new("python3")
            .args(["-c", IPC_HOST, action, &key.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for user in users() {
        let w = World::new(&user);
        plant(&w, "ipc.py", IPC_PAYLOAD);
        let key = 0x0ae0_0000 + std::process::id() % 0xffff * 16 + user.uid % 16;
        ipc_host("create", key);
        let command = format!("python3 ipc.py {key}");
        for flags in [WW, RO] {
            let r = w.run(flags, &command);
            let t = text(&r);
            for line in [
                "host-shm refused",
                "host-msg refused",
                "host-sem refused",
                "vsock refused",
                "packet refused",
                "netlink-audit refused",
                "netlink-route made",
            ] {
                assert!(
                    t.lines().any(|l| l == line),
                    "{user:?} {flags:?} {line}: {t}"
                );
            }
            let host = ipc_host("check", key);
            assert_eq!(
                host, "shm original\nown gone\nmq gone\n",
                "{user:?} {flags:?}"
            );
        }
        // Control: unconfined, the same script reaches the host's objects.
        let r = w.run(OFF, &command);
        assert!(text(&r).contains("host-shm open"), "{user:?}: {}", text(&r));
        ipc_host("cleanup", key);
    }
}

/// Every file under `dir` with its contents (symbolic links as their targets), sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(snapshot(&path));
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            out.push((path, target.into_os_string().into_encoded_bytes()));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

#[test]
fn every_git_directory_under_a_writable_root_stays_what_the_host_git_obeys() {
    for user in users() {
        let w = World::new(&user);
        let setup = "git init -q . && git init -q sub/lib && git init -q --bare store.git \
            && mkdir meta && git init -q --separate-git-dir meta/real sep \
            && git config core.hooksPath myhooks && git config extensions.worktreeConfig true \
            && git commit -q --allow-empty -m one \
            && git worktree add -q wt && git -C sub/lib commit -q --allow-empty -m one";
        let r = w.run(OFF, setup);
        assert_eq!(outcome(&r), "success", "{user:?}: {}", text(&r));
        // What git would obey once made (the hooks path, config.worktree with
        // worktreeConfig on) is made empty by the sandbox, so it can be held read-only.
        let r = w.run(WW, "true");
        assert_eq!(outcome(&r), "success", "{user:?}: {}", text(&r));
        let watched = [
            "sub/lib/.git/config",
            "sub/lib/.git/hooks",
            "store.git/config",
            "store.git/hooks",
            "meta/real/config",
            "meta/real/hooks",
            "sep/.git",
            "wt/.git",
            ".git/worktrees/wt/gitdir",
            ".git/worktrees/wt/commondir",
            "myhooks",
            ".git/config.worktree",
            ".git/worktrees/wt/config.worktree",
        ];
        let contents = || -> Vec<_> {
            watched
                .iter()
                .map(|p| {
                    let path = w.workspace.join(p);
                    if path.is_dir() {
                        snapshot(&path)
                    } else {
                        vec![(path.clone(), std::fs::read(&path).unwrap())]
                    }
                })
                .collect()
        };
        let before = contents();
        let attack = "\
for c in sub/lib/.git/config store.git/config meta/real/config .git/config.worktree .git/worktrees/wt/config.worktree; do
  printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> $c; done
for h in sub/lib/.git/hooks store.git/hooks meta/real/hooks myhooks; do
  printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > $h/post-checkout; chmod +x $h/post-checkout; done
echo 'gitdir: /tmp/elsewhere' > sep/.git
echo 'gitdir: /tmp/elsewhere' > wt/.git
echo /tmp/elsewhere > .git/worktrees/wt/gitdir
echo /tmp/elsewhere > .git/worktrees/wt/commondir
mv sub/lib/.git sub/lib/.git-moved && mkdir sub/lib/.git
mv store.git/config store.git/config.old; cp store.git/config.old x && echo '[core] bare = false' >> x && mv x store.git/config
echo ran";
        plant(&w, "attack.sh", attack);
        let r = w.run(WW, "bash attack.sh");
        assert!(text(&r).contains("ran"), "{user:?}: {}", text(&r));
        let after = contents();
        for ((name, b), a) in watched.iter().zip(&before).zip(&after) {
            assert_eq!(b, a, "{user:?}: {name} changed");
        }
        // Git keeps working in each of them.
        let r = w.run(
            WW,
            "git -C sub/lib commit -q --allow-empty -m two && git -C wt commit -q --allow-empty -m two && git -C sep status --short && echo fine",
        );
        assert!(text(&r).contains("fine"), "{user:?}: {}", text(&r));
        // A call makes the directory holding a repository unlistable, so that the next call's
        // walk cannot find it; the next call gives it its permissions back and plants a monitor.
        let config = std::fs::read(w.workspace.join("sub/lib/.git/config")).unwrap();
        w.run(WW, "chmod 000 sub");
        plant(
            &w,
            "again.sh",
            "chmod 755 sub; printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> sub/lib/.git/config; mv sub sub-moved; echo ran\n",
        );
        let r = w.run(WW, "bash again.sh");
        assert!(text(&r).contains("ran"), "{user:?}: {}", text(&r));
        std::fs::set_permissions(
            w.workspace.join("sub"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert_eq!(
            std::fs::read(w.workspace.join("sub/lib/.git/config")).unwrap(),
            config,
            "{user:?}"
        );
    }
}

#[test]
fn an_artifact_is_only_what_agent_exec_wrote() {
    for user in users() {
        let w = World::new(&user);
        let store = w.workspace.join(".store");
        let store_text = store.display().to_string();
        let with_store = |mut cmd: Command| {
            cmd.env("AGENT_EXEC_ARTIFACTS", &store);
            cmd
        };
        // A spilled output: artifact 1, in a store under the writable root.
        let r = run_json(with_store(w.run_command(WW, "seq 1 200000")));
        assert_eq!(r["details"]["truncation"]["artifact_id"], "1", "{r}");
        let first = std::fs::read(store.join("1.log")).unwrap();
        let secret = sh_quote(&w.secret);
        plant(
            &w,
            "plant.sh",
            &format!(
                "rm -f .store/1.log; ln -sf {secret} .store/1.log; ln -s {secret} .store/9.log; ln {secret} .store/8.log; echo x > .store/7.log; echo ran"
            ),
        );
        let r = run_json(with_store(w.run_command(WW, "bash plant.sh")));
        assert!(text(&r).contains("ran"), "{user:?}: {}", text(&r));
        assert_eq!(
            std::fs::read(store.join("1.log")).unwrap(),
            first,
            "{user:?}"
        );
        for name in ["9.log", "8.log", "7.log"] {
            assert!(!store.join(name).exists(), "{user:?}: {name} planted");
        }
        // Planted by someone unconfined: a link, a hard link, a FIFO. Never read.
        std::os::unix::fs::symlink(&w.secret, store.join("6.log")).unwrap();
        std::fs::hard_link(&w.secret, store.join("5.log")).unwrap();
        let fifo = std::ffi::CString::new(store.join("4.log").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo of a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        for entry in ["6.log", "5.log", "4.log"] {
            std::os::unix::fs::lchown(store.join(entry), Some(user.uid), Some(user.gid)).unwrap();
        }
        for id in ["6", "5", "4"] {
            for extra in [&[][..], &["--grep", "."][..], &["--lines", "1:2"][..]] {
                let mut args = vec!["artifact", "--artifacts", &store_text, id];
                args.extend_from_slice(extra);
                let out = bounded(w.command(&args));
                let out = String::from_utf8_lossy(&out);
                assert!(
                    !out.contains(SECRET),
                    "{user:?} artifact {id} {extra:?}: {out}"
                );
            }
        }
        let answers = serve_with(
            with_store(w.command(&["serve"])),
            &[
                request(1, "artifact_read", &serde_json::json!({"id": "6"})),
                request(
                    2,
                    "artifact_read",
                    &serde_json::json!({"id": "5", "grep": "."}),
                ),
                request(
                    3,
                    "artifact_read",
                    &serde_json::json!({"id": "1", "limit": 10}),
                ),
            ],
        );
        for id in [1, 2] {
            let t = text(&answers[&id]["result"]);
            assert!(
                !t.contains(SECRET) && t.contains("not read"),
                "{user:?} {id}: {t}"
            );
        }
        assert!(
            text(&answers[&3]["result"]).starts_with("1\n2\n3\n"),
            "{user:?}"
        );
    }
}

/// A bind mount, undone when dropped.
struct BindMount(PathBuf);

impl Drop for BindMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_deny_read_path_stays_unreadable_through_another_mount() {
    if !is_root() {
        // Only root can make the second mount this case needs.
        return;
    }
    for user in users() {
        let w = World::new(&user);
        let alias =
            std::env::temp_dir().join(format!("ae-alias-{}-{}", std::process::id(), user.uid));
        std::fs::create_dir_all(&alias).unwrap();
        let status = Command::new("mount")
            .arg("--bind")
            .arg(&w.home)
            .arg(&alias)
            .status()
            .unwrap();
        assert!(status.success(), "mount --bind");
        let _mount = BindMount(alias.clone());
        let through = sh_quote(&alias.join(".ssh/id_test"));
        let r = w.run(OFF, &format!("cat {through}"));
        assert!(text(&r).contains(SECRET), "control {user:?}: {}", text(&r));
        for flags in [WW, RO] {
            for attempt in [
                format!("cat {through}"),
                format!("cat {}/.ssh/*", sh_quote(&alias)),
                format!("tar cf - -C {} .ssh | strings", sh_quote(&alias)),
            ] {
                let r = w.run(flags, &attempt);
                assert!(
                    !text(&r).contains(SECRET),
                    "{user:?} {attempt}: {}",
                    text(&r)
                );
            }
        }
        // The rest of the home stays readable through it.
        let r = w.run(WW, &format!("head -1 {}/.gitconfig", sh_quote(&alias)));
        assert!(text(&r).contains("[user]"), "{user:?}: {}", text(&r));
    }
}

#[test]
fn a_deny_read_file_leaves_its_directory_writable_and_itself_untouchable() {
    for user in users() {
        let w = World::new(&user);
        let env = plant(&w, ".env", SECRET);
        plant(&w, "notes.txt", "a\n");
        let deny = env.display().to_string();
        let flags = ["--sandbox", "workspace-write", "--deny-read", &deny];
        let r = w.run(&flags, "echo new > new.txt && sed -i s/a/b/ notes.txt && mkdir d && mv new.txt d/ && cat notes.txt");
        assert_eq!(outcome(&r), "success", "{user:?}: {}", text(&r));
        assert_eq!(
            std::fs::read_to_string(w.workspace.join("notes.txt")).unwrap(),
            "b\n"
        );
        for attempt in [
            "cat .env",
            "echo x > .env",
            "mv .env moved && cat moved",
            "rm -f .env",
            "ln .env h && cat h",
        ] {
            let r = w.run(&flags, attempt);
            assert!(
                !text(&r).contains(SECRET),
                "{user:?} {attempt}: {}",
                text(&r)
            );
            assert_eq!(
                std::fs::read_to_string(&env).unwrap(),
                SECRET,
                "{user:?} {attempt}"
            );
        }
        // Deeper down, and its directory moved away or made unreadable by one call, so that the
        // next call's sandbox would not find it to hide it: each `run` builds its sandbox anew.
        std::fs::create_dir(w.workspace.join("conf")).unwrap();
        std::os::unix::fs::lchown(w.workspace.join("conf"), Some(user.uid), Some(user.gid))
            .unwrap();
        let deep = plant(&w, "conf/.env", SECRET);
        let deep_flag = deep.display().to_string();
        let flags = ["--sandbox", "workspace-write", "--deny-read", &deep_flag];
        for (first, then) in [
            ("mv conf moved", "cat moved/.env conf/.env"),
            ("chmod 000 conf", "chmod 755 conf; cat conf/.env"),
        ] {
            w.run(&flags, first);
            let r = w.run(&flags, then);
            assert!(!text(&r).contains(SECRET), "{user:?} {first}: {}", text(&r));
            std::fs::set_permissions(
                w.workspace.join("conf"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
            assert_eq!(
                std::fs::read_to_string(&deep).unwrap(),
                SECRET,
                "{user:?} {first}"
            );
        }
    }
}

#[test]
fn each_call_writes_only_its_own_temporary_directory() {
    for user in users() {
        let w = World::new(&user);
        plant(
            &w,
            "mine.sh",
            "echo mine > \"$TMPDIR/f\" && echo \"$TMPDIR\"\n",
        );
        plant(
            &w,
            "plant.sh",
            "for d in \"$TMPDIR\"/../*; do [ \"$d\" -ef \"$TMPDIR\" ] || { echo pwned > \"$d/f\" && echo WROTE; }; done\n\
             ln -s /nonexistent \"$TMPDIR/../zz\"; mkdir \"$TMPDIR/../yy\"; touch \"$TMPDIR/../$(ls \"$TMPDIR/..\" | head -1)x\"\n\
             echo ran\n",
        );
        let answers = serve(
            &w,
            WW,
            &[
                request(
                    1,
                    "exec",
                    &serde_json::json!({"command": "bash mine.sh", "session": "a"}),
                ),
                request(
                    2,
                    "exec",
                    &serde_json::json!({"command": "bash plant.sh", "session": "b"}),
                ),
                request(3, "exec", &serde_json::json!({"command": "bash plant.sh"})),
                request(
                    4,
                    "exec",
                    &serde_json::json!({"command": "cat \"$TMPDIR/f\"", "session": "a"}),
                ),
                request(
                    5,
                    "exec",
                    &serde_json::json!({"command": "mktemp && echo fine"}),
                ),
                request(
                    6,
                    "exec",
                    &serde_json::json!({"command": "echo fine", "session": "c"}),
                ),
            ],
        );
        for id in [2, 3] {
            let t = text(&answers[&id]["result"]);
            assert!(
                t.contains("ran") && !t.contains("WROTE"),
                "{user:?} {id}: {t}"
            );
        }
        assert_eq!(text(&answers[&4]["result"]), "mine\n", "{user:?}");
        for id in [5, 6] {
            let r = &answers[&id]["result"];
            assert_eq!(outcome(r), "success", "{user:?} {id}: {}", text(r));
        }
        // Another user who made our temporary area's directory first stops nothing.
        if is_root() {
            let shared_tmp = tempfile::tempdir().unwrap();
            std::fs::set_permissions(shared_tmp.path(), std::fs::Permissions::from_mode(0o1777))
                .unwrap();
            let squatted = shared_tmp
                .path()
                .join(format!("agent-exec-sandbox-{}", user.uid));
            std::fs::create_dir(&squatted).unwrap();
            let squatter = if user.uid == 0 { 65534 } else { 0 };
            std::os::unix::fs::chown(&squatted, Some(squatter), Some(squatter)).unwrap();
            let mut cmd = w.run_command(WW, "mktemp && echo fine");
            cmd.env("TMPDIR", shared_tmp.path());
            let r = run_json(cmd);
            assert_eq!(outcome(&r), "success", "{user:?} squatted: {}", text(&r));
        }
        // The directory of a call is its own: 0700, and gone with the call.
        let dir = text(&answers[&1]["result"])
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        assert!(!Path::new(&dir).exists(), "{dir} outlived its session");
    }
}

#[test]
fn setuid_bits_and_file_capabilities_cannot_be_set() {
    let has_capability = |path: &Path| {
        let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: getxattr with a null buffer asks only for the size.
        unsafe {
            libc::getxattr(
                path.as_ptr(),
                c"security.capability".as_ptr(),
                std::ptr::null_mut(),
                0,
            ) >= 0
        }
    };
    for user in users() {
        let w = World::new(&user);
        plant(
            &w,
            "suid.sh",
            "cp /bin/true t1; chmod 4755 t1; chmod u+s t1\n\
             cp /bin/true t2; chmod 2755 t2; chmod g+s t2\n\
             install -m 4755 /bin/true t3\n\
             python3 -c \"import os; os.close(os.open('t4', os.O_CREAT | os.O_WRONLY, 0o4755))\"\n\
             python3 -c \"import os; open('t5', 'w').close(); os.chmod('t5', 0o6755)\"\n\
             python3 -c \"import os; open('t6', 'w').close(); os.setxattr('t6', 'security.capability', bytes.fromhex('0100000200000000000000000000000000000000'))\"\n\
             echo ran\n",
        );
        let r = w.run(WW, "bash suid.sh");
        assert!(text(&r).contains("ran"), "{user:?}: {}", text(&r));
        for name in ["t1", "t2", "t3", "t4", "t5", "t6"] {
            let path = w.workspace.join(name);
            if let Ok(meta) = std::fs::metadata(&path) {
                assert_eq!(meta.permissions().mode() & 0o6000, 0, "{user:?} {name}");
                assert!(!has_capability(&path), "{user:?} {name} has a capability");
            }
        }
        // Control: unconfined, the same chmod makes a setuid file.
        let r = w.run(OFF, "cp /bin/true c && chmod 4755 c");
        assert_eq!(outcome(&r), "success", "{}", text(&r));
        let mode = std::fs::metadata(w.workspace.join("c"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o4000, 0);
    }
}

#[test]
fn limits_count_the_whole_call() {
    // CPU time: ten children one after the other, each under the limit, together over it —
    // counted by the `cpuacct` cgroup (root here) or the call's PID namespace (anyone else).
    for user in users() {
        let w = World::new(&user);
        plant(
            &w,
            "burn.sh",
            "for i in 1 2 3 4 5 6 7 8 9 10; do timeout 0.9 sh -c 'while :; do :; done'; done; echo done-all\n",
        );
        let r = w.run(&["--max-cpu", "2", "--timeout", "60"], "bash burn.sh");
        assert_eq!(r["details"]["limit_hit"], "cpu", "{user:?}: {}", text(&r));
        assert!(!text(&r).contains("done-all"), "{user:?}: {}", text(&r));
        assert!(
            r["details"]["warnings"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{user:?}: {r}"
        );
    }
    if !is_root() {
        // The socket buffers' counter is a cgroup only root can make here.
        return;
    }
    let w = World::new(&users()[0]);
    // Socket buffers count: 200 loopback connections with full buffers stay near the limit.
    plant(
        &w,
        "hold.py",
        "import socket, time, pathlib\n\
         srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(256)\n\
         conns = []\n\
         for i in range(200):\n\
         \x20   c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)\n\
         \x20   c.connect(srv.getsockname()); a, _ = srv.accept(); c.setblocking(False)\n\
         \x20   try:\n\
         \x20       while True: c.send(b'x' * 65536)\n\
         \x20   except BlockingIOError: pass\n\
         \x20   conns.append((c, a))\n\
         pathlib.Path('held').write_text('yes')\n\
         time.sleep(30)\n",
    );
    let tcp_bytes_while_held = |flags: &[&str]| {
        let _ = std::fs::remove_file(w.workspace.join("held"));
        let mut cmd = w.run_command(flags, "python3 hold.py");
        let mut child = Guard::new(cmd.stdout(Stdio::null()).spawn().unwrap(), "agent-exec run");
        poll(Duration::from_secs(30), || {
            w.workspace.join("held").exists()
        });
        let sockstat = std::fs::read_to_string("/proc/net/sockstat").unwrap();
        let pages: u64 = sockstat
            .lines()
            .find(|l| l.starts_with("TCP:"))
            .and_then(|l| l.split_whitespace().skip_while(|w| *w != "mem").nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap();
        child.signal(libc::SIGTERM);
        let _ = child.wait_exit();
        pages * 4096
    };
    let unlimited = tcp_bytes_while_held(&["--timeout", "60"]);
    assert!(
        unlimited > 128 << 20,
        "control: {unlimited} bytes of TCP memory"
    );
    let limited = tcp_bytes_while_held(&["--max-memory", "32M", "--timeout", "60"]);
    assert!(
        limited < 48 << 20,
        "{limited} bytes of TCP memory under --max-memory 32M"
    );
}

/// Processes of `user` whose command line contains `needle`.
fn alive_with(user: &User, needle: &str) -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-u", &user.uid.to_string(), "-a", "-f", needle])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.contains("pgrep"))
        .map(str::to_owned)
        .collect()
}

/// A script that leaves two escapees behind — `setsid env -i sleep`, and a double fork that
/// leaves the session and drops the environment — each sleeping `secs` (unique per case).
fn escapees_script(secs: u32) -> String {
    format!(
        "setsid env -i sleep {secs} &\n\
         python3 -c \"\nimport os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execve('/bin/sleep', ['sleep', '{secs}'], {{}})\n    os._exit(0)\n\"\n\
         sleep 0.3; echo started\n"
    )
}

#[test]
fn no_process_survives_its_call_for_any_operator() {
    for (i, user) in users().into_iter().enumerate() {
        let w = World::new(&user);
        let base = 7_100_000 + std::process::id() % 1000 * 100 + i as u32 * 10;
        for (n, flags) in [&[][..], WW].into_iter().enumerate() {
            let secs = base + n as u32;
            plant(&w, "escape.sh", &escapees_script(secs));
            let r = w.run(flags, "bash escape.sh");
            assert!(text(&r).contains("started"), "{user:?}: {}", text(&r));
            assert_eq!(
                r["details"]["processes_stopped"], 2,
                "{user:?} {flags:?}: {r}"
            );
            assert!(
                alive_with(&user, &format!("sleep {secs}")).is_empty(),
                "{user:?} {flags:?}: {:?}",
                alive_with(&user, &format!("sleep {secs}"))
            );
            // Contained by a cgroup or a PID namespace: no warning that a process could leave.
            assert!(
                r["details"]["warnings"]
                    .as_array()
                    .is_none_or(Vec::is_empty),
                "{user:?}: {r}"
            );
        }
        // A server's sessions and jobs: their escapees end with the server.
        for (n, flags) in [&[][..], WW].into_iter().enumerate() {
            let secs = base + 5 + n as u32;
            plant(&w, "escape.sh", &escapees_script(secs));
            let answers = serve(
                &w,
                flags,
                &[
                    request(
                        1,
                        "exec",
                        &serde_json::json!({"command": "bash escape.sh", "session": "s"}),
                    ),
                    request(
                        2,
                        "exec",
                        &serde_json::json!({"command": "bash escape.sh; sleep 100", "run_in_background": true}),
                    ),
                    request(3, "exec", &serde_json::json!({"command": "bash escape.sh"})),
                ],
            );
            assert_eq!(
                answers[&3]["result"]["details"]["processes_stopped"], 2,
                "{user:?}"
            );
            let left = alive_with(&user, &format!("sleep {secs}"));
            assert!(left.is_empty(), "{user:?} {flags:?} after serve: {left:?}");
        }
        // The server killed with SIGKILL: its watchdog ends what it left, escapees included.
        let secs = base + 9;
        plant(&w, "escape.sh", &escapees_script(secs));
        let mut server = common::Server::spawn(w.command(&["serve"]));
        let session = request(
            1,
            "exec",
            &serde_json::json!({"command": "bash escape.sh; sleep 100", "run_in_background": true}),
        );
        server.send(&session);
        // Kept open: a server whose client closed its output ends everything itself.
        let answer = server.recv_line();
        assert!(
            answer.contains("Started background job"),
            "{user:?}: {answer}"
        );
        // Under runuser, the server is runuser's child.
        let pid = server.pid();
        let serve_pid = match user.name {
            Some(_) => std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap(),
            None => pid,
        };
        poll(Duration::from_secs(20), || {
            alive_with(&user, &format!("sleep {secs}")).len() == 2
        });
        assert_eq!(
            alive_with(&user, &format!("sleep {secs}")).len(),
            2,
            "{user:?}"
        );
        signal(serve_pid, libc::SIGKILL);
        let _ = server.wait_exit();
        let mut left = alive_with(&user, &format!("sleep {secs}"));
        poll(Duration::from_secs(20), || {
            left = alive_with(&user, &format!("sleep {secs}"));
            left.is_empty()
        });
        assert!(left.is_empty(), "{user:?} after kill -9 of serve: {left:?}");
        drop(server);
    }
}

#[test]
fn sandboxed_sessions_jobs_and_terminals_start_for_any_operator_in_any_order() {
    for user in users() {
        let w = World::new(&user);
        let orders = [
            vec![
                serde_json::json!({"command": "echo s1", "session": "a"}),
                serde_json::json!({"command": "echo j1", "run_in_background": true}),
                serde_json::json!({"command": "echo s2", "session": "a"}),
            ],
            vec![
                serde_json::json!({"command": "echo j1", "run_in_background": true}),
                serde_json::json!({"command": "echo s1", "session": "b"}),
                serde_json::json!({"command": "echo p1", "pty": true}),
                serde_json::json!({"command": "echo o1"}),
                serde_json::json!({"command": "echo o2"}),
                serde_json::json!({"command": "echo s2", "session": "c"}),
            ],
            vec![
                serde_json::json!({"command": "echo p1", "pty": true}),
                serde_json::json!({"command": "echo s1", "session": "d"}),
                serde_json::json!({"command": "echo p2", "pty": true, "run_in_background": true}),
            ],
        ];
        for (mode, order) in [WW, RO]
            .iter()
            .flat_map(|m| orders.iter().map(move |o| (m, o)))
        {
            let requests: Vec<Value> = order
                .iter()
                .enumerate()
                .map(|(i, params)| request(i as i64 + 1, "exec", params))
                .collect();
            let answers = serve(&w, mode, &requests);
            for (i, params) in order.iter().enumerate() {
                let r = &answers[&(i as i64 + 1)]["result"];
                assert_eq!(
                    outcome(r),
                    "success",
                    "{user:?} {mode:?} {params}: {}",
                    text(r)
                );
                assert_ne!(r["details"]["sandbox"], Value::Null, "{user:?} {params}");
            }
        }
    }
}

#[test]
fn everyday_work_keeps_working_sandboxed() {
    let wheel = r#"
import base64, hashlib, zipfile
files = {"hellopkg/__init__.py": b"def hi():\n    return 'hi from a wheel'\n",
         "hellopkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: hellopkg\nVersion: 1.0\n",
         "hellopkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = ""
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={digest},{len(data)}\n"
record += "hellopkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile("hellopkg-1.0-py3-none-any.whl", "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    z.writestr("hellopkg-1.0.dist-info/RECORD", record)
"#;
    let multiprocessing = "import multiprocessing as mp\n\
         from multiprocessing import shared_memory\n\
         def square(x):\n    return x * x\n\
         if __name__ == '__main__':\n\
         \x20   with mp.Pool(2) as p:\n        print(sum(p.map(square, range(10))))\n\
         \x20   q = mp.Queue(); q.put('queued'); print(q.get())\n\
         \x20   lock = mp.Lock()\n    with lock:\n        print('locked')\n\
         \x20   s = shared_memory.SharedMemory(create=True, size=16); s.buf[0] = 7; print('shared', s.buf[0]); s.close(); s.unlink()\n";
    let sqlite = "import sqlite3\n\
         db = sqlite3.connect('app.db')\n\
         db.execute('create table t (x)'); db.executemany('insert into t values (?)', [(i,) for i in range(100)]); db.commit()\n\
         print('rows', db.execute('select count(*) from t').fetchone()[0])\n";
    for user in users() {
        let w = World::new(&user);
        plant(&w, "wheel.py", wheel);
        plant(&w, "mp.py", multiprocessing);
        plant(&w, "db.py", sqlite);
        plant(
            &w,
            "Makefile",
            "all: a b c d\na b c d:\n\techo $@ > $@.out\n",
        );
        plant(
            &w,
            "package.json",
            "{\"name\": \"app\", \"version\": \"1.0.0\", \"dependencies\": {\"localdep\": \"file:localdep\"}}\n",
        );
        std::fs::create_dir(w.workspace.join("localdep")).unwrap();
        std::os::unix::fs::lchown(w.workspace.join("localdep"), Some(user.uid), Some(user.gid))
            .unwrap();
        plant(
            &w,
            "localdep/package.json",
            "{\"name\": \"localdep\", \"version\": \"1.0.0\"}\n",
        );
        // The lock file, written unconfined (nothing fetched: the one dependency is local).
        let r = w.run(
            &[],
            "npm_config_cache=$PWD/.npm-cache npm install --offline --no-audit --no-fund --loglevel=error && rm -rf node_modules",
        );
        assert_eq!(outcome(&r), "success", "{user:?} npm install: {}", text(&r));
        for (command, expected) in [
            ("python3 mp.py", "shared 7"),
            ("python3 db.py", "rows 100"),
            ("make -j4 -s && cat a.out d.out | tr '\\n' ' '", "a d "),
            (
                "git init -q . && git commit -q --allow-empty -m one && git worktree add -q ../ws-wt 2>&1; git worktree add -q wt && git -C wt log --format=%s",
                "one",
            ),
            (
                "ssh-keygen -q -t ed25519 -N '' -f ./deploy_key && head -1 deploy_key",
                "-----BEGIN OPENSSH PRIVATE KEY-----",
            ),
            (
                "python3 wheel.py && python3 -m venv venv && venv/bin/pip install -q --no-index ./hellopkg-1.0-py3-none-any.whl && venv/bin/python -c 'import hellopkg; print(hellopkg.hi())'",
                "hi from a wheel",
            ),
            (
                "npm_config_cache=$PWD/.npm-cache npm ci --offline --no-audit --no-fund --loglevel=error && test -e node_modules/localdep/package.json && echo installed",
                "installed",
            ),
        ] {
            let r = w.run(WW, command);
            assert_eq!(outcome(&r), "success", "{user:?} {command}: {}", text(&r));
            assert!(
                text(&r).lines().any(|l| l == expected),
                "{user:?} {command}: {}",
                text(&r)
            );
        }
    }
}
