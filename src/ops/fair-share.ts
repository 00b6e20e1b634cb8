/**
 * The one rule by which the sender pools and the sync pools share mailboxes (lease-balancer.ts runs
 * it for both). Pure: the caller reads the store, this decides, the caller acts.
 *
 * With N mailboxes and M live members, nobody holds more than ceil(N / M), and nobody holds more
 * than floor(N / M) while another member holds less than that and the free mailboxes cannot make
 * up the difference. Plain ceil alone could leave a member idle (4 mailboxes over 3 members: 2, 2,
 * 0); with the floor rule the only states where nobody gives back or takes are those where every
 * member holds floor or ceil and nothing is free. A member never takes back what the others need
 * (it takes past the floor only when nobody else is below it), so a hand-over is not undone by
 * its own giver.
 *
 * A member over its share gives back its excess (the caller hands each one over gracefully: the
 * message in hand is finished and recorded before the lease is released); a member under it takes
 * free mailboxes. A mailbox being handed over is still held: it is not given back twice, and while
 * any hand-over is pending the member neither gives more nor takes.
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
  const members = new Set([...i.members, i.me]);
  const counts = new Map<string, number>([...members].map((m) => [m, 0]));
  for (const [id, owner] of i.others) if (eligible.has(id) && owner !== i.me && counts.has(owner)) counts.set(owner, counts.get(owner)! + 1);
  const leaving = new Set(i.leaving);
  const held = new Set(i.held);
  const kept = i.held.filter((id) => eligible.has(id) && !leaving.has(id)).sort();
  const free = [...eligible].filter((id) => !held.has(id) && !i.others.has(id)).sort();
  const n = eligible.size;
  const m = members.size;
  const cap = i.max ?? Infinity;
  const floor = Math.min(cap, Math.floor(n / m));
  const ceil = Math.min(cap, Math.ceil(n / m));
  // What the other members below the floor lack.
  let need = 0;
  for (const [who, c] of counts) if (who !== i.me && c < floor) need += floor - c;
  if (leaving.size > 0) return { quota: kept.length, giveBack: [], take: [] };
  if (kept.length > ceil) return { quota: ceil, giveBack: kept.slice(ceil).reverse(), take: [] };
  // Above the floor while others lack more than is free: give down to the floor (no more than they lack).
  const short = need - free.length;
  if (short > 0 && kept.length > floor) {
    const give = Math.min(kept.length - floor, short);
    return { quota: kept.length - give, giveBack: kept.slice(kept.length - give).reverse(), take: [] };
  }
  // Up to the floor always; past it, up to the ceil, only when nobody else is below the floor.
  const quota = need > 0 ? Math.max(kept.length, floor) : ceil;
  return { quota, giveBack: [], take: kept.length < quota ? free : [] };
}
