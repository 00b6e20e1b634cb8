import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { PURGED_OF_SEEDED, SEEDED_RETENTION, seedPurgeableRows } from '../../../test/privacy/purgeable-rows.ts';
import { openStore, type Store } from '../../store/store.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { seededRandom } from '../../common/random.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { runNightlyPurge, lastPurgeDay } from '../../privacy/purge-role.ts';
import { purgeAuditLog } from '../../api/audit/retention.ts';
import { recordAudit } from '../../api/audit/audit-log.ts';
import { compactFigures, foldFigures } from '../figure-rollup.ts';
import { settleWinners } from '../../sequence/auto-winner.ts';
import { sweepCalls } from '../../dialer/calls.ts';
import { sendDueWeeklyReports } from '../../api/weekly-report/job.ts';
import { fanOut } from '../../api/notify/fanout.ts';
import { sendDueDigests } from '../../api/notify/digest.ts';
import { deliverSlack } from '../../api/notify/slack.ts';
import { purgeNotifications } from '../../api/notify/purge.ts';
import type { Role } from '../../common/config.ts';
import { setWarmup } from '../../warmup/membership.ts';
import { evaluateWarmupPlacements } from '../../warmup/placement/placement-role.ts';
import { plantReceipts } from '../../../test/warmup/receipts.ts';
import { recheckSsoDomains } from '../../api/auth/sso/proof-recheck-duty.ts';
import { applyGrants } from './apply-grants.ts';
import { DB_ROLES } from './db-grants.ts';

/**
 * The periodic duties each role runs (src/app/app.ts), run as that role's database user after
 * `cadenza db grants`: every grant a duty needs is there, and the tables the grants keep from a
 * role stay closed to it. db-grants.test.ts checks the statements; this checks them against the
 * code that runs under them (the nightly purge once ran in the scheduler without the right to
 * delete the calls it purges). PostgreSQL only: PGlite has one user.
 */
const T = Date.UTC(2026, 2, 10, 3);
const WS = '00000000-0000-4000-8000-0000000004a1';

