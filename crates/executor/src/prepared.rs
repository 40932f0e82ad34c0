//! Prepared shells: one-shot calls that do not wait for a shell to start.
//!
//! Starting bash is most of a short one-shot call (fork, exec, the dynamic loader, bash's own
//! start: ~1–2 ms here). A prepared shell is that start paid ahead of time, off the call's
//! critical path: `bash -o pipefail -c DRIVER` started through the one spawn path, in a
//! containment group of its own, with the environment, sandbox and limits of a kind of call
//! (its [`ShellKey`]; the working directory is not part of it), waiting on a control pipe
//! (fd 3) for exactly one command. The call writes the directory and the command line; the
//! shell enters the directory, closes the pipe and `eval`s the command as its own script, then
//! exits. So each call still gets a fresh process of its own, as with `bash -c`: nothing of one
//! call reaches the next. After a call takes a shell, a background thread starts its
//! replacement; shells of a key not taken for the idle period are ended, and dropping the
//! [`PreparedShells`] ends them all (a shell whose control pipe closes exits by itself, so
//! none outlives the process that prepared it either).
//!
//! The call is supervised by the one-shot lifecycle ([`crate::oneshot`]): same deadline,
//! cancel, drain and end-of-call sweep of its group. What differs from `bash -c`: a syntax
//! error is reported by `eval` (`bash: eval: line 1: …` instead of `bash: -c: line 1: …`), and
//! `$BASH_EXECUTION_STRING` is not set.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use agent_exec_sink::Sink;

use crate::cancel::CancelToken;
use crate::containment::{CallGroup, Containment, Limits};
use crate::env::build_env;
use crate::oneshot::{Call, supervise_call};
use crate::outcome::ExecOutcome;
use crate::sandbox::SandboxSpec;
use crate::spawn::{Io, Launch, logical_pwd, spawn};
use crate::spec::{ExecSpec, OutputPipes, Program, default_shell};
use crate::sys;
use crate::waiting::OnWaiting;

/// The shell's script, on one line so that `$LINENO` in the command counts from 1 as in
/// `bash -c`. A frame is `<A|B> <dir bytes> <command bytes>\n`, then the directory and the
/// command (`A`: both ASCII, whose length in characters is their length in bytes in any
/// locale; `B`: read with `LC_ALL=C` so the counts are in bytes). End of input (the pool is
/// gone) ends the shell. `OLDPWD` is put back as the shell found it, `SECONDS` counts from
/// the call, and the driver's variables are unset before the command runs.
const DRIVER: &str = concat!(
    "__agent_exec_old=${OLDPWD+x}; __agent_exec_oldpwd=${OLDPWD-}; ",
    "IFS=' ' builtin read -r -u 3 __agent_exec_kind __agent_exec_dlen __agent_exec_clen || builtin exit 0; ",
    "if [ \"$__agent_exec_kind\" = A ]; then ",
    "IFS= builtin read -r -u 3 -N \"$__agent_exec_dlen\" __agent_exec_dir; ",
    "IFS= builtin read -r -u 3 -N \"$__agent_exec_clen\" __agent_exec_cmd; ",
    "else ",
    "LC_ALL=C IFS= builtin read -r -u 3 -N \"$__agent_exec_dlen\" __agent_exec_dir; ",
    "LC_ALL=C IFS= builtin read -r -u 3 -N \"$__agent_exec_clen\" __agent_exec_cmd; ",
    "fi; ",
    "exec 3<&-; ",
    "builtin cd -- \"$__agent_exec_dir\" || builtin exit 1; ",
    "if [ -n \"$__agent_exec_old\" ]; then OLDPWD=$__agent_exec_oldpwd; else builtin unset OLDPWD; fi; SECONDS=0; ",
    "builtin unset __agent_exec_old __agent_exec_oldpwd __agent_exec_kind __agent_exec_dlen __agent_exec_clen __agent_exec_dir; ",
    "builtin eval \"builtin unset __agent_exec_cmd; $__agent_exec_cmd\""
);

/// What a prepared shell is made for: calls that agree on all of it can share shells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellKey {
    shell: PathBuf,
    env: Vec<(OsString, OsString)>,
    sandbox: Option<SandboxSpec>,
    limits: Limits,
    containment: Containment,
    /// The hash of all of the above, computed once: a key is looked up on every call, and
    /// hashing its environment and sandbox paths each time cost a one-shot call ~6 % of the
    /// server's time.
    hash: u64,
}

