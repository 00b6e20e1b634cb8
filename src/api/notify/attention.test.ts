import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedMember } from '../../../test/api.ts';
import { allDay, markSent, seed } from '../../../test/dispatch/seed.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { plantReceipts } from '../../../test/warmup/receipts.ts';
import { seededRandom } from '../../common/random.ts';
import { credentialsRefused } from '../../mailbox/health/evaluate.ts';
import { cannotConnectReason, pauseMailbox, resumeMailbox } from '../../mailbox/health/pause.ts';
import { recordSendOutcome } from '../../sending/dispatch/health.ts';
import { dnsResolver } from '../../sending/dns/check.ts';
import { DomainMonitor, recheckDomain, type DomainHealthSettings } from '../../sending/dns/domain-monitor.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { setWarmup } from '../../warmup/membership.ts';
import { evaluatePlacement } from '../../warmup/placement/evaluate.ts';
import { fanOut } from './fanout.ts';
import { listBell } from './sql/bell.ts';

const MIN = 60_000;
const DAY = 86_400_000;
const T = Date.UTC(2026, 5, 1, 14, 0);

/**
 * "A mailbox needs attention" (issue 19) from every place that decides it, each through the code
 * that produces it and told once, however many times that code runs: the bounce rate (a warning,
 * then the pause; the warning's reason changes with every bounce and is not told again), refused
 * credentials and a server that cannot be reached (pauses), warmup placement (from ok, and while a
 * bounce warning already stands), and the deliverability monitor's domain alerts (a DNS record
 * missing, a blocklist listing), checked daily and re-checked by hand. Each event is handed to a
 * member by the fan-out and shows in their bell.
 */
