import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../common/logger.ts';
import { startTestDnsServer } from '../../test/dns-server.ts';
import { startApp } from './app.ts';

describe('cadenza start checks domains', () => {
  it('the scheduler role runs the domain pass and the SSO proofs\' re-check against the configured resolver; /metrics shows the gauge; stop ends it', async () => {
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
      // The SSO proofs' daily re-check runs there too, through the same resolver: a verified
      // domain whose record has been missing for three days and three checks loses its proof now.
      const since = new Date(Date.now() - 4 * 86_400_000);
      await app.store.db.insertInto('workspace_sso').values({ workspace_id: ws, issuer: 'https://id.wired.test', client_id: 'c', client_secret_sealed: Buffer.from('x'), allowed_domains: ['wired.test'] }).execute();
      await app.store.db.insertInto('workspace_sso_domain').values({ workspace_id: ws, domain: 'wired.test', token: '0123456789abcdef0123456789abcdef', verified_at: since, checked_at: new Date(Date.now() - 86_400_000), failures: 3, failing_since: since }).execute();
      await expect.poll(async () => (await app.store.db.selectFrom('workspace_sso_domain').select('verified_at').executeTakeFirstOrThrow()).verified_at, { timeout: 10_000, interval: 50 }).toBeNull();
      expect(dns.queries.some((q) => q.name === '_cadenza-sso.wired.test' && q.type === 'TXT')).toBe(true);
      expect(await app.store.db.selectFrom('notification_event').select('kind').where('kind', '=', 'sso_attention').execute()).toEqual([{ kind: 'sso_attention' }]);
    } finally {
      await app.stop();
      await dns.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
