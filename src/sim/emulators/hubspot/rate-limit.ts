/**
 * HubSpot's rolling request limits for one app (usage-guidelines page): a burst limit per rolling
 * 10 seconds for every request (privately distributed and legacy private apps: 100 on Free and
 * Starter, 190 on Professional and Enterprise), and the search endpoints' own limit per second
 * (documented as 5 per second; 4 in the 2020 changelog, what Cadenza plans for).
 *
 * A request the limit refuses does not take a place in the window (whether HubSpot counts its
 * 429s is unverified; not counting them is the kinder reading, so a client that keeps within the
 * emulator's limit keeps within HubSpot's either way). `peak` counts every request that arrived,
 * refused or not: the most seen in any one window, so a soak test can assert the limit was never
 * pressed past.
 */
export class RollingWindow {
  private admitted: number[] = [];
  private arrived: number[] = [];
  /** The most requests that arrived within any `windowMs`. */
  peak = 0;
  /** Requests refused for being over the limit. */
  refused = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** A request arriving at `now`: whether it is within the limit (and then it takes a place). */
  admit(now: number): boolean {
    this.arrived = this.inWindow(this.arrived, now);
    this.arrived.push(now);
    this.peak = Math.max(this.peak, this.arrived.length);
    this.admitted = this.inWindow(this.admitted, now);
    if (this.admitted.length >= this.limit) {
      this.refused++;
      return false;
    }
    this.admitted.push(now);
    return true;
  }

  /** Places left at `now`. */
  remaining(now: number): number {
    return Math.max(0, this.limit - this.inWindow(this.admitted, now).length);
  }

  /** A request at t holds its place until t + windowMs. */
  private inWindow(times: number[], now: number): number[] {
    const since = now - this.windowMs;
    return times[0] !== undefined && times[0] <= since ? times.filter((t) => t > since) : times;
  }
}

/** What the usage-guidelines page lists on every answer but the search endpoints'. */
export function rateLimitHeaders(w: RollingWindow, now: number): Record<string, string> {
  return {
    'x-hubspot-ratelimit-max': String(w.limit),
    'x-hubspot-ratelimit-remaining': String(w.remaining(now)),
    'x-hubspot-ratelimit-interval-milliseconds': String(w.windowMs),
  };
}
