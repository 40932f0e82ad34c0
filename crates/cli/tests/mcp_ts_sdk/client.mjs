#!/usr/bin/env node
// Checks `agent-exec mcp` with the official MCP TypeScript SDK (@modelcontextprotocol/sdk) as
// the client.
//
// Usage:
//     node client.mjs /path/to/agent-exec WORKDIR
//
// Starts `agent-exec mcp --sandbox off` (cwd=WORKDIR, a scratch directory owned by the caller)
// through the SDK's Client and StdioClientTransport, runs every check below in order and prints
// `ok: <check>` for each one that passes and `FAILED: <check>` with what was expected and what
// came for each one that does not. Every check runs even after a failure (a server that closed
// the connection is started again for the checks that follow, and that is reported); at the
// end it prints `all TypeScript SDK checks passed` and exits 0, or the number of failed checks
// and exits 1.
//
// Every wait is bounded (a timeout on each request, a bound on the whole run); nothing asserts
// on how fast anything was.
//
// Unless AGENT_EXEC_ARTIFACTS is already set, the server's artifacts are kept in
// WORKDIR/artifacts so the run leaves nothing behind outside WORKDIR.

import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';
import Ajv from 'ajv';

const CALL_TIMEOUT_MS = 30_000; // bound on any single request
const STARTUP_TIMEOUT_MS = 30_000; // bound on spawning the server and the initialize handshake
const OVERALL_TIMEOUT_MS = 540_000; // bound on the whole run (the Rust test kills at 10 min)
const EXIT_TIMEOUT_MS = 10_000; // bound on the server's exit once the client closed

const EXPECTED_TOOLS = [
    'bash',
    'bash_output',
    'bash_input',
    'bash_kill',
    'bash_jobs',
    'read_artifact',
    'bash_session_close',
];

const BIG_BYTES = 12_000_000; // `yes abcdefghij | head -c 12000000`
const BIG_LINE = 'abcdefghij\n';
const MAX_READ_TEXT_BYTES = 70 * 1024; // a read_artifact answer a model can take in
const READ_ON = /Read on with offset (\d+)/;

// --- console capture ----------------------------------------------------------------------
// The SDK (and Ajv inside it) report schema problems on console.warn/console.error, e.g.
// `unknown format "uint64" ignored in schema at path "#/properties/…"`. Everything printed
// there is recorded (and still printed) so check (a) can look at it.

const consoleMessages = [];
for (const level of ['warn', 'error']) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
        consoleMessages.push({
            level,
            text: args.map(a => (typeof a === 'string' ? a : safeJson(a))).join(' '),
        });
        original(...args);
    };
}

// --- helpers ------------------------------------------------------------------------------

class CheckFailed extends Error {}

function safeJson(value) {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    try {
        return JSON.stringify(value) ?? String(value);
    } catch {
        return String(value);
    }
}

function clip(text, max = 2000) {
    return text.length > max ? `${text.slice(0, max)}... [${text.length} chars]` : text;
}

function fail(expected, got) {
    throw new CheckFailed(`expected ${expected}\n  got: ${clip(typeof got === 'string' ? got : safeJson(got))}`);
}

function expect(cond, expected, got) {
    if (!cond) fail(expected, typeof got === 'function' ? got() : got);
}

function textOf(result) {
    return (result?.content ?? [])
        .filter(c => c.type === 'text')
        .map(c => c.text)
        .join('');
}

function describe(result) {
    return safeJson({
        isError: result?.isError ?? false,
        text: clip(textOf(result), 1500),
        structuredContent: result?.structuredContent,
    });
}

/** Races a promise against a timer; a timeout is a check failure naming `what`. */
async function bounded(promise, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckFailed(`expected ${what} within ${ms / 1000}s\n  got: no answer (timed out)`)), ms);
    });
    try {
        return await Promise.race([promise, timeout]);
    } finally {
        clearTimeout(timer);
    }
}

