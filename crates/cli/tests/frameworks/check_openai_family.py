"""Framework checks for `agent-exec mcp` under LangChain and the OpenAI Agents SDK.

Run:  <venv-python> check_openai_family.py <path-to-agent-exec> <scratch-dir>

Both frameworks talk to a fake OpenAI Chat Completions server (fake_openai.py)
through their real OpenAI clients, so the frameworks' own request builders and
schema converters run. Prints `PASS <framework>/<mode>/<check>` or
`FAIL ...: <why>` per check (`INFO` lines are notes, not checks), and
`all framework checks passed` when every check passed (exit 0, else 1).

Modes:
  langchain/default     MultiServerMCPClient.session() + load_mcp_tools, create_agent(ChatOpenAI)
  langchain/strict      same, tools bound with strict=True (model_settings via middleware)
  agents/default        MCPServerStdio, Agent(mcp_servers=...)
  agents/strict         mcp_config={"convert_schemas_to_strict": True}
  agents/structured     MCPServerStdio(use_structured_content=True)

Pinned versions (pip install into a venv):
  langchain==1.5.2 langchain-core==1.8.3 langchain-mcp-adapters==0.3.2 langchain-openai==1.7.4
  langgraph==1.2.24 openai-agents==0.24.0 openai==3.57.0 mcp==1.30.0
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fake_openai import (  # noqa: E402
    FakeOpenAI,
    last_tool_message,
    neutral_args,
    text,
    tool_call,
    tools_of,
)

EXPECTED_TOOLS = ["bash", "bash_output", "bash_input", "bash_kill", "bash_jobs",
                  "read_artifact", "bash_session_close"]
FAIL_CMD = "printf 'OUT-%s\\n' 7341; echo ERR-7342 >&2; exit 3"
RUN_TIMEOUT = 30  # seconds, per agent run

RESULTS: list[tuple[bool, str, str]] = []


def short(s: object, n: int = 400) -> str:
    s = str(s).replace("\n", "\\n")
    return s if len(s) <= n else s[: n - 3] + "..."


def report(name: str, ok: bool, why: str = "") -> None:
    RESULTS.append((ok, name, why))
    if ok:
        print(f"PASS {name}", flush=True)
    else:
        print(f"FAIL {name}: {short(why)}", flush=True)


def info(msg: str) -> None:
    print(f"INFO {short(msg, 600)}", flush=True)


# ---------------------------------------------------------------------------
# scenarios: (fake-model turns, assertion over the recorded requests)
# Each agent run: turn 1.. tool calls, last turn a final text "done".


def scen_call(name: str, args: dict) -> list:
    return [tool_call(name, args), text("done")]


def strict_turn(tool: str, **overrides):
    """Turn: fill EVERY property of `tool`'s schema as received with neutral values."""
    def turn(body: dict) -> dict:
        fn = tools_of(body).get(tool)
        params = (fn or {}).get("parameters") or {}
        args = neutral_args(params, **overrides)
        STRICT_ARGS[tool] = args
        return tool_call(tool, args)
    return turn


STRICT_ARGS: dict[str, dict] = {}


class Run:
    """One agent run's outcome."""

    def __init__(self, requests, final, error, schema_errors, script_errors):
        self.requests = requests
        self.final = final
        self.error = error
        self.schema_errors = schema_errors
        self.script_errors = script_errors

    def seen(self, i: int) -> str:
        """The last tool message of request i (what the model was given after call i)."""
        if i >= len(self.requests):
            return ""
        return last_tool_message(self.requests[i])

    def problem(self, want_requests: int) -> str | None:
        if self.error:
            return f"run raised {self.error}"
        if len(self.requests) < want_requests:
            return f"only {len(self.requests)} model requests, expected {want_requests}"
        if self.script_errors:
            return "; ".join(self.script_errors)
        return None


async def run_scenario(fake: FakeOpenAI, turns: list, run_agent) -> Run:
    fake.reset(turns)
    final, error = None, None
    try:
        final = await asyncio.wait_for(run_agent(), RUN_TIMEOUT)
    except asyncio.TimeoutError:
        error = f"timeout after {RUN_TIMEOUT}s"
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {short(e, 300)}"
    return Run(list(fake.requests), final, error, list(fake.schema_errors), list(fake.script_errors))


