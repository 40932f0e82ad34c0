"""The synchronous client: `AgentExec` (one `agent-exec serve` process, usable from many threads),
`Call` (a request in flight, which can be cancelled) and `Session` (a named persistent shell)."""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
import uuid
from typing import Any, Dict, Mapping, Optional, Sequence, Union, cast

from ._binary import find_binary
from ._protocol import (ExitInfo, ProgressCallback, Result, ServerExited, StderrTail,
                        deliver_line, encode, exec_params, logger, response_value, server_env,
                        with_target)

__all__ = ["AgentExec", "Call", "Session"]

PathLike = Union[str, "os.PathLike[str]"]
Command = Union[str, Sequence[str]]


class Call:
    """A request sent to the server, answered or not yet (from `AgentExec.submit`/`submit_exec`)."""

    def __init__(self, client: AgentExec, request_id: int, method: str,
                 on_progress: Optional[ProgressCallback]):
        self.id = request_id  # the JSON-RPC id, which `cancel {id}` names
        self.method = method
        self._client = client
        self._on_progress = on_progress
        self._done = threading.Event()
        self._message: Optional[Dict[str, Any]] = None  # the response
        self._exit: Optional[ExitInfo] = None  # set instead when the server went away first

    def done(self) -> bool:
        return self._done.is_set()

    def result(self, timeout: Optional[float] = None) -> Any:
        """Waits for the answer (at most `timeout` seconds: then `TimeoutError`) and returns its
        `result`; raises `RpcError` for an error response, `ServerExited` if the server is gone."""
        if not self._done.is_set():
            if threading.current_thread() is self._client._reader:
                # The reader thread delivers answers: waiting on it for one would wait for ever.
                raise RuntimeError("on_progress callbacks run on the client's reader thread and must "
                                   "not wait for answers; Call.cancel() does not wait and is fine")
            if not self._done.wait(timeout):
                raise TimeoutError(f"no answer to {self.method} (request {self.id}) within {timeout} s; "
                                   "Call.cancel() asks the server to stop it")
        if self._exit is not None:
            raise self._exit.error(self.method)
        assert self._message is not None
        return response_value(self._message, self.method)

    def cancel(self) -> bool:
        """Asks the server to cancel this request (`cancel {id}`), without waiting: an `exec` then
        answers with outcome `cancelled` and its output so far, a `job_output` ends its wait. False if
        it was answered already. Safe to call from an `on_progress` callback."""
        if self.done():
            return False
        try:
            self._client.submit("cancel", {"id": self.id})  # its own answer is not awaited
        except ServerExited:
            return False
        return True

    def _resolve(self, message: Dict[str, Any]) -> None:
        self._message = message
        self._done.set()

    def _fail(self, exit_info: ExitInfo) -> None:
        self._exit = exit_info
        self._done.set()

    def __repr__(self) -> str:
        return f"<Call {self.method} id={self.id} {'done' if self.done() else 'pending'}>"


