import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';
import { newSecret, secretHash } from './tokens.ts';

export const SESSION_COOKIE = 'cadenza_session';

export interface NewSession {
  /** The cookie's value; only its hash is stored. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export interface SessionRow {
  idHash: string;
  accountId: string;
  csrfToken: string;
}

/**
 * A fresh session for an account. Sign-in always creates a new one (and the caller drops the one
 * the browser had): a session id planted before sign-in is never promoted (session fixation).
 */
export async function createSession(db: Db, accountId: string, clock: Clock, ttlMs: number): Promise<NewSession> {
  const token = newSecret();
  const csrfToken = newSecret('', 24);
  const expiresAt = new Date(clock.now() + ttlMs);
  await db.insertInto('auth_session').values({ id_hash: secretHash(token), account_id: accountId, csrf_token: csrfToken, expires_at: expiresAt }).execute();
  // Expired sessions go at each sign-in rather than by a sweeper (index auth_session_expiry).
  await db.deleteFrom('auth_session').where('expires_at', '<=', new Date(clock.now())).execute();
  return { token, csrfToken, expiresAt };
}

export async function findSession(db: Db, token: string, clock: Clock): Promise<SessionRow | undefined> {
  const row = await db
    .selectFrom('auth_session')
    .select(['id_hash', 'account_id', 'csrf_token'])
    .where('id_hash', '=', secretHash(token))
    .where('expires_at', '>', new Date(clock.now()))
    .executeTakeFirst();
  return row && { idHash: row.id_hash, accountId: row.account_id, csrfToken: row.csrf_token };
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('auth_session').where('id_hash', '=', secretHash(token)).execute();
}

/** Ends every session of the account but the one with this token (after a password change); how many ended. */
export async function endOtherSessions(db: Db, accountId: string, keepToken: string): Promise<number> {
  const r = await db.deleteFrom('auth_session').where('account_id', '=', accountId).where('id_hash', '!=', secretHash(keepToken)).executeTakeFirst();
  return Number(r.numDeletedRows);
}
