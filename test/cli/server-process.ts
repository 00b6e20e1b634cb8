import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedDbDir } from '../../src/common/config.ts';
import { seedDataDir } from '../pglite-template.ts';

export const root = join(import.meta.dirname, '..', '..');
export const cli = join(root, 'bin', 'cadenza.js');
/** The environment of a command run as a user would, on the store its flags name (no DATABASE_URL, no CADENZA_DATA_DIR of the test run). */
export const userEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'CADENZA_DATA_DIR'));

export interface Logged {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  log(): string;
  /** Resolves once the output holds `text`; rejects if the process ends first or `ms` pass. */
  waitFor(text: string, ms?: number): Promise<void>;
}

/** A long-running process (`cadenza start`, `npm start`) whose output the test reads as it comes. */
export function spawnLogged(command: string, args: string[], opts: SpawnOptions = {}): Logged {
  const child = spawn(command, args, { env: userEnv, ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  return {
    child,
    log: () => out,
    async waitFor(text, ms = 90_000) {
      const end = Date.now() + ms;
      while (!out.includes(text)) {
        if (Date.now() > end || child.exitCode !== null || child.signalCode !== null) throw new Error(`no '${text}' in the output: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/**
 * A new data folder with its embedded store already migrated (from the test template): what a
 * server start there is tested for is the same, and it skips PGlite's new cluster and the
 * migrations, the slowest part of a first start. A folder that holds a store is left as it is.
 */
export async function seededDataDir(dataDir: string): Promise<string> {
  if (!existsSync(embeddedDbDir(dataDir))) await seedDataDir(dataDir);
  return dataDir;
}

/** `cadenza start` on a folder of its own (seeded when new), on loopback and a free port, once it serves. */
export async function startServer(dataDir: string, extra: string[] = [], opts: SpawnOptions = {}): Promise<Logged> {
  await seededDataDir(dataDir);
  const p = spawnLogged(process.execPath, [cli, '--data-dir', dataDir, 'start', '--port', '0', '--host', '127.0.0.1', ...extra], opts);
  await p.waitFor('cadenza is running');
  return p;
}
