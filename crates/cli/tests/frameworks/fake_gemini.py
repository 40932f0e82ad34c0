"""A fake Gemini API server (stdlib only) for the framework checks.

It speaks just enough of the Gemini API (`POST /v1beta/models/{model}:generateContent`, non-streaming) for a
real provider client (google-genai, Pydantic AI's GoogleModel) to run against it: it RECORDS every request
body, answers from a script (turn 1 -> a tool call, turn 2 -> a final text, ...), and checks the tool schemas
the client sent the way Gemini would, recording (not raising) what it would reject, so one run measures all.

Schema rules (`tools[].functionDeclarations[].parameters`, or `parametersJsonSchema` / `parameters_json_schema`
when the client sends that instead; `schema_fields` records which; the same rules are applied to it): only keys of Gemini's Schema, every property has a `type`, enum
values are strings with type string.

Usage:
    fake = FakeGemini(); fake.start()
    fake.set_script([call('bash', {'command': 'echo hi'}), text('done')])
    ... point the client at fake.base_url ...
    fake.requests  -> [{'path':..., 'model':..., 'body':{...}, 'schema_errors':[...]}, ...]
    fake.stop()
A turn may also be a callable taking the request body and returning a turn.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GEMINI_SCHEMA_KEYS = frozenset(
    {
        'type', 'format', 'description', 'nullable', 'enum', 'properties', 'required', 'items',
        'minimum', 'maximum', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'anyOf',
        'propertyOrdering', 'title', 'example', 'default',
    }
)
GEMINI_TYPES = frozenset({'string', 'number', 'integer', 'boolean', 'array', 'object', 'null'})


def validate_gemini_schema(schema: Any, where: str = '') -> list[str]:
    """Return what Gemini would reject in one function declaration's parameter schema."""
    errors: list[str] = []
    if not isinstance(schema, dict):
        return [f'{where or "<root>"}: schema is {type(schema).__name__}, not an object']
    for key in schema:
        if key not in GEMINI_SCHEMA_KEYS:
            errors.append(f'{where or "<root>"}: key {key!r} is not in Gemini Schema')
    typ = schema.get('type')
    if typ is not None:
        if not isinstance(typ, str) or typ.lower() not in GEMINI_TYPES:
            errors.append(f'{where or "<root>"}: type {typ!r} is not one Gemini type')
    if 'enum' in schema:
        enum = schema['enum']
        if not isinstance(enum, list) or not all(isinstance(v, str) for v in enum):
            errors.append(f'{where}: enum values must be strings, got {enum!r}')
        if not (isinstance(typ, str) and typ.lower() == 'string'):
            errors.append(f'{where}: enum needs type string, has type {typ!r}')
    props = schema.get('properties')
    if props is not None:
        if not isinstance(props, dict):
            errors.append(f'{where}: properties is not an object')
        else:
            for name, sub in props.items():
                if not isinstance(sub, dict) or 'type' not in sub:
                    keys = sorted(sub) if isinstance(sub, dict) else sub
                    errors.append(f'{where}.{name}: property has no type (keys {keys})')
                errors.extend(validate_gemini_schema(sub, f'{where}.{name}'))
    if 'items' in schema:
        errors.extend(validate_gemini_schema(schema['items'], f'{where}[]'))
    if 'anyOf' in schema:
        if not isinstance(schema['anyOf'], list):
            errors.append(f'{where}: anyOf is not a list')
        else:
            for i, sub in enumerate(schema['anyOf']):
                errors.extend(validate_gemini_schema(sub, f'{where}.anyOf[{i}]'))
    return errors


def function_declarations(body: dict) -> list[dict]:
    out: list[dict] = []
    for tool in body.get('tools') or []:
        out.extend(tool.get('functionDeclarations') or tool.get('function_declarations') or [])
    return out


def tool_names(body: dict) -> list[str]:
    return [d.get('name') for d in function_declarations(body)]


def function_responses(body: dict) -> list[dict]:
    """The functionResponse parts of the last content of a request: the tool results the model is given."""
    contents = body.get('contents') or []
    if not contents:
        return []
    parts = contents[-1].get('parts') or []
    return [p['functionResponse'] for p in parts if 'functionResponse' in p]


def call(name: str, args: dict) -> dict:
    return {'call': [(name, args)]}


def calls(*pairs: tuple[str, dict]) -> dict:
    return {'call': list(pairs)}


def text(s: str) -> dict:
    return {'text': s}


class FakeGemini:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.schema_fields: set[str] = set()
        self._script: list[Any] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script ---------------------------------------------------------------------------------------------
    def set_script(self, turns: list[Any]) -> None:
        """Start a new scenario: forget the recorded requests (and schema fields); answer with `turns`, one per request."""
        with self._lock:
            self._script = list(turns)
            self.requests = []
            self.schema_fields = set()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f'http://127.0.0.1:{self._server.server_address[1]}'

    @property
    def schema_errors(self) -> list[str]:
        return [e for r in self.requests for e in r['schema_errors']]

    # -- server ---------------------------------------------------------------------------------------------
    def start(self) -> 'FakeGemini':
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                path = self.path.split('?', 1)[0]
                m = re.fullmatch(r'/v1(?:beta|alpha)?/models/([^/:]+):(generateContent|streamGenerateContent)', path)
                if not m:
                    self._send(404, {'error': {'code': 404, 'message': f'fake gemini: no route {path}',
                                               'status': 'NOT_FOUND'}})
                    return
                try:
                    body = json.loads(raw or b'{}')
                except ValueError as e:
                    self._send(400, {'error': {'code': 400, 'message': f'bad json: {e}',
                                               'status': 'INVALID_ARGUMENT'}})
                    return
                if m.group(2) == 'streamGenerateContent':
                    self._send(400, {'error': {'code': 400, 'message': 'fake gemini: streaming not supported',
                                               'status': 'INVALID_ARGUMENT'}})
                    return
                self._send(200, fake._answer(m.group(1), path, body))

        self._server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name='fake-gemini', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- answering ------------------------------------------------------------------------------------------
    def _check_schemas(self, body: dict) -> list[str]:
        errors: list[str] = []
        for decl in function_declarations(body):
            name = decl.get('name')
            # Gemini parses proto JSON, which takes the camelCase and the snake_case spelling alike.
            fields = [f for f in ('parameters', 'parametersJsonSchema', 'parameters_json_schema') if f in decl]
            if len(fields) > 1:
                errors.append(f'{name}: both {fields[0]} and {fields[1]} (mutually exclusive)')
            if not fields:
                continue
            field = fields[0]
            self.schema_fields.add(field)
            errors.extend(f'{name}.{field}{e}' if e.startswith(('.', '[')) else f'{name}.{field} {e}'
                          for e in validate_gemini_schema(decl[field]))
        return errors

    def _answer(self, model: str, path: str, body: dict) -> dict:
        with self._lock:
            record = {'path': path, 'model': model, 'body': body, 'schema_errors': self._check_schemas(body)}
            self.requests.append(record)
            turn = self._script.pop(0) if self._script else text('fake gemini: script exhausted')
        if callable(turn):
            turn = turn(body)
        if 'call' in turn:
            parts = [{'functionCall': {'name': n, 'args': a}} for n, a in turn['call']]
        else:
            parts = [{'text': turn['text']}]
        return {
            'candidates': [{'content': {'role': 'model', 'parts': parts}, 'finishReason': 'STOP', 'index': 0}],
            'usageMetadata': {'promptTokenCount': 10, 'candidatesTokenCount': 5, 'totalTokenCount': 15},
            'modelVersion': model,
            'responseId': f'fake-{len(self.requests)}',
        }