function processGone(pid) {
    try {
        process.kill(pid, 0);
    } catch (e) {
        return e.code === 'ESRCH';
    }
    try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        // The state follows the parenthesised command name, which may itself hold spaces.
        return stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[0] === 'Z';
    } catch {
        return true;
    }
}

// --- the connection -----------------------------------------------------------------------

/** One client and its server; `closed` and `transportErrors` say what happened to it. */
class Connection {
    constructor(binary, workdir, generation) {
        const env = { ...process.env };
        env.AGENT_EXEC_ARTIFACTS ??= path.join(workdir, 'artifacts');
        this.generation = generation;
        this.closed = false;
        this.transportErrors = [];
        this.transport = new StdioClientTransport({
            command: binary,
            args: ['mcp', '--sandbox', 'off'],
            cwd: workdir,
            env,
            stderr: 'inherit',
        });
        this.client = new Client({ name: 'agent-exec-ts-sdk-test', version: '0.0.0' });
        this.client.onerror = e => this.transportErrors.push(safeJson(e));
        this.client.onclose = () => {
            this.closed = true;
        };
    }

    async open() {
        await bounded(
            this.client.connect(this.transport, { timeout: STARTUP_TIMEOUT_MS }),
            STARTUP_TIMEOUT_MS + 5_000,
            'the initialize handshake',
        );
        this.pid = this.transport.pid;
        // The server's process, to see how it ended (check g).
        this.exited = new Promise(resolve => {
            const child = this.transport._process;
            if (!child) return resolve({ code: null, signal: null, unknown: true });
            if (child.exitCode !== null || child.signalCode !== null) {
                return resolve({ code: child.exitCode, signal: child.signalCode });
            }
            child.once('exit', (code, signal) => resolve({ code, signal }));
        });
    }

    /** Why the connection is unusable, for failure messages. */
    closedHow() {
        const errors = this.transportErrors.length ? `; transport errors: ${this.transportErrors.join(' | ')}` : '';
        return `the connection to the server closed${errors}`;
    }

    async listTools() {
        try {
            return await bounded(
                this.client.listTools(undefined, { timeout: CALL_TIMEOUT_MS }),
                CALL_TIMEOUT_MS + 5_000,
                'a tools/list answer',
            );
        } catch (e) {
            if (e instanceof CheckFailed) throw e;
            fail('a tools/list answer', `${e?.name}: ${e?.message}${this.closed ? ` (${this.closedHow()})` : ''}`);
        }
    }

    /** tools/call with a bounded wait; protocol errors and SDK exceptions become check failures. */
    async call(name, args, { timeout = CALL_TIMEOUT_MS, onprogress } = {}) {
        const what = `tools/call ${name} ${JSON.stringify(args)}`;
        const options = { timeout };
        if (onprogress) options.onprogress = onprogress;
        try {
            return await bounded(
                this.client.callTool({ name, arguments: args }, undefined, options),
                timeout + 5_000,
                `a result for ${what}`,
            );
        } catch (e) {
            if (e instanceof CheckFailed) throw e;
            // McpError (a JSON-RPC error, the SDK rejecting structuredContent against the
            // outputSchema, a request timeout) or the transport closing under the call.
            const code = e?.code !== undefined ? ` (code ${e.code})` : '';
            const data = e?.data !== undefined ? ` data=${safeJson(e.data)}` : '';
            const closed = this.closed ? `; ${this.closedHow()}` : '';
            fail(`a tool result for ${what}`, `${e?.name}${code}: ${e?.message}${data}${closed}`);
        }
    }

    async callOk(name, args, opts) {
        const result = await this.call(name, args, opts);
        expect(!result.isError, `${name} ${JSON.stringify(args)} to succeed (isError false)`, () => describe(result));
        return result;
    }
}

// --- checks -------------------------------------------------------------------------------

