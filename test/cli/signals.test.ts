import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, root, seededDataDir, spawnLogged, userEnv } from './server-process.ts';

/** The process and its descendants, parent first (npm → its child → …). */
function chain(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let kids = '';
    try {
      kids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(out[i])], { encoding: 'utf8' }).trim();
    } catch {
      // ps exits 1 when the process has no children
    }
    if (kids) out.push(...kids.split('\n').map((s) => Number(s.trim())));
  }
  return out;
}

const gone = (pid: number) => {
  try {
    // A zombie is gone too: it holds nothing but its entry until its parent reaps it.
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
};

const starters = {
  'npm start': (data: string) => ({ command: 'npm', args: ['start', '--silent', '--', '--data-dir', data, '--port', '0', '--host', '127.0.0.1'] }),
  'bin/cadenza.js start': (data: string) => ({ command: process.execPath, args: [cli, '--data-dir', data, 'start', '--port', '0', '--host', '127.0.0.1'] }),
};

// Issue 11: SIGTERM or SIGINT to `npm start` (or to bin/cadenza.js) left the server running as an
// orphan that still held the embedded store.
describe.each(Object.keys(starters) as Array<keyof typeof starters>)('stopping %s by a signal', { timeout: 600_000 }, (starter) => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-signals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['SIGTERM', 'SIGINT'] as const)('%s to any process of the chain drains the server and ends the whole chain', async (signal) => {
    // Each position of the chain in turn; the chain's length is known from the first start.
    for (let position = 0, length = 1; position < length; position++) {
      const data = await seededDataDir(join(dir, `${signal}-${position}`));
      const { command, args } = starters[starter](data);
      const p = spawnLogged(command, args, { cwd: root, env: { ...userEnv, npm_config_update_notifier: 'false' } });
      let pids = [p.child.pid!];
      try {
        await p.waitFor('cadenza is running');
        pids = chain(p.child.pid!);
        length = pids.length;
        // The server is the process that holds the folder.
        expect(pids).toContain(Number(readFileSync(join(data, 'db.lock'), 'utf8')));
        process.kill(pids[position]!, signal);
        const end = Date.now() + 60_000;
        while (!pids.every(gone) || existsSync(join(data, 'db.lock'))) {
          if (Date.now() > end) throw new Error(`${signal} to process ${position + 1} of ${pids.length} (${pids.join(' → ')}): still running ${pids.filter((x) => !gone(x)).join(', ')}; lock ${existsSync(join(data, 'db.lock')) ? 'held' : 'free'}\n${p.log()}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(p.log()).toMatch(new RegExp(`${signal}: draining`));
        expect(p.log()).toMatch(/cadenza stopped/);
      } finally {
        // The processes found at the start: an orphan no longer descends from the first.
        for (const pid of [...pids].reverse()) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
    }
  });
});
