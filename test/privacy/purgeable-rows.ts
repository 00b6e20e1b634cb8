import type { Db } from '../../src/store/store.ts';

const DAY = 86_400_000;

/** A test id: the same shape as the store's uuids, numbered. */
export const testId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * One workspace's rows of every kind the nightly purge removes, at ages around the retentions the
 * purge tests set (30/60 days for messages, 30 for events, 7 for import rejects, 30 for calls):
 * messages 100, 40 and 1 days old with their text; an event and a tracking event of each age; a
 * delivered and a pending webhook delivery 90 days old; an import 10 days old with one reject;
 * calls 40 days old (one from a number no lead has, with its recording and transcript; one of a
 * lead; one with no lead still ringing) and one with no lead from yesterday; capture quarantine 40
 * and 1 days old. Ids are numbered from `first`; returns the next free number.
 */
export async function seedPurgeableRows(db: Db, ws: string, now: number, first: number): Promise<number> {
  let n = first;
  for (const age of [100, 40, 1]) {
    await db.insertInto('message').values({ id: testId(n++), workspace_id: ws, direction: 'inbound', message_id: `<m${n}@t>`, at: new Date(now - age * DAY), new_text: `text ${age}`, excerpt: `ex ${age}` }).execute();
  }
  for (const age of [100, 40, 1]) {
    await db.insertInto('event').values({ workspace_id: ws, enrollment_id: null, type: 'note', payload: '{}', at: new Date(now - age * DAY) }).execute();
    await db.insertInto('tracking_event').values({ workspace_id: ws, kind: 'open', at: new Date(now - age * DAY) }).execute();
  }
  const ep = testId(n++);
  await db.insertInto('webhook_endpoint').values({ id: ep, workspace_id: ws, url: 'https://h.test', events: ['reply'], legacy_secret: 's' }).execute();
  await db.insertInto('webhook_delivery').values([
    { endpoint_id: ep, workspace_id: ws, event_id: 'done', event_type: 'reply', payload: '{}', state: 'delivered', next_attempt_at: new Date(now - 90 * DAY), created_at: new Date(now - 90 * DAY) },
    { endpoint_id: ep, workspace_id: ws, event_id: 'pending', event_type: 'reply', payload: '{}', state: 'pending', next_attempt_at: new Date(now), created_at: new Date(now - 90 * DAY) },
  ]).execute();
  const imp = testId(n++);
  await db.insertInto('lead_import').values({ id: imp, workspace_id: ws, on_duplicate: 'skip', status: 'done', created_at: new Date(now - 10 * DAY) }).execute();
  await db.insertInto('lead_import_reject').values({ import_id: imp, workspace_id: ws, line: 2, reason: 'duplicate', message: 'dup', raw: 'a@b.test' }).execute();
  const lead = testId(n++);
  await db.insertInto('lead').values({ id: lead, workspace_id: ws, email: `lead${n}@p.test`, email_norm: `lead${n}@p.test` }).execute();
  const call = async (over: Partial<{ lead_id: string; state: 'ringing' | 'ended' }>, age: number) => {
    const c = testId(n++);
    await db.insertInto('phone_call').values({ id: c, workspace_id: ws, direction: 'inbound', source: 'dialer', state: 'ended', remote_e164: '+15550100', created_at: new Date(now - age * DAY), ...over }).execute();
    return c;
  };
  const unmatched = await call({}, 40);
  await db.insertInto('phone_call_recording').values({ call_id: unmatched, workspace_id: ws, sealed: Buffer.from('x'), duration_ms: 1000, bytes: 1, announced: true, created_at: new Date(now - 40 * DAY) }).execute();
  await db.insertInto('call_transcript').values({ call_id: unmatched, workspace_id: ws, next_attempt_at: new Date(now - 40 * DAY) }).execute();
  await call({ lead_id: lead }, 40);
  await call({ state: 'ringing' }, 40);
  await call({}, 1);
  for (const age of [40, 1]) await db.insertInto('call_capture_quarantine').values({ sip_call_id: `c${age}-${ws.slice(-4)}`, workspace_id: ws, reason: 'no_call', message: 'no call', at: new Date(now - age * DAY) }).execute();
  return n;
}

/** What purgeExpiredData removes of one workspace seeded above, under those retentions. */
export const PURGED_OF_SEEDED = { message_bodies: 1, messages: 1, events: 2, tracking_events: 2, webhook_deliveries: 1, import_rejects: 1, unmatched_calls: 1, capture_quarantine: 1 };

/** The retentions the counts above assume. */
export const SEEDED_RETENTION = { messageBodiesDays: 30, messagesDays: 60, eventsDays: 30, importRejectsDays: 7, unmatchedCallsDays: 30 };
