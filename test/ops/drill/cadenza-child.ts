import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/**
 * `cadenza start --roles …` as a child process on a drill's database, as an operator runs it: the
 * drills watch it from outside (the database, the mail bed), never from inside.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsxLoader = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');

export interface CadenzaChild {
  readonly process: ChildProcess;
  /** Its stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then SIGKILL after 10 s; says which ended it. */
  stop(): Promise<'exited' | 'killed'>;
}

export function startCadenza(o: { databaseUrl: string; roles: string[]; master: Buffer; dataDir: string }): CadenzaChild {
  const roles = o.roles.join(',');
  const child = spawn(process.execPath, ['--import', tsxLoader, join(root, 'src', 'cli', 'main.ts'), 'start', '--roles', roles], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: o.databaseUrl,
      CADENZA_DATA_DIR: o.dataDir,
      CADENZA_MASTER_KEY: o.master.toString('base64'),
      CADENZA_PUBLIC_URL: 'https://cadenza.example.test',
      CADENZA_ROLES: roles,
      // The mail bed is on loopback; the drill asks no DNS (as vitest.config.ts sets for tests).
      CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS: 'true',
      CADENZA_LIST_HYGIENE: 'off',
      CADENZA_UNKNOWN_GRACE_MS: '3000',
      CADENZA_SENDER_RESOLVE_EVERY_MS: '500',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (b: Buffer) => void (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => void (output += b.toString()));
  return {
    process: child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return 'exited';
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode !== null || child.signalCode !== null) return 'exited';
      child.kill('SIGKILL');
      await exited;
      return 'killed';
    },
  };
}
