/**
 * The simulation's agenda: what happens next, in time order. Items due at the same millisecond run
 * in the order of a tie-breaker drawn from the seeded random source when they were scheduled, so a
 * reply and a timer due at the same instant meet in both orders across seeds, and in the same
 * order on every replay of one seed.
 *
 * Keyed items (`wake`) are wake-ups of a recurring actor (the scheduler, a mailbox's sender): a
 * new wake-up for the same key keeps only the earlier of the two.
 */
export interface AgendaItem<A> {
  at: number;
  tie: number;
  seq: number;
  action: A;
  key?: string;
}

export class Agenda<A> {
  private heap: AgendaItem<A>[] = [];
  private seq = 0;
  private readonly wakes = new Map<string, AgendaItem<A>>();

  constructor(private readonly tieBreaker: () => number) {}

  get size(): number {
    return this.heap.length;
  }

  add(at: number, action: A): void {
    this.push({ at, tie: this.tieBreaker(), seq: this.seq++, action });
  }

  /** Schedules a keyed wake-up unless one is already due at or before `at`. */
  wake(key: string, at: number, action: A): void {
    const cur = this.wakes.get(key);
    if (cur && cur.at <= at) return;
    const item: AgendaItem<A> = { at, tie: this.tieBreaker(), seq: this.seq++, action, key };
    this.wakes.set(key, item);
    this.push(item);
  }

  /** When the keyed wake-up is due, if one is pending. */
  wakeAt(key: string): number | undefined {
    return this.wakes.get(key)?.at;
  }

  peekAt(): number | undefined {
    this.dropStale();
    return this.heap[0]?.at;
  }

  pop(): AgendaItem<A> | undefined {
    this.dropStale();
    const top = this.heap[0];
    if (!top) return undefined;
    this.removeTop();
    if (top.key !== undefined) this.wakes.delete(top.key);
    return top;
  }

  /** Drops every pending item the predicate selects (a crashed process's in-memory work). */
  /** Removes the unkeyed actions that match and returns them, earliest first. */
  takeWhere<B extends A>(pred: (a: A) => a is B): B[] {
    const taken = this.heap.filter((x) => x.key === undefined && pred(x.action)).sort(compare);
    if (taken.length === 0) return [];
    const set = new Set(taken);
    this.heap = this.heap.filter((x) => !set.has(x));
    this.heap.sort(compare); // a sorted array is a heap
    return taken.map((x) => x.action as B);
  }

  dropWhere(pred: (a: A) => boolean): number {
    const before = this.heap.length;
    for (const [k, item] of this.wakes) if (pred(item.action)) this.wakes.delete(k);
    this.heap = this.heap.filter((x) => !pred(x.action) && (x.key === undefined || this.wakes.get(x.key) === x));
    this.heap.sort(compare); // a sorted array is a heap
    return before - this.heap.length;
  }

  private dropStale(): void {
    while (this.heap[0] && this.heap[0].key !== undefined && this.wakes.get(this.heap[0].key) !== this.heap[0]) this.removeTop();
  }

  private push(item: AgendaItem<A>): void {
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (compare(h[p]!, h[i]!) <= 0) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private removeTop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && compare(h[l]!, h[m]!) < 0) m = l;
      if (r < h.length && compare(h[r]!, h[m]!) < 0) m = r;
      if (m === i) break;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}

function compare<A>(a: AgendaItem<A>, b: AgendaItem<A>): number {
  return a.at - b.at || a.tie - b.tie || a.seq - b.seq;
}
