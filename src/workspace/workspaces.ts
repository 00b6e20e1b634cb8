import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Store } from '../store/store.ts';

/** A fresh install has one workspace, so the CLI works before anyone signs up. */
export async function ensureDefaultWorkspace(store: Store, deps: { clock: Clock; random: Random }): Promise<string> {
  const first = await store.db.selectFrom('workspace').select('id').orderBy('created_at').executeTakeFirst();
  if (first) return first.id;
  const id = newId(deps.clock.now(), deps.random);
  await store.db.insertInto('workspace').values({ id, name: DEFAULT_NAME, time_zone: 'UTC' }).execute();
  return id;
}

const DEFAULT_NAME = 'Default';

/** Every workspace, oldest first, as `cadenza workspace list` shows them. */
export async function listWorkspaces(store: Store) {
  return store.db.selectFrom('workspace').select(['id', 'name', 'time_zone', 'country']).orderBy('created_at').execute();
}

/**
 * A workspace made by `cadenza workspace create`: it takes the place of the unused Default one
 * when there is one (unusedDefaultWorkspace), as the first-run setup does, rather than leave two.
 */
export async function createNamedWorkspace(
  store: Store,
  deps: { clock: Clock; random: Random },
  values: { name: string; time_zone: string; country: string | null },
): Promise<{ id: string; replacedDefault: boolean }> {
  const unused = await unusedDefaultWorkspace(store);
  if (unused) {
    await store.db.updateTable('workspace').set(values).where('id', '=', unused).execute();
    return { id: unused, replacedDefault: true };
  }
  const id = newId(deps.clock.now(), deps.random);
  await store.db.insertInto('workspace').values({ id, ...values }).execute();
  return { id, replacedDefault: false };
}

/**
 * The workspace a fresh install made for itself (ensureDefaultWorkspace) while nobody has used it
 * yet: named Default, with no member, mailbox, lead or sequence. Creating a first workspace of
 * one's own takes its place instead of leaving two, as the web app's first-run setup does.
 */
export async function unusedDefaultWorkspace(store: Store): Promise<string | null> {
  const all = await store.db.selectFrom('workspace').select(['id', 'name']).limit(2).execute();
  if (all.length !== 1 || all[0]!.name !== DEFAULT_NAME) return null;
  const id = all[0]!.id;
  for (const table of ['app_user', 'mailbox', 'lead', 'sequence'] as const) {
    if (await store.db.selectFrom(table).select('workspace_id').where('workspace_id', '=', id).limit(1).executeTakeFirst()) return null;
  }
  return id;
}

/**
 * A workspace by id or name. Without one: the only workspace; with several, the command is
 * refused with their names, since guessing would write into somebody else's workspace.
 */
export async function resolveWorkspace(store: Store, ref: string | undefined): Promise<{ id: string; name: string }> {
  const q = store.db.selectFrom('workspace').select(['id', 'name']).orderBy('created_at');
  if (!ref) {
    const all = await q.limit(21).execute();
    if (all.length === 0) throw cadenzaError('NOT_FOUND', 'no workspace yet: run `cadenza migrate` or `cadenza start` once');
    if (all.length > 1) {
      const names = all.slice(0, 20).map((w) => `${w.name} (${w.id})`);
      throw cadenzaError('CONFLICT', `there are several workspaces; name one with --workspace <id|name>: ${names.join(', ')}${all.length > 20 ? ', …' : ''}`, {
        workspaces: all.slice(0, 20),
      });
    }
    return all[0]!;
  }
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
  const rows = await (isUuid ? q.where('id', '=', ref) : q.where('name', '=', ref)).execute();
  if (rows.length === 0) throw cadenzaError('NOT_FOUND', `workspace '${ref}' not found`);
  if (rows.length > 1) throw cadenzaError('CONFLICT', `several workspaces are named '${ref}': use the id`);
  return rows[0]!;
}
