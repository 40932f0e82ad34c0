"""A fake OpenAI Chat Completions server for framework checks (stdlib only).

Usage:
    fake = FakeOpenAI([tool_call("bash", {"command": "echo hi"}), text("done")]).start()
    client = AsyncOpenAI(base_url=fake.base_url, api_key="x")
    ...
    fake.requests        # every POST body (parsed JSON), in order
    fake.schema_errors   # problems the real provider would reject the tools for
    fake.script_errors   # requests that came after the script ran out
    fake.reset([...])    # new script, clears the records
    fake.stop()

A turn is a dict made by `tool_call(...)`, `tool_calls(...)` or `text(...)`, or a
callable `turn(body) -> dict` (to answer from what the request holds, e.g. fill
a strict schema with `neutral_args`). Non-streaming answers; `stream: true` is
answered as server-sent events.

Schema validation (done on every request, recorded, not enforced unless
`reject_invalid=True`, so one bad schema does not hide the other checks):
- every tool is `{"type": "function", "function": {"name", "parameters"...}}`, the
  name matches ^[a-zA-Z0-9_-]{1,64}$, parameters is an object schema;
- a function with `strict: true`: every object schema has
  `additionalProperties: false` and `required` listing every key of `properties`;
  no `oneOf`; no `default` anywhere in the schema.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tool_call(name: str, arguments: dict | str) -> dict:
    return {"tool_calls": [(name, arguments)]}


def tool_calls(*calls: tuple[str, dict | str]) -> dict:
    return {"tool_calls": list(calls)}


def text(content: str) -> dict:
    return {"content": content}


# ---------------------------------------------------------------- helpers on requests

def tools_of(body: dict) -> dict[str, dict]:
    """name -> function definition (name, description, parameters, strict)."""
    out = {}
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        if "name" in fn:
            out[fn["name"]] = fn
    return out


def tool_messages(body: dict) -> list[str]:
    """The text of every tool-result message of the request, in order."""
    out = []
    for m in body.get("messages") or []:
        if m.get("role") == "tool":
            out.append(_content_text(m.get("content")))
    return out


def last_tool_message(body: dict) -> str:
    msgs = tool_messages(body)
    return msgs[-1] if msgs else ""


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict):
                parts.append(str(p.get("text", json.dumps(p))))
            else:
                parts.append(str(p))
        return "\n".join(parts)
    return json.dumps(content)


def _is_nullable(schema: dict) -> bool:
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if schema.get("nullable") is True:
        return True
    for key in ("anyOf", "oneOf"):
        for v in schema.get(key) or []:
            if isinstance(v, dict) and _is_nullable(v):
                return True
    return False


def neutral_value(schema: dict) -> Any:
    """A neutral value for a property schema: null where nullable; else an enum's
    first value, "" / 0 / false / [] / {} by type."""
    if not isinstance(schema, dict):
        return None
    if _is_nullable(schema):
        return None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t == "string":
        return ""
    if t in ("integer", "number"):
        return 0
    if t == "boolean":
        return False
    if t == "array":
        return []
    if t == "object":
        return {}
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key) or []
        if variants:
            return neutral_value(variants[0])
    return None


def neutral_args(parameters: dict, **overrides: Any) -> dict:
    """Every property of `parameters` filled with its neutral value, then overrides."""
    props = (parameters or {}).get("properties") or {}
    args = {k: neutral_value(v) for k, v in props.items()}
    args.update(overrides)
    return args


# ---------------------------------------------------------------- validation

def validate_tools(body: dict) -> list[str]:
    errors: list[str] = []
    tools = body.get("tools")
    if tools is None:
        return errors
    if not isinstance(tools, list):
        return [f"tools is not a list: {type(tools).__name__}"]
    for i, t in enumerate(tools):
        if not isinstance(t, dict) or t.get("type") != "function":
            errors.append(f"tools[{i}]: not a function tool: {json.dumps(t)[:120]}")
            continue
        fn = t.get("function") or {}
        name = fn.get("name", f"#{i}")
        if not isinstance(fn.get("name"), str) or not _NAME_RE.match(fn["name"]):
            errors.append(f"tools[{i}]: bad name {fn.get('name')!r}")
        params = fn.get("parameters")
        if params is not None:
            if not isinstance(params, dict) or params.get("type") != "object":
                errors.append(f"{name}: parameters is not an object schema")
        if fn.get("strict") is True:
            _check_strict(params if isinstance(params, dict) else {}, name, "$", errors)
    return errors


def _check_strict(schema: Any, tool: str, path: str, errors: list[str]) -> None:
    if isinstance(schema, list):
        for i, s in enumerate(schema):
            _check_strict(s, tool, f"{path}[{i}]", errors)
        return
    if not isinstance(schema, dict):
        return
    if "oneOf" in schema:
        errors.append(f"{tool} (strict): oneOf at {path}")
    if "default" in schema:
        errors.append(f"{tool} (strict): default at {path} ({json.dumps(schema['default'])})")
    t = schema.get("type")
    is_object = t == "object" or (isinstance(t, list) and "object" in t) or "properties" in schema
    if is_object:
        if schema.get("additionalProperties") is not False:
            errors.append(
                f"{tool} (strict): object at {path} has additionalProperties="
                f"{json.dumps(schema.get('additionalProperties', '<missing>'))}, must be false"
            )
        keys = list((schema.get("properties") or {}).keys())
        req = schema.get("required") or []
        missing = [k for k in keys if k not in req]
        if missing:
            errors.append(f"{tool} (strict): object at {path} required lacks {missing}")
    for key in ("properties", "$defs", "definitions"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            for k, v in sub.items():
                _check_strict(v, tool, f"{path}.{key}.{k}", errors)
    for key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
        if key in schema and isinstance(schema[key], (dict, list)):
            _check_strict(schema[key], tool, f"{path}.{key}", errors)


# ---------------------------------------------------------------- server

class FakeOpenAI:
    def __init__(self, turns: list | None = None, *, reject_invalid: bool = False):
        self.turns: list = list(turns or [])
        self.reject_invalid = reject_invalid
        self.requests: list[dict] = []
        self.schema_errors: list[str] = []
        self.script_errors: list[str] = []
        self.handler_errors: list[str] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._n = 0

    # -- lifecycle
    def start(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):
                self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self):
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    raw = self.rfile.read(length) if length else b""
                    body = json.loads(raw or b"{}")
                except Exception as e:  # noqa: BLE001
                    self._send(400, {"error": {"message": f"bad json: {e}"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"unsupported path {self.path}",
                                               "type": "invalid_request_error"}})
                    return
                try:
                    status, payload, stream = fake._answer(body)
                except Exception as e:  # noqa: BLE001
                    fake.handler_errors.append(f"{type(e).__name__}: {e}")
                    self._send(500, {"error": {"message": f"fake provider crashed: {e}"}})
                    return
                if stream and status == 200:
                    self._send_stream(payload)
                else:
                    self._send(status, payload)

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, completion):
                chunks = _to_chunks(completion)
                data = b"".join(
                    b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks
                ) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reset(self, turns: list) -> None:
        with self._lock:
            self.turns = list(turns)
            self.requests = []
            self.schema_errors = []
            self.script_errors = []
            self.handler_errors = []

    # -- answering
    def _answer(self, body: dict) -> tuple[int, dict, bool]:
        with self._lock:
            idx = len(self.requests)
            self.requests.append(body)
            errs = validate_tools(body)
            for e in errs:
                if e not in self.schema_errors:
                    self.schema_errors.append(e)
            if errs and self.reject_invalid:
                return 400, {"error": {"message": "Invalid schema for function: " + "; ".join(errs),
                                       "type": "invalid_request_error", "code": "invalid_function_parameters"}}, False
            if idx < len(self.turns):
                turn = self.turns[idx]
            else:
                self.script_errors.append(f"request #{idx + 1} after the script's {len(self.turns)} turns")
                turn = text("script exhausted")
            self._n += 1
            n = self._n
        reply = turn(body) if callable(turn) else turn
        return 200, _completion(reply, body.get("model") or "gpt-fake", n), bool(body.get("stream"))


def _completion(reply: dict, model: str, n: int) -> dict:
    msg: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    if reply.get("tool_calls"):
        calls = []
        for j, (name, args) in enumerate(reply["tool_calls"]):
            calls.append({
                "id": f"call_{n}_{j}",
                "type": "function",
                "function": {"name": name,
                             "arguments": args if isinstance(args, str) else json.dumps(args)},
            })
        msg["tool_calls"] = calls
        finish = "tool_calls"
    else:
        msg["content"] = reply.get("content", "")
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _to_chunks(c: dict) -> list[dict]:
    msg = c["choices"][0]["message"]
    base = {"id": c["id"], "object": "chat.completion.chunk", "created": c["created"], "model": c["model"]}
    delta: dict[str, Any] = {"role": "assistant"}
    if msg.get("tool_calls"):
        delta["content"] = None
        delta["tool_calls"] = [
            {"index": i, "id": tc["id"], "type": "function",
             "function": {"name": tc["function"]["name"], "arguments": tc["function"]["arguments"]}}
            for i, tc in enumerate(msg["tool_calls"])
        ]
    else:
        delta["content"] = msg.get("content") or ""
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": c["choices"][0]["finish_reason"]}],
         "usage": c["usage"]},
    ]
