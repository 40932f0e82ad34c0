// A typed client of `agent-exec serve`: JSON-RPC 2.0 over the server's stdin/stdout, one JSON
// message per line (docs/contract.md §7). Any number of calls may be in flight at once; the
// server answers each on its own thread, so answers are matched to calls by id.
//
//   import { AgentExec } from 'agent-exec';
//
//   const agent = await AgentExec.start();
//   const result = await agent.exec('ls -la', { cwd: '/tmp', timeout: 30 });
//   console.log(result.content[0].text, result.details.outcome);
//   await agent.close();

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';

import { resolveBinary } from './binary.js';

export {
  BinaryNotFoundError,
  platformKey,
  platforms,
  resolveBinary,
  systemLibc,
  type Platform,
} from './binary.js';

// ---------------------------------------------------------------------------------------------
// The contract's types (docs/contract.md §1, §3, §7)

/** One tool call (contract §1). Exactly one of `command` / `executable`. */
export interface ExecRequest {
  /** Shell command, run by `bash -o pipefail -c` (`sh -c` where there is no bash). */
  command?: string;
  /** Alternative to `command`: a program run directly, no shell, with `argv`. */
  executable?: string;
  argv?: string[];
  /** Working directory (default: the server's, or the session's). */
  cwd?: string;
  /** Extra variables, applied after environment hardening. */
  env?: Record<string, string>;
  /** Seconds, default 120, clamped to [1, 3600] (0: the default). Or `timeout_ms` (with both,
   *  the shorter holds). A fraction is sent as `timeout_ms` (the server takes whole seconds). */
  timeout?: number;
  timeout_ms?: number;
  /** Keep the first / last N lines of the output. */
  head?: number;
  tail?: number;
  /** Start as a background job and answer at once with its `details.job_id`. */
  run_in_background?: boolean;
  /** Run in the persistent shell session of that name (see `AgentExec.openSession`). */
  session?: string;
  /** Run under a pseudo-terminal. */
  pty?: boolean;
  /** Send `exec/progress` notifications (set for you when `onProgress` is given). */
  progress?: boolean;
  /** A stricter sandbox for this call than the operator's. */
  sandbox?: 'read-only' | 'workspace-write' | 'off';
  /** Where to run it (`ssh://…`, `docker://…`, …), among the targets the operator allowed. */
  target?: string;
  /** Answer after this long (outcome `running`, a `job_id`) if the command still runs. */
  yield_ms?: number;
  streams?: 'shared' | 'separate';
  view?: 'compact' | 'raw';
}

export type Outcome =
  | 'success'
  | 'exit_nonzero'
  | 'signaled'
  | 'timeout'
  | 'cancelled'
  | 'denied'
  | 'needs_approval'
  | 'invalid_request'
  | 'spawn_failed'
  | 'running';

/** What was cut from the output (contract §3). */
export interface Truncation {
  direction: 'tail' | 'head' | 'both' | 'smart';
  truncated_by: 'bytes' | 'lines';
  total_bytes: number;
  total_lines: number;
  output_bytes: number;
  output_lines: number;
  shown_range: [number, number];
  shown_ranges?: [number, number][];
  salient_lines?: number;
  artifact_id: string | null;
  /** The artifact stopped at its cap before the end of the output (absent: false). */
  artifact_capped?: boolean;
}

/** One entry of `job_list`'s `details.jobs`. */
export interface JobInfo {
  job_id: string;
  command: string;
  status: string;
  exit_code: number | null;
  elapsed_ms?: number;
  stdout_bytes: number;
  stderr_bytes: number;
  [field: string]: unknown;
}

