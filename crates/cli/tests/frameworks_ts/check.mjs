// `agent-exec mcp` driven by the Vercel AI SDK: `ai` (generateText, its agent loop) with the
// MCP tools loaded the documented way (`createMCPClient` from `@ai-sdk/mcp` over its stdio
// transport, then `await mcpClient.tools()`).
//
// Run: node check.mjs <path-to-agent-exec> <scratch-dir>
// from a directory where `npm ci` installed package.json / package-lock.json (ESM resolves
// packages next to this file, so copy the three files together; NODE_PATH does not apply to
// ESM):
//   d=target/tmp/frameworks-ts; mkdir -p $d
//   cp crates/cli/tests/frameworks_ts/{package.json,package-lock.json,check.mjs} $d/
//   (cd $d && npm ci --no-audit --no-fund) && node $d/check.mjs target/debug/agent-exec "$(mktemp -d)"
// `ai` is pinned to 6.x: 7.x declares `engines.node >=22` (this runs on Node 20), and its
// @ai-sdk/google sends `parametersJsonSchema` (the JSON Schema as it is) instead of the converted
// `parameters` this checks.
//
// Modes (no real model provider is ever called):
//   mock           the AI SDK's stand-in model (MockLanguageModelV3 from `ai/test`), scripted;
//                  it records every call's options (the tools and the prompt it is given).
//   mock-typed     the same, with the tools loaded with explicit schemas
//                  (`mcpClient.tools({ schemas })`, here the server's own input/output schemas):
//                  then a successful call gives the model `structuredContent` (as JSON), not
//                  the text content.
//   google         @ai-sdk/google against a fake Gemini server on 127.0.0.1 (generateContent);
//                  the fake validates functionDeclarations[].parameters by Gemini's rules.
//   openai         @ai-sdk/openai `.chat()` (Chat Completions) against a fake OpenAI server.
//
// No strict mode: the AI SDK has no strict conversion for tools. Its per-tool `strict: true`
// sends the MCP inputSchema as it is, which OpenAI refuses (400) for any tool with an optional
// property, whatever the server does. `openaiMode(true)` still checks that shape when run by hand.
//
// Prints `PASS ai-sdk/<mode>/<check>` or `FAIL ai-sdk/<mode>/<check>: <why>` per check, and
// `all framework checks passed` (exit 0) only when every check passed.

