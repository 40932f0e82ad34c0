// Where the agent-exec binary is: one place, used by the launcher (bin/agent-exec.js imports the
// compiled dist/binary.js) and by the client (src/index.ts).
//
//   1. $AGENT_EXEC_BIN, when set and not empty;
//   2. else the platform package that platforms.json names for this machine
//      (`${process.platform}-${process.arch}`), installed as an optional dependency of agent-exec:
//      its file bin/agent-exec;
//   3. else a BinaryNotFoundError saying what is missing and what to do.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** One entry of platforms.json: the npm package that carries the binary of one platform. */
export interface Platform {
  /** The npm package, e.g. `@agent-exec/linux-x64`. */
  package: string;
  /** Its `os` and `cpu` (as `process.platform` and `process.arch` name them). */
  os: string;
  cpu: string;
  /** The Rust target its binary is built for. */
  rustTarget: string;
}

/** No binary to run: the message says which platform, which package, and what to do. */
export class BinaryNotFoundError extends Error {
  override name = 'BinaryNotFoundError';
}

/** The platforms agent-exec ships binaries for, keyed by `${process.platform}-${process.arch}`. */
export function platforms(): Record<string, Platform> {
  // dist/binary.js -> ../platforms.json, the package's root (in the source tree as when installed).
  return JSON.parse(readFileSync(new URL('../platforms.json', import.meta.url), 'utf8'));
}

/** This machine's key in platforms.json. */
export function platformKey(): string {
  return `${process.platform}-${process.arch}`;
}

/** The path of the agent-exec binary to run; throws BinaryNotFoundError when there is none. */
export function resolveBinary(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env['AGENT_EXEC_BIN'];
  if (fromEnv) return fromEnv;

  const key = platformKey();
  const all = platforms();
  const platform = all[key];
  if (!platform) {
    throw new BinaryNotFoundError(
      `agent-exec: no prebuilt binary for this platform (${key}); ` +
        `there are ones for: ${Object.keys(all).join(', ') || 'none'}. ` +
        'Build agent-exec from source (https://github.com/agent-exec/agent-exec) ' +
        'and set AGENT_EXEC_BIN to the path of the binary.',
    );
  }
  const require = createRequire(import.meta.url);
  try {
    return require.resolve(`${platform.package}/bin/agent-exec`);
  } catch {
    throw new BinaryNotFoundError(
      `agent-exec: the binary for this platform (${key}) comes in the package ${platform.package}, ` +
        'an optional dependency of agent-exec, and it is not installed. ' +
        'Reinstall agent-exec without --omit=optional / --no-optional (and without ' +
        'optional=false in .npmrc), or set AGENT_EXEC_BIN to the path of an agent-exec binary.',
    );
  }
}
