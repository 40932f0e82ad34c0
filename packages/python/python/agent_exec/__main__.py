"""`python -m agent_exec ARGS...` runs the agent-exec binary with ARGS (`python -m agent_exec mcp`
is the MCP server), found as the clients find it (`find_binary`)."""

import os
import subprocess
import sys

from ._binary import AgentExecNotFound, find_binary


def main() -> int:
    try:
        binary = find_binary()
    except AgentExecNotFound as e:
        print(f"python -m agent_exec: {e}", file=sys.stderr)
        return 127  # as a shell says for a command it cannot find
    if os.name == "nt":  # no real exec on Windows: run it and pass its status on
        return subprocess.call([binary, *sys.argv[1:]])
    sys.stdout.flush()
    sys.stderr.flush()
    # exec: the binary takes this process's place, so signals, stdio and the exit status are its
    # own (an MCP client talking to `python -m agent_exec mcp` talks to agent-exec directly).
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
