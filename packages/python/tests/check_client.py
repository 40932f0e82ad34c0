"""Checks the `agent_exec` package against a real `agent-exec serve`, with the sync and the async client.

    python3 check_client.py [path/to/agent-exec]

Without an argument the binary is found as the package finds it (`find_binary`: $AGENT_EXEC_BIN, the
scripts dir of this interpreter, PATH), which is how the installed wheel is checked. Prints one line
per check; exits non-zero with a message at the first failure. Every wait is bounded: a watchdog ends
the program if one check takes longer than its budget, so a hang is a failure, never a stuck run.
"""

import asyncio
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import agent_exec.aio
from agent_exec import (AgentExec, AgentExecNotFound, RpcError, ServerExited, find_binary,
                        result_text)
from agent_exec.aio import AsyncAgentExec

CHECK_BUDGET = 15.0  # seconds one check may take, start-up and shut-down included


class Watchdog:
    """Ends the process when the current check overruns: a hang must fail, not block CI."""

    def __init__(self):
        self._timer = None
        self.name = "start-up"
        self.workdir = None  # removed before the process ends, a hang included

    def arm(self, name, seconds=CHECK_BUDGET):
        self.disarm()
        self.name = name
        self._timer = threading.Timer(seconds, self._fire, args=(name, seconds))
        self._timer.daemon = True
        self._timer.start()

    def disarm(self):
        if self._timer is not None:
            self._timer.cancel()

    def _fire(self, name, seconds):
        print(f"FAILED: {name}: did not finish within {seconds:.0f} s", flush=True)
        self.fail()

    def fail(self):
        """Ends the process with status 1 at once (os._exit: no waiting on a server that may still
        run a command, or on a worker thread stuck in a call), the workdir removed first."""
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        os._exit(1)


watchdog = Watchdog()


def expect(what, condition, detail=""):
    if not condition:
        raise AssertionError(f"{what}{': ' + str(detail) if detail else ''}")


def ok(kind, what):
    print(f"ok  {kind:5} {what}", flush=True)


