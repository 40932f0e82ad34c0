#!/usr/bin/env python3
"""Checks `agent-exec mcp` with the official MCP Python SDK as the client.

Usage:
    python mcp_sdk_client.py /path/to/agent-exec WORKDIR [--keep-going]

Starts `agent-exec mcp` (cwd=WORKDIR, a scratch directory owned by the caller)
through the SDK's stdio_client and ClientSession, runs the checks below in order
and prints `ok: <check>` for each one that passes. At the first failure it
prints which check failed, what was expected and what came, and exits 1
(`--keep-going` runs every check and reports all failures instead).

Every wait is bounded (anyio.fail_after), so the script cannot hang; nothing
asserts on how fast anything was.

Unless AGENT_EXEC_ARTIFACTS is already set, the server's artifacts are kept in
WORKDIR/artifacts so the run leaves nothing behind outside WORKDIR.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

CALL_TIMEOUT = 30.0  # bound on any single request
STARTUP_TIMEOUT = 30.0  # bound on spawning the server and the initialize handshake
OVERALL_TIMEOUT = 600.0  # bound on the whole run

EXPECTED_TOOLS = {
    "bash",
    "bash_output",
    "bash_input",
    "bash_kill",
    "read_artifact",
    "bash_jobs",
    "bash_session_close",
}
READ_ONLY_TOOLS = ("bash_output", "read_artifact", "bash_jobs")
ARTIFACT_ID = re.compile(r"artifact://([A-Za-z0-9_-]+)")


class CheckFailed(Exception):
    """A check's expectation did not hold."""


def fail(expected: str, got: Any) -> None:
    if not isinstance(got, str):
        got = repr(got)
    if len(got) > 2000:
        got = got[:2000] + f"... [{len(got)} chars]"
    raise CheckFailed(f"expected {expected}\n  got: {got}")


def expect(cond: bool, expected: str, got: Any) -> None:
    if not cond:
        fail(expected, got)


# --- helpers -----------------------------------------------------------------


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def describe(result: types.CallToolResult) -> str:
    return json.dumps(
        {"isError": result.is_error, "text": text_of(result), "structuredContent": result.structured_content},
        default=str,
    )


async def call(
    session: ClientSession,
    name: str,
    args: dict[str, Any],
    *,
    timeout: float = CALL_TIMEOUT,
    progress_callback: Any = None,
) -> types.CallToolResult:
    """tools/call with a bounded wait; protocol errors and SDK exceptions become check failures."""
    what = f"tools/call {name} {json.dumps(args)}"
    try:
        with anyio.fail_after(timeout):
            return await session.call_tool(name, args, progress_callback=progress_callback)
    except TimeoutError:
        fail(f"a result for {what} within {timeout:.0f}s", "no answer (timed out)")
    except MCPError as e:
        fail(f"a tool result for {what}", f"JSON-RPC error {e.code}: {e.message} (data={e.data!r})")
    except Exception as e:  # e.g. the SDK rejecting structuredContent against outputSchema
        fail(f"a tool result for {what}", f"{type(e).__name__}: {e}")
    raise AssertionError("unreachable")


async def call_ok(session: ClientSession, name: str, args: dict[str, Any], **kw: Any) -> types.CallToolResult:
    result = await call(session, name, args, **kw)
    expect(not result.is_error, f"{name} {json.dumps(args)} to succeed (isError false)", describe(result))
    return result


def expect_text(result: types.CallToolResult, needle: str, what: str) -> None:
    expect(needle in text_of(result), f"{what}: text containing {needle!r}", describe(result))