impl std::hash::Hash for ShellKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// What a [`ShellKey`] is made from (besides the command's checks): a call whose inputs equal
/// the last ones of its kind reuses their key instead of building its environment again.
#[derive(Debug, PartialEq)]
struct KeyInputs<'a> {
    /// Borrowed from the call; owned once kept.
    env: std::borrow::Cow<'a, crate::env::EnvConfig>,
    shell: PathBuf,
    sandbox: Option<Arc<SandboxSpec>>,
    limits: Limits,
    containment: Containment,
}

impl ShellKey {
    /// The key of `spec`, or `None` when a prepared shell cannot run it as `bash -c` would:
    /// not a shell command line, a shell other than bash, an empty line, or a NUL in it — or
    /// when it wants its stdout and stderr on pipes of their own (a prepared shell's share one)
    /// — or when the call has variables of its own (`extra_env`: a request's token, say): a
    /// shell prepared for the next such call would carry them, idle and readable in
    /// `/proc/PID/environ`, after the call that gave them ended.
    fn of(spec: &ExecSpec) -> Option<KeyInputs<'_>> {
        if !spec.extra_env.is_empty() {
            return None;
        }
        let Program::Shell { command, shell } = &spec.program else {
            return None;
        };
        if spec.output != OutputPipes::Shared {
            return None;
        }
        let shell = match shell {
            Some(s) if s.file_name().is_some_and(|n| n == "bash") => s.clone(),
            Some(_) => return None,
            None => match default_shell() {
                (bash, true) => bash.clone(),
                _ => return None,
            },
        };
        if command.trim().is_empty() || command.contains('\0') {
            return None;
        }
        Some(KeyInputs {
            env: std::borrow::Cow::Borrowed(&spec.env),
            shell,
            sandbox: spec.sandbox.clone(),
            limits: spec.limits,
            containment: spec.containment,
        })
    }

    fn made(inputs: &KeyInputs<'_>) -> ShellKey {
        use std::hash::{Hash, Hasher};
        let env = build_env(&inputs.env, &[], false);
        let sandbox = inputs.sandbox.as_deref().cloned();
        // One fixed hasher: equal keys made at different times hash alike.
        let mut hasher = std::hash::DefaultHasher::new();
        (
            &inputs.shell,
            &env,
            &sandbox,
            inputs.limits,
            inputs.containment,
        )
            .hash(&mut hasher);
        let hash = hasher.finish();
        ShellKey {
            shell: inputs.shell.clone(),
            env,
            sandbox,
            limits: inputs.limits,
            containment: inputs.containment,
            hash,
        }
    }
}

/// A started shell waiting for its command. Dropped, it is ended: its group killed, the
/// shell reaped (its [`Child`](crate::child::Child)).
struct Ready {
    /// Its pipes readied and its pidfd opened while it waited, not during the call.
    call: Call,
    control: OwnedFd,
}

impl Ready {
    fn start(key: &ShellKey) -> Option<Ready> {
        let mut group = CallGroup::new(key.containment);
        group.set_limits(&key.limits).ok()?;
        let (control_r, control_w) = sys::pipe().ok()?;
        let program = Program::Argv {
            program: key.shell.display().to_string(),
            args: ["-o", "pipefail", "-c", DRIVER].map(str::to_owned).to_vec(),
        };
        let spawned = spawn(
            &Launch {
                program: &program,
                cwd: std::path::Path::new("/"),
                env: key.env.clone(),
                io: Io::Prepared {
                    control: control_r.as_raw_fd(),
                },
                sandbox: key.sandbox.as_ref(),
            },
            &mut group,
        )
        .ok()?;
        Some(Ready {
            call: Call::new(spawned, group),
            control: control_w,
        })
    }

    /// Whether the shell still waits (it was not killed while idle).
    fn alive(&mut self) -> bool {
        matches!(self.call.child().try_wait(), Ok(None))
    }

    /// Ends an unused shell: its group killed, the shell reaped (the drop of its child).
    fn discard(self) {
        drop(self);
    }
}

/// The frame that hands a shell its directory and command.
fn frame(dir: &[u8], command: &str) -> Vec<u8> {
    let kind = if dir.is_ascii() && command.is_ascii() {
        'A'
    } else {
        'B'
    };
    let mut frame = format!("{kind} {} {}\n", dir.len(), command.len()).into_bytes();
    frame.extend_from_slice(dir);
    frame.extend_from_slice(command.as_bytes());
    frame
}

/// How many shells are kept, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PreparedSettings {
    /// Shells kept ready per key. 0 turns prepared shells off.
    pub per_key: usize,
    /// Most keys kept at once; the least recently used goes first.
    pub max_keys: usize,
    /// A key whose shells were not taken for this long has them ended.
    pub idle: Duration,
}

impl Default for PreparedSettings {
    /// Two shells per key, four keys, ended after a minute unused.
    fn default() -> Self {
        PreparedSettings {
            per_key: 2,
            max_keys: 4,
            idle: Duration::from_mins(1),
        }
    }
}