# ---------------------------------------------------------------------------
# the common checks, for a mode whose agent runs through `run_agent`


async def common_checks(prefix: str, fake: FakeOpenAI, run_agent, strict: bool,
                        strict_evidence=None) -> None:
    # output (failing command) -- also the source of `tools` / `schema`
    r1 = await run_scenario(fake, scen_call("bash", {"command": FAIL_CMD}), run_agent)
    first = r1.requests[0] if r1.requests else {}
    names = list(tools_of(first).keys())
    missing = [t for t in EXPECTED_TOOLS if t not in names]
    report(f"{prefix}/tools", bool(first) and not missing,
           f"request tools {names}; missing {missing}" + (f"; {r1.error}" if r1.error else ""))

    schema_problems = list(r1.schema_errors)
    if not first:
        schema_problems.append(f"no model request ({r1.error})")
    if strict:
        not_strict = [n for n, fn in tools_of(first).items() if fn.get("strict") is not True]
        if not_strict:
            ev = f"tools sent without strict:true (silent fallback to non-strict): {not_strict}"
            if strict_evidence:
                ev += f" [{strict_evidence()}]"
            ev = short(ev, 330)
            schema_problems.insert(0, ev)
    report(f"{prefix}/schema", not schema_problems, compact_schema_errors(schema_problems))

    r2 = await run_scenario(fake, scen_call("bash", {"command": "echo OK-5150"}), run_agent)
    why = []
    p = r1.problem(2)
    if p:
        why.append(f"failing command: {p}")
    elif not ("OUT-7341" in r1.seen(1) and "ERR-7342" in r1.seen(1)):
        why.append(f"failing command: model saw {short(r1.seen(1), 250)!r}")
    p = r2.problem(2)
    if p:
        why.append(f"echo OK-5150: {p}")
    elif "OK-5150" not in r2.seen(1):
        why.append(f"echo OK-5150: model saw {short(r2.seen(1), 250)!r}")
    report(f"{prefix}/output", not why, "; ".join(why))

    # error
    r = await run_scenario(fake, scen_call("bash_output", {"job_id": "424242"}), run_agent)
    p = r.problem(2)
    seen = r.seen(1)
    report(f"{prefix}/error", not p and "424242" in seen,
           p or f"model saw {short(seen, 300)!r} (no 424242)")

    # strict-call
    if strict:
        why = []
        STRICT_ARGS.clear()
        r = await run_scenario(fake, [strict_turn("bash", command="echo STRICT-99"), text("done")], run_agent)
        p = r.problem(2)
        if p or "STRICT-99" not in r.seen(1):
            why.append("bash: " + (p or f"model saw {short(r.seen(1), 120)!r}")
                       + f" for {short(json.dumps(STRICT_ARGS.get('bash')), 90)}")
        r = await run_scenario(fake, [strict_turn("read_artifact", id="artifact://nope"), text("done")],
                               run_agent)
        p = r.problem(2)
        if p or "artifact://nope" not in r.seen(1):
            why.append("read_artifact: " + (p or f"model saw {short(r.seen(1), 120)!r}")
                       + f" for {short(json.dumps(STRICT_ARGS.get('read_artifact')), 90)}")
        report(f"{prefix}/strict-call", not why, " | ".join(why))

    # survives-failures: three failing commands in a row, then a final answer
    turns = [tool_call("bash", {"command": f"printf 'FAIL-%s\\n' {i}; exit 3"}) for i in (1, 2, 3)]
    r = await run_scenario(fake, turns + [text("done")], run_agent)
    p = r.problem(4)
    why = [p] if p else []
    for i in (1, 2, 3):
        if not p and f"FAIL-{i}" not in r.seen(i):
            why.append(f"after call {i} model saw {short(r.seen(i), 120)!r}")
    if not p and r.final != "done":
        why.append(f"final output {r.final!r}")
    report(f"{prefix}/survives-failures", not why, "; ".join(why))


