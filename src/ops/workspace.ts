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
  await store.db.insertInto('workspace').values({ id, name: 'Default', time_zone: 'UTC' }).execute();
  return id;
}

/** A workspace by id or name; without one, the only workspace (or the oldest). */
export async function resolveWorkspace(store: Store, ref: string | undefined): Promise<{ id: string; name: string }> {
  const q = store.db.selectFrom('workspace').select(['id', 'name']).orderBy('created_at');
  if (!ref) {
    const w = await q.executeTakeFirst();
    if (!w) throw cadenzaError('NOT_FOUND', 'no workspace yet: run `cadenza migrate` or `cadenza start` once');
    return w;
  }
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
  const rows = await (isUuid ? q.where('id', '=', ref) : q.where('name', '=', ref)).execute();
  if (rows.length === 0) throw cadenzaError('NOT_FOUND', `workspace '${ref}' not found`);
  if (rows.length > 1) throw cadenzaError('CONFLICT', `several workspaces are named '${ref}': use the id`);
  return rows[0]!;
}