struct Entry {
    ready: Vec<Ready>,
    /// Shells being started for this key now.
    starting: usize,
    last_taken: Instant,
    /// A shell of this key could not be started: not tried again before then.
    retry_at: Option<Instant>,
}

/// After a shell could not be started, the next try waits this long.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// What a pool holds and has done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PreparedStats {
    /// Shells started and waiting for a call.
    pub ready: usize,
    /// Calls that ran in a prepared shell.
    pub taken: u64,
    /// Shells started in all.
    pub started: u64,
    /// Kinds of call ([`ShellKey`]s) shells are prepared for.
    pub keys: usize,
}

#[derive(Default)]
struct State {
    stats: PreparedStats,
    keys: HashMap<Arc<ShellKey>, Entry>,
    /// The refill thread runs.
    filler: bool,
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the refill thread: a shell was taken, or the pool closes.
    wake: Condvar,
    settings: PreparedSettings,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A pool of prepared shells for one-shot calls (see the module's documentation).
pub struct PreparedShells {
    shared: Arc<Shared>,
    /// The keys made lately, by what they were made from (at most `max_keys`).
    made: Mutex<Vec<(KeyInputs<'static>, Arc<ShellKey>)>>,
}

impl std::fmt::Debug for PreparedShells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedShells")
            .field("settings", &self.shared.settings)
            .finish_non_exhaustive()
    }
}

impl PreparedShells {
    /// An empty pool; shells are started for a key once a call of that key has run.
    pub fn new(settings: PreparedSettings) -> PreparedShells {
        PreparedShells {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                settings,
            }),
            made: Mutex::new(Vec::new()),
        }
    }

    /// Runs `spec` as [`crate::run`] does, in a prepared shell when one of its key is ready.
    pub fn run<S: Sink + ?Sized>(
        &self,
        spec: &ExecSpec,
        sink: &mut S,
        cancel: &CancelToken,
    ) -> ExecOutcome {
        self.run_watched(spec, sink, cancel, OnWaiting::Stop)
    }

    /// [`run`](Self::run), with what a wait for a terminal the call lacks does: end it
    /// ([`OnWaiting::Stop`], as `run`), or report it in a slot (a call that may yield).
    pub fn run_watched<S: Sink + ?Sized>(
        &self,
        spec: &ExecSpec,
        sink: &mut S,
        cancel: &CancelToken,
        on_waiting: OnWaiting,
    ) -> ExecOutcome {
        use std::os::unix::ffi::OsStrExt;
        let start = Instant::now();
        let fresh =
            |sink: &mut S, on_waiting| crate::oneshot::run_piped(spec, sink, cancel, on_waiting);
        let (Program::Shell { command, .. }, Some(key)) = (&spec.program, self.key_of(spec)) else {
            return fresh(sink, on_waiting);
        };
        // The shell enters the directory itself: one it cannot enter takes the fresh spawn,
        // whose error names it.
        if !spec.cwd.is_dir() {
            return fresh(sink, on_waiting);
        }
        let dir = logical_pwd(&key.env, &spec.cwd);
        let Some(shell) = self.take(&key) else {
            return fresh(sink, on_waiting);
        };
        if sys::write_all(&shell.control, &frame(dir.as_os_str().as_bytes(), command)).is_err() {
            // The shell is gone (killed while idle): a fresh spawn runs the call.
            shell.discard();
            return fresh(sink, on_waiting);
        }
        let Ready { call, control } = shell;
        drop(control);
        let outcome = supervise_call(spec, sink, cancel, start, call, on_waiting);
        // The replacement starts once the call is over: started at once, its fork and exec
        // would compete for the CPU with the call it was taken for.
        self.shared.wake.notify_one();
        outcome
    }

    /// What the pool holds and has done.
    pub fn stats(&self) -> PreparedStats {
        let state = self.shared.lock();
        PreparedStats {
            ready: state.keys.values().map(|e| e.ready.len()).sum(),
            keys: state.keys.len(),
            ..state.stats
        }
    }

    /// The key of `spec` when this pool may run it.
    fn key_of(&self, spec: &ExecSpec) -> Option<Arc<ShellKey>> {
        if self.shared.settings.per_key == 0 {
            return None;
        }
        let inputs = ShellKey::of(spec)?;
        let mut made = self
            .made
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, key)) = made.iter().find(|(made_of, _)| *made_of == inputs) {
            return Some(key.clone());
        }
        let key = Arc::new(ShellKey::made(&inputs));
        if made.len() >= self.shared.settings.max_keys.max(1) {
            made.remove(0);
        }
        let kept = KeyInputs {
            env: std::borrow::Cow::Owned(inputs.env.into_owned()),
            ..inputs
        };
        made.push((kept, key.clone()));
        Some(key)
    }

    /// A ready shell of `key`, if there is one; either way the key is marked wanted and the
    /// refill thread is woken.
    fn take(&self, key: &ShellKey) -> Option<Ready> {
        let mut state = self.shared.lock();
        if state.closed {
            return None;
        }
        let now = Instant::now();
        if !state.keys.contains_key(key) && state.keys.len() >= self.shared.settings.max_keys {
            // Make room: the key taken least recently goes, its shells with it.
            let oldest = state
                .keys
                .iter()
                .min_by_key(|(_, e)| e.last_taken)
                .map(|(k, _)| k.clone());
            if let Some(old) = oldest
                && let Some(entry) = state.keys.remove(&old)
            {
                entry.ready.into_iter().for_each(Ready::discard);
            }
        }
        if !state.keys.contains_key(key) {
            let entry = Entry {
                ready: Vec::new(),
                starting: 0,
                last_taken: now,
                retry_at: None,
            };
            state.keys.insert(Arc::new(key.clone()), entry);
        }
        let entry = state.keys.get_mut(key).expect("inserted above");
        entry.last_taken = now;
        let mut taken = None;
        while let Some(mut shell) = entry.ready.pop() {
            if shell.alive() {
                taken = Some(shell);
                break;
            }
            shell.discard();
        }
        state.stats.taken += u64::from(taken.is_some());
        self.ensure_filler(&mut state);
        drop(state);
        if taken.is_none() {
            self.shared.wake.notify_one();
        }
        taken
    }

    fn ensure_filler(&self, state: &mut State) {
        if state.filler {
            return;
        }
        let weak = Arc::downgrade(&self.shared);
        let started = std::thread::Builder::new()
            .name("agent-exec-prepare".into())
            .spawn(move || fill(&weak));
        // No thread (out of them): calls go on without prepared shells.
        state.filler = started.is_ok();
    }
}

