"""The asyncio client: `AsyncAgentExec` and `AsyncSession`, the same methods as coroutines.

Cancelling the task of a call (`task.cancel()`, `asyncio.wait_for` timing out) sends `cancel {id}`
to the server, so the command ends there too; the task raises `CancelledError` as usual.

    import asyncio
    from agent_exec.aio import AsyncAgentExec

    async def main():
        async with AsyncAgentExec() as agent:
            fast, slow = await asyncio.gather(agent.exec("echo a"), agent.exec("sleep 1; echo b"))
            try:
                await asyncio.wait_for(agent.exec("sleep 30"), timeout=1)  # cancelled on the server
            except asyncio.TimeoutError:
                pass

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import os
import uuid
from typing import Any, Dict, Mapping, Optional, Sequence, Set, Tuple, Union, cast

from ._binary import find_binary
from ._protocol import (ExitInfo, ProgressCallback, Result, ServerExited, StderrTail,
                        deliver_line, encode, exec_params, logger, response_value, server_env,
                        with_target)

__all__ = ["AsyncAgentExec", "AsyncSession"]

PathLike = Union[str, "os.PathLike[str]"]
Command = Union[str, Sequence[str]]

# asyncio's StreamReader refuses lines longer than its limit (64 KiB by default); answers are
# bounded by the server's output window (`--max-bytes`), which an operator may set high.
_LINE_LIMIT = 256 * 1024 * 1024

# A request's future (None: an answer nobody awaits, such as a cancel's), method, progress callback.
_Pending = Tuple[Optional["asyncio.Future[Dict[str, Any]]"], str, Optional[ProgressCallback]]


class AsyncAgentExec:
    """One `agent-exec serve` process, for asyncio. Use `async with AsyncAgentExec() as agent:`
    (or `await agent.start()` ... `await agent.aclose()`); calls may run concurrently.
    Arguments as for `AgentExec`: `env` is merged over this process's environment as it is at
    `start()` (a None value removes a variable), not replacing it."""

    def __init__(self, binary: Optional[PathLike] = None, *, args: Sequence[str] = (),
                 cwd: Optional[PathLike] = None, env: Optional[Mapping[str, Optional[str]]] = None):
        self.binary = find_binary(os.fspath(binary) if binary is not None else None)
        self._args, self._cwd = list(args), cwd
        self._env = dict(env) if env is not None else None
        self._process: Optional[asyncio.subprocess.Process] = None
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
        self._exit: Optional[ExitInfo] = None
        self._closed = False
        self._stderr = StderrTail()
        self._callbacks: Set[asyncio.Future[Any]] = set()  # coroutine callbacks, kept referenced

    async def start(self) -> AsyncAgentExec:
        """Starts the server (once; `async with` does it)."""
        if self._process is None:
            self._process = await asyncio.create_subprocess_exec(
                self.binary, "serve", *self._args, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=self._cwd,
                env=server_env(self._env), limit=_LINE_LIMIT)
            # Created here, in the running loop (Python 3.9 binds a Lock to a loop when made).
            self._drain_lock = asyncio.Lock()
            self._stderr_task = asyncio.ensure_future(self._read_stderr())
            self._reader = asyncio.ensure_future(self._read_stdout())
        return self

    @property
    def pid(self) -> int:
        """The server's process id."""
        if self._process is None:
            raise RuntimeError("the server is not started")
        return self._process.pid

    # -- the protocol ---------------------------------------------------------------------------

    def _send(self, method: str, params: Optional[Mapping[str, Any]], awaited: bool,
              on_progress: Optional[ProgressCallback] = None) -> Tuple[int, Optional[asyncio.Future[Any]]]:
        # Synchronous on purpose: one write() puts the whole line in the transport's buffer, so
        # concurrent calls never interleave, and a cancel can be sent from an `except` clause.
        if self._process is None:
            raise RuntimeError("AsyncAgentExec is not started: use `async with AsyncAgentExec() as "
                               "agent:` or `await agent.start()`")
        if self._closed:
            raise ExitInfo(None, "", closed=True).error(method)
        if self._exit is not None:
            raise self._exit.error(method)
        request_id = next(self._ids)
        line = encode(request_id, method, params)
        future = asyncio.get_running_loop().create_future() if awaited else None
        self._pending[request_id] = (future, method, on_progress)
        self._process.stdin.write(line)  # type: ignore[union-attr]
        return request_id, future

    async def call(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
                   on_progress: Optional[ProgressCallback] = None) -> Any:
        """Calls any method and returns its `result` (for methods without a wrapper here)."""
        request_id, future = self._send(method, params, True, on_progress)
        assert future is not None
        try:
            try:
                async with self._drain_lock:  # concurrent drain() calls fail on Python < 3.10
                    await self._process.stdin.drain()  # type: ignore[union-attr]
            except ConnectionError:
                pass  # the server is gone: the reader fails the future when the output ends
            message = await future
        except asyncio.CancelledError:
            # The caller gave up on the call (cancelled while waiting, or while sending it): end
            # the command on the server too. The future is cancelled so that nothing set on it
            # later (the server's death) is an exception nobody retrieves.
            if not future.done() or future.cancelled():
                future.cancel()
                self._cancel_soon(request_id)
            raise
        return response_value(message, method)

    async def _result(self, method: str, params: Mapping[str, Any]) -> Result:
        return cast(Result, await self.call(method, params))  # every method answers with a Result

    def _cancel_soon(self, request_id: int) -> None:
        if self._exit is None and not self._closed:
            try:
                self._send("cancel", {"id": request_id}, False)
            except (ServerExited, RuntimeError):
                pass

    async def _read_stdout(self) -> None:
        returncode: Optional[int] = None
        reason: Optional[str] = None
        try:
            while True:
                line = await self._process.stdout.readline()  # type: ignore[union-attr]
                if not line:
                    break
                deliver_line(line, self._deliver)
            returncode = await asyncio.wait_for(self._process.wait(), 5)  # type: ignore[union-attr]
            await asyncio.wait_for(self._stderr_task, 1)
        except asyncio.CancelledError:  # the loop is shutting down
            raise
        except asyncio.TimeoutError:
            pass
        except Exception as e:  # e.g. a line over the stream's limit (ValueError)
            logger.exception("reading agent-exec serve's output failed")
            # No answer can be read any more: end the server (and its sessions and jobs) rather
            # than leave it running unseen, and reap it.
            reason = f"{type(e).__name__}: {e}"
            try:
                self._process.kill()  # type: ignore[union-attr]
            except ProcessLookupError:  # it had exited already
                pass
            try:  # bounded, as every wait here
                returncode = await asyncio.wait_for(self._process.wait(), 5)  # type: ignore[union-attr]
            except asyncio.TimeoutError:
                pass
        finally:  # the server is gone: no caller may wait for ever
            if returncode is None and self._process is not None:
                returncode = self._process.returncode
            self._exit = ExitInfo(returncode, self._stderr.text(), reason=reason)
            pending = list(self._pending.values())
            self._pending.clear()
            for future, method, _ in pending:
                if future is not None and not future.done():
                    future.set_exception(self._exit.error(method))

    def _deliver(self, message: Dict[str, Any]) -> None:
        if "method" in message:  # a notification from the server
            if message["method"] == "exec/progress":
                params = message.get("params") or {}
                entry = self._pending.get(params.get("id"))  # type: ignore[arg-type]
                if entry is not None and entry[2] is not None:
                    self._notify(entry[2], params)
            return
        request_id = message.get("id")
        entry = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if entry is None:
            if "error" in message:  # e.g. id null: a line the server could not read
                logger.warning("agent-exec serve: unmatched error response %s", message)
            return
        future = entry[0]
        if future is not None and not future.done():  # done: its caller was cancelled
            future.set_result(message)

    def _notify(self, callback: ProgressCallback, params: Dict[str, Any]) -> None:
        try:
            outcome = callback(params)  # type: ignore[arg-type]
            if inspect.isawaitable(outcome):  # an async callback runs as a task of its own
                task = asyncio.ensure_future(outcome)
                self._callbacks.add(task)
                task.add_done_callback(self._callback_done)
        except Exception:  # a callback's bug must not stop the answers of every call
            logger.exception("on_progress callback raised")

    def _callback_done(self, task: asyncio.Future[Any]) -> None:
        self._callbacks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("on_progress callback raised", exc_info=task.exception())

    async def _read_stderr(self) -> None:
        while True:
            chunk = await self._process.stderr.read(65536)  # type: ignore[union-attr]
            if not chunk:
                return
            self._stderr.feed(chunk)

    # -- methods (docs/contract.md §7) ----------------------------------------------------------

    async def exec(self, command: Command, *, cwd: Optional[PathLike] = None,
                   timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
                   on_progress: Optional[ProgressCallback] = None, **request_fields: Any) -> Result:
        """As `AgentExec.exec`. `on_progress` may be a plain function or a coroutine function."""
        params = exec_params(command, cwd, timeout, env, on_progress is not None, request_fields)
        return cast(Result, await self.call("exec", params, on_progress=on_progress))

    # `target`: as in `AgentExec` (contract §9), sent only when given.

    async def job_output(self, job_id: Union[str, int], mode: str = "new", wait_ms: int = 0, *,
                         target: Optional[str] = None) -> Result:
        """As `AgentExec.job_output`."""
        return await self._result("job_output", with_target({"job_id": job_id, "mode": mode,
                                                             "wait_ms": wait_ms}, target))

    async def job_input(self, job_id: Union[str, int], data: str = "", *, enter: bool = True,
                        eof: bool = False, yield_ms: int = 0, target: Optional[str] = None) -> Result:
        """As `AgentExec.job_input`."""
        return await self._result("job_input", with_target({"job_id": job_id, "data": data,
                                                            "enter": enter, "eof": eof,
                                                            "yield_ms": yield_ms}, target))

    async def job_kill(self, job_id: Union[str, int], *, target: Optional[str] = None) -> Result:
        return await self._result("job_kill", with_target({"job_id": job_id}, target))

    async def job_list(self, *, running: bool = False, target: Optional[str] = None) -> Result:
        return await self._result("job_list", with_target({"running": True} if running else {}, target))

    async def artifact_read(self, artifact_id: str, *, offset: Optional[int] = None,
                            limit: Optional[int] = None, grep: Optional[str] = None,
                            context: Optional[int] = None, target: Optional[str] = None) -> Result:
        params = {"id": artifact_id, "offset": offset, "limit": limit, "grep": grep, "context": context,
                  "target": target}
        return await self._result("artifact_read", {k: v for k, v in params.items() if v is not None})

    async def session_close(self, session: str, *, target: Optional[str] = None) -> Result:
        return await self._result("session_close", with_target({"session": session}, target))

    async def cancel(self, request_id: int) -> Result:
        """`cancel {id}` (cancelling a call's task does this for you)."""
        return await self._result("cancel", {"id": request_id})

    def session(self, name: Optional[str] = None) -> AsyncSession:
        """A named persistent shell; `async with agent.session() as s: await s.exec(...)`."""
        return AsyncSession(self, name or f"py-{uuid.uuid4().hex[:8]}")

    # -- lifetime -------------------------------------------------------------------------------

    async def aclose(self, timeout: float = 30.0) -> Optional[int]:
        """Ends the server by closing its input (calls in flight are answered first); kills it
        after `timeout` seconds. Returns its exit status."""
        if self._process is None:
            return None
        self._closed = True
        self._process.stdin.close()  # type: ignore[union-attr]  # what is buffered is sent first
        try:
            returncode = await asyncio.wait_for(self._process.wait(), timeout)
        except asyncio.TimeoutError:
            try:
                self._process.kill()
            except ProcessLookupError:
                pass
            returncode = await self._process.wait()
        await asyncio.wait({self._reader}, timeout=10)
        return returncode

    async def __aenter__(self) -> AsyncAgentExec:
        return await self.start()

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


class AsyncSession:
    """A persistent shell session of one server, by name (`AsyncAgentExec.session()`). Its calls
    run one at a time, in the order they are made (the server does not order calls on one session
    that are in flight together)."""

    def __init__(self, client: AsyncAgentExec, name: str):
        self.client, self.name = client, name
        self._turn: Optional[asyncio.Lock] = None  # made in the running loop (Python 3.9)

    async def exec(self, command: Command, *, cwd: Optional[PathLike] = None,
                   timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
                   on_progress: Optional[ProgressCallback] = None, **request_fields: Any) -> Result:
        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            return await self.client.exec(command, cwd=cwd, timeout=timeout, env=env,
                                          on_progress=on_progress, session=self.name, **request_fields)

    async def close(self, *, target: Optional[str] = None) -> Result:
        return await self.client.session_close(self.name, target=target)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self.close()
        except ServerExited:  # the server is gone, and its sessions with it
            pass

    def __repr__(self) -> str:
        return f"<AsyncSession {self.name!r}>"