import http from 'node:http';
import fs from 'node:fs';
import { generateText, jsonSchema, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';

const FW = 'ai-sdk';
const [binary, scratch] = process.argv.slice(2);
if (!binary || !scratch) {
  console.error('usage: node check.mjs <agent-exec binary> <scratch dir>');
  process.exit(2);
}
fs.mkdirSync(scratch, { recursive: true });

const TOOLS = ['bash', 'bash_output', 'bash_input', 'bash_kill', 'bash_jobs', 'read_artifact', 'bash_session_close'];
const FAIL_CMD = "printf 'OUT-%s\\n' 7341; echo ERR-7342 >&2; exit 3";
const RUN_TIMEOUT_MS = 30_000;

// The whole script is bounded: a hung await anywhere ends it with a FAIL line.
const watchdog = setTimeout(() => {
  console.log(`FAIL ${FW}/watchdog/total-time: the script did not finish within 150 s`);
  process.exit(1);
}, 150_000);
watchdog.unref();

let failures = 0;
function clip(s, n = 400) {
  s = typeof s === 'string' ? s : JSON.stringify(s);
  return s.length > n ? s.slice(0, n) + '…' : s;
}
function report(mode, check, ok, why) {
  if (ok) console.log(`PASS ${FW}/${mode}/${check}`);
  else {
    failures++;
    console.log(`FAIL ${FW}/${mode}/${check}: ${clip(String(why).replace(/\s*\n\s*/g, ' '))}`);
  }
}
function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// Schema rules the real providers enforce.

const GEMINI_KEYS = new Set([
  'type', 'format', 'description', 'nullable', 'enum', 'properties', 'required', 'items',
  'minimum', 'maximum', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'anyOf',
  'propertyOrdering', 'title', 'example', 'default',
]);

function geminiProblems(schema, path, out) {
  if (schema == null || typeof schema !== 'object' || Array.isArray(schema)) {
    out.push(`${path}: not a schema object: ${clip(schema, 80)}`);
    return out;
  }
  for (const key of Object.keys(schema)) {
    if (!GEMINI_KEYS.has(key)) out.push(`${path}: key "${key}" is not in Gemini's Schema`);
  }
  if (schema.enum !== undefined) {
    if (schema.type !== 'string' || !Array.isArray(schema.enum) || !schema.enum.every(v => typeof v === 'string')) {
      out.push(`${path}: enum ${clip(schema.enum, 80)} must be strings with type "string" (type ${JSON.stringify(schema.type)})`);
    }
  }
  if (schema.properties && typeof schema.properties === 'object') {
    for (const [name, prop] of Object.entries(schema.properties)) {
      if (prop == null || typeof prop !== 'object' || prop.type === undefined) {
        out.push(`${path}.${name}: property has no "type" (keys: ${Object.keys(prop ?? {}).join(', ')})`);
      }
      geminiProblems(prop, `${path}.${name}`, out);
    }
  }
  if (schema.items !== undefined) geminiProblems(schema.items, `${path}[]`, out);
  if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((s, i) => geminiProblems(s, `${path}.anyOf[${i}]`, out));
  return out;
}

function isObjectSchema(s) {
  const t = s.type;
  return t === 'object' || (Array.isArray(t) && t.includes('object')) || s.properties !== undefined;
}

function openaiStrictProblems(schema, path, out) {
  if (schema == null || typeof schema !== 'object' || Array.isArray(schema)) return out;
  if ('oneOf' in schema) out.push(`${path}: has "oneOf"`);
  if ('default' in schema) out.push(`${path}: has "default" (${clip(schema.default, 40)})`);
  if (isObjectSchema(schema)) {
    if (schema.additionalProperties !== false) {
      out.push(`${path}: object without "additionalProperties": false (has ${clip(schema.additionalProperties, 60)})`);
    }
    const keys = Object.keys(schema.properties ?? {});
    const required = Array.isArray(schema.required) ? schema.required : [];
    const missing = keys.filter(k => !required.includes(k));
    if (missing.length) out.push(`${path}: "required" lacks ${missing.join(', ')}`);
  }
  for (const [name, prop] of Object.entries(schema.properties ?? {})) openaiStrictProblems(prop, `${path}.${name}`, out);
  if (schema.items !== undefined && !Array.isArray(schema.items)) openaiStrictProblems(schema.items, `${path}[]`, out);
  if (typeof schema.additionalProperties === 'object') openaiStrictProblems(schema.additionalProperties, `${path}{*}`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(schema[key])) schema[key].forEach((s, i) => openaiStrictProblems(s, `${path}.${key}[${i}]`, out));
  }
  for (const [name, def] of Object.entries(schema.$defs ?? schema.definitions ?? {})) openaiStrictProblems(def, `${path}.$defs.${name}`, out);
  return out;
}