/** `details` of a result (contract §3; the job, session and artifact methods fill some more). */
export interface Details {
  outcome: Outcome;
  exit_code: number | null;
  signal: number | null;
  success: boolean;
  timed_out: boolean;
  cancelled: boolean;
  duration_ms: number;
  cwd: string;
  stream_kind: 'plain' | 'diff';
  stdout_bytes: number;
  stderr_bytes: number;
  truncation: Truncation | null;
  stderr_truncation?: Truncation | null;
  job_id: string | null;
  session: string | null;
  policy: unknown;
  /** Job methods, and a call that yielded: whether the job still runs. */
  running?: boolean;
  timeout_ms?: number;
  /** `job_list`. */
  jobs?: JobInfo[];
  /** The compact view folded lines (`artifact_id` null only if the artifact could not be written). */
  folded?: { lines: number; bytes: number; artifact_id: string | null };
  /** Background processes still running when the command ended, which were stopped. */
  processes_stopped?: number;
  /** The sandbox the call ran in (null: none; contract §8). */
  sandbox?: { mode: string; network: string } | null;
  /** The resource limit that ended or hampered the command (null: none). */
  limit_hit?: 'memory' | 'procs' | 'cpu' | 'file_size' | null;
  /** The remote target the call ran on (null: here; contract §9). */
  target?: string | null;
  /** E.g. the inherited variables withheld because their names look like credentials. */
  warnings?: string[];
  /** `artifact_read`: where the next page starts. */
  next_offset?: number;
  [field: string]: unknown;
}

/** The answer of every method: model-ready text, and the details. */
export interface ExecResult {
  /** Never empty (so `content[0].text` type-checks with noUncheckedIndexedAccess too). */
  content: [{ type: 'text'; text: string }, ...{ type: 'text'; text: string }[]];
  /** False only for outcomes `success` and `running`. */
  is_error: boolean;
  details: Details;
}

/** The params of an `exec/progress` notification. */
export interface Progress {
  /** The JSON-RPC id of the exec. */
  id: number | string;
  elapsed_ms: number;
  stdout_bytes: number;
  stderr_bytes: number;
  lines: number;
  /** The last whole lines of clean text, at most 2 KiB. */
  tail: string;
}

export type JobId = string | number;

// ---------------------------------------------------------------------------------------------
// Errors

