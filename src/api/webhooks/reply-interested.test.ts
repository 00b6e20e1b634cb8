import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { replyMail, seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';
import { testBackends, useFreshStore } from '../../../test/stores.ts';
import { parseMail } from '../../ingest/parse/parse-mail.ts';
import { ingestBatch, type IngestSteps } from '../../ingest/pipeline.ts';
import { reclassify } from '../../ingest/reclassify.ts';
import type { Classification, ReplyIntent } from '../../ingest/types.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { trackingKey } from '../../sending/compose/tracking.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { createEndpoint } from './endpoints.ts';

/**
 * The `reply.interested` webhook (migration 0081): one delivery per positive reply, written with
 * the message by the real ingestion pipeline, never again for the same reply (a replayed batch,
 * a person relabelling it back and forth), and none for other intents.
 */
const T0 = Date.UTC(2026, 5, 1, 9, 0); // Monday
const enc = (s: string) => new TextEncoder().encode(s);

describe.each(testBackends())('reply.interested webhook (%s)', (backend) => {
  const storeOf = useFreshStore(backend);
  const clock = new SimClock(T0);
  const random = seededRandom(`interested-${backend}`);
  const intents = new Map<string, ReplyIntent>();
  const steps: IngestSteps = {
    parse: async (raw) => ({ ok: true, mail: await parseMail(raw) }),
    newText: (m) => m.text,
    // The classifier's verdict, given per message (the ladder has its own corpus tests).
    classify: (m): Classification => {
      const intent = intents.get(m.messageId ?? '');
      return { label: 'human_reply', confidence: 0.9, reason: 'test', rung: 'default', ...(intent ? { intent: { intent, confidence: 0.9, reason: 'test' } } : {}) };
    },
  };

  it('fires once per interested reply, with its intent, lead, sequence, enrollment and message ids; relabels and replays never fire it again', async () => {
    const store = storeOf();
    const service = new EnrollmentService({ store, clock, random });
    const s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['ann@acme.test', 'bob@acme2.test'], tag: 'ri' });
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const deps = { db: store.db, clock, random, sealer: vault };
    const ep = await createEndpoint(deps, { allowPrivate: true }, { workspaceId: s.workspaceId, url: 'https://hooks.example.test/a', events: ['reply.interested'] });
    const other = await createEndpoint(deps, { allowPrivate: true }, { workspaceId: s.workspaceId, url: 'https://hooks.example.test/b', events: ['reply'] });
    const [ann, bob] = s.sends;
    clock.advance(60_000);
    const reply = (to: typeof ann, messageId: string, intent: ReplyIntent, body: string) => {
      intents.set(messageId, intent);
      return { key: `INBOX:1:${messageId}`, folder: 'inbox' as const, raw: enc(replyMail({ from: to!.leadEmail, to: 'rep@cadenza.test', inReplyTo: to!.messageId, subject: `Re: ${to!.subject}`, body, messageId })), threadId: null, receivedAt: clock.now() };
    };
    const ingest = { store, service, clock, random, steps, trackingKey: trackingKey(randomBytes(32)) };
    const mb = { id: s.mailboxId, workspaceId: s.workspaceId };
    const batch = { messages: [reply(ann, '<yes@acme.test>', 'interested', 'Yes, keen: call me Tuesday.'), reply(bob, '<no@acme2.test>', 'not_interested', 'No thanks.')], problems: [], cursor: { n: 1 }, mode: 'incremental' as const };
    await ingestBatch(ingest, mb, batch);
    const deliveries = () => store.db.selectFrom('webhook_delivery').select(['endpoint_id', 'event_id', 'event_type', 'payload']).where('event_type', '=', 'reply.interested').execute();
    const row = await store.db.selectFrom('message').select(['id']).where('message_id', '=', '<yes@acme.test>').executeTakeFirstOrThrow();
    expect(await deliveries()).toEqual([
      {
        endpoint_id: ep.id,
        event_id: `message:${row.id}`,
        event_type: 'reply.interested',
        payload: expect.objectContaining({ intent: 'interested', enrollmentId: ann!.enrollmentId, leadId: expect.any(String), email: 'ann@acme.test', sequenceId: s.sequenceId, inboxMessageId: row.id, messageId: '<yes@acme.test>', inReplyTo: ann!.messageId, mailboxId: s.mailboxId }),
      },
    ]);
    // The replies-only endpoint had both replies as `reply`, not this event.
    expect((await store.db.selectFrom('webhook_delivery').select('event_type').where('endpoint_id', '=', other.id).execute()).map((d) => d.event_type)).toEqual(['reply', 'reply']);

    // The same batch read again (a resync), and a person relabelling the reply back and forth.
    await ingestBatch(ingest, mb, { ...batch, cursor: { n: 2 } });
    for (const label of ['auto_reply', 'human_reply', 'auto_generated', 'human_reply'] as const) {
      clock.advance(60_000);
      await reclassify({ store, service, clock }, { workspaceId: s.workspaceId, messageRowId: row.id, label, by: 'member x' });
    }
    expect(await deliveries()).toHaveLength(1);

    // Another interested reply of the same lead is another fact.
    clock.advance(60_000);
    await ingestBatch(ingest, mb, { messages: [reply(ann, '<yes-again@acme.test>', 'interested', 'Any news?')], problems: [], cursor: { n: 3 }, mode: 'incremental' });
    expect((await deliveries()).map((d) => (d.payload as { messageId: string }).messageId).sort()).toEqual(['<yes-again@acme.test>', '<yes@acme.test>']);
  });
});
