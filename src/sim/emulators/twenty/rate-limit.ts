/**
 * The API rate limit of a Twenty workspace. Twenty documents 100 requests per minute for its API
 * (docs.twenty.com: "Requests per minute 100", with batches of at most 60 records); a self-hosted
 * server configures its own. Twenty's throttler (core-modules/throttler/throttler.service.ts) is a
 * token bucket refilled at limit/window; which bucket guards the REST API is unverified, so this
 * keeps the documented number as a bucket of `requests` tokens refilled continuously over
 * `windowMs`, one token per request, a refused request taking none.
 *
 * It also keeps, for a soak test, the most requests accepted within any `windowMs` (a sliding
 * window): a client that paces itself to the documented limit keeps this at or under `requests`.
 */
export interface RateLimit {
  requests: number;
  windowMs: number;
}

export class RateLimiter {
  private tokens: number;
  private refilledAt: number;
  private readonly accepted: number[] = [];
  private maxInWindow = 0;

  constructor(
    readonly limit: RateLimit | null,
    startMs: number,
  ) {
    this.tokens = limit?.requests ?? 0;
    this.refilledAt = startMs;
  }

  /** Takes a token for a request at `now`; false: refused (429). */
  take(now: number): boolean {
    if (this.limit) {
      const { requests, windowMs } = this.limit;
      this.tokens = Math.min(requests, this.tokens + ((now - this.refilledAt) * requests) / windowMs);
      this.refilledAt = now;
      if (this.tokens < 1) return false;
      this.tokens -= 1;
    }
    this.count(now);
    return true;
  }

  /** The most requests accepted in any window of `windowMs` so far (the limit's window, else one minute). */
  get highestInWindow(): number {
    return this.maxInWindow;
  }

  private count(now: number): void {
    const windowMs = this.limit?.windowMs ?? 60_000;
    this.accepted.push(now);
    while (this.accepted.length && this.accepted[0]! <= now - windowMs) this.accepted.shift();
    this.maxInWindow = Math.max(this.maxInWindow, this.accepted.length);
  }
}
