//! A test helper that misbehaves on purpose, one way per subcommand. Used by the integration
//! tests of the executor; not part of the product (nor of the published crate): the tests
//! build it with `rustc` (`tests/support/mod.rs`), so it uses only std and the few C
//! functions declared below.
//!
//! Every subcommand that leaves processes behind appends their pids to the file named by
//! `$MISBEHAVE_PIDS` (when set), so tests can check that none survived.

use std::io::{Read, Write};
use std::time::Duration;

/// The C library's functions this helper calls (std has no fork, setsid, signal or raise).
mod c {
    unsafe extern "C" {
        pub fn fork() -> i32;
        pub fn setsid() -> i32;
        pub fn close(fd: i32) -> i32;
        pub fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
        pub fn signal(signal: i32, handler: usize) -> usize;
        pub fn raise(signal: i32) -> i32;
        pub fn write(fd: i32, buf: *const u8, len: usize) -> isize;
    }
    pub const SIGTERM: i32 = 15;
    /// 19 on x86_64 and aarch64 (the generic numbering).
    pub const SIGSTOP: i32 = 19;
    pub const SIG_IGN: usize = 1;
}

fn record_pid(pid: i32) {
    if let Ok(path) = std::env::var("MISBEHAVE_PIDS") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("pid file");
        writeln!(f, "{pid}").expect("write pid");
    }
}

fn sleep_secs(s: &str) {
    std::thread::sleep(Duration::from_secs_f64(s.parse().unwrap_or(30.0)));
}

fn fork() -> i32 {
    // SAFETY: the helper is single-threaded when it forks.
    unsafe { c::fork() }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let me = std::process::id() as i32;
    match arg(0).as_str() {
        "ignore-term" => {
            // SAFETY: setting a signal disposition to SIG_IGN.
            unsafe { c::signal(c::SIGTERM, c::SIG_IGN) };
            record_pid(me);
            println!("ignoring TERM");
            std::io::stdout().flush().ok();
            sleep_secs(&arg(1));
        }
        "fork-grandchild" => {
            // The child keeps running (and holds the pipes unless told to close them); we exit.
            let pid = fork();
            if pid == 0 {
                if arg(2) == "close" {
                    // SAFETY: closing our own stdio descriptors.
                    unsafe {
                        c::close(1);
                        c::close(2);
                    }
                }
                sleep_secs(&arg(1));
                std::process::exit(0);
            }
            record_pid(pid);
            println!("parent exits, child {pid} stays");
        }
        "setsid-escape" => {
            // Double fork + setsid: the grandchild leaves the process group and closes its pipes.
            let pid = fork();
            if pid == 0 {
                // SAFETY: creating a new session in the child.
                unsafe { c::setsid() };
                let grandchild = fork();
                if grandchild == 0 {
                    record_pid(std::process::id() as i32);
                    // SAFETY: closing our own stdio descriptors, as a daemon does.
                    unsafe {
                        c::close(0);
                        c::close(1);
                        c::close(2);
                    }
                    sleep_secs(&arg(1));
                    std::process::exit(0);
                }
                std::process::exit(0);
            }
            let mut status = 0;
            // SAFETY: waiting for our own child.
            unsafe { c::waitpid(pid, &raw mut status, 0) };
            // Give the grandchild a moment to record itself.
            std::thread::sleep(Duration::from_millis(100));
            println!("escaped");
        }
        "flood" => {
            let total: u64 = arg(1).parse().unwrap_or(1 << 20);
            let line = b"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n";
            let block: Vec<u8> = line.iter().copied().cycle().take(64 * 1024).collect();
            let mut out = std::io::stdout().lock();
            let mut left = total;
            while left > 0 {
                let n = left.min(block.len() as u64) as usize;
                if out.write_all(&block[..n]).is_err() {
                    break;
                }
                left -= n as u64;
            }
            let _ = out.flush();
            eprintln!("flood done");
        }
        "invalid-utf8" => {
            // An emoji split across two writes with a pause between, then invalid bytes.
            let mut out = std::io::stdout().lock();
            let emoji = "😀".as_bytes();
            out.write_all(b"start ").unwrap();
            out.write_all(&emoji[..2]).unwrap();
            out.flush().unwrap();
            std::thread::sleep(Duration::from_millis(50));
            out.write_all(&emoji[2..]).unwrap();
            out.write_all(b" bad:\xff\xfe end\n").unwrap();
            out.flush().unwrap();
        }
        "close-and-stay" => {
            record_pid(me);
            println!("closing pipes");
            std::io::stdout().flush().ok();
            // SAFETY: closing our own stdio descriptors.
            unsafe {
                c::close(1);
                c::close(2);
            }
            sleep_secs(&arg(1));
        }
        "read-stdin" => {
            let mut data = Vec::new();
            let n = std::io::stdin()
                .read_to_end(&mut data)
                .map(|_| data.len())
                .unwrap_or(0);
            println!("read {n} bytes");
        }
        "stop-self" => {
            record_pid(me);
            println!("stopping");
            std::io::stdout().flush().ok();
            // SAFETY: sending a signal to ourselves.
            unsafe { c::raise(c::SIGSTOP) };
            sleep_secs(&arg(1));
        }
        "interleave" => {
            // `out<i>` on stdout and `err<i>` on stderr, one unbuffered write(2) each, as fast
            // as it can: only a reader of one shared queue sees them in this order.
            let count: u32 = arg(1).parse().unwrap_or(2000);
            for i in 1..=count {
                for (fd, line) in [(1, format!("out{i}\n")), (2, format!("err{i}\n"))] {
                    // SAFETY: writing a buffer we own to our own descriptor.
                    let n = unsafe { c::write(fd, line.as_ptr(), line.len()) };
                    assert_eq!(n, line.len() as isize, "a short write to fd {fd}");
                }
            }
        }
        "stderr-then-stdout" => {
            eprintln!("err line");
            std::io::stderr().flush().ok();
            std::thread::sleep(Duration::from_millis(20));
            println!("out line");
        }
        other => {
            eprintln!("misbehave: unknown mode {other:?}");
            std::process::exit(2);
        }
    }
}
