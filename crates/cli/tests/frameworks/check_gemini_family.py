"""Framework checks for agent-exec's MCP server: Pydantic AI and google-genai (the Gemini family).

Run:  <venv-python> check_gemini_family.py <path-to-agent-exec> <scratch-dir>
Needs (Python 3.11): pydantic-ai-slim[openai,mcp]==2.68.0 pydantic-graph==2.68.0 fastmcp-slim==3.4.11
google-genai==3.6.1 mcp==1.30.0 openai==3.57.0 pydantic==2.14.4 httpx==0.28.1. (Not the [google] extra:
pydantic-ai-slim 2.68.0 declares google-genai<3 for it, but its GoogleModel runs with 3.6.1.)

Prints one `PASS <framework>/<mode>/<check>` or `FAIL <framework>/<mode>/<check>: <why>` line per check, and
`all framework checks passed` (exit 0) only when every check passed; else exit 1. Notes go to stderr.
No real model is called: Pydantic AI runs with its FunctionModel stand-in, with its GoogleModel against the
fake Gemini server (fake_gemini.py) and with its OpenAIChatModel (strict tools) against a minimal fake
chat-completions server defined here; google-genai runs its MCP automatic-function-calling path against the
fake Gemini server.

Modes:
  pydantic-ai/function          FunctionModel, MCPToolset defaults (tool_error_behavior='retry', retries=1)
  pydantic-ai/function-failed   FunctionModel, MCPToolset(tool_error_behavior='failed') - the documented way
                                to show tool errors to the model without spending the retry budget
  pydantic-ai/google            GoogleModel -> fake Gemini (Gemini's real request builder + schema transform)
  pydantic-ai/openai-strict     OpenAIChatModel -> fake chat completions, every tool ToolDefinition.strict=True
  google-genai/default          client.aio.models.generate_content(config={'tools': [mcp ClientSession]})
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Callable

sys.dont_write_bytecode = True  # keep the tests directory clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_gemini  # noqa: E402
from fake_gemini import FakeGemini, call, function_responses, text  # noqa: E402
import fake_openai  # noqa: E402

TOOLS = {'bash', 'bash_output', 'bash_input', 'bash_kill', 'bash_jobs', 'read_artifact', 'bash_session_close'}
FAIL_CMD = "printf 'OUT-%s\\n' 7341; echo ERR-7342 >&2; exit 3"
OK_CMD = 'echo OK-5150'
RUN_TIMEOUT = 60.0  # seconds, every agent run / generate_content call
WATCHDOG = 170.0  # seconds, the whole script

RESULTS: list[tuple[str, bool, str]] = []


def short(s: Any, n: int = 400) -> str:
    s = s if isinstance(s, str) else repr(s)
    s = ' '.join(s.split())
    return s if len(s) <= n else s[: n - 3] + '...'


def report(name: str, ok: bool, why: str = '') -> None:
    RESULTS.append((name, ok, why))
    print(f'PASS {name}' if ok else f'FAIL {name}: {short(why)}', flush=True)


def note(msg: str) -> None:
    print(f'NOTE {short(msg, 600)}', file=sys.stderr, flush=True)


def exc_str(e: BaseException) -> str:
    # unwrap exception groups to their first leaf
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return f'{type(e).__name__}: {e}'


def has_all(seen: str, *needles: str) -> list[str]:
    return [n for n in needles if n not in seen]


# ---------------------------------------------------------------------------------------------------------
# The strict mode runs against fake_openai's server, which checks OpenAI's strict rules and fills
# every property as a strict model does (neutral_args).
# ---------------------------------------------------------------------------------------------------------
def openai_tool_results(body: dict) -> str:
    """Everything after the last assistant message of a chat request: the tool results the model is given."""
    msgs = body.get('messages') or []
    last = max((i for i, m in enumerate(msgs) if m.get('role') == 'assistant'), default=-1)
    return json.dumps(msgs[last + 1 :], ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------
# Pydantic AI
# ---------------------------------------------------------------------------------------------------------
def pai_seen(part: Any) -> str:
    """The text Pydantic AI gives the model for a request part (ToolReturnPart / RetryPromptPart)."""
    for meth in ('model_response_str', 'model_response'):
        f = getattr(part, meth, None)
        if f is not None:
            try:
                return f()
            except Exception:  # noqa: BLE001
                pass
    return str(getattr(part, 'content', part))


@dataclasses.dataclass
class Scenario:
    turns: list[Any]
    seen: list[str] = dataclasses.field(default_factory=list)  # per model request after the first
    tools: list[list[str]] = dataclasses.field(default_factory=list)  # tool names per model request
    error: str | None = None
    output: Any = None


class ScriptedFunction:
    """The FunctionModel function: answers from the current scenario's turns, records what it is given."""

    def __init__(self) -> None:
        self.sc: Scenario | None = None

    def __call__(self, messages: list, info: Any) -> Any:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart

        sc = self.sc
        assert sc is not None
        sc.tools.append([t.name for t in info.function_tools])
        last = messages[-1]
        if len(messages) > 1 and isinstance(last, ModelRequest):
            sc.seen.append('\n'.join(pai_seen(p) for p in last.parts))
        turn = sc.turns.pop(0) if sc.turns else text('function model: script exhausted')
        if callable(turn):
            turn = turn(info)
        if 'call' in turn:
            return ModelResponse(parts=[ToolCallPart(n, a) for n, a in turn['call']])
        return ModelResponse(parts=[TextPart(turn['text'])])


