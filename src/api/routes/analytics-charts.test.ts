import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { foldFigures } from '../../ops/figure-rollup.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/**
 * The Analytics screen's charts (issue 18) against a world whose truth is written out by hand:
 * 20 prospects in Berlin (their own zone) sent the intro at T, 20 in the workspace's zone (New York)
 * at T + 7 h, one whose only zone is its mailbox's (Tokyo: the rep's, so New York counts) at T + 1 h.
 * Replies at chosen delays, one with no email before it, one ignored by the engine; bounces, opens,
 * a click, an interested reply and a meeting; warmup placement for one mailbox. Each figure is read
 * before and after the rollup folds the facts, and must not move.
 */
describe.each(testBackends())('analytics charts: funnel, reply times, send hours, mailbox days (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let T: number;
  let ids: Record<string, string>;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Charts Co', 'owner@charts.test');
    b = await login(h.app, 'owner@charts.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    const db = h.store.db;
    const random = seededRandom(`analytics-charts-${backend}`);
    const id = () => newId(Date.now(), random);
    await db.updateTable('workspace').set({ time_zone: 'America/New_York' }).where('id', '=', w.workspaceId).execute();
    const [mA, mB] = [id(), id()];
    await db
      .insertInto('mailbox')
      .values([
        { id: mA, workspace_id: w.workspaceId, user_id: w.userId, email: 'a@charts.test', provider: 'smtp_imap' },
        { id: mB, workspace_id: w.workspaceId, user_id: w.userId, email: 'b@charts.test', provider: 'smtp_imap', time_zone: 'Asia/Tokyo' },
      ])
      .execute();
    const leads = Array.from({ length: 42 }, (_, i) => `p${String(i).padStart(2, '0')}@prospects.test`);
    expect((await b.call('POST', `${base}/leads/import`, { csv: `email\n${leads.join('\n')}\n` })).statusCode).toBeLessThan(300);
    const seq = await b.call('PUT', `${base}/sequences`, { key: 'outbound', name: 'Outbound', window: 'any', jitterMinutes: 0, steps: [{ key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'A', title: '' }] });
    expect(seq.statusCode, seq.body).toBe(200);
    const other = await b.call('PUT', `${base}/sequences`, { key: 'other', name: 'Other', window: 'any', jitterMinutes: 0, steps: [{ key: 'hello', type: 'email', delay: '0 minutes', subject: 'Hello', body: 'B', title: '' }] });
    const sequenceId = seq.json().sequenceId as string;
    expect((await b.call('POST', `${base}/sequences/${sequenceId}/enroll`, { all: true })).json().enrolled).toBe(42);
    const intro = (await db.selectFrom('step').select('id').where('sequence_id', '=', sequenceId).executeTakeFirstOrThrow()).id;
    const e = (await db.selectFrom('enrollment as n').innerJoin('lead as l', 'l.id', 'n.lead_id').select(['n.id', 'l.email']).orderBy('l.email').execute()).map((x) => x.id);
    // p00-p19 in Berlin by their own zone (mailbox A); p20-p39 with none (the workspace's, mailbox
    // B); p40 with its mailbox's Tokyo (mailbox B): not the prospect's, so New York counts.
    for (const [i, en] of e.entries()) {
      const zone = i < 20 ? { time_zone: 'Europe/Berlin', zone_source: 'lead' } : i === 40 ? { time_zone: 'Asia/Tokyo', zone_source: 'mailbox' } : { time_zone: 'America/New_York', zone_source: 'workspace' };
      await db.updateTable('enrollment').set({ mailbox_id: i < 20 ? mA : mB, ...zone }).where('id', '=', en).execute();
    }
    await db.deleteFrom('send_request').execute();
    T = DateTime.utc().startOf('day').minus({ days: 10 }).plus({ hours: 8 }).toMillis();
    const ev = (who: number, type: string, at: number, event: Record<string, unknown> = {}) => ({ workspace_id: w.workspaceId, enrollment_id: e[who]!, type, at: new Date(at), payload: JSON.stringify({ event: { type, ...event } }) });
    const sent = (who: number, at: number) => ev(who, 'step_sent', at, { stepId: intro });
    const sendAt = (who: number) => (who < 20 ? T : who === 40 ? T + HOUR : T + 7 * HOUR);
    const sr: string[] = [];
    await db
      .insertInto('send_request')
      .values([0, 1, 2].map((who) => ({ id: (sr[who] = id()), workspace_id: w.workspaceId, enrollment_id: e[who]!, step_id: intro, mailbox_id: mA, due_at: new Date(T), state: 'sent' as const })))
      .execute();
    await db
      .insertInto('event')
      .values([
        ...Array.from({ length: 41 }, (_, who) => sent(who, sendAt(who))),
        ev(0, 'reply', T + 30 * MIN),
        ev(0, 'reply.ignored', T + 2 * DAY),
        ev(1, 'reply', T + 2 * HOUR),
        ev(2, 'reply', T + 5 * HOUR),
        ev(3, 'reply', T + 2 * DAY),
        ev(4, 'reply', T + 4 * DAY),
        ev(20, 'reply', T + 7 * HOUR + HOUR),
        ev(21, 'reply', T + 7 * HOUR + 8 * DAY),
        ev(41, 'reply', T),
        ev(30, 'bounce', T + DAY, { hard: true }),
        ev(31, 'bounce', T + DAY, { hard: false }),
        ev(1, 'meeting_booked', T + 3 * HOUR),
      ])
      .execute();
    const hit = (who: number, kind: 'open' | 'click', verdict: 'human' | 'proxy', at: number) => ({ workspace_id: w.workspaceId, enrollment_id: e[who]!, send_request_id: sr[who]!, kind, verdict, at: new Date(at) });
    await db.insertInto('tracking_event').values([hit(0, 'open', 'human', T + 10 * MIN), hit(1, 'open', 'human', T + HOUR), hit(2, 'open', 'proxy', T + MIN), hit(0, 'click', 'human', T + 12 * MIN)]).execute();
    await db.insertInto('message').values({ id: id(), workspace_id: w.workspaceId, mailbox_id: mA, enrollment_id: e[0]!, direction: 'inbound', message_id: '<yes@prospects.test>', at: new Date(T + 30 * MIN), received_at: new Date(T + 30 * MIN), label: 'human_reply', intent: 'interested' }).execute();
    // Mailbox A's warmup mail, read by its receivers two days after T: three in the inbox, one in junk.
    const warm = (n: number, folder: 'inbox' | 'junk') => ({ id: id(), pool: 'default', kind: 'first' as const, message_id: `<w${n}@charts.test>`, sender_mailbox_id: mA, sender_address: 'a@charts.test', receiver_address: `r${n}@peer.test`, planned_at: new Date(T), sent_at: new Date(T), received_at: new Date(T + 2 * DAY), received_folder: folder });
    await db.insertInto('warmup_mail').values([warm(1, 'inbox'), warm(2, 'inbox'), warm(3, 'inbox'), warm(4, 'junk')]).execute();
    ids = { mA, mB, sequenceId, other: other.json().sequenceId as string };
  }, 90_000);
  afterAll(() => h?.close());

  const get = async (path: string) => {
    const r = await b.call('GET', `${base}/analytics/${path}`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };
  /** Each chart's answer, read from the source alone and again once the rollup has folded every fact. */
  const beforeAndAfterFold = async (path: string) => {
    const raw = await get(path);
    await foldFigures(h.store);
    expect(await get(path)).toEqual(raw);
    return raw;
  };

  it('the funnel: sent, delivered, opened by a person, clicked, replied, interested, meetings, each with its conversion', async () => {
    const f = await beforeAndAfterFold(`funnel?days=30&zone=UTC&sequenceId=${ids.sequenceId}`);
    expect(f.stages.map((s: { key: string; count: number }) => [s.key, s.count])).toEqual([
      ['sent', 41],
      ['delivered', 39],
      ['opened', 2],
      ['clicked', 1],
      ['replied', 8],
      ['positive', 1],
      ['meetings', 1],
    ]);
    expect(f.stages.map((s: { conversion: number | null }) => s.conversion)).toEqual([null, 39 / 41, 2 / 39, 1 / 2, 8 / 1, 1 / 8, 1]);
    expect(f.stages[4].ofSent).toBe(8 / 41);
    // The other sequence had nothing: every stage 0, no conversion.
    const o = await get(`funnel?days=30&sequenceId=${ids.other}`);
    expect(o.stages.every((s: { count: number; conversion: number | null }) => s.count === 0 && s.conversion === null)).toBe(true);
    expect((await b.call('GET', `${base}/analytics/funnel?sequenceId=nope`)).statusCode).toBe(400);
  });

  it('reply time after send: each reply from the email it is credited to, in buckets, with the median', async () => {
    const r = await beforeAndAfterFold('reply-times?days=30');
    // 30 min, 1 h (p20, on the bucket's lower edge), 2 h, 5 h, 2 d, 4 d, 8 d; p41 had no email; p00's second reply was ignored.
    expect(r.buckets.map((x: { key: string; count: number }) => [x.key, x.count])).toEqual([
      ['lt1h', 1],
      ['1to4h', 2],
      ['4to24h', 1],
      ['1to3d', 1],
      ['3to7d', 1],
      ['gt7d', 1],
    ]);
    expect(r).toMatchObject({ count: 7, noEmailBefore: 1, medianMs: 5 * HOUR });
    // One sequence's replies: the other has none.
    expect(await get(`reply-times?days=30&sequenceId=${ids.other}`)).toMatchObject({ count: 0, noEmailBefore: 0, medianMs: null });
  });

  it("send hours in the prospect's own zone, the workspace's where the lead has none, and the best hours said only with enough sends", async () => {
    const s = await beforeAndAfterFold('send-hours?days=30');
    const at = (ms: number, zone: string) => DateTime.fromMillis(ms, { zone });
    const berlin = at(T, 'Europe/Berlin');
    const newYork = at(T + 7 * HOUR, 'America/New_York');
    const tokyoRep = at(T + HOUR, 'America/New_York');
    expect(s.sends).toBe(41);
    const hour = (n: number) => s.hours[n];
    expect(hour(berlin.hour)).toEqual({ hour: berlin.hour, sends: 20, replies: 5, replyRate: 5 / 20 });
    expect(hour(newYork.hour)).toEqual({ hour: newYork.hour, sends: 20, replies: 2, replyRate: 2 / 20 });
    expect(hour(tokyoRep.hour)).toMatchObject({ sends: 1, replies: 0 });
    expect(s.hours.filter((x: { sends: number }) => x.sends > 0)).toHaveLength(3);
    expect(s.cells).toEqual(
      expect.arrayContaining([
        { weekday: berlin.weekday, hour: berlin.hour, sends: 20, replies: 5 },
        { weekday: newYork.weekday, hour: newYork.hour, sends: 20, replies: 2 },
      ]),
    );
    expect(s.best.enough).toBe(true);
    expect(s.best.hours.map((x: { hour: number }) => x.hour)).toEqual([berlin.hour, newYork.hour]);
    expect(s.best.text).toContain(`${berlin.hour}:00–${berlin.hour + 1}:00 (25.0% of 20 sends)`);
    // One sequence with no sends: nothing said, and the count shown.
    const none = await get(`send-hours?days=30&sequenceId=${ids.other}`);
    expect(none.best).toMatchObject({ enough: false, hours: [] });
    expect(none.best.text).toMatch(/^Not enough sends to say which hours do best: 0 sends/);
    expect((await b.call('GET', `${base}/analytics/send-hours?days=365`)).statusCode).toBe(400);
  });

  it("each mailbox's sends, bounces and placement per day", async () => {
    const m = await beforeAndAfterFold('mailbox-days?days=30&zone=UTC');
    const day = (ms: number) => DateTime.fromMillis(ms, { zone: 'UTC' }).toISODate();
    const of = (mid: string) => m.mailboxes.find((x: { id: string }) => x.id === mid);
    const active = (mid: string) => of(mid).days.filter((d: { sends: number; bounces: number; inbox: number; junk: number }) => d.sends + d.bounces + d.inbox + d.junk > 0);
    expect(active(ids.mA!)).toEqual([
      { day: day(T), sends: 20, bounces: 0, hardBounces: 0, bounceRate: 0, inbox: 0, junk: 0 },
      { day: day(T + 2 * DAY), sends: 0, bounces: 0, hardBounces: 0, bounceRate: null, inbox: 3, junk: 1 },
    ]);
    expect(active(ids.mB!)).toEqual([
      { day: day(T), sends: 21, bounces: 0, hardBounces: 0, bounceRate: 0, inbox: 0, junk: 0 },
      { day: day(T + DAY), sends: 0, bounces: 2, hardBounces: 1, bounceRate: null, inbox: 0, junk: 0 },
    ]);
    expect(of(ids.mA!).days).toHaveLength(30);
    const one = await get(`mailbox-days?days=30&zone=UTC&mailboxId=${ids.mB}`);
    expect(one.mailboxes.map((x: { id: string }) => x.id)).toEqual([ids.mB]);
  });

  // Last: it adds to the world. p05 (Berlin, sent the intro at T) is moved to the other sequence
  // before any email of it, and replies there: the reply answers Outbound's intro, and every
  // figure credits it there (figure-facts.ts emailCredit), the headline's funnel as these charts.
  it("a reply after a move counts for the sequence whose email it answered, in send hours and reply times as in the funnel", async () => {
    const db = h.store.db;
    const lead = await db.selectFrom('lead').select('id').where('email', '=', 'p05@prospects.test').executeTakeFirstOrThrow();
    expect((await b.call('POST', `${base}/sequences/${ids.other}/enroll`, { leadIds: [lead.id] })).json().enrolled).toBe(1);
    const moved = await db.selectFrom('enrollment').select(['id', 'workspace_id']).where('lead_id', '=', lead.id).where('sequence_id', '=', ids.other!).executeTakeFirstOrThrow();
    await db.updateTable('enrollment').set({ state: 'moved', moved_to: moved.id }).where('lead_id', '=', lead.id).where('sequence_id', '=', ids.sequenceId!).execute();
    await db.updateTable('enrollment').set({ time_zone: 'Europe/Berlin', zone_source: 'lead' }).where('id', '=', moved.id).execute();
    await db.insertInto('event').values({ workspace_id: moved.workspace_id, enrollment_id: moved.id, type: 'reply', at: new Date(T + 3 * HOUR), payload: JSON.stringify({ event: { type: 'reply' } }) }).execute();
    const berlin = DateTime.fromMillis(T, { zone: 'Europe/Berlin' }).hour;
    const funnel = async (seq: string) => (await get(`funnel?days=30&zone=UTC&sequenceId=${seq}`)).stages.find((x: { key: string }) => x.key === 'replied').count;
    expect([await funnel(ids.sequenceId!), await funnel(ids.other!)]).toEqual([9, 0]);
    expect((await get(`send-hours?days=30&sequenceId=${ids.sequenceId}`)).hours[berlin]).toMatchObject({ sends: 20, replies: 6 });
    expect((await get(`send-hours?days=30&sequenceId=${ids.other}`)).hours.every((x: { replies: number }) => x.replies === 0)).toBe(true);
    expect(await get(`reply-times?days=30&sequenceId=${ids.sequenceId}`)).toMatchObject({ count: 8, noEmailBefore: 1 });
    expect(await get(`reply-times?days=30&sequenceId=${ids.other}`)).toMatchObject({ count: 0, noEmailBefore: 0 });
  });
});
