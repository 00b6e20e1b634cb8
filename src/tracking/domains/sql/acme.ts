import { sql } from 'kysely';
import type { Db, Tx } from '../../../store/store.ts';

// -- name: acme-account
export async function acmeAccount(db: Db | Tx, directoryUrl: string): Promise<{ wrappedKey: Buffer; accountUrl: string | null } | undefined> {
  const r = await sql<{ wrapped_key: Uint8Array; account_url: string | null }>`
    select wrapped_key, account_url from acme_account where directory_url = ${directoryUrl}`.execute(db);
  const row = r.rows[0];
  return row && { wrappedKey: Buffer.from(row.wrapped_key), accountUrl: row.account_url };
}

// -- name: insert-acme-account
// First writer wins: two processes creating the account at once keep one key.
export async function insertAcmeAccount(db: Db | Tx, directoryUrl: string, wrappedKey: Buffer): Promise<void> {
  await sql`insert into acme_account (directory_url, wrapped_key) values (${directoryUrl}, ${wrappedKey}) on conflict (directory_url) do nothing`.execute(db);
}

// -- name: replace-acme-account
// A new key for the directory, its URL forgotten (the key stored no longer unwraps).
export async function replaceAcmeAccount(db: Db | Tx, directoryUrl: string, wrappedKey: Buffer): Promise<void> {
  await sql`update acme_account set wrapped_key = ${wrappedKey}, account_url = null where directory_url = ${directoryUrl}`.execute(db);
}

// -- name: set-acme-account-url
export async function setAcmeAccountUrl(db: Db | Tx, directoryUrl: string, accountUrl: string): Promise<void> {
  await sql`update acme_account set account_url = ${accountUrl} where directory_url = ${directoryUrl}`.execute(db);
}

// -- name: put-challenge
export async function putChallenge(db: Db | Tx, c: { token: string; keyAuthorization: string; host: string; expiresAt: number }): Promise<void> {
  await sql`
    insert into acme_challenge (token, key_authorization, host, expires_at)
    values (${c.token}, ${c.keyAuthorization}, ${c.host}, ${new Date(c.expiresAt)})
    on conflict (token) do update set key_authorization = excluded.key_authorization, host = excluded.host, expires_at = excluded.expires_at`.execute(db);
}

// -- name: challenge-answer
// The key authorization for a token asked on a host, while it is in flight (RFC 8555 8.3).
export async function challengeAnswer(db: Db | Tx, token: string, host: string, now: number): Promise<string | undefined> {
  const r = await sql<{ key_authorization: string }>`
    select key_authorization from acme_challenge where token = ${token} and host = ${host} and expires_at > ${new Date(now)}`.execute(db);
  return r.rows[0]?.key_authorization;
}

// -- name: delete-challenge
// The token's row, and any challenge left behind by a crash once it expired.
export async function deleteChallenge(db: Db | Tx, token: string, now: number): Promise<void> {
  await sql`delete from acme_challenge where token = ${token} or expires_at <= ${new Date(now)}`.execute(db);
}

// -- name: acme-accounts-for-update
// Every directory's account, locked for a master key rotation.
export async function acmeAccountsForUpdate(tx: Tx): Promise<Array<{ directoryUrl: string; wrappedKey: Buffer }>> {
  const r = await sql<{ directory_url: string; wrapped_key: Uint8Array }>`select directory_url, wrapped_key from acme_account order by directory_url for update`.execute(tx);
  return r.rows.map((x) => ({ directoryUrl: x.directory_url, wrappedKey: Buffer.from(x.wrapped_key) }));
}

// -- name: rewrap-acme-account
// The same key wrapped by another master key: the account and its URL stay.
export async function rewrapAcmeAccount(tx: Tx, directoryUrl: string, wrappedKey: Buffer): Promise<void> {
  await sql`update acme_account set wrapped_key = ${wrappedKey} where directory_url = ${directoryUrl}`.execute(tx);
}