async def pai_run(agent: Any, sc: Scenario) -> Scenario:
    try:
        res = await asyncio.wait_for(agent.run('Run the commands.'), RUN_TIMEOUT)
        sc.output = res.output
    except Exception as e:  # noqa: BLE001
        sc.error = exc_str(e)
    return sc


def stdio_toolset(binary: str, scratch: str, **kw: Any) -> Any:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    # keep_alive=False: the server process ends with the toolset's context (default True keeps it running).
    return MCPToolset(StdioTransport(command=binary, args=['mcp'], cwd=scratch, keep_alive=False), **kw)


async def pydantic_function(binary: str, scratch: str, mode: str, **toolset_kw: Any) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    pre = f'pydantic-ai/{mode}'
    fn = ScriptedFunction()
    agent = Agent(FunctionModel(fn), toolsets=[stdio_toolset(binary, scratch, **toolset_kw)])

    async def run(turns: list[Any]) -> Scenario:
        fn.sc = Scenario(turns)
        return await pai_run(agent, fn.sc)

    async with agent:
        if mode == 'function':
            sc = await run([text('hello')])
            names = set(sc.tools[0]) if sc.tools else set()
            report(f'{pre}/tools', sc.error is None and TOOLS <= names,
                   sc.error or f'missing {sorted(TOOLS - names)}; got {sorted(names)}')

            a = await run([call('bash', {'command': FAIL_CMD}), text('done')])
            b = await run([call('bash', {'command': OK_CMD}), text('done')])
            seen_a, seen_b = (a.seen or [''])[0], (b.seen or [''])[0]
            miss = has_all(seen_a, 'OUT-7341', 'ERR-7342') + has_all(seen_b, 'OK-5150')
            report(f'{pre}/output', not miss and not a.error and not b.error,
                   f'model not given {miss}; run errors: {a.error or b.error}; model saw after exit-3 call: '
                   f'{seen_a[:200]!r}; after echo: {seen_b[:150]!r}')

            e = await run([call('bash_output', {'job_id': '424242'}), text('done')])
            seen_e = (e.seen or [''])[0]
            report(f'{pre}/error', '424242' in seen_e and not e.error,
                   f'run error: {e.error}; model saw: {seen_e[:300]!r}')

        sc = await run([call('bash', {'command': FAIL_CMD})] * 3 + [text('done')])
        bad = [i + 1 for i, s in enumerate(sc.seen[:3]) if has_all(s, 'OUT-7341', 'ERR-7342')]
        ok = sc.error is None and len(sc.seen) >= 3 and not bad
        report(f'{pre}/survives-failures', ok,
               f'run error after {len(sc.seen)} tool results: {sc.error}; results lacking OUT-7341/ERR-7342: '
               f'{bad}; first seen: {(sc.seen or [""])[0][:150]!r}')