class AgentExec:
    """One `agent-exec serve` process (JSON-RPC 2.0 over stdio). Safe to use from several threads.

    `binary`: see `find_binary`; `args`: extra `serve` options (`["--sandbox", "off"]`); `cwd`: the
    server's working directory (the default workspace of calls); `env`: variables for the server,
    merged over this process's environment (`os.environ`; a None value removes a variable), not
    replacing it.
    """

    def __init__(self, binary: Optional[PathLike] = None, *, args: Sequence[str] = (),
                 cwd: Optional[PathLike] = None, env: Optional[Mapping[str, Optional[str]]] = None):
        self.binary = find_binary(os.fspath(binary) if binary is not None else None)
        self._process = subprocess.Popen([self.binary, "serve", *args], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                                         env=server_env(env))
        self._ids = itertools.count(1)
        self._pending: Dict[int, Call] = {}
        self._lock = threading.Lock()  # guards _pending, _exit and _closed
        # Writing has a lock of its own: a writer blocked on a full pipe (the server reads no more
        # input while its queue is full) must never keep the reader from delivering answers.
        self._write_lock = threading.Lock()
        self._exit: Optional[ExitInfo] = None
        self._closed = False
        self._stderr = StderrTail()
        self._stderr_thread = threading.Thread(target=self._read_stderr, daemon=True,
                                               name="agent-exec-stderr")
        self._reader = threading.Thread(target=self._read_stdout, daemon=True, name="agent-exec-reader")
        self._stderr_thread.start()
        self._reader.start()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    # -- the protocol ---------------------------------------------------------------------------

    def submit(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
               on_progress: Optional[ProgressCallback] = None) -> Call:
        """Sends a request and returns at once with its `Call` (wait with `.result()`)."""
        with self._lock:
            if self._closed:
                raise ExitInfo(None, "", closed=True).error(method)
            if self._exit is not None:
                raise self._exit.error(method)
            call = Call(self, next(self._ids), method, on_progress)
            self._pending[call.id] = call
        try:
            line = encode(call.id, method, params)
        except BaseException:  # params that are not JSON: nothing was sent
            with self._lock:
                self._pending.pop(call.id, None)
            raise
        try:
            with self._write_lock:
                self._process.stdin.write(line)  # type: ignore[union-attr]
                self._process.stdin.flush()  # type: ignore[union-attr]
        except (OSError, ValueError):  # a broken pipe (the server died), or stdin closed by close()
            if not self._closed and threading.current_thread() is not self._reader:
                self._reader.join(10)  # the reader fails every pending call when the output ends
            with self._lock:
                self._pending.pop(call.id, None)
            if not call.done():
                call._fail(ExitInfo(None, "", closed=True) if self._closed
                           else ExitInfo(self._process.poll(), self._stderr.text()))
        return call

    def call(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
             on_progress: Optional[ProgressCallback] = None) -> Any:
        """Calls any method and returns its `result` (for methods without a wrapper here)."""
        return self._wait(self.submit(method, params, on_progress=on_progress))

    def _result(self, method: str, params: Mapping[str, Any]) -> Result:
        return cast(Result, self.call(method, params))  # every method answers with a Result

    @staticmethod
    def _wait(call: Call) -> Any:
        try:
            return call.result()
        except BaseException:
            # Interrupted while waiting (Ctrl-C): the command must not run on unseen.
            if not call.done():
                call.cancel()
            raise

    def _read_stdout(self) -> None:
        reason: Optional[str] = None
        try:
            with self._process.stdout:  # type: ignore[union-attr]
                for line in self._process.stdout:  # type: ignore[union-attr]
                    deliver_line(line, self._deliver)
        except Exception as e:
            logger.exception("reading agent-exec serve's output failed")
            # No answer can be read any more: end the server (and its sessions and jobs) rather
            # than leave it running unseen, and reap it.
            reason = f"{type(e).__name__}: {e}"
            self._process.kill()
        finally:  # the server is gone: no caller may wait for ever
            try:
                returncode: Optional[int] = self._process.wait(5)
            except subprocess.TimeoutExpired:
                returncode = None
            self._stderr_thread.join(1)
            with self._lock:
                self._exit = ExitInfo(returncode, self._stderr.text(), reason=reason)
                pending = list(self._pending.values())
                self._pending.clear()
            for call in pending:
                call._fail(self._exit)

    def _deliver(self, message: Dict[str, Any]) -> None:
        if "method" in message:  # a notification from the server
            if message["method"] == "exec/progress":
                params = message.get("params") or {}
                with self._lock:
                    call = self._pending.get(params.get("id"))  # type: ignore[arg-type]
                if call is not None and call._on_progress is not None:
                    try:
                        call._on_progress(params)  # type: ignore[arg-type]
                    except Exception:  # a callback's bug must not stop the answers of every call
                        logger.exception("on_progress callback of request %s raised", call.id)
            return
        request_id = message.get("id")
        with self._lock:
            call = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if call is not None:
            call._resolve(message)
        elif "error" in message:  # e.g. id null: a line the server could not read
            logger.warning("agent-exec serve: unmatched error response %s", message)

    def _read_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        with stream:
            for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                self._stderr.feed(chunk)

    # -- methods (docs/contract.md §7) ----------------------------------------------------------

    def exec(self, command: Command, *, cwd: Optional[PathLike] = None,
             timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
             on_progress: Optional[ProgressCallback] = None, **request_fields: Any) -> Result:
        """Runs a command and returns its result (`details.outcome` says how it ended; a failing
        command is not an exception). `command`: a shell line, or a list `[program, *args]` run with
        no shell. `timeout`: seconds (fractions become `timeout_ms`). `on_progress`: called with each
        `exec/progress` notification, on the client's reader thread (keep it quick, do not wait for
        other calls in it). `request_fields`: the other request fields (`session`, `head`, `tail`,
        `run_in_background`, `yield_ms`, `pty`, `streams`, `view`, `sandbox`, `target`, ...)."""
        return cast(Result, self._wait(self.submit_exec(command, cwd=cwd, timeout=timeout, env=env,
                                                        on_progress=on_progress, **request_fields)))

    def submit_exec(self, command: Command, *, cwd: Optional[PathLike] = None,
                    timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
                    on_progress: Optional[ProgressCallback] = None, **request_fields: Any) -> Call:
        """`exec` without waiting: returns its `Call`, to `.result()` or `.cancel()` it."""
        params = exec_params(command, cwd, timeout, env, on_progress is not None, request_fields)
        return self.submit("exec", params, on_progress=on_progress)

    # `target` (these methods and `exec`): the remote target (contract §9) whose job, artifact or
    # session it is; ids and names are that target's own. Default: the operator's `--target`.

    def job_output(self, job_id: Union[str, int], mode: str = "new", wait_ms: int = 0, *,
                   target: Optional[str] = None) -> Result:
        """A background job's output: `mode` "new" (not yet read) or "all"; `wait_ms` waits for new
        output, the job's end, or its wait for input. `details.running` says whether it still runs."""
        return self._result("job_output", with_target({"job_id": job_id, "mode": mode,
                                                       "wait_ms": wait_ms}, target))

    def job_input(self, job_id: Union[str, int], data: str = "", *, enter: bool = True,
                  eof: bool = False, yield_ms: int = 0, target: Optional[str] = None) -> Result:
        """Types `data` into a job (then Enter unless `enter=False`; `eof` closes its input);
        `yield_ms` waits that long for what the job answers."""
        return self._result("job_input", with_target({"job_id": job_id, "data": data, "enter": enter,
                                                      "eof": eof, "yield_ms": yield_ms}, target))

    def job_kill(self, job_id: Union[str, int], *, target: Optional[str] = None) -> Result:
        return self._result("job_kill", with_target({"job_id": job_id}, target))

    def job_list(self, *, running: bool = False, target: Optional[str] = None) -> Result:
        """The jobs, in `details.jobs` (with `running`, only those still running)."""
        return self._result("job_list", with_target({"running": True} if running else {}, target))

    def artifact_read(self, artifact_id: str, *, offset: Optional[int] = None,
                      limit: Optional[int] = None, grep: Optional[str] = None,
                      context: Optional[int] = None, target: Optional[str] = None) -> Result:
        """A page of a spilled output (`offset`, `limit`), or its lines matching `grep` (± `context`)."""
        params = {"id": artifact_id, "offset": offset, "limit": limit, "grep": grep, "context": context,
                  "target": target}
        return self._result("artifact_read", {k: v for k, v in params.items() if v is not None})

    def session_close(self, session: str, *, target: Optional[str] = None) -> Result:
        return self._result("session_close", with_target({"session": session}, target))

    def cancel(self, request_id: int) -> Result:
        """`cancel {id}`: cancels the request in flight with that id (see also `Call.cancel`)."""
        return self._result("cancel", {"id": request_id})

    def session(self, name: Optional[str] = None) -> Session:
        """A named persistent shell (cd, exports, functions persist); a fresh name if none is given.
        The server starts it on its first `exec`; `close()` (or leaving a `with` block) ends it."""
        return Session(self, name or f"py-{uuid.uuid4().hex[:8]}")

    # -- lifetime -------------------------------------------------------------------------------

    def close(self, timeout: float = 30.0) -> Optional[int]:
        """Ends the server by closing its input: calls in flight are answered first, then its
        sessions and jobs end. Kills it after `timeout` seconds. Returns its exit status."""
        with self._lock:
            self._closed = True
        # A writer stuck on a full pipe holds the write lock; then there is nothing to close nicely.
        if self._write_lock.acquire(timeout=timeout):
            try:
                self._process.stdin.close()  # type: ignore[union-attr]
            except OSError:  # the buffered rest could not be flushed: the server is gone
                pass
            finally:
                self._write_lock.release()
        try:
            returncode = self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            returncode = self._process.wait()
        if threading.current_thread() is not self._reader:
            self._reader.join(10)
        return returncode

    def __enter__(self) -> AgentExec:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AgentExec {self.binary} pid={self.pid}>"


class Session:
    """A persistent shell session of one server, by name (`AgentExec.session()`).

    Its calls run one at a time, in the order they are made: the server does not order calls on
    one session that are in flight together, and a shell's commands are meant to run in order."""

    def __init__(self, client: AgentExec, name: str):
        self.client, self.name = client, name
        self._turn = threading.Lock()

    def exec(self, command: Command, *, cwd: Optional[PathLike] = None,
             timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
             on_progress: Optional[ProgressCallback] = None, **request_fields: Any) -> Result:
        """`AgentExec.exec` in this session."""
        with self._turn:
            return self.client.exec(command, cwd=cwd, timeout=timeout, env=env,
                                    on_progress=on_progress, session=self.name, **request_fields)

    def close(self, *, target: Optional[str] = None) -> Result:
        """Ends the session's shell; a command running in it ends at once, with outcome
        `cancelled` (so close() does not wait for the session's turn). `target`: as for
        `AgentExec.session_close`."""
        return self.client.session_close(self.name, target=target)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        try:
            self.close()
        except ServerExited:  # the server is gone, and its sessions with it
            pass

    def __repr__(self) -> str:
        return f"<Session {self.name!r}>"