// A neutral value for a schema, as a strict-mode model fills every property it was given.
function isNullable(s) {
  if (s.nullable === true) return true;
  if (Array.isArray(s.type) && s.type.includes('null')) return true;
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(s[key]) && s[key].some(b => b && b.type === 'null')) return true;
  }
  return false;
}
function neutral(s) {
  if (s == null || typeof s !== 'object') return null;
  if (isNullable(s)) return null;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if ('const' in s) return s.const;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string': return '';
    case 'integer':
    case 'number': return 0;
    case 'boolean': return false;
    case 'array': return [];
    case 'object': return {};
  }
  for (const key of ['anyOf', 'oneOf']) if (Array.isArray(s[key]) && s[key].length) return neutral(s[key][0]);
  return null;
}
// The arguments without their empty neutral values, for a short FAIL line.
function notable(args) {
  return JSON.stringify(Object.fromEntries(Object.entries(args ?? {}).filter(([, v]) => v !== '' && v !== 0 && v !== false && v !== null)));
}
// The text a tool result carries, for a short FAIL line.
function resultText(s) {
  const texts = [...s.matchAll(/\\?"text\\?":\\?"((?:[^"\\]|\\.)*?)\\?"/g)].map(m => m[1]);
  return texts.length ? texts.join(' ') : s;
}
function fillEvery(schema, fixed) {
  const args = {};
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) args[name] = neutral(prop);
  return { ...args, ...fixed };
}

// ---------------------------------------------------------------------------------------------
// What the scripted model does, per scenario. The scenario's name is in the user prompt; the
// turn is the number of tool results the request already carries.

const SCENARIOS = {
  'output-fail': [() => ({ tool: 'bash', args: { command: FAIL_CMD } })],
  'output-ok': [() => ({ tool: 'bash', args: { command: 'echo OK-5150' } })],
  error: [() => ({ tool: 'bash_output', args: { job_id: '424242' } })],
  survives: [1, 2, 3].map(n => () => ({ tool: 'bash', args: { command: `printf 'SURV-%s\\n' 80${n}; exit 3` } })),
  'strict-bash': [schemaOf => ({ tool: 'bash', args: fillEvery(schemaOf('bash'), { command: 'echo STRICT-99' }) })],
  'strict-artifact': [schemaOf => ({ tool: 'read_artifact', args: fillEvery(schemaOf('read_artifact'), { id: 'artifact://nope' }) })],
};
function nextAction(scenario, turn, schemaOf) {
  const steps = SCENARIOS[scenario];
  if (!steps || turn >= steps.length) return { text: `done ${scenario}` };
  return steps[turn](schemaOf);
}
function scenarioOf(text) {
  return /SCENARIO=([a-z-]+)/.exec(text)?.[1];
}

// ---------------------------------------------------------------------------------------------
// A fake provider server: records every request body, answers from `respond(path, body)`.

