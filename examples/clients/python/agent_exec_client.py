"""A small client for `agent-exec serve` (JSON-RPC 2.0 over stdio, one JSON message per line).

Python 3.9+, standard library only. As a library:

    from agent_exec_client import AgentExec

    with AgentExec() as agent:  # binary: argument, else $AGENT_EXEC_BIN, else agent-exec on PATH
        result = agent.exec("ls -la", cwd="/tmp", timeout=30)
        print(result["content"][0]["text"], result["details"]["outcome"])

As a demo that is also a check (exits non-zero if anything is off):

    python3 agent_exec_client.py [path/to/agent-exec]
"""

import contextlib
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor


class RpcError(Exception):
    """A JSON-RPC `error` response: the call itself was rejected (bad params, unknown method)."""

    def __init__(self, code, message):
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code, self.message = code, message


class AgentExec:
    """One `agent-exec serve` process. Safe to call from several threads at once."""

    def __init__(self, binary=None, *serve_args):
        binary = binary or os.environ.get("AGENT_EXEC_BIN") or "agent-exec"
        # stderr is inherited so that the server's own diagnostics stay visible.
        self._process = subprocess.Popen([binary, "serve", *serve_args], encoding="utf-8",
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._ids = itertools.count(1)
        self._waiting = {}  # request id -> queue for its response (None: the server is gone)
        self._lock = threading.Lock()  # guards _waiting, and keeps each request line whole
        self._reader = threading.Thread(target=self._read_responses, daemon=True)
        self._reader.start()

    def call(self, method, params=None):
        """Sends one request, blocks until its own response arrives, returns its `result`."""
        mailbox = queue.Queue(maxsize=1)
        request = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        try:
            with self._lock:
                request["id"] = next(self._ids)
                self._waiting[request["id"]] = mailbox
                self._process.stdin.write(json.dumps(request) + "\n")
                self._process.stdin.flush()
        except (BrokenPipeError, ValueError) as e:  # ValueError: stdin closed by close()
            raise ConnectionError(f"agent-exec serve is not running: {e}") from None
        response = mailbox.get()
        if response is None:
            raise ConnectionError(f"agent-exec serve exited before answering {method}")
        if "error" in response:
            raise RpcError(response["error"]["code"], response["error"]["message"])
        return response["result"]

    def _read_responses(self):
        # The server answers each request on its own thread, so responses come in any order.
        try:
            for line in self._process.stdout:
                response = json.loads(line)
                with self._lock:
                    mailbox = self._waiting.pop(response.get("id"), None)
                if mailbox is not None:  # id null: about a line we never sent
                    mailbox.put(response)
        finally:  # the server is gone (or spoke garbage): nobody still waiting may hang
            with self._lock:
                for mailbox in self._waiting.values():
                    mailbox.put(None)
                self._waiting.clear()

    def exec(self, command, **fields):
        """Runs a command; `fields` are the other request fields (cwd, env, timeout, session...)."""
        return self.call("exec", {"command": command, **fields})

    def job_output(self, job_id, mode="new", wait_ms=0):
        return self.call("job_output", {"job_id": job_id, "mode": mode, "wait_ms": wait_ms})

    def job_input(self, job_id, data="", enter=True, eof=False):
        return self.call("job_input", {"job_id": job_id, "data": data, "enter": enter, "eof": eof})

    def job_kill(self, job_id):
        return self.call("job_kill", {"job_id": job_id})

    def session_close(self, name):
        return self.call("session_close", {"session": name})

    def close(self, timeout=30):
        """Ends the server via end of input (calls in flight are answered first, then its sessions
        and jobs end); kills it after `timeout` seconds. Returns its exit code."""
        with self._lock, contextlib.suppress(BrokenPipeError):  # raised if the server died
            self._process.stdin.close()
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            return self._process.wait()
        finally:
            self._reader.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def expect(what, actual, expected):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def text(result):
    return result["content"][0]["text"]


def demo(agent):
    result = agent.exec("echo hello")
    expect("echo hello", (text(result), result["details"]["outcome"]), ("hello\n", "success"))
    print("ok  one call: echo hello")

    agent.exec("cd /tmp && export X=42", session="demo")
    expect("session", text(agent.exec("echo $X; pwd", session="demo")), "42\n/tmp\n")
    agent.session_close("demo")
    print("ok  session: cd and export persist between calls")

    job = agent.exec("for i in 1 2 3; do echo line$i; sleep 0.1; done", run_in_background=True)
    job_id, output, deadline = job["details"]["job_id"], "", time.monotonic() + 20
    while True:  # each read returns at new output or at the job's end, whichever comes first
        status, _, new_output = text(agent.job_output(job_id, wait_ms=1000)).partition("\n")
        output += "" if new_output == "(no new output)" else new_output
        if not status.startswith(f"[job {job_id} running") or time.monotonic() > deadline:
            break
    expect("job status", status.split(";")[0], f"[job {job_id} exited with code 0")
    expect("job output", output, "line1\nline2\nline3\n")
    print(f"ok  background job {job_id}: three lines, then exited with code 0")

    # Two calls in flight at once; the slow one is answered last and must still find its caller.
    with ThreadPoolExecutor() as pool:
        slow = pool.submit(agent.exec, "sleep 0.3; echo slow")
        expect("concurrent fast call", text(agent.exec("echo fast")), "fast\n")
        expect("concurrent slow call", text(slow.result()), "slow\n")
    print("ok  concurrent calls: each response matched to its request by id")

    details = agent.exec("exit 3")["details"]
    expect("exit 3", (details["outcome"], details["exit_code"]), ("exit_nonzero", 3))
    print("ok  exit 3: outcome exit_nonzero, exit code 3")


def main():
    try:
        with AgentExec(sys.argv[1] if len(sys.argv) > 1 else None) as agent:
            demo(agent)
    except (AssertionError, RpcError, OSError) as e:  # OSError: no such binary, or the server died
        sys.exit(f"FAILED: {e}")
    print("all checks passed")


if __name__ == "__main__":
    main()
