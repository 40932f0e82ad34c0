// Checks the BUILT agent-exec package against the real server: one line per check, exit 1 when
// any fails. Every wait is bounded.
//
//   From the source dir, after `npm ci && npm run build`:
//     AGENT_EXEC_BIN=/path/to/agent-exec node test/check-client.mjs
//   From a project that installed the tarballs (agent-exec and its platform package):
//     node /path/to/check-client.mjs
//
// The package is imported by name, `agent-exec`, resolved from the current directory (the source
// dir resolves its own name; a project, its node_modules); AGENT_EXEC_MODULE (or the first
// argument) names another specifier or path. The binary is found as users' code finds it:
// $AGENT_EXEC_BIN, else the platform package.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const specifier = process.argv[2] ?? process.env.AGENT_EXEC_MODULE ?? 'agent-exec';
const entry = createRequire(join(process.cwd(), 'noop.js')).resolve(specifier);
const { AgentExec, BinaryNotFoundError, RpcError, ServerExitedError, platformKey, platforms, resolveBinary, systemLibc } =
  await import(pathToFileURL(entry).href);
const packageRoot = dirname(dirname(entry)); // …/agent-exec/dist/index.js -> …/agent-exec
const launcher = join(packageRoot, 'bin', 'agent-exec.js');

// Nothing may hang: the whole run is bounded too.
setTimeout(() => {
  console.error('FAILED: the checks took more than 3 minutes');
  process.exit(1);
}, 180_000).unref();

console.log(`package: ${entry}`);
console.log(`binary:  ${resolveBinary()}${process.env.AGENT_EXEC_BIN ? ' ($AGENT_EXEC_BIN)' : ''}`);

const work = mkdtempSync(join(tmpdir(), 'agent-exec-check-'));
const text = (result) => result.content.map((c) => c.text).join('');

function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function expect(what, actual, expected) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

let failed = 0;
let passed = 0;
async function check(name, body) {
  try {
    const note = await within(60_000, name, body());
    console.log(`ok    ${name}${note ? `: ${note}` : ''}`);
    passed++;
  } catch (error) {
    console.log(`FAIL  ${name}: ${String(error?.message ?? error).replace(/\s*\n\s*/g, ' | ')}`);
    failed++;
  }
}

/** Runs the launcher (bin/agent-exec.js) with `args`; resolves with {code, signal, stdout, stderr}. */
function runLauncher(args, { input, ms = 20_000, onStart } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], { cwd: work, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`launcher ${args.join(' ')}: still running after ${ms} ms; stderr: ${stderr}`));
    }, ms);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
    onStart?.(child);
  });
}

const agent = await within(10_000, 'start', AgentExec.start({ args: ['-C', work] }));

await check('exec: echo hi', async () => {
  const result = await agent.exec('echo hi');
  assert(text(result).includes('hi'), `text ${JSON.stringify(text(result))}`);
  expect('outcome', [result.details.outcome, result.details.exit_code, result.is_error], ['success', 0, false]);
});

await check('exec: non-zero exit', async () => {
  const { details, is_error } = await agent.exec('echo oops >&2; exit 3');
  expect('outcome', [details.outcome, details.exit_code, is_error], ['exit_nonzero', 3, true]);
});

await check('exec: two concurrent calls, matched by id', async () => {
  const order = [];
  const [slow, fast] = await Promise.all([
    agent.exec('sleep 0.5; echo slow').then((r) => (order.push('slow'), r)),
    agent.exec('echo fast').then((r) => (order.push('fast'), r)),
  ]);
  expect('texts', [text(slow), text(fast)], ['slow\n', 'fast\n']);
  expect('order of answers', order, ['fast', 'slow']);
});

await check('session: state kept across calls', async () => {
  const session = agent.openSession();
  try {
    await session.exec(`cd ${work} && export X=42 && f() { echo "f:$1"; }`);
    const result = await session.exec('echo $X; pwd; f 7');
    expect('text', text(result), `42\n${work}\nf:7\n`);
    expect('details.session', result.details.session, session.name);
    // Calls made together on one session run one at a time, in the order they were made.
    const [, , last] = await Promise.all([
      session.exec('Z=a; sleep 0.3; Z=${Z}b'),
      session.exec('Z=${Z}c'),
      session.exec('echo $Z'),
    ]);
    expect('session order', text(last), 'abc\n');
    // One aborted while it waits for its turn rejects at once, and the next still waits its turn.
    const controller = new AbortController();
    const slow = session.exec('sleep 0.5; W=1');
    const aborted = session.exec('W=2', { signal: controller.signal });
    const after = session.exec('echo $W');
    controller.abort();
    const error = await within(200, 'aborted while waiting its turn', aborted.then(() => null, (e) => e));
    assert(error === controller.signal.reason, `the aborted call gave ${error}`);
    await slow;
    expect('after an aborted call', text(await after), '1\n');
  } finally {
    const closed = await session.close();
    expect('session_close', closed.details.outcome, 'success');
  }
});

