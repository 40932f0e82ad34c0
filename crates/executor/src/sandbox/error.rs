//! Why a sandbox cannot be had or could not be prepared: the sandbox's errors, below every file
//! that makes one.

/// Why a sandbox cannot be had here: what the kernel lacks or refused. Its `Display` says only
/// that; what the operator can do about it is [`Unenforceable::remedy`], worded by
/// `agent-exec-core`'s render (which knows the flags).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
#[non_exhaustive]
pub struct Unenforceable {
    /// What is missing or was refused.
    pub reason: String,
    /// The way on.
    pub remedy: Remedy,
}

impl Unenforceable {
    pub(crate) fn new(reason: String, remedy: Remedy) -> Unenforceable {
        Unenforceable { reason, remedy }
    }
}

/// What the operator can do about a sandbox this machine cannot give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Remedy {
    /// Run without the sandbox.
    GoWithout,
    /// Enable user namespaces, or run without the sandbox.
    EnableUserNamespaces,
}

/// Why a sandbox could not be prepared.
#[derive(Debug)]
pub(crate) struct PrepareError {
    pub(crate) reason: String,
    /// The way on, when this machine cannot give the sandbox (a refusal or a shortage of
    /// the kernel's, not a problem with what the call asked).
    pub(crate) remedy: Option<Remedy>,
    /// The kernel refused what every sandbox of these writable roots needs (a feature, a
    /// namespace, the read-only view around the roots) — a property of this machine, never
    /// of anything a call left in the roots.
    pub(crate) refused_by_kernel: bool,
}

impl PrepareError {
    pub(crate) fn new(reason: String) -> PrepareError {
        PrepareError {
            reason,
            remedy: None,
            refused_by_kernel: false,
        }
    }

    pub(crate) fn kernel(refusal: Unenforceable) -> PrepareError {
        PrepareError {
            reason: refusal.reason,
            remedy: Some(refusal.remedy),
            refused_by_kernel: true,
        }
    }

    /// The kernel failed a step (a shortage, or a refusal that depends on the roots): the
    /// call fails, and going without the sandbox is the way on.
    pub(crate) fn kernel_step(reason: String) -> PrepareError {
        PrepareError {
            reason,
            remedy: Some(Remedy::GoWithout),
            refused_by_kernel: false,
        }
    }
}

/// A step that failed, as a [`PrepareError`].
pub(crate) fn fail(what: &str, e: impl std::fmt::Display) -> PrepareError {
    PrepareError::new(format!("{what}: {e}"))
}