describe.skipIf(!testBackends().includes('postgres'))("each role's duties under its own grants (postgres)", () => {
  let owner: TestStore;
  const as = {} as Record<Role, Store>;

  beforeAll(async () => {
    owner = await freshStore('postgres', { poolSize: 2 });
    await sql`truncate table workspace cascade`.execute(owner.db);
    await owner.db.insertInto('workspace').values({ id: WS, name: 'purged', settings: JSON.stringify({ retention: SEEDED_RETENTION }) }).execute();
    await seedPurgeableRows(owner.db, WS, T, 1);
    await recordAudit(owner.db, { clock: new SimClock(T - 400 * 86_400_000), random: seededRandom(1) }, { workspaceId: WS, action: 'settings.changed', actor: { kind: 'system', label: 'Cadenza' }, target: 'workspace', detail: {} });
    const c = new pg.Client({ connectionString: owner.url });
    await c.connect();
    try {
      await applyGrants(c);
    } finally {
      await c.end();
    }
    for (const role of Object.keys(DB_ROLES) as Role[]) {
      const u = new URL(owner.url!);
      u.username = DB_ROLES[role];
      as[role] = await openStore({ databaseUrl: u.toString(), poolSize: 2 });
    }
  }, 120_000);
  afterAll(async () => {
    for (const s of Object.values(as)) await s.close();
    await owner?.destroy();
  });

  it("the scheduler's nightly purge removes every kind it purges, calls included", async () => {
    const r = await runNightlyPurge({ store: as.scheduler, clock: new SimClock(T), owner: 'scheduler-1' });
    expect(r).toMatchObject({ day: '2026-03-10', report: { counts: PURGED_OF_SEEDED, stopped: false } });
    // Its other pass, steps falling due (nothing is due here: the statements still meet their grants).
    expect(await new EnrollmentService({ store: as.scheduler, clock: new SimClock(T), random: seededRandom(4) }).fireDue(50)).toEqual([]);
    // The API reads the day's counts for the settings screen.
    expect(await lastPurgeDay(as.api.db, WS)).toMatchObject({ day: '2026-03-10', counts: PURGED_OF_SEEDED });
  });

  it("the API's duties: the analytics fold and compaction, the audit retention, the call sweep, experiment winners, the weekly report, notifications", async () => {
    const clock = new SimClock(T);
    await foldFigures(as.api);
    await compactFigures(as.api);
    expect((await purgeAuditLog(as.api, clock)).deleted).toBe(1);
    const service = new EnrollmentService({ store: as.api, clock, random: seededRandom(2) });
    await sweepCalls({ store: as.api, clock, random: seededRandom(3), service });
    await settleWinners({ store: as.api, clock });
    // The weekly report, turned on and due: it reads the owners' addresses (app_user) and claims its week.
    await owner.db.insertInto('app_user').values({ id: '00000000-0000-4000-8000-0000000004b1', workspace_id: WS, email: 'owner@ws.test', name: 'Owner', role: 'owner' }).execute();
    await owner.db.insertInto('weekly_report_setting').values({ workspace_id: WS, enabled: true, weekday: 2, hour: 2, updated_at: new Date(T - 86_400_000) }).execute();
    const sent: string[] = [];
    const r = await sendDueWeeklyReports({ store: as.api, clock, owner: 'api-1', mailer: { from: 'cadenza@ws.test', send: async (m) => (sent.push(m.to), { messageId: '<m@ws.test>' }), close: () => undefined } });
    expect(r.failed).toEqual([]);
    expect(sent).toEqual(['owner@ws.test']);
    // Notifications: a mailbox's health going bad, recorded by trigger with the sender's rights,
    // handed out by the API's fan-out, then its digest and Slack rounds (nothing due for Slack).
    await owner.db.insertInto('mailbox').values({ id: '00000000-0000-4000-8000-0000000004c1', workspace_id: WS, user_id: null, email: 'rep@ws.test', provider: 'smtp_imap' }).execute();
    await as.sender.db.updateTable('mailbox').set({ health: 'paused', health_reason: 'the server refused the password' }).where('id', '=', '00000000-0000-4000-8000-0000000004c1').execute();
    await owner.db.insertInto('notification_preference').values({ workspace_id: WS, user_id: '00000000-0000-4000-8000-0000000004b1', kind: 'mailbox_attention', in_app: true, browser: false, email: true, slack: false }).execute();
    expect(await fanOut({ store: as.api, clock })).toBe(1);
    const later = new SimClock(T + 25 * 3_600_000);
    const digest = await sendDueDigests({ store: as.api, clock: later, random: seededRandom(5), mailer: { from: 'cadenza@ws.test', send: async (m) => (sent.push(m.to), { messageId: '<d@ws.test>' }), close: () => undefined } });
    expect(digest).toEqual({ sent: [{ userId: '00000000-0000-4000-8000-0000000004b1', items: 1 }], failed: [] });
    const sealer = { seal: async () => Buffer.alloc(0), open: async () => '' };
    expect(await deliverSlack({ store: as.api, clock: later, random: seededRandom(6), sealer, allowPrivate: false })).toEqual({ delivered: 0, retried: 0, failed: 0 });
    // A domain alert recorded by trigger with the scheduler's rights (its daily pass), handed out;
    // then the retention, as the API: both events, 200 days on, go with their notifications.
    await as.scheduler.db
      .insertInto('domain_health_change')
      .values({ workspace_id: WS, domain: 'ws.test', purpose: 'sending', from_status: 'ok', to_status: 'broken', failing: JSON.stringify([{ kind: 'dmarc', name: '_dmarc.ws.test', status: 'missing', differences: [] }]), at: new Date(T) })
      .execute();
    expect(await fanOut({ store: as.api, clock })).toBe(1);
    expect(await purgeNotifications({ store: as.api, clock: new SimClock(T + 200 * 86_400_000) })).toEqual({ read: 0, events: 2 });
    expect(await owner.db.selectFrom('notification').select('id').where('workspace_id', '=', WS).execute()).toEqual([]);
  });

  it("the scheduler's warmup placement pass: a junk-heavy member paused, its notification recorded by trigger", async () => {
    const ws = '00000000-0000-4000-8000-0000000004a2';
    const mb = '00000000-0000-4000-8000-0000000004c2';
    await owner.db.insertInto('workspace').values({ id: ws, name: 'placement' }).execute();
    await owner.db.insertInto('mailbox').values({ id: mb, workspace_id: ws, user_id: null, email: 'warm@ws.test', provider: 'smtp_imap' }).execute();
    await setWarmup(owner.db, ws, mb, { enabled: true }, T - 40 * 86_400_000);
    await plantReceipts(owner.db, seededRandom(7), { mailbox: mb, from: 'warm@ws.test', now: T, tag: 'role-duties' }, [...Array.from({ length: 4 }, (): ['inbox', number] => ['inbox', 1]), ...Array.from({ length: 6 }, (): ['junk', number] => ['junk', 2])]);
    const r = await evaluateWarmupPlacements({ store: as.scheduler, clock: new SimClock(T), owner: 'scheduler-1' });
    expect(r?.find((x) => x.mailboxId === mb)).toMatchObject({ verdict: 'pause', health: 'paused' });
    expect(await owner.db.selectFrom('notification_event').select('title').where('workspace_id', '=', ws).where('kind', '=', 'mailbox_attention').execute()).toEqual([{ title: 'warm@ws.test is paused' }]);
  });

  it("the scheduler's SSO re-check: a proof whose record is long gone taken away, the admins' notification and the audit entry recorded", async () => {
    const ws = '00000000-0000-4000-8000-0000000004a3';
    await owner.db.insertInto('workspace').values({ id: ws, name: 'sso' }).execute();
    await owner.db.insertInto('workspace_sso').values({ workspace_id: ws, issuer: 'https://id.sso.test', client_id: 'c', client_secret_sealed: Buffer.from('x'), allowed_domains: ['sso.test'] }).execute();
    const since = new Date(T - 4 * 86_400_000);
    await owner.db.insertInto('workspace_sso_domain').values({ workspace_id: ws, domain: 'sso.test', token: '0123456789abcdef0123456789abcdef', verified_at: since, checked_at: new Date(T - 86_400_000), failures: 3, failing_since: since }).execute();
    // No TXT record anywhere: ENOTFOUND, an answer without the record.
    const resolver = { resolveTxt: async () => Promise.reject(Object.assign(new Error('queryTxt ENOTFOUND'), { code: 'ENOTFOUND' })) };
    const r = await recheckSsoDomains({ store: as.scheduler, clock: new SimClock(T), random: seededRandom(8), resolver, owner: 'scheduler-1' });
    expect(r?.map((x) => x.verdict.action)).toEqual(['revoke']);
    expect(await owner.db.selectFrom('workspace_sso_domain').select('verified_at').where('workspace_id', '=', ws).execute()).toEqual([{ verified_at: null }]);
    expect(await owner.db.selectFrom('notification_event').select('kind').where('workspace_id', '=', ws).execute()).toEqual([{ kind: 'sso_attention' }]);
    expect(await owner.db.selectFrom('audit_event').select(['action', 'target']).where('workspace_id', '=', ws).execute()).toEqual([{ action: 'settings.changed', target: 'sso' }]);
  });

  // 42501: insufficient_privilege.
  const denied = async (role: Role, q: string) => {
    await expect(sql.raw(q).execute(as[role].db)).rejects.toMatchObject({ code: '42501' });
  };

  it('keeps what a role has no business with closed to it', async () => {
    for (const role of ['scheduler', 'sender', 'sync'] as const) {
      // The audit log, the analytics buckets, sign-in flows and certificates are the API's.
      await denied(role, 'select count(*) from audit_event');
      await denied(role, 'delete from audit_event');
      await denied(role, "update audit_event set target = 'x'");
      // The scheduler appends (its SSO re-check's record); the others not at all.
      if (role !== 'scheduler') await denied(role, `insert into audit_event (id, workspace_id, at, action, actor_kind, actor_label, target, detail) values (gen_random_uuid(), '${WS}', now(), 'x', 'system', 'x', 'x', '{}')`);
      await denied(role, 'select count(*) from figure_bucket');
      await denied(role, 'delete from figure_fold');
      await denied(role, 'select count(*) from oauth_flow');
      await denied(role, 'select count(*) from acme_account');
      await denied(role, 'select count(*) from acme_challenge');
      await denied(role, `update lead_import set status = 'failed'`);
      // Notifications: the other roles record events by trigger, and read nothing of them or the people's choices.
      await denied(role, 'select count(*) from notification_event');
      await denied(role, 'select count(*) from notification_setting');
      await denied(role, 'select count(*) from notification');
    }
    // Import rows: the scheduler only deletes rejects past their retention.
    for (const role of ['sender', 'sync'] as const) await denied(role, 'select count(*) from lead_import_reject');
    await denied('scheduler', `insert into lead_import_reject (import_id, workspace_id, line, reason, message, raw) select id, workspace_id, 9, 'x', 'x', 'x' from lead_import limit 1`);
    // The purge's record is the scheduler's; the API only reads it.
    await denied('api', `delete from privacy_purge_day`);
    for (const role of ['sender', 'sync'] as const) await denied(role, 'select count(*) from privacy_purge_day');
    // The scheduler deletes expired calls but never reads what was said or who was called beyond that.
    await denied('scheduler', 'update phone_call set notes = null');
    await denied('scheduler', 'select count(*) from call_transcript');
  });
});
