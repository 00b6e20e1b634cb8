/**
 * Pipedrive's two limits (developers' "Rate limiting" page, token-based since December 2024):
 *
 *   burst   per token (an API token or an OAuth access token), a rolling 2-second window: by plan
 *           20/40/80/100/120 requests for an api_token (Essential … Enterprise), four times that
 *           for an OAuth access_token; the search endpoints have their own 10 per 2 seconds.
 *   daily   per company: a budget of tokens (30,000 × the plan's multiplier × seats, by a
 *           third-party summary: unverified); each request spends its endpoint's token cost
 *           (the OpenAPI's x-token-cost; v2 endpoints cost about half of v1's). The budget resets
 *           at the start of the next day (UTC here: unverified).
 *
 * A request a limit refuses spends nothing and takes no place in the window (unverified; the kinder
 * reading, so a client within the emulator's limits is within Pipedrive's). `peak` counts every
 * arrival, refused or not, so a soak test can assert the limit was never pressed past.
 */
export class BurstWindow {
  private admitted: number[] = [];
  private arrived: number[] = [];
  peak = 0;
  refused = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  admit(now: number): boolean {
    this.arrived = this.since(this.arrived, now);
    this.arrived.push(now);
    this.peak = Math.max(this.peak, this.arrived.length);
    this.admitted = this.since(this.admitted, now);
    if (this.admitted.length >= this.limit) {
      this.refused++;
      return false;
    }
    this.admitted.push(now);
    return true;
  }

  remaining(now: number): number {
    return Math.max(0, this.limit - this.since(this.admitted, now).length);
  }

  /** Whole seconds until the oldest request in the window leaves it (0 when the window is empty). */
  resetSeconds(now: number): number {
    const oldest = this.since(this.admitted, now)[0];
    return oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  private since(times: number[], now: number): number[] {
    const from = now - this.windowMs;
    return times[0] !== undefined && times[0] <= from ? times.filter((t) => t > from) : times;
  }
}

/** The company's daily token budget. */
export class DailyBudget {
  private day = -1;
  private spentToday = 0;
  refused = 0;

  constructor(readonly tokensPerDay: number) {}

  /** Spends `cost` at `now`; false (nothing spent) when the budget has not that much left. */
  spend(cost: number, now: number): boolean {
    this.roll(now);
    if (this.spentToday + cost > this.tokensPerDay) {
      this.refused++;
      return false;
    }
    this.spentToday += cost;
    return true;
  }

  left(now: number): number {
    this.roll(now);
    return this.tokensPerDay - this.spentToday;
  }

  private roll(now: number): void {
    const day = Math.floor(now / 86_400_000);
    if (day !== this.day) {
      this.day = day;
      this.spentToday = 0;
    }
  }
}

export type CostClass = 'get' | 'list' | 'mutate' | 'search';

/**
 * Token cost per kind of request (the rate-limits summary of x-token-cost: a single GET 2, a list
 * 20, a create/update 10, a search 40 on v1; v2 about half). The exact per-endpoint values of the
 * OpenAPI are unverified here.
 */
export function tokenCost(api: 'v1' | 'v2', kind: CostClass): number {
  const v1 = { get: 2, list: 20, mutate: 10, search: 40 }[kind];
  return api === 'v1' ? v1 : v1 / 2;
}

/** The headers every answer carries (the documented names; x-daily-requests-left shows the budget's tokens left: unverified). */
export function rateHeaders(w: BurstWindow, budget: DailyBudget, now: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(w.limit),
    'x-ratelimit-remaining': String(w.remaining(now)),
    'x-ratelimit-reset': String(w.resetSeconds(now)),
    'x-daily-requests-left': String(Math.max(0, budget.left(now))),
  };
}
