import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';

/**
 * Failed sign-ins per address, counted in the store so that every API process sees the same
 * count (the per-IP limit is per process, in @fastify/rate-limit). A guesser spreading attempts
 * over many IPs still meets this one.
 */
export async function tooManyFailures(db: Db, emailNorm: string, clock: Clock, limit: number, windowMs: number): Promise<boolean> {
  const r = await db
    .selectFrom('login_failure')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('email_norm', '=', emailNorm)
    .where('at', '>', new Date(clock.now() - windowMs))
    .executeTakeFirstOrThrow();
  return Number(r.n) >= limit;
}

export async function recordFailure(db: Db, emailNorm: string, clock: Clock, windowMs: number): Promise<void> {
  await db.insertInto('login_failure').values({ email_norm: emailNorm, at: new Date(clock.now()) }).execute();
  // Every address's old failures, not only this one's: a guesser spraying many addresses must not
  // grow the table without end. It holds only the window's failures, so the scan stays small.
  await db.deleteFrom('login_failure').where('at', '<=', new Date(clock.now() - windowMs)).execute();
}

export async function clearFailures(db: Db, emailNorm: string): Promise<void> {
  await db.deleteFrom('login_failure').where('email_norm', '=', emailNorm).execute();
}
