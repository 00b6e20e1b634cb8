/**
 * A queue that serves its keys in turn (round robin), each key's items in arrival order. The sync
 * role keys its waits by workspace (ingest/worker/gate.ts, ingest/worker/prepare-pool.ts): one
 * workspace importing 20,000 mailboxes queues 20,000 first syncs, and a FIFO would put another
 * workspace's reply behind all of them; here it waits behind at most one item of each other
 * workspace that is waiting.
 *
 * Pure and synchronous; O(1) push and O(keys skipped) shift.
 */
export class FairQueue<T> {
  /** Keys with waiting items, in serving order: the next key is the first; a served key goes last. */
  private readonly lanes = new Map<string, T[]>();
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Keys with at least one item waiting. */
  get keys(): number {
    return this.lanes.size;
  }

  push(key: string, item: T): void {
    const lane = this.lanes.get(key);
    if (lane) lane.push(item);
    else this.lanes.set(key, [item]);
    this.count++;
  }

  /**
   * The head of the first key in turn that `allowed` accepts (all when omitted), with its key; that
   * key goes to the back of the turn. Undefined when nothing waits or no waiting key is allowed.
   */
  shift(allowed?: (key: string) => boolean): { key: string; item: T } | undefined {
    for (const [key, lane] of this.lanes) {
      if (allowed && !allowed(key)) continue;
      const item = lane.shift()!;
      this.count--;
      // Re-inserting moves the key to the back of the Map's order: its next item waits its turn.
      this.lanes.delete(key);
      if (lane.length) this.lanes.set(key, lane);
      return { key, item };
    }
    return undefined;
  }

  /** Everything waiting, emptied out (a pool that closes refuses what waits). */
  drain(): T[] {
    const all = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.count = 0;
    return all;
  }
}
