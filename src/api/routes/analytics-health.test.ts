import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerFixture, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('analytics per variant and per mailbox (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
    // The intro email was sent and bounced softly once, then the prospect replied to it.
    const db = h.store.db;
    const intro = await db.selectFrom('step').select('id').where('sequence_id', '=', g.sequenceId!).where('key', '=', 'intro').executeTakeFirstOrThrow();
    const variant = await db.selectFrom('variant').select(['id', 'key']).where('step_id', '=', intro.id).executeTakeFirstOrThrow();
    await db
      .insertInto('send_request')
      .values({ id: '01a228f2-1111-7000-8000-000000000001', workspace_id: ws, enrollment_id: g.enrollmentId!, step_id: intro.id, mailbox_id: g.mailboxId!, variant_id: variant.id, state: 'sent', due_at: new Date(), bounced_at: new Date(), bounce_kind: 'soft' })
      .execute();
    await db.updateTable('enrollment').set({ state: 'replied', last_step_id: intro.id }).where('id', '=', g.enrollmentId!).execute();
    // The engine journals the send and the reply: per-mailbox and per-variant sends and replies are
    // counted from the journal, as every analytics figure is (ops/figures.ts).
    const sentAt = Date.now();
    await db
      .insertInto('event')
      .values([
        { workspace_id: ws, enrollment_id: g.enrollmentId!, type: 'step_sent', at: new Date(sentAt), payload: JSON.stringify({ event: { type: 'step_sent', stepId: intro.id } }) },
        { workspace_id: ws, enrollment_id: g.enrollmentId!, type: 'reply', at: new Date(sentAt + 1000), payload: JSON.stringify({ event: { type: 'reply' } }) },
      ])
      .execute();
  }, 60_000);
  afterAll(async () => h?.close());

  it('credits the reply to the variant last sent', async () => {
    const r = await owner.call('GET', `/api/workspaces/${ws}/analytics/variants?sequenceId=${g.sequenceId}`);
    expect(r.statusCode).toBe(200);
    expect(r.json().variants).toMatchObject([{ stepKey: 'intro', sent: 1, replied: 1, replyRate: 1 }]);
    expect((await owner.call('GET', `/api/workspaces/${ws}/analytics/variants?sequenceId=nope`)).statusCode).toBe(400);
  });

  it('reports each mailbox with sends, bounces, replies and health', async () => {
    const r = await owner.call('GET', `/api/workspaces/${ws}/analytics/mailboxes?days=7`);
    expect(r.statusCode).toBe(200);
    expect(r.json().mailboxes).toMatchObject([{ id: g.mailboxId, health: 'ok', sent: 1, hardBounces: 0, softBounces: 1, bounceRate: 0, replies: 1 }]);
    expect((await owner.call('GET', `/api/workspaces/${ws}/analytics/mailboxes?days=0`)).statusCode).toBe(400);
  });
});