/** (a) the tool list. The console part of (a) is `checkNoUnknownFormat`, at the end. */
async function checkToolsList(ctx) {
    const listing = await ctx.conn.listTools();
    ctx.tools = listing.tools;
    const names = listing.tools.map(t => t.name);
    const missing = EXPECTED_TOOLS.filter(n => !names.includes(n));
    const extra = names.filter(n => !EXPECTED_TOOLS.includes(n));
    expect(
        missing.length === 0 && extra.length === 0 && names.length === EXPECTED_TOOLS.length,
        `exactly the tools ${JSON.stringify(EXPECTED_TOOLS)}`,
        `${JSON.stringify(names)} (missing ${JSON.stringify(missing)}, unexpected ${JSON.stringify(extra)})`,
    );
}

/** (a) nothing the SDK printed during listTools/callTool says `unknown format`. */
async function checkNoUnknownFormat(ctx) {
    const hits = consoleMessages.filter(m => m.text.includes('unknown format'));
    expect(
        hits.length === 0,
        'no console.warn/console.error message containing "unknown format" from the SDK during listTools and callTool ' +
            '(the SDK compiles every outputSchema with Ajv; a "format" Ajv does not know is warned about and ignored)',
        `${hits.length} such message(s):\n    ${hits.map(m => `console.${m.level}: ${m.text}`).join('\n    ')}`,
    );
}

/** (b) every inputSchema and outputSchema compiles under Ajv's strict mode, without ajv-formats. */
async function checkSchemasStrict(ctx) {
    expect(Array.isArray(ctx.tools), 'the tool list (from check a)', ctx.tools);
    const problems = [];
    for (const tool of ctx.tools) {
        for (const key of ['inputSchema', 'outputSchema']) {
            const schema = tool[key];
            if (schema === undefined) {
                if (key === 'inputSchema') problems.push(`${tool.name}.${key}: missing`);
                else problems.push(`${tool.name}.${key}: missing (every tool should describe its structuredContent)`);
                continue;
            }
            const draft07 = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07');
            const ajv = draft07 ? new Ajv({ strict: true }) : new Ajv2020({ strict: true });
            try {
                ajv.compile(schema);
            } catch (e) {
                problems.push(`${tool.name}.${key} (${draft07 ? 'draft-07' : '2020-12'} Ajv, strict): ${e?.message}`);
            }
        }
    }
    expect(problems.length === 0, 'every inputSchema and outputSchema to compile with Ajv strict mode', `${problems.length} error(s):\n    ${problems.join('\n    ')}`);
}

/** (c) */
async function checkBashEcho(ctx) {
    const result = await ctx.conn.callOk('bash', { command: 'echo hello' });
    expect(textOf(result).includes('hello'), 'bash echo hello: text containing "hello"', () => describe(result));
    const sc = result.structuredContent;
    expect(sc && typeof sc === 'object', 'structuredContent (an object) in the result', () => describe(result));
}

/** (d) a 12 MB output: its artifact read through the SDK's stdio transport (10 MiB a message). */
async function checkBigOutput(ctx) {
    ctx.bigGeneration = ctx.conn.generation;
    const result = await ctx.conn.callOk('bash', { command: `yes abcdefghij | head -c ${BIG_BYTES}` }, { timeout: 120_000 });
    const sc = result.structuredContent;
    const artifact = sc?.truncation?.artifact_id;
    expect(
        typeof artifact === 'string' && artifact !== '',
        'structuredContent.truncation.artifact_id (a string) for 12 MB of output',
        () => describe(result),
    );
    expect(
        sc.truncation.total_bytes === BIG_BYTES,
        `structuredContent.truncation.total_bytes ${BIG_BYTES}`,
        () => describe(result),
    );
    ctx.bigArtifact = artifact;
}

function needArtifact(ctx) {
    expect(typeof ctx.bigArtifact === 'string', 'the artifact id of the 12 MB output (from the check before)', ctx.bigArtifact);
    return ctx.bigArtifact;
}