async function startFake(respond) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch (e) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `bad JSON: ${e.message}` } }));
        return;
      }
      requests.push({ path: req.url, body });
      let answer;
      try {
        answer = respond(req.url, body);
      } catch (e) {
        answer = { status: 500, body: { error: { message: `fake provider: ${e.stack}` } } };
      }
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return { requests, url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

// ---------------------------------------------------------------------------------------------
// Modes. Each one gives a model and reads what a recorded request carries.

function mockMode(typed) {
  const calls = [];
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  let id = 0;
  const toolResults = options =>
    options.prompt.filter(m => m.role === 'tool').flatMap(m => m.content.filter(p => p.type === 'tool-result'));
  const model = new MockLanguageModelV3({
    doGenerate: async options => {
      const userText = JSON.stringify(options.prompt.filter(m => m.role === 'user'));
      calls.push({ scenario: scenarioOf(userText), body: options });
      const schemaOf = name => options.tools?.find(t => t.name === name)?.inputSchema;
      const action = nextAction(scenarioOf(userText), toolResults(options).length, schemaOf);
      if (action.text) {
        return { content: [{ type: 'text', text: action.text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      }
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${++id}`, toolName: action.tool, input: JSON.stringify(action.args) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
  return {
    name: typed ? 'mock-typed' : 'mock',
    model,
    strict: false,
    typed,
    requests: scenario => calls.filter(c => c.scenario === scenario).map(c => c.body),
    toolNames: body => (body.tools ?? []).map(t => t.name),
    lastToolResult: body => JSON.stringify(toolResults(body).at(-1)?.output ?? null),
    toolResultCount: body => toolResults(body).length,
    schemaOf: (body, name) => body.tools?.find(t => t.name === name)?.inputSchema,
    // No provider request builder runs: nothing to validate beyond the tools being there.
    schemaProblems: null,
    close: () => {},
  };
}

async function googleMode() {
  const functionResponses = body =>
    (body.contents ?? []).flatMap(c => (c.parts ?? []).filter(p => p.functionResponse).map(p => p.functionResponse));
  const declarations = body => (body.tools ?? []).flatMap(t => t.functionDeclarations ?? []);
  const fake = await startFake((path, body) => {
    if (!/\/models\/[^/:]+:generateContent$/.test(path.split('?')[0])) {
      return { status: 404, body: { error: { code: 404, message: `fake Gemini: no route ${path}` } } };
    }
    const schemaOf = name => declarations(body).find(d => d.name === name)?.parameters;
    const action = nextAction(scenarioOf(JSON.stringify(body.contents?.[0] ?? '')), functionResponses(body).length, schemaOf);
    const part = action.text ? { text: action.text } : { functionCall: { name: action.tool, args: action.args } };
    return {
      body: {
        candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
        modelVersion: 'gemini-2.5-flash',
      },
    };
  });
  const google = createGoogleGenerativeAI({ baseURL: `${fake.url}/v1beta`, apiKey: 'x' });
  return {
    name: 'google',
    model: google('gemini-2.5-flash'),
    strict: false,
    requests: scenario => fake.requests.filter(r => scenarioOf(JSON.stringify(r.body?.contents?.[0] ?? '')) === scenario).map(r => r.body),
    toolNames: body => declarations(body).map(d => d.name),
    lastToolResult: body => JSON.stringify(functionResponses(body).at(-1) ?? null),
    toolResultCount: body => functionResponses(body).length,
    schemaOf: (body, name) => declarations(body).find(d => d.name === name)?.parameters,
    schemaProblems: body => {
      const out = [];
      for (const d of declarations(body)) {
        if (d.parametersJsonSchema !== undefined) out.push(`${d.name}: sent as parametersJsonSchema, not parameters`);
        else if (d.parameters !== undefined) geminiProblems(d.parameters, d.name, out);
      }
      return out;
    },
    close: fake.close,
  };
}

async function openaiMode(strict) {
  const toolMessages = body => (body.messages ?? []).filter(m => m.role === 'tool');
  const functions = body => (body.tools ?? []).filter(t => t.type === 'function').map(t => t.function);
  let id = 0;
  const fake = await startFake((path, body) => {
    if (!path.split('?')[0].endsWith('/chat/completions')) {
      return { status: 404, body: { error: { message: `fake OpenAI: no route ${path}` } } };
    }
    const userText = JSON.stringify((body.messages ?? []).filter(m => m.role === 'user'));
    const schemaOf = name => functions(body).find(f => f.name === name)?.parameters;
    const action = nextAction(scenarioOf(userText), toolMessages(body).length, schemaOf);
    const message = action.text
      ? { role: 'assistant', content: action.text }
      : {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${++id}`, type: 'function', function: { name: action.tool, arguments: JSON.stringify(action.args) } }],
        };
    return {
      body: {
        id: `chatcmpl-${id}`,
        object: 'chat.completion',
        created: 1700000000,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: action.text ? 'stop' : 'tool_calls' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      },
    };
  });
  const openai = createOpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'x' });
  return {
    name: strict ? 'openai-strict' : 'openai',
    model: openai.chat('gpt-4.1'),
    strict,
    requests: scenario => fake.requests.filter(r => scenarioOf(JSON.stringify((r.body?.messages ?? []).filter(m => m.role === 'user'))) === scenario).map(r => r.body),
    toolNames: body => functions(body).map(f => f.name),
    lastToolResult: body => JSON.stringify(toolMessages(body).at(-1) ?? null),
    toolResultCount: body => toolMessages(body).length,
    schemaOf: (body, name) => functions(body).find(f => f.name === name)?.parameters,
    schemaProblems: body => {
      const out = [];
      for (const f of functions(body)) {
        const p = f.parameters;
        if (p == null || p.type !== 'object') out.push(`${f.name}: parameters is not an object schema: ${clip(p, 80)}`);
        if (!strict) continue;
        if (f.strict !== true) out.push(`${f.name}: function sent without "strict": true (has ${JSON.stringify(f.strict)})`);
        openaiStrictProblems(p, f.name, out);
      }
      return out;
    },
    close: fake.close,
  };
}

