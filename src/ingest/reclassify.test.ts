import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { seedSentSequence } from '../../test/ingest/seed-sent-sequence.ts';
import { reclassify } from './reclassify.ts';

const T0 = Date.UTC(2026, 5, 1, 9, 0); // Monday

/**
 * A person's verdict gets what the pipeline would have done with it: the same decision (act.ts),
 * carried out by the same carryOut. The API's own tests (api/routes/inbox.test.ts) cover the
 * review queue and the opt-out; these cover the steps that hang on the enrollment's transition.
 */
describe.each(testBackends())('reclassify (%s)', (backend) => {
  let store: TestStore;
  const clock = new SimClock(T0);
  const random = seededRandom(`reclassify-${backend}`);
  let service: EnrollmentService;

  beforeAll(async () => {
    store = await freshStore(backend);
    service = new EnrollmentService({ store, clock, random });
  }, 60_000);
  afterAll(async () => {
    await store?.destroy();
  });

  const state = async (id: string) => store.db.selectFrom('enrollment').select(['state', 'state_reason']).where('id', '=', id).executeTakeFirstOrThrow();

  /** An inbound message the pipeline stored without acting (read as automatic mail). */
  async function stored(s: { workspaceId: string; mailboxId: string }, enrollmentId: string, from: string, messageId: string): Promise<string> {
    const id = newId(clock.now(), random);
    await store.db
      .insertInto('message')
      .values({ id, workspace_id: s.workspaceId, mailbox_id: s.mailboxId, enrollment_id: enrollmentId, direction: 'inbound', message_id: messageId, provider_key: `INBOX:1:${messageId}`, from_addr: from, folder: 'inbox', at: new Date(clock.now()), received_at: new Date(clock.now()), label: 'auto_generated', action: 'inbox' })
      .execute();
    return id;
  }

  // Before carryOut was shared, a relabel applied the decision's events and suppressions only:
  // a reply relabelled by a person never stopped the company, as the same reply read by the
  // pipeline does (sequence option stop_company_on_reply).
  it('relabelled as a human reply, it stops the enrollment and, where the sequence says so, the company', async () => {
    const s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['ann@corp.test', 'bob@corp.test', 'dee@other.test'], tag: 'rc', stopCompanyOnReply: true });
    const of = (email: string) => s.sends.find((x) => x.leadEmail === email)!.enrollmentId;
    const row = await stored(s, of('ann@corp.test'), 'ann@corp.test', '<held@corp.test>');
    const r = await reclassify({ store, service, clock }, { workspaceId: s.workspaceId, messageRowId: row, label: 'human_reply', by: 'member x' });
    expect(r).toEqual({ action: 'reply', enrollmentState: 'replied' });
    expect(await state(of('bob@corp.test'))).toEqual({ state: 'stopped', state_reason: 'corp.test replied (ann@corp.test)' });
    expect((await state(of('dee@other.test'))).state).toBe('active');
  });

  it('relabelled as a bounce, it suppresses the address (source: the relabel) and counts against no mailbox', async () => {
    const s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep2@cadenza.test', leads: ['gone@corp2.test'], tag: 'rb' });
    const send = s.sends[0]!;
    const row = await stored(s, send.enrollmentId, 'mailer-daemon@corp2.test', '<dsn@corp2.test>');
    const r = await reclassify({ store, service, clock }, { workspaceId: s.workspaceId, messageRowId: row, label: 'bounce', by: 'member x' });
    expect(r).toEqual({ action: 'hard_bounce', enrollmentState: 'bounced' });
    expect(await store.db.selectFrom('suppression').select(['reason', 'source']).where('workspace_id', '=', s.workspaceId).execute()).toEqual([{ reason: 'hard_bounce', source: 'relabelled by member x' }]);
    expect((await store.db.selectFrom('send_request').select('bounce_kind').where('id', '=', send.sendRequestId).executeTakeFirstOrThrow()).bounce_kind).toBeNull();
  });
});
