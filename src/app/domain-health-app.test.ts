import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../common/logger.ts';
import { startTestDnsServer } from '../../test/dns-server.ts';
import { startApp } from './app.ts';

describe('cadenza start checks domains', () => {
  it('the scheduler role runs the domain pass against the configured resolver; /metrics shows the gauge; stop ends it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-domains-app-'));
    const dns = await startTestDnsServer();
    const app = await startApp({
      dataDir: dir,
      port: 0,
      host: '127.0.0.1',
      roles: ['api', 'scheduler'],
      log: createLogger({ level: 'silent' }),
      domains: { resolver: dns.address, blocklists: { ip: [], domain: [] }, everyMs: 100 },
    });
    try {
      const ws = (await app.store.db.selectFrom('workspace').select('id').executeTakeFirstOrThrow()).id;
      await app.store.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-00000000e001', workspace_id: ws, email: 'rep@wired.test', provider: 'gmail' }).execute();
      await expect.poll(async () => (await app.store.db.selectFrom('domain_health').select(['domain', 'verdict']).execute()), { timeout: 10_000, interval: 50 }).toEqual([{ domain: 'wired.test', verdict: 'broken' }]);
      // The checks asked the test server, nothing else.
      expect(dns.queries.some((q) => q.name === '_dmarc.wired.test')).toBe(true);
      await expect.poll(async () => (await fetch(`${app.url}/metrics`).then((r) => r.text())).match(/^cadenza_domains\{status="broken"\} (\d+)$/m)?.[1], { timeout: 5000 }).toBe('1');
    } finally {
      await app.stop();
      await dns.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
