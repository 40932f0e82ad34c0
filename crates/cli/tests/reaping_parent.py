"""A parent that never reaps orphans, for crates/cli/tests/reaping.rs.

Run as PID 1 of a PID namespace (`unshare --pid --fork --mount-proc`), it is the init of a
container that never calls wait on what is re-parented to it (an agent as PID 1, `sleep
infinity`); run elsewhere it makes itself a child subreaper first (as some agent runtimes and
tini do) and still never reaps. It drives agent-exec, reaps only the processes it started
itself (as subprocess does), and prints as JSON every process left: zombies and live ones.

    reaping_parent.py AGENT_EXEC run N [FLAG...]   N calls of `agent-exec run`
    reaping_parent.py AGENT_EXEC serve|mcp N       N calls on a server, then its end
"""

import ctypes
import json
import os
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def left_behind():
    """Every other process we can see that is ours: in a PID namespace every process but us
    (the namespace's own /proc), elsewhere our children (orphans are re-parented to us)."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat.split("(", 1)[1].rsplit(")", 1)[0]
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if me == 1 or int(ppid) == me:
            found.append({"pid": int(entry), "state": state, "name": name})
    return found


def server(exe, mode, calls):
    proc = subprocess.Popen(
        [exe, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    next_id = iter(range(1, 1 << 30))

    def call(method, params):
        ident = next(next_id)
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            + "\n"
        )
        proc.stdin.flush()
        while True:
            answer = json.loads(proc.stdout.readline())
            if answer.get("id") == ident:
                if "error" in answer:
                    sys.exit(f"{method} failed: {answer}")
                return answer

    def execute(arguments):
        if mode == "mcp":
            return call("tools/call", {"name": "bash", "arguments": arguments})
        return call("exec", arguments)

    if mode == "mcp":
        call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reaping-parent", "version": "1"},
            },
        )
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    for i in range(calls):
        # One-shot calls, sessions and PTY calls, each leaving an orphan for containment.
        arguments = {"command": "sleep 0.01 & echo $((1 + 1))"}
        if i % 3 == 1:
            arguments["session"] = f"s{i % 2}"
        if i % 3 == 2:
            arguments["pty"] = True
        execute(arguments)
    # A job left running, and a session left open, when the client goes.
    execute({"command": "sleep 300", "run_in_background": True})
    execute({"command": "sleep 300 &", "session": "left-open"})
    proc.stdin.close()
    proc.wait(timeout=60)


def main():
    exe, mode, calls, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    if os.getpid() != 1:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")
    if mode == "run":
        # Ends that clap takes (help, a usage error) reap what `run` started too.
        for args in (["--help"], ["--no-such-flag"]):
            subprocess.run([exe, "run", *args], capture_output=True, timeout=60)
        for _ in range(calls):
            done = subprocess.run(
                [exe, "run", *flags, "--", "sleep 0.01 & echo $((1 + 1))"],
                capture_output=True,
                timeout=60,
            )
            if done.returncode != 0:
                sys.exit(f"agent-exec run failed ({done.returncode}): {done.stdout} {done.stderr}")
    else:
        server(exe, mode, calls)
    # What exits at the end exits now; a zombie stays.
    deadline = time.monotonic() + 5
    while left_behind() and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps({"left": left_behind(), "pid": os.getpid()}))


main()
