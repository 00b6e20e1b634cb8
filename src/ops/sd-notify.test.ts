import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { createLogger } from '../common/logger.ts';
import { systemdNotifier } from './sd-notify.ts';

const have = (cmd: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`]);
    return true;
  } catch {
    return false;
  }
};
const missing = ['systemd-notify', 'python3'].filter((c) => !have(c));

/**
 * The notifications reach a real unix datagram socket, read by python (node cannot read one
 * either), through the real systemd-notify: the bytes systemd would read.
 */
describe.skipIf(missing.length > 0)(`systemd notifications${missing.length ? ` (skipped: ${missing.join(', ')} not installed)` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-sdnotify-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends READY=1, then WATCHDOG=1 every half watchdog period, then STOPPING=1', async () => {
    const sock = join(dir, 'notify.sock');
    const reader = spawn('python3', ['-u', '-c', `import socket\ns=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)\ns.bind(${JSON.stringify(sock)})\nprint('bound')\nwhile True:\n  print(s.recv(4096).decode())`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let got = '';
    reader.stdout!.on('data', (b: Buffer) => (got += b.toString()));
    try {
      const until = async (cond: () => boolean, what: string) => {
        const end = Date.now() + 15_000;
        while (!cond()) {
          if (Date.now() > end) throw new Error(`${what}: not within 15 s; received: ${got}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await until(() => got.includes('bound') && existsSync(sock), 'the socket is bound');
      const n = systemdNotifier({ NOTIFY_SOCKET: sock, WATCHDOG_USEC: '400000', WATCHDOG_PID: String(process.pid) }, systemClock, createLogger({ level: 'silent' }))!;
      n.ready();
      await until(() => got.split('\n').filter((l) => l === 'WATCHDOG=1').length >= 3, 'three watchdog pings');
      n.stopping();
      await until(() => got.includes('STOPPING=1'), 'stopping');
      n.close();
      const lines = got.split('\n').filter((l) => l && l !== 'bound' && l !== 'BARRIER=1');
      expect(lines[0]).toBe('READY=1');
      expect(lines.slice(1, 4)).toEqual(['WATCHDOG=1', 'WATCHDOG=1', 'WATCHDOG=1']);
    } finally {
      reader.kill('SIGKILL');
    }
  });

  it('is off without NOTIFY_SOCKET, and the watchdog is off when WATCHDOG_PID names another process', () => {
    expect(systemdNotifier({}, systemClock, createLogger({ level: 'silent' }))).toBeUndefined();
    const n = systemdNotifier({ NOTIFY_SOCKET: join(dir, 'none.sock'), WATCHDOG_USEC: '400000', WATCHDOG_PID: '1' }, systemClock, createLogger({ level: 'silent' }));
    expect(n).toBeDefined();
    n!.close();
  });
});
