import type { Db } from '../../store/store.ts';

/**
 * How many sends the mailbox has claimed since an instant (claimed_at, set by reserveSlot and
 * cleared when a request is released): what the mailbox list shows as sent today. The dispatcher
 * counts its budgets by its own rule (dispatch/sql.ts, COUNTED_STATES).
 */
export async function sendsClaimedSince(db: Db, mailboxId: string, since: Date): Promise<number> {
  const r = await db
    .selectFrom('send_request')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('mailbox_id', '=', mailboxId)
    .where('claimed_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
