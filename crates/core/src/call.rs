//! The async API: a call runs on a thread of its own and is awaited as a future that cancels
//! it when dropped; its progress can be streamed while it runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use agent_exec_executor::CancelToken;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::progress::{CancelOnDrop, Observer, Progress, report_progress};
use crate::tool::{Approval, Tool};
use agent_exec_protocol::JobOutputRequest;
use agent_exec_protocol::Request;
use agent_exec_protocol::{Outcome, ToolResult};

/// Updates held for a reader that is behind.
const UPDATES_BUFFERED: usize = 8;

/// How [`Tool::start`] runs a call.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// Stream [`Progress`] updates (see [`Call::update`]).
    pub progress: bool,
    /// Cancel the call when this token is cancelled.
    pub cancel: Option<CancellationToken>,
    /// A human already approved this request (it came back `needs_approval` before): an
    /// `ask` verdict no longer stops it.
    pub approved: bool,
    /// The call may be turned into a background job while it runs ([`Call::into_job`]): a
    /// one-shot or session call runs as a job nobody sees until then. A request without a
    /// `yield_ms` of its own then yields when asked, or — as any call that may yield — when
    /// it waits (at a prompt, or for a terminal it lacks).
    pub yielding: bool,
}

impl RunOptions {
    /// Stream progress updates.
    #[must_use]
    pub fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Cancel the call with `token`.
    #[must_use]
    pub fn cancel_on(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Let [`Call::into_job`] turn the call into a background job while it runs.
    #[must_use]
    pub fn yielding(mut self) -> Self {
        self.yielding = true;
        self
    }

    /// Run it as approved by a human.
    #[must_use]
    pub fn approved(mut self) -> Self {
        self.approved = true;
        self
    }
}

/// A call in flight: await it for the [`ToolResult`]; read [`update`](Call::update)s while it
/// runs.
///
/// # Cancel safety
/// Dropping a `Call` before it is ready cancels the command: its whole process group and
/// every process that left it get SIGTERM, then SIGKILL after the grace period. The call's
/// thread finishes that cleanup on its own; nothing the command started survives the drop.
#[must_use = "a call is cancelled when dropped; await it"]
pub struct Call {
    result: oneshot::Receiver<ToolResult>,
    cancel: CancelToken,
    /// Cancelled by [`Call::into_job`]: the call yields now.
    yield_now: CancelToken,
    updates: Option<mpsc::Receiver<Progress>>,
    cancel_on: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    done: bool,
}

impl Call {
    /// The next progress update; `None` once the call has ended (or when progress was not
    /// asked for). Updates come at most every 250 ms, when something changed, and at least
    /// every 5 s.
    pub async fn update(&mut self) -> Option<Progress> {
        std::future::poll_fn(|cx| {
            // A caller looping on updates must still see its cancellation token.
            self.poll_cancel_on(cx);
            match &mut self.updates {
                Some(rx) => rx.poll_recv(cx),
                None => Poll::Ready(None),
            }
        })
        .await
    }

    /// Cancels the call once the caller's token is cancelled.
    fn poll_cancel_on(&mut self, cx: &mut Context<'_>) {
        if let Some(token) = &mut self.cancel_on
            && token.as_mut().poll(cx).is_ready()
        {
            self.cancel.cancel();
            self.cancel_on = None;
        }
    }

