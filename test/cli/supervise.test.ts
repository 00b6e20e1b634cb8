import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { cli, root, seededDataDir, spawnLogged, userEnv } from './server-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'cadenza-supervise-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `cadenza start --supervise` on the embedded store: one child with every role (the folder serves
 * one process). SIGKILL of that child: the supervisor starts it again, which takes the dead
 * holder's lock over and serves again; SIGTERM to the supervisor drains the child and frees the lock.
 */
it('on the embedded store, restarts its one child after a SIGKILL and drains it on SIGTERM', { timeout: 600_000 }, async () => {
  const data = await seededDataDir(join(dir, 'data'));
  const p = spawnLogged(process.execPath, [cli, '--data-dir', data, 'start', '--supervise', '--port', '0', '--host', '127.0.0.1'], { cwd: root, env: userEnv });
  const exited = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
  try {
    await p.waitFor('cadenza is running', 300_000);
    const first = Number(readFileSync(join(data, 'db.lock'), 'utf8'));
    expect(p.log()).toContain(`role api,scheduler,sender,sync started (pid ${first})`);
    process.kill(first, 'SIGKILL');
    await p.waitFor('restart 1 in 1000 ms', 30_000);
    const end = Date.now() + 300_000;
    while (p.log().split('cadenza is running').length < 3) {
      if (Date.now() > end || p.child.exitCode !== null) throw new Error(`not serving again:\n${p.log()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const second = Number(readFileSync(join(data, 'db.lock'), 'utf8'));
    expect(second).not.toBe(first);
    p.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(p.log()).toMatch(/SIGTERM: draining \(no new work/);
    expect(p.log()).toContain('supervisor: every role stopped');
    expect(existsSync(join(data, 'db.lock'))).toBe(false);
  } finally {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
    // A child left by a failed run: the one that holds the folder.
    try {
      process.kill(Number(readFileSync(join(data, 'db.lock'), 'utf8')), 'SIGKILL');
    } catch {
      // no lock, or its holder is gone
    }
  }
});