await check('exec: a fractional timeout is sent as timeout_ms', async () => {
  const { details, content } = await agent.exec('sleep 5', { timeout: 1.5 });
  expect('outcome', details.outcome, 'timeout');
  assert(content[0].text.includes('after 1.5 seconds'), `text ${JSON.stringify(content[0].text)}`);
  return `timed out after ${details.duration_ms} ms`;
});

await check('target: sent by the job methods', async () => {
  // No target is allowed here: the refusal shows that the field reached the server.
  const refused = await agent.jobList({ target: 'ssh://nowhere' });
  expect('outcome', refused.details.outcome, 'invalid_request');
  assert(/ssh:\/\/nowhere.*not allowed/.test(text(refused)), `text ${JSON.stringify(text(refused))}`);
  expect('without a target', (await agent.jobList()).details.outcome, 'success');
});

await check('job: start, output, finishes', async () => {
  const started = await agent.exec('for i in 1 2 3; do echo line$i; sleep 0.2; done', {
    cwd: work,
    run_in_background: true,
  });
  const jobId = started.details.job_id;
  assert(jobId, `no job_id: ${text(started)}`);
  const listed = await agent.jobList();
  assert(listed.details.jobs?.some((j) => j.job_id === jobId), `job ${jobId} not in job_list: ${text(listed)}`);
  let read;
  const deadline = Date.now() + 15_000;
  do {
    read = await agent.jobOutput(jobId, { wait_ms: 1000 });
  } while (read.details.running && Date.now() < deadline);
  expect('job ended', [read.details.running, read.details.exit_code], [false, 0]);
  const all = text(await agent.jobOutput(jobId, { mode: 'all' }));
  assert(/line1\nline2\nline3\n/.test(all), `job output: ${JSON.stringify(all)}`);
  return `job ${jobId}`;
});

await check('job: input, aborted output wait, kill', async () => {
  const started = await agent.exec('read x; echo got:$x; sleep 30', { run_in_background: true });
  const jobId = started.details.job_id;
  const answered = await agent.jobInput(jobId, 'hello', { yield_ms: 3000 });
  assert(text(answered).includes('got:hello'), `job_input: ${JSON.stringify(text(answered))}`);
  const controller = new AbortController();
  const t0 = Date.now();
  setTimeout(() => controller.abort(), 300);
  const waited = await agent.jobOutput(jobId, { wait_ms: 20_000 }, { signal: controller.signal });
  assert(Date.now() - t0 < 5_000 && waited.details.running === true, `wait not ended: ${text(waited)}`);
  const killed = await agent.jobKill(jobId);
  expect('job_kill', killed.details.running, false);
  const after = await agent.jobOutput(jobId, { mode: 'all' });
  expect('after kill', [after.details.running, after.details.signal], [false, 15]);
  return `job ${jobId}, wait ended after ${Date.now() - t0} ms`;
});