// ---------------------------------------------------------------------------------------------
// One mode: its own MCP client (one server process), the scenarios, the checks.

async function runMode(mode) {
  const m = mode.name;
  let mcp;
  try {
    mcp = await withTimeout(
      createMCPClient({
        transport: new Experimental_StdioMCPTransport({ command: binary, args: ['mcp'], cwd: scratch, stderr: 'ignore' }),
        initializationOptions: { timeout: 20_000 },
      }),
      25_000,
      'createMCPClient',
    );
  } catch (e) {
    report(m, 'tools', false, `the MCP client did not start: ${e.message}`);
    return;
  }
  try {
    let tools;
    if (mode.typed) {
      const listed = await withTimeout(mcp.listTools(), 20_000, 'mcpClient.listTools()');
      const schemas = Object.fromEntries(
        listed.tools.map(t => [
          t.name,
          { inputSchema: jsonSchema(t.inputSchema), ...(t.outputSchema ? { outputSchema: jsonSchema(t.outputSchema) } : {}) },
        ]),
      );
      tools = await withTimeout(mcp.tools({ schemas }), 20_000, 'mcpClient.tools({ schemas })');
    } else {
      tools = await withTimeout(mcp.tools(), 20_000, 'mcpClient.tools()');
    }
    if (mode.strict) {
      // The AI SDK's strict mode is a per-tool flag; it passes the MCP inputSchema as it is.
      tools = Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, { ...t, strict: true }]));
    }

    const runs = {};
    async function run(scenario, steps = 3) {
      try {
        const result = await generateText({
          model: mode.model,
          tools,
          stopWhen: stepCountIs(steps),
          prompt: `SCENARIO=${scenario} Use the tools as told.`,
          maxRetries: 0,
          timeout: RUN_TIMEOUT_MS,
        });
        runs[scenario] = { result };
      } catch (e) {
        runs[scenario] = { error: e };
      }
      return runs[scenario];
    }
    // What the model was given after its n-th tool call in a scenario (n from 1).
    function after(scenario, n) {
      const r = runs[scenario];
      if (r?.error) return { why: `generateText threw: ${r.error.name}: ${r.error.message}` };
      const req = mode.requests(scenario).find(b => mode.toolResultCount(b) === n);
      if (!req) return { why: `no model request carried tool result #${n} (requests: ${mode.requests(scenario).length})` };
      return { text: mode.lastToolResult(req) };
    }

    await run('output-fail');
    const first = mode.requests('output-fail')[0];

    // tools
    {
      const names = first ? mode.toolNames(first) : [];
      const missing = TOOLS.filter(t => !names.includes(t));
      report(m, 'tools', first && missing.length === 0, first ? `missing ${missing.join(', ')}; the model got [${names.join(', ')}]` : 'no model request recorded');
    }

    // schema
    if (mode.schemaProblems) {
      let problems = first ? mode.schemaProblems(first) : ['no model request recorded'];
      let note = '';
      if (mode.strict) {
        // The AI SDK sends the MCP inputSchema as it is (it makes no strict conversion), so each
        // optional property breaks OpenAI's "required lists every property" rule: those last.
        const lacks = problems.filter(p => p.includes('"required" lacks'));
        problems = [...problems.filter(p => !lacks.includes(p)), ...lacks];
        note = ` (a real OpenAI would answer 400; ${lacks.length} of them are optional properties, which the AI SDK sends unconverted under strict)`;
      }
      report(m, 'schema', problems.length === 0, `${problems.length} problem(s)${note}: ${problems.join('; ')}`);
    }

    // output
    {
      const fail = after('output-fail', 1);
      await run('output-ok');
      const ok = after('output-ok', 1);
      const whys = [];
      if (fail.why) whys.push(`failing command: ${fail.why}`);
      else if (!fail.text.includes('OUT-7341') || !fail.text.includes('ERR-7342')) whys.push(`failing command: the tool result lacks OUT-7341/ERR-7342: ${clip(fail.text, 200)}`);
      if (ok.why) whys.push(`echo OK-5150: ${ok.why}`);
      else if (!ok.text.includes('OK-5150')) whys.push(`echo OK-5150: the tool result lacks it: ${clip(ok.text, 200)}`);
      report(m, 'output', whys.length === 0, whys.join(' | '));
    }

    // error
    {
      await run('error');
      const e = after('error', 1);
      report(m, 'error', !e.why && e.text.includes('424242'), e.why ?? `the tool result does not name 424242: ${clip(e.text, 300)}`);
    }

    // survives-failures: three failing commands in a row, each output seen by the next request
    {
      await run('survives', 4);
      const whys = [];
      for (const n of [1, 2, 3]) {
        const a = after('survives', n);
        if (a.why) { whys.push(`#${n}: ${a.why}`); break; }
        if (!a.text.includes(`SURV-80${n}`)) whys.push(`#${n}: the tool result lacks SURV-80${n}: ${clip(a.text, 150)}`);
      }
      const r = runs.survives?.result;
      if (!whys.length && r && r.text !== 'done survives') whys.push(`the run did not reach the final answer (text ${JSON.stringify(r.text)}, ${r.steps.length} steps)`);
      report(m, 'survives-failures', whys.length === 0, whys.join(' | '));
    }

    // strict-call: every property of the converted schema filled with a neutral value
    if (mode.strict) {
      await run('strict-bash');
      await run('strict-artifact');
      const whys = [];
      const b = after('strict-bash', 1);
      const bashArgs = first ? fillEvery(mode.schemaOf(first, 'bash'), { command: 'echo STRICT-99' }) : null;
      if (b.why) whys.push(`bash: ${b.why}`);
      else if (!b.text.includes('STRICT-99')) whys.push(`bash (every property neutral; non-empty: ${clip(notable(bashArgs), 120)}) -> ${clip(resultText(b.text), 120)}`);
      const a = after('strict-artifact', 1);
      const artArgs = first ? fillEvery(mode.schemaOf(first, 'read_artifact'), { id: 'artifact://nope' }) : null;
      if (a.why) whys.push(`read_artifact: ${a.why}`);
      else if (!a.text.includes('nope')) whys.push(`read_artifact (every property neutral; non-empty: ${clip(notable(artArgs), 80)}) -> ${clip(resultText(a.text), 120)}`);
      report(m, 'strict-call', whys.length === 0, whys.join(' | '));
    }
  } catch (e) {
    report(m, 'run', false, `${e.name}: ${e.message}`);
  } finally {
    await withTimeout(mcp.close(), 10_000, 'mcpClient.close()').catch(e => report(m, 'close', false, e.message));
  }
}

const modes = [];
try {
  modes.push(mockMode(false));
  modes.push(mockMode(true));
  modes.push(await googleMode());
  modes.push(await openaiMode(false));
} catch (e) {
  report('setup', 'fake-providers', false, e.stack);
}
for (const mode of modes) {
  await runMode(mode);
  mode.close();
}

if (failures === 0) {
  console.log('all framework checks passed');
  process.exit(0);
}
process.exit(1);
