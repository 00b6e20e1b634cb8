/**
 * Placement: the pure verdict, and against a real store (PGlite and PostgreSQL) the opt-in, the
 * receiving side's receipts, the 7- and 30-day shares on a simulated clock, and the health they
 * drive (a lower cap with a warning, a pause, a warning lifted on recovery).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { getWarmup, recordWarmupReceipt, setWarmup } from '../membership.ts';
import { assessPlacement } from './assess.ts';
import { evaluatePlacement, placementView } from './evaluate.ts';

const DAY = 86_400_000;
const T = Date.UTC(2026, 11, 2, 12, 0);

describe('assessPlacement', () => {
  it('judges nothing on a small sample, pauses below half, lowers below 80% or on a drop', () => {
    expect(assessPlacement({ inbox7: 2, junk7: 7, inbox30: 2, junk30: 7 })).toMatchObject({ verdict: 'ok', capFactor: 1 });
    expect(assessPlacement({ inbox7: 4, junk7: 6, inbox30: 4, junk30: 6 })).toMatchObject({ verdict: 'pause', reason: 'warmup placement: 40% of 10 warmup mails in the inbox over 7 days (40% over 30), below 50%: paused' });
    expect(assessPlacement({ inbox7: 7, junk7: 3, inbox30: 70, junk30: 3 })).toMatchObject({ verdict: 'lower', capFactor: 0.5 });
    expect(assessPlacement({ inbox7: 17, junk7: 3, inbox30: 99, junk30: 3 }).reason).toMatch(/85% of 20 .* \(97% over 30\)/);
    expect(assessPlacement({ inbox7: 17, junk7: 3, inbox30: 99, junk30: 3 }).verdict).toBe('ok');
    expect(assessPlacement({ inbox7: 16, junk7: 4, inbox30: 200, junk30: 4 })).toMatchObject({ verdict: 'lower', reason: expect.stringMatching(/down more than 15%/) });
  });
});

describe.each(testBackends())('warmup membership and placement on %s', (backend) => {
  let store: TestStore;
  const random = seededRandom(5);
  const ws = '00000000-0000-4000-8000-000000000001';
  const other = '00000000-0000-4000-8000-000000000002';
  const mb = '00000000-0000-4000-8000-0000000000a1';
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });
  beforeEach(async () => {
    await sql`truncate table workspace cascade`.execute(store.db);
    await store.db.insertInto('workspace').values([{ id: ws, name: 'A' }, { id: other, name: 'B' }] as never).execute();
    await store.db.insertInto('mailbox').values({ id: mb, workspace_id: ws, email: 'rep@a.example', provider: 'smtp_imap' } as never).execute();
  });

  const receipts = async (folders: Array<['inbox' | 'junk', number]>) => {
    let k = 0;
    for (const [folder, daysAgo] of folders) {
      const messageId = `<m${k++}@a.example>`;
      await store.db
        .insertInto('warmup_mail')
        .values({ id: `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`, pool: 'default', kind: 'first', message_id: messageId, sender_mailbox_id: mb, sender_address: 'rep@a.example', receiver_address: 'x@b.example', planned_at: new Date(T - daysAgo * DAY), sent_at: new Date(T - daysAgo * DAY) })
        .execute();
      await recordWarmupReceipt(store.db, { pool: 'default', kind: 'first', messageId, senderAddress: 'rep@a.example', receiverMailboxId: mb, receiverAddress: 'x@b.example', folder, at: T - daysAgo * DAY + 60_000 }, random);
    }
  };

  it('opts a mailbox in and out within its workspace only, and checks the target', async () => {
    expect(await getWarmup(store.db, ws, mb)).toMatchObject({ enabled: false });
    expect(await setWarmup(store.db, ws, mb, { enabled: true, target: 40 }, T)).toMatchObject({ enabled: true, target: 40, pool: 'default', capFactor: 1 });
    expect(await setWarmup(store.db, ws, mb, { enabled: true }, T + DAY)).toMatchObject({ target: 40, joinedAt: new Date(T) });
    for (const call of [() => getWarmup(store.db, other, mb), () => setWarmup(store.db, other, mb, { enabled: true }, T)]) {
      await expect(call()).rejects.toSatisfy((e) => isCadenzaError(e, 'NOT_FOUND'));
    }
    await expect(setWarmup(store.db, ws, mb, { enabled: true, target: 0 }, T)).rejects.toSatisfy((e) => isCadenzaError(e, 'INVALID_INPUT'));
    expect(await setWarmup(store.db, ws, mb, { enabled: false }, T)).toMatchObject({ enabled: false });
  });

  it('counts receipts over 7 and 30 days; a second read of the same mail keeps the first folder', async () => {
    await receipts([['inbox', 1], ['junk', 2], ['inbox', 10], ['inbox', 29], ['junk', 31]]);
    // The mail in junk was rescued to the inbox and read again by a resync: still junk.
    await recordWarmupReceipt(store.db, { pool: 'default', kind: 'first', messageId: '<m1@a.example>', senderAddress: 'rep@a.example', receiverMailboxId: mb, receiverAddress: 'x@b.example', folder: 'inbox', at: T - DAY }, random);
    const view = await placementView(store.db, mb, T);
    expect(view).toMatchObject({ share7: 0.5, share30: 0.75, receipts7: 2, receipts30: 4, capFactor: 1, capReason: null });
    expect(view.days).toHaveLength(30);
    expect(view.days.filter((d) => d.inbox + d.junk > 0)).toEqual([
      { day: '2026-11-03', inbox: 1, junk: 0 },
      { day: '2026-11-22', inbox: 1, junk: 0 },
      { day: '2026-11-30', inbox: 0, junk: 1 },
      { day: '2026-12-01', inbox: 1, junk: 0 },
    ]);
    // A remote sender's mail has no row yet: the receipt makes one.
    await recordWarmupReceipt(store.db, { pool: 'default', kind: 'first', messageId: '<remote@c.example>', senderAddress: 'peer@c.example', receiverMailboxId: mb, receiverAddress: 'rep@a.example', folder: 'inbox', at: T }, random);
    expect(await store.db.selectFrom('warmup_mail').select('received_folder').where('message_id', '=', '<remote@c.example>').executeTakeFirst()).toEqual({ received_folder: 'inbox' });
  });

  it('lowers the cap with a visible warning, lifts it on recovery, and pauses on a collapse', async () => {
    await setWarmup(store.db, ws, mb, { enabled: true }, T - 40 * DAY);
    await receipts([...Array.from({ length: 7 }, (): ['inbox', number] => ['inbox', 1]), ['junk', 1], ['junk', 2], ['junk', 3]]);
    let r = await evaluatePlacement(store.db, mb, T);
    expect(r).toMatchObject({ verdict: 'lower', health: 'warning', capFactor: 0.5 });
    expect(await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', mb).executeTakeFirst()).toEqual({ health: 'warning', health_reason: r.reason });
    expect(await getWarmup(store.db, ws, mb)).toMatchObject({ capFactor: 0.5, capReason: r.reason });

    // Ten days later the junk receipts are out of the 7-day window and new mail lands in the inbox.
    const later = T + 10 * DAY;
    await store.db.updateTable('warmup_mail').set({ received_at: new Date(later - DAY) }).where('received_folder', '=', 'inbox').execute();
    r = await evaluatePlacement(store.db, mb, later);
    expect(r).toMatchObject({ verdict: 'ok', health: 'ok', capFactor: 1 });
    expect(await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', mb).executeTakeFirst()).toEqual({ health: 'ok', health_reason: null });

    await store.db.updateTable('warmup_mail').set({ received_folder: 'junk', received_at: new Date(later - DAY) }).execute();
    r = await evaluatePlacement(store.db, mb, later);
    expect(r).toMatchObject({ verdict: 'pause', health: 'paused' });
    expect(await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', mb).executeTakeFirst()).toEqual({ health: 'paused', health_reason: r.reason });
  });
});
