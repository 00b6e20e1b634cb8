import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { startTwentyEmulator, type TwentyEmulator, type TwentyEmulatorOptions } from '../../sim/emulators/twenty/emulator.ts';
import { twentyErrors } from '../../sim/emulators/twenty/errors.ts';
import { CrmAuthError, CrmTransientError, type CrmActivity, type CrmActivityKind } from '../connector.ts';
import { TwentyConnector } from './connector.ts';

/** The Twenty connector against the Twenty emulator over HTTP: what lands in the CRM, and how every failure reads. */
const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
const PROSPECT = 'Jane.Doe@Prospect.test';
let clock: SimClock;
let emu: TwentyEmulator;
let key: string;
let jane: string;

async function start(opts: TwentyEmulatorOptions = {}) {
  emu = await startTwentyEmulator({ clock, rateLimit: null, ...opts });
  key = emu.tokens.issue('workspace');
  jane = emu.addPerson({ email: PROSPECT, firstName: 'Jane' });
}

beforeEach(async () => {
  clock = new SimClock(T0);
  await start();
});
afterEach(async () => {
  await emu.close();
});

const connector = (over: Partial<ConstructorParameters<typeof TwentyConnector>[0]> = {}) =>
  new TwentyConnector({ baseUrl: emu.baseUrl, apiKey: () => key, clock, timeoutMs: 5_000, ...over });

async function prepared(over: Partial<ConstructorParameters<typeof TwentyConnector>[0]> = {}) {
  const c = connector(over);
  await c.prepare();
  return c;
}

function activity(kind: CrmActivityKind, n: number, over: Partial<CrmActivity> = {}): CrmActivity {
  return {
    externalId: `cadenza:event:${kind}:${n}`,
    kind,
    email: 'jane.doe@prospect.test',
    occurredAt: '2026-03-01T15:04:05.000Z',
    title: `${kind} ${n}`,
    body: `Body of ${kind} ${n}`,
    ...over,
  };
}

const allKinds: CrmActivityKind[] = ['email_sent', 'email_opened', 'email_clicked', 'email_replied', 'email_bounced', 'unsubscribed', 'call', 'task_completed'];
const byId = <T extends { externalId: string }>(rs: T[]) => Object.fromEntries(rs.map((r) => [r.externalId, r]));
const routes = () => emu.requests.map((r) => `${r.route} ${r.outcome}`);

