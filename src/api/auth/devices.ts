import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';
import { newSecret, secretHash } from './tokens.ts';

/**
 * Known devices (migration 0023): a browser that once signed in with the right password keeps a
 * random cookie naming it. The sign-in limiter counts its failures apart from everyone else's,
 * so a stranger's guessing never locks the owner out of their usual browser. Only the hash is kept.
 */
export const DEVICE_COOKIE = 'cadenza_device';
/** The cookie goes only to the sign-in routes; 400 days is the longest a browser keeps one. */
export const DEVICE_COOKIE_PATH = '/api/auth';
export const DEVICE_TTL_MS = 400 * 24 * 3_600_000;

/** The device's id for the limiter when the cookie names a device of this account; else undefined. */
export async function knownDevice(db: Db, accountId: string | undefined, cookie: string | undefined): Promise<string | undefined> {
  if (!accountId || !cookie) return undefined;
  const hash = secretHash(cookie);
  const row = await db.selectFrom('account_device').select('token_hash').where('token_hash', '=', hash).where('account_id', '=', accountId).executeTakeFirst();
  return row ? hash : undefined;
}

/** After a right password: the device is seen again, or a new one is made (its token for the cookie). */
export async function rememberDevice(db: Db, clock: Clock, accountId: string, known: string | undefined): Promise<string | undefined> {
  const now = new Date(clock.now());
  if (known) {
    await db.updateTable('account_device').set({ last_seen_at: now }).where('token_hash', '=', known).execute();
    return undefined;
  }
  const token = newSecret();
  await db.insertInto('account_device').values({ token_hash: secretHash(token), account_id: accountId, last_seen_at: now }).execute();
  // Devices unseen for the cookie's whole life are gone from the browser too.
  await db.deleteFrom('account_device').where('account_id', '=', accountId).where('last_seen_at', '<', new Date(clock.now() - DEVICE_TTL_MS)).execute();
  return token;
}
