import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { StopEngine } from '../sequence/suppress.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../sim/emulators/hubspot/emulator.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { ChangeReader, type ReadResult } from './change-reader.ts';
import { HubSpotConnector } from './hubspot/connector.ts';
import { createListEnrollment } from './list-enroll.ts';

/**
 * Changes in, end to end: the HubSpot connector against its emulator over loopback, the change
 * reader storing into a real store with the real enrollment engine. Each test has its own
 * workspace (six prospects enrolled, their first step sent), connection and emulator.
 */
const PEOPLE = ['ana', 'bo', 'cy', 'dee', 'eve', 'fay'] as const;

describe.each(testBackends())('CRM changes in (%s)', (backend) => {
  let store: TestStore;
  let service: EnrollmentService;
  let emu: HubSpotEmulator;
  let seeded: Seeded;
  let connectionId: string;
  let n = 0;
  const random = seededRandom(`crm-changes-${backend}`);
  const email = (p: (typeof PEOPLE)[number]) => `${p}-${n}-${backend}@prospects.test`;

  beforeAll(async () => {
    store = await freshStore(backend);
    service = new EnrollmentService({ store, clock: systemClock, random });
  }, 60_000);
  afterAll(async () => store?.destroy());

  beforeEach(async () => {
    n++;
    emu = await startHubSpotEmulator({ searchesPerSecond: 1000, requestsPerWindow: 100_000 });
    seeded = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: `rep-${n}-${backend}@acme.test`, leads: PEOPLE.map(email), tag: `crmin${n}${backend}` });
    connectionId = randomUUID();
    // Connected a minute ago: deals created from now on are news.
    await store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: seeded.workspaceId, kind: 'hubspot', base_url: emu.baseUrl, credentials: Buffer.from('sealed'), created_at: new Date(Date.now() - 60_000), prepared_at: new Date() })
      .execute();
  }, 60_000);
  afterEach(async () => emu?.close());

  const token = () => emu.tokens.issue('portal');
  async function reader(o: { engine?: StopEngine; listEveryMs?: number } = {}) {
    const t = token();
    const connector = new HubSpotConnector({ baseUrl: emu.baseUrl, token: () => t, timeoutMs: 5000, searchesPerSecond: 1000 });
    // What the writer does on a connection's first round (prepared_at): Cadenza's contact properties exist.
    await connector.prepare();
    const engine = o.engine ? Object.assign(o.engine, { notify: service.notify.bind(service) }) : service;
    return {
      connector,
      reader: new ChangeReader({ store, clock: systemClock, random, owner: `test-${n}`, engine, connectorFor: async () => connector, pageLimit: 20, ...(o.listEveryMs !== undefined ? { listEveryMs: o.listEveryMs } : {}) }),
    };
  }
  const read = async (r: ChangeReader): Promise<ReadResult> => {
    const res = await r.read(connectionId);
    if (res.failed) throw new Error(`the round failed: ${(await connection()).read_error}`);
    return res;
  };
  const enrollmentOf = (p: (typeof PEOPLE)[number]) => seeded.sends.find((s) => s.leadEmail === email(p))!.enrollmentId;
  const stateOf = async (p: (typeof PEOPLE)[number]) => (await store.db.selectFrom('enrollment').select(['state', 'state_reason']).where('id', '=', enrollmentOf(p)).executeTakeFirstOrThrow());
  const stops = async (p: (typeof PEOPLE)[number]) => (await store.db.selectFrom('event').select('type').where('enrollment_id', '=', enrollmentOf(p)).execute()).filter((e) => e.type.startsWith('stop')).length;
  const connection = () => store.db.selectFrom('crm_connection').selectAll().where('id', '=', connectionId).executeTakeFirstOrThrow();
  /** A change in HubSpot lands a few ms later than the last one read, as a person's would. */
  const later = () => new Promise((r) => setTimeout(r, 5));

  it("changes flow in: the mirror, the CRM-owned lead fields, the cursor and the sync position; Cadenza's own fields never taken", async () => {
    const { reader: r } = await reader();
    const owner = emu.addOwner({ email: 'rita@acme.test' });
    const ana = emu.addContact({ email: email('ana'), firstname: 'Ana', lastname: 'Lee', jobtitle: 'CTO', hubspot_owner_id: owner.id, cadenza_sequence_status: 'whatever' } as never);
    const first = await read(r);
    expect(first.changes).toBe(1);
    const lead = await store.db.selectFrom('lead').select(['id', 'first_name', 'last_name', 'title']).where('email_norm', '=', email('ana')).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ first_name: 'Ana', last_name: 'Lee', title: 'CTO' });
    const mirror = await store.db.selectFrom('crm_contact').selectAll().where('connection_id', '=', connectionId).execute();
    expect(mirror).toEqual([expect.objectContaining({ crm_id: ana, lead_id: lead.id, email: email('ana'), fields: expect.objectContaining({ ownerEmail: 'rita@acme.test', firstName: 'Ana' }) })]);
    const c = await connection();
    expect(c.change_cursor).toBeTruthy();
    expect(c.last_change_at).not.toBeNull();
    expect(c.integration_user_id).toBe(emu.userIdOf('portal'));
    // Read again: the overlap brings the same version back; nothing is stored twice.
    const again = await read(r);
    expect(again.changes).toBe(0);
  });

  it('a crash between a read and its store reads the page again: nothing lost, nothing twice', async () => {
    const owner = emu.addOwner({ email: 'rita@acme.test' });
    const other = emu.addOwner({ email: 'sam@acme.test' });
    const ana = emu.addContact({ email: email('ana'), hubspot_owner_id: owner.id } as never);
    await read((await reader()).reader);
    const cursorBefore = (await connection()).change_cursor;
    await later();
    emu.updateContact(ana, { hubspot_owner_id: other.id }, { by: String(other.userId) });
    // The store fails mid-page (the engine's stop throws): the transaction rolls back whole.
    let failures = 0;
    const failing: StopEngine = {
      stopEachInTx: async (...args) => {
        if (failures++ === 0) throw new Error('the process died here');
        return service.stopEachInTx(...args);
      },
    };
    const crashed = await (await reader({ engine: failing })).reader.read(connectionId);
    expect(crashed.failed).toBe(true);
    expect((await connection()).change_cursor).toBe(cursorBefore);
    expect((await store.db.selectFrom('crm_contact').select('fields').where('connection_id', '=', connectionId).where('crm_id', '=', ana).executeTakeFirstOrThrow()).fields.ownerEmail).toBe('rita@acme.test');
    expect(await stops('ana')).toBe(0);
    // A new process (a new reader) reads the same change again and stores it once.
    const { reader: r } = await reader();
    expect((await read(r)).stopped).toBe(1);
    // The next round reads Cadenza's own write of the stop (its sequence status) and stops nothing.
    expect(await read(r)).toMatchObject({ stopped: 0, fieldsWritten: 0 });
    expect(await read(r)).toMatchObject({ changes: 0, stopped: 0 });
    expect(await stateOf('ana')).toMatchObject({ state: 'stopped' });
    expect(await stops('ana')).toBe(1);
    expect((await store.db.selectFrom('crm_contact').select('fields').where('connection_id', '=', connectionId).where('crm_id', '=', ana).executeTakeFirstOrThrow()).fields.ownerEmail).toBe('sam@acme.test');
  });

  it("Cadenza's field goes out after a state change, comes back as its own change and is not written again (no loop); a person's edit of it is a conflict, logged once, not flipped", async () => {
    const { reader: r } = await reader();
    const ana = emu.addContact({ email: email('ana') });
    await read(r);
    await service.apply(enrollmentOf('ana'), { type: 'pause', reason: 'vacation' });
    const out = await read(r);
    expect(out.fieldsWritten).toBe(1);
    expect(emu.store.get('contacts', ana)!.properties).toMatchObject({ cadenza_sequence_status: 'paused', hs_updated_by_user_id: emu.userIdOf('portal') });
    const updates = () => emu.requestCounts()['contacts.batchUpdate'] ?? 0;
    expect(updates()).toBe(1);
    for (let i = 0; i < 3; i++) expect((await read(r)).fieldsWritten).toBe(0);
    expect(updates()).toBe(1);
    expect(await store.db.selectFrom('crm_conflict').selectAll().where('connection_id', '=', connectionId).execute()).toEqual([]);

    await later();
    const person = emu.addOwner({ email: 'sam@acme.test' });
    emu.updateContact(ana, { cadenza_sequence_status: 'hot lead' }, { by: String(person.userId) });
    expect((await read(r)).conflicts).toBe(1);
    await read(r);
    const conflicts = await store.db.selectFrom('crm_conflict').selectAll().where('connection_id', '=', connectionId).execute();
    expect(conflicts).toEqual([expect.objectContaining({ crm_id: ana, field: 'cadenzaSequenceStatus', crm_value: 'hot lead', cadenza_value: 'paused', crm_updated_by: String(person.userId) })]);
    expect(updates()).toBe(1);
    expect(await stateOf('ana')).toMatchObject({ state: 'paused' });
  });

  it('each stop rule stops the enrollment: do not contact (and suppresses), a new deal, a deal moved to a configured stage, an owner change, a lifecycle stage', async () => {
    const { reader: r } = await reader();
    const rita = emu.addOwner({ email: 'rita@acme.test' });
    const sam = emu.addOwner({ email: 'sam@acme.test' });
    const ids = Object.fromEntries(PEOPLE.map((p) => [p, emu.addContact({ email: email(p), hubspot_owner_id: rita.id, lifecyclestage: 'lead' } as never)])) as Record<(typeof PEOPLE)[number], string>;
    const old = emu.addDeal({ dealname: 'Old deal', dealstage: 'appointmentscheduled' }, [ids.dee]);
    // Connected after the old deal was made: it is history, not news.
    await later();
    await sql`update crm_connection set created_at = ${new Date()} where id = ${connectionId}`.execute(store.db);
    await read(r);
    expect(await stateOf('dee')).toMatchObject({ state: 'active' });
    await store.db.updateTable('crm_connection').set({ stop_rules: JSON.stringify({ dealStages: ['closedwon'] }) }).where('id', '=', connectionId).execute();
    // The deal the connection saw at first is history; created since, it would be news.
    await later();
    emu.updateContact(ids.bo, { hs_email_optout: 'true' });
    emu.addDeal({ dealname: 'Pilot', dealstage: 'appointmentscheduled' }, [ids.cy]);
    emu.updateDeal(old, { dealstage: 'closedwon' });
    emu.updateContact(ids.eve, { hubspot_owner_id: sam.id });
    emu.updateContact(ids.fay, { lifecyclestage: 'customer' });
    const res = await read(r);
    expect(res.stopped).toBe(5);
    for (const p of ['bo', 'cy', 'dee', 'eve', 'fay'] as const) expect((await stateOf(p)).state).toBe('stopped');
    expect(await stateOf('ana')).toMatchObject({ state: 'active' });
    expect(await store.db.selectFrom('suppression').select(['email_norm', 'reason']).where('workspace_id', '=', seeded.workspaceId).execute()).toEqual([{ email_norm: email('bo'), reason: 'manual' }]);
    const reasons = await store.db.selectFrom('event').select(['enrollment_id', 'payload']).where('workspace_id', '=', seeded.workspaceId).where('type', 'like', 'stop%').execute();
    const text = JSON.stringify(reasons.map((e) => e.payload));
    for (const why of ['address suppressed', 'CRM: deal created (Pilot)', 'CRM: deal Old deal moved to closedwon', 'CRM: owner changed to sam@acme.test', 'CRM: lifecycle stage customer']) expect(text).toContain(why);
    // With the rules off, the same kind of change stops nothing.
    await store.db.updateTable('crm_connection').set({ stop_rules: JSON.stringify({ ownerChanged: 'ignore' }) }).where('id', '=', connectionId).execute();
    await later();
    emu.updateContact(ids.ana, { hubspot_owner_id: sam.id });
    expect((await read(r)).stopped).toBe(0);
    expect(await stateOf('ana')).toMatchObject({ state: 'active' });
  });

  it('a list enrolled once and one enrolled continuously: members without a lead become leads, nobody is enrolled twice', async () => {
    const { reader: r } = await reader({ listEveryMs: 0 });
    const ana = emu.addContact({ email: email('ana') });
    const news = [1, 2, 3].map((i) => emu.addContact({ email: `new${i}-${n}-${backend}@prospects.test`, firstname: `New${i}`, company: 'Newco' } as never));
    const once = emu.addList('Once');
    const cont = emu.addList('Continuous');
    emu.addToList(once, [ana, news[0]!]);
    emu.addToList(cont, [news[0]!, news[1]!]);
    const d = { db: store.db, random, now: Date.now() };
    await createListEnrollment(d, { workspaceId: seeded.workspaceId, connectionId, listId: once, listName: 'Once', sequenceId: seeded.sequenceId, mode: 'once', createdBy: null });
    await createListEnrollment(d, { workspaceId: seeded.workspaceId, connectionId, listId: cont, listName: 'Continuous', sequenceId: seeded.sequenceId, mode: 'continuous', createdBy: null });
    await expect(createListEnrollment(d, { workspaceId: seeded.workspaceId, connectionId, listId: cont, listName: 'Continuous', sequenceId: seeded.sequenceId, mode: 'once', createdBy: null })).rejects.toMatchObject({ code: 'CONFLICT' });

    expect((await read(r)).enrolled).toBe(2);
    const lead1 = await store.db.selectFrom('lead').select(['id', 'first_name', 'company']).where('email_norm', '=', `new1-${n}-${backend}@prospects.test`).executeTakeFirstOrThrow();
    expect(lead1).toMatchObject({ first_name: 'New1', company: 'Newco' });
    // New members: the once-list's is left alone (it is done), the continuous one's is enrolled.
    emu.addToList(once, [news[2]!]);
    emu.addToList(cont, [news[2]!, ana]);
    expect((await read(r)).enrolled).toBe(1);
    expect((await read(r)).enrolled).toBe(0);
    const perLead = await store.db
      .selectFrom('enrollment')
      .innerJoin('lead', 'lead.id', 'enrollment.lead_id')
      .select(['lead.email_norm', (eb) => eb.fn.countAll<string>().as('n')])
      .where('enrollment.sequence_id', '=', seeded.sequenceId)
      .groupBy('lead.email_norm')
      .execute();
    expect(perLead.every((x) => Number(x.n) === 1)).toBe(true);
    expect(perLead.map((x) => x.email_norm).filter((e) => e.startsWith('new')).sort()).toEqual([1, 2, 3].map((i) => `new${i}-${n}-${backend}@prospects.test`));
    const views = await store.db.selectFrom('crm_list_enrollment').select(['list_name', 'state', 'enrolled', 'refused']).where('connection_id', '=', connectionId).orderBy('list_name').execute();
    expect(views, JSON.stringify(views)).toEqual([
      // new1 was enrolled by the once-list first and ana was enrolled before: both refused here, neither enrolled twice.
      { list_name: 'Continuous', state: 'active', enrolled: 2, refused: 2 },
      { list_name: 'Once', state: 'done', enrolled: 1, refused: 1 },
    ]);
  });

  it('an expired cursor: a full resync from the start, deduplicated against the mirror (no stop, no conflict twice)', async () => {
    const { reader: r } = await reader();
    const rita = emu.addOwner({ email: 'rita@acme.test' });
    for (const p of PEOPLE) emu.addContact({ email: email(p), hubspot_owner_id: rita.id } as never);
    await read(r);
    const before = await store.db.selectFrom('crm_contact').select(['crm_id', 'updated_at', 'read_at']).where('connection_id', '=', connectionId).orderBy('crm_id').execute();
    await store.db.updateTable('crm_connection').set({ change_cursor: 'a cursor from another version' }).where('id', '=', connectionId).execute();
    const res = await read(r);
    expect(res).toMatchObject({ resynced: true, changes: 0, stopped: 0 });
    expect(res.pages).toBeGreaterThan(0);
    expect(await store.db.selectFrom('crm_contact').select(['crm_id', 'updated_at', 'read_at']).where('connection_id', '=', connectionId).orderBy('crm_id').execute()).toEqual(before);
    expect(JSON.parse((await connection()).change_cursor!)).toMatchObject({ v: 1 });
    for (const p of PEOPLE) expect((await stateOf(p)).state).toBe('active');
  });
});
