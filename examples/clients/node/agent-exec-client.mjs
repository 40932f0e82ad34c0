// A small client for `agent-exec serve` (JSON-RPC 2.0 over stdio, one JSON message per line).
//
// Node 18+, no dependencies. As a library:
//
//   import { AgentExec } from './agent-exec-client.mjs';
//
//   // The binary: the argument, else $AGENT_EXEC_BIN, else agent-exec on PATH.
//   const agent = new AgentExec();
//   const result = await agent.exec('ls -la', { cwd: '/tmp', timeout: 30 });
//   console.log(result.content[0].text, result.details.outcome);
//   await agent.close();
//
// As a demo that is also a check (exits non-zero if anything is off):
//
//   node agent-exec-client.mjs [path/to/agent-exec]

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

/** A JSON-RPC `error` response: the call itself was rejected (bad params, unknown method). */
export class RpcError extends Error {
  constructor(code, message) {
    super(`JSON-RPC error ${code}: ${message}`);
    this.name = 'RpcError';
    this.code = code;
    this.rpcMessage = message;
  }
}

/** One `agent-exec serve` process; any number of calls may be in flight at once. */
export class AgentExec {
  #process;
  #nextId = 1;
  #waiting = new Map(); // request id -> { resolve, reject } of the caller's promise
  #exited;
  #gone = null; // why calls can no longer be answered, once the server has exited

  constructor(binary, ...serveArgs) {
    binary ??= process.env.AGENT_EXEC_BIN || 'agent-exec';
    // stderr is inherited so that the server's own diagnostics stay visible.
    this.#process = spawn(binary, ['serve', ...serveArgs], { stdio: ['pipe', 'pipe', 'inherit'] });
    // The server answers each request on its own thread, so responses come in any order.
    createInterface({ input: this.#process.stdout }).on('line', (line) => {
      const response = JSON.parse(line);
      const caller = this.#waiting.get(response.id);
      if (!caller) return; // id null: about a line we never sent
      this.#waiting.delete(response.id);
      if (response.error) caller.reject(new RpcError(response.error.code, response.error.message));
      else caller.resolve(response.result);
    });
    // A write after the server died fails here, not as an uncaught exception.
    this.#process.stdin.on('error', () => {});
    this.#exited = new Promise((resolve) => {
      const end = (why, exitCode) => {
        this.#gone ??= new Error(why); // a failed spawn reports 'error', then maybe 'close'
        for (const caller of this.#waiting.values()) caller.reject(this.#gone);
        this.#waiting.clear();
        resolve(exitCode);
      };
      this.#process.on('error', (e) => end(`cannot start ${binary} serve: ${e.message}`, null));
      this.#process.on('close', (code, signal) => end('agent-exec serve exited', code ?? signal));
    });
  }

  /** Sends one request; resolves with its `result`, rejects with RpcError or a lost server. */
  call(method, params = {}) {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#process.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  /** Runs a command; `fields` are the other request fields (cwd, env, timeout, session...). */
  exec(command, fields = {}) {
    return this.call('exec', { command, ...fields });
  }

  jobOutput(jobId, { mode = 'new', waitMs = 0 } = {}) {
    return this.call('job_output', { job_id: jobId, mode, wait_ms: waitMs });
  }

  jobInput(jobId, data = '', { enter = true, eof = false } = {}) {
    return this.call('job_input', { job_id: jobId, data, enter, eof });
  }

  jobKill(jobId) {
    return this.call('job_kill', { job_id: jobId });
  }

  sessionClose(name) {
    return this.call('session_close', { session: name });
  }

  /** Ends the server via end of input (calls in flight are answered first, then its sessions
   *  and jobs end); kills it after `timeoutMs`. Resolves with its exit code (or signal). */
  async close(timeoutMs = 30_000) {
    this.#process.stdin.end();
    const kill = setTimeout(() => this.#process.kill('SIGKILL'), timeoutMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(kill);
    }
  }
}

const text = (result) => result.content[0].text;

function expect(what, actual, expected) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

async function demo(agent) {
  const hello = await agent.exec('echo hello');
  expect('echo hello', [text(hello), hello.details.outcome], ['hello\n', 'success']);
  console.log('ok  one call: echo hello');

  await agent.exec('cd /tmp && export X=42', { session: 'demo' });
  expect('session', text(await agent.exec('echo $X; pwd', { session: 'demo' })), '42\n/tmp\n');
  await agent.sessionClose('demo');
  console.log('ok  session: cd and export persist between calls');

  const loop = 'for i in 1 2 3; do echo line$i; sleep 0.1; done';
  const jobId = (await agent.exec(loop, { run_in_background: true })).details.job_id;
  const deadline = Date.now() + 20_000;
  let output = '';
  let status;
  for (;;) { // each read returns at new output or at the job's end, whichever comes first
    const read = text(await agent.jobOutput(jobId, { waitMs: 1000 }));
    const newline = read.indexOf('\n');
    status = read.slice(0, newline);
    const newOutput = read.slice(newline + 1);
    if (newOutput !== '(no new output)') output += newOutput;
    if (!status.startsWith(`[job ${jobId} running`) || Date.now() > deadline) break;
  }
  expect('job status', status.split(';')[0], `[job ${jobId} exited with code 0`);
  expect('job output', output, 'line1\nline2\nline3\n');
  console.log(`ok  background job ${jobId}: three lines, then exited with code 0`);

  // Two calls in flight at once; the slow one is answered last and must still find its caller.
  const [slow, fast] = await Promise.all([
    agent.exec('sleep 0.3; echo slow'),
    agent.exec('echo fast'),
  ]);
  expect('concurrent calls', [text(slow), text(fast)], ['slow\n', 'fast\n']);
  console.log('ok  concurrent calls: each response matched to its request by id');

  const { details } = await agent.exec('exit 3');
  expect('exit 3', [details.outcome, details.exit_code], ['exit_nonzero', 3]);
  console.log('ok  exit 3: outcome exit_nonzero, exit code 3');
}

// Run the demo only when this file is the program, not when it is imported.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const agent = new AgentExec(process.argv[2]);
  try {
    await demo(agent);
    console.log('all checks passed');
  } catch (e) {
    console.error(`FAILED: ${e.message}`);
    process.exitCode = 1;
  } finally {
    await agent.close();
  }
}
