"""What the sync and async clients share: errors, result types, request building, message parsing."""

from __future__ import annotations

import json
import logging
import os
import signal
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, TypedDict, Union

logger = logging.getLogger("agent_exec")

# ---------------------------------------------------------------------------------------------
# Errors


class AgentExecError(Exception):
    """Base class of this package's errors (besides `AgentExecNotFound`, a `FileNotFoundError`)."""


class RpcError(AgentExecError):
    """A JSON-RPC `error` response: the server refused the call itself (unknown method, bad params).

    A command that fails is not an RpcError: it is a result whose `details.outcome` says how it ended.
    """

    def __init__(self, code: int, message: str, data: Any = None, method: Optional[str] = None):
        super().__init__(f"{method + ': ' if method else ''}JSON-RPC error {code}: {message}")
        self.code, self.message, self.data, self.method = code, message, data, method


class ServerExited(AgentExecError, ConnectionError):
    """`agent-exec serve` is gone (it died, or the client was closed), so the call has no answer."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.returncode, self.stderr = returncode, stderr


def _describe_status(returncode: Optional[int]) -> str:
    if returncode is None:
        return "closed its output"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


class ExitInfo:
    """How the server ended, recorded once; each waiting call gets its own `ServerExited` from it
    (one exception instance raised in several threads would share and garble its traceback)."""

    def __init__(self, returncode: Optional[int], stderr_tail: str, closed: bool = False,
                 reason: Optional[str] = None):
        self.returncode, self.stderr_tail, self.closed = returncode, stderr_tail, closed
        self.reason = reason  # set when the client ended the server: its answers could not be read

    def error(self, method: str) -> ServerExited:
        if self.closed:
            text = f"cannot call {method}: this client was closed"
        elif self.reason:
            text = (f"no answer to {method}: reading agent-exec serve's output failed ({self.reason}), "
                    "so the client ended the server")
        else:
            text = f"agent-exec serve {_describe_status(self.returncode)} before answering {method}"
            if self.stderr_tail.strip():
                text += "; its stderr ended with:\n" + self.stderr_tail.rstrip()
        return ServerExited(text, self.returncode, self.stderr_tail)


# ---------------------------------------------------------------------------------------------
# Result types (docs/contract.md §3 and §7). Results are plain dicts; these only describe them.

Outcome = Literal["success", "exit_nonzero", "signaled", "timeout", "cancelled", "denied",
                  "needs_approval", "invalid_request", "spawn_failed", "running"]


class TextContent(TypedDict):
    type: str
    text: str


class Truncation(TypedDict, total=False):
    direction: Literal["tail", "head", "both", "smart"]
    truncated_by: Literal["bytes", "lines"]
    total_bytes: int
    total_lines: int
    output_bytes: int
    output_lines: int
    shown_range: List[int]
    shown_ranges: List[List[int]]
    salient_lines: int
    artifact_id: Optional[str]
    artifact_capped: bool  # the artifact stopped at its cap before the output's end (absent: false)


class JobInfo(TypedDict, total=False):
    job_id: str
    command: str
    status: str
    exit_code: Optional[int]
    elapsed_ms: int
    stdout_bytes: int
    stderr_bytes: int


class Details(TypedDict, total=False):
    """`details` of a result. Every method answers with this shape; some fields are method-specific
    (`running`, `timeout_ms`: job methods and yielded calls; `jobs`: job_list; `next_offset`:
    artifact_read). Fields the server adds later are in the dict too."""
    outcome: Outcome
    exit_code: Optional[int]
    signal: Optional[int]
    success: bool
    timed_out: bool
    cancelled: bool
    duration_ms: int
    cwd: str
    stream_kind: Literal["plain", "diff"]
    stdout_bytes: int
    stderr_bytes: int
    truncation: Optional[Truncation]
    stderr_truncation: Optional[Truncation]
    folded: Dict[str, Any]
    job_id: Optional[str]
    session: Optional[str]
    policy: Optional[Dict[str, Any]]
    sandbox: Optional[Dict[str, Any]]
    target: Optional[str]
    limit_hit: Optional[Any]
    processes_stopped: int
    warnings: List[str]
    running: bool
    timeout_ms: int
    jobs: List[JobInfo]
    next_offset: int


class Result(TypedDict):
    """The answer of every method: model-ready text in `content[0].text`, structured `details`."""
    content: List[TextContent]
    is_error: bool
    details: Details


class Progress(TypedDict):
    """Params of an `exec/progress` notification (sent for calls made with an `on_progress`)."""
    id: int
    elapsed_ms: int
    stdout_bytes: int
    stderr_bytes: int
    lines: int
    tail: str


ProgressCallback = Callable[[Progress], Any]


def result_text(result: Mapping[str, Any]) -> str:
    """The text of a result (`content[0].text`; the texts joined if there were several)."""
    return "".join(part.get("text", "") for part in result.get("content", []))


# ---------------------------------------------------------------------------------------------
# Requests


def exec_params(command: Union[str, Sequence[str]], cwd: Optional[Union[str, "os.PathLike[str]"]],
                timeout: Optional[float], env: Optional[Mapping[str, str]], progress: bool,
                fields: Dict[str, Any]) -> Dict[str, Any]:
    """The params of an `exec` request. A string is a shell command; a list is [program, *args],
    run with no shell (`executable` and `argv`)."""
    if isinstance(command, str):
        params: Dict[str, Any] = {"command": command}
    else:
        words = list(command)
        if not words:
            raise ValueError("command: an empty argument list")
        params = {"executable": words[0], "argv": words[1:]}
    if cwd is not None:
        params["cwd"] = os.fspath(cwd)
    if timeout is not None:
        # The server takes whole seconds (`timeout`) or milliseconds (`timeout_ms`).
        if float(timeout).is_integer():
            params["timeout"] = int(timeout)
        else:
            # At least 1: 0 would mean "not given" (the default timeout), not the shortest.
            params["timeout_ms"] = max(1, round(timeout * 1000))
    if env is not None:
        params["env"] = dict(env)
    if progress:
        params["progress"] = True
    params.update(fields)  # the caller's explicit fields win (session, head, tail, yield_ms, ...)
    return params


def with_target(params: Dict[str, Any], target: Optional[str]) -> Dict[str, Any]:
    """`params`, with `target` (contract §9: the remote target whose job, artifact or session is
    meant) only when given: without it the server uses the operator's `--target`."""
    if target is not None:
        params["target"] = target
    return params


