import type { Clock } from '../common/clock.ts';
import { isCadenzaError } from '../common/errors.ts';

/**
 * Errors that say "the database was not there, or not the primary, or asked to try again", as
 * opposed to a wrong statement: what a failover looks like from the client.
 *   socket errors        the server or the network went away (ECONNREFUSED while it restarts)
 *   08xxx                connection exception (08006 connection failure, 08001 cannot connect…)
 *   57P01/57P02/57P03    admin shutdown, crash shutdown, cannot connect now (starting, in recovery)
 *   40001/40P01          serialization failure, deadlock detected: the transaction may be replayed
 *   25006                read-only transaction: the session is on a standby (or a demoted primary)
 *   STORE_UNAVAILABLE    pg-failover.ts found no writable host before its wait ran out
 * Whether retrying is SAFE is the caller's: a failed statement or an unanswered COMMIT may have
 * taken effect, so only an idempotent step (one that re-reads before it writes) is retried blindly.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '40001', '40P01', '25006']);
// node-postgres reports a socket closed under a query with these messages and no code; and a
// connection attempt that ran out of time ("timeout expired" from pg.Client, "timeout exceeded when
// trying to connect" from pg-pool): a host cut off answers no SYN, and the next host must be tried.
const LOST = /Connection terminated|connection .*(?:ended|closed)|Client has encountered a connection error|^timeout expired$|timeout exceeded when trying to connect/i;

export function isTransientStoreError(e: unknown): boolean {
  if (isCadenzaError(e, 'STORE_UNAVAILABLE')) return true;
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SQLSTATES.has(code) || code.startsWith('08'))) return true;
  return LOST.test(e.message);
}

export interface RetryOptions {
  clock: Clock;
  /** Give up (rethrow the last error) once this much of the clock's time has passed. */
  withinMs: number;
  /** First pause between tries; doubled each time up to 2 s. */
  firstPauseMs?: number;
  onRetry?: (e: unknown, attempt: number) => void;
}

/**
 * Runs fn again while it fails with a transient error, for up to withinMs. For idempotent steps
 * only (see above): a step whose first try may have committed must find that out and not repeat it.
 */
export async function retryTransient<T>(fn: () => Promise<T>, o: RetryOptions): Promise<T> {
  const until = o.clock.now() + o.withinMs;
  let pause = o.firstPauseMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isTransientStoreError(e) || o.clock.now() + pause > until) throw e;
      o.onRetry?.(e, attempt);
      await o.clock.sleep(pause);
      pause = Math.min(2_000, pause * 2);
    }
  }
}