async def pydantic_google(binary: str, scratch: str, fake: FakeGemini) -> None:
    from google import genai
    from google.genai import types
    from pydantic_ai import Agent
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    pre = 'pydantic-ai/google'
    client = genai.Client(api_key='fake-key', http_options=types.HttpOptions(base_url=fake.base_url))
    model = GoogleModel('gemini-2.5-flash', provider=GoogleProvider(client=client))
    agent = Agent(model, toolsets=[stdio_toolset(binary, scratch)])

    async def run(turns: list[Any]) -> tuple[Scenario, list[dict]]:
        fake.set_script(turns)
        sc = await pai_run(agent, Scenario(turns))
        return sc, list(fake.requests)

    async with agent:
        sc, reqs = await run([text('hello')])
        names = set(fake_gemini.tool_names(reqs[0]['body'])) if reqs else set()
        report(f'{pre}/tools', bool(reqs) and TOOLS <= names,
               f'run error: {sc.error}; missing {sorted(TOOLS - names)}; got {sorted(names)}')
        if reqs:
            note(f'{pre}: schema field sent: {sorted(fake.schema_fields)}; '
                 f'toolConfig: {json.dumps(reqs[0]["body"].get("toolConfig") or reqs[0]["body"].get("tool_config"))}')
        errs = [e for r in reqs for e in r['schema_errors']][:40]
        report(f'{pre}/schema', bool(reqs) and not errs,
               f'no request ({sc.error})' if not reqs else
               f'Gemini would reject ({len(errs)} problems, field {sorted(fake.schema_fields)}): ' + '; '.join(errs))

        def seen(reqs: list[dict], i: int) -> str:
            return json.dumps(function_responses(reqs[i]['body']), ensure_ascii=False) if len(reqs) > i else ''

        a, ra = await run([call('bash', {'command': FAIL_CMD}), text('done')])
        b, rb = await run([call('bash', {'command': OK_CMD}), text('done')])
        miss = has_all(seen(ra, 1), 'OUT-7341', 'ERR-7342') + has_all(seen(rb, 1), 'OK-5150')
        report(f'{pre}/output', not miss and not a.error and not b.error,
               f'functionResponse lacks {miss}; run errors: {a.error or b.error}; after exit-3 call the model got: '
               f'{seen(ra, 1)[:220]}')

        e, re_ = await run([call('bash_output', {'job_id': '424242'}), text('done')])
        report(f'{pre}/error', '424242' in seen(re_, 1) and not e.error,
               f'run error: {e.error}; model got: {seen(re_, 1)[:300]}')

        s, rs = await run([call('bash', {'command': FAIL_CMD})] * 3 + [text('done')])
        bad = [i for i in (1, 2, 3) if has_all(seen(rs, i), 'OUT-7341', 'ERR-7342')]
        report(f'{pre}/survives-failures', s.error is None and not bad,
               f'run error after {len(rs)} model requests: {s.error}; requests whose functionResponse lacks '
               f'OUT-7341/ERR-7342: {bad}')