def server_env(env: Optional[Mapping[str, Optional[str]]]) -> Optional[Dict[str, str]]:
    """The server's environment: `env` merged over the caller's (os.environ, read now), a None
    value removing a variable; None (no `env`) inherits it as it is. Merged, not replaced: the
    server needs PATH, HOME and the rest to run commands as the caller would."""
    if env is None:
        return None
    return {k: v for k, v in {**os.environ, **env}.items() if v is not None}


def encode(request_id: int, method: str, params: Optional[Mapping[str, Any]]) -> bytes:
    # One message per line: json.dumps escapes newlines inside strings, so the line is whole.
    message = {"jsonrpc": "2.0", "id": request_id, "method": method,
               "params": dict(params) if params is not None else {}}
    return json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"


def decode(line: bytes) -> Optional[Dict[str, Any]]:
    try:
        message = json.loads(line)
    except ValueError:
        logger.warning("agent-exec serve wrote a line that is not JSON: %r", line[:200])
        return None
    if not isinstance(message, dict):  # a batch answer; this client never sends batches
        logger.warning("agent-exec serve wrote an unexpected message: %r", line[:200])
        return None
    return message


def deliver_line(line: bytes, deliver: Callable[[Dict[str, Any]], None]) -> None:
    """Hands one line of the server to `deliver`, as a message; the reader of either client goes
    on whatever the line holds."""
    message = decode(line)
    if message is None:
        return
    try:
        deliver(message)
    except Exception:  # one odd message (an id of the wrong type) must not end the reader
        logger.exception("agent-exec serve: cannot handle %r", line[:200])


def response_value(message: Mapping[str, Any], method: str) -> Any:
    """The `result` of a response, or raises its `error` as an RpcError."""
    if "error" in message:
        error = message["error"] or {}
        raise RpcError(error.get("code", 0), error.get("message", ""), error.get("data"), method)
    return message.get("result")


class StderrTail:
    """Keeps the last few KiB of the server's stderr (for ServerExited) and logs each line on the
    `agent_exec` logger at WARNING, so the server's diagnostics stay visible by default (Python's
    last-resort handler prints warnings) without mixing into the caller's own stderr uncontrolled."""

    LIMIT = 4096

    def __init__(self) -> None:
        self._tail = bytearray()
        self._partial = bytearray()

    def feed(self, chunk: bytes) -> None:
        self._tail += chunk
        del self._tail[:-self.LIMIT]
        self._partial += chunk
        *lines, rest = self._partial.split(b"\n")
        self._partial = bytearray(rest[-self.LIMIT:])
        for line in lines:
            if line.strip():
                logger.warning("agent-exec serve: %s", line.decode("utf-8", "replace"))

    def text(self) -> str:
        return self._tail.decode("utf-8", "replace")