def compact_schema_errors(errors: list[str]) -> str:
    """Group the fake provider's `<tool> (strict): <kind> at $.properties.<p>...` lines by kind."""
    import re
    groups: dict[str, list[str]] = {}
    rest = []
    for e in errors:
        m = re.match(r"(\S+) \(strict\): (oneOf|default) at \$((?:\.\S+)*)", e)
        m2 = re.match(r"(\S+) \(strict\): object at \$(\S*) has (additionalProperties=.*), must be false", e)
        if m:
            groups.setdefault(m.group(2), []).append(m.group(1) + m.group(3).replace(".properties", ""))
        elif m2:
            groups.setdefault(m2.group(3) + " (must be false)", []).append(
                m2.group(1) + m2.group(2).replace(".properties", ""))
        else:
            rest.append(e)
    parts = rest + [f"{k} at {', '.join(v)}" for k, v in groups.items()]
    return " | ".join(parts)


def server_cmd(binary: str) -> tuple[str, list[str]]:
    return binary, ["mcp"]


# ---------------------------------------------------------------------------
# LangChain


async def langchain_checks(binary: str, scratch: str) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_model_call
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_mcp_adapters.tools import load_mcp_tools
    from langchain_openai import ChatOpenAI

    cmd, args = server_cmd(binary)
    client = MultiServerMCPClient({
        "agent-exec": {"transport": "stdio", "command": cmd, "args": args, "cwd": scratch},
    })

    @wrap_model_call
    async def strict_tools(request, handler):
        # create_agent binds tools with request.model_settings -> bind_tools(..., strict=True)
        return await handler(request.override(model_settings={**request.model_settings, "strict": True}))

    fake = FakeOpenAI().start()
    try:
        def make_runner(tools, strict: bool):
            model = ChatOpenAI(model="gpt-x", base_url=fake.base_url, api_key="x",
                               max_retries=0, timeout=30, use_responses_api=False)
            agent = create_agent(model, tools=tools, middleware=[strict_tools] if strict else [])

            async def run():
                out = await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]},
                                          {"recursion_limit": 20})
                return out["messages"][-1].content
            return run

        async with client.session("agent-exec") as session:
            tools = await asyncio.wait_for(load_mcp_tools(session), 30)
            for mode, strict in (("default", False), ("strict", True)):
                await common_checks(f"langchain/{mode}", fake, make_runner(tools, strict), strict)

            # session-keeps-jobs: a background job started in one tool call is listed by
            # bash_jobs in the next one (same server process, thanks to the session).
            jobs_turns = [tool_call("bash", {"command": "sleep 20; echo KEEP-8841", "run_in_background": True}),
                          tool_call("bash_jobs", {}), text("done")]
            r = await run_scenario(fake, jobs_turns, make_runner(tools, False))
            p = r.problem(3)
            report("langchain/default/session-keeps-jobs", not p and "KEEP-8841" in r.seen(2),
                   p or f"bash_jobs answered {short(r.seen(2), 250)!r}")
            # stop the job so it does not outlive the checks
            import re
            m = re.search(r"job[ _]?(?:id)?\D{0,4}(\d+)", r.seen(1))
            if m:
                try:
                    await asyncio.wait_for(session.call_tool("bash_kill", {"job_id": m.group(1)}), 10)
                except Exception:  # noqa: BLE001
                    pass

        # the get_tools() form: a new server process per tool call
        try:
            gt_tools = await asyncio.wait_for(client.get_tools(), 30)
            r = await run_scenario(fake, jobs_turns, make_runner(gt_tools, False))
            info(f"langchain get_tools() form (no session; a server per tool call): bash_jobs after a "
                 f"background start answered {short(r.seen(2), 200)!r}"
                 + (f" ({r.error})" if r.error else ""))
        except Exception as e:  # noqa: BLE001
            info(f"langchain get_tools() form failed: {type(e).__name__}: {e}")
    finally:
        fake.stop()


# ---------------------------------------------------------------------------
# OpenAI Agents SDK


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        try:
            self.lines.append(record.getMessage())
        except Exception:  # noqa: BLE001
            pass


