import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { seedSentSequence, type Seeded } from '../../../test/ingest/seed-sent-sequence.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { startSalesforceEmulator, type SalesforceEmulator } from '../../sim/emulators/salesforce/emulator.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { ChangeReader, type ReadResult } from '../change-reader.ts';
import { SalesforceConnector } from './connector.ts';

/**
 * Salesforce changes in by Change Data Capture, end to end: the connector against the emulator
 * (CDC on) over loopback, the change reader storing into a real store with the real enrollment
 * engine; the cursor the reader stores is what the next round (or process) resumes from.
 */
const PEOPLE = ['ana', 'bo'] as const;

describe.each(testBackends())('Salesforce changes in by CDC (%s)', (backend) => {
  let store: TestStore;
  let service: EnrollmentService;
  let emu: SalesforceEmulator;
  let seeded: Seeded;
  let connectionId: string;
  let n = 0;
  const random = seededRandom(`sf-cdc-${backend}`);
  const email = (p: (typeof PEOPLE)[number]) => `${p}-${n}-${backend}@prospects.test`;

  beforeAll(async () => {
    store = await freshStore(backend);
    service = new EnrollmentService({ store, clock: systemClock, random });
  }, 60_000);
  afterAll(async () => store?.destroy());

  beforeEach(async () => {
    n++;
    emu = await startSalesforceEmulator({ changeDataCapture: true });
    // Where Cadenza's own fields go (docs/providers/salesforce.md, "Connecting an org", step 5).
    emu.addCustomField('Contact', { name: 'Cadenza_Sequence_Status__c', type: 'string', length: 40 });
    emu.addCustomField('Contact', { name: 'Cadenza_Last_Activity_At__c', type: 'datetime' });
    seeded = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: `rep-${n}-${backend}@acme.test`, leads: PEOPLE.map(email), tag: `sfcdc${n}${backend}` });
    connectionId = randomUUID();
    // Connected a minute ago: deals created from now on are news.
    await store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: seeded.workspaceId, kind: 'salesforce', base_url: emu.baseUrl, credentials: Buffer.from('sealed'), created_at: new Date(Date.now() - 60_000), prepared_at: new Date() })
      .execute();
  }, 60_000);
  afterEach(async () => emu?.close());

  function reader() {
    const token = JSON.stringify({ refreshToken: emu.authorize(), clientId: emu.client.id, clientSecret: emu.client.secret });
    const connector = new SalesforceConnector({ baseUrl: emu.baseUrl, token, timeoutMs: 5000 });
    return { connector, reader: new ChangeReader({ store, clock: systemClock, random, owner: `test-${n}`, engine: service, connectorFor: async () => connector, pageLimit: 20 }) };
  }
  const read = async (r: ChangeReader): Promise<ReadResult> => {
    const res = await r.read(connectionId);
    if (res.failed) throw new Error(`the round failed: ${(await connection()).read_error}`);
    return res;
  };
  const connection = () => store.db.selectFrom('crm_connection').selectAll().where('id', '=', connectionId).executeTakeFirstOrThrow();
  const enrollmentOf = (p: (typeof PEOPLE)[number]) => seeded.sends.find((s) => s.leadEmail === email(p))!.enrollmentId;
  const stateOf = async (p: (typeof PEOPLE)[number]) => (await store.db.selectFrom('enrollment').select('state').where('id', '=', enrollmentOf(p)).executeTakeFirstOrThrow()).state;
  const polls = (from: number) => emu.log.slice(from).filter((r) => new URL(r.url, emu.baseUrl).searchParams.get('q')?.includes('SystemModstamp >=')).length;

  it("a deal made in Salesforce stops its contact's enrollment through the event bus; a new process resumes from the stored replay id; Cadenza's own writes change nothing", async () => {
    const ana = emu.add('Contact', { LastName: 'Lee', FirstName: 'Ana', Email: email('ana') });
    emu.add('Contact', { LastName: 'Bo', Email: email('bo') });
    const { reader: first } = reader();
    // The full sync (the poll), after which reading goes on from the bus.
    expect((await read(first)).changes).toBe(2);
    await read(first);
    expect(emu.requestCounts()['cometd.connect']).toBeGreaterThan(0);

    const before = emu.log.length;
    const opp = emu.add('Opportunity', { Name: 'Pilot', StageName: 'Prospecting', CloseDate: '2026-03-01' });
    emu.add('OpportunityContactRole', { OpportunityId: opp, ContactId: ana });
    // A new process: nothing in memory, the stored cursor only.
    const { reader: second, connector } = reader();
    const round = await read(second);
    expect(round.stopped).toBe(1);
    expect(await stateOf('ana')).toBe('stopped');
    expect(await stateOf('bo')).not.toBe('stopped');
    expect(polls(before)).toBe(0);
    expect((await connection()).integration_user_id).toBe(emu.integrationUserId);

    // Cadenza's own write to Salesforce comes back on the bus as its user's change: not read.
    await connector.writeContactFields([{ crmId: ana, fields: { title: 'VP' } }]);
    const own = await read(second);
    expect(own).toMatchObject({ changes: 0, stopped: 0 });
    expect(await store.db.selectFrom('crm_deal').select('crm_id').where('connection_id', '=', connectionId).execute()).toEqual([{ crm_id: opp }]);
  });
});
