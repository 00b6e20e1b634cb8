import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../common/clock.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { sfErrors } from '../../sim/emulators/salesforce/errors.ts';
import { startSalesforceEmulator, type SalesforceEmulator, type SalesforceEmulatorOptions } from '../../sim/emulators/salesforce/emulator.ts';
import { CrmAuthError, CrmCursorExpiredError, CrmTransientError, type CrmActivity } from '../connector.ts';
import { makeConnector } from '../connectors.ts';
import { allocationWaitMs } from './client.ts';
import { SalesforceConnector } from './connector.ts';

/**
 * The Salesforce connector against the Salesforce emulator over loopback: the Tasks it writes, that
 * a retried batch is written once, what each failure becomes, and the changes, lists and field
 * writes it reads and makes. Both share a SimClock (SystemModstamp, session and allocation times
 * exact) except where a real timeout is the point.
 */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
let emu: SalesforceEmulator;
let clock: SimClock;
let refreshToken: string;

async function setup(opts: { emulator?: SalesforceEmulatorOptions; field?: boolean; prepare?: boolean; clock?: Clock; timeoutMs?: number } = {}) {
  await emu?.close();
  clock = new SimClock(T0);
  const c = opts.clock ?? clock;
  emu = await startSalesforceEmulator({ clock: c, ...opts.emulator });
  if (opts.field !== false) emu.addCustomField('Task', { name: 'Cadenza_Activity_Id__c', type: 'string', length: 100, externalId: true, unique: true });
  refreshToken = emu.authorize();
  const crm = new SalesforceConnector({ baseUrl: emu.baseUrl, token: token(), clock: c, timeoutMs: opts.timeoutMs ?? 5000 });
  if (opts.prepare !== false && opts.field !== false) await crm.prepare();
  return crm;
}

const token = () => JSON.stringify({ refreshToken, clientId: emu.client.id, clientSecret: emu.client.secret });

afterEach(async () => {
  await emu?.close();
});

const ANA = 'ana@acme.test';
const at = '2026-01-05T09:30:00.000Z';

function activity(n: number, kind: CrmActivity['kind'], over: Partial<CrmActivity> = {}): CrmActivity {
  return { externalId: `cadenza:event:${n}`, kind, email: ANA, occurredAt: at, title: `${kind} ${n}`, body: `body ${n}`, ...over };
}

const everyKind: CrmActivity[] = [
  activity(1, 'email_sent', { title: 'Email sent: Quick question (Outbound Q4, step 2)', body: 'Hi Ana,\nquick question' }),
  activity(2, 'email_replied', { replyIntent: 'interested', body: 'Sounds good' }),
  activity(3, 'email_opened', { automatic: true, title: 'Email opened' }),
  activity(4, 'email_clicked'),
  activity(5, 'email_bounced'),
  activity(6, 'unsubscribed'),
  activity(7, 'call', {
    externalId: 'cadenza:call:0b9e',
    body: 'Talked pricing',
    call: { direction: 'inbound', outcome: 'connected', durationSeconds: 95.4, recordingUrl: 'https://cadenza.example/calls/0b9e', transcript: 'hello' },
  }),
  activity(8, 'task_completed', { title: 'Task: send the deck' }),
];

const task = (externalId: string) => emu.records('Task').find((t) => t.Cadenza_Activity_Id__c === externalId)!;
const addContact = (email: string, extra: Record<string, unknown> = {}) => emu.add('Contact', { LastName: email.split('@')[0], Email: email, ...extra });

