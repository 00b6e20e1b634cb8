import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom, type Random } from '../../common/random.ts';
import { DAY_SERIES, type DaySeries } from '../../ops/figures.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Analytics agree with a seeded world's own log to the unit, in several time zones and across the
 * weeks the clocks change (issue 18). The world is written as the engine, the tracker and ingestion
 * write it (journal rows, tracking events, inbound messages), with the facts that must not count
 * mixed in (ignored replies, call steps' sends, a scanner's clicks, a second open of one email, a
 * second interested reply); the truth is computed here from the world's log alone, bucketed by
 * luxon's calendar of each zone, and compared with `GET …/analytics` (PostgreSQL's `at time zone`)
 * day by day, with its totals, the previous period and the CSV export.
 *
 * The world sits in 2036, so that the window (which ends with the latest work) does not move with
 * the real date: the last Sundays of March and October change Europe's clocks, the second Sunday of
 * March and the first of November America's, Lord Howe moves by 30 minutes and Chatham keeps a
 * 12:45 offset; Kolkata (5:30) never changes.
 */
const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'] as const;
/** The window: 28 days ending 2036-11-06 (Europe's change on 26 October, America's on 2 November). */
const LAST = Date.UTC(2036, 10, 6, 20);
const DAYS = 28;

type Fact = { series: DaySeries | null; at: number };

/** The days the clocks change in the window, and the day after each (its midnight ends the short or long day). */
const CHANGES = [
  ['Europe/Berlin', '2036-10-26'],
  ['Europe/Berlin', '2036-10-27'],
  ['America/New_York', '2036-11-02'],
  ['America/New_York', '2036-11-03'],
  ['Australia/Lord_Howe', '2036-10-05'],
  ['Australia/Lord_Howe', '2036-10-06'],
] as const;

