//! A long-lived process spoken to over its standard input and output: the connection to a
//! remote target (`ssh HOST agent-exec serve`, `docker exec -i …`). Started on the one spawn
//! path, in a containment group of its own, so the watchdog ends it — and with it the far
//! side, whose input then closes — when agent-exec dies.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::Duration;

use crate::ExitStatus;
use crate::child::Child;
use crate::containment::{self, CallGroup, Containment};
use crate::env::{EnvConfig, build_env};
use crate::spawn::{Io, Launch, SpawnError, spawn};
use crate::spec::{OutputPipes, Program};

/// A running process with its stdin, stdout and stderr on pipes to us. Dropped without
/// [`Channel::end`], it still leaves nothing behind (its child kills its group).
#[derive(Debug)]
pub struct Channel {
    child: Child,
    input: Option<File>,
    output: Option<File>,
    errors: Option<File>,
}

impl Channel {
    /// Starts `program` with `args` in `cwd`, with the hardened environment built from `env`.
    pub fn start(
        program: &str,
        args: &[String],
        cwd: &Path,
        env: &EnvConfig,
    ) -> Result<Channel, SpawnError> {
        let mut group = CallGroup::new(Containment::Auto);
        let program = Program::Argv {
            program: program.to_owned(),
            args: args.to_vec(),
        };
        let spawned = spawn(
            &Launch {
                program: &program,
                cwd,
                env: build_env(env, &[], false),
                // Its stdout is the protocol; its stderr the client's own words, kept apart.
                io: Io::Pipes {
                    stdin: true,
                    output: OutputPipes::Separate,
                },
                sandbox: None,
            },
            &mut group,
        )?;
        let file = |fd: Option<OwnedFd>| fd.map(File::from);
        Ok(Channel {
            child: Child::new(spawned.child, group),
            input: file(spawned.input),
            output: file(spawned.stdout),
            errors: file(spawned.stderr),
        })
    }

    /// Its pid.
    pub fn id(&self) -> u32 {
        self.child.pid() as u32
    }

    /// Where we write its input (once; `None` after).
    pub fn take_input(&mut self) -> Option<File> {
        self.input.take()
    }

    /// Its stdout (once).
    pub fn take_output(&mut self) -> Option<File> {
        self.output.take()
    }

    /// Its stderr (once).
    pub fn take_errors(&mut self) -> Option<File> {
        self.errors.take()
    }

    /// Its exit status, once it has exited (reaps it).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `bound` for it to exit by itself; its status if it did.
    pub fn wait_for(&mut self, bound: Duration) -> Option<ExitStatus> {
        self.child.wait_for(bound)
    }

    /// Ends it and everything it started: TERM, up to `grace`, then KILL. Its status.
    pub fn end(mut self, grace: Duration) -> Option<ExitStatus> {
        drop(self.input.take());
        containment::end_members(self.child.group(), None, grace, None);
        self.child.wait().ok()
    }
}