describe('Salesforce connector: activities', () => {
  it('prepare checks the external-id field on Task and says what the admin must do when it is missing or not an external id', async () => {
    let crm = await setup({ field: false });
    await expect(crm.prepare()).rejects.toThrow(/Task has no Cadenza_Activity_Id__c field .*External ID/);
    crm = await setup({ field: false });
    emu.addCustomField('Task', { name: 'Cadenza_Activity_Id__c', type: 'string', length: 100 });
    await expect(crm.prepare()).rejects.toThrow(/is not marked External ID/);
    crm = await setup();
    await crm.prepare();
    expect(emu.requestCounts()['sobjects.describe']).toBe(2);
  });

  it('writes every kind once as a completed Task on the contact, with the fields of its kind; an unknown address is no_contact; a lead is used when no contact has the address', async () => {
    const crm = await setup();
    const ana = addContact('Ana@Acme.test');
    const lead = emu.add('Lead', { LastName: 'Bo', Company: 'Bo Inc', Email: 'bo@lead.test' });
    emu.add('Lead', { LastName: 'Old', Company: 'Old', Email: 'converted@lead.test', IsConverted: true });
    const before = emu.log.length;
    const results = await crm.writeActivities([
      ...everyKind,
      activity(9, 'email_sent', { email: 'nobody@acme.test' }),
      activity(10, 'email_sent', { email: 'BO@lead.test' }),
      activity(11, 'email_sent', { email: 'converted@lead.test' }),
    ]);
    expect(results.filter((r) => r.status === 'no_contact').map((r) => r.externalId)).toEqual(['cadenza:event:9', 'cadenza:event:11']);
    expect(results.filter((r) => r.status === 'written')).toHaveLength(9);
    for (const r of results) if (r.status === 'written') expect(r.crmId).toBe(task(r.externalId).Id);

    expect(emu.records('Task')).toHaveLength(9);
    for (const a of everyKind) expect(task(a.externalId)).toMatchObject({ WhoId: ana, Status: 'Completed', ActivityDate: '2026-01-05', Priority: 'Normal', Subject: a.title });
    expect(task('cadenza:event:10').WhoId).toBe(lead);
    expect(task('cadenza:event:1')).toMatchObject({ TaskSubtype: 'Email', Subject: 'Email sent: Quick question (Outbound Q4, step 2)', Description: 'Hi Ana,\nquick question' });
    expect(task('cadenza:event:2')).toMatchObject({ TaskSubtype: 'Email', Description: 'Sounds good\n\nClassified by Cadenza as: interested' });
    expect(task('cadenza:call:0b9e')).toMatchObject({
      TaskSubtype: 'Call',
      CallType: 'Inbound',
      CallDurationInSeconds: 95,
      CallDisposition: 'connected',
      Description: 'Talked pricing\n\nOutcome: connected\n\nRecording: https://cadenza.example/calls/0b9e\n\nTranscript:\nhello',
    });
    expect(task('cadenza:event:3')).toMatchObject({ TaskSubtype: 'Task', Description: 'Automatic: an image proxy or a security scanner fetched the email, not a person.\n\nbody 3' });
    expect(task('cadenza:event:8')).toMatchObject({ TaskSubtype: 'Task', Subject: 'Task: send the deck', CallType: null });
    // Written by the integration user: its own changes are recognisable.
    expect(task('cadenza:event:8').LastModifiedById).toBe(emu.integrationUserId);
    // A contacts query, a leads query for the addresses left, one upsert (and the token endpoint, not counted).
    expect(emu.log.slice(before).map((r) => r.route)).toEqual(['query', 'query', 'composite.upsert']);
    expect(emu.log.slice(before).length).toBeLessThanOrEqual(crm.limits.requestsPerBatch);
  });

  it('the same batch again is answered from the CRM: the same ids, nothing written twice (TaskSubtype left out on the update)', async () => {
    const crm = await setup();
    addContact(ANA);
    const first = await crm.writeActivities(everyKind);
    const again = await crm.writeActivities(everyKind);
    expect(again).toEqual(first);
    expect(emu.records('Task')).toHaveLength(everyKind.length);
    expect(task('cadenza:call:0b9e').TaskSubtype).toBe('Call');
    expect(emu.requestCounts()['composite.upsert']).toBe(3);
  });

  it('a batch whose answer was lost after Salesforce wrote it is transient; retried, every activity is still one Task', async () => {
    const crm = await setup();
    addContact(ANA);
    const batch = [activity(1, 'email_opened'), activity(2, 'call'), activity(1, 'email_opened')];
    emu.faults.inject('composite.upsert', { kind: 'drop', after: 'processing' });
    await expect(crm.writeActivities(batch)).rejects.toBeInstanceOf(CrmTransientError);
    expect(emu.records('Task')).toHaveLength(2);
    const retried = await crm.writeActivities(batch);
    expect(retried.map((r) => r.status)).toEqual(['written', 'written', 'written']);
    expect(emu.records('Task')).toHaveLength(2);
    expect(retried.map((r) => (r as { crmId: string }).crmId)).toEqual([task('cadenza:event:1').Id, task('cadenza:event:2').Id, task('cadenza:event:1').Id]);
  });

  it('a record Salesforce refuses is rejected alone with its reason; a refused upsert rejects the batch; an unreadable time is rejected before sending', async () => {
    const crm = await setup();
    addContact(ANA);
    emu.addValidationRule('Task', (t) => (String(t.Subject).includes('forbidden') ? 'Subjects may not say forbidden' : null));
    const results = await crm.writeActivities([activity(1, 'email_sent', { title: 'a forbidden word' }), activity(2, 'email_sent'), activity(3, 'call', { occurredAt: 'yesterday-ish' })]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'written', 'rejected']);
    expect((results[0] as { error: string }).error).toBe('Salesforce refused it: FIELD_CUSTOM_VALIDATION_EXCEPTION: Subjects may not say forbidden');
    expect((results[2] as { error: string }).error).toBe('occurredAt is not a date: yesterday-ish');
    expect(emu.records('Task')).toHaveLength(1);

    const unprepared = await setup({ field: false });
    addContact(ANA);
    const [r] = await unprepared.writeActivities([activity(4, 'email_sent')]);
    expect(r).toMatchObject({ status: 'rejected' });
    expect((r as { error: string }).error).toContain('Provided external ID field does not exist or is not accessible: Cadenza_Activity_Id__c');

    emu.faults.inject('query', { kind: 'respond', ...sfErrors.invalidField('Email', 'Contact') });
    const [lookup] = await unprepared.writeActivities([activity(5, 'email_sent')]);
    expect((lookup as { error: string }).error).toMatch(/^Salesforce refused the lookup of the addresses: INVALID_FIELD: No such column 'Email'/);
  });

  it('an ended session is refreshed once and the request sent again; a revoked grant is CrmAuthError without secrets in the message', async () => {
    const crm = await setup();
    addContact(ANA);
    emu.expireSessions();
    expect((await crm.writeActivities([activity(1, 'email_sent')]))[0]!.status).toBe('written');
    expect(emu.requestCounts()['oauth.token']).toBe(2);
    // The contacts query met the ended session, and went again after the refresh.
    expect(emu.log.filter((r) => r.route === 'query').map((r) => r.outcome)).toEqual([401, 200]);

    emu.revoke(refreshToken);
    emu.expireSessions();
    const e = await crm.writeActivities([activity(2, 'email_sent')]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CrmAuthError);
    expect((e as Error).message).toContain('invalid_grant (expired access/refresh token)');
    for (const secret of [refreshToken, emu.client.secret]) expect((e as Error).message).not.toContain(secret);
  });

  it('two calls meeting an ended session share one refresh; a second 401 after a fresh token, or another 403, is CrmAuthError', async () => {
    const crm = await setup();
    addContact(ANA);
    emu.expireSessions();
    const both = await Promise.all([crm.writeActivities([activity(1, 'email_sent')]), crm.writeActivities([activity(2, 'email_sent')])]);
    expect(both.map((r) => r[0]!.status)).toEqual(['written', 'written']);
    expect(emu.requestCounts()['oauth.token']).toBe(2);

    emu.faults.inject('query', { kind: 'respond', ...sfErrors.invalidSession() }, 2);
    await expect(crm.writeActivities([activity(3, 'email_sent')])).rejects.toThrow(/401 INVALID_SESSION_ID .*again after a new access token/);
    emu.faults.inject('query', { kind: 'respond', status: 403, body: [{ message: 'The REST API is not enabled for this Organization.', errorCode: 'API_DISABLED_FOR_ORG' }] });
    await expect(crm.writeActivities([activity(3, 'email_sent')])).rejects.toBeInstanceOf(CrmAuthError);
  });

  it('requestsPerBatch holds for the worst batch: 200 addresses of 80 characters, every one percent-encoded, each query URL within 16,384 bytes', async () => {
    const crm = await setup();
    const batch = Array.from({ length: 200 }, (_, i) => {
      const local = `${'+'.repeat(64)}${String(i).padStart(3, '0')}`;
      return activity(i, 'email_sent', { email: `${local}@${'x'.repeat(80 - local.length - 6)}.test` });
    });
    expect(batch.every((a) => a.email.length === 80)).toBe(true);
    const before = emu.log.length;
    const results = await crm.writeActivities(batch);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set(['no_contact']));
    const made = emu.log.slice(before);
    expect(made.length).toBeLessThanOrEqual(crm.limits.requestsPerBatch);
    expect(made.filter((r) => r.route === 'query').length).toBeGreaterThan(2);
    for (const r of made) expect(Buffer.byteLength(r.url)).toBeLessThan(16_384);
  });

  it("an upsert answer that does not account for every record is transient (the retry finds what was written)", async () => {
    const crm = await setup();
    addContact(ANA);
    emu.faults.inject('composite.upsert', { kind: 'respond', status: 200, body: [] });
    await expect(crm.writeActivities([activity(1, 'email_sent')])).rejects.toThrow("Salesforce's upsert answer did not account for cadenza:event:1");
  });

  it("the org's daily allocation spent is transient with an estimated wait; calls work again once the rolling 24 h let some go", async () => {
    const crm = await setup({ emulator: { dailyApiLimit: 2000 } });
    addContact(ANA);
    emu.spendApi(2000 - emu.apiUsage().used);
    const e = await crm.writeActivities([activity(1, 'email_sent')]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CrmTransientError);
    expect((e as Error).message).toBe('Salesforce answered 403 REQUEST_LIMIT_EXCEEDED to GET /services/data/v60.0/query: TotalRequests Limit exceeded.');
    expect((e as CrmTransientError).retryAfterMs).toBe(allocationWaitMs(2000, crm.limits.requestsPerBatch));
    expect((e as CrmTransientError).retryAfterMs).toBe(Math.ceil((crm.limits.requestsPerBatch * DAY) / 2000));
    clock.advanceTo(T0 + DAY + 1);
    expect((await crm.writeActivities([activity(1, 'email_sent')]))[0]!.status).toBe('written');
  });

  it('an outage, a 5xx, a hang past the timeout and a closed connection are transient', async () => {
    const crm = await setup({ clock: systemClock, timeoutMs: 300 });
    addContact(ANA);
    emu.outage(Date.now() + 60_000);
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/Salesforce answered 503/);
    emu.outage(0);
    emu.faults.inject('query', { kind: 'respond', ...sfErrors.internal() });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/500 UNKNOWN_EXCEPTION/);
    emu.faults.inject('composite.upsert', { kind: 'hang', after: 'receiving' });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/no answer within 300 ms/);
    emu.faults.inject('*', { kind: 'drop', after: 'receiving' });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toBeInstanceOf(CrmTransientError);
    expect(await crm.writeActivities([activity(1, 'call')])).toEqual([{ externalId: 'cadenza:event:1', status: 'written', crmId: emu.records('Task')[0]!.Id }]);
  });

  it('the token must be the credentials JSON; limits are a share of the daily allocation', async () => {
    await setup();
    expect(() => makeConnector('salesforce', { baseUrl: emu.baseUrl, token: 'not json' })).toThrow('Salesforce: the connection token is not JSON');
    expect(() => makeConnector('salesforce', { baseUrl: emu.baseUrl, token: '{"refreshToken":"x"}' })).toThrow('lacks clientId, clientSecret');
    const crm = makeConnector('salesforce', { baseUrl: emu.baseUrl, token: token() });
    expect(crm.limits).toEqual({ maxBatch: 200, requests: 833, windowMs: 3_600_000, requestsPerBatch: 12 });
  });
});