/** A JSON-RPC error answer: the call itself was refused (bad params, unknown method, …). */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The server ended (or could not be started) before answering. */
export class ServerExitedError extends Error {
  override name = 'ServerExitedError';
  constructor(
    message: string,
    /** Its exit code, or null when a signal ended it (or it never started). */
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    /** The end of what it wrote on stderr. */
    readonly stderr: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// The client

export interface StartOptions {
  /** The agent-exec binary; default $AGENT_EXEC_BIN, else the platform package's. */
  binary?: string;
  /** More arguments of `serve`, e.g. `['-C', dir, '--sandbox', 'read-only']`. */
  args?: string[];
  /** Variables for the server, merged over the caller's environment (process.env), not replacing
   *  it; undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** Called with what the server writes on stderr (it is also kept for error messages). */
  onStderr?: (text: string) => void;
}

export interface CallOptions {
  /** Aborting sends `cancel {id}`: an exec then answers with outcome `cancelled`, a job_output
   *  wait ends. Already aborted: nothing is sent and the call rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** `target` of the job, artifact and session methods (contract §9): the remote target whose job,
 *  artifact or session it is (ids and names are that target's own); default the operator's. */
export interface TargetOption {
  target?: string;
}

export interface ExecOptions extends Omit<ExecRequest, 'command'>, CallOptions {
  /** Called on each `exec/progress` notification (sets `progress: true`). */
  onProgress?: (progress: Progress) => void;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  onProgress?: ((progress: Progress) => void) | undefined;
}

const STDERR_TAIL = 4096;

/** One `agent-exec serve` process. */
export class AgentExec {
  readonly binary: string;
  #child: ChildProcessWithoutNullStreams;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #stderr = '';
  #gone: Error | null = null;
  #closing = false;
  #exited: Promise<number | null>;
  #spawned: Promise<void>;

  /** Starts the server and waits until its process runs; rejects when it cannot be started. */
  static async start(options: StartOptions = {}): Promise<AgentExec> {
    const agent = new AgentExec(options);
    await agent.#spawned;
    return agent;
  }

  /** Starts the server (a start failure rejects the calls; `AgentExec.start` reports it instead). */
  constructor(options: StartOptions = {}) {
    this.binary = options.binary ?? resolveBinary();
    const env = { ...process.env, ...options.env };
    for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
    this.#child = spawn(this.binary, ['serve', ...(options.args ?? [])], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });

    this.#child.stderr.setEncoding('utf8');
    this.#child.stderr.on('data', (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-STDERR_TAIL);
      options.onStderr?.(text);
    });
    createInterface({ input: this.#child.stdout, crlfDelay: Infinity }).on('line', (line) =>
      this.#receive(line),
    );
    // A write after the server died fails here, not as an uncaught exception; 'close' reports it.
    this.#child.stdin.on('error', () => {});

    this.#spawned = new Promise((resolve, reject) => {
      this.#child.once('spawn', resolve);
      this.#child.once('error', (error) => {
        // Only a failed start comes here: the stdio streams report their own errors.
        this.#end(new ServerExitedError(`cannot start ${this.binary} serve: ${error.message}`, null, null, ''));
        reject(this.#gone);
      });
    });
    this.#spawned.catch(() => {}); // reported through the calls, or by start()
    this.#exited = new Promise((resolve) => {
      this.#child.once('error', () => resolve(null));
      this.#child.once('close', (code, signal) => {
        const how = signal ? `was ended by ${signal}` : `exited with code ${code}`;
        const stderr = this.#stderr.trimEnd();
        const message =
          `agent-exec serve ${how} before answering` +
          (this.#closing ? ' (the client closed it)' : '') +
          (stderr ? `; its stderr ended with:\n${stderr}` : ' (nothing on its stderr)');
        this.#end(new ServerExitedError(message, code, signal, stderr));
        resolve(code);
      });
    });
  }

  /** The server's process id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Sends one request and resolves with its `result`; rejects with RpcError or ServerExitedError. */
  call<T = unknown>(method: string, params: object = {}, options: CallOptions = {}): Promise<T> {
    return this.#request(method, params, options) as Promise<T>;
  }

  /** Runs a command (or a whole request: `{executable, argv, …}`) and resolves with its result,
   *  whatever its outcome: a failed command is `details.outcome`, not a rejection. */
  exec(command: string | ExecRequest, options: ExecOptions = {}): Promise<ExecResult> {
    const { signal, onProgress, ...fields } = options;
    const request: ExecRequest = typeof command === 'string' ? { command, ...fields } : { ...command, ...fields };
    if (onProgress && request.progress === undefined) request.progress = true;
    // The server takes whole seconds: a fraction goes as `timeout_ms`, rounded half to even (as
    // Python's round(), so both clients send the same), and an explicit `timeout_ms` wins.
    const { timeout } = request;
    if (timeout !== undefined && !Number.isInteger(timeout)) {
      delete request.timeout;
      // At least 1: 0 would mean "not given" (the default timeout), not the shortest.
      request.timeout_ms ??= Math.max(1, roundHalfEven(timeout * 1000));
    }
    return this.#request('exec', request, { signal, onProgress }) as Promise<ExecResult>;
  }

  /** A persistent shell session (cd, exports and functions persist between its calls). The
   *  server opens it on its first call; `name` defaults to a fresh one. */
  openSession(name: string = `node-${randomUUID()}`): Session {
    return new Session(this, name);
  }

  /** `session_close {session}`: ends the session's shell (and a command running in it). */
  sessionClose(session: string, params: TargetOption = {}): Promise<ExecResult> {
    return this.call('session_close', { session, ...params });
  }

  /** `job_output`: what a background job printed (`mode` "new", the default, or "all"),
   *  waiting up to `wait_ms` for something new; abort `signal` to end the wait. */
  jobOutput(
    jobId: JobId,
    params: { mode?: 'new' | 'all'; wait_ms?: number } & TargetOption = {},
    options: CallOptions = {},
  ): Promise<ExecResult> {
    return this.call('job_output', { job_id: jobId, ...params }, options);
  }

  /** `job_input`: sends `data` (and Enter, unless `enter: false`) to a job's input;
   *  `eof: true` closes it; `yield_ms` waits that long for what the job answers. */
  jobInput(
    jobId: JobId,
    data: string,
    params: { enter?: boolean; eof?: boolean; yield_ms?: number } & TargetOption = {},
  ): Promise<ExecResult> {
    return this.call('job_input', { job_id: jobId, data, ...params });
  }

  /** `job_kill`: ends a background job. */
  jobKill(jobId: JobId, params: TargetOption = {}): Promise<ExecResult> {
    return this.call('job_kill', { job_id: jobId, ...params });
  }

  /** `job_list`: the jobs, in `details.jobs` (with `running`, only those still running). */
  jobList(params: { running?: boolean } & TargetOption = {}): Promise<ExecResult> {
    return this.call('job_list', { ...params });
  }

  /** `artifact_read`: a page of a kept output (`offset`, `limit`), or its lines matching `grep`. */
  artifactRead(
    id: string,
    params: { offset?: number; limit?: number; grep?: string; context?: number } & TargetOption = {},
  ): Promise<ExecResult> {
    return this.call('artifact_read', { id, ...params });
  }

  /** Ends the server by closing its input: calls in flight are answered first, then its sessions
   *  and jobs end. Kills it after `timeoutMs`. Resolves with its exit code (null: a signal). */
  async close(timeoutMs = 30_000): Promise<number | null> {
    this.#closing = true;
    this.#child.stdin.end();
    const kill = setTimeout(() => this.#child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(kill);
    }
  }

  #request(
    method: string,
    params: object,
    { signal, onProgress }: CallOptions & { onProgress?: ((progress: Progress) => void) | undefined },
  ): Promise<unknown> {
    if (this.#closing) {
      // The same error as the calls the server's end fails, so one `catch` handles both.
      return Promise.reject(new ServerExitedError(`cannot call ${method}: this client was closed`, null, null, ''));
    }
    if (this.#gone) return Promise.reject(this.#gone);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        // The answer comes as usual (an exec: outcome `cancelled`); the cancel's own answer is
        // not needed (it says "no request in flight" when the call had just ended).
        if (this.#pending.has(id)) this.call('cancel', { id }).catch(() => {});
      };
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.#pending.set(id, {
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (error) => {
          done();
          reject(error);
        },
        onProgress,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  #receive(line: string): void {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not for us: the server writes only JSON
    }
    if (message?.method === 'exec/progress') {
      const progress = message.params as Progress;
      const pending = this.#pending.get(progress?.id as number);
      try {
        pending?.onProgress?.(progress);
      } catch {
        // a throwing callback must not break the connection
      }
      return;
    }
    const pending = typeof message?.id === 'number' ? this.#pending.get(message.id) : undefined;
    if (!pending) return; // id null: about a line we did not send whole
    this.#pending.delete(message.id);
    if (message.error) {
      const { code, message: text, data } = message.error;
      pending.reject(new RpcError(code, text, data));
    } else {
      pending.resolve(message.result);
    }
  }

  #end(error: Error): void {
    this.#gone ??= error; // a failed spawn reports 'error', then maybe 'close'
    for (const pending of this.#pending.values()) pending.reject(this.#gone);
    this.#pending.clear();
  }
}

