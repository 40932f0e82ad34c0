"""A typed Python client of `agent-exec serve`: run shell commands for LLM agents with bounded output,
no hangs, no survivors, a sandbox and a policy (docs/contract.md). Standard library only.

    from agent_exec import AgentExec, result_text

    with AgentExec() as agent:  # starts `agent-exec serve`; the binary is found by find_binary()
        result = agent.exec("ls -la", cwd="/tmp", timeout=30)
        print(result_text(result), result["details"]["outcome"])

        with agent.session() as shell:  # cd, exports and functions persist between its calls
            shell.exec("cd /tmp && export X=1")
            print(result_text(shell.exec("echo $X; pwd")))

        call = agent.submit_exec("make test", on_progress=lambda p: print(p["tail"], end=""))
        call.cancel()  # the command is ended; call.result()["details"]["outcome"] == "cancelled"

`agent_exec.aio.AsyncAgentExec` is the same for asyncio. `python -m agent_exec ARGS...` runs the
binary itself (`python -m agent_exec mcp` is the MCP server).
"""

from ._binary import AgentExecNotFound, find_binary
from ._protocol import (AgentExecError, Details, JobInfo, Outcome, Progress, ProgressCallback, Result,
                        RpcError, ServerExited, TextContent, Truncation, result_text)
from .aio import AsyncAgentExec, AsyncSession
from .client import AgentExec, Call, Session

__all__ = [
    "AgentExec", "AsyncAgentExec", "Call", "Session", "AsyncSession",
    "AgentExecError", "AgentExecNotFound", "RpcError", "ServerExited",
    "find_binary", "result_text",
    "Result", "Details", "Outcome", "Progress", "ProgressCallback", "TextContent", "Truncation", "JobInfo",
]