describe('Salesforce connector: changes, lists, fields', () => {
  it('reads contacts and deals by SystemModstamp, page by page, oldest first, with owners, accounts and the deal contacts', async () => {
    const crm = await setup({ emulator: { queryBatchSize: 2 } });
    const owner = emu.addUser({ email: 'Rep@Acme.test', name: 'Rep' });
    const acct = emu.addAccount('Acme');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advanceTo(T0 + (i + 1) * MIN);
      ids.push(addContact(`p${i}@acme.test`, { AccountId: acct, OwnerId: owner, Title: 'CTO', HasOptedOutOfEmail: i === 4 }));
    }
    clock.advanceTo(T0 + 10 * MIN);
    const opp = emu.add('Opportunity', { Name: 'Deal', StageName: 'Prospecting', CloseDate: '2026-03-01', OwnerId: owner });
    emu.add('OpportunityContactRole', { OpportunityId: opp, ContactId: ids[1] });
    emu.add('OpportunityContactRole', { OpportunityId: opp, ContactId: ids[3] });

    const p1 = await crm.readChanges(null, 3);
    expect(p1.contacts.map((c) => c.crmId)).toEqual(ids.slice(0, 3));
    expect(p1.deals).toEqual([]);
    expect(p1.more).toBe(true);
    expect(p1.contacts[0]).toEqual({
      crmId: ids[0],
      email: 'p0@acme.test',
      firstName: null,
      lastName: 'p0',
      company: 'Acme',
      title: 'CTO',
      phone: null,
      ownerEmail: 'rep@acme.test',
      lifecycleStage: null,
      doNotContact: false,
      updatedAt: new Date(T0 + MIN).toISOString(),
      updatedBy: emu.records('User')[0]!.Id,
    });
    // The answers were paged by nextRecordsUrl (2 rows a page).
    expect(emu.requestCounts().queryMore).toBeGreaterThan(0);

    const p2 = await crm.readChanges(p1.cursor, 3);
    expect(p2.contacts.map((c) => c.crmId)).toEqual(ids.slice(3));
    expect(p2.contacts[1]!.doNotContact).toBe(true);
    expect(p2.deals).toEqual([
      { crmId: opp, name: 'Deal', stage: 'Prospecting', stageLabel: 'Prospecting', contactEmails: ['p1@acme.test', 'p3@acme.test'], ownerEmail: 'rep@acme.test', createdAt: new Date(T0 + 10 * MIN).toISOString(), updatedAt: new Date(T0 + 10 * MIN).toISOString(), updatedBy: emu.records('User')[0]!.Id },
    ]);
    expect(p2.more).toBe(false);
    const p3 = await crm.readChanges(p2.cursor, 3);
    expect([p3.contacts, p3.deals, p3.more]).toEqual([[], [], false]);
  });

  it('the overlap catches a change committed late with an earlier stamp; what was given is not given again; a record changed again is', async () => {
    const crm = await setup();
    clock.advanceTo(T0 + 10 * MIN);
    const a = addContact('a@acme.test');
    const first = await crm.readChanges(null, 100);
    expect(first.contacts.map((c) => c.crmId)).toEqual([a]);

    // A transaction stamped a minute before A's committed only after the read.
    const late = addContact('late@acme.test');
    emu.store.get('Contact', late)!.SystemModstamp = new Date(T0 + 9 * MIN).toISOString().replace('Z', '+0000');
    const second = await crm.readChanges(first.cursor, 100);
    expect(second.contacts.map((c) => c.crmId)).toEqual([late]);

    clock.advanceTo(T0 + 11 * MIN);
    emu.update('Contact', a, { Title: 'CEO' });
    const third = await crm.readChanges(second.cursor, 100);
    expect(third.contacts.map((c) => [c.crmId, c.title])).toEqual([[a, 'CEO']]);
    expect((await crm.readChanges(third.cursor, 100)).contacts).toEqual([]);
  });

  it('leads are people too: their status is the lifecycle stage; a converted lead is gone (its contact comes on its own)', async () => {
    const crm = await setup();
    const owner = emu.addUser({ email: 'rep@acme.test' });
    const lead = emu.add('Lead', { FirstName: 'Bo', LastName: 'Lee', Company: 'Bo Inc', Email: 'Bo@Lead.test', Status: 'Working - Contacted', OwnerId: owner });
    const first = await crm.readChanges(null, 10);
    expect(first.contacts).toEqual([
      {
        crmId: lead,
        email: 'bo@lead.test',
        firstName: 'Bo',
        lastName: 'Lee',
        company: 'Bo Inc',
        title: null,
        phone: null,
        ownerEmail: 'rep@acme.test',
        lifecycleStage: 'Working - Contacted',
        doNotContact: false,
        updatedAt: new Date(T0).toISOString(),
        updatedBy: emu.records('User')[0]!.Id,
      },
    ]);
    clock.advanceTo(T0 + MIN);
    emu.update('Lead', lead, { IsConverted: true, Status: 'Closed - Converted' });
    const contact = addContact('bo@lead.test');
    const second = await crm.readChanges(first.cursor, 10);
    expect(second.contacts.map((c) => [c.crmId, c.deleted ?? false])).toEqual([
      [contact, false],
      [lead, true],
    ]);
  });

  it('a contact or deal deleted in Salesforce comes as deleted (queryAll, while in the Recycle Bin)', async () => {
    const crm = await setup();
    const a = addContact('a@acme.test');
    const opp = emu.add('Opportunity', { Name: 'Deal', StageName: 'Prospecting', CloseDate: '2026-03-01' });
    const first = await crm.readChanges(null, 100);
    expect(first.contacts.map((c) => c.deleted)).toEqual([undefined]);
    clock.advanceTo(T0 + MIN);
    emu.remove('Contact', a);
    emu.remove('Opportunity', opp);
    const second = await crm.readChanges(first.cursor, 100);
    expect(second.contacts.map((c) => [c.crmId, c.deleted, c.updatedAt])).toEqual([[a, true, new Date(T0 + MIN).toISOString()]]);
    expect(second.deals.map((d) => [d.crmId, d.deleted])).toEqual([[opp, true]]);
    expect(emu.requestCounts().queryAll).toBeGreaterThan(0);
  });

  it('a bulk update stamping hundreds of records alike is read through page by page, each record once', async () => {
    const crm = await setup();
    const ids = Array.from({ length: 450 }, (_, i) => addContact(`bulk${i}@acme.test`));
    const got: string[] = [];
    let cursor: string | null = null;
    let calls = 0;
    for (let more = true; more; calls++) {
      const page = await crm.readChanges(cursor, 100);
      expect(page.contacts.length).toBeLessThanOrEqual(100);
      got.push(...page.contacts.map((c) => c.crmId));
      cursor = page.cursor;
      more = page.more;
    }
    expect(calls).toBe(5);
    expect(got).toEqual([...ids].sort());
  });

  it('a cursor last used more than 30 days ago, or not one of its own, is expired', async () => {
    const crm = await setup();
    const page = await crm.readChanges(null, 10);
    clock.advanceTo(T0 + 29 * DAY);
    const fresh = await crm.readChanges(page.cursor, 10);
    clock.advanceTo(T0 + 29 * DAY + 30 * DAY + 1);
    await expect(crm.readChanges(fresh.cursor, 10)).rejects.toBeInstanceOf(CrmCursorExpiredError);
    await expect(crm.readChanges('garbage', 10)).rejects.toBeInstanceOf(CrmCursorExpiredError);
  });

  it("knows its integration user, and its own field writes show as that user's changes", async () => {
    const crm = await setup();
    emu.addCustomField('Contact', { name: 'Cadenza_Sequence_Status__c', type: 'string', length: 40 });
    emu.addCustomField('Contact', { name: 'Cadenza_Last_Activity_At__c', type: 'datetime' });
    const ana = addContact(ANA);
    expect(await crm.integrationUserId()).toBe(emu.integrationUserId);
    const page = await crm.readChanges(null, 10);

    clock.advanceTo(T0 + MIN);
    await crm.writeContactFields([
      { crmId: ana, fields: { cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: at, title: 'VP' } },
      // Deleted in Salesforce since: nothing to write.
      { crmId: '003000000000000AAA', fields: { cadenzaSequenceStatus: 'active' } },
    ]);
    expect(emu.store.get('Contact', ana)).toMatchObject({ Cadenza_Sequence_Status__c: 'active', Cadenza_Last_Activity_At__c: at, Title: 'VP', LastModifiedById: emu.integrationUserId });
    const changes = await crm.readChanges(page.cursor, 10);
    expect(changes.contacts.map((c) => [c.crmId, c.updatedBy])).toEqual([[ana, emu.integrationUserId]]);

    await crm.writeContactFields([{ crmId: ana, fields: { cadenzaSequenceStatus: null } }]);
    expect(emu.store.get('Contact', ana)!.Cadenza_Sequence_Status__c).toBeNull();
    await expect(crm.writeContactFields([{ crmId: ana, fields: { Nope__c: 'x' } }])).rejects.toThrow(/No such column 'Nope__c' on sobject of type Contact/);
    await expect(crm.writeContactFields([{ crmId: ana, fields: { 'no such': 'x' } }])).rejects.toThrow(/no Contact field/);
  });

  it('lists are the Contact list views; members come page by page with their fields', async () => {
    const crm = await setup();
    const acct = emu.addAccount('Acme');
    for (let i = 0; i < 230; i++) addContact(`p${String(i).padStart(3, '0')}@acme.test`, { AccountId: i % 2 ? acct : null });
    const withAccount = emu.addListView({ label: 'Acme contacts', developerName: 'Acme_Contacts', filter: (c) => c.AccountId === acct });
    const all = emu.addListView({ label: 'All Contacts', developerName: 'AllContacts', filter: () => true });
    expect(await crm.lists()).toEqual([
      { id: withAccount, name: 'Acme contacts', size: null },
      { id: all, name: 'All Contacts', size: null },
    ]);
    const first = await crm.listMembers(all, null);
    expect(first.contacts).toHaveLength(200);
    expect(first.contacts[1]).toMatchObject({ email: 'p001@acme.test', company: 'Acme' });
    expect(first.next).toBe('200');
    const second = await crm.listMembers(all, first.next);
    expect(second.contacts.map((c) => c.email)).toEqual(Array.from({ length: 30 }, (_, i) => `p${200 + i}@acme.test`));
    expect(second.next).toBeNull();
    expect((await crm.listMembers(withAccount, null)).contacts).toHaveLength(115);
    await expect(crm.listMembers('not-a-view', null)).rejects.toThrow(/not a list view id/);
  });
});
