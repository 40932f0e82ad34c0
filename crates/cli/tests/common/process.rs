//! Processes as the tests see them: the binary under test, whether a pid is alive, a child
//! that is killed and reaped when dropped, and bounded waits (a hang fails the test with a
//! message naming what it waited for; nothing asserts on elapsed time).

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The bound on every wait unless a test names its own.
pub(crate) const WAIT: Duration = Duration::from_mins(1);

/// The bound on a whole `agent-exec run` (or another program) run to its end by
/// [`Bounded::output_bounded`]: generous, a safety net against hangs and not a threshold.
pub(crate) const RUN: Duration = Duration::from_mins(2);

/// How often a bounded wait looks again.
const TICK: Duration = Duration::from_millis(20);

/// This build's `agent-exec`, where cargo put it (see [`super::binary`] for a copy any user
/// may run).
pub(crate) fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_agent-exec"))
}

/// Whether `pid` exists and is not a zombie: a zombie runs nothing and only waits for its
/// parent to reap it.
pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        // The command name may hold spaces and parentheses: the state follows the last ')'.
        !matches!(
            s.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next()),
            Some("Z" | "X")
        )
    })
}

/// Sends `signal` to `pid` (a process the test started).
pub(crate) fn signal(pid: i32, signal: i32) {
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(pid, signal) };
}

/// Polls `cond` until it holds or `bound` passed; whether it held. For a wait whose result
/// the test then asserts itself.
pub(crate) fn poll(bound: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + bound;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(TICK);
    }
}

/// Waits until `cond` holds; panics naming `what` when `bound` passed first.
pub(crate) fn wait_until(what: &str, bound: Duration, cond: impl FnMut() -> bool) {
    assert!(poll(bound, cond), "waited {bound:?} in vain for: {what}");
}

/// [`wait_until`] with the usual bound, [`WAIT`].
pub(crate) fn eventually(what: &str, cond: impl FnMut() -> bool) {
    wait_until(what, WAIT, cond);
}

/// The pid a command wrote to `file` (`echo $$ > file`), waiting for a complete line.
pub(crate) fn pid_in(file: &Path) -> i32 {
    let mut pid = 0;
    eventually(&format!("a pid in {}", file.display()), || {
        pid = std::fs::read_to_string(file)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        pid > 0
    });
    pid
}

/// A child process that is killed and reaped when dropped, so no test leaves one behind.
pub(crate) struct Guard {
    child: Child,
    /// What it is, for messages (`agent-exec serve`).
    what: String,
    reaped: Option<ExitStatus>,
}

impl Guard {
    pub(crate) fn new(child: Child, what: impl Into<String>) -> Guard {
        Guard {
            child,
            what: what.into(),
            reaped: None,
        }
    }

    pub(crate) fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid fits in i32")
    }

    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    pub(crate) fn signal(&self, sig: i32) {
        if self.reaped.is_none() {
            signal(self.pid(), sig);
        }
    }

    /// Its exit status if it has exited (reaping it), without waiting.
    pub(crate) fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait().expect("try_wait on our own child");
        }
        self.reaped
    }

    /// Waits (at most `bound`) for it to exit; its status. Panics naming it when it does not.
    pub(crate) fn wait_exit_within(&mut self, bound: Duration) -> ExitStatus {
        let mut status = None;
        let exited = poll(bound, || {
            status = self.try_wait();
            status.is_some()
        });
        if !exited {
            let pid = self.pid();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let stack = std::fs::read_to_string(format!("/proc/{pid}/stack")).unwrap_or_default();
            panic!(
                "waited {bound:?} in vain for {} (pid {pid}) to exit: /proc/{pid}/stat {stat:?}, stack {stack:?}",
                self.what
            );
        }
        status.expect("poll returned once it exited")
    }

    /// [`Guard::wait_exit_within`] the usual bound, [`WAIT`].
    pub(crate) fn wait_exit(&mut self) -> ExitStatus {
        self.wait_exit_within(WAIT)
    }

    /// SIGKILL, then reaps it (bounded).
    pub(crate) fn kill(&mut self) -> ExitStatus {
        self.signal(libc::SIGKILL);
        self.wait_exit()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.reaped.is_some() {
            return;
        }
        let _ = self.child.kill();
        // Bounded even here: a process stuck in the kernel must not hang the test binary.
        poll(WAIT, || self.child.try_wait().ok().flatten().is_some());
    }
}

/// Waits (at most `bound`) for `child` to exit and for the pipes it was given to close; what it
/// wrote to them. Panics naming `what` when either takes longer (and kills the child).
pub(crate) fn output_within(mut child: Child, what: &str, bound: Duration) -> Output {
    fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            let _ = tx.send(bytes);
        });
        rx
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = Guard::new(child, what).wait_exit_within(bound);
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        rx.recv_timeout(bound.saturating_sub(start.elapsed()) + Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("{what}: its output stayed open after it exited"))
    };
    Output {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    }
}

/// [`Command::output`], bounded.
pub(crate) trait Bounded {
    /// [`Command::output`] (stdin null, stdout and stderr captured) that fails the test
    /// instead of hanging it when the program outlives `bound`.
    fn output_within(&mut self, bound: Duration) -> std::io::Result<Output>;

    /// [`Bounded::output_within`] [`RUN`].
    fn output_bounded(&mut self) -> std::io::Result<Output> {
        self.output_within(RUN)
    }
}

impl Bounded for Command {
    fn output_within(&mut self, bound: Duration) -> std::io::Result<Output> {
        let what = self.get_program().to_string_lossy().into_owned();
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        Ok(output_within(child, &what, bound))
    }
}