async def pydantic_openai_strict(binary: str, scratch: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import PrepareTools
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    pre = 'pydantic-ai/openai-strict'
    fake = fake_openai.FakeOpenAI().start()
    try:
        def all_strict(ctx: Any, tool_defs: list) -> list:
            return [dataclasses.replace(t, strict=True) for t in tool_defs]

        model = OpenAIChatModel('gpt-4.1', provider=OpenAIProvider(base_url=fake.base_url, api_key='fake-key'))
        agent = Agent(model, toolsets=[stdio_toolset(binary, scratch)], capabilities=[PrepareTools(all_strict)])

        def as_openai(turn: Any) -> Any:
            """A fake_gemini turn (call / text) as fake_openai's."""
            if callable(turn):
                return lambda body: as_openai(turn(body))
            if 'call' in turn:
                return fake_openai.tool_calls(*turn['call'])
            return fake_openai.text(turn['text'])

        async def run(turns: list[Any]) -> tuple[Scenario, list[dict]]:
            fake.reset([as_openai(t) for t in turns])
            sc = await pai_run(agent, Scenario(turns))
            return sc, list(fake.requests)

        def seen(reqs: list[dict], i: int) -> str:
            return openai_tool_results(reqs[i]) if len(reqs) > i else ''

        async with agent:
            sc, reqs = await run([text('hello')])
            fns = [t.get('function', {}) for t in (reqs[0].get('tools') or [])] if reqs else []
            names = {f.get('name') for f in fns}
            report(f'{pre}/tools', bool(reqs) and TOOLS <= names,
                   f'run error: {sc.error}; missing {sorted(TOOLS - names)}; got {sorted(names)}')
            errs = [f'{f.get("name")}: strict is {f.get("strict")!r}' for f in fns if f.get('strict') is not True]
            errs += fake.schema_errors
            report(f'{pre}/schema', bool(fns) and not errs,
                   f'no tools sent ({sc.error})' if not fns else f'{len(errs)} problems: ' + '; '.join(errs[:30]))

            a, ra = await run([call('bash', {'command': FAIL_CMD}), text('done')])
            b, rb = await run([call('bash', {'command': OK_CMD}), text('done')])
            miss = has_all(seen(ra, 1), 'OUT-7341', 'ERR-7342') + has_all(seen(rb, 1), 'OK-5150')
            report(f'{pre}/output', not miss and not a.error and not b.error,
                   f'tool message lacks {miss}; run errors: {a.error or b.error}; after exit-3 call: '
                   f'{seen(ra, 1)[:220]}')

            e, re_ = await run([call('bash_output', {'job_id': '424242'}), text('done')])
            report(f'{pre}/error', '424242' in seen(re_, 1) and not e.error,
                   f'run error: {e.error}; model got: {seen(re_, 1)[:300]}')

            sent: dict[str, dict] = {}

            def strict_turn(tool: str, **given: Any) -> Callable[[dict], dict]:
                def turn(body: dict) -> dict:
                    params = next((t['function'].get('parameters') or {} for t in body.get('tools') or []
                                   if t.get('function', {}).get('name') == tool), {})
                    sent[tool] = fake_openai.neutral_args(params, **given)
                    return call(tool, sent[tool])
                return turn

            s1, r1 = await run([strict_turn('bash', command='echo STRICT-99'), text('done')])
            s2, r2 = await run([strict_turn('read_artifact', id='artifact://nope'), text('done')])
            problems = []
            if 'STRICT-99' not in seen(r1, 1):
                problems.append(f'bash with every property {json.dumps(sent.get("bash"))} -> model got '
                                f'{seen(r1, 1)[:260]} (run error {s1.error})')
            if 'nope' not in seen(r2, 1):
                problems.append(f'read_artifact {json.dumps(sent.get("read_artifact"))} -> model got '
                                f'{seen(r2, 1)[:200]} (run error {s2.error})')
            report(f'{pre}/strict-call', not problems and not s1.error and not s2.error,
                   ' | '.join(problems) or f'run errors: {s1.error or s2.error}')

            s, rs = await run([call('bash', {'command': FAIL_CMD})] * 3 + [text('done')])
            bad = [i for i in (1, 2, 3) if has_all(seen(rs, i), 'OUT-7341', 'ERR-7342')]
            report(f'{pre}/survives-failures', s.error is None and not bad,
                   f'run error after {len(rs)} model requests: {s.error}; requests whose tool message lacks '
                   f'OUT-7341/ERR-7342: {bad}')
    finally:
        fake.stop()


# ---------------------------------------------------------------------------------------------------------
# google-genai
# ---------------------------------------------------------------------------------------------------------
async def google_genai(binary: str, scratch: str, fake: FakeGemini) -> None:
    from google import genai
    from google.genai import types
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    pre = 'google-genai/default'
    client = genai.Client(api_key='fake-key', http_options=types.HttpOptions(base_url=fake.base_url))
    params = StdioServerParameters(command=binary, args=['mcp'], cwd=scratch)
    # google-genai takes an open mcp ClientSession (it never starts the server itself): keep it open for the
    # whole conversation.
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await asyncio.wait_for(session.initialize(), 30)

            config: Any = types.GenerateContentConfig(tools=[session])
            fake.set_script([text('hello')])
            try:
                await asyncio.wait_for(client.aio.models.generate_content(
                    model='gemini-2.5-flash', contents='hi', config=config), RUN_TIMEOUT)
            except TypeError as e:
                if 'pickle' not in str(e):
                    raise
                # generate_content deep-copies a GenerateContentConfig; an mcp ClientSession holds asyncio
                # futures and cannot be copied. A plain dict config is not copied.
                note(f'{pre}: GenerateContentConfig(tools=[session]) fails ({exc_str(e)}); using a dict config')
                config = {'tools': [session]}
            except Exception:  # noqa: BLE001
                pass  # measured below

            async def run(turns: list[Any]) -> tuple[str | None, list[dict]]:
                fake.set_script(turns)
                err = None
                try:
                    await asyncio.wait_for(client.aio.models.generate_content(
                        model='gemini-2.5-flash', contents='Run the commands.', config=config), RUN_TIMEOUT)
                except Exception as e:  # noqa: BLE001
                    err = exc_str(e)
                return err, list(fake.requests)

            def seen(reqs: list[dict], i: int) -> str:
                return json.dumps(function_responses(reqs[i]['body']), ensure_ascii=False) if len(reqs) > i else ''

            err, reqs = await run([text('hello')])
            names = set(fake_gemini.tool_names(reqs[0]['body'])) if reqs else set()
            report(f'{pre}/tools', bool(reqs) and TOOLS <= names,
                   f'no request reached the model: {err}' if not reqs else
                   f'missing {sorted(TOOLS - names)}; got {sorted(names)}')
            if reqs:
                note(f'{pre}: schema field sent: {sorted(fake.schema_fields)}')
            errs = [e for r in reqs for e in r['schema_errors']][:40]
            report(f'{pre}/schema', bool(reqs) and not errs,
                   f'MCP tool conversion failed before any request: {err}' if not reqs else
                   f'Gemini would reject ({len(errs)} problems, field {sorted(fake.schema_fields)}): '
                   + '; '.join(errs))

            ea, ra = await run([call('bash', {'command': FAIL_CMD}), text('done')])
            eb, rb = await run([call('bash', {'command': OK_CMD}), text('done')])
            miss = has_all(seen(ra, 1), 'OUT-7341', 'ERR-7342') + has_all(seen(rb, 1), 'OK-5150')
            report(f'{pre}/output', not miss and not ea and not eb,
                   f'functionResponse lacks {miss}; errors: {ea or eb}; after exit-3 call: {seen(ra, 1)[:200]}')

            ee, re_ = await run([call('bash_output', {'job_id': '424242'}), text('done')])
            report(f'{pre}/error', '424242' in seen(re_, 1) and not ee,
                   f'error: {ee}; model got: {seen(re_, 1)[:300]}')

            es, rs = await run([call('bash', {'command': FAIL_CMD})] * 3 + [text('done')])
            bad = [i for i in (1, 2, 3) if has_all(seen(rs, i), 'OUT-7341', 'ERR-7342')]
            report(f'{pre}/survives-failures', es is None and not bad,
                   f'error after {len(rs)} model requests: {es}; requests whose functionResponse lacks '
                   f'OUT-7341/ERR-7342: {bad}')


# ---------------------------------------------------------------------------------------------------------
SECTIONS: dict[str, list[str]] = {
    'pydantic-ai/function': ['tools', 'output', 'error', 'survives-failures'],
    'pydantic-ai/function-failed': ['survives-failures'],
    'pydantic-ai/google': ['tools', 'schema', 'output', 'error', 'survives-failures'],
    'pydantic-ai/openai-strict': ['tools', 'schema', 'output', 'error', 'strict-call', 'survives-failures'],
    'google-genai/default': ['tools', 'schema', 'output', 'error', 'survives-failures'],
}


async def guarded(prefix: str, coro: Any) -> None:
    """Run one section; a crash (or timeout) fails the section's checks that did not report."""
    try:
        await asyncio.wait_for(coro, 150)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, KeyboardInterrupt):
            raise
        done = {n for n, _, _ in RESULTS}
        tb = traceback.format_exception(e)
        for check in SECTIONS[prefix]:
            if f'{prefix}/{check}' not in done:
                report(f'{prefix}/{check}', False, f'section crashed: {exc_str(e)} at {tb[-2].strip()[:150]}')


