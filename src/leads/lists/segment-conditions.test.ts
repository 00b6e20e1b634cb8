import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import type { TrackingVerdict } from '../../store/schema.ts';
import { filteredLeads } from '../sql/list-leads.ts';
import { segmentFilter, toLeadFilter } from './segment-filter.ts';

/**
 * A segment's field and activity conditions (issue 19) on both backends. Each lead below is
 * written by hand with its fields and what happened to it; each condition's matches are checked
 * against that table filtered in plain code. The clock is fixed: "within N days" counts back
 * from NOW, not from the machine's time.
 */
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const DAY = 86_400_000;

interface Spec {
  name: string;
  title?: string;
  company?: string;
  timeZone?: string;
  custom?: Record<string, string>;
  /** Tracking rows of their enrollment: kind, verdict, days before NOW. */
  tracked?: Array<['open' | 'click', TrackingVerdict | null, number]>;
  /** Outbound emails sent to them, days before NOW. */
  sent?: number[];
  /** Inbound mail from them (not a contact), days before NOW. */
  received?: number[];
}

const SPECS: Spec[] = [
  { name: 'ana', title: 'Head of Sales', company: 'Acme GmbH', timeZone: 'Europe/Berlin', custom: { industry: 'SaaS', size: '50' }, tracked: [['open', 'human', 2], ['click', 'human', 2]], sent: [30, 2] },
  // A proxy's open only: not opened. Company equal to ana's but for case.
  { name: 'bo', title: 'CTO', company: 'acme gmbh', timeZone: 'Europe/Paris', custom: { industry: 'Fintech SaaS' }, tracked: [['open', 'proxy', 5]], sent: [20] },
  // A scanner's open and click only: neither opened nor clicked. A blank custom value is not set.
  { name: 'cy', company: 'Globex', custom: { industry: '  ' }, tracked: [['open', 'scanner', 40], ['click', 'scanner', 40]], sent: [45, 40], received: [1] },
  { name: 'dee' },
  // An open and a click of no firm verdict count as a person's (as the analytics count them).
  { name: 'eve', title: 'VP Sales', tracked: [['open', null, 10], ['click', 'unknown', 10], ['open', 'proxy', 1]] },
];

const humanOpen = (s: Spec) => (s.tracked ?? []).filter(([k, v]) => k === 'open' && v !== 'proxy' && v !== 'scanner').map(([, , d]) => d);
const humanClick = (s: Spec) => (s.tracked ?? []).filter(([k, v]) => k === 'click' && v !== 'scanner' && v !== 'proxy').map(([, , d]) => d);
/** Days before NOW of the last time, or null (never): the smallest number of days back. */
const last = (days: number[]) => (days.length ? Math.min(...days) : null);