await check('progress: exec/progress notifications', async () => {
  const seen = [];
  const result = await agent.exec('for i in $(seq 1 8); do echo tick$i; sleep 0.2; done', {
    onProgress: (p) => seen.push(p),
  });
  expect('outcome', result.details.outcome, 'success');
  assert(seen.length >= 2, `${seen.length} notifications`);
  assert(seen.every((p) => typeof p.id === 'number' && typeof p.elapsed_ms === 'number'), JSON.stringify(seen));
  assert(seen.some((p) => /tick\d/.test(p.tail)), `no tick in the tails: ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) assert(seen[i].elapsed_ms >= seen[i - 1].elapsed_ms, 'elapsed_ms decreased');
  return `${seen.length} notifications, last tail ${JSON.stringify(seen.at(-1).tail.trim().split('\n').at(-1))}`;
});

await check('cancel: AbortSignal ends sleep 30', async () => {
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(), 300);
  const result = await within(5_000, 'cancelled exec', agent.exec('sleep 30', { signal: controller.signal }));
  const ms = Date.now() - started;
  expect('outcome', [result.details.outcome, result.details.cancelled], ['cancelled', true]);
  assert(text(result).startsWith('[Command cancelled]'), `text ${JSON.stringify(text(result))}`);
  assert(ms < 5_000, `took ${ms} ms`);
  // Already aborted: nothing is sent, the call rejects with the signal's reason.
  const aborted = AbortSignal.abort();
  const error = await agent.exec('echo never', { signal: aborted }).then(
    () => null,
    (e) => e,
  );
  assert(error === aborted.reason, `an already aborted signal gave ${error}`);
  return `answered cancelled after ${ms} ms`;
});

await check('RpcError: unknown method, bad params', async () => {
  const unknown = await agent.call('no_such_method', {}).then(() => null, (e) => e);
  assert(unknown instanceof RpcError, `got ${unknown}`);
  expect('code', unknown.code, -32601);
  const bad = await agent.exec('echo hi', { bogus: 1 }).then(() => null, (e) => e);
  assert(bad instanceof RpcError && bad.code === -32602 && /bogus/.test(bad.message), `got ${bad}`);
  return `${unknown.code} ${JSON.stringify(unknown.message.slice(0, 40))}…`;
});

await check('server exit: pending and new calls reject', async () => {
  const broken = new AgentExec({ args: ['--no-such-flag'] });
  const error = await broken.exec('echo hi').then(() => null, (e) => e);
  assert(error instanceof ServerExitedError, `got ${error}`);
  expect('exit code', error.exitCode, 2);
  assert(/no-such-flag/.test(error.message), `message: ${error.message}`);
  await broken.close();
  const missing = await AgentExec.start({ binary: join(work, 'no-such-binary') }).then(() => null, (e) => e);
  assert(missing instanceof ServerExitedError && /ENOENT/.test(missing.message), `start of a missing binary: ${missing}`);
  return JSON.stringify(error.message.split('\n')[0]);
});

await check('binary: a glibc binary on a system without glibc', async () => {
  const platform = platforms()[platformKey()];
  const libc = systemLibc();
  if (!platform?.libc) return `skipped: ${platformKey()} names no libc (this system: ${libc})`;
  const error = (() => {
    try {
      return resolveBinary({}, 'musl');
    } catch (e) {
      return e;
    }
  })();
  assert(error instanceof BinaryNotFoundError, `got ${error}`);
  assert(
    error.message.includes(`built for ${platform.libc}`) && /musl/.test(error.message) && /AGENT_EXEC_BIN/.test(error.message),
    `message: ${error.message}`,
  );
  expect('AGENT_EXEC_BIN still wins', resolveBinary({ AGENT_EXEC_BIN: '/x/agent-exec' }, 'musl'), '/x/agent-exec');
  return `this system: ${libc}; ${JSON.stringify(error.message.slice(0, 60))}…`;
});

await check('launcher: --version', async () => {
  const { code, stdout, stderr } = await runLauncher(['--version']);
  expect('exit code', code, 0);
  assert(/^agent-exec \d+\.\d+\.\d+/.test(stdout), `stdout ${JSON.stringify(stdout)} stderr ${stderr}`);
  return stdout.split('\n')[0];
});

await check('launcher: exit code passed on', async () => {
  const { code, stdout } = await runLauncher(['run', '--', 'echo out; exit 7']);
  expect('exit code', code, 7);
  assert(stdout.includes('out'), `stdout ${JSON.stringify(stdout)}`);
});

await check('launcher: SIGTERM forwarded, run cancels', async () => {
  const started = Date.now();
  const { code, signal, stdout } = await runLauncher(['run', '--', 'sleep 30'], {
    onStart: (child) => setTimeout(() => child.kill('SIGTERM'), 500),
  });
  expect('exit', [code, signal], [130, null]);
  assert(stdout.includes('[Command cancelled]'), `stdout ${JSON.stringify(stdout)}`);
  return `exit 130 after ${Date.now() - started} ms`;
});

await check('launcher: mcp on stdio, nothing else on stdout', async () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'check', version: '0' } },
  };
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
  const input = [initialize, { jsonrpc: '2.0', method: 'notifications/initialized' }, list]
    .map((m) => JSON.stringify(m) + '\n')
    .join('');
  const { code, stdout } = await runLauncher(['mcp'], { input });
  expect('exit code', code, 0);
  const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  expect('answers', lines.map((m) => m.id), [1, 2]);
  assert(lines[1].result.tools.some((t) => t.name === 'bash'), 'no bash tool');
  return `${lines[1].result.tools.length} tools`;
});

const closing = agent.close();
const code = await within(35_000, 'close', closing);
if (code !== 0) {
  console.log(`FAIL  close: the server exited with ${code}`);
  failed++;
}
await check('close: calls after it reject with ServerExitedError', async () => {
  const error = await agent.exec('echo never').then(() => null, (e) => e);
  assert(error instanceof ServerExitedError && /this client was closed/.test(error.message), `got ${error}`);
  return JSON.stringify(error.message);
});
rmSync(work, { recursive: true, force: true });
if (failed) {
  console.error(`FAILED: ${failed} of ${failed + passed} checks`);
  process.exit(1);
}
console.log(`all client checks passed (${passed} checks)`);
process.exit(0);
