/**
 * The pool as the planner reads it labels each member's provider from what the store knows
 * (provider.ts): the connector kind, the SMTP/IMAP hosts in the mailbox's settings, and the MX of
 * its domain's last health check. SMTP/IMAP members at different providers are no longer one
 * "other" provider, so the planner's cross-provider rule pairs them with each other.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { allDay, seed } from '../../test/dispatch/seed.ts';
import { setWarmup } from './membership.ts';
import { assemblePool } from './plan-role.ts';
import { planWarmupDay } from './plan/planner.ts';

const TUE_0500_UTC = Date.UTC(2026, 5, 2, 5, 0);

describe.each(testBackends())('warmup provider labels in the pool on %s', (backend) => {
  let store: TestStore;
  const byEmail = new Map<string, string>();
  const members: Array<{ email: string; provider: string; settings?: Record<string, unknown>; mx?: string[] }> = [
    { email: 'a@zoho-one.test', provider: 'smtp_imap', settings: { smtp: { host: 'smtp.zoho.eu', port: 587 }, imap: { host: 'imap.zoho.eu', port: 993 } } },
    { email: 'b@zoho-two.test', provider: 'smtp_imap', settings: { smtp: { host: 'smtppro.zoho.com', port: 465 } } },
    { email: 'c@fast.test', provider: 'smtp_imap', settings: { smtp: { host: 'smtp.fastmail.com', port: 465 }, imap: { host: 'imap.fastmail.com', port: 993 } } },
    // Google Workspace reached over SMTP/IMAP under its own host names: its MX tells.
    { email: 'd@workspace.test', provider: 'smtp_imap', settings: { smtp: { host: 'mail.workspace.test', port: 587 } }, mx: ['1 smtp.google.com'] },
    { email: 'e@own.test', provider: 'smtp_imap', settings: { smtp: { host: 'mail.own.test', port: 587 } } },
    { email: 'f@api.test', provider: 'graph' },
  ];

  beforeAll(async () => {
    store = await freshStore(backend);
    const now = TUE_0500_UTC - 30 * 86_400_000;
    for (const [i, m] of members.entries()) {
      const s = await seed(store, { now, seed: 20 + i, workspaceZone: 'UTC', mailboxes: [{ zone: 'UTC', pacing: allDay }], sequences: [], requests: [] });
      const id = s.mailboxIds[0]!;
      byEmail.set(m.email, id);
      await sql`update mailbox set email = ${m.email}, provider = ${m.provider}, settings = ${JSON.stringify({ pacing: allDay, ...(m.settings ?? {}) })} where id = ${id}`.execute(store.db);
      if (m.mx) {
        const checks = [{ kind: 'mx', name: m.email.split('@')[1], status: 'ok', published: m.mx, differences: [] }];
        await sql`insert into domain_health (workspace_id, domain, purpose, verdict, status, checks, checked_at)
                  values (${s.workspaceId}, ${m.email.split('@')[1]}, 'sending', 'ok', 'ok', ${JSON.stringify(checks)}, ${new Date(now)})`.execute(store.db);
      }
      await setWarmup(store.db, s.workspaceId, id, { enabled: true, target: 30 }, now);
    }
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('labels SMTP/IMAP members by their hosts and MX, and the planner mixes them', async () => {
    const pool = await assemblePool(store, 'default', TUE_0500_UTC);
    const labels = Object.fromEntries(pool.map((m) => [members.find((x) => byEmail.get(x.email) === m.id)!.email, m.provider]));
    expect(labels).toEqual({
      'a@zoho-one.test': 'zoho',
      'b@zoho-two.test': 'zoho',
      'c@fast.test': 'fastmail',
      'd@workspace.test': 'google',
      'e@own.test': 'self:own.test',
      'f@api.test': 'microsoft',
    });
    // With six members of five providers, each sender crosses providers for at least two thirds of its mail.
    const plan = planWarmupDay({ members: pool.map((m) => ({ ...m, rampDay: 28 })), recentPairs: [] }, seededRandom('labels'));
    const providerOf = new Map(pool.map((m) => [m.id, m.provider]));
    expect(plan.sends.length).toBeGreaterThan(0);
    let crossing = 0;
    for (const id of providerOf.keys()) {
      const mine = plan.sends.filter((s) => s.sender === id);
      const same = mine.filter((s) => providerOf.get(s.receiver) === providerOf.get(id)).length;
      expect(same).toBeLessThanOrEqual(Math.floor(mine.length / 3));
      crossing += mine.length - same;
    }
    expect(crossing).toBeGreaterThan(0);
    // The two Zoho members are one provider to the planner: at most a third of a Zoho sender's mail goes to the other.
    const zoho = [byEmail.get('a@zoho-one.test')!, byEmail.get('b@zoho-two.test')!];
    const zohoSends = plan.sends.filter((s) => s.sender === zoho[0]);
    expect(zohoSends.length).toBeGreaterThan(0);
    expect(zohoSends.filter((s) => s.receiver === zoho[1]).length).toBeLessThanOrEqual(Math.floor(zohoSends.length / 3));
  });
});
