import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, browser, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { systemClock } from '../../common/clock.ts';
import { buildServer } from '../server.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { testBackends } from '../../../test/stores.ts';
import { dnsResolver } from '../../sending/dns/check.ts';

/**
 * The Domains API against a DNS server on loopback: the list with each check and the record to
 * publish, a re-check that stores the change (and its webhook), the alerts, the rate limit, and
 * another workspace's domains refused.
 */
describe.each(testBackends())('domains API (%s)', (backend) => {
  let h: ApiHarness;
  let dns: TestDnsServer;
  let a: string;
  let b: string;
  let ownerA: Browser;
  let ownerB: Browser;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    h = await apiHarness(backend, { domains: { resolver: dnsResolver({ server: dns.address, timeoutMs: 500 }), blocklists: { ip: [], domain: ['dbl.bl.test'] }, publicHost: 'app.cadenza.test' } });
    const wa = await seedWorkspace(h.store, 'A', 'owner-a@example.test');
    const wb = await seedWorkspace(h.store, 'B', 'owner-b@example.test');
    a = wa.workspaceId;
    b = wb.workspaceId;
    await h.store.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-00000000a001', workspace_id: a, email: 'rep@acme.test', provider: 'gmail' }).execute();
    await h.store.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-00000000b001', workspace_id: b, email: 'rep@beta.test', provider: 'smtp_imap', settings: JSON.stringify({ smtp: { host: 'smtp.beta.test' } }) }).execute();
    ownerA = await login(h.app, 'owner-a@example.test', wa.password);
    ownerB = await login(h.app, 'owner-b@example.test', wb.password);
    dns.setTxt('acme.test', ['v=spf1 include:_spf.google.com ~all']);
    dns.setTxt('google._domainkey.acme.test', ['v=DKIM1; k=rsa; p=MIIB']);
    dns.setTxt('_dmarc.acme.test', ['v=DMARC1; p=none; rua=mailto:d@acme.test']);
    dns.setMx('acme.test', [{ exchange: 'smtp.google.com', priority: 1 }]);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await dns?.close();
  });

  it('lists the domains unchecked, re-checks one, then shows each check; a break is an alert with a webhook', async () => {
    const hook = await ownerA.call('POST', `/api/workspaces/${a}/webhooks`, { url: 'https://hooks.example.com/in', events: ['domain.health_changed'] });
    expect(hook.statusCode).toBe(201);
    const first = await ownerA.call('GET', `/api/workspaces/${a}/domains`);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ domains: [{ domain: 'acme.test', purpose: 'sending', verdict: null, status: null, checks: [], checkedAt: null, changedAt: null }], unseenAlerts: 0, checksEnabled: true });

    const ok = await ownerA.call('POST', `/api/workspaces/${a}/domains/recheck`, { domain: 'ACME.test' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ domain: 'acme.test', verdict: 'ok', status: 'ok' });
    expect(ok.json().checks.map((c: { kind: string; status: string }) => `${c.kind}:${c.status}`)).toEqual(['spf:ok', 'dkim:ok', 'dmarc:ok', 'mx:ok', 'blocklist:ok']);

    dns.setA('acme.test.dbl.bl.test', ['127.0.1.2']);
    dns.setTxt('_dmarc.acme.test', []);
    const broken = (await ownerA.call('POST', `/api/workspaces/${a}/domains/recheck`, { domain: 'acme.test' })).json();
    expect(broken).toMatchObject({ verdict: 'broken', status: 'broken' });
    const dmarc = broken.checks.find((c: { kind: string }) => c.kind === 'dmarc');
    expect(dmarc).toMatchObject({ status: 'missing', publish: { type: 'TXT', name: '_dmarc.acme.test', value: 'v=DMARC1; p=none; rua=mailto:dmarc@acme.test' } });
    expect(broken.checks.find((c: { kind: string }) => c.kind === 'blocklist')).toMatchObject({ status: 'listed', zone: 'dbl.bl.test', differences: ['acme.test is listed on dbl.bl.test: DBL: a spam domain'] });

    const list = (await ownerA.call('GET', `/api/workspaces/${a}/domains`)).json();
    expect(list.unseenAlerts).toBe(1);
    const alerts = (await ownerA.call('GET', `/api/workspaces/${a}/domains/alerts`)).json().alerts;
    expect(alerts).toEqual([expect.objectContaining({ domain: 'acme.test', from: 'ok', to: 'broken', seen: false })]);
    expect(alerts[0].failing.map((f: { kind: string }) => f.kind).sort()).toEqual(['blocklist', 'dmarc']);
    const deliveries = (await ownerA.call('GET', `/api/workspaces/${a}/webhooks/${hook.json().id}/deliveries`)).json();
    expect(JSON.stringify(deliveries)).toContain('domain.health_changed');

    expect((await ownerA.call('POST', `/api/workspaces/${a}/domains/alerts/seen`, { upToId: alerts[0].id })).json()).toEqual({ marked: 1 });
    expect((await ownerA.call('GET', `/api/workspaces/${a}/domains`)).json().unseenAlerts).toBe(0);
  });

  it("another workspace's domain, or a name no mailbox uses, is not re-checked; B cannot read A's domains", async () => {
    const before = dns.queries.length;
    for (const domain of ['beta.test', 'example.com']) {
      const r = await ownerA.call('POST', `/api/workspaces/${a}/domains/recheck`, { domain });
      expect(r.statusCode).toBe(404);
      expect(r.json().error.code).toBe('NOT_FOUND');
    }
    expect(dns.queries.length).toBe(before); // no query made for a name the workspace does not own
    const seenBefore = (await ownerA.call('GET', `/api/workspaces/${a}/domains/alerts`)).json();
    expect([403, 404]).toContain((await ownerB.call('GET', `/api/workspaces/${a}/domains`)).statusCode);
    expect([403, 404]).toContain((await ownerB.call('GET', `/api/workspaces/${a}/domains/alerts`)).statusCode);
    expect([403, 404]).toContain((await ownerB.call('POST', `/api/workspaces/${a}/domains/recheck`, { domain: 'acme.test' })).statusCode);
    expect([403, 404]).toContain((await ownerB.call('POST', `/api/workspaces/${a}/domains/alerts/seen`, { upToId: 1000 })).statusCode);
    expect(dns.queries.length).toBe(before);
    expect((await ownerA.call('GET', `/api/workspaces/${a}/domains/alerts`)).json()).toEqual(seenBefore);
    const mine = (await ownerB.call('GET', `/api/workspaces/${b}/domains`)).json();
    expect(mine.domains.map((d: { domain: string }) => d.domain)).toEqual(['beta.test']);
    expect((await ownerB.call('GET', `/api/workspaces/${b}/domains/alerts`)).json().alerts).toEqual([]);
  });

  it('with checks off, the list shows stored results and a re-check is refused with a clear error', async () => {
    // A second server on the same store, without the checks' settings; A's session works there too.
    const off = buildServer({ store: h.store, clock: systemClock, version: 'test', api: { ...h.ctx, domains: undefined } });
    try {
      await off.ready();
      const owner = browser(off, ownerA.accountId, ownerA.cookie, ownerA.csrf);
      const list = (await owner.call('GET', `/api/workspaces/${a}/domains`)).json();
      expect(list).toMatchObject({ checksEnabled: false, domains: [{ domain: 'acme.test', verdict: 'broken' }] });
      const r = await owner.call('POST', `/api/workspaces/${a}/domains/recheck`, { domain: 'acme.test' });
      expect(r.statusCode).toBe(409);
      expect(r.json().error.message).toMatch(/domain checks are off/);
    } finally {
      await off.close();
    }
  });

  it('the re-check is rate-limited', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push((await ownerB.call('POST', `/api/workspaces/${b}/domains/recheck`, { domain: 'beta.test' })).statusCode);
    expect(codes.filter((c) => c === 429).length).toBeGreaterThan(0);
    expect(codes.filter((c) => c === 200).length).toBeLessThanOrEqual(10);
  });
});