async function checkReadWholeArtifact(ctx) {
    const id = needArtifact(ctx);
    const args = { id, limit: BIG_BYTES };
    const result = await ctx.conn.callOk('read_artifact', args, { timeout: 120_000 });
    const text = textOf(result);
    const bytes = Buffer.byteLength(text, 'utf8');
    expect(
        bytes <= MAX_READ_TEXT_BYTES,
        `read_artifact ${JSON.stringify(args)}: text of at most ${MAX_READ_TEXT_BYTES} bytes`,
        `${bytes} bytes: ${clip(text.slice(-600), 600)}`,
    );
    const m = READ_ON.exec(text);
    expect(m !== null, `read_artifact ${JSON.stringify(args)}: text saying "Read on with offset N"`, () => `…${text.slice(-800)}`);
    const start = text.slice(0, BIG_LINE.length * 3);
    expect(start === BIG_LINE.repeat(3), `read_artifact ${JSON.stringify(args)}: text starting with the output ("abcdefghij\\n"…)`, start);
    ctx.readOn = Number(m[1]);
    expect(
        ctx.readOn > 0 && ctx.readOn < BIG_BYTES,
        `an offset N in "Read on with offset N" between 1 and ${BIG_BYTES - 1}`,
        m[0],
    );
}

async function checkReadOn(ctx) {
    const id = needArtifact(ctx);
    expect(Number.isInteger(ctx.readOn), 'the offset from the "Read on with offset N" note (from the check before)', ctx.readOn);
    const args = { id, offset: ctx.readOn };
    const result = await ctx.conn.callOk('read_artifact', args);
    const text = textOf(result);
    // The artifact is "abcdefghij\n" over and over, so where any byte offset starts is known.
    const at = ctx.readOn % BIG_LINE.length;
    const want = (BIG_LINE.slice(at) + BIG_LINE.repeat(3)).slice(0, 20);
    expect(text.startsWith(want), `read_artifact ${JSON.stringify(args)}: text starting with ${JSON.stringify(want)} (the bytes at offset ${ctx.readOn})`, () => describe(result));
    expect(Buffer.byteLength(text, 'utf8') <= MAX_READ_TEXT_BYTES, `read_artifact ${JSON.stringify(args)}: text of at most ${MAX_READ_TEXT_BYTES} bytes`, `${Buffer.byteLength(text, 'utf8')} bytes`);
}

async function checkReadPastEnd(ctx) {
    const id = needArtifact(ctx);
    const args = { id, offset: 99_999_999 };
    const result = await ctx.conn.call('read_artifact', args);
    expect(result.isError === true, `read_artifact ${JSON.stringify(args)}: isError true (an offset past the end)`, () => describe(result));
    expect(textOf(result).includes(String(BIG_BYTES)), `read_artifact ${JSON.stringify(args)}: text naming the artifact's size, ${BIG_BYTES} bytes`, () => describe(result));
}

async function checkStillAlive(ctx) {
    expect(
        ctx.conn.generation === ctx.bigGeneration,
        'the server that read the 12 MB artifact to still be connected',
        `it is gone (${ctx.closedReason ?? 'closed'}); a new server was started`,
    );
    const result = await ctx.conn.callOk('bash', { command: 'echo still-alive' });
    expect(textOf(result).includes('still-alive'), 'bash echo still-alive: text containing "still-alive"', () => describe(result));
}

/** (e) progress with a token: every notification has a message, even when nothing was printed. */
async function checkProgress(ctx) {
    const updates = [];
    const onprogress = p => updates.push(p);
    const result = await ctx.conn.callOk('bash', { command: 'sleep 3; echo done' }, { onprogress });
    expect(textOf(result).includes('done'), 'bash "sleep 3; echo done": text containing "done"', () => describe(result));
    expect(updates.length >= 1, 'at least one progress notification for "sleep 3; echo done" (sent with _meta.progressToken)', updates);
    const bad = updates.filter(p => typeof p.message !== 'string' || p.message === '');
    expect(
        bad.length === 0,
        'every progress notification to carry a non-empty string "message" (a command that printed nothing yet included)',
        `${bad.length} of ${updates.length} without one: ${safeJson(updates)}`,
    );
}

