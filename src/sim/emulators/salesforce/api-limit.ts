/**
 * The org's API request allocation (Salesforce Developer Limits and Allocations Quick Reference,
 * "API Request Limits and Allocations"): a total per rolling 24 hours for the whole org (Enterprise
 * Edition: 100,000 plus 1,000 per license; Developer Edition: 15,000), counted on every REST call.
 * Every answer carries `Sforce-Limit-Info: api-usage=N/M`; past the total, calls are refused with 403
 * REQUEST_LIMIT_EXCEEDED until enough of the last 24 hours' calls age out.
 *
 * Salesforce lets an org run somewhat over its allocation before it blocks (documented as a
 * protection, not a number to rely on); the emulator blocks at the number exactly, the stricter
 * reading. A refused call takes no place in the count (unverified), so a client that keeps within
 * the emulator's count keeps within Salesforce's.
 */
export const dayMs = 24 * 3_600_000;

export class ApiAllocation {
  private times: number[] = [];
  /** Every counted call's time, for peak(); a test's run is short enough to keep them all. */
  private history: number[] = [];
  refused = 0;

  constructor(readonly max: number) {}

  /** A call at `now`: whether it is within the allocation (and then it is counted). */
  admit(now: number): boolean {
    this.forget(now);
    if (this.times.length >= this.max) {
      this.refused++;
      return false;
    }
    this.times.push(now);
    this.history.push(now);
    return true;
  }

  /** The most calls counted within any `windowMs` (a soak test checks a connector's share against it). */
  peak(windowMs: number): number {
    let best = 0;
    let start = 0;
    for (let end = 0; end < this.history.length; end++) {
      while (this.history[start]! <= this.history[end]! - windowMs) start++;
      best = Math.max(best, end - start + 1);
    }
    return best;
  }

  used(now: number): number {
    this.forget(now);
    return this.times.length;
  }

  /** Counts `n` calls made at `at` by someone else (another integration of the org), for tests. */
  spend(n: number, at: number): void {
    for (let k = 0; k < n; k++) this.times.push(at);
    this.times.sort((a, b) => a - b);
  }

  header(now: number): Record<string, string> {
    return { 'sforce-limit-info': `api-usage=${this.used(now)}/${this.max}` };
  }

  private forget(now: number): void {
    let drop = 0;
    while (drop < this.times.length && this.times[drop]! <= now - dayMs) drop++;
    if (drop) this.times.splice(0, drop);
  }
}