describe.each(testBackends())('analytics in the calendar of any time zone (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  /** The world's log: what each fact counts as (null: nothing) and the instant it counts at. */
  const log: Fact[] = [];

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Zones Co', 'owner@zones.test');
    b = await login(h.app, 'owner@zones.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    const leads = Array.from({ length: 16 }, (_, i) => `p${i}@zones.test,P${i}`).join('\n');
    await b.call('POST', `${base}/leads/import`, { csv: `email,first_name\n${leads}\n` });
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'zones',
      name: 'Zones',
      window: 'any',
      jitterMinutes: 0,
      steps: [
        { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hi', title: '' },
        { key: 'call', type: 'call', delay: '1 day', subject: '', body: '', title: 'Call', waitForTask: false },
      ],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    expect((await b.call('POST', `${base}/sequences/${seq.json().sequenceId}/enroll`, { all: true })).json().enrolled).toBe(16);
    const db = h.store.db;
    const steps = Object.fromEntries((await db.selectFrom('step').select(['id', 'key']).where('sequence_id', '=', seq.json().sequenceId).execute()).map((s) => [s.key, s.id]));
    const enrollments = await db.selectFrom('enrollment').select(['id', 'mailbox_id']).orderBy('id').execute();
    const random = seededRandom(`analytics-calendar-${backend}`);
    const world = buildWorld(random, enrollments.length);

    const events = world.journal.map((j) => ({
      workspace_id: w.workspaceId,
      enrollment_id: enrollments[j.who]!.id,
      type: j.type,
      at: new Date(j.at),
      payload: JSON.stringify({ event: { type: j.type.replace('.ignored', ''), ...(j.step ? { stepId: steps[j.step] } : {}), ...(j.outcome ? { outcome: j.outcome } : {}) } }),
    }));
    for (let i = 0; i < events.length; i += 500) await db.insertInto('event').values(events.slice(i, i + 500)).execute();
    const sendRequests = Array.from({ length: 40 }, () => newId(LAST, random));
    const tracking = world.tracking.map((t) => ({
      workspace_id: w.workspaceId,
      enrollment_id: enrollments[t.email % enrollments.length]!.id,
      send_request_id: sendRequests[t.email]!,
      kind: t.kind,
      verdict: t.verdict,
      at: new Date(t.at),
    }));
    for (let i = 0; i < tracking.length; i += 500) await db.insertInto('tracking_event').values(tracking.slice(i, i + 500)).execute();
    for (const [i, m] of world.inbound.entries()) {
      const e = enrollments[m.who]!;
      await db
        .insertInto('message')
        .values({ id: newId(m.at, random), workspace_id: w.workspaceId, mailbox_id: e.mailbox_id, enrollment_id: e.id, direction: 'inbound', message_id: `<in${i}@zones.test>`, at: new Date(m.at + 5_000), received_at: new Date(m.at), label: 'human_reply', intent: m.intent })
        .execute();
    }
    log.push(...world.truth);
  }, 120_000);
  afterAll(() => h?.close());

  it.each(ZONES)('counts every series per day of %s exactly as the world\'s log, the totals, the previous period and the CSV', async (zone) => {
    const r = await b.call('GET', `${base}/analytics?days=${DAYS}&zone=${encodeURIComponent(zone)}`);
    expect(r.statusCode, r.body).toBe(200);
    const a = r.json();
    const lastDay = DateTime.fromMillis(LAST, { zone }).startOf('day');
    const keys = Array.from({ length: DAYS }, (_, i) => lastDay.minus({ days: DAYS - 1 - i }).toISODate()!);
    expect(a.zone).toBe(zone);
    expect(a.days.map((d: { day: string }) => d.day)).toEqual(keys);
    expect(a.days).toEqual(keys.map((day) => ({ day, ...truthOn(log, zone, new Set([day])) })));
    expect(a.totals).toEqual(truthOn(log, zone, new Set(keys)));
    const before = new Set(Array.from({ length: DAYS }, (_, i) => lastDay.minus({ days: 2 * DAYS - 1 - i }).toISODate()!));
    expect(a.previous.totals).toEqual(truthOn(log, zone, before));
    // The days around a change of the clocks last 23 or 25 hours, and the window's edges are local midnights.
    expect(Date.parse(a.window.since)).toBe(lastDay.minus({ days: DAYS - 1 }).toMillis());
    expect(Date.parse(a.window.until)).toBe(lastDay.plus({ days: 1 }).toMillis());

    const csv = await b.call('GET', `${base}/analytics/days.csv?days=${DAYS}&zone=${encodeURIComponent(zone)}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(['day', ...DAY_SERIES].join(','));
    expect(lines.slice(1)).toEqual(a.days.map((d: Record<string, unknown>) => [d.day, ...DAY_SERIES.map((k) => d[k])].join(',')));
  });

  it.each(['sequence', 'step', 'variant', 'mailbox', 'rep'] as const)('breaks the window down by %s into rows that sum to the headline, in two zones, and the CSV says the same', async (by) => {
    for (const zone of ['UTC', 'America/New_York']) {
      const q = `days=${DAYS}&zone=${encodeURIComponent(zone)}`;
      const headline = (await b.call('GET', `${base}/analytics?${q}`)).json();
      const r = await b.call('GET', `${base}/analytics/breakdown?by=${by}&${q}`);
      expect(r.statusCode, r.body).toBe(200);
      const x = r.json();
      const sum = Object.fromEntries(DAY_SERIES.map((k) => [k, x.rows.reduce((n: number, row: Record<string, number>) => n + row[k]!, 0)]));
      expect(sum).toEqual(headline.totals);
      expect(x.totals).toEqual(headline.totals);
      for (const row of x.rows) expect(row.hardBounces + row.softBounces).toBe(row.bounces);
      const csv = await b.call('GET', `${base}/analytics/breakdown.csv?by=${by}&${q}`);
      expect(csv.statusCode).toBe(200);
      const lines = csv.body.trimEnd().split('\r\n');
      const head = lines[0]!.split(',');
      expect(head.slice(0, 2)).toEqual([by, 'id']);
      expect(lines.slice(1).map((l) => l.split(','))).toEqual(x.rows.map((row: Record<string, unknown>) => [row.label, row.key ?? '', ...head.slice(2).map((k) => (row[k] === null ? '' : String(row[k])))]));
    }
  });

  it('covers the days the clocks change with facts on both sides of their midnights', () => {
    // The world is only a test of the calendar if facts fall within an hour of the changing days' midnights.
    const near = (zone: string, date: string) => {
      const midnight = DateTime.fromISO(date, { zone }).startOf('day').toMillis();
      return log.filter((f) => f.series && Math.abs(f.at - midnight) < HOUR).length;
    };
    for (const [zone, date] of CHANGES) expect(near(zone, date), `${zone} ${date}`).toBeGreaterThan(0);
    // The changes are where the test says they are: a 25-hour day in Berlin and New York, 23.5 hours on Lord Howe.
    const hours = (zone: string, date: string) => DateTime.fromISO(date, { zone }).startOf('day').plus({ days: 1 }).diff(DateTime.fromISO(date, { zone }).startOf('day'), 'hours').hours;
    expect([hours('Europe/Berlin', '2036-10-26'), hours('America/New_York', '2036-11-02'), hours('Australia/Lord_Howe', '2036-10-05')]).toEqual([25, 25, 23.5]);
  });

  it('refuses a zone it does not know, in plain words', async () => {
    const r = await b.call('GET', `${base}/analytics?zone=Mars/Olympus`);
    expect(r.statusCode).toBe(400);
    expect(r.body).toMatch(/IANA time zone/);
  });
});

/** Each series' count over the facts whose instant falls on one of `days` in `zone`. */
function truthOn(log: readonly Fact[], zone: string, days: ReadonlySet<string>): Record<DaySeries, number> {
  const t = Object.fromEntries(DAY_SERIES.map((k) => [k, 0])) as Record<DaySeries, number>;
  for (const f of log) if (f.series && days.has(DateTime.fromMillis(f.at, { zone }).toISODate()!)) t[f.series] += 1;
  return t;
}

interface World {
  journal: Array<{ who: number; type: string; at: number; step?: 'intro' | 'call'; outcome?: string }>;
  tracking: Array<{ email: number; kind: 'open' | 'click'; verdict: 'human' | 'unknown' | 'proxy' | 'scanner'; at: number }>;
  inbound: Array<{ who: number; at: number; intent: string }>;
  /** What the analytics must count: one entry per counted fact, at the instant it counts. */
  truth: Fact[];
}

/**
 * A world over the window and the one before it, its instants crowded around the local midnights of
 * every zone (a fact an hour off counts on another day in some zone), and its truth written down as
 * each fact is made, by the definitions of ops/figures.ts perDay.
 */
function buildWorld(random: Random, people: number): World {
  const start = LAST - 2 * DAYS * DAY;
  const midnights: number[] = [];
  for (const zone of ZONES) {
    for (let d = DateTime.fromMillis(start, { zone }).startOf('day'); d.toMillis() <= LAST; d = d.plus({ days: 1 })) midnights.push(d.toMillis());
  }
  const instant = () => {
    const at = random.next() < 0.6 ? midnights[random.int(0, midnights.length - 1)]! + random.int(-90, 90) * 60_000 + random.int(-30, 30) * 1000 : start + random.int(0, 2 * DAYS * 24 * 60) * 60_000;
    return Math.min(LAST, Math.max(start, at));
  };
  const w: World = { journal: [], tracking: [], inbound: [], truth: [] };
  const journal = (type: string, counts: DaySeries | null, extra: { step?: 'intro' | 'call'; outcome?: string } = {}) => {
    const at = instant();
    w.journal.push({ who: random.int(0, people - 1), type, at, ...extra });
    w.truth.push({ series: counts, at });
  };
  for (let i = 0; i < 400; i++) journal('step_sent', 'sends', { step: 'intro' });
  // And, whatever the seed, sends 20 minutes either side of the midnights that begin and end the days the clocks change.
  for (const [zone, date] of CHANGES) {
    const midnight = DateTime.fromISO(date, { zone }).startOf('day').toMillis();
    for (const at of [midnight - 20 * 60_000, midnight + 20 * 60_000]) {
      w.journal.push({ who: random.int(0, people - 1), type: 'step_sent', at, step: 'intro' });
      w.truth.push({ series: 'sends', at });
    }
  }
  for (let i = 0; i < 60; i++) journal('step_sent', null, { step: 'call' });
  for (let i = 0; i < 120; i++) journal('reply', 'replies');
  for (let i = 0; i < 40; i++) journal('reply.ignored', null);
  for (let i = 0; i < 30; i++) journal('bounce', 'bounces');
  for (let i = 0; i < 20; i++) journal('unsubscribe', 'unsubscribes');
  for (let i = 0; i < 15; i++) journal(i % 2 ? 'meeting_booked' : 'meeting_booked.ignored', 'meetings');
  for (let i = 0; i < 15; i++) journal(i % 3 ? 'call_outcome' : 'call_outcome.ignored', 'meetings', { step: 'call', outcome: 'meeting_booked' });
  for (let i = 0; i < 25; i++) journal('call_outcome', null, { step: 'call', outcome: 'voicemail' });
  // The latest work, which the window ends with, is at LAST exactly: an ignored reply, counted nowhere.
  w.journal.push({ who: 0, type: 'reply.ignored', at: LAST });

  // Tracking: 40 emails, each opened, fetched by a proxy or clicked several times; an email counts
  // once per series, on the day of its first counted event.
  const firsts = new Map<string, number>();
  for (let i = 0; i < 600; i++) {
    const email = random.int(0, 39);
    const click = random.next() < 0.35;
    const verdict = click ? (random.next() < 0.3 ? 'scanner' : random.next() < 0.8 ? 'human' : 'unknown') : (['human', 'unknown', 'proxy', 'scanner'] as const)[random.int(0, 3)]!;
    const at = instant();
    w.tracking.push({ email, kind: click ? 'click' : 'open', verdict, at });
    const series: DaySeries | null = click ? (verdict === 'scanner' ? null : 'clicked') : verdict === 'proxy' || verdict === 'scanner' ? 'openedAutomatically' : 'opened';
    if (!series) continue;
    const key = `${email}:${series}`;
    firsts.set(key, Math.min(firsts.get(key) ?? Infinity, at));
  }
  for (const [key, at] of firsts) w.truth.push({ series: key.split(':')[1] as DaySeries, at });

  // Inbound messages: an enrollment's replies classified interested count once, at the first one's receipt.
  const positive = new Map<number, number>();
  for (let i = 0; i < 90; i++) {
    const who = random.int(0, people - 1);
    const intent = (['interested', 'interested', 'not_interested', 'question', 'neutral'] as const)[random.int(0, 4)]!;
    const at = instant();
    w.inbound.push({ who, at, intent });
    if (intent === 'interested') positive.set(who, Math.min(positive.get(who) ?? Infinity, at));
  }
  for (const at of positive.values()) w.truth.push({ series: 'positiveReplies', at });
  return w;
}
