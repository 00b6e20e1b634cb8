/**
 * The daily domain re-check on a simulated clock, against a real store and a DNS server on
 * loopback: a domain that breaks raises exactly one alert (a change row and one webhook delivery),
 * its recovery exactly one more, a resolver outage none; one process does the pass (the lease). A
 * custom tracking host's CNAME and certificate (renewal failing, end near) are checked the same way.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { Leases } from '../../ops/leases.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { dnsResolver } from './check.ts';
import { DOMAIN_HEALTH_LEASE, DomainMonitor, recheckDomain, type DomainHealthSettings } from './domain-monitor.ts';
import { domainAlerts, markAlertsSeen, storedDomainHealth } from './sql/domain-health.ts';
import { domainOfWorkspace, removeDomain, setDomain, storeCertificate, updateState } from '../../tracking/domains/sql/tracking-domain.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T = Date.UTC(2026, 5, 1, 6, 0);
const WS = '00000000-0000-4000-8000-0000000000a1';
const OTHER = '00000000-0000-4000-8000-0000000000b2';

describe.each(testBackends())('daily domain re-check on %s', (backend) => {
  let store: TestStore;
  let dns: TestDnsServer;
  let settings: DomainHealthSettings;
  beforeAll(async () => {
    store = await freshStore(backend);
    dns = await startTestDnsServer();
    settings = { resolver: dnsResolver({ server: dns.address, timeoutMs: 500 }), blocklists: { ip: [], domain: ['dbl.bl.test'] }, publicHost: 'app.cadenza.test' };
  });
  afterAll(async () => {
    await dns.close();
    await store.destroy();
  });

  const publish = (domain: string) => {
    dns.setTxt(domain, ['v=spf1 include:_spf.google.com ~all']);
    dns.setTxt(`google._domainkey.${domain}`, ['v=DKIM1; k=rsa; p=MIIBIjAN']);
    dns.setTxt(`_dmarc.${domain}`, [`v=DMARC1; p=quarantine; rua=mailto:dmarc@${domain}`]);
    dns.setMx(domain, [{ exchange: 'smtp.google.com', priority: 1 }]);
  };
  let n = 0;
  let domain = '';
  beforeEach(async () => {
    await sql`truncate table workspace cascade`.execute(store.db);
    await sql`delete from lease`.execute(store.db);
    domain = `d${++n}-${backend}.acme.test`;
    for (const [id, name] of [[WS, 'Acme'], [OTHER, 'Other']] as const) {
      await store.db.insertInto('workspace').values({ id, name, settings: JSON.stringify({ trackingDomain: `links.${domain}` }) }).execute();
    }
    await store.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-0000000000c3', workspace_id: WS, email: `rep@${domain}`, provider: 'gmail' }).execute();
    await store.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-0000000000c4', workspace_id: WS, email: `ae@${domain.toUpperCase()}`, provider: 'gmail' }).execute();
    await store.db.insertInto('webhook_endpoint').values({ id: '00000000-0000-4000-8000-0000000000d5', workspace_id: WS, url: 'https://hooks.example.test/x', events: ['domain.health_changed'], secret_sealed: Buffer.from('x') }).execute();
    publish(domain);
    dns.setCname(`links.${domain}`, 'app.cadenza.test');
  });

  const deliveries = () => store.db.selectFrom('webhook_delivery').select(['event_type', 'payload', 'workspace_id']).orderBy('id').execute();

  it('checks each domain once a day; one alert when it breaks, one when it recovers, none for a resolver outage', async () => {
    const clock = new SimClock(T);
    const counts: unknown[] = [];
    const monitor = new DomainMonitor({ store, clock, settings, owner: 'p1', onCounts: (c) => counts.push(c) });
    // First pass: both domains of WS checked (one sending domain for two mailboxes, the tracking host).
    const first = await monitor.runOnce();
    expect(first).toBe(2 + 1); // WS: sending + tracking; OTHER: its tracking host
    const stored = await storedDomainHealth(store.db, WS);
    expect(stored.map((s) => `${s.purpose}:${s.domain}:${s.verdict}:${s.status}`)).toEqual([`sending:${domain}:ok:ok`, `tracking:links.${domain}:ok:ok`]);
    expect(await domainAlerts(store.db, WS, 10)).toEqual([]); // the first check is no alert
    expect(counts.at(-1)).toEqual({ ok: 3, broken: 0, unknown: 0 });

    // Nothing due an hour later.
    clock.advance(HOUR);
    expect(await monitor.runOnce()).toBe(0);

    // DMARC removed: the next day's pass finds it, one alert.
    dns.setTxt(`_dmarc.${domain}`, []);
    clock.advance(24 * HOUR);
    expect(await monitor.runOnce()).toBe(3);
    let alerts = await domainAlerts(store.db, WS, 10);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ domain, from: 'ok', to: 'broken', failing: [{ kind: 'dmarc', status: 'missing' }] });
    let hooks = await deliveries();
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ event_type: 'domain.health_changed', workspace_id: WS, payload: { domain, purpose: 'sending', from: 'ok', to: 'broken' } });

    // Still broken the day after: no second alert.
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    expect(await domainAlerts(store.db, WS, 10)).toHaveLength(1);

    // The resolver fails: unknown, the status kept, no alert either way.
    for (const name of [domain, `_dmarc.${domain}`, `google._domainkey.${domain}`, `${domain}.dbl.bl.test`]) dns.servfail(name);
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    const during = (await storedDomainHealth(store.db, WS)).find((s) => s.purpose === 'sending')!;
    expect(during).toMatchObject({ verdict: 'unknown', status: 'broken' });
    expect(await domainAlerts(store.db, WS, 10)).toHaveLength(1);

    // Fixed (and the resolver back): one recovery alert.
    const fixed = `r${n}-${backend}.acme.test`;
    await store.db.updateTable('mailbox').set({ email: sql`replace(lower(email), ${domain}, ${fixed})` }).where('workspace_id', '=', WS).execute();
    publish(fixed);
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    // A domain no mailbox uses any more is forgotten; the new one is a first check (no alert).
    expect((await storedDomainHealth(store.db, WS)).map((s) => s.domain)).toEqual([fixed, `links.${domain}`]);
    expect(await domainAlerts(store.db, WS, 10)).toHaveLength(1);

    dns.setTxt(`_dmarc.${fixed}`, []);
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    dns.setTxt(`_dmarc.${fixed}`, [`v=DMARC1; p=none; rua=mailto:dmarc@${fixed}`]);
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    alerts = await domainAlerts(store.db, WS, 10);
    expect(alerts.map((a) => `${a.domain}:${a.from}->${a.to}`)).toEqual([`${fixed}:broken->ok`, `${fixed}:ok->broken`, `${domain}:ok->broken`]);
    hooks = await deliveries();
    expect(hooks.map((h) => (h.payload as { to: string }).to)).toEqual(['broken', 'broken', 'ok']);
    expect(counts.at(-1)).toEqual({ ok: 3, broken: 0, unknown: 0 });

    expect(await markAlertsSeen(store.db, WS, alerts[0]!.id, new Date(clock.now()))).toBe(3);
    expect((await domainAlerts(store.db, WS, 10)).every((a) => a.seenAt !== null)).toBe(true);
  });

  it('the custom tracking host (ACME): CNAME and certificate checked daily; a failing renewal and a near end alert once each', async () => {
    const clock = new SimClock(T);
    const host = `track.${domain}`;
    dns.setCname(host, 'app.cadenza.test');
    expect(await setDomain(store.db, WS, host, T)).toBe('set');
    const issue = async (notAfter: number) => {
      const row = (await domainOfWorkspace(store.db, WS))!;
      expect(await storeCertificate(store.db, row, { sealed: Buffer.from('sealed'), notBefore: clock.now(), notAfter, nextAttemptAt: notAfter - 30 * DAY }, clock.now())).toBe(true);
    };
    await issue(T + 90 * DAY);
    const monitor = new DomainMonitor({ store, clock, settings, owner: 'p1' });
    await monitor.runOnce();
    const custom = () => storedDomainHealth(store.db, WS).then((all) => all.find((h) => h.domain === host)!);
    // Beside the settings' tracking host (another name, TLS not ours): both are checked.
    expect((await storedDomainHealth(store.db, WS)).map((h) => `${h.purpose}:${h.domain}:${h.verdict}`)).toEqual([`sending:${domain}:ok`, `tracking:links.${domain}:ok`, `tracking:${host}:ok`]);
    expect((await custom()).checks.map((c) => `${c.kind}:${c.status}`)).toEqual(['tracking:ok', 'certificate:ok']);

    // The renewal fails (the CA refuses): the host still serves, but the health is broken, one alert.
    const renewing = (await domainOfWorkspace(store.db, WS))!;
    await updateState(store.db, renewing, { state: 'renewing', reason: 'the certificate authority did not issue a certificate: rate limited', attempts: 3, nextAttemptAt: clock.now() + HOUR }, clock.now());
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    let alerts = await domainAlerts(store.db, WS, 10);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ domain: host, purpose: 'tracking', from: 'ok', to: 'broken', failing: [{ kind: 'certificate', status: 'differs', differences: [expect.stringContaining('renewal is failing: the certificate authority'), expect.any(String)] }] });
    expect((await deliveries()).map((h) => h.payload)).toEqual([expect.objectContaining({ domain: host, purpose: 'tracking', from: 'ok', to: 'broken' })]);

    // Renewed: one recovery alert.
    await issue(clock.now() + 90 * DAY);
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    alerts = await domainAlerts(store.db, WS, 10);
    expect(alerts.map((a) => `${a.domain}:${a.to}`)).toEqual([`${host}:ok`, `${host}:broken`]);

    // Then no renewal for 80 days and no failure recorded (the job stopped): broken 14 days before the end.
    clock.advance(77 * DAY);
    await monitor.runOnce();
    expect((await custom()).checks.find((c) => c.kind === 'certificate')).toMatchObject({ status: 'differs', differences: [expect.stringMatching(/ends in 1[0-4] day\(s\)/), expect.any(String)] });
    expect(await domainAlerts(store.db, WS, 10)).toHaveLength(3);

    // The host removed: forgotten at the next pass; a re-check of it is refused.
    await removeDomain(store.db, WS);
    clock.advance(24 * HOUR);
    await monitor.runOnce();
    expect((await storedDomainHealth(store.db, WS)).map((h) => h.domain)).toEqual([domain, `links.${domain}`]);
    expect(isCadenzaError(await recheckDomain({ store, clock, settings }, WS, host).catch((x: unknown) => x), 'NOT_FOUND')).toBe(true);
  });

  it('the timer runs the pass on the simulated clock; a second process finds the lease held and checks nothing', async () => {
    const clock = new SimClock(T);
    const other = await new Leases(store, clock).acquire(DOMAIN_HEALTH_LEASE, 'p2', 60_000);
    expect(other).not.toBeNull();
    const monitor = new DomainMonitor({ store, clock, settings, owner: 'p1', everyMs: HOUR });
    expect(await monitor.runOnce()).toBe(0);
    clock.advance(2 * 60_000); // p2's lease lapses
    monitor.start();
    clock.advance(0);
    await expect.poll(async () => (await storedDomainHealth(store.db, WS)).length, { timeout: 5000 }).toBe(2);
    await monitor.stop();
  });

  it('a re-check now: one domain of the workspace; another workspace\'s domain or any other name is refused', async () => {
    const clock = new SimClock(T);
    dns.setA(`${domain}.dbl.bl.test`, ['127.0.1.2']);
    const r = await recheckDomain({ store, clock, settings }, WS, domain.toUpperCase());
    expect(r.health.verdict).toBe('broken');
    expect(r.health.checks.find((c) => c.kind === 'blocklist')).toMatchObject({ status: 'listed', zone: 'dbl.bl.test' });
    expect(r.change).toEqual({ from: null, to: 'broken', alert: false });
    for (const name of ['example.test', `links.${domain}x`]) {
      const e = await recheckDomain({ store, clock, settings }, OTHER, name).catch((x: unknown) => x);
      expect(isCadenzaError(e, 'NOT_FOUND')).toBe(true);
    }
    const bad = await recheckDomain({ store, clock, settings }, WS, 'not a domain').catch((x: unknown) => x);
    expect(isCadenzaError(bad, 'INVALID_INPUT')).toBe(true);
  });
});