/** (f) a background job, and a bash_output wait that waits for its output. */
async function checkBackgroundJob(ctx) {
    const started = await ctx.conn.callOk('bash', { command: 'sleep 1; echo late; sleep 30', run_in_background: true });
    const job = started.structuredContent?.job_id;
    expect((typeof job === 'string' && job !== '') || typeof job === 'number', 'structuredContent.job_id for a background job', () => describe(started));
    try {
        const args = { job_id: job, mode: 'all', wait_ms: 20_000 };
        const out = await ctx.conn.callOk('bash_output', args, { timeout: 40_000 });
        expect(textOf(out).includes('late'), `bash_output ${JSON.stringify(args)}: text containing "late" (the wait to last until the job printed it)`, () => describe(out));
    } finally {
        const killed = await ctx.conn.call('bash_kill', { job_id: job });
        expect(!killed.isError, `bash_kill {"job_id": ${JSON.stringify(job)}} to succeed`, () => describe(killed));
    }
}

/** (h) yield: structuredContent of a call still running after yield_ms, as a job. */
function yielded(result, what) {
    const sc = result.structuredContent;
    expect(
        sc?.outcome === 'running' && sc.running === true && typeof sc.job_id === 'string' && sc.job_id !== '',
        `${what}: structuredContent "outcome": "running", "running": true and a string "job_id"`,
        () => describe(result),
    );
    expect(Number.isInteger(sc.timeout_ms) && sc.timeout_ms > 0, `${what}: structuredContent "timeout_ms" (the call's timeout)`, () => describe(result));
    return sc.job_id;
}

/** (h1) yield_ms 500: the output so far and a job; bash_output reads the rest and the end. */
async function checkYieldThenOutput(ctx) {
    const args = { command: 'echo first; sleep 2; echo second', yield_ms: 500 };
    const result = await ctx.conn.callOk('bash', args);
    const job = yielded(result, `bash ${JSON.stringify(args)}`);
    const text = textOf(result);
    expect(text.includes('first'), 'the yielded text to hold the output so far ("first")', () => describe(result));
    expect(
        text.includes('[Still running after') && text.includes('bash_output'),
        'the yielded text to carry a "[Still running after" note naming bash_output',
        () => describe(result),
    );
    let seen = '';
    let last;
    for (let i = 0; i < 10 && last?.structuredContent?.running !== false; i++) {
        last = await ctx.conn.callOk('bash_output', { job_id: job, wait_ms: 10_000 });
        seen += textOf(last);
    }
    expect(last.structuredContent?.running === false, 'bash_output structuredContent "running": false within 10 reads', () => describe(last));
    expect(seen.includes('second'), 'the text bash_output read to contain "second"', seen);
    expect(last.structuredContent?.exit_code === 0, 'the last bash_output structuredContent "exit_code": 0', () => describe(last));
}

