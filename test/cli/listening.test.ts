import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, seededDataDir, spawnLogged, userEnv } from './server-process.ts';

interface RunningLine {
  listening: string[];
  urls: string[];
  everyInterface: boolean;
}

// Issue 11: the server listened on every interface by default while its log printed a loopback URL.
describe('where `cadenza start` says it listens', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-listen-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function started(name: string, host?: string): Promise<RunningLine> {
    const env = { ...userEnv };
    delete env.HOST;
    if (host) env.HOST = host;
    const p = spawnLogged(process.execPath, [cli, '--data-dir', await seededDataDir(join(dir, name)), 'start', '--port', '0', '--roles', 'api'], { env });
    try {
      await p.waitFor('cadenza is running');
      const line = JSON.parse(p.log().split('\n').find((l) => l.includes('cadenza is running'))!) as RunningLine & { msg: string };
      // Each URL it names answers.
      for (const url of line.urls) expect((await fetch(`${url}/healthz`)).status, url).toBe(200);
      expect(line.msg).toContain(line.urls.join(' '));
      return line;
    } finally {
      p.child.kill('SIGTERM');
      await new Promise((r) => p.child.once('exit', r));
    }
  }

  it('listens on loopback by default, and says so', async () => {
    const line = await started('default');
    expect(line.listening).toEqual([expect.stringMatching(/^127\.0\.0\.1:\d+$/)]);
    expect(line.everyInterface).toBe(false);
  });

  it('on 0.0.0.0, names every interface with a URL for each', async () => {
    const line = await started('every', '0.0.0.0');
    expect(line.listening).toEqual([expect.stringMatching(/^0\.0\.0\.0:\d+$/)]);
    expect(line.everyInterface).toBe(true);
    expect(line.urls[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
