import { afterEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { startSalesforceEmulator, type SalesforceEmulator, type SalesforceEmulatorOptions } from '../../sim/emulators/salesforce/emulator.ts';
import { CrmCursorExpiredError, CrmTransientError, type CrmChangePage, type CrmContact, type CrmDeal } from '../connector.ts';
import { SalesforceConnector } from './connector.ts';

/**
 * Changes in by Change Data Capture: the real connector against the Salesforce emulator's CometD
 * endpoint over loopback, on a SimClock shared by both (event times, the 72 h the bus keeps them,
 * the 30 days the poll reaches back).
 */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
let emu: SalesforceEmulator;
let clock: SimClock;
let refreshToken: string;

async function setup(emulator: SalesforceEmulatorOptions = { changeDataCapture: true }) {
  await emu?.close();
  clock = new SimClock(T0);
  emu = await startSalesforceEmulator({ clock, ...emulator });
  refreshToken = emu.authorize();
  return connector();
}

/** A connector as a process (re)started would make it: nothing in memory but the token. */
const connector = () => new SalesforceConnector({ baseUrl: emu.baseUrl, token: JSON.stringify({ refreshToken, clientId: emu.client.id, clientSecret: emu.client.secret }), clock, timeoutMs: 5000 });

afterEach(async () => {
  await emu?.close();
});

/** readChanges until the CRM says nothing more waits, as the change reader does in a round. */
async function drain(crm: SalesforceConnector, cursor: string | null, limit = 100): Promise<{ contacts: CrmContact[]; deals: CrmDeal[]; cursor: string; calls: number }> {
  const out = { contacts: [] as CrmContact[], deals: [] as CrmDeal[], cursor: cursor ?? '', calls: 0 };
  for (let page: CrmChangePage | null = null; !page || page.more; ) {
    page = await crm.readChanges(cursor, limit);
    out.contacts.push(...page.contacts);
    out.deals.push(...page.deals);
    cursor = out.cursor = page.cursor;
    if (++out.calls > 50) throw new Error('readChanges never caught up');
  }
  return out;
}

const addContact = (email: string, extra: Record<string, unknown> = {}) => emu.add('Contact', { LastName: email.split('@')[0], Email: email, ...extra });
/** The SystemModstamp reads (the poll) since log position `from`. */
const polls = (from = 0) => emu.log.slice(from).filter((r) => new URL(r.url, emu.baseUrl).searchParams.get('q')?.includes('SystemModstamp >=')).length;
const count = (route: string) => emu.requestCounts()[route] ?? 0;

/** A full sync, then the clock past the overlap so that what follows is new to the bus's subscriber. */
async function synced(crm: SalesforceConnector): Promise<string> {
  clock.advance(10 * MIN);
  const full = await drain(crm, null);
  clock.advance(10 * MIN);
  return full.cursor;
}

describe('Salesforce connector: changes by Change Data Capture', () => {
  it('after the full sync, changes come from the event bus, each once; the cursor resumes by replay id across a restart', async () => {
    let crm = await setup();
    const ana = addContact('ana@acme.test');
    let cursor = await synced(crm);
    const before = emu.log.length;

    emu.update('Contact', ana, { Title: 'CEO' });
    const bo = addContact('bo@acme.test');
    const opp = emu.add('Opportunity', { Name: 'Pilot', StageName: 'Prospecting', CloseDate: '2026-03-01' });
    emu.add('OpportunityContactRole', { OpportunityId: opp, ContactId: ana });
    const first = await drain(crm, cursor);
    expect(first.contacts.map((c) => [c.crmId, c.title])).toEqual([
      [ana, 'CEO'],
      [bo, null],
    ]);
    expect(first.deals.map((d) => [d.crmId, d.contactEmails])).toEqual([[opp, ['ana@acme.test']]]);
    // Read from the bus (then the records by id), not by SystemModstamp.
    expect(polls(before)).toBe(0);
    expect(count('cometd.connect')).toBeGreaterThan(0);
    cursor = first.cursor;

    // A restarted process: nothing again, then only what changed since.
    crm = connector();
    expect(await drain(crm, cursor)).toMatchObject({ contacts: [], deals: [] });
    clock.advance(MIN);
    emu.update('Contact', bo, { Title: 'CTO' });
    // A contact taken off the deal: the deal is read again.
    const role = emu.records('OpportunityContactRole')[0]!.Id;
    emu.remove('OpportunityContactRole', role);
    crm = connector();
    const second = await drain(crm, cursor);
    expect(second.contacts.map((c) => [c.crmId, c.title])).toEqual([[bo, 'CTO']]);
    expect(second.deals.map((d) => [d.crmId, d.contactEmails])).toEqual([[opp, []]]);
    expect(polls(before)).toBe(0);
  });

  it('a lost connect answer reads the same events again from the stored replay id; events delivered twice give each record once', async () => {
    const crm = await setup();
    const cursor = await synced(crm);
    const a = addContact('a@acme.test');
    const b = addContact('b@acme.test');
    emu.faults.inject('cometd.connect', { kind: 'drop', after: 'processing' });
    await expect(crm.readChanges(cursor, 100)).rejects.toBeInstanceOf(CrmTransientError);
    emu.duplicateEvents(1);
    const got = await drain(crm, cursor);
    expect(got.contacts.map((c) => c.crmId)).toEqual([a, b]);
    expect(emu.faults.pending()).toBe(0);
  });

  it('a page holds about `limit` records; the rest follow by replay id', async () => {
    const crm = await setup({ changeDataCapture: true, eventsPerConnect: 3 });
    const cursor = await synced(crm);
    const ids = Array.from({ length: 7 }, (_, i) => addContact(`p${i}@acme.test`));
    const got = await drain(crm, cursor, 2);
    expect(got.contacts.map((c) => c.crmId)).toEqual(ids);
    expect(got.calls).toBe(5);
  });

  it('a replay id older than the 72 h the bus keeps falls back to the SystemModstamp query from the last caught-up read: nothing lost; past 30 days, expired', async () => {
    const crm = await setup();
    const ana = addContact('ana@acme.test');
    const bo = addContact('bo@acme.test');
    let cursor = (await drain(crm, await synced(crm))).cursor;
    clock.advance(HOUR);
    emu.update('Contact', ana, { Title: 'CEO' });
    // Ana's event leaves the bus; Bo's is kept.
    clock.advance(73 * HOUR);
    emu.update('Contact', bo, { Title: 'CTO' });
    expect(emu.changeEvents().map((e) => e.header.recordIds)).toEqual([[bo]]);
    clock.advance(10 * MIN);
    const before = emu.log.length;
    const got = await drain(crm, cursor);
    expect(got.contacts.map((c) => [c.crmId, c.title])).toEqual([
      [ana, 'CEO'],
      [bo, 'CTO'],
    ]);
    expect(polls(before)).toBeGreaterThan(0);
    // Back on the bus (from -2, what the poll gave skipped).
    cursor = got.cursor;
    clock.advance(MIN);
    emu.update('Contact', ana, { Title: 'Chair' });
    const after = emu.log.length;
    expect((await drain(crm, cursor)).contacts.map((c) => [c.crmId, c.title])).toEqual([[ana, 'Chair']]);
    expect(polls(after)).toBe(0);

    // Past 30 days the poll cannot fill the gap: the sync's full resync.
    const caughtUp = (await drain(crm, cursor)).cursor;
    clock.advance(DAY);
    emu.update('Contact', bo, { Title: 'Founder' });
    clock.advance(30 * DAY);
    await expect(crm.readChanges(caughtUp, 100)).rejects.toBeInstanceOf(CrmCursorExpiredError);
  });

  it('a GAP event is filled by reading its records; a GAP_OVERFLOW (no ids) by the SystemModstamp query from its time', async () => {
    const crm = await setup();
    const ana = addContact('ana@acme.test');
    const bo = addContact('bo@acme.test');
    let cursor = await synced(crm);
    emu.updateWithGap('Contact', [ana], { Title: 'CEO' });
    expect(emu.changeEvents().at(-1)!.header).toMatchObject({ changeType: 'GAP_UPDATE', recordIds: [ana] });
    const before = emu.log.length;
    const gap = await drain(crm, cursor);
    expect(gap.contacts.map((c) => [c.crmId, c.title])).toEqual([[ana, 'CEO']]);
    expect(polls(before)).toBe(0);

    clock.advance(MIN);
    emu.updateWithGap('Contact', [ana, bo], { Phone: '555' }, 'GAP_OVERFLOW');
    expect(emu.changeEvents().at(-1)!.header).toMatchObject({ changeType: 'GAP_OVERFLOW', recordIds: [] });
    const overflow = await drain(crm, gap.cursor);
    expect(new Set(overflow.contacts.filter((c) => c.phone === '555').map((c) => c.crmId))).toEqual(new Set([ana, bo]));
    expect(polls(before)).toBeGreaterThan(0);

    // Then back on the bus.
    cursor = overflow.cursor;
    clock.advance(10 * MIN);
    emu.update('Contact', bo, { Title: 'CTO' });
    const after = emu.log.length;
    expect((await drain(crm, cursor)).contacts.map((c) => [c.crmId, c.title])).toEqual([[bo, 'CTO']]);
    expect(polls(after)).toBe(0);
  });

  it('a deleted record comes as deleted (read through the Recycle Bin)', async () => {
    const crm = await setup();
    const ana = addContact('ana@acme.test');
    const opp = emu.add('Opportunity', { Name: 'Pilot', StageName: 'Prospecting', CloseDate: '2026-03-01' });
    const cursor = await synced(crm);
    emu.remove('Contact', ana);
    emu.remove('Opportunity', opp);
    const got = await drain(crm, cursor);
    expect(got.contacts.map((c) => [c.crmId, c.deleted])).toEqual([[ana, true]]);
    expect(got.deals.map((d) => [d.crmId, d.deleted])).toEqual([[opp, true]]);
  });

  it("the integration user's own changes are not read; a person's are", async () => {
    const crm = await setup();
    emu.addCustomField('Contact', { name: 'Cadenza_Sequence_Status__c', type: 'string', length: 40 });
    const ana = addContact('ana@acme.test');
    const bo = addContact('bo@acme.test');
    const cursor = await synced(crm);
    await crm.writeContactFields([{ crmId: ana, fields: { cadenzaSequenceStatus: 'active' } }]);
    emu.update('Contact', bo, { Title: 'CTO' });
    expect(emu.changeEvents().slice(-2).map((e) => [e.header.recordIds[0], e.header.commitUser])).toEqual([
      [ana, emu.integrationUserId],
      [bo, emu.records('User')[0]!.Id],
    ]);
    const got = await drain(crm, cursor);
    expect(got.contacts.map((c) => c.crmId)).toEqual([bo]);
  });

  it('an org without Change Data Capture is polled; CDC is asked for again only after an hour', async () => {
    const crm = await setup({});
    const ana = addContact('ana@acme.test');
    let cursor = await synced(crm);
    emu.update('Contact', ana, { Title: 'CEO' });
    const got = await drain(crm, cursor);
    expect(got.contacts.map((c) => [c.crmId, c.title])).toEqual([[ana, 'CEO']]);
    expect(count('cometd.subscribe')).toBe(1);
    cursor = got.cursor;
    clock.advance(10 * MIN);
    emu.update('Contact', ana, { Title: 'Chair' });
    expect((await drain(crm, cursor)).contacts.map((c) => c.title)).toEqual(['Chair']);
    expect(count('cometd.subscribe')).toBe(1);
    // An hour on: the next caught-up poll hands over to CDC, and the read after it asks again.
    clock.advance(HOUR);
    await drain(crm, (await drain(crm, cursor)).cursor);
    expect(count('cometd.subscribe')).toBe(2);
  });

  it('a connector told not to use CDC only polls', async () => {
    await setup();
    const crm = new SalesforceConnector({ baseUrl: emu.baseUrl, token: JSON.stringify({ refreshToken, clientId: emu.client.id, clientSecret: emu.client.secret }), clock, changeDataCapture: false });
    const ana = addContact('ana@acme.test');
    const cursor = await synced(crm);
    emu.update('Contact', ana, { Title: 'CEO' });
    expect((await drain(crm, cursor)).contacts.map((c) => c.title)).toEqual(['CEO']);
    expect(count('cometd.handshake')).toBe(0);
  });
});
