/**
 * Mailbox rotation: which mailbox of a sequence's pool a new enrollment gets. It keeps that
 * mailbox for every later step, so its follow-ups thread under the first message; the choice is
 * made once, by load.
 *
 * "Most room" is measured relative to pace: a mailbox's load (its live enrollments, each of which
 * will send from it for days) divided by its capacity (its daily cap, ramp included, averaged over
 * the coming days). Each new enrollment goes to the mailbox whose load would be lowest relative to
 * its capacity after taking it ((load + 1) / capacity), ties by id; over many enrollments this
 * fills mailboxes in proportion to their capacity and evens out a pool that started unbalanced.
 */
import { MinHeap } from './heap.ts';

export interface PoolMailbox {
  id: string;
  /** Sends a day it can make over the coming days (> 0 to be chosen). */
  capacity: number;
  /** Live enrollments already assigned to it. */
  load: number;
}

/** `count` choices (mailbox ids), interleaved in the order the greedy rule makes them; [] when no mailbox has capacity. */
export function spreadAssignments(pool: readonly PoolMailbox[], count: number): string[] {
  const live = pool.filter((m) => m.capacity > 0 && Number.isFinite(m.capacity));
  if (live.length === 0 || count <= 0) return [];
  const state = live.map((m) => ({ id: m.id, capacity: m.capacity, load: Math.max(0, m.load) }));
  const key = (s: (typeof state)[number]) => (s.load + 1) / s.capacity;
  const heap = new MinHeap<(typeof state)[number]>((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb || (ka === kb && a.id < b.id);
  });
  for (const s of state) heap.push(s);
  const out: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const s = heap.pop()!;
    out[i] = s.id;
    s.load++;
    heap.push(s);
  }
  return out;
}