/** Rounds half to even, as Python's round() does. */
function roundHalfEven(x: number): number {
  const r = Math.round(x); // half up
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Resolves when `promise` settles or `signal` aborts (at once if it has), whichever comes first. */
function untilAborted(promise: Promise<unknown>, signal: AbortSignal | undefined): Promise<unknown> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve();
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => (onAbort = resolve));
  signal.addEventListener('abort', onAbort, { once: true });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** A persistent shell session of one server (`AgentExec.openSession`). Its calls run one at a
 *  time, in the order they are made: the server does not order calls on one session that are in
 *  flight together, and a shell's commands are meant to run in order. */
export class Session {
  /** Settles when the last call made so far has ended: the next call's turn. */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly agent: AgentExec,
    readonly name: string,
  ) {}

  /** Runs a command in the session, after the calls made on it before; as `AgentExec.exec`.
   *  Aborting `signal` while it waits for its turn rejects it at once, and nothing is sent. */
  exec(command: string | ExecRequest, options: Omit<ExecOptions, 'session'> = {}): Promise<ExecResult> {
    const previous = this.#turn;
    const run = (async () => {
      await untilAborted(previous, options.signal);
      return this.agent.exec(command, { ...options, session: this.name }); // rejects if aborted
    })();
    // The next call waits for this one, and for the one before when this one left its turn early.
    this.#turn = Promise.all([previous, run.catch(() => {})]);
    return run;
  }

  /** Ends the session's shell. It does not wait for the session's turn, so that it can end a
   *  command running in it (which then answers with outcome `cancelled`). */
  close(params: TargetOption = {}): Promise<ExecResult> {
    return this.agent.sessionClose(this.name, params);
  }
}