def schema_problems(node: Any, path: str = "inputSchema") -> list[str]:
    """`$schema` keys and list-valued `type`s anywhere in a schema."""
    problems: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$schema":
                problems.append(f"{path}.$schema")
            if key == "type" and isinstance(value, list):
                problems.append(f"{path}.type = {value!r}")
            problems += schema_problems(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            problems += schema_problems(value, f"{path}[{i}]")
    return problems


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    # The state follows the parenthesised command name, which may itself hold spaces.
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


# --- checks ------------------------------------------------------------------


async def check_initialize(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    expect(
        init.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS,
        f"protocolVersion one of {list(HANDSHAKE_PROTOCOL_VERSIONS)}",
        init.protocol_version,
    )
    expect(init.server_info.name == "agent-exec", 'serverInfo.name == "agent-exec"', init.server_info.name)


async def check_tools_list(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        listing = await session.list_tools()
    tools = {t.name: t for t in listing.tools}
    expect(set(tools) == EXPECTED_TOOLS and len(listing.tools) == len(EXPECTED_TOOLS),
           f"exactly the tools {sorted(EXPECTED_TOOLS)}", [t.name for t in listing.tools])
    for name, tool in tools.items():
        expect(bool(tool.title), f"{name}: a non-empty title", tool.title)
        schema = tool.input_schema
        expect(schema.get("type") == "object", f'{name}: inputSchema "type": "object"', schema)
        required = schema.get("required")
        expect(isinstance(required, list), f'{name}: inputSchema with a "required" list', schema)
        expect(bool(required) or name == "bash_jobs", f'{name}: a non-empty "required" list', schema)
        problems = schema_problems(schema)
        expect(not problems, f"{name}: no $schema key and no list-valued type in inputSchema", problems)
        out = tool.output_schema
        expect(isinstance(out, dict) and out.get("type") == "object", f'{name}: outputSchema "type": "object"', out)
    ann = tools["bash"].annotations
    expect(ann is not None and ann.destructive_hint is True and ann.open_world_hint is True,
           "bash: annotations destructiveHint true and openWorldHint true", ann)
    for name in READ_ONLY_TOOLS:
        ann = tools[name].annotations
        expect(ann is not None and ann.read_only_hint is True, f"{name}: annotations readOnlyHint true", ann)


async def check_bash_echo(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    result = await call_ok(session, "bash", {"command": "echo hello"})
    expect_text(result, "hello", "bash echo hello")
    sc = result.structured_content
    expect(isinstance(sc, dict) and sc.get("outcome") == "success" and sc.get("exit_code") == 0,
           'structuredContent with "outcome": "success" and "exit_code": 0', describe(result))


async def check_timeout_string(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    result = await call_ok(session, "bash", {"command": "echo x", "timeout": "30"})
    expect_text(result, "x", 'bash with "timeout": "30"')


async def check_bad_argument(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    result = await call(session, "bash", {"command": "echo x", "bogus": 1})
    expect(result.is_error, "isError true for an unknown argument", describe(result))
    expect_text(result, "bogus", "bash with an unknown argument")


async def check_exit_code(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    result = await call(session, "bash", {"command": "exit 3"})
    # The command ran and answered: not a failed call (frameworks retry or raise on isError).
    expect(not result.is_error, "isError false for exit 3", describe(result))
    sc = result.structured_content
    expect(isinstance(sc, dict) and sc.get("exit_code") == 3, 'structuredContent "exit_code": 3', describe(result))


async def check_artifact(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    result = await call_ok(session, "bash", {"command": "seq 1 200000"})
    match = ARTIFACT_ID.search(text_of(result))
    expect(match is not None, "text naming artifact://ID for output beyond the window", describe(result))
    artifact = match.group(1)

    head = await call_ok(session, "read_artifact", {"id": artifact, "offset": 0, "limit": 100})
    expect(text_of(head).startswith("1\n2\n"), 'read_artifact offset 0: text starting with "1\\n2\\n"', describe(head))

    hit = await call_ok(session, "read_artifact", {"id": artifact, "grep": "^199999$"})
    expect_text(hit, "199999", "read_artifact grep ^199999$")

    bad = await call(session, "read_artifact", {"id": artifact, "offset": -1})
    expect(bad.is_error, "isError true for offset -1", describe(bad))
    expect_text(bad, "offset", "read_artifact offset -1")


async def check_background_job(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    started = await call_ok(session, "bash", {
        "command": "read line; echo got:$line; sleep 1; echo done", "run_in_background": True})
    sc = started.structured_content
    job = sc.get("job_id") if isinstance(sc, dict) else None
    expect(isinstance(job, str) and job != "", 'structuredContent "job_id" (a string)', describe(started))

    jobs = await call_ok(session, "bash_jobs", {})
    listed = text_of(jobs) + json.dumps(jobs.structured_content)
    expect(job in listed, f"bash_jobs mentioning job {job!r}", describe(jobs))

    await call_ok(session, "bash_input", {"job_id": job, "data": "abc"})

    seen, running = "", True
    for _ in range(30):
        out = await call_ok(session, "bash_output", {"job_id": job, "wait_ms": 2000})
        seen += text_of(out)
        if isinstance(out.structured_content, dict):
            running = out.structured_content.get("running")
        if "done" in seen and running is False:
            break
    expect("done" in seen and running is False,
           'bash_output to show "done" and structuredContent "running": false within 30 polls',
           f"accumulated text {seen!r}, last running {running!r}")
    expect("got:abc" in seen, 'bash_output text containing "got:abc"', seen)

    everything = await call_ok(session, "bash_output", {"job_id": job, "mode": "all"})
    expect_text(everything, "got:abc", "bash_output mode all on the finished job")

    sleeper = await call_ok(session, "bash", {"command": "sleep 300", "run_in_background": True})
    sc = sleeper.structured_content
    second = sc.get("job_id") if isinstance(sc, dict) else None
    expect(isinstance(second, str) and second != "", 'structuredContent "job_id" for sleep 300', describe(sleeper))
    await call_ok(session, "bash_kill", {"job_id": second})


def yielded(result: types.CallToolResult, what: str) -> str:
    """The job id of a call still running after yield_ms, after checking its structuredContent."""
    sc = result.structured_content
    job = sc.get("job_id") if isinstance(sc, dict) else None
    expect(
        isinstance(sc, dict) and sc.get("outcome") == "running" and sc.get("running") is True
        and isinstance(job, str) and job != "",
        f'{what}: structuredContent "outcome": "running", "running": true and a string "job_id"',
        describe(result),
    )
    timeout_ms = sc.get("timeout_ms")
    expect(isinstance(timeout_ms, int) and timeout_ms > 0, f'{what}: structuredContent "timeout_ms"', describe(result))
    return job


async def check_yield(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    # A call still running after yield_ms answers with its output so far and goes on as a job.
    args: dict[str, Any] = {"command": "echo first; sleep 2; echo second", "yield_ms": 500}
    result = await call_ok(session, "bash", args)
    job = yielded(result, f"bash {json.dumps(args)}")
    expect_text(result, "first", "the yielded call")
    expect_text(result, "[Still running after", "the yielded call")
    expect_text(result, "bash_output", "the yielded call")
    seen, last = "", result
    for _ in range(10):
        last = await call_ok(session, "bash_output", {"job_id": job, "wait_ms": 10000})
        seen += text_of(last)
        if isinstance(last.structured_content, dict) and last.structured_content.get("running") is False:
            break
    sc = last.structured_content if isinstance(last.structured_content, dict) else {}
    expect(sc.get("running") is False, 'bash_output structuredContent "running": false within 10 reads', describe(last))
    expect("second" in seen, 'the text bash_output read to contain "second"', seen)
    expect(sc.get("exit_code") == 0, 'the last bash_output structuredContent "exit_code": 0', describe(last))

    # A pty REPL yields once it waits at its prompt; bash_input types into it and reads the reply.
    args = {"command": "python3 -q", "pty": True, "yield_ms": 5000}
    result = await call_ok(session, "bash", args)
    job = yielded(result, f"bash {json.dumps(args)}")
    try:
        expect_text(result, "Waiting for input", "the yielded python REPL")
        args = {"job_id": job, "data": "print(6*7)", "yield_ms": 3000}
        answer = await call_ok(session, "bash_input", args)
        expect(re.match(r"Sent \d+ bytes to job \S+\.\n\[job \S+ running for ", text_of(answer)) is not None,
               f'bash_input {json.dumps(args)}: text starting "Sent N bytes to job N." then "[job N running for"',
               describe(answer))
        expect_text(answer, "left of its", f"bash_input {json.dumps(args)}")
        expect_text(answer, "42", f"bash_input {json.dumps(args)}")
    finally:
        killed = await call_ok(session, "bash_kill", {"job_id": job})
    sc = killed.structured_content
    expect(isinstance(sc, dict) and sc.get("running") is False, 'bash_kill structuredContent "running": false',
           describe(killed))
    # A read of a killed job reports how it ended (isError may be true: it was ended).
    after = await call(session, "bash_output", {"job_id": job})
    sc = after.structured_content
    expect(isinstance(sc, dict) and sc.get("running") is False,
           'bash_output after bash_kill: structuredContent "running": false', describe(after))

    # vim in pipe mode (stdin /dev/null, no terminal) yields early, as stuck. HOME in the work
    # dir: vim, killed, writes its .viminfo there.
    (workdir / "notes.txt").write_text("hello\n")
    args = {"command": "vim notes.txt", "yield_ms": 8000, "env": {"HOME": str(workdir)}}
    result = await call_ok(session, "bash", args)
    job = yielded(result, f"bash {json.dumps(args)}")
    try:
        expect_text(result, "waits for keys from a terminal", "the yielded vim")
        expect_text(result, "vim", "the yielded vim")
    finally:
        await call_ok(session, "bash_kill", {"job_id": job})

    # yield_ms 0 runs to the end.
    args = {"command": "sleep 1; echo done", "yield_ms": 0}
    result = await call_ok(session, "bash", args)
    sc = result.structured_content
    expect(isinstance(sc, dict) and sc.get("outcome") == "success",
           f'bash {json.dumps(args)}: structuredContent "outcome": "success"', describe(result))
    expect_text(result, "done", f"bash {json.dumps(args)}")


async def check_session(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    await call_ok(session, "bash", {"command": "cd /tmp && export ZZ=7", "session": "s1"})
    result = await call_ok(session, "bash", {"command": "echo $ZZ; pwd", "session": "s1"})
    expect_text(result, "7", "session s1 keeps the export")
    expect_text(result, "/tmp", "session s1 keeps the cd")
    await call_ok(session, "bash_session_close", {"session": "s1"})


async def check_progress(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    command = "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.5; done"
    await call_ok(session, "bash", {"command": command}, progress_callback=on_progress)
    # The SDK runs progress callbacks as spawned tasks: give the ones already received a turn.
    await anyio.sleep(0.5)

    expect(len(updates) >= 1, "at least one progress notification", updates)
    values = [p for p, _, _ in updates]
    expect(all(b > a for a, b in zip(values, values[1:])), "strictly increasing progress values", values)
    expect(any(m and "line" in m for _, _, m in updates), 'a progress message containing "line"', updates)

    # A command that prints nothing still gets a message to show (the first after a second).
    # It prints nothing at all: an update sent as a last line is printed would carry that line.
    updates.clear()
    await call_ok(session, "bash", {"command": "sleep 2.5"}, progress_callback=on_progress)
    await anyio.sleep(0.5)
    expect(len(updates) >= 1, "a progress notification for a quiet command", updates)
    expect(
        all(m and "no output yet" in m for _, _, m in updates),
        'every message of a quiet command says "no output yet"',
        updates,
    )


async def check_cancellation(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    pid_file = workdir / "pid.txt"
    pid_file.unlink(missing_ok=True)
    command = "sh -c 'echo $$ > pid.txt; exec sleep 300'"
    finished: list[Any] = []

    async def run_call() -> None:
        try:
            finished.append(await session.call_tool("bash", {"command": command}))
        except Exception as e:  # noqa: BLE001 - reported below
            finished.append(e)

    pid = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_call)
        with anyio.move_on_after(CALL_TIMEOUT):
            while pid is None and not finished:
                text = pid_file.read_text().strip() if pid_file.exists() else ""
                pid = int(text) if text.isdigit() else None
                if pid is None:
                    await anyio.sleep(0.1)
        # Cancelling the caller's scope is how the SDK cancels: it then sends
        # notifications/cancelled {"requestId": <id>, "reason": "caller cancelled"}.
        tg.cancel_scope.cancel()
    expect(pid is not None, f"{pid_file} to hold the command's pid while the call is in flight",
           f"call ended first: {finished[0]!r}" if finished else "no pid")
    expect(not finished, "the call to be still in flight when cancelled", finished)

    with anyio.move_on_after(20):
        while not process_gone(pid):
            await anyio.sleep(0.1)
    expect(process_gone(pid), f"pid {pid} gone within 20s of the cancellation", "still running")

    result = await call_ok(session, "bash", {"command": "echo after-cancel"})
    expect_text(result, "after-cancel", "bash after a cancelled call")


async def check_ping(session: ClientSession, init: types.InitializeResult, workdir: Path) -> None:
    try:
        with anyio.fail_after(CALL_TIMEOUT):
            await session.send_ping()
    except TimeoutError:
        fail("a ping answer", "no answer (timed out)")
    except MCPError as e:
        fail("a ping answer", f"JSON-RPC error {e.code}: {e.message}")


Check = Callable[[ClientSession, types.InitializeResult, Path], Awaitable[None]]
CHECKS: list[tuple[str, Check]] = [
    ("initialize", check_initialize),
    ("tools/list", check_tools_list),
    ("bash echo", check_bash_echo),
    ("bash timeout as a numeric string", check_timeout_string),
    ("bash bad argument is a tool error", check_bad_argument),
    ("bash exit 3", check_exit_code),
    ("artifact spill and read_artifact", check_artifact),
    ("background job", check_background_job),
    ("yield", check_yield),
    ("session", check_session),
    ("progress", check_progress),
    ("cancellation", check_cancellation),
    ("ping", check_ping),
]


# --- driver ------------------------------------------------------------------


async def run_checks(binary: str, workdir: Path, keep_going: bool) -> list[str]:
    """Runs the checks; returns the failure reports (empty when all passed)."""
    env = dict(os.environ)
    env.setdefault("AGENT_EXEC_ARTIFACTS", str(workdir / "artifacts"))
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=workdir, env=env)
    failures: list[str] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                init = await session.initialize()
        except (TimeoutError, MCPError, RuntimeError) as e:
            return [f"FAILED: initialize\n  expected a handshake within {STARTUP_TIMEOUT:.0f}s\n  got: {e!r}"]
        for name, check in CHECKS:
            try:
                await check(session, init, workdir)
            except CheckFailed as e:
                failures.append(f"FAILED: {name}\n  {e}")
            except Exception as e:  # the SDK or the transport raised where no check expected it
                failures.append(f"FAILED: {name}\n  unexpected {type(e).__name__}: {e}")
            else:
                print(f"ok: {name}", flush=True)
                continue
            print(failures[-1], file=sys.stderr, flush=True)
            if not keep_going:
                break
    return failures


async def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--keep-going"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, workdir = os.path.abspath(args[0]), Path(args[1]).resolve()
    if not os.access(binary, os.X_OK):
        print(f"not an executable: {binary}", file=sys.stderr)
        return 2
    workdir.mkdir(parents=True, exist_ok=True)
    with anyio.move_on_after(OVERALL_TIMEOUT) as overall:
        failures = await run_checks(binary, workdir, "--keep-going" in sys.argv[1:])
    if overall.cancelled_caught:
        print(f"FAILED: the run did not finish within {OVERALL_TIMEOUT:.0f}s", file=sys.stderr)
        return 1
    if failures:
        print(f"{len(failures)} MCP SDK check(s) failed", file=sys.stderr)
        return 1
    print("all MCP SDK checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
