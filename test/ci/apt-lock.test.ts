import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const hasApt = spawnSync('apt-get', ['--version']).status === 0 && spawnSync('python3', ['--version']).status === 0;

// Issue 11: .ci/run and the mail-bed script called apt-get without waiting for the package lock,
// so another install on the machine failed CI at once.
describe('installing packages waits for another install’s lock', () => {
  it('every apt-get of CI and the mail bed goes through apt_get', () => {
    for (const file of ['.ci/run', 'test/mail/mailbed.sh']) {
      const calls = readFileSync(join(root, file), 'utf8')
        .split('\n')
        .filter((l) => !l.trim().startsWith('#') && /\bapt-get\b/.test(l));
      expect(calls, file).toEqual([]);
    }
  });

  // A real apt-get on lists of its own (no network: no sources), with its lists lock held by
  // another process as an install would hold it (fcntl, as apt takes it).
  describe.runIf(hasApt)('with the lock held', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-apt-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    for (const d of ['lists/partial', 'parts', 'cache/archives/partial']) mkdirSync(join(dir, d), { recursive: true });
    const own = ['-o', `Dir::State::Lists=${dir}/lists`, '-o', 'Dir::Etc::SourceList=/dev/null', '-o', `Dir::Etc::SourceParts=${dir}/parts`, '-o', `Dir::Cache=${dir}/cache`];

    /** Resolves once the lock is held; `released` once the holder let go of it. */
    async function holdLock(ms: number): Promise<{ released: Promise<void> }> {
      const flag = join(dir, `held-${ms}`);
      const holder = spawn('python3', ['-c', `import fcntl, os, time\nfd = os.open(${JSON.stringify(`${dir}/lists/lock`)}, os.O_RDWR | os.O_CREAT)\nfcntl.lockf(fd, fcntl.LOCK_EX)\nopen(${JSON.stringify(flag)}, 'w').close()\ntime.sleep(${ms / 1000})`]);
      while (!existsSync(flag)) await new Promise((r) => setTimeout(r, 50));
      return { released: new Promise((r) => holder.once('exit', () => r())) };
    }

    it('plain apt-get update fails at once, even with DPkg::Lock::Timeout', async () => {
      const { released } = await holdLock(3_000);
      const r = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=60', 'update', ...own], { encoding: 'utf8' });
      expect(r.status).toBe(100);
      expect(r.stderr).toMatch(/Could not get lock/);
      await released;
    });

    it('apt_get update waits until the lock is free, then succeeds', async () => {
      const { released } = await holdLock(4_000);
      const started = Date.now();
      const r = spawnSync('bash', ['-c', `set -euo pipefail; source .ci/apt.sh; APT_LOCK_TIMEOUT=60 apt_get update ${own.map((a) => `'${a}'`).join(' ')}`], { cwd: root, encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stderr).toMatch(/another package install holds the lock; waiting/);
      expect(Date.now() - started).toBeGreaterThan(1_000);
      await released;
    });

    it('gives up with apt-get’s own error once its time is up', async () => {
      const { released } = await holdLock(6_000);
      const r = spawnSync('bash', ['-c', `source .ci/apt.sh; APT_LOCK_TIMEOUT=1 apt_get update ${own.map((a) => `'${a}'`).join(' ')}`], { cwd: root, encoding: 'utf8' });
      expect(r.status).toBe(100);
      expect(r.stdout).toMatch(/Could not get lock/);
      await released;
    });
  });
});