impl Drop for PreparedShells {
    fn drop(&mut self) {
        self.close();
    }
}

impl PreparedShells {
    /// Ends every prepared shell; later calls spawn fresh ones.
    pub fn close(&self) {
        let keys = {
            let mut state = self.shared.lock();
            state.closed = true;
            std::mem::take(&mut state.keys)
        };
        self.shared.wake.notify_all();
        for entry in keys.into_values() {
            entry.ready.into_iter().for_each(Ready::discard);
        }
    }
}

/// The refill thread: starts shells for keys below their count, ends those of idle keys.
fn fill(shared: &Weak<Shared>) {
    loop {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let settings = shared.settings;
        let mut state = shared.lock();
        if state.closed {
            state.filler = false;
            return;
        }
        let now = Instant::now();
        let idle: Vec<Arc<ShellKey>> = state
            .keys
            .iter()
            .filter(|(_, e)| now.duration_since(e.last_taken) >= settings.idle)
            .map(|(k, _)| k.clone())
            .collect();
        let mut ended = Vec::new();
        for key in idle {
            if let Some(entry) = state.keys.remove(&key) {
                ended.extend(entry.ready);
            }
        }
        let wanted = state
            .keys
            .iter_mut()
            .find(|(_, e)| {
                e.ready.len() + e.starting < settings.per_key && e.retry_at.is_none_or(|t| now >= t)
            })
            .map(|(k, e)| {
                e.starting += 1;
                k.clone()
            });
        let Some(key) = wanted else {
            // Nothing to start: sleep until a shell is taken, or the next key goes idle.
            let wait = state
                .keys
                .values()
                .flat_map(|e| [Some(e.last_taken + settings.idle), e.retry_at])
                .flatten()
                .min()
                .map_or(settings.idle, |t| t.saturating_duration_since(now));
            let guard = shared
                .wake
                .wait_timeout(state, wait.max(Duration::from_millis(10)))
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            drop(guard);
            ended.into_iter().for_each(Ready::discard);
            continue;
        };
        drop(state);
        ended.into_iter().for_each(Ready::discard);
        let shell = Ready::start(&key);
        let mut state = shared.lock();
        let closed = state.closed;
        let Some(entry) = state.keys.get_mut(&key) else {
            drop(state);
            shell.into_iter().for_each(Ready::discard);
            continue;
        };
        entry.starting -= 1;
        match shell {
            Some(shell) if !closed => {
                entry.retry_at = None;
                entry.ready.push(shell);
                state.stats.started += 1;
            }
            shell => {
                if shell.is_none() {
                    entry.retry_at = Some(Instant::now() + RETRY_AFTER);
                }
                drop(state);
                shell.into_iter().for_each(Ready::discard);
            }
        }
    }
}