/** (h2) a pty REPL yields once it waits at its prompt; bash_input answers it and reads the reply. */
async function checkYieldPtyRepl(ctx) {
    const args = { command: 'python3 -q', pty: true, yield_ms: 5_000 };
    const result = await ctx.conn.callOk('bash', args);
    const job = yielded(result, `bash ${JSON.stringify(args)}`);
    try {
        expect(textOf(result).includes('Waiting for input'), 'the yielded text to say "Waiting for input" (the REPL at ">>>")', () => describe(result));
        const input = { job_id: job, data: 'print(6*7)', yield_ms: 3_000 };
        const answer = await ctx.conn.callOk('bash_input', input);
        const text = textOf(answer);
        expect(/^Sent \d+ bytes to job \S+\.\n\[job \S+ running for /.test(text), `bash_input ${JSON.stringify(input)}: text starting "Sent N bytes to job N." then "[job N running for"`, () => describe(answer));
        expect(text.includes('left of its'), 'the bash_input read to say how much of its timeout is "left of its" timeout', () => describe(answer));
        expect(text.includes('42'), `bash_input ${JSON.stringify(input)}: text containing "42"`, () => describe(answer));
        expect(answer.structuredContent?.running === true, 'bash_input structuredContent "running": true (the REPL still runs)', () => describe(answer));
    } finally {
        const killed = await ctx.conn.callOk('bash_kill', { job_id: job });
        expect(killed.structuredContent?.running === false, 'bash_kill structuredContent "running": false', () => describe(killed));
    }
    // A read of a killed job reports how it ended (isError may be true: it was ended).
    const after = await ctx.conn.call('bash_output', { job_id: job });
    expect(after.structuredContent?.running === false, 'bash_output after bash_kill: structuredContent "running": false', () => describe(after));
}

/** (h3) vim in pipe mode (no terminal) yields early, as stuck; bash_kill ends it. */
async function checkYieldStuckVim(ctx) {
    fs.writeFileSync(path.join(ctx.workdir, 'notes.txt'), 'hello\n');
    // HOME in the work dir: vim, killed, writes its .viminfo there and not in the real home.
    const args = { command: 'vim notes.txt', yield_ms: 8_000, env: { HOME: ctx.workdir } };
    const result = await ctx.conn.callOk('bash', args);
    const job = yielded(result, `bash ${JSON.stringify(args)}`);
    try {
        const text = textOf(result);
        expect(
            text.includes('waits for keys from a terminal') && text.includes('vim'),
            'the yielded text to say `vim` "waits for keys from a terminal"',
            () => describe(result),
        );
    } finally {
        const killed = await ctx.conn.callOk('bash_kill', { job_id: job });
        expect(killed.structuredContent?.running === false, 'bash_kill structuredContent "running": false', () => describe(killed));
    }
}

/** (h4) yield_ms 0 runs to the end. */
async function checkYieldZero(ctx) {
    const args = { command: 'sleep 1; echo done', yield_ms: 0 };
    const result = await ctx.conn.callOk('bash', args);
    expect(result.structuredContent?.outcome === 'success', `bash ${JSON.stringify(args)}: structuredContent "outcome": "success"`, () => describe(result));
    expect(textOf(result).includes('done'), `bash ${JSON.stringify(args)}: text containing "done"`, () => describe(result));
}

/** (g) closing the client ends the server. */
async function checkClose(ctx) {
    const { conn } = ctx;
    const pid = conn.pid;
    expect(Number.isInteger(pid), "the server's pid", pid);
    await bounded(conn.client.close(), EXIT_TIMEOUT_MS, 'client.close() to return');
    const deadline = Date.now() + EXIT_TIMEOUT_MS;
    while (!processGone(pid) && Date.now() < deadline) await sleep(50);
    expect(processGone(pid), `the server (pid ${pid}) gone within ${EXIT_TIMEOUT_MS / 1000}s of client.close()`, 'still running');
    const how = await bounded(conn.exited, EXIT_TIMEOUT_MS, "the server's exit status");
    ctx.closeNote = how.signal ? `killed by ${how.signal} (the SDK's fallback after 2s)` : `exit code ${how.code}`;
}

const CHECKS = [
    ['a. tools/list lists the 7 tools', checkToolsList],
    ['b. every inputSchema and outputSchema compiles with Ajv strict mode', checkSchemasStrict],
    ['c. bash echo hello', checkBashEcho],
    ['d1. bash with 12 MB of output spills an artifact', checkBigOutput],
    ['d2. read_artifact limit 12000000 answers at most ~70 KB and says how to read on', checkReadWholeArtifact],
    ['d3. read_artifact at the offset the note gave', checkReadOn],
    ['d4. read_artifact past the end is an error naming the size', checkReadPastEnd],
    ['d5. the server still serves (echo still-alive)', checkStillAlive],
    ['e. progress notifications all carry a message', checkProgress],
    ['f. background job: bash_output waits for its output; bash_kill', checkBackgroundJob],
    ['h1. yield_ms 500: outcome running with a job; bash_output reads on to exit 0', checkYieldThenOutput],
    ['h2. yield: a pty python REPL waits at >>>; bash_input yield_ms answers 42; bash_kill', checkYieldPtyRepl],
    ['h3. yield: vim without a terminal is reported stuck; bash_kill', checkYieldStuckVim],
    ['h4. yield_ms 0 runs to the end', checkYieldZero],
    ['a. no "unknown format" warning from the SDK during listTools/callTool', checkNoUnknownFormat],
    ['g. closing the client ends the server', checkClose],
];

// --- driver -------------------------------------------------------------------------------

async function runChecks(binary, workdir) {
    const failures = [];
    const report = (name, e) => {
        const msg = e instanceof CheckFailed ? e.message : `unexpected ${e?.name}: ${e?.stack ?? e}`;
        failures.push(`FAILED: ${name}\n  ${msg}`);
        console.log(failures.at(-1));
    };
    let generation = 1;
    const ctx = { conn: new Connection(binary, workdir, generation), workdir };
    try {
        await ctx.conn.open();
    } catch (e) {
        report('connect (initialize)', e);
        return failures;
    }
    console.log('ok: connect (initialize)');
    for (const [name, check] of CHECKS) {
        if (ctx.conn.closed && check !== checkNoUnknownFormat) {
            // The connection died in an earlier check (reported there): start a new server so
            // the remaining checks still say something.
            ctx.closedReason = ctx.conn.closedHow();
            console.log(`note: ${ctx.closedReason}; starting a new server for the remaining checks`);
            generation += 1;
            ctx.conn = new Connection(binary, workdir, generation);
            try {
                await ctx.conn.open();
                await ctx.conn.listTools(); // the SDK validates structuredContent only after listTools
            } catch (e) {
                report(`reconnect before "${name}"`, e);
                break;
            }
        }
        try {
            await check(ctx);
        } catch (e) {
            report(name, e);
            continue;
        }
        console.log(`ok: ${name}${check === checkClose && ctx.closeNote ? ` (${ctx.closeNote})` : ''}`);
    }
    if (!ctx.conn.closed) await ctx.conn.client.close().catch(() => {});
    return failures;
}

async function main() {
    const [binaryArg, workdirArg] = process.argv.slice(2);
    if (!binaryArg || !workdirArg) {
        console.log('usage: node client.mjs /path/to/agent-exec WORKDIR');
        return 2;
    }
    const binary = path.resolve(binaryArg);
    const workdir = path.resolve(workdirArg);
    try {
        fs.accessSync(binary, fs.constants.X_OK);
    } catch {
        console.log(`not an executable: ${binary}`);
        return 2;
    }
    fs.mkdirSync(workdir, { recursive: true });
    const overall = setTimeout(() => {
        console.log(`FAILED: the run did not finish within ${OVERALL_TIMEOUT_MS / 1000}s`);
        process.exit(1);
    }, OVERALL_TIMEOUT_MS);
    const failures = await runChecks(binary, workdir);
    clearTimeout(overall);
    if (failures.length) {
        console.log(`\n${failures.length} TypeScript SDK check(s) failed:\n${failures.join('\n')}`);
        return 1;
    }
    console.log('all TypeScript SDK checks passed');
    return 0;
}

main().then(
    code => process.exit(code),
    e => {
        console.log(`FAILED: unexpected ${e?.stack ?? e}`);
        process.exit(1);
    },
);
