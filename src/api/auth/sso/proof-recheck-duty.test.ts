import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../../common/random.ts';
import { Leases } from '../../../ops/leases.ts';
import { dnsResolver } from '../../../sending/dns/check.ts';
import { SimClock } from '../../../sim/sim-clock.ts';
import { seedMember, seedWorkspace } from '../../../../test/api.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../../test/dns-server.ts';
import { freshStore, testBackends, type TestStore } from '../../../../test/stores.ts';
import { fanOut } from '../../notify/fanout.ts';
import { checkDomainProof, isDomainVerified } from './domain-proof.ts';
import { recheckSsoDomains, SSO_PROOF_LEASE, type ProofRecheckDeps } from './proof-recheck-duty.ts';
import { workspaceForDomain } from './settings.ts';

/**
 * The scheduler's daily re-check of verified SSO domains (proof-recheck-duty.ts), through the
 * loopback DNS server as the resolver, on a simulated clock: a record in place keeps the proof; once
 * removed, each day's answer is counted (a SERVFAIL is not, and is tried again at the next hourly
 * pass); on the fourth answer without it, three days after the first, the domain is unverified
 * (admits nobody new, finds no workspace), the admins and the owner are notified (members not),
 * and the audit log says so. Another process's lease makes a pass do nothing; an admin's Verify
 * ends a streak.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 5, 1, 3, 0);
const TOKEN = '00112233445566778899aabbccddeeff';
const RECORD = `cadenza-sso=${TOKEN}`;
const NAME = '_cadenza-sso.acme.test';

describe.each(testBackends())('the daily re-check of SSO domain proofs (%s)', (backend) => {
  let store: TestStore;
  let dns: TestDnsServer;
  let ws: string;
  const clock = new SimClock(T0);
  let d: ProofRecheckDeps;

  beforeAll(async () => {
    store = await freshStore(backend);
    dns = await startTestDnsServer();
    const w = await seedWorkspace(store, 'Acme', 'owner@acme.test');
    ws = w.workspaceId;
    await seedMember(store, ws, 'admin@acme.test', 'admin');
    await seedMember(store, ws, 'rep@acme.test', 'member');
    await store.db.insertInto('workspace_sso').values({ workspace_id: ws, issuer: 'https://id.acme.test', client_id: 'c', client_secret_sealed: Buffer.from('x'), allowed_domains: ['acme.test', 'beta.test'] }).execute();
    const proven = new Date(T0 - 2 * DAY);
    await store.db
      .insertInto('workspace_sso_domain')
      .values([
        { workspace_id: ws, domain: 'acme.test', token: TOKEN, verified_at: proven, checked_at: proven },
        { workspace_id: ws, domain: 'beta.test', token: 'ffeeddccbbaa99887766554433221100', verified_at: proven, checked_at: proven },
      ])
      .execute();
    dns.setTxt(NAME, [RECORD]);
    dns.setTxt('_cadenza-sso.beta.test', ['cadenza-sso=ffeeddccbbaa99887766554433221100']);
    d = { store, clock, random: seededRandom(`recheck-${backend}`), resolver: dnsResolver({ server: dns.address, timeoutMs: 500 }), owner: 'scheduler-1' };
  }, 60_000);
  afterAll(async () => {
    await store?.destroy();
    await dns?.close();
  });

  const row = (domain = 'acme.test') => store.db.selectFrom('workspace_sso_domain').selectAll().where('workspace_id', '=', ws).where('domain', '=', domain).executeTakeFirstOrThrow();
  const pass = async (at: number) => {
    clock.advanceTo(at);
    return ((await recheckSsoDomains(d)) ?? []).map((r) => [r.domain, r.verdict.action]);
  };

  it('keeps a proof whose record is there, and looks again only a day later', async () => {
    expect(await pass(T0)).toEqual([
      ['acme.test', 'kept'],
      ['beta.test', 'kept'],
    ]);
    expect(dns.queries.filter((q) => q.name.toLowerCase() === NAME && q.type === 'TXT').length).toBeGreaterThan(0);
    expect(new Date((await row()).checked_at!).getTime()).toBe(T0);
    expect(await pass(T0 + HOUR)).toEqual([]);
  });

  it('does nothing while another process holds the lease', async () => {
    clock.advanceTo(T0 + DAY - HOUR);
    const other = await new Leases(store, clock).acquire(SSO_PROOF_LEASE, 'scheduler-2', 10 * 60_000);
    expect(other).not.toBeNull();
    expect(await recheckSsoDomains(d)).toBeNull();
    await new Leases(store, clock).release(other!);
  });

  it('counts a removed record day by day, not a SERVFAIL; an admin\'s Verify ends a streak', async () => {
    dns.setTxt(NAME, []);
    dns.setTxt('_cadenza-sso.beta.test', []);
    expect(await pass(T0 + DAY)).toEqual([
      ['acme.test', 'strike'],
      ['beta.test', 'strike'],
    ]);
    const first = await row();
    expect(first).toMatchObject({ failures: 1, verified_at: expect.any(Date) });
    expect(new Date(first.failing_since!).getTime()).toBe(T0 + DAY);
    expect(first.check_error).toMatch(/^the daily re-check did not find the record \(1 in a row since 2026-06-02\): no TXT record "cadenza-sso=…" at _cadenza-sso\.acme\.test yet.*; still verified, until 2026-06-05 at the earliest$/);
    // Still proven meanwhile: one bad day locks nobody out.
    expect(await isDomainVerified(store.db, ws, 'acme.test')).toBe(true);
    expect(await workspaceForDomain(store.db, 'acme.test')).toBe(ws);
    // beta.test's admin puts the record back and presses Verify: the streak is over.
    dns.setTxt('_cadenza-sso.beta.test', ['cadenza-sso=ffeeddccbbaa99887766554433221100']);
    expect((await checkDomainProof(store.db, d.resolver, ws, 'beta.test', new Date(clock.now()))).kind).toBe('verified');
    expect(await row('beta.test')).toMatchObject({ failures: 0, failing_since: null, check_error: null });
    // A day later the DNS server fails: no evidence, not counted, tried again at the next pass.
    dns.servfail(NAME);
    expect(await pass(T0 + 2 * DAY)).toEqual([
      ['acme.test', 'inconclusive'],
      ['beta.test', 'kept'],
    ]);
    expect(await row()).toMatchObject({ failures: 1 });
    expect((await row()).check_error).toMatch(/^the daily re-check got no answer: the DNS lookup of _cadenza-sso\.acme\.test failed/);
    dns.servfail(NAME, false);
    expect(await pass(T0 + 2 * DAY + HOUR)).toEqual([['acme.test', 'strike']]);
    // Oldest check first.
    expect(await pass(T0 + 3 * DAY + HOUR)).toEqual([
      ['beta.test', 'kept'],
      ['acme.test', 'strike'],
    ]);
    expect(await row()).toMatchObject({ failures: 3 });
    expect(await isDomainVerified(store.db, ws, 'acme.test')).toBe(true);
  });

  it('unproves the domain on the fourth answer without it, three days on: nobody new joins, the admins are told, the audit log says so', async () => {
    expect(await pass(T0 + 4 * DAY + HOUR)).toEqual([
      ['acme.test', 'revoke'],
      ['beta.test', 'kept'],
    ]);
    const r = await row();
    expect(r).toMatchObject({ verified_at: null, failures: 0, failing_since: null });
    expect(r.check_error).toBe(`no longer verified: the daily re-check has not found ${RECORD} at ${NAME} since 2026-06-02 (4 checks in a row); publish it again, then Verify`);
    expect(await isDomainVerified(store.db, ws, 'acme.test')).toBe(false);
    expect(await workspaceForDomain(store.db, 'acme.test')).toBeUndefined();
    // The other domain is untouched.
    expect(await isDomainVerified(store.db, ws, 'beta.test')).toBe(true);

    const events = await store.db.selectFrom('notification_event').select(['kind', 'user_id', 'title', 'body', 'link']).where('workspace_id', '=', ws).execute();
    expect(events).toEqual([
      {
        kind: 'sso_attention',
        user_id: null,
        title: 'acme.test is no longer verified for single sign-on',
        body: `The TXT record ${NAME} has not been found since 2026-06-02, so nobody new joins by acme.test addresses. Publish ${RECORD} there again, then press Verify under Settings → Single sign-on.`,
        link: '/settings',
      },
    ]);
    // The API's fan-out hands it to the admins and the owner, not to members.
    expect(await fanOut({ store, clock })).toBe(1);
    const told = await store.db
      .selectFrom('notification as n')
      .innerJoin('app_user as u', 'u.id', 'n.user_id')
      .select(['u.email', 'n.in_app'])
      .where('n.workspace_id', '=', ws)
      .orderBy('u.email')
      .execute();
    expect(told).toEqual([
      { email: 'admin@acme.test', in_app: true },
      { email: 'owner@acme.test', in_app: true },
    ]);

    const audit = await store.db.selectFrom('audit_event').select(['action', 'actor_kind', 'actor_label', 'target', 'detail']).where('workspace_id', '=', ws).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'settings.changed', actor_kind: 'system', actor_label: 'Cadenza', target: 'sso' });
    const detail = typeof audit[0]!.detail === 'string' ? JSON.parse(audit[0]!.detail) : audit[0]!.detail;
    expect(detail).toEqual({ domainUnverified: 'acme.test', reason: 'daily re-check', failures: 4, failingSince: new Date(T0 + DAY).toISOString() });

    // An unproven domain is no longer re-checked (the admin's Verify proves it again).
    expect(await pass(T0 + 6 * DAY)).toEqual([['beta.test', 'kept']]);
    expect(await pass(T0 + 6 * DAY + HOUR)).toEqual([]);
  });
});
