//! How a process ended: a leaf type, named by the modules that wait for processes.

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
}

impl ExitStatus {
    /// A `wait(2)` status: `None` for one that is neither an exit nor a death by signal
    /// (stopped, continued).
    pub(crate) fn from_wait(raw: i32) -> Option<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        // std decodes it as `WIFEXITED`/`WEXITSTATUS` and `WIFSIGNALED`/`WTERMSIG` do.
        let status = std::process::ExitStatus::from_raw(raw);
        match (status.code(), status.signal()) {
            (Some(code), _) => Some(ExitStatus::Exited(code)),
            (None, Some(signal)) => Some(ExitStatus::Signaled(signal)),
            (None, None) => None,
        }
    }
}