async def agents_checks(binary: str, scratch: str) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    cap = _Capture()
    lg = logging.getLogger("openai.agents")
    lg.addHandler(cap)
    lg.setLevel(logging.INFO)
    lg.propagate = False

    cmd, args = server_cmd(binary)
    fake = FakeOpenAI().start()
    try:
        def make_runner(server, strict: bool):
            model = OpenAIChatCompletionsModel(
                model="gpt-x",
                openai_client=AsyncOpenAI(base_url=fake.base_url, api_key="x", max_retries=0, timeout=30))
            agent = Agent(name="checker", instructions="Use the tools.", model=model,
                          mcp_servers=[server],
                          mcp_config={"convert_schemas_to_strict": True} if strict else {})

            async def run():
                res = await Runner.run(agent, "go", max_turns=10)
                return res.final_output
            return run

        convert_errors: dict[str, str] = {}

        def strict_evidence():
            lines = [ln for ln in cap.lines if "strict" in ln.lower()]
            ev = "SDK log: " + (" / ".join(dict.fromkeys(lines)) if lines else "none")
            if convert_errors:
                ev += "; ensure_strict_json_schema says " + "; ".join(
                    f"{k}: {v}" for k, v in convert_errors.items())
            return ev

        async def why_not_strict(server):
            # The SDK logs only "Error converting MCP schema to strict mode" (tool data is not
            # logged by default); redo its conversion to name the reason.
            from agents.strict_schema import ensure_strict_json_schema
            convert_errors.clear()
            for t in await asyncio.wait_for(server.list_tools(), 30):
                try:
                    ensure_strict_json_schema(json.loads(json.dumps(t.inputSchema)),
                                              _reject_open_objects=True)
                except Exception as e:  # noqa: BLE001
                    convert_errors[t.name] = (f"{type(e).__name__}: {short(e, 100)} "
                                              f"(inputSchema {short(json.dumps(t.inputSchema), 90)})")

        params = {"command": cmd, "args": args, "cwd": scratch}
        for mode, strict, structured in (("default", False, False), ("strict", True, False),
                                         ("structured", False, True)):
            cap.lines.clear()
            server = MCPServerStdio(params=params, name="agent-exec", use_structured_content=structured,
                                    client_session_timeout_seconds=30)
            async with server:
                if strict:
                    await why_not_strict(server)
                await common_checks(f"agents/{mode}", fake, make_runner(server, strict), strict,
                                    strict_evidence if strict else None)
                if mode == "default":
                    r = await run_scenario(fake, scen_call("bash", {"command": "sleep 6; echo LATE-1"}),
                                           make_runner(server, False))
                    p = r.problem(2)
                    report("agents/default/long-call", not p and "LATE-1" in r.seen(1),
                           p or f"model saw {short(r.seen(1), 250)!r}")

        # the SDK's default client_session_timeout_seconds (5 s): the same call, for the record
        server = MCPServerStdio(params=params, name="agent-exec")
        try:
            async with server:
                r = await run_scenario(fake, scen_call("bash", {"command": "sleep 6; echo LATE-1"}),
                                       make_runner(server, False))
                info("agents default client_session_timeout_seconds=5: a 6 s call gave the model "
                     f"{short(r.seen(1), 250)!r}" + (f" ({r.error})" if r.error else ""))
        except Exception as e:  # noqa: BLE001
            info(f"agents default-timeout run ended with {type(e).__name__}: {short(e, 200)}")
    finally:
        fake.stop()
        lg.removeHandler(cap)


# ---------------------------------------------------------------------------


async def main_async(binary: str, scratch: str) -> None:
    # whole-script bound: 70 s + 90 s (a normal run takes ~25 s)
    for name, fn, bound in (("langchain", langchain_checks, 70), ("agents", agents_checks, 90)):
        t0 = time.monotonic()
        try:
            await asyncio.wait_for(fn(binary, scratch), bound)
        except Exception as e:  # noqa: BLE001
            report(f"{name}/setup", False, f"{type(e).__name__}: {e} :: "
                   + short(traceback.format_exc(limit=3), 250))
        info(f"{name} checks took {time.monotonic() - t0:.1f}s")


def main() -> int:
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} <agent-exec binary> <scratch dir>", file=sys.stderr)
        return 2
    binary, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(scratch, exist_ok=True)
    asyncio.run(main_async(binary, scratch))
    if RESULTS and all(ok for ok, _, _ in RESULTS):
        print("all framework checks passed")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
