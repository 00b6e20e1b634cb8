import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { provablyGone, systemPidProbe, thisProcess, type PidProbe } from './process-identity.ts';

describe('provablyGone', () => {
  const me = thisProcess();

  it('proves a process on this host dead once its pid is gone, and never proves a live one dead', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    const holder = { ...me, pid: child.pid!, startTicks: systemPidProbe.startTicks(child.pid!) };
    expect(provablyGone(holder, me)).toBe(false);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(provablyGone(holder, me)).toBe(true);
    expect(provablyGone(me, me)).toBe(false);
  });

  it('reads a reused pid (same pid, another start) as the holder gone, and proves nothing across hosts, boots or pid namespaces', () => {
    const reused: PidProbe = { exists: () => true, startTicks: () => 2000 };
    const holder = { ...me, pid: 4242, startTicks: 1000 };
    expect(provablyGone(holder, me, reused)).toBe(true);
    expect(provablyGone({ ...holder, startTicks: 2000 }, me, reused)).toBe(false);
    expect(provablyGone({ ...holder, startTicks: null }, me, reused)).toBe(false);
    const gone: PidProbe = { exists: () => false, startTicks: () => null };
    expect(provablyGone({ ...holder, host: 'elsewhere' }, me, gone)).toBe(false);
    expect(provablyGone({ ...holder, bootId: 'another-boot' }, me, gone)).toBe(false);
    expect(provablyGone({ ...holder, pidNs: 'pid:[1]' }, me, gone)).toBe(false);
    expect(provablyGone(holder, me, gone)).toBe(true);
  });
});
