import type { Selectable } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { ApiKeyTable } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';
import { newSecret, secretHash } from './tokens.ts';

/** Every key starts with this, so a leaked one is recognisable by secret scanners and in logs. */
export const API_KEY_PREFIX = 'cdz_';

export interface ApiKeyPrincipal {
  keyId: string;
  workspaceId: string;
  role: 'admin' | 'member';
  /** Only safe requests (GET, HEAD): `checkKeyScope`. */
  readOnly: boolean;
}

export async function createApiKey(
  db: Db,
  deps: { clock: Clock; random: Random },
  o: { workspaceId: string; name: string; role: 'admin' | 'member'; readOnly?: boolean; createdBy: string | null; createdByLabel?: string | null },
): Promise<{ id: string; key: string; prefix: string }> {
  const key = newSecret(API_KEY_PREFIX);
  const id = newId(deps.clock.now(), deps.random);
  const prefix = key.slice(0, API_KEY_PREFIX.length + 6);
  await db
    .insertInto('api_key')
    .values({ id, workspace_id: o.workspaceId, name: o.name, prefix, key_hash: secretHash(key), role: o.role, read_only: o.readOnly ?? false, created_by: o.createdBy, created_by_label: o.createdByLabel ?? null })
    .execute();
  return { id, key, prefix };
}

/** The live key with this secret, or undefined; marks it used. */
export async function findApiKey(db: Db, key: string, clock: Clock): Promise<ApiKeyPrincipal | undefined> {
  if (!key.startsWith(API_KEY_PREFIX)) return undefined;
  const row = await db
    .updateTable('api_key')
    .set({ last_used_at: new Date(clock.now()) })
    .where('key_hash', '=', secretHash(key))
    .where('revoked_at', 'is', null)
    .returning(['id', 'workspace_id', 'role', 'read_only'])
    .executeTakeFirst();
  return row && { keyId: row.id, workspaceId: row.workspace_id, role: row.role, readOnly: row.read_only };
}

/** What people see of a key: never the key or its hash. */
const KEY_VIEW_COLUMNS = ['id', 'name', 'prefix', 'role', 'read_only', 'created_by', 'created_by_label', 'created_at', 'last_used_at', 'revoked_at'] as const;
export type ApiKeyView = Pick<Selectable<ApiKeyTable>, (typeof KEY_VIEW_COLUMNS)[number]>;

/** The workspace's API keys, revoked ones included, oldest first. */
export async function listApiKeys(db: Db, workspaceId: string): Promise<ApiKeyView[]> {
  return db.selectFrom('api_key').select(KEY_VIEW_COLUMNS).where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
}

/** A key by id (as createApiKey returned it). */
export async function apiKeyView(db: Db, keyId: string): Promise<ApiKeyView> {
  return db.selectFrom('api_key').select(KEY_VIEW_COLUMNS).where('id', '=', keyId).executeTakeFirstOrThrow();
}

/** Revokes the workspace's live key: it stops working at once. Undefined when there is no such live key. */
export async function revokeApiKey(db: Db, workspaceId: string, keyId: string, now: Date): Promise<ApiKeyView | undefined> {
  return db
    .updateTable('api_key')
    .set({ revoked_at: now })
    .where('id', '=', keyId)
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .returning(KEY_VIEW_COLUMNS)
    .executeTakeFirst();
}
