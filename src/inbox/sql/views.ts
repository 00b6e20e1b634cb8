/**
 * A person's saved views (inbox_view): a name and a filter set (filter.ts), theirs alone. The
 * filters are stored as validated; reading them back validates again, so a view saved by an
 * older version that no longer parses is shown without its filters rather than breaking the list.
 */
import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db } from '../../store/store.ts';
import { inboxFilterSchema, type InboxFilter } from '../filter.ts';

/** Views per person: a list a menu can show. */
export const MAX_VIEWS = 50;

export async function listViews(db: Db, workspaceId: string, userId: string) {
  const rows = await db.selectFrom('inbox_view').select(['id', 'name', 'filters', 'created_at']).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).orderBy(({ fn }) => fn('lower', ['name'])).execute();
  return rows.map((r) => {
    const f = inboxFilterSchema.safeParse(r.filters);
    return { id: r.id, name: r.name, filters: f.success ? f.data : {}, createdAt: r.created_at };
  });
}

// -- name: inbox-save-view
export async function saveView(db: Db, deps: { clock: Clock; random: Random }, workspaceId: string, userId: string, name: string, filters: InboxFilter) {
  const count = await db.selectFrom('inbox_view').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_VIEWS) throw cadenzaError('CONFLICT', `you have ${MAX_VIEWS} saved views already: delete one first`);
  const now = deps.clock.now();
  try {
    const r = await db
      .insertInto('inbox_view')
      .values({ id: newId(now, deps.random), workspace_id: workspaceId, user_id: userId, name, filters: JSON.stringify(filters), created_at: new Date(now) })
      .returning(['id', 'name', 'created_at'])
      .executeTakeFirstOrThrow();
    return { id: r.id, name: r.name, filters, createdAt: r.created_at };
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw cadenzaError('CONFLICT', `you already have a view named "${name}"`, { field: 'name' });
    throw e;
  }
}

/** Deletes one of the person's views; false when they have no such view. */
export async function deleteView(db: Db, workspaceId: string, userId: string, viewId: string): Promise<boolean> {
  const r = await db.deleteFrom('inbox_view').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('id', '=', viewId).executeTakeFirst();
  return r.numDeletedRows > 0n;
}
