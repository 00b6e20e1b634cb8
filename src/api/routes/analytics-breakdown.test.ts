import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { DAY_SERIES } from '../../ops/figures.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The breakdown credits each fact to the right email (issue 18): a world with two reps, one mailbox
 * each, an A/B intro and a bump, whose truth is written out by hand below: the send to its own
 * email, an open or click to the email it tracked, a reply, bounce, unsubscribe, interested reply or
 * meeting to the last email before it; a reply with no email before it has no step or variant, but
 * the mailbox (and rep) its enrollment sends from.
 */
describe.each(testBackends())('analytics breakdown: each fact credited to one email (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Breakdown Co', 'owner@breakdown.test');
    b = await login(h.app, 'owner@breakdown.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    const db = h.store.db;
    const random = seededRandom(`analytics-breakdown-${backend}`);
    const id = () => newId(Date.now(), random);
    await db.updateTable('app_user').set({ name: 'Olive Owner' }).where('id', '=', w.userId).execute();
    const repId = id();
    await db.insertInto('app_user').values({ id: repId, workspace_id: w.workspaceId, email: 'rep@breakdown.test', name: 'Remy Rep', role: 'member' }).execute();
    const [mA, mB] = [id(), id()];
    await db
      .insertInto('mailbox')
      .values([
        { id: mA, workspace_id: w.workspaceId, user_id: w.userId, email: 'olive@breakdown.test', provider: 'smtp_imap' },
        { id: mB, workspace_id: w.workspaceId, user_id: repId, email: 'remy@breakdown.test', provider: 'smtp_imap' },
      ])
      .execute();
    await b.call('POST', `${base}/leads/import`, { csv: `email,first_name\n${[0, 1, 2, 3, 4].map((i) => `p${i}@prospects.test,P${i}`).join('\n')}\n` });
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'outbound',
      name: 'Outbound',
      window: 'any',
      jitterMinutes: 0,
      steps: [
        { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'A', variantKey: 'a', weight: 1, title: '', variants: [{ key: 'b', subject: 'Hello', body: 'B', weight: 1 }] },
        { key: 'bump', type: 'email', delay: '1 day', subject: '', body: 'Bump', title: '' },
      ],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    const sequenceId = seq.json().sequenceId as string;
    expect((await b.call('POST', `${base}/sequences/${sequenceId}/enroll`, { all: true })).json().enrolled).toBe(5);
    const steps = Object.fromEntries((await db.selectFrom('step').select(['id', 'key']).where('sequence_id', '=', sequenceId).execute()).map((s) => [s.key, s.id]));
    const variants = Object.fromEntries((await db.selectFrom('variant').select(['id', 'key']).where('step_id', '=', steps.intro!).execute()).map((v) => [v.key, v.id]));
    const e = (await db.selectFrom('enrollment as n').innerJoin('lead as l', 'l.id', 'n.lead_id').select(['n.id', 'l.email']).orderBy('l.email').execute()).map((x) => x.id);
    // p0, p1 send from Olive's mailbox; p2, p3, p4 from Remy's.
    for (const [i, en] of e.entries()) await db.updateTable('enrollment').set({ mailbox_id: i < 2 ? mA : mB }).where('id', '=', en).execute();
    await db.deleteFrom('send_request').execute();
    const T = Date.now() - 5 * DAY;
    const sr: Record<string, string> = {};
    const request = (who: number, step: 'intro' | 'bump', variant: 'a' | 'b' | null, mailbox: string) => {
      sr[`${who}:${step}`] = id();
      return { id: sr[`${who}:${step}`]!, workspace_id: w.workspaceId, enrollment_id: e[who]!, step_id: steps[step]!, mailbox_id: mailbox, variant_id: variant ? variants[variant]! : null, due_at: new Date(T), state: 'sent' as const };
    };
    await db.insertInto('send_request').values([request(0, 'intro', 'a', mA), request(1, 'intro', 'b', mA), request(2, 'intro', 'a', mB), request(3, 'intro', 'b', mB), request(0, 'bump', null, mA)]).execute();
    const ev = (who: number, type: string, at: number, event: Record<string, unknown> = {}) => ({ workspace_id: w.workspaceId, enrollment_id: e[who]!, type, at: new Date(at), payload: JSON.stringify({ event: { type, ...event } }) });
    await db
      .insertInto('event')
      .values([
        ...[0, 1, 2, 3].map((who) => ev(who, 'step_sent', T, { stepId: steps.intro })),
        ev(0, 'step_sent', T + 2 * DAY, { stepId: steps.bump }),
        ev(1, 'reply', T + DAY),
        ev(0, 'reply', T + 3 * DAY),
        ev(2, 'bounce', T + HOUR, { hard: true }),
        ev(3, 'bounce', T + HOUR, { hard: false }),
        ev(3, 'unsubscribe', T + 2 * HOUR),
        ev(1, 'meeting_booked', T + DAY + HOUR),
        ev(4, 'reply', T + HOUR),
      ])
      .execute();
    const hit = (who: number, kind: 'open' | 'click', verdict: 'human' | 'proxy' | 'scanner', at: number) => ({ workspace_id: w.workspaceId, enrollment_id: e[who]!, send_request_id: sr[`${who}:intro`]!, kind, verdict, at: new Date(at) });
    await db.insertInto('tracking_event').values([hit(0, 'open', 'human', T + HOUR), hit(0, 'open', 'human', T + 2 * HOUR), hit(2, 'open', 'proxy', T + 60_000), hit(1, 'click', 'human', T + 3 * HOUR), hit(1, 'click', 'scanner', T + 60_000)]).execute();
    await db.insertInto('message').values({ id: id(), workspace_id: w.workspaceId, mailbox_id: mA, enrollment_id: e[1]!, direction: 'inbound', message_id: '<yes@prospects.test>', at: new Date(T + DAY), received_at: new Date(T + DAY), label: 'human_reply', intent: 'interested' }).execute();
    ids = { mA, mB, owner: w.userId, rep: repId, intro: steps.intro!, bump: steps.bump!, a: variants.a!, b: variants.b!, sequence: sequenceId };
  }, 60_000);
  afterAll(() => h?.close());

  const zero = Object.fromEntries([...DAY_SERIES, 'hardBounces', 'softBounces'].map((k) => [k, 0]));
  const figures = (rows: Array<Record<string, unknown>>) => rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !k.endsWith('Rate'))));

  it('by step, variant, mailbox, rep and sequence, exactly as the world was written', async () => {
    const by = async (what: string) => {
      const r = await b.call('GET', `${base}/analytics/breakdown?by=${what}&days=30`);
      expect(r.statusCode, r.body).toBe(200);
      return r.json();
    };
    const intro = { ...zero, sends: 4, opened: 1, openedAutomatically: 1, clicked: 1, replies: 1, positiveReplies: 1, meetings: 1, bounces: 2, hardBounces: 1, softBounces: 1, unsubscribes: 1 };
    expect(figures((await by('step')).rows)).toEqual([
      { key: ids.intro, label: 'Outbound / intro', ...intro },
      { key: ids.bump, label: 'Outbound / bump', ...zero, sends: 1, replies: 1 },
      { key: null, label: 'Not credited to an email', ...zero, replies: 1 },
    ]);
    expect(figures((await by('variant')).rows)).toEqual([
      { key: ids.a, label: 'Outbound / intro / A', ...zero, sends: 2, opened: 1, openedAutomatically: 1, bounces: 1, hardBounces: 1 },
      { key: ids.b, label: 'Outbound / intro / B', ...zero, sends: 2, clicked: 1, replies: 1, positiveReplies: 1, meetings: 1, bounces: 1, softBounces: 1, unsubscribes: 1 },
      { key: null, label: 'No variant recorded', ...zero, sends: 1, replies: 2 },
    ]);
    const olive = { ...zero, sends: 3, opened: 1, clicked: 1, replies: 2, positiveReplies: 1, meetings: 1 };
    const remy = { ...zero, sends: 2, openedAutomatically: 1, replies: 1, bounces: 2, hardBounces: 1, softBounces: 1, unsubscribes: 1 };
    expect(figures((await by('mailbox')).rows)).toEqual([
      { key: ids.mA, label: 'olive@breakdown.test', ...olive },
      { key: ids.mB, label: 'remy@breakdown.test', ...remy },
    ]);
    expect(figures((await by('rep')).rows)).toEqual([
      { key: ids.owner, label: 'Olive Owner', ...olive },
      { key: ids.rep, label: 'Remy Rep', ...remy },
    ]);
    const seq = await by('sequence');
    expect(figures(seq.rows)).toEqual([{ key: ids.sequence, label: 'Outbound', ...zero, sends: 5, opened: 1, openedAutomatically: 1, clicked: 1, replies: 3, positiveReplies: 1, meetings: 1, bounces: 2, hardBounces: 1, softBounces: 1, unsubscribes: 1 }]);
    expect(seq.rows[0]).toMatchObject({ replyRate: 3 / 5, openRate: 1 / 5, bounceRate: 2 / 5 });
    const headline = (await b.call('GET', `${base}/analytics?days=30`)).json();
    expect(seq.totals).toEqual(headline.totals);
  });

  it('refuses a breakdown it does not know', async () => {
    const r = await b.call('GET', `${base}/analytics/breakdown?by=planet`);
    expect(r.statusCode).toBe(400);
  });
});
