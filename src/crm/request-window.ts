/**
 * A CRM's request limit, kept exactly: at most `requests` in any window of `windowMs` (HubSpot's
 * "100 per 10 seconds" is a rolling window, and so is the check a soak test makes of the emulator's
 * log). A log of the last `requests` request times, not a token bucket: a bucket refilled
 * continuously lets `requests + 1` through in some window of exactly `windowMs`.
 *
 * Pure: the caller passes the time (the writer's clock, simulated in tests).
 */
export class RequestWindow {
  private readonly times: number[] = [];

  constructor(
    readonly requests: number,
    readonly windowMs: number,
  ) {
    if (!Number.isInteger(requests) || requests < 1) throw new Error(`requests must be a positive integer, got ${requests}`);
    if (!(windowMs > 0)) throw new Error(`windowMs must be positive, got ${windowMs}`);
  }

  /** The earliest time (≥ now) at which `n` more requests fit in the window. */
  earliest(n: number, now: number): number {
    if (n > this.requests) throw new Error(`${n} requests can never fit in a window of ${this.requests}`);
    this.forget(now);
    const over = this.times.length + n - this.requests;
    // The window must first lose its `over` oldest requests: the (over-1)th leaves at its time + window.
    return over <= 0 ? now : Math.max(now, this.times[over - 1]! + this.windowMs);
  }

  /** Counts `n` requests made at `now` (call only when earliest(n, now) <= now). */
  take(n: number, now: number): void {
    if (this.earliest(n, now) > now) throw new Error(`taking ${n} requests at ${now} would exceed ${this.requests} per ${this.windowMs} ms`);
    for (let i = 0; i < n; i++) this.times.push(now);
  }

  /**
   * Moves the `n` requests counted at `from` (the last taken) to `to`: a batch's requests are
   * reserved when it starts, but the CRM counts each when it arrives, which may be seconds later
   * (HubSpot's searches are paced at 4 a second). Counting them all at the batch's end keeps the
   * window at least as full as the CRM's own count, so the next batch never tips it over.
   */
  restamp(n: number, from: number, to: number): void {
    if (to < from) throw new Error(`cannot restamp back in time (${from} -> ${to})`);
    let moved = 0;
    for (let i = this.times.length - 1; i >= 0 && moved < n && this.times[i] === from; i--, moved++) this.times[i] = to;
  }

  /**
   * Settles a batch that reserved `reserved` requests at `from` (take) and really made `used`,
   * counted by the CRM up to `to`: the used ones move to `to` (as restamp), the unused rest leaves
   * the window, and any made beyond the reservation are counted at `to` too (the CRM counted them;
   * only a connector that exceeds its own worst case makes any).
   */
  settle(reserved: number, used: number, from: number, to: number): void {
    this.restamp(reserved, from, to);
    let unused = reserved - used;
    for (let i = this.times.length - 1; i >= 0 && unused > 0; i--) {
      if (this.times[i] !== to) break;
      this.times.splice(i, 1);
      unused--;
    }
    for (let i = 0; i < used - reserved; i++) this.times.push(to);
  }

  /** The requests still in the window at `now`, run-length encoded oldest first: [[time, requests], …]. */
  snapshot(now: number): Array<[number, number]> {
    this.forget(now);
    const out: Array<[number, number]> = [];
    for (const t of this.times) {
      const last = out[out.length - 1];
      if (last && last[0] === t) last[1]++;
      else out.push([t, 1]);
    }
    return out;
  }

  /**
   * Counts the requests of another process's snapshot too (a writer taking a connection over):
   * merged in time order (two writers that overlapped may together hold more than `requests`:
   * all are kept, so the next fits only when enough have left). Entries that are not [finite
   * time, positive integer] are ignored, since the snapshot comes from the database.
   */
  absorb(snapshot: unknown, now: number): void {
    if (!Array.isArray(snapshot)) return;
    const more: number[] = [];
    for (const e of snapshot) {
      if (!Array.isArray(e) || !Number.isFinite(e[0]) || !Number.isInteger(e[1]) || e[1] < 1) continue;
      for (let i = 0; i < Math.min(e[1], this.requests); i++) more.push(e[0]);
    }
    this.times.push(...more);
    this.times.sort((a, b) => a - b);
    this.forget(now);
  }

  private forget(now: number): void {
    let drop = 0;
    while (drop < this.times.length && this.times[drop]! <= now - this.windowMs) drop++;
    if (drop) this.times.splice(0, drop);
  }
}
