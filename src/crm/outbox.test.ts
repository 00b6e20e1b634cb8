import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { toCrmActivity } from './activity.ts';
import { claimDue, outboxCounts, retryAt, settle } from './sql/activities.ts';

/**
 * The CRM outbox (0054_crm.sql): the triggers queue one activity per fact and connection, in the
 * fact's own transaction, and only the kinds the connection takes; the claim, settle and retry
 * queries the writer (writer.ts) runs.
 */
describe.each(testBackends())('the CRM outbox (%s)', (backend) => {
  let store: TestStore;
  let seeded: Seeded;
  let service: EnrollmentService;
  let hubspot: string;
  let twenty: string;
  const random = seededRandom(`crm-outbox-${backend}`);

  beforeAll(async () => {
    store = await freshStore(backend);
    service = new EnrollmentService({ store, clock: systemClock, random });
    seeded = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: `rep-${backend}@acme.test`, leads: ['a', 'b', 'c'].map((x) => `${x}-${backend}@prospects.test`), tag: `crm${backend}` });
    hubspot = randomUUID();
    twenty = randomUUID();
    await store.db
      .insertInto('crm_connection')
      .values([
        { id: hubspot, workspace_id: seeded.workspaceId, kind: 'hubspot', base_url: 'http://127.0.0.1:1', credentials: Buffer.from('sealed') },
        // Twenty takes replies and calls only.
        { id: twenty, workspace_id: seeded.workspaceId, kind: 'twenty', base_url: 'http://127.0.0.1:2', credentials: Buffer.from('sealed'), activities: ['email_replied', 'call'] },
      ])
      .execute();
  }, 60_000);
  afterAll(async () => store?.destroy());

  const outbox = (connectionId: string) => store.db.selectFrom('crm_activity').selectAll().where('connection_id', '=', connectionId).orderBy('id').execute();

  it('queues each fact once per connection that takes its kind, with a stable external id; a scanner click and a fact before the connection are not queued', async () => {
    const [a, b, c] = seeded.sends;
    // The seeded sends happened before the connections: not activities of theirs.
    expect(await outbox(hubspot)).toEqual([]);
    await store.db.insertInto('event').values({ workspace_id: seeded.workspaceId, enrollment_id: a!.enrollmentId, type: 'step_sent', payload: JSON.stringify({ event: { type: 'step_sent', messageId: a!.messageId } }), at: new Date() }).execute();
    await service.apply(a!.enrollmentId, { type: 'reply', messageId: '<r1@prospects.test>' });
    await service.apply(b!.enrollmentId, { type: 'bounce', hard: true, reason: '550 5.1.1 no such user' });
    await store.db
      .insertInto('tracking_event')
      .values([
        { workspace_id: seeded.workspaceId, enrollment_id: c!.enrollmentId, send_request_id: c!.sendRequestId, kind: 'open', verdict: 'proxy', at: new Date() },
        { workspace_id: seeded.workspaceId, enrollment_id: c!.enrollmentId, send_request_id: c!.sendRequestId, kind: 'click', url: 'https://acme.test/x', verdict: 'human', at: new Date() },
        { workspace_id: seeded.workspaceId, enrollment_id: c!.enrollmentId, send_request_id: c!.sendRequestId, kind: 'click', url: 'https://acme.test/y', verdict: 'scanner', at: new Date() },
      ])
      .execute();
    const lead = await store.db.selectFrom('enrollment').select('lead_id').where('id', '=', c!.enrollmentId).executeTakeFirstOrThrow();
    const callId = randomUUID();
    await store.db.insertInto('phone_call').values({ id: callId, workspace_id: seeded.workspaceId, lead_id: lead.lead_id, direction: 'outbound', source: 'dialer', state: 'ended', duration_ms: 65_000 }).execute();
    await store.db.updateTable('phone_call').set({ notes: 'called' }).where('id', '=', callId).execute();
    await store.db.updateTable('phone_call').set({ outcome: 'connected', outcome_at: new Date() }).where('id', '=', callId).execute();
    // A second outcome change is not a second call.
    await store.db.updateTable('phone_call').set({ outcome: 'meeting_booked' }).where('id', '=', callId).execute();

    const hs = await outbox(hubspot);
    // One statement's rows (the tracking batch) are queued in no set order.
    expect(hs.map((r) => [r.kind, r.email]).sort()).toEqual([
      ['email_sent', a!.leadEmail],
      ['email_replied', a!.leadEmail],
      ['email_bounced', b!.leadEmail],
      ['email_opened', c!.leadEmail],
      ['email_clicked', c!.leadEmail],
      ['call', c!.leadEmail],
    ].sort());
    expect(hs.every((r) => r.state === 'pending' && r.attempts === 0)).toBe(true);
    expect(hs.find((r) => r.kind === 'call')!.external_id).toBe(`cadenza:call:${callId}`);
    expect(hs.filter((r) => r.kind !== 'call').every((r) => /^cadenza:(event|tracking):\d+$/.test(r.external_id))).toBe(true);
    expect((await outbox(twenty)).map((r) => r.kind)).toEqual(['email_replied', 'call']);
  });

  it('claims due activities once (a second claim gets none until the lease lapses), with the subject and sequence their words need; settles and retries them', async () => {
    const now = new Date(Date.now() + 1000);
    const claimed = await claimDue(store.db, hubspot, now, new Date(now.getTime() + 60_000), 100);
    expect(claimed.length).toBe(6);
    expect(claimed.every((r) => r.attempts === 1)).toBe(true);
    expect(await claimDue(store.db, hubspot, now, new Date(now.getTime() + 60_000), 100)).toEqual([]);
    const sent = claimed.find((r) => r.kind === 'email_sent')!;
    expect(sent.subject).toBe(seeded.sends[0]!.subject);
    expect(sent.sequence_name).toBeTruthy();
    expect(toCrmActivity(sent)).toMatchObject({ kind: 'email_sent', title: `Email sent: ${seeded.sends[0]!.subject} (${sent.sequence_name})` });
    expect(toCrmActivity(claimed.find((r) => r.kind === 'email_opened')!)).toMatchObject({ automatic: true, title: expect.stringMatching(/automatically/) });
    expect(toCrmActivity(claimed.find((r) => r.kind === 'call')!)).toMatchObject({ call: { direction: 'outbound', outcome: 'connected', durationSeconds: 65 } });

    const ids = new Map(claimed.map((r) => [r.external_id, r.id]));
    const [w, s, rj, ...rest] = claimed;
    await settle(store.db, ids, [
      { externalId: w!.external_id, status: 'written', crmId: 'crm-1' },
      { externalId: s!.external_id, status: 'no_contact' },
      { externalId: rj!.external_id, status: 'rejected', error: 'Property values were not valid' },
    ], now);
    await retryAt(store.db, rest.map((r) => r.id), new Date(now.getTime() + 5_000), 'HTTP 503');
    expect(await outboxCounts(store.db, hubspot)).toEqual({ pending: 3, written: 1, skipped: 1, rejected: 1 });
    // A settled activity is never claimed again; the retried ones are, once due.
    expect(await claimDue(store.db, hubspot, new Date(now.getTime() + 4_000), new Date(now.getTime() + 70_000), 100)).toEqual([]);
    const again = await claimDue(store.db, hubspot, new Date(now.getTime() + 5_000), new Date(now.getTime() + 70_000), 100);
    expect(again.map((r) => [r.id, r.attempts])).toEqual(rest.map((r) => [r.id, 2]));
    const row = (await outbox(hubspot)).find((r) => r.id === rj!.id)!;
    expect(row).toMatchObject({ state: 'rejected', last_error: 'Property values were not valid' });
  });

  it("an erased lead's activities go with the lead", async () => {
    const lead = await store.db.selectFrom('enrollment').select('lead_id').where('id', '=', seeded.sends[1]!.enrollmentId).executeTakeFirstOrThrow();
    expect((await outbox(hubspot)).some((r) => r.lead_id === lead.lead_id)).toBe(true);
    await store.db.deleteFrom('lead').where('id', '=', lead.lead_id).execute();
    expect((await outbox(hubspot)).some((r) => r.lead_id === lead.lead_id)).toBe(false);
  });
});
