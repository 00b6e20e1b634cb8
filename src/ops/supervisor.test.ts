import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import { Supervisor, type RoleChild } from './supervisor.ts';

/** Pids of the children whose program is running (their signal handlers are in place). */
const up = new Set<number>();

/** A real child process running a small node program `source`; it says 'up' once its handlers are set. */
function nodeChild(source: string): RoleChild {
  const child = spawn(process.execPath, ['-e', `${source}; process.stdout.write('up')`], { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout!.on('data', () => up.add(child.pid!));
  return {
    pid: child.pid,
    ended: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
    kill: (signal) => void child.kill(signal),
  };
}

function recordingLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (_o: unknown, msg?: string) => void lines.push(msg ?? String(_o));
  return { log: { info: at, warn: at, error: at, debug: at } as unknown as Logger, lines };
}

const quickPolicy = { baseMs: 50, capMs: 200, stableMs: 5_000, maxFastCrashes: 4 };
// Stays up until SIGTERM, then takes 200 ms to "drain" and exits 0.
const drains = `process.on('SIGTERM', () => setTimeout(() => process.exit(0), 200)); setInterval(() => {}, 1000);`;

const waitUntil = async (cond: () => boolean, what: string, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('supervisor', { timeout: 60_000 }, () => {
  it('gives up on a role that crashes at every start, after the back-off, and drains the others', async () => {
    const { log, lines } = recordingLog();
    const started: string[] = [];
    const s = new Supervisor({
      groups: [['sender'], ['sync']],
      spawn: (roles) => {
        started.push(roles[0]!);
        return nodeChild(roles[0] === 'sender' ? 'process.exit(3)' : drains);
      },
      clock: systemClock,
      log,
      policy: quickPolicy,
    });
    const t0 = Date.now();
    s.start();
    const end = await s.done;
    expect(end).toEqual({ kind: 'gave-up', roles: 'sender', reason: 'it ended 4 times in a row, each within 5 s of its start' });
    // 4 lives of the sender (3 restarts after 50, 100, 200 ms), 1 of the sync, which was drained.
    expect(started.filter((r) => r === 'sender')).toHaveLength(4);
    expect(started.filter((r) => r === 'sync')).toHaveLength(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
    expect(s.restartCounts()).toEqual({ sender: 3, sync: 0 });
    expect(lines.filter((l) => /role sender exited with code 3; restart \d in \d+ ms/.test(l)).map((l) => l.replace(/.* in /, ''))).toEqual(['50 ms', '100 ms', '200 ms']);
    expect(lines.some((l) => l.includes('giving up'))).toBe(true);
    expect(s.pids()).toEqual({ sender: undefined, sync: undefined });
  });

  it('restarts a child killed by SIGKILL, and a stop drains every child with SIGTERM and restarts none', async () => {
    const { log, lines } = recordingLog();
    const s = new Supervisor({ groups: [['sender'], ['sync']], spawn: () => nodeChild(drains), clock: systemClock, log, policy: quickPolicy });
    s.start();
    const first = s.pids().sender!;
    process.kill(first, 'SIGKILL');
    await waitUntil(() => s.pids().sender !== undefined && s.pids().sender !== first, 'the sender is restarted');
    expect(s.restartCounts()).toEqual({ sender: 1, sync: 0 });
    await waitUntil(() => up.has(s.pids().sender!) && up.has(s.pids().sync!), 'both children run');
    expect(lines.some((l) => l.includes('role sender killed by SIGKILL; restart 1 in 50 ms'))).toBe(true);
    const before = Date.now();
    const end = await s.stop('SIGTERM');
    expect(end).toEqual({ kind: 'stopped' });
    // Each child drained for its 200 ms (SIGTERM handled), none restarted after the stop.
    expect(Date.now() - before).toBeGreaterThanOrEqual(190);
    expect(s.pids()).toEqual({ sender: undefined, sync: undefined });
    expect(s.restartCounts()).toEqual({ sender: 1, sync: 0 });
    await new Promise((r) => setTimeout(r, 200));
    expect(s.pids()).toEqual({ sender: undefined, sync: undefined });
  });

  it('a child whose drain outlasts the deadline is killed, so a stop always ends', async () => {
    const { log, lines } = recordingLog();
    const s = new Supervisor({ groups: [['api']], spawn: () => nodeChild(`process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`), clock: systemClock, log, policy: quickPolicy, killAfterMs: 300 });
    s.start();
    await waitUntil(() => up.has(s.pids().api!), 'the child runs');
    expect(await s.stop('SIGINT')).toEqual({ kind: 'stopped' });
    expect(lines.some((l) => l.includes('still draining after 300 ms: SIGKILL'))).toBe(true);
  });

  it('a crash waiting for its restart when the stop comes is not restarted', async () => {
    const { log } = recordingLog();
    let lives = 0;
    const s = new Supervisor({ groups: [['scheduler']], spawn: () => (lives++, nodeChild('process.exit(1)')), clock: systemClock, log, policy: { ...quickPolicy, baseMs: 1_000 } });
    s.start();
    await waitUntil(() => s.restartCounts().scheduler === 1, 'the first crash');
    expect(await s.stop('SIGTERM')).toEqual({ kind: 'stopped' });
    await new Promise((r) => setTimeout(r, 1_200));
    expect(lives).toBe(1);
  });
});
