/**
 * A workspace's own row as its members see and change it: name, time zone, holidays country and
 * the settings document (tracking domain, audit retention…). Creating one with its first owner is
 * api/auth/accounts.ts's; creating, listing and naming them from the CLI is workspaces.ts's.
 */
import { sql } from 'kysely';
import type { Db } from '../store/store.ts';

/** The workspace's name, zone, country and settings, or undefined. */
export async function workspaceRow(db: Db, workspaceId: string) {
  return db.selectFrom('workspace').select(['id', 'name', 'time_zone', 'country', 'settings']).where('id', '=', workspaceId).executeTakeFirst();
}

/** The workspace's name (the workspace exists: the caller is in it). */
export async function workspaceName(db: Db, workspaceId: string): Promise<string> {
  return (await db.selectFrom('workspace').select('name').where('id', '=', workspaceId).executeTakeFirstOrThrow()).name;
}

/**
 * Changes the given columns and merges the patch into the settings document (jsonb ||), then
 * strips its nulls (jsonb_strip_nulls): a key patched to null is removed, so that a cleared
 * tracking domain falls back to the public URL.
 */
export async function updateWorkspace(
  db: Db,
  workspaceId: string,
  set: { name?: string; time_zone?: string; country?: string | null },
  settingsPatch: Record<string, unknown> | undefined,
): Promise<void> {
  await db
    .updateTable('workspace')
    .set({ ...set, ...(settingsPatch ? { settings: sql`jsonb_strip_nulls(settings || ${JSON.stringify(settingsPatch)}::jsonb)` } : {}) })
    .where('id', '=', workspaceId)
    .execute();
}
