import type { Random } from './random.ts';

/**
 * Reconnect delays for a broken watch or pull: exponential backoff with "full jitter" (each delay
 * uniform in [0, min(cap, base * 2^attempt)]). Without jitter, 2,000 mailboxes dropped by one
 * server restart would all come back in the same millisecond, again and again; full jitter spreads
 * them over the whole window, which is the variant that finishes soonest with the least work for
 * the server (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015).
 *
 * Pure: the random source is injected (seeded in tests and simulations), the caller owns the clock.
 * The sync worker keeps one BackoffSchedule per mailbox and resets it after a healthy period; the
 * push bus and the webhook dispatcher use it for their reconnects and retries.
 */
export interface BackoffPolicy {
  /** The ceiling of the first delay (attempt 0). */
  baseMs: number;
  /** No delay ceiling grows past this. */
  capMs: number;
}

/** 1 s, 2 s, 4 s … up to 5 minutes: a restarted server is back before the second or third try. */
export const defaultBackoffPolicy: BackoffPolicy = { baseMs: 1_000, capMs: 5 * 60_000 };

/** The ceiling for attempt n (0-based): min(cap, base * 2^n), without overflow for large n. */
export function backoffCeiling(attempt: number, policy: BackoffPolicy = defaultBackoffPolicy): number {
  const n = Math.max(0, Math.floor(attempt));
  // 2^n overflows to Infinity past ~1023, and the cap is reached long before 2^40 anyway.
  return n >= 40 ? policy.capMs : Math.min(policy.capMs, policy.baseMs * 2 ** n);
}

/** The delay before attempt n: uniform in [0, ceiling(n)], a whole number of milliseconds. */
export function backoffDelay(attempt: number, random: Random, policy: BackoffPolicy = defaultBackoffPolicy): number {
  return Math.floor(random.next() * (backoffCeiling(attempt, policy) + 1));
}

/** A mailbox's reconnect state: next() after each failure, reset() once it has worked for a while. */
export class BackoffSchedule {
  private attempt = 0;

  constructor(
    private readonly random: Random,
    private readonly policy: BackoffPolicy = defaultBackoffPolicy,
  ) {}

  /** The delay to wait before the next try; each call counts one more failure. */
  next(): number {
    return backoffDelay(this.attempt++, this.random, this.policy);
  }

  /** Failures since the last reset. */
  get failures(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