async def main_async(binary: str, scratch: str) -> None:
    fake = FakeGemini().start()
    try:
        await guarded('pydantic-ai/function', pydantic_function(binary, scratch, 'function'))
        await guarded('pydantic-ai/function-failed',
                      pydantic_function(binary, scratch, 'function-failed', tool_error_behavior='failed'))
        await guarded('pydantic-ai/google', pydantic_google(binary, scratch, fake))
        await guarded('pydantic-ai/openai-strict', pydantic_openai_strict(binary, scratch))
        await guarded('google-genai/default', google_genai(binary, scratch, fake))
    finally:
        fake.stop()


def main() -> int:
    if len(sys.argv) != 3:
        print(f'usage: {sys.argv[0]} <agent-exec binary> <scratch dir>', file=sys.stderr)
        return 2
    binary, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(scratch, exist_ok=True)

    def watchdog() -> None:
        print(f'FAIL gemini-family/watchdog: the checks did not finish within {WATCHDOG:.0f} s', flush=True)
        os._exit(1)

    timer = threading.Timer(WATCHDOG, watchdog)
    timer.daemon = True
    timer.start()
    try:
        asyncio.run(main_async(binary, scratch))
    finally:
        timer.cancel()
    failed = [n for n, ok, _ in RESULTS if not ok]
    if not RESULTS or failed:
        return 1
    print('all framework checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