describe('TwentyConnector', () => {
  it('limits: the documented 60 per batch and 100 requests per minute, 9 requests per batch', () => {
    expect(connector().limits).toEqual({ maxBatch: 60, requests: 100, windowMs: 60_000, requestsPerBatch: 9 });
    expect(connector({ rateLimit: { requests: 300, windowMs: 60_000 } }).limits.requests).toBe(300);
  });

  it('prepare creates cadenzaActivityId on notes and tasks and the two Cadenza-owned person fields through the metadata API, and may run again', async () => {
    const c = connector();
    await c.prepare();
    await c.prepare();
    expect(emu.store.objects.get('notes')!.fields.get('cadenzaActivityId')).toMatchObject({ type: 'TEXT', isCustom: true });
    expect(emu.store.objects.get('tasks')!.fields.get('cadenzaActivityId')).toMatchObject({ type: 'TEXT', isCustom: true });
    expect(emu.store.objects.get('people')!.fields.get('cadenzaSequenceStatus')).toMatchObject({ type: 'TEXT', isCustom: true });
    expect(emu.store.objects.get('people')!.fields.get('cadenzaLastActivityAt')).toMatchObject({ type: 'DATE_TIME', isCustom: true });
    // The second run sees the fields in the objects' metadata and creates none.
    expect(routes()).toEqual(['metadata.objects.list 200', ...Array(4).fill('metadata.fields.create 201'), 'metadata.objects.list 200']);
  });

  it('prepare: a field created between the list and the create (Twenty: "Field already exists") is fine', async () => {
    emu.faults.inject('metadata.fields.create', { kind: 'respond', ...twentyErrors.badRequest('Field already exists') });
    await connector().prepare();
    expect(emu.store.objects.get('notes')!.fields.has('cadenzaActivityId')).toBe(false);
    expect(emu.store.objects.get('people')!.fields.has('cadenzaLastActivityAt')).toBe(true);
  });

  it('every kind written once, as the right object with its fields, attached to the person; again: found, not written twice', async () => {
    const c = await prepared();
    const batch = allKinds.map((k, i) =>
      activity(k, i, {
        ...(k === 'email_opened' ? { automatic: true } : {}),
        ...(k === 'email_replied' ? { replyIntent: 'interested', body: '* not a list\n# not a heading' } : {}),
        ...(k === 'call' ? { call: { direction: 'outbound', outcome: 'connected', durationSeconds: 125, recordingUrl: 'https://cadenza.test/calls/1', transcript: 'Hello <there>' } } : {}),
      }),
    );
    const before = emu.requests.length;
    const first = await c.writeActivities(batch);
    expect(emu.requests.length - before).toBeLessThanOrEqual(c.limits.requestsPerBatch);
    expect(first.every((r) => r.status === 'written')).toBe(true);

    const stored = emu.activities();
    expect(stored.map((s) => [s.object, s.record.cadenzaActivityId])).toEqual([
      ...allKinds.slice(0, 6).map((k, i) => ['note', `cadenza:event:${k}:${i}`]),
      ['task', 'cadenza:event:call:6'],
      ['task', 'cadenza:event:task_completed:7'],
    ]);
    for (const s of stored) {
      expect(s.targets).toHaveLength(1);
      expect(s.targets[0]!.personId).toBe(jane);
      expect(byId(first)[String(s.record.cadenzaActivityId)]).toMatchObject({ status: 'written', crmId: `${s.object}:${s.record.id}` });
    }
    const rec = (k: CrmActivityKind) => stored.find((s) => String(s.record.cadenzaActivityId).includes(`:${k}:`))!.record;
    expect(rec('email_sent')).toMatchObject({ title: 'email_sent 0' });
    expect((rec('email_sent').bodyV2 as { markdown: string }).markdown).toBe('Body of email\\_sent 0\n\n**When:** 2026-03-01T15:04:05.000Z');
    expect(rec('email_opened').title).toBe('email_opened 1 (automatic)');
    expect((rec('email_opened').bodyV2 as { markdown: string }).markdown).toContain('not by a person');
    expect((rec('email_replied').bodyV2 as { markdown: string }).markdown).toContain('\\* not a list\\\n\\# not a heading');
    expect((rec('email_replied').bodyV2 as { markdown: string }).markdown).toContain('**Reply intent:** interested');
    expect(rec('call')).toMatchObject({ status: 'DONE', dueAt: '2026-03-01T15:04:05.000Z', title: 'call 6' });
    const callBody = (rec('call').bodyV2 as { markdown: string }).markdown;
    expect(callBody).toContain('**Call:** outbound, connected, 2 min 5 s');
    expect(callBody).toContain('[listen in Cadenza](<https://cadenza.test/calls/1>)');
    expect(callBody).toContain('**Transcript:**\n\nHello \\<there\\>');
    expect(rec('task_completed')).toMatchObject({ status: 'DONE', dueAt: '2026-03-01T15:04:05.000Z' });

    const again = await c.writeActivities(batch);
    expect(byId(again)).toEqual(byId(first));
    expect(emu.activities()).toHaveLength(8);
    expect(emu.activities().every((s) => s.targets.length === 1)).toBe(true);
  });

  it('an address with no person in Twenty is no_contact, and nothing is written for it', async () => {
    const c = await prepared();
    const r = await c.writeActivities([activity('email_sent', 1), activity('email_sent', 2, { email: 'stranger@else.test' })]);
    expect(byId(r)).toEqual({
      'cadenza:event:email_sent:1': expect.objectContaining({ status: 'written' }),
      'cadenza:event:email_sent:2': { externalId: 'cadenza:event:email_sent:2', status: 'no_contact' },
    });
    expect(emu.activities()).toHaveLength(1);
  });

  it('a batch whose answer is lost after Twenty wrote it: the retry finds the records and writes each one and its target once', async () => {
    const c = await prepared();
    const batch = [activity('email_sent', 1), activity('email_opened', 2), activity('call', 3)];
    emu.faults.inject('notes.createMany', { kind: 'drop', after: 'processing' });
    await expect(c.writeActivities(batch)).rejects.toBeInstanceOf(CrmTransientError);
    expect(emu.store.records('notes')).toHaveLength(2);
    expect(emu.store.records('noteTargets')).toHaveLength(0);

    const r = await c.writeActivities(batch);
    expect(r.map((x) => x.status)).toEqual(['written', 'written', 'written']);
    expect(emu.activities().map((s) => [s.record.cadenzaActivityId, s.targets.length])).toEqual([
      ['cadenza:event:email_sent:1', 1],
      ['cadenza:event:email_opened:2', 1],
      ['cadenza:event:call:3', 1],
    ]);
  });

  it('a note written whose target answer was lost is neither orphaned nor duplicated: the retry creates only the missing target', async () => {
    const c = await prepared();
    const batch = [activity('email_sent', 1), activity('email_clicked', 2)];
    emu.faults.inject('noteTargets.createMany', { kind: 'drop', after: 'receiving' });
    await expect(c.writeActivities(batch)).rejects.toBeInstanceOf(CrmTransientError);
    expect(emu.activities().map((s) => s.targets.length)).toEqual([0, 0]);

    await c.writeActivities([batch[0]!]);
    expect(emu.activities().map((s) => s.targets.length)).toEqual([1, 0]);
    const r = await c.writeActivities(batch);
    expect(r.every((x) => x.status === 'written')).toBe(true);
    expect(emu.activities().map((s) => s.targets.length)).toEqual([1, 1]);
    expect(emu.store.records('notes')).toHaveLength(2);
  });

  it('429: CrmTransientError with the Retry-After when given, else the time a batch of requests takes to refill', async () => {
    const c = await prepared();
    emu.faults.inject('people.list', { kind: 'respond', ...twentyErrors.tooManyRequests(100, 60_000, { 'retry-after': '7' }) });
    await expect(c.writeActivities([activity('email_sent', 1)])).rejects.toMatchObject({ name: 'CrmTransientError', retryAfterMs: 7_000 });

    await emu.close();
    // prepare() takes 5 requests; the write's first passes, its second meets the 429.
    await start({ rateLimit: { requests: 6, windowMs: 60_000 } });
    const limited = await prepared();
    const err = await limited.writeActivities([activity('email_sent', 1)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmTransientError);
    expect(err).toMatchObject({ retryAfterMs: 5_400 });
    expect((err as Error).message).toContain('429 Limit reached (6 tokens per 60000 ms)');
  });

  it('an outage (503) and a hung request are transient', async () => {
    const c = await prepared();
    emu.outage(T0 + 60_000);
    await expect(c.writeActivities([activity('email_sent', 1)])).rejects.toMatchObject({ name: 'CrmTransientError', message: expect.stringContaining('503') });
    clock.advance(60_000);
    expect((await c.writeActivities([activity('email_sent', 1)]))[0]!.status).toBe('written');

    // A hang: the connector's own deadline (real time, short) gives up.
    emu.faults.inject('people.list', { kind: 'hang', after: 'receiving' });
    const quick = connector({ clock: undefined, timeoutMs: 150 });
    await expect(quick.writeActivities([activity('email_sent', 2)])).rejects.toMatchObject({ name: 'CrmTransientError', message: expect.stringContaining('no answer within 150 ms') });
  });

  it('a refused or revoked API key is a CrmAuthError', async () => {
    const c = await prepared();
    emu.tokens.expire(key);
    const err = await c.writeActivities([activity('email_sent', 1)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmAuthError);
    expect((err as Error).message).toContain('401 Token has expired.');
    await expect(connector({ apiKey: () => '' }).prepare()).rejects.toBeInstanceOf(CrmAuthError);
  });

  it("a record Twenty refuses is rejected with its message; the rest of the batch is written once", async () => {
    const c = await prepared();
    const batch = [activity('call', 1), activity('call', 2, { occurredAt: 'not a date' }), activity('task_completed', 3)];
    const r = byId(await c.writeActivities(batch));
    expect(r['cadenza:event:call:2']).toEqual({
      externalId: 'cadenza:event:call:2',
      status: 'rejected',
      error: 'invalid input syntax for type timestamp with time zone: "not a date"',
    });
    expect(r['cadenza:event:call:1']!.status).toBe('written');
    expect(r['cadenza:event:task_completed:3']!.status).toBe('written');
    expect(emu.activities().map((s) => [s.record.cadenzaActivityId, s.targets.length])).toEqual([
      ['cadenza:event:call:1', 1],
      ['cadenza:event:task_completed:3', 1],
    ]);
    // The batch refused as a whole, then: what it may have written looked up, the rest one by one.
    expect(routes().filter((x) => x.startsWith('tasks.'))).toEqual(['tasks.list 200', 'tasks.createMany 400', 'tasks.list 200', 'tasks.create 201', 'tasks.create 400', 'tasks.create 201']);
  });

  it('a refusal Twenty sends for a note (injected) reaches the result with its message', async () => {
    const c = await prepared();
    emu.faults.inject('notes.createMany', { kind: 'respond', ...twentyErrors.badRequest('Title is too long') });
    emu.faults.inject('notes.create', { kind: 'respond', ...twentyErrors.badRequest('Title is too long') });
    const r = await c.writeActivities([activity('email_sent', 1), activity('email_sent', 2)]);
    expect(r).toEqual([
      { externalId: 'cadenza:event:email_sent:1', status: 'rejected', error: 'Title is too long' },
      expect.objectContaining({ externalId: 'cadenza:event:email_sent:2', status: 'written' }),
    ]);
    expect(emu.activities()).toHaveLength(1);
  });
});