describe.each(testBackends())('segment field and activity conditions (%s)', (backend) => {
  let store: TestStore;
  let ws: string;
  const random = seededRandom(`segment-conditions-${backend}`);
  let n = 0;
  const id = () => newId(NOW + n++, random);

  beforeAll(async () => {
    store = await freshStore(backend);
    const db = store.db;
    const other = id();
    ws = id();
    for (const w of [ws, other]) await db.insertInto('workspace').values({ id: w, name: `w-${w}` }).execute();
    const seqs = new Map<string, string>();
    for (const w of [ws, other]) {
      const seq = id();
      seqs.set(w, seq);
      await db.insertInto('sequence').values({ id: seq, workspace_id: w, key: 's', name: 'S', send_window: JSON.stringify({}) }).execute();
    }
    const write = async (w: string, s: Spec) => {
      const leadId = id();
      await db
        .insertInto('lead')
        .values({ id: leadId, workspace_id: w, email: `${s.name}@cond.test`, email_norm: `${s.name}@cond.test`, title: s.title ?? null, company: s.company ?? null, time_zone: s.timeZone ?? null, custom: JSON.stringify(s.custom ?? {}) })
        .execute();
      if (!s.tracked && !s.sent && !s.received) return;
      const e = id();
      await db.insertInto('enrollment').values({ id: e, workspace_id: w, sequence_id: seqs.get(w)!, lead_id: leadId, state: 'finished', time_zone: 'UTC', zone_source: 'test' }).execute();
      for (const [kind, verdict, days] of s.tracked ?? []) {
        await db.insertInto('tracking_event').values({ workspace_id: w, send_request_id: id(), enrollment_id: e, kind, verdict, at: new Date(NOW - days * DAY) }).execute();
      }
      for (const [direction, days] of [...(s.sent ?? []).map((d) => ['outbound', d] as const), ...(s.received ?? []).map((d) => ['inbound', d] as const)]) {
        await db.insertInto('message').values({ id: id(), workspace_id: w, enrollment_id: e, direction, message_id: `<${id()}@cond.test>`, at: new Date(NOW - days * DAY) }).execute();
      }
    };
    for (const s of SPECS) await write(ws, s);
    // Another workspace's lead who did everything today: never in this workspace's segments.
    await write(other, { name: 'zed', title: 'CTO', company: 'Acme GmbH', custom: { industry: 'SaaS' }, tracked: [['open', 'human', 0], ['click', 'human', 0]], sent: [0] });
  }, 60_000);
  afterAll(() => store?.destroy());

  /** The names a filter (as the API takes it) matches at NOW, sorted. */
  const matched = async (filter: unknown) => {
    const f = segmentFilter.parse(filter);
    const rows = await filteredLeads(store.db, ws, toLeadFilter(f, NOW)).select('lead.email').execute();
    return rows.map((r) => r.email.split('@')[0]!).sort();
  };
  const truth = (keep: (s: Spec) => boolean) => SPECS.filter(keep).map((s) => s.name).sort();

  it('field conditions: title, company, time zone and custom fields, equals (any case), contains, set', async () => {
    const cases: Array<[object, (s: Spec) => boolean]> = [
      [{ field: 'title', op: 'contains', value: 'sales' }, (s) => /sales/i.test(s.title ?? '')],
      [{ field: 'title', op: 'set' }, (s) => !!s.title],
      [{ field: 'company', op: 'equals', value: 'ACME GMBH' }, (s) => s.company?.toLowerCase() === 'acme gmbh'],
      [{ field: 'timeZone', op: 'equals', value: 'Europe/Berlin' }, (s) => s.timeZone === 'Europe/Berlin'],
      [{ field: 'timeZone', op: 'contains', value: 'europe/' }, (s) => !!s.timeZone?.startsWith('Europe/')],
      [{ field: 'custom', key: 'industry', op: 'equals', value: 'saas' }, (s) => s.custom?.industry?.toLowerCase() === 'saas'],
      [{ field: 'custom', key: 'industry', op: 'contains', value: 'SaaS' }, (s) => /saas/i.test(s.custom?.industry ?? '')],
      [{ field: 'custom', key: 'industry', op: 'set' }, (s) => !!s.custom?.industry?.trim()],
      [{ field: 'custom', key: 'size', op: 'set' }, (s) => !!s.custom?.size],
      // LIKE's wildcards are text, not patterns.
      [{ field: 'company', op: 'contains', value: '%' }, () => false],
    ];
    for (const [c, keep] of cases) expect({ c, got: await matched({ fields: [c] }) }).toEqual({ c, got: truth(keep) });
    // Two conditions: both must pass.
    expect(await matched({ fields: [{ field: 'company', op: 'contains', value: 'acme' }, { field: 'custom', key: 'industry', op: 'equals', value: 'SaaS' }] })).toEqual(['ana']);
  });

  it("opened and clicked are a person's: a proxy's open and a scanner's click do not count", async () => {
    const cases: Array<[object, (s: Spec) => boolean]> = [
      [{ event: 'opened', when: 'ever' }, (s) => humanOpen(s).length > 0],
      [{ event: 'opened', when: 'never' }, (s) => humanOpen(s).length === 0],
      [{ event: 'clicked', when: 'ever' }, (s) => humanClick(s).length > 0],
      [{ event: 'clicked', when: 'never' }, (s) => humanClick(s).length === 0],
      [{ event: 'opened', when: 'within', days: 7 }, (s) => (last(humanOpen(s)) ?? Infinity) <= 7],
      [{ event: 'clicked', when: 'before', date: new Date(NOW - 7 * DAY).toISOString() }, (s) => (last(humanClick(s)) ?? -1) > 7],
    ];
    for (const [c, keep] of cases) expect({ c, got: await matched({ activity: [c] }) }).toEqual({ c, got: truth(keep) });
    // Spelled out, so the table above cannot agree with a wrong reading of itself.
    expect(await matched({ activity: [{ event: 'opened', when: 'ever' }] })).toEqual(['ana', 'eve']);
    expect(await matched({ activity: [{ event: 'opened', when: 'never' }] })).toEqual(['bo', 'cy', 'dee']);
    expect(await matched({ activity: [{ event: 'clicked', when: 'ever' }] })).toEqual(['ana', 'eve']);
  });

  it('last contacted: after or before a date, within N days of the clock, never; mail received is no contact', async () => {
    const lastSent = (s: Spec) => last(s.sent ?? []);
    const cases: Array<[object, (s: Spec) => boolean]> = [
      [{ event: 'contacted', when: 'within', days: 7 }, (s) => (lastSent(s) ?? Infinity) <= 7],
      [{ event: 'contacted', when: 'within', days: 30 }, (s) => (lastSent(s) ?? Infinity) <= 30],
      [{ event: 'contacted', when: 'before', date: new Date(NOW - 30 * DAY).toISOString() }, (s) => (lastSent(s) ?? -1) > 30],
      [{ event: 'contacted', when: 'after', date: '2026-05-01' }, (s) => lastSent(s) !== null && NOW - lastSent(s)! * DAY >= Date.UTC(2026, 4, 1)],
      [{ event: 'contacted', when: 'never' }, (s) => lastSent(s) === null],
      [{ event: 'contacted', when: 'ever' }, (s) => lastSent(s) !== null],
    ];
    for (const [c, keep] of cases) expect({ c, got: await matched({ activity: [c] }) }).toEqual({ c, got: truth(keep) });
    expect(await matched({ activity: [{ event: 'contacted', when: 'within', days: 7 }] })).toEqual(['ana']);
    // ana's first email was 30 days ago, but her last was 2: "before" reads the last one.
    expect(await matched({ activity: [{ event: 'contacted', when: 'before', date: new Date(NOW - 25 * DAY).toISOString() }] })).toEqual(['cy']);
    // The same filter read 30 days later: the clock is the caller's.
    const later = await filteredLeads(store.db, ws, toLeadFilter(segmentFilter.parse({ activity: [{ event: 'contacted', when: 'within', days: 7 }] }), NOW + 30 * DAY)).select('lead.email').execute();
    expect(later).toEqual([]);
    // Activity and fields together.
    expect(await matched({ fields: [{ field: 'company', op: 'contains', value: 'acme' }], activity: [{ event: 'contacted', when: 'within', days: 30 }, { event: 'opened', when: 'never' }] })).toEqual(['bo']);
  });

  it('refuses a wrong condition in plain words', () => {
    const why = (filter: unknown) => {
      const r = segmentFilter.safeParse(filter);
      return r.success ? 'accepted' : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    };
    expect(why({ fields: [{ field: 'custom', op: 'set' }] })).toMatch(/name the custom field/);
    expect(why({ fields: [{ field: 'title', key: 'x', op: 'set' }] })).toMatch(/name the custom field/);
    expect(why({ fields: [{ field: 'title', op: 'equals' }] })).not.toBe('accepted');
    expect(why({ fields: [{ field: 'title', op: 'like', value: 'x' }] })).toMatch(/equals, contains or set/);
    expect(why({ fields: [{ field: 'email', op: 'set' }] })).not.toBe('accepted');
    expect(why({ activity: [{ event: 'opened', when: 'within', days: 0 }] })).toMatch(/at least 1/);
    expect(why({ activity: [{ event: 'opened', when: 'after', date: 'last week' }] })).toMatch(/a date such as/);
    expect(why({ activity: [{ event: 'opened', when: 'after', date: '2026-02-31x' }] })).toMatch(/a date such as/);
    expect(why({ activity: [{ event: 'opened', when: 'soon' }] })).toMatch(/ever, never, after, before or within/);
    expect(why({ activity: [{ event: 'replied', when: 'ever' }] })).not.toBe('accepted');
    expect(why({ activity: Array.from({ length: 11 }, () => ({ event: 'opened', when: 'ever' })) })).toMatch(/at most 10/);
  });
});
