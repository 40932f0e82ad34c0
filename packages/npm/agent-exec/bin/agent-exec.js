#!/usr/bin/env node
// The `agent-exec` command of the npm package: runs the native binary with the same arguments
// and stdio, and ends as it ends. It must be transparent — `npx -y agent-exec mcp` is an MCP
// server on stdio — so it never writes on stdout; its own errors go to stderr.
//
// Which binary: $AGENT_EXEC_BIN, else the platform package (dist/binary.js, shared with the client).

import { spawn } from 'node:child_process';
import { constants } from 'node:os';

import { resolveBinary } from '../dist/binary.js';

let binary;
try {
  binary = resolveBinary();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });

// A signal sent to this process (by a parent, or kill) goes on to the binary, which then ends
// as it chooses (agent-exec cancels its calls cleanly). Ctrl-C in a terminal reaches both;
// agent-exec takes a second SIGINT as the first.
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of forwarded) process.on(signal, forward);

child.on('error', (error) => {
  process.stderr.write(`agent-exec: cannot run ${binary}: ${error.message}\n`);
  process.exit(1);
});

child.on('exit', (code, signal) => {
  if (signal === null) process.exit(code ?? 1);
  // Die of the same signal, so that our parent sees what the binary's parent would have seen
  // (not SIGUSR1: it starts Node's inspector).
  for (const s of forwarded) process.off(s, forward);
  if (signal !== 'SIGUSR1') process.kill(process.pid, signal);
  // A signal Node ignores or handles (SIGPIPE, SIGUSR1) leaves this process running: exit with the
  // status a shell reports for it.
  setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
});