    /// Cancels the call; awaiting it then gives the `cancelled` result.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Turns the call into a background job: it yields now, and the result says `running` with
    /// its `job_id` and the output so far (read on with `job_output`, type with `job_input`,
    /// end with `job_kill`); the command keeps its containment, output and timeout. A call that
    /// already ended gives its result, as awaiting it would. Needs
    /// [`RunOptions::yielding`] (or a request with a `yield_ms`): without, the call runs to its
    /// end.
    pub async fn into_job(self) -> ToolResult {
        self.yield_now.cancel();
        self.await
    }
}

impl Future for Call {
    type Output = ToolResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolResult> {
        self.poll_cancel_on(cx);
        match Pin::new(&mut self.result).poll(cx) {
            Poll::Ready(result) => {
                self.done = true;
                Poll::Ready(result.unwrap_or_else(|_| {
                    ToolResult::invalid("the call's thread ended without a result", String::new())
                }))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if !self.done {
            self.cancel.cancel();
        }
    }
}

/// Asked, asynchronously, when the policy says `ask` (a framework interrupts, a human answers
/// later). See [`Tool::run`].
pub trait AsyncApprover: Send + Sync {
    /// Whether `command` may run; `reason` is the policy's.
    fn approve(
        &self,
        command: String,
        reason: String,
    ) -> Pin<Box<dyn Future<Output = bool> + Send>>;
}

impl Tool {
    /// Starts a call on a thread of its own (works under any async runtime, or none).
    pub fn start(&self, request: Request, options: RunOptions) -> Call {
        let (tx, result) = oneshot::channel();
        let cancel = CancelToken::new();
        // Watching the output costs a count and a copy per chunk: only when updates are read.
        let observer = options.progress.then(|| Arc::new(Observer::new()));
        let (updates_tx, updates) = if options.progress {
            // Bounded: a caller that does not read updates costs a few snapshots, not one per
            // quarter second for the whole call.
            let (t, r) = mpsc::channel(UPDATES_BUFFERED);
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        let finished = CancelToken::new();
        if let (Some(updates_tx), Some(observer)) = (updates_tx, &observer) {
            let (observer, finished) = (observer.clone(), finished.clone());
            std::thread::spawn(move || send_updates(&observer, &finished, &updates_tx));
        }
        let approval = if options.approved {
            Approval::Given
        } else {
            Approval::Ask
        };
        let (tool, token) = (self.clone(), cancel.clone());
        let yield_now = CancelToken::new();
        let yield_token = yield_now.clone();
        let mut request = request;
        if options.yielding && request.yield_ms.is_none() && !request.run_in_background {
            // Yields only when asked (`into_job`).
            request.yield_ms = Some(u64::MAX);
        }
        std::thread::spawn(move || {
            // Even if the call panics, the update stream ends.
            let _finished = CancelOnDrop(finished);
            let result = tool.call(
                &request,
                &token,
                approval,
                observer.as_deref(),
                Some(&yield_token),
            );
            let _ = tx.send(result);
        });
        Call {
            result,
            cancel,
            yield_now,
            updates,
            cancel_on: options.cancel.map(|t| Box::pin(t.cancelled_owned())),
            done: false,
        }
    }

    /// Runs one request; the future cancels the call when dropped (see [`Call`]). With an
    /// [`AsyncApprover`], a `needs_approval` answer is put to it and, once approved, the
    /// request runs as approved.
    pub async fn run(&self, request: Request) -> ToolResult {
        self.run_with(request, None).await
    }

    /// [`run`](Self::run), asking `approver` when the policy says `ask`.
    pub async fn run_with(
        &self,
        request: Request,
        approver: Option<&dyn AsyncApprover>,
    ) -> ToolResult {
        let first = self.start(request.clone(), RunOptions::default()).await;
        let Some(approver) = approver else {
            return first;
        };
        if first.outcome() != Outcome::NeedsApproval {
            return first;
        }
        let reason = first
            .details
            .policy
            .as_ref()
            .map(|p| p.reason.clone())
            .unwrap_or_default();
        let command = request.command.clone().unwrap_or_else(|| {
            crate::plan::argv_line(
                request.executable.as_deref().unwrap_or_default(),
                request.argv.as_deref().unwrap_or_default(),
            )
        });
        if approver.approve(command, reason).await {
            self.start(request, RunOptions::default().approved()).await
        } else {
            first
        }
    }

    /// `job_output`, waiting on a thread of its own.
    pub async fn job_output_async(&self, request: JobOutputRequest) -> ToolResult {
        let (tx, rx) = oneshot::channel();
        let tool = self.clone();
        std::thread::spawn(move || {
            let _ = tx.send(tool.job_output(&request));
        });
        rx.await.unwrap_or_else(|_| {
            ToolResult::invalid(
                "the job_output thread ended without a result",
                String::new(),
            )
        })
    }
}

/// Sends the observer's progress while the call runs: every 250 ms when something changed,
/// at least every 5 s; then once more at the end, and closes the stream.
fn send_updates(observer: &Observer, finished: &CancelToken, tx: &mpsc::Sender<Progress>) {
    let last_bytes = report_progress(observer, finished, |update| {
        // Full: the reader is behind; a later snapshot says more anyway.
        !matches!(
            tx.try_send(update),
            Err(mpsc::error::TrySendError::Closed(_))
        )
    });
    if !tx.is_closed() && observer.bytes() != last_bytes {
        let _ = tx.try_send(observer.snapshot());
    }
}
