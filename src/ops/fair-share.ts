/**
 * The one rule by which the sender pools and the sync pools share mailboxes (lease-balancer.ts runs
 * it for both). Pure: the caller reads the store, this decides, the caller acts.
 *
 * With N mailboxes and M live members, nobody holds more than ceil(N / M). Plain ceil for everyone
 * can leave a member idle (4 mailboxes over 3 members: 2, 2, 0), so the ceil goes to the first
 * N mod M members and the others get floor(N / M): the quotas add up to N, and the state where
 * everyone holds its quota is the only one where nobody gives back or takes. Members are ranked
 * by what they hold now (most first, then by id), so that every process computes the same ranking
 * from the same lease table and the members that already hold the most keep them: joining moves
 * only the mailboxes the newcomer needs.
 *
 * A member over its quota gives back its excess (the caller hands each one over gracefully: the
 * message in hand is finished and recorded before the lease is released); a member under it takes
 * free mailboxes. A mailbox being handed over is still held: it is not given back twice, and while
 * any hand-over is pending the member takes nothing, so a pass never grows what it is shrinking.
 */
export interface ShareInput {
  me: string;
  /** Live members of the role, this one included (the heartbeat table). */
  members: readonly string[];
  /** Mailboxes the role may work on now. */
  eligible: readonly string[];
  /** Mailboxes this member holds, hand-overs in progress included. */
  held: readonly string[];
  /** Of those, the ones already being handed over. */
  leaving: readonly string[];
  /** Mailbox → its live owner, for leases held by other live members. */
  others: ReadonlyMap<string, string>;
  /** This member's own cap (maxMailboxes). */
  max?: number;
}

export interface SharePlan {
  quota: number;
  /** Mailboxes to hand over now, last first in id order. */
  giveBack: string[];
  /** Free mailboxes to try to take, in id order; the caller stops once it holds its quota (a take can lose a race). */
  take: string[];
}

export function planShare(i: ShareInput): SharePlan {
  const eligible = new Set(i.eligible);
  const members = [...new Set([...i.members, i.me])];
  const counts = new Map<string, number>(members.map((m) => [m, 0]));
  for (const [id, owner] of i.others) if (eligible.has(id) && counts.has(owner) && owner !== i.me) counts.set(owner, counts.get(owner)! + 1);
  const leaving = new Set(i.leaving);
  const kept = i.held.filter((id) => eligible.has(id) && !leaving.has(id)).sort();
  counts.set(i.me, i.held.filter((id) => eligible.has(id)).length);
  const ranked = members.sort((a, b) => counts.get(b)! - counts.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
  const n = eligible.size;
  const m = ranked.length;
  const rank = ranked.indexOf(i.me);
  const quota = Math.min(i.max ?? Infinity, Math.floor(n / m) + (rank < n % m ? 1 : 0));
  if (kept.length > quota) return { quota, giveBack: kept.slice(quota).reverse(), take: [] };
  if (leaving.size > 0 || kept.length === quota) return { quota, giveBack: [], take: [] };
  const held = new Set(i.held);
  const free = [...eligible].filter((id) => !held.has(id) && !i.others.has(id)).sort();
  return { quota, giveBack: [], take: free };
}
