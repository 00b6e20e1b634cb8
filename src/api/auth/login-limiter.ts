import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';

/**
 * Sign-in limits that stop a guesser, not the owner. Failures are counted in the store (every API
 * process sees them) per (address, client): the client is a known device of the account (its
 * cookie, devices.ts) or else the caller's IP. Each client gets `free` tries, then waits twice as
 * long after each further failure. A known device's wait is capped at `deviceMaxDelayMs`, far
 * below the window, and only its own failures count for it; the other clients together also meet
 * an address-wide cap (`perEmail` per window), so a guesser spreading over many IPs is stopped
 * while the owner's usual browser still signs in with the right password.
 */
export interface LoginLimit {
  /** Failures per address per window, all clients but known devices together. */
  perEmail: number;
  /** Requests per IP per window (in memory, @fastify/rate-limit); a known device is exempt. */
  perIp: number;
  windowMs: number;
  /** Failures a client may make before it waits. */
  free?: number;
  /** The first wait; each later failure doubles it. */
  baseDelayMs?: number;
  /** The longest wait of a known device. */
  deviceMaxDelayMs?: number;
}

export const loginLimitDefaults = { free: 5, baseDelayMs: 1_000, deviceMaxDelayMs: 60_000 } as const;

export type Client = { kind: 'device'; hash: string } | { kind: 'ip'; ip: string };

export const clientKey = (c: Client): string => (c.kind === 'device' ? `device:${c.hash.slice(0, 32)}` : `ip:${c.ip}`);

/**
 * How long this client must still wait, from its failures in the window (oldest first): pure, so
 * the schedule is tested without a store. 0: it may try now.
 */
export function backoffRemainingMs(failureTimes: number[], now: number, limit: LoginLimit, knownDevice: boolean): number {
  const free = limit.free ?? loginLimitDefaults.free;
  const over = failureTimes.length - free;
  if (over < 0) return 0;
  const cap = knownDevice ? (limit.deviceMaxDelayMs ?? loginLimitDefaults.deviceMaxDelayMs) : limit.windowMs;
  const delay = Math.min((limit.baseDelayMs ?? loginLimitDefaults.baseDelayMs) * 2 ** over, cap);
  return Math.max(0, failureTimes[failureTimes.length - 1]! + delay - now);
}

export interface LimitVerdict {
  /** 0: go ahead; otherwise milliseconds to wait. */
  retryAfterMs: number;
  /** Why: this client's own failures, or the address's (many clients). */
  reason?: 'client' | 'address';
}

/** Whether a sign-in for this address from this client may be tried now. */
export async function checkLogin(db: Db, emailNorm: string, client: Client, clock: Clock, limit: LoginLimit): Promise<LimitVerdict> {
  const now = clock.now();
  const since = new Date(now - limit.windowMs);
  const key = clientKey(client);
  const mine = await db.selectFrom('login_failure').select('at').where('email_norm', '=', emailNorm).where('client', '=', key).where('at', '>', since).orderBy('at').execute();
  const wait = backoffRemainingMs(mine.map((r) => r.at.getTime()), now, limit, client.kind === 'device');
  if (wait > 0) return { retryAfterMs: wait, reason: 'client' };
  if (client.kind === 'device') return { retryAfterMs: 0 };
  const all = await db
    .selectFrom('login_failure')
    .select(['at'])
    .where('email_norm', '=', emailNorm)
    .where('client', 'not like', 'device:%')
    .where('at', '>', since)
    .orderBy('at')
    .execute();
  if (all.length < limit.perEmail) return { retryAfterMs: 0 };
  // Until the failure that took the count over the cap leaves the window.
  return { retryAfterMs: Math.max(1_000, all[all.length - limit.perEmail]!.at.getTime() + limit.windowMs - now), reason: 'address' };
}

export async function recordFailure(db: Db, emailNorm: string, client: Client, clock: Clock, windowMs: number): Promise<void> {
  await db.insertInto('login_failure').values({ email_norm: emailNorm, client: clientKey(client), at: new Date(clock.now()) }).execute();
  // Every address's old failures, not only this one's: a guesser spraying many addresses must not
  // grow the table without end. It holds only the window's failures, so the scan stays small.
  await db.deleteFrom('login_failure').where('at', '<=', new Date(clock.now() - windowMs)).execute();
}

/** A right password clears this client's failures only: the owner signing in does not reset a guesser's count. */
export async function clearFailures(db: Db, emailNorm: string, client: Client): Promise<void> {
  await db.deleteFrom('login_failure').where('email_norm', '=', emailNorm).where('client', '=', clientKey(client)).execute();
}
