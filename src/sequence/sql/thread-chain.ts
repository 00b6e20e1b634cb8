/**
 * The email thread an enrollment writes in. A lead moved to another sequence (a person's move, a
 * branch arm's `move_to`, a reply rule) keeps its mailbox when the target's pool has it, and then
 * the target's emails continue the conversation the lead already has with that mailbox: the
 * thread of the enrollments it was moved from, walked backwards along `moved_to` (migration 0080
 * indexes it), at most 32 hops as every walk of a move chain.
 */
import { sql } from 'kysely';
import type { Db, Tx } from '../../store/store.ts';

/**
 * -- name: thread-messages
 * The outbound messages of the thread `enrollmentId` writes in (columns message_id, subject,
 * thread_id, at, id; the caller orders by at, id): those the enrollments it was moved from sent
 * from `mailboxId` (another mailbox's are another conversation), and, when `own` is true, all of
 * its own (as before moves existed: an enrollment whose mailbox was replaced keeps threading under
 * what it sent). A fragment, so that the sender reads it in its one statement a send.
 */
export function threadMessagesSql(enrollmentId: string, mailboxId: string, own: boolean) {
  return sql`
    with recursive chain(id, hops) as (
      select ${enrollmentId}::uuid, 0
      union all
      select p.id, c.hops + 1 from enrollment p join chain c on p.moved_to = c.id where c.hops < 32
    )
    select o.message_id, o.subject, o.thread_id, o.at, o.id
    from chain c cross join lateral (
      -- Each enrollment's messages through its index, always: the planner takes the chain for
      -- thousands of rows (its recursion's guess) when it is one or two, and a plan made while
      -- the message table was small, kept by a prepared statement, hashed the chain against a scan of
      -- every message: 28 ms of every send at 10,000 mailboxes, 44% of PostgreSQL's time
      -- (docs/benchmarks.md). OFFSET 0 keeps the subquery from being merged back into that join.
      select m.message_id, m.subject, m.thread_id, m.at, m.id from message m
      where m.enrollment_id = c.id and m.direction = 'outbound' and (m.mailbox_id = ${mailboxId}::uuid or (c.hops = 0 and ${own}::boolean))
      offset 0) o`;
}

/** Whether the enrollment `from` (or one it was itself moved from) has sent from this mailbox: a thread a successor can continue. */
export async function hasThreadFrom(db: Db | Tx, from: string, mailboxId: string): Promise<boolean> {
  const r = await sql<{ found: boolean }>`select exists (${threadMessagesSql(from, mailboxId, false)}) as found`.execute(db);
  return !!r.rows[0]?.found;
}