def is_our_sleep(pid):
    """Whether process `pid` (a command's `$$`) runs `sleep` here. Not so once it has ended (a
    zombie has no command line either), nor when the sandbox gives commands a PID namespace of
    their own: then only the answer can be checked, not the process."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().startswith(b"sleep\0")
    except OSError:
        return False


def wait_until(condition, within):
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_for_file(path, within):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read().strip()
            if text:
                return text
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{path} did not appear within {within} s")


PROGRESS_COMMAND = "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.25; done"
JOB_COMMAND = "for i in 1 2 3; do echo line$i; sleep 0.1; done"


# -- discovery (no server) --------------------------------------------------------------------

def check_discovery(binary, workdir):
    try:
        find_binary("/nonexistent/agent-exec")
        raise AssertionError("a binary= that does not exist was accepted")
    except AgentExecNotFound as e:
        expect("AgentExecNotFound is a FileNotFoundError", isinstance(e, FileNotFoundError))
    saved = os.environ.get("AGENT_EXEC_BIN")
    os.environ["AGENT_EXEC_BIN"] = "/nonexistent/agent-exec"
    try:
        find_binary()
        raise AssertionError("an AGENT_EXEC_BIN that does not exist was accepted")
    except AgentExecNotFound as e:
        expect("the error names AGENT_EXEC_BIN", "AGENT_EXEC_BIN" in str(e), e)
    finally:
        if saved is None:
            del os.environ["AGENT_EXEC_BIN"]
        else:
            os.environ["AGENT_EXEC_BIN"] = saved
    found = find_binary(binary)
    ok("find", f"binary: {found}" + ("" if binary else " (found by discovery)"))
    # An installation's own binary comes from its metadata (RECORD), and only from the installation
    # this package was imported from: a fake one made here, first on sys.path, with and without
    # this module in its RECORD.
    site, bin_dir = os.path.join(workdir, "site"), os.path.join(workdir, "bin")
    os.makedirs(os.path.join(site, "agent_exec-0.0.0.dist-info"))
    os.makedirs(bin_dir)
    os.symlink(os.path.dirname(os.path.abspath(agent_exec.__file__)), os.path.join(site, "agent_exec"))
    os.symlink(found, os.path.join(bin_dir, "agent-exec"))
    with open(os.path.join(site, "agent_exec-0.0.0.dist-info", "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: agent-exec\nVersion: 0.0.0\n")
    env = {k: v for k, v in os.environ.items() if k != "AGENT_EXEC_BIN"}
    env["PYTHONPATH"] = site
    for own in (True, False):
        with open(os.path.join(site, "agent_exec-0.0.0.dist-info", "RECORD"), "w") as f:
            f.write(("agent_exec/_binary.py,,\n" if own else "") + "../bin/agent-exec,,\n")
        run = subprocess.run([sys.executable, "-c", "import agent_exec; print(agent_exec.find_binary())"],
                             env=env, capture_output=True, text=True, timeout=10)
        picked = run.stdout.strip() == os.path.join(bin_dir, "agent-exec")
        expect("the installation's own binary" if own else "another installation's binary not taken",
               picked == own, (run.returncode, run.stdout[-300:], run.stderr[-500:]))
    ok("find", "the binary listed in this installation's RECORD wins; another installation's does not")
    # python -m agent_exec runs the binary itself, found the same way.
    env = dict(os.environ, **({"AGENT_EXEC_BIN": found} if binary else {}))
    run = subprocess.run([sys.executable, "-m", "agent_exec", "--version"], env=env,
                         capture_output=True, text=True, timeout=10)
    expect("python -m agent_exec --version", run.returncode == 0 and run.stdout.startswith("agent-exec"),
           (run.returncode, run.stdout[:200], run.stderr[:500]))
    ok("main", f"python -m agent_exec --version: {run.stdout.splitlines()[0]}")
    return found


# -- the sync client --------------------------------------------------------------------------

def check_sync(binary, workdir):
    with AgentExec(binary, cwd=workdir) as agent:
        watchdog.arm("sync: one exec")
        result = agent.exec("echo hi")
        details = result["details"]
        expect("echo hi", "hi" in result_text(result) and details["exit_code"] == 0
               and details["outcome"] == "success" and not result["is_error"], result)
        ok("sync", "exec: echo hi -> 'hi', exit code 0")

        watchdog.arm("sync: argv exec")
        result = agent.exec(["printf", "%s-", "a b", "c"])
        expect("argv exec", result_text(result) == "a b-c-", result)
        ok("sync", "exec of [program, *args] without a shell")

        watchdog.arm("sync: non-zero exit")
        details = agent.exec("exit 3")["details"]
        expect("exit 3", (details["outcome"], details["exit_code"]) == ("exit_nonzero", 3), details)
        ok("sync", "exit 3 -> outcome exit_nonzero, exit code 3")

        watchdog.arm("sync: concurrent calls")
        finished = []

        def run(command, name):
            result = agent.exec(command)
            finished.append(name)
            return result

        with ThreadPoolExecutor(4) as pool:
            slow = pool.submit(run, "sleep 1.5; echo slow", "slow")
            time.sleep(0.1)  # the slow one is in flight first
            fast = pool.submit(run, "echo fast", "fast")
            expect("fast call", result_text(fast.result(10)) == "fast\n")
            expect("slow call", result_text(slow.result(10)) == "slow\n")
        expect("answers in the order they finished", finished == ["fast", "slow"], finished)
        ok("sync", "two concurrent calls: the fast one answered while the slow one ran")

        watchdog.arm("sync: session")
        with agent.session() as shell:
            shell.exec(f"cd {workdir} && mkdir -p sub && cd sub && X=42")
            text = result_text(shell.exec("echo $X; pwd"))
            expect("session state", text == f"42\n{workdir}/sub\n", repr(text))
        ok("sync", f"session {shell.name}: a variable and the cwd persist between calls")

        watchdog.arm("sync: background job")
        started = agent.exec(JOB_COMMAND, run_in_background=True)
        job_id = started["details"]["job_id"]
        expect("job id", job_id is not None, started)
        output, deadline = "", time.monotonic() + 10
        while True:
            read = agent.job_output(job_id, wait_ms=1000)
            output += result_text(read).partition("\n")[2].replace("(no new output)", "")
            if not read["details"].get("running") or time.monotonic() > deadline:
                break
        expect("job ended", read["details"].get("running") is False, read)
        expect("job exit code", read["details"]["exit_code"] == 0, read)
        expect("job output", output == "line1\nline2\nline3\n", repr(output))
        ok("sync", f"background job {job_id}: started, output read, exited with code 0")

        watchdog.arm("sync: progress")
        updates = []
        result = agent.exec(PROGRESS_COMMAND, on_progress=updates.append)
        expect("progress command", result["details"]["outcome"] == "success", result)
        expect("progress notifications", len(updates) >= 2, updates)
        expect("progress shape", all({"elapsed_ms", "stdout_bytes", "lines", "tail"} <= set(u)
                                     for u in updates), updates)
        expect("progress tail", "line" in updates[-1]["tail"], updates[-1])
        ok("sync", f"progress: {len(updates)} exec/progress notifications over 1.5 s")

        watchdog.arm("sync: cancel")
        pid_file = os.path.join(workdir, "sync.pid")
        call = agent.submit_exec(f"echo $$ > {pid_file}; exec sleep 30")
        pid = int(wait_for_file(pid_file, 5))
        visible = wait_until(lambda: is_our_sleep(pid), 2)
        started_at = time.monotonic()
        expect("cancel sent", call.cancel())
        result = call.result(timeout=5)
        took = time.monotonic() - started_at
        details = result["details"]
        expect("cancelled outcome", details["outcome"] == "cancelled" and details["cancelled"], result)
        expect("cancelled text", result_text(result).startswith("[Command cancelled]"), result)
        expect("cancel promptly", took < 4, f"{took:.1f} s")
        if visible:
            expect("command ended", wait_until(lambda: not is_our_sleep(pid), 3),
                   f"sleep (pid {pid}) still runs")
        ok("sync", f"cancel of sleep 30: outcome cancelled {took * 1000:.0f} ms after the cancel"
           + (", the command is gone" if visible else " (its process is not visible here)"))

        watchdog.arm("sync: timeout of a wait")
        call = agent.submit_exec("sleep 30")
        try:
            call.result(timeout=0.2)
            raise AssertionError("result(timeout=0.2) of sleep 30 returned")
        except TimeoutError:
            pass
        call.cancel()
        expect("cancelled after a timed-out wait", call.result(5)["details"]["outcome"] == "cancelled")
        ok("sync", "Call.result(timeout) raises TimeoutError; the call can still be cancelled")

        watchdog.arm("sync: JSON-RPC errors")
        try:
            agent.call("no_such_method", {})
            raise AssertionError("an unknown method was answered")
        except RpcError as e:
            expect("unknown method code", e.code == -32601, e)
        try:
            agent.call("exec", {"command": "true", "bogus": 1})
            raise AssertionError("an unknown field was accepted")
        except RpcError as e:
            expect("bad params code", e.code == -32602 and "bogus" in e.message, e)
        ok("sync", "JSON-RPC errors: unknown method -> RpcError -32601, unknown field -> -32602")

        watchdog.arm("sync: target")
        # No target is allowed here: the refusal shows that the field reached the server.
        refused = agent.job_list(target="ssh://nowhere")
        expect("target refused", refused["details"]["outcome"] == "invalid_request"
               and "not allowed" in result_text(refused), refused)
        ok("sync", "job_list(target=...) sends the target (refused: none is allowed here)")

    watchdog.arm("sync: server death")
    agent = AgentExec(binary, cwd=workdir)
    try:
        call = agent.submit_exec("sleep 30")
        time.sleep(0.3)
        os.kill(agent.pid, signal.SIGKILL)
        started_at = time.monotonic()
        try:
            call.result(timeout=5)
            raise AssertionError("a call outlived its server")
        except ServerExited as e:
            expect("status in the error", e.returncode == -signal.SIGKILL and "SIGKILL" in str(e), e)
        expect("prompt", time.monotonic() - started_at < 3)
        try:
            agent.exec("echo later")
            raise AssertionError("a call after the server died was answered")
        except ServerExited:
            pass
    finally:
        agent.close(timeout=5)
    ok("sync", "server killed: the pending call and a later one raise ServerExited (SIGKILL)")

    watchdog.arm("sync: env merged")
    os.environ["AGENT_EXEC_CHECK_INHERITED"] = "inherited"
    try:
        with AgentExec(binary, cwd=workdir, env={"AGENT_EXEC_CHECK_ADDED": "added"}) as agent:
            text = result_text(agent.exec('echo "$AGENT_EXEC_CHECK_INHERITED $AGENT_EXEC_CHECK_ADDED"'))
    finally:
        del os.environ["AGENT_EXEC_CHECK_INHERITED"]
    expect("env merged over the caller's", text == "inherited added\n", repr(text))
    ok("sync", "env= is merged over the caller's environment")


# -- the async client -------------------------------------------------------------------------

async def check_async(binary, workdir):
    async with AsyncAgentExec(binary, cwd=workdir) as agent:
        watchdog.arm("async: one exec")
        result = await agent.exec("echo hi")
        details = result["details"]
        expect("echo hi", "hi" in result_text(result) and details["exit_code"] == 0
               and details["outcome"] == "success", result)
        ok("async", "exec: echo hi -> 'hi', exit code 0")

        watchdog.arm("async: non-zero exit")
        details = (await agent.exec("exit 3"))["details"]
        expect("exit 3", (details["outcome"], details["exit_code"]) == ("exit_nonzero", 3), details)
        ok("async", "exit 3 -> outcome exit_nonzero, exit code 3")

        watchdog.arm("async: concurrent calls")
        finished = []

        async def run(command, name):
            result = await agent.exec(command)
            finished.append(name)
            return result

        slow, fast = await asyncio.gather(run("sleep 1.5; echo slow", "slow"), run("echo fast", "fast"))
        expect("results", (result_text(slow), result_text(fast)) == ("slow\n", "fast\n"))
        expect("answers in the order they finished", finished == ["fast", "slow"], finished)
        ok("async", "two concurrent calls: the fast one answered while the slow one ran")

        watchdog.arm("async: session")
        async with agent.session() as shell:
            await shell.exec(f"cd {workdir} && mkdir -p sub2 && cd sub2 && Y=7")
            text = result_text(await shell.exec("echo $Y; pwd"))
            expect("session state", text == f"7\n{workdir}/sub2\n", repr(text))
            # Calls made together on one session run in the order they were made.
            *_, last = await asyncio.gather(shell.exec("Z=a; sleep 0.3; Z=${Z}b"),
                                            shell.exec("Z=${Z}c"), shell.exec("echo $Z"))
            expect("session order", result_text(last) == "abc\n", result_text(last))
        ok("async", f"session {shell.name}: state persists; concurrent calls on it run in order")

        watchdog.arm("async: background job")
        started = await agent.exec(JOB_COMMAND, run_in_background=True)
        job_id = started["details"]["job_id"]
        output, deadline = "", time.monotonic() + 10
        while True:
            read = await agent.job_output(job_id, wait_ms=1000)
            output += result_text(read).partition("\n")[2].replace("(no new output)", "")
            if not read["details"].get("running") or time.monotonic() > deadline:
                break
        expect("job ended", read["details"].get("running") is False
               and read["details"]["exit_code"] == 0, read)
        expect("job output", output == "line1\nline2\nline3\n", repr(output))
        ok("async", f"background job {job_id}: started, output read, exited with code 0")

        watchdog.arm("async: progress")
        plain, awaited = [], []

        async def async_callback(update):
            awaited.append(update)

        result, _ = await asyncio.gather(agent.exec(PROGRESS_COMMAND, on_progress=plain.append),
                                         agent.exec(PROGRESS_COMMAND, on_progress=async_callback))
        await asyncio.sleep(0.05)  # let the last async callback's task run
        expect("progress notifications", len(plain) >= 2 and len(awaited) >= 2, (plain, awaited))
        expect("each call gets its own", {u["id"] for u in plain}.isdisjoint({u["id"] for u in awaited}))
        ok("async", f"progress: {len(plain)} and {len(awaited)} notifications to a function and a coroutine")

        watchdog.arm("async: cancel")
        pid_file = os.path.join(workdir, "async.pid")
        task = asyncio.ensure_future(agent.exec(f"echo $$ > {pid_file}; exec sleep 30"))
        deadline = time.monotonic() + 5
        while not os.path.exists(pid_file) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        pid = int(wait_for_file(pid_file, 1))
        visible = await asyncio.get_running_loop().run_in_executor(
            None, wait_until, lambda: is_our_sleep(pid), 2)
        started_at = time.monotonic()
        task.cancel()
        try:
            await asyncio.wait_for(task, 2)
            raise AssertionError("a cancelled task returned")
        except asyncio.CancelledError:
            pass
        if visible:  # the cancel reached the server: the command ends there too
            expect("command ended on the server", await asyncio.get_running_loop().run_in_executor(
                None, wait_until, lambda: not is_our_sleep(pid), 4), f"sleep (pid {pid}) still runs")
        took = time.monotonic() - started_at
        # asyncio.wait_for's timeout cancels the same way.
        try:
            await asyncio.wait_for(agent.exec("sleep 30"), 0.3)
            raise AssertionError("sleep 30 finished within 0.3 s")
        except asyncio.TimeoutError:
            pass
        listed = await agent.exec("echo still serving")
        expect("server still serves", result_text(listed) == "still serving\n", listed)
        ok("async", "cancel of sleep 30: CancelledError" + (f", the command gone {took * 1000:.0f} ms after"
                                                           if visible else " (its process is not visible here)"))

        watchdog.arm("async: JSON-RPC error")
        try:
            await agent.call("no_such_method", {})
            raise AssertionError("an unknown method was answered")
        except RpcError as e:
            expect("unknown method code", e.code == -32601, e)
        ok("async", "JSON-RPC error: unknown method -> RpcError -32601")

    watchdog.arm("async: server death")
    agent = AsyncAgentExec(binary, cwd=workdir)
    await agent.start()
    try:
        pending = asyncio.ensure_future(agent.exec("sleep 30"))
        await asyncio.sleep(0.3)
        os.kill(agent.pid, signal.SIGKILL)
        try:
            await asyncio.wait_for(pending, 5)
            raise AssertionError("a call outlived its server")
        except ServerExited as e:
            expect("status in the error", e.returncode == -signal.SIGKILL, e)
        try:
            await agent.exec("echo later")
            raise AssertionError("a call after the server died was answered")
        except ServerExited:
            pass
    finally:
        await agent.aclose(timeout=5)
    ok("async", "server killed: the pending call and a later one raise ServerExited")

    watchdog.arm("async: unreadable answer")
    logging.getLogger("agent_exec").disabled = True  # the reader's traceback is expected here
    saved, agent_exec.aio._LINE_LIMIT = agent_exec.aio._LINE_LIMIT, 4096
    try:
        agent = await AsyncAgentExec(binary, cwd=workdir).start()
    finally:
        agent_exec.aio._LINE_LIMIT = saved
    try:
        try:  # an answer longer than the reader's line limit: the reader fails
            await asyncio.wait_for(agent.exec("head -c 10000 /dev/zero | tr '\\0' x"), 10)
            raise AssertionError("an answer over the line limit was read")
        except ServerExited as e:
            expect("the error says why", "reading agent-exec serve's output failed" in str(e), e)
        expect("server killed and reaped", agent._process.returncode == -signal.SIGKILL
               and not os.path.exists(f"/proc/{agent.pid}"), agent._process.returncode)
    finally:
        await agent.aclose(timeout=5)
        logging.getLogger("agent_exec").disabled = False
    ok("async", "an unreadable answer: the call raises ServerExited, the server is killed and reaped")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    workdir = os.path.realpath(tempfile.mkdtemp(prefix="agent-exec-check-"))
    watchdog.workdir = workdir
    try:
        watchdog.arm("discovery")
        check_discovery(binary, workdir)
        # None stays None: the clients then find the binary themselves, as a user's code would.
        check_sync(binary, workdir)
        asyncio.run(check_async(binary, workdir))
        watchdog.disarm()
    except (AssertionError, RpcError, OSError) as e:  # OSError: no binary, or the server died
        watchdog.disarm()
        print(f"FAILED: {watchdog.name}: {type(e).__name__}: {e}", flush=True)
        watchdog.fail()  # removes the workdir: os._exit skips the finally below
    finally:  # reached on success, and on an unexpected exception (the armed watchdog bounds the exit)
        shutil.rmtree(workdir, ignore_errors=True)
    print("all checks passed")


if __name__ == "__main__":
    main()
