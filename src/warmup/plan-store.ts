/**
 * The day plan in the store: the pairs of recent days that the planner must not repeat, read from
 * warmup_mail, and a day's plan written as planned warmup mail (one row per send, its Message-ID
 * fixed now, as the outbox fixes a send's before any server is reached, so the text, which is
 * the MAC of the Message-ID, is the same whenever the send is made or retried).
 *
 * A member's id in the planner is its mailbox id, or for a remote member (a peer's, federation/)
 * its address.
 */
import { sql } from 'kysely';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Conn } from '../store/in-tx.ts';
import type { PlannedWarmupSend, RecentPair } from './plan/types.ts';

const DAY = 86_400_000;

// -- name: warmup-recent-pairs
// First mails planned in the `days` days before `dayStart` (replies follow a pairing, they do not
// make one), as member ids, with how many days before the planned day each was.
const recentSql = (pool: string, dayStart: number, days: number) => sql<{ a: string; b: string; planned_at: Date }>`
  select coalesce(sender_mailbox_id::text, sender_address) as a,
         coalesce(receiver_mailbox_id::text, receiver_address) as b,
         planned_at
  from warmup_mail
  where pool = ${pool} and kind = 'first'
    and planned_at >= ${new Date(dayStart - days * DAY)} and planned_at < ${new Date(dayStart)}`;

export async function recentPairs(db: Conn, pool: string, dayStart: number, days: number): Promise<RecentPair[]> {
  const rows = (await recentSql(pool, dayStart, days).execute(db)).rows;
  return rows.map((r) => ({ a: r.a, b: r.b, daysAgo: Math.floor((dayStart - new Date(r.planned_at).getTime()) / DAY) + 1 }));
}

export interface PlanAddresses {
  /** Member id → its address and, for a local member, its mailbox id. */
  get(id: string): { address: string; mailboxId: string | null; peerId?: string } | undefined;
}

/** Writes a day's plan as planned first mails; returns their ids. A send whose member is unknown is an error. */
export async function writeDayPlan(db: Conn, pool: string, sends: readonly PlannedWarmupSend[], members: PlanAddresses, random: Random): Promise<string[]> {
  if (sends.length === 0) return [];
  const rows = sends.map((s) => {
    const from = members.get(s.sender);
    const to = members.get(s.receiver);
    if (!from || !to) throw new Error(`warmup plan names an unknown member: ${s.sender} -> ${s.receiver}`);
    const id = newId(s.at, random);
    return {
      id,
      pool,
      kind: 'first' as const,
      message_id: `<${id}@${from.address.slice(from.address.lastIndexOf('@') + 1)}>`,
      sender_mailbox_id: from.mailboxId,
      sender_address: from.address,
      receiver_mailbox_id: to.mailboxId,
      receiver_address: to.address,
      planned_at: new Date(s.at),
      // Mail to a peer's member names the peer: its key writes it, and the peer must accept it first (federation/exchange.ts).
      peer_id: to.peerId ?? null,
    };
  });
  // In chunks: one statement's parameters stay far below PostgreSQL's 65,535.
  for (let i = 0; i < rows.length; i += 1000) await db.insertInto('warmup_mail').values(rows.slice(i, i + 1000)).execute();
  return rows.map((r) => r.id);
}
