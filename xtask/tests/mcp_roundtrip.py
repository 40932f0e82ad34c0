#!/usr/bin/env python3
"""One MCP round trip through an installed entry point, with the official MCP Python SDK.

Usage:
    python mcp_roundtrip.py WORKDIR VERSION -- COMMAND [ARGS...]

Starts COMMAND (say `uvx agent-exec mcp` or `npx -y agent-exec mcp`) as an MCP client
configuration would, in WORKDIR with the caller's environment, then: the handshake (the server
names itself agent-exec VERSION), the tool list (it has `bash`), and a `bash` call whose text
and structured result carry the command's output. Prints `mcp round trip ok` or exits 1 naming
what was wrong. Every wait is bounded; the first start may install the package, so the
handshake gets longer than a call.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

STARTUP_TIMEOUT = 300.0  # a first `npx -y` / `uvx` installs before the server answers
CALL_TIMEOUT = 60.0


async def round_trip(workdir: str, version: str, command: list[str]) -> None:
    server = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=workdir
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(STARTUP_TIMEOUT):
            init = await session.initialize()
        if (init.server_info.name, init.server_info.version) != ("agent-exec", version):
            raise SystemExit(f"the server is {init.server_info!r}, not agent-exec {version}")
        with anyio.fail_after(CALL_TIMEOUT):
            tools = {tool.name for tool in (await session.list_tools()).tools}
        if "bash" not in tools:
            raise SystemExit(f"no `bash` tool among {sorted(tools)}")
        with anyio.fail_after(CALL_TIMEOUT):
            result = await session.call_tool("bash", {"command": "echo round-$((40 + 2))"})
        text = "".join(getattr(part, "text", "") for part in result.content)
        if result.is_error or "round-42" not in text:
            raise SystemExit(f"the bash call came back as {result!r}")
        structured = result.structured_content or {}
        if structured.get("exit_code") != 0:
            raise SystemExit(f"structured result without exit code 0: {structured!r}")
    print("mcp round trip ok")


def main() -> None:
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        raise SystemExit(__doc__)
    anyio.run(round_trip, sys.argv[1], sys.argv[2], sys.argv[4:])


if __name__ == "__main__":
    main()
