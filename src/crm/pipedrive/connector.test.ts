import { afterEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { pipedriveErrors } from '../../sim/emulators/pipedrive/errors.ts';
import { startPipedriveEmulator, type PipedriveEmulator, type PipedriveEmulatorOptions } from '../../sim/emulators/pipedrive/emulator.ts';
import { CrmAuthError, CrmCursorExpiredError, CrmTransientError, type CrmActivity } from '../connector.ts';
import { makeConnector } from '../connectors.ts';
import { RequestWindow } from '../request-window.ts';
import { PipedriveConnector } from './connector.ts';

/**
 * The Pipedrive connector against the Pipedrive emulator over loopback: what it writes, that a
 * retry after a lost answer writes nothing twice, what each failure becomes, the change reader's
 * paging and overlap, lists and field writes. The emulator runs on a SimClock (update times move
 * only when a test says so); its limits are raised except where a test is about them.
 */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
let emu: PipedriveEmulator;
let clock: SimClock;
let token: string;

async function setup(o: { emulator?: PipedriveEmulatorOptions; timeoutMs?: number; connectorClock?: boolean } = {}) {
  await emu?.close();
  clock = new SimClock(T0);
  emu = await startPipedriveEmulator({ clock, apiTokenBurst: 1000, searchBurst: 1000, ...o.emulator });
  token = emu.tokens.issue('integration@acme.test');
  return new PipedriveConnector({ baseUrl: emu.baseUrl, token: () => token, timeoutMs: o.timeoutMs ?? 5000, ...(o.connectorClock ? { clock } : {}) });
}

afterEach(async () => {
  await emu?.close();
});

const ANA = 'ana@acme.test';
const at = '2026-01-05T08:30:00.000Z';

function activity(n: number, kind: CrmActivity['kind'], over: Partial<CrmActivity> = {}): CrmActivity {
  return { externalId: `cadenza:event:${n}`, kind, email: ANA, occurredAt: at, title: `${kind} ${n}`, body: `body ${n}`, ...over };
}

const call = activity(7, 'call', {
  externalId: 'cadenza:call:0b9e',
  body: 'Talked <pricing> & terms',
  call: { direction: 'outbound', outcome: 'connected', durationSeconds: 95, recordingUrl: 'https://cadenza.example/calls/0b9e?a=1&b=2', transcript: 'hello\nthere' },
});

const byMarker = (id: string) => emu.activities().find((a) => a.note?.includes(`Cadenza activity id: ${id}<`))!;

describe('Pipedrive connector', () => {
  it('is registered as kind pipedrive', () => {
    expect(makeConnector('pipedrive', { baseUrl: 'http://127.0.0.1:1', token: 't' })).toBeInstanceOf(PipedriveConnector);
  });

  it("prepare creates Cadenza's person fields once; a second run creates nothing", async () => {
    const crm = await setup();
    await crm.prepare();
    await crm.prepare();
    expect(emu.store.personFields.map((f) => [f.name, f.field_type])).toEqual([
      ['Cadenza sequence status', 'varchar'],
      ['Cadenza last activity', 'varchar'],
    ]);
    expect(emu.requestCounts()['personFields.create']).toBe(2);
  });

  it('writes every kind once, done, as email/call/task on the person, with the call and the marker in the note; an unknown address is no_contact', async () => {
    const crm = await setup();
    const ana = emu.addPerson({ email: 'Ana@Acme.test' });
    emu.addPerson({ email: 'ana@acme.test.example' });
    const first = await crm.writeActivities([
      activity(1, 'email_sent', { title: 'Email sent: Quick question (Outbound Q4, step 2)', body: 'Hi Ana,\nquick question' }),
      activity(2, 'email_replied', { replyIntent: 'interested', body: 'Sounds good' }),
      activity(3, 'email_opened', { automatic: true, title: 'Email opened' }),
      activity(9, 'email_sent', { email: 'nobody@acme.test' }),
      call,
    ]);
    expect(first.map((r) => r.status)).toEqual(['written', 'written', 'written', 'no_contact', 'written']);
    const before = emu.log.length;
    const second = await crm.writeActivities([activity(4, 'email_clicked'), activity(5, 'email_bounced'), activity(6, 'unsubscribed'), activity(8, 'task_completed', { title: 'Task: send the deck' })]);
    expect(second.map((r) => r.status)).toEqual(['written', 'written', 'written', 'written']);
    // One search, one activity list, one create each: within what the writer reserves.
    expect(emu.log.length - before).toBe(6);
    expect(emu.log.length - before).toBeLessThanOrEqual(crm.limits.requestsPerBatch);

    const acts = emu.activities();
    expect(acts).toHaveLength(8);
    for (const a of acts) {
      expect(a).toMatchObject({ done: true, due_date: '2026-01-05', due_time: '08:30', participants: [{ person_id: ana, primary: true }] });
      const r = [...first, ...second].find((x) => a.note!.includes(`Cadenza activity id: ${x.externalId}<`));
      expect(r).toMatchObject({ status: 'written', crmId: String(a.id) });
    }
    expect(Object.fromEntries(acts.map((a) => [a.subject, a.type]))).toMatchObject({
      'Email sent: Quick question (Outbound Q4, step 2)': 'email',
      'Email opened (automatic)': 'email',
      'call 7': 'call',
      'Task: send the deck': 'task',
      'unsubscribed 6': 'email',
    });
    expect(byMarker('cadenza:event:1').note).toBe('<p>Hi Ana,<br>quick question</p><p>Cadenza activity id: cadenza:event:1</p>');
    expect(byMarker('cadenza:event:2').note).toContain('<p>Reply classified by Cadenza as: interested</p>');
    expect(byMarker('cadenza:event:3').note).toContain('not by a person');
    expect(byMarker('cadenza:call:0b9e')).toMatchObject({
      duration: '00:02',
      note:
        '<p>Talked &lt;pricing&gt; &amp; terms</p><p>Call: outbound, outcome connected, 1 min 35 s</p>' +
        '<p>Recording: <a href="https://cadenza.example/calls/0b9e?a=1&amp;b=2">https://cadenza.example/calls/0b9e?a=1&amp;b=2</a></p>' +
        '<p>Transcript:<br>hello<br>there</p><p>Cadenza activity id: cadenza:call:0b9e</p>',
    });
    expect(byMarker('cadenza:event:8').duration).toBeNull();
  });

  it('a create whose answer was lost is transient; the retry finds it by its marker and writes nothing twice', async () => {
    const crm = await setup();
    emu.addPerson({ email: ANA });
    const batch = [activity(1, 'email_sent'), activity(2, 'email_opened'), call];
    emu.faults.inject('activities.create', { kind: 'drop', after: 'processing' });
    await expect(crm.writeActivities(batch)).rejects.toBeInstanceOf(CrmTransientError);
    expect(emu.activities()).toHaveLength(1);

    const retried = await crm.writeActivities(batch);
    expect(retried.map((r) => r.status)).toEqual(['written', 'written', 'written']);
    expect(emu.activities()).toHaveLength(3);
    expect(retried.map((r) => (r as { crmId: string }).crmId).sort()).toEqual(emu.activities().map((a) => String(a.id)).sort());
    // And once more, later: answered from Pipedrive, the same ids.
    clock.advance(3_600_000);
    expect(await crm.writeActivities(batch)).toEqual(retried);
    expect(emu.requestCounts()['activities.create']).toBe(3);
  });

  it("paced as the writer paces it (limits in a RequestWindow), batches never meet the documented burst or search limits", async () => {
    // The documented Essential limits (20 per 2 s, search 10 per 2 s) on the emulator's clock, which only the pacing moves.
    const crm = await setup({ emulator: { apiTokenBurst: 20, searchBurst: 10 } });
    const window = new RequestWindow(crm.limits.requests, crm.limits.windowMs);
    for (let b = 0; b < 6; b++) {
      const batch = Array.from({ length: crm.limits.maxBatch }, (_, i) => {
        const email = `p${b}-${i}@acme.test`;
        emu.addPerson({ email });
        return activity(b * 10 + i, 'email_sent', { email });
      });
      clock.advanceTo(window.earliest(crm.limits.requestsPerBatch, clock.now()));
      window.take(crm.limits.requestsPerBatch, clock.now());
      expect((await crm.writeActivities(batch)).every((r) => r.status === 'written')).toBe(true);
    }
    expect(emu.activities()).toHaveLength(30);
    expect(emu.rateStats()).toMatchObject({ refused: 0 });
    expect(emu.rateStats().peakPerWindow).toBeLessThanOrEqual(20);
    expect(emu.rateStats().peakSearchesPerWindow).toBeLessThanOrEqual(10);
  });

  it('the same externalId twice in one batch is one fact: written once, answered for each', async () => {
    const crm = await setup();
    emu.addPerson({ email: ANA });
    const r = await crm.writeActivities([activity(1, 'email_sent'), activity(1, 'email_sent')]);
    expect(emu.activities()).toHaveLength(1);
    expect(r).toEqual([0, 1].map(() => ({ externalId: 'cadenza:event:1', status: 'written', crmId: String(emu.activities()[0]!.id) })));
  });

  it('an activity Pipedrive refuses (400) is rejected with its reason; the rest is written', async () => {
    const crm = await setup();
    emu.addPerson({ email: ANA });
    emu.faults.inject('activities.create', { kind: 'respond', ...pipedriveErrors.badRequestV2('Invalid activity type') });
    const r = await crm.writeActivities([activity(1, 'email_sent'), activity(2, 'call', { call: { direction: 'inbound', outcome: 'no_answer', durationSeconds: 0 } })]);
    expect(r).toEqual([
      { externalId: 'cadenza:event:1', status: 'rejected', error: 'Pipedrive refused the activity: Invalid activity type' },
      { externalId: 'cadenza:event:2', status: 'written', crmId: String(emu.activities()[0]!.id) },
    ]);
    expect(emu.activities()).toHaveLength(1);
  });

  it('a refused or revoked token is CrmAuthError, without the token in the message; OAuth tokens go as Bearer', async () => {
    const crm = await setup();
    emu.addPerson({ email: ANA });
    emu.tokens.expire(token);
    const e = await crm.writeActivities([activity(1, 'email_sent')]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CrmAuthError);
    expect((e as Error).message).toContain('401 unauthorized access');
    expect((e as Error).message).not.toContain(token);
    const oauthToken = emu.tokens.issue('integration@acme.test');
    const oauth = new PipedriveConnector({ baseUrl: emu.baseUrl, token: () => oauthToken, auth: 'oauth' });
    expect(await oauth.integrationUserId()).toBe(String(emu.userId('integration@acme.test')));
    expect(emu.log.at(-1)!.authorization).toBe(`Bearer ${oauthToken}`);
  });

  it('429s are transient with the wait the headers give: the burst window, Retry-After, the daily budget until midnight UTC', async () => {
    // The emulator's clock stands still: the search and the list fill a burst window of 2.
    let crm = await setup({ emulator: { apiTokenBurst: 2 } });
    emu.addPerson({ email: ANA });
    const burst = await crm.writeActivities([activity(1, 'email_sent')]).catch((x: unknown) => x);
    expect(burst).toMatchObject({ name: 'CrmTransientError', retryAfterMs: 2000 });
    expect((burst as Error).message).toContain('429 Request over limit');
    expect(emu.activities()).toHaveLength(0);

    crm = await setup();
    emu.addPerson({ email: ANA });
    emu.faults.inject('persons.search', { kind: 'respond', ...pipedriveErrors.tooManyRequests({ 'retry-after': '7' }) });
    await expect(crm.writeActivities([activity(1, 'email_sent')])).rejects.toMatchObject({ retryAfterMs: 7000 });

    // A budget of 25 tokens: a search (20) and a list (10) do not both fit.
    crm = await setup({ emulator: { dailyTokens: 25 }, connectorClock: true });
    emu.addPerson({ email: ANA });
    const daily = await crm.writeActivities([activity(1, 'email_sent')]).catch((x: unknown) => x);
    expect(daily).toMatchObject({ name: 'CrmTransientError', retryAfterMs: 15 * 3_600_000 });
    expect(emu.rateStats().refused).toBe(1);
  });

  it('an outage, a 5xx, a hang past the timeout and a dropped connection are transient; then it writes', async () => {
    const crm = await setup({ timeoutMs: 300 });
    emu.addPerson({ email: ANA });
    emu.outage(T0 + 60_000);
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/503 Service unavailable/);
    emu.outage(0);
    emu.faults.inject('activities.list', { kind: 'respond', ...pipedriveErrors.internal() });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/500 Internal server error/);
    emu.faults.inject('activities.create', { kind: 'hang', after: 'receiving' });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/no answer within 300 ms/);
    emu.faults.inject('*', { kind: 'drop', after: 'receiving' });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toBeInstanceOf(CrmTransientError);
    expect(await crm.writeActivities([activity(1, 'call')])).toEqual([{ externalId: 'cadenza:event:1', status: 'written', crmId: String(emu.activities()[0]!.id) }]);
    expect(emu.activities()).toHaveLength(1);
  });

  it('readChanges: persons and deals by update time, paged, the overlap re-read without repeats, a change in the same second still seen', async () => {
    const crm = await setup();
    const rep = 'rep@acme.test';
    emu.store.addUser('Rep', rep);
    const a = emu.addPerson({ email: 'A@acme.test', name: 'Ann Lee', ownerEmail: rep, jobTitle: 'CTO', phone: '+1 555 0100' });
    const b = emu.addPerson({ email: 'b@acme.test' });
    clock.advance(1000);
    const c = emu.addPerson({ email: 'c@acme.test' });
    const open = emu.addStage('Qualified');
    const won = emu.addDeal({ title: 'Acme', personId: a, stageId: open, status: 'won', ownerEmail: rep });
    const d2 = emu.addDeal({ title: 'Beta', personId: b, stageId: open });

    const p1 = await crm.readChanges(null, 4);
    expect(p1.contacts.map((x) => x.crmId)).toEqual([String(a), String(b)]);
    expect(p1.contacts[0]).toEqual({
      crmId: String(a), email: 'a@acme.test', firstName: 'Ann', lastName: 'Lee', company: null, title: 'CTO', phone: '+1 555 0100',
      ownerEmail: rep, lifecycleStage: null, doNotContact: false, updatedAt: new Date(T0).toISOString(), updatedBy: null,
    });
    expect(p1.deals).toEqual([
      { crmId: String(won), name: 'Acme', stage: 'won', stageLabel: 'Won', contactEmails: ['a@acme.test'], ownerEmail: rep, createdAt: new Date(T0 + 1000).toISOString(), updatedAt: new Date(T0 + 1000).toISOString(), updatedBy: null },
      expect.objectContaining({ crmId: String(d2), stage: String(open), stageLabel: 'Qualified', contactEmails: ['b@acme.test'] }),
    ]);
    expect(p1.more).toBe(true);

    const p2 = await crm.readChanges(p1.cursor, 4);
    expect(p2.contacts.map((x) => x.crmId)).toEqual([String(c)]);
    expect(p2.deals).toEqual([]);
    expect(p2.more).toBe(false);

    // In the same second as the last read, and one a second later: both come, nothing else repeats.
    emu.updatePerson(b, { marketing_status: 'unsubscribed' });
    clock.advance(1000);
    emu.updateDeal(d2, { stage_id: emu.addStage('Demo') });
    const p3 = await crm.readChanges(p2.cursor, 4);
    expect(p3.contacts.map((x) => [x.crmId, x.doNotContact])).toEqual([[String(b), true]]);
    expect(p3.deals.map((x) => [x.crmId, x.stageLabel])).toEqual([[String(d2), 'Demo']]);
    const p4 = await crm.readChanges(p3.cursor, 4);
    expect([p4.contacts, p4.deals, p4.more]).toEqual([[], [], false]);
    // The reads started before the last change read (the overlap): updated_since was sent each time.
    expect(emu.log.filter((r) => r.route === 'persons.list' && r.url.includes('updated_since=')).length).toBeGreaterThanOrEqual(3);

    await expect(crm.readChanges('garbage', 4)).rejects.toBeInstanceOf(CrmCursorExpiredError);
  });

  it('readChanges: many changes in one second, read one at a time, each delivered exactly once', async () => {
    const crm = await setup();
    const ids = Array.from({ length: 7 }, (_, i) => emu.addPerson({ email: `s${i}@acme.test` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const page = await crm.readChanges(cursor, 1);
      seen.push(...page.contacts.map((c) => c.crmId));
      cursor = page.cursor;
      if (!page.more) break;
    }
    expect(seen).toEqual(ids.map(String));
    // A later change to one of them is a new update time: read again.
    clock.advance(1000);
    emu.updatePerson(ids[3]!, { job_title: 'VP' });
    expect((await crm.readChanges(cursor, 1)).contacts.map((c) => [c.crmId, c.title])).toEqual([[String(ids[3]), 'VP']]);
  });

  it('readChanges: a bulk edit of more changes than the cursor remembers is read to the end, nothing skipped', async () => {
    const crm = await setup();
    const ids: number[] = [];
    for (let second = 0; second < 3; second++) {
      for (let i = 0; i < 800; i++) ids.push(emu.addPerson({ email: `bulk${second}-${i}@acme.test` }));
      clock.advance(1000);
    }
    const seen = new Map<string, number>();
    let cursor: string | null = null;
    let calls = 0;
    for (let more = true; more && calls < 20; calls++) {
      const page = await crm.readChanges(cursor, 1000);
      for (const c of page.contacts) seen.set(c.crmId, (seen.get(c.crmId) ?? 0) + 1);
      cursor = page.cursor;
      more = page.more;
    }
    expect(calls).toBeLessThan(20);
    expect([...seen.keys()].sort()).toEqual(ids.map(String).sort());
    // The cursor stays bounded however large the edit.
    expect(cursor!.length).toBeLessThan(100_000);
  });

  it('integrationUserId is the token user; lists are people filters; members come page by page', async () => {
    const crm = await setup();
    expect(await crm.integrationUserId()).toBe(String(emu.userId('integration@acme.test')));
    const ids = Array.from({ length: 130 }, (_, i) => emu.addPerson({ email: `p${i}@acme.test` }));
    const f = emu.addFilter('Hot leads', ids.slice(0, 120));
    expect(await crm.lists()).toEqual([{ id: String(f), name: 'Hot leads', size: null }]);
    const page1 = await crm.listMembers(String(f), null);
    expect(page1.contacts).toHaveLength(100);
    expect(page1.next).not.toBeNull();
    const page2 = await crm.listMembers(String(f), page1.next);
    expect(page2.contacts.map((c) => c.email)).toEqual(ids.slice(100, 120).map((_, i) => `p${100 + i}@acme.test`));
    expect(page2.next).toBeNull();
  });

  it("writes Cadenza's fields with PATCH custom_fields, null clears; a deleted person is passed over; an unknown field is an error", async () => {
    const crm = await setup();
    await crm.prepare();
    const ana = emu.addPerson({ email: ANA });
    await crm.writeContactFields([
      { crmId: String(ana), fields: { cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: '2026-01-05T08:30:00.000Z' } },
      { crmId: '999', fields: { cadenzaSequenceStatus: 'active' } },
    ]);
    expect(emu.personFieldValues(ana)).toEqual({ 'Cadenza sequence status': 'active', 'Cadenza last activity': '2026-01-05T08:30:00.000Z' });
    await crm.writeContactFields([{ crmId: String(ana), fields: { cadenzaSequenceStatus: null } }]);
    expect(emu.personFieldValues(ana)).toEqual({ 'Cadenza last activity': '2026-01-05T08:30:00.000Z' });
    await expect(crm.writeContactFields([{ crmId: String(ana), fields: { favouriteColour: 'blue' } }])).rejects.toThrow(/no person field for 'favouriteColour'/);
  });
});
