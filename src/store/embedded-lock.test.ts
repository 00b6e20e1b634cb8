import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from './store.ts';
import { startServer } from '../../test/cli/server-process.ts';

const root = join(import.meta.dirname, '..', '..');
const cli = join(root, 'bin', 'cadenza.js');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'CADENZA_DATA_DIR'));

describe('the embedded database serves one process at a time', { timeout: 90_000 }, () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'cadenza-lock-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    // The CLI runs the server in a child of its own (bin/cadenza.js): its whole process group goes.
    for (const c of children.splice(0)) {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a folder held by another live process is refused; a dead holder’s lock is taken over; close frees it', async () => {
    const db = join(tempDir(), 'db');
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true });
    children.push(other);
    writeFileSync(`${db}.lock`, `${other.pid}\n`);
    await expect(openStore({ dataDir: db })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining(`in use by process ${other.pid}`) });

    other.kill('SIGKILL');
    await new Promise((r) => other.once('exit', r));
    const store = await openStore({ dataDir: db });
    expect(readFileSync(`${db}.lock`, 'utf8').trim()).toBe(String(process.pid));
    await store.close();
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it('a command run beside `cadenza start` on the same folder goes through the server; a second server is refused, saying what to do', async () => {
    const data = join(tempDir(), 'data');
    const started = startServer(data, [], { detached: true });
    const server = (await started).child;
    children.push(server);
    const log = (await started).log;
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, '--data-dir', data, '--json', ...args], { env }).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );
    const added = await run(['mailbox', 'add', 'rep@lock.test', '--provider', 'gmail']);
    expect(added.code, added.stdout).toBe(0);

    const second = await run(['start', '--port', '0', '--host', '127.0.0.1']);
    expect(second.code).toBe(1);
    const error = (JSON.parse(second.stdout) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.message).toMatch(/in use by process \d+ .*stop it first.*PostgreSQL/);

    // Stopped (SIGTERM, a graceful stop), the server frees the folder, and what the command wrote
    // through it is in the folder.
    process.kill(-server.pid!, 'SIGTERM');
    const stopBy = Date.now() + 30_000;
    while (existsSync(join(data, 'db.lock'))) {
      if (Date.now() > stopBy) throw new Error(`the server kept the folder after SIGTERM: ${log()}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const { stdout } = await promisify(execFile)(process.execPath, [cli, '--data-dir', data, '--json', 'mailbox', 'list'], { env });
    expect((JSON.parse(stdout) as Array<{ email: string }>).map((m) => m.email)).toEqual(['rep@lock.test']);
  });
});