describe.each(testBackends())('mailbox attention from its producers (%s)', (backend) => {
  let store: TestStore;
  let dns: TestDnsServer;
  let n = 0;
  beforeAll(async () => {
    store = await freshStore(backend);
    dns = await startTestDnsServer();
  }, 120_000);
  afterAll(async () => {
    await dns?.close();
    await store?.destroy();
  });

  /** A workspace with one member and `mailboxes` mailboxes (unowned), sends 100..1 minutes ago planned. */
  const workspace = async (requests = 0) => {
    const s = await seed(store, { now: T, seed: ++n, mailboxes: [{ dailyCap: 500, pacing: allDay }], sequences: [{ window: 'any', pool: [0] }], requests: Array.from({ length: requests }, () => ({ mailbox: 0, dueAt: T - 2000 * MIN })) });
    const member = await seedMember(store, s.workspaceId, `watcher-${n}-${backend}@attention.test`, 'owner');
    return { ...s, mailbox: s.mailboxIds[0]!, userId: member.userId };
  };
  const attention = async (workspaceId: string) => {
    const rows = await store.db.selectFrom('notification_event').select(['title', 'body', 'link', 'user_id']).where('workspace_id', '=', workspaceId).where('kind', '=', 'mailbox_attention').orderBy('id').execute();
    return rows;
  };
  /** Hands out what waits and answers the member's bell: mailbox_attention titles, oldest first. */
  const bell = async (w: { workspaceId: string; userId: string }) => {
    while ((await fanOut({ store, clock: new SimClock(T) })) > 0);
    const b = await listBell(store.db, w.workspaceId, w.userId, { limit: 50, unreadOnly: false });
    return b.items.filter((i) => i.kind === 'mailbox_attention').map((i) => i.title).reverse();
  };

  it('bounce rate: the warning once (its reason changes with each bounce), the pause once, nothing while paused', async () => {
    const w = await workspace(130);
    const sent = w.requestIds.slice(0, 120);
    await markSent(store, sent, sent.map((_, i) => T - (1500 - i * 12) * MIN));
    for (const id of sent.slice(60, 63)) await recordSendOutcome(store.db, { kind: 'bounce', requestId: id, hard: true, at: T });
    await recordSendOutcome(store.db, { kind: 'bounce', requestId: sent[70]!, hard: true, at: T });
    expect((await store.db.selectFrom('mailbox').select('health').where('id', '=', w.mailbox).executeTakeFirstOrThrow()).health).toBe('warning');
    expect(await bell(w)).toEqual(['rep0@acme.test needs attention']);
    for (const id of sent.slice(80, 84)) await recordSendOutcome(store.db, { kind: 'bounce', requestId: id, hard: true, at: T });
    const e = await attention(w.workspaceId);
    expect(e.map((x) => x.title)).toEqual(['rep0@acme.test needs attention', 'rep0@acme.test is paused']);
    expect(e[0]!.body).toMatch(/^3 bounces in the last 100 sends/);
    expect(e[1]!.body).toMatch(/bounce/);
    expect(e.every((x) => x.link === '/mailboxes')).toBe(true);
    expect(await bell(w)).toEqual(['rep0@acme.test needs attention', 'rep0@acme.test is paused']);
  });

  it('refused credentials and a server that cannot be reached: one notification each, however often the sender or the pool tries', async () => {
    const w = await workspace();
    for (let i = 0; i < 3; i++) await credentialsRefused(store.db, w.mailbox, '535 5.7.8 authentication failed', T + i * MIN);
    expect(await bell(w)).toEqual(['rep0@acme.test is paused']);
    expect((await attention(w.workspaceId))[0]!.body).toMatch(/535 5\.7\.8 authentication failed/);
    // Fixed, then the mailbox pool cannot connect at all (a disconnected mailbox): told again, once.
    expect(await resumeMailbox(store.db, w.mailbox)).toBe(true);
    for (let i = 0; i < 3; i++) await pauseMailbox(store.db, w.mailbox, cannotConnectReason('connect ECONNREFUSED 192.0.2.7:993'), T + (10 + i) * MIN);
    expect(await bell(w)).toEqual(['rep0@acme.test is paused', 'rep0@acme.test is paused']);
    expect((await attention(w.workspaceId))[1]!.body).toBe('cannot connect: connect ECONNREFUSED 192.0.2.7:993');
  });

  it('warmup placement: from ok, once (not also as a cap change); while a bounce warning stands, once as placement trouble', async () => {
    const random = seededRandom(`attention-${backend}`);
    const receipts = (mailbox: string, folders: Array<['inbox' | 'junk', number]>) => plantReceipts(store.db, random, { mailbox, from: 'rep0@acme.test', now: T, tag: backend }, folders);
    const junky: Array<['inbox' | 'junk', number]> = [...Array.from({ length: 7 }, (): ['inbox', number] => ['inbox', 1]), ['junk', 1], ['junk', 2], ['junk', 3]];
    for (const standing of [null, 'bounce rate 3.5% over the last 100 sends'] as const) {
      const w = await workspace();
      await setWarmup(store.db, w.workspaceId, w.mailbox, { enabled: true }, T - 40 * DAY);
      if (standing) await store.db.updateTable('mailbox').set({ health: 'warning', health_reason: standing }).where('id', '=', w.mailbox).execute();
      await receipts(w.mailbox, junky);
      for (let i = 0; i < 3; i++) expect(await evaluatePlacement(store.db, w.mailbox, T + i * MIN)).toMatchObject({ verdict: 'lower', health: 'warning' });
      const e = await attention(w.workspaceId);
      if (standing) {
        // The bounce warning was set before (told by then); placement is told on top, once.
        expect(e.map((x) => x.title)).toEqual(['rep0@acme.test needs attention', 'rep0@acme.test: warmup placement trouble']);
        expect(e[1]!.body).toMatch(/junk|inbox/);
      } else {
        expect(e.map((x) => x.title)).toEqual(['rep0@acme.test needs attention']);
      }
      expect(await bell(w)).toEqual(e.map((x) => x.title));
    }
  });

  it('domain alerts: a DNS record gone and a blocklist listing, each told once across daily passes and re-checks, to the owner of the mailboxes there', async () => {
    const domain = `acme-${backend}.test`;
    const clock = new SimClock(T);
    const settings: DomainHealthSettings = { resolver: dnsResolver({ server: dns.address, timeoutMs: 500 }), blocklists: { ip: [], domain: ['dbl.bl.test'] }, publicHost: 'app.cadenza.test' };
    const w = await workspace();
    // The seed's mailbox is on acme.test; this one, owned by the member, sends from the checked domain.
    await store.db.updateTable('mailbox').set({ email: `rep@${domain}`, provider: 'gmail', user_id: w.userId }).where('id', '=', w.mailbox).execute();
    dns.setTxt(domain, ['v=spf1 include:_spf.google.com ~all']);
    dns.setTxt(`google._domainkey.${domain}`, ['v=DKIM1; k=rsa; p=MIIBIjAN']);
    dns.setTxt(`_dmarc.${domain}`, [`v=DMARC1; p=quarantine; rua=mailto:dmarc@${domain}`]);
    dns.setMx(domain, [{ exchange: 'smtp.google.com', priority: 1 }]);
    const monitor = new DomainMonitor({ store, clock, settings, owner: `attention-${backend}` });
    const pass = async () => {
      clock.advance(DAY);
      await monitor.runOnce();
    };
    await pass();
    expect(await attention(w.workspaceId)).toEqual([]);
    // DMARC removed: the next pass alerts; the passes and re-checks after it do not again.
    dns.setTxt(`_dmarc.${domain}`, []);
    await pass();
    await pass();
    await recheckDomain({ store, clock, settings }, w.workspaceId, domain);
    let e = await attention(w.workspaceId);
    expect(e.map((x) => x.title)).toEqual([`${domain}: DNS records need attention`]);
    expect(e[0]).toMatchObject({ link: '/domains', user_id: w.userId });
    expect(e[0]!.body).toMatch(/^Failing: dmarc .*missing/);
    // Fixed (no notification for a recovery), then listed on a blocklist: told once.
    dns.setTxt(`_dmarc.${domain}`, [`v=DMARC1; p=quarantine; rua=mailto:dmarc@${domain}`]);
    await pass();
    dns.setA(`${domain}.dbl.bl.test`, ['127.0.1.2']);
    await pass();
    await pass();
    await recheckDomain({ store, clock, settings }, w.workspaceId, domain);
    e = await attention(w.workspaceId);
    expect(e.map((x) => x.title)).toEqual([`${domain}: DNS records need attention`, `${domain} is on a blocklist`]);
    expect(e[1]!.body).toMatch(/blocklist .*listed/);
    expect(await bell(w)).toEqual(e.map((x) => x.title));
  });
});
