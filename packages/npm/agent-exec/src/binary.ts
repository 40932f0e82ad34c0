// Where the agent-exec binary is: one place, used by the launcher (bin/agent-exec.js imports the
// compiled dist/binary.js) and by the client (src/index.ts).
//
//   1. $AGENT_EXEC_BIN, when set and not empty;
//   2. else the platform package that platforms.json names for this machine
//      (`${process.platform}-${process.arch}`), installed as an optional dependency of agent-exec:
//      its file bin/agent-exec — when its binary's C library (`libc`) is this system's;
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
  /** The C library its binary links to (`glibc`), when it needs one: as `systemLibc()` names it. */
  libc?: string;
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

/** This system's C library, for platforms.json's `libc`: `glibc`, or `musl` on a Linux without
 *  glibc (Alpine; Node's report names a glibc only where it runs on one); null off Linux. */
export function systemLibc(): string | null {
  if (process.platform !== 'linux') return null;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

/** The path of the agent-exec binary to run; throws BinaryNotFoundError when there is none.
 *  `libc`: this system's C library (default: `systemLibc()`, asked only when it matters). */
export function resolveBinary(env: NodeJS.ProcessEnv = process.env, libc?: string | null): string {
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
  // A glibc binary cannot start on musl: its spawn would fail with a bare ENOENT (the missing
  // dynamic loader), which names no cause.
  const have = libc === undefined ? systemLibc() : libc;
  if (platform.libc && have !== platform.libc) {
    throw new BinaryNotFoundError(
      `agent-exec: the prebuilt binary for this platform (${key}, in ${platform.package}) is built ` +
        `for ${platform.libc}, but this system's C library is ${have ?? 'another'}, which cannot run it. ` +
        'Build agent-exec from source on this system (https://github.com/agent-exec/agent-exec) ' +
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
