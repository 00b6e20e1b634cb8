import { sql } from 'kysely';
import type { Db, Tx } from '../../../store/store.ts';
import { filteredLeads, type LeadFilter } from '../../sql/list-leads.ts';

/** lead_list, lead_list_member and lead_tag (migration 0090): the statements, each scoped to its workspace. */

export type ListKind = 'static' | 'segment';

/** `column = any($1::uuid[])`: one parameter however many ids (a list of 100k would pass PostgreSQL's 65,535 parameters). */
const anyOf = (column: 'id' | 'lead_id', ids: readonly string[]) => sql<boolean>`${sql.ref(column)} = any(${[...ids]}::uuid[])`;

export function listsOf(db: Db, workspaceId: string) {
  return db
    .selectFrom('lead_list as l')
    .select(['l.id', 'l.name', 'l.kind', 'l.filter', 'l.created_at', 'l.updated_at'])
    .select((eb) => eb.selectFrom('lead_list_member as m').select(sql<number>`count(*)`.as('n')).whereRef('m.list_id', '=', 'l.id').as('members'))
    .where('l.workspace_id', '=', workspaceId)
    .orderBy('l.name')
    .execute();
}

export function findList(db: Db, workspaceId: string, listId: string) {
  return db.selectFrom('lead_list').select(['id', 'name', 'kind', 'filter', 'created_at', 'updated_at']).where('workspace_id', '=', workspaceId).where('id', '=', listId).executeTakeFirst();
}

/** False when the workspace has a list of that name already. */
export async function insertList(db: Db, l: { id: string; workspaceId: string; name: string; kind: ListKind; filter: unknown; createdBy: string | null; at: Date }): Promise<boolean> {
  const r = await db
    .insertInto('lead_list')
    .values({ id: l.id, workspace_id: l.workspaceId, name: l.name, kind: l.kind, filter: l.filter === null ? null : JSON.stringify(l.filter), created_by: l.createdBy, created_at: l.at, updated_at: l.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'name']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** 'taken': another list has the name. */
export async function updateList(db: Db, workspaceId: string, listId: string, set: { name?: string | undefined; filter?: unknown }, at: Date): Promise<'ok' | 'missing' | 'taken'> {
  if (set.name !== undefined) {
    const clash = await db.selectFrom('lead_list').select('id').where('workspace_id', '=', workspaceId).where('name', '=', set.name).where('id', '<>', listId).executeTakeFirst();
    if (clash) return 'taken';
  }
  const r = await db
    .updateTable('lead_list')
    .set({ updated_at: at, ...(set.name !== undefined ? { name: set.name } : {}), ...(set.filter !== undefined ? { filter: JSON.stringify(set.filter) } : {}) })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', listId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0 ? 'ok' : 'missing';
}

export type DeleteListResult = { ok: true } | { ok: false; why: 'missing' } | { ok: false; why: 'in_use'; name: string; segments: Array<{ id: string; name: string }> };

/**
 * Deletes a list, unless segments select from it (their filter's listId): deleted, such a segment
 * would match nobody and say nothing. The check is in the delete's own statement, so a list never
 * goes while a segment names it at the time of the delete.
 */
export async function deleteList(db: Db, workspaceId: string, listId: string): Promise<DeleteListResult> {
  const r = await sql<{ id: string }>`
    delete from lead_list l
    where l.workspace_id = ${workspaceId} and l.id = ${listId}
      and not exists (select 1 from lead_list s where s.workspace_id = l.workspace_id and s.kind = 'segment' and s.filter ->> 'listId' = ${listId})
    returning l.id`.execute(db);
  if (r.rows.length) return { ok: true };
  const list = await findList(db, workspaceId, listId);
  if (!list) return { ok: false, why: 'missing' };
  const segments = await db
    .selectFrom('lead_list')
    .select(['id', 'name'])
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'segment')
    .where(sql<boolean>`filter ->> 'listId' = ${listId}`)
    .orderBy('name')
    .execute();
  return { ok: false, why: 'in_use', name: list.name, segments };
}

/** Puts the workspace's leads among `leadIds` in the list; returns how many were not in it yet. */
export async function addMembers(db: Db, workspaceId: string, listId: string, leadIds: readonly string[], at: Date): Promise<number> {
  if (!leadIds.length) return 0;
  const r = await sql<{ lead_id: string }>`
    insert into lead_list_member (list_id, lead_id, workspace_id, added_at)
    select ${listId}::uuid, l.id, l.workspace_id, ${at} from lead l where l.workspace_id = ${workspaceId} and l.id = any(${[...leadIds]}::uuid[])
    on conflict (list_id, lead_id) do nothing
    returning lead_id`.execute(db);
  return r.rows.length;
}

export async function removeMembers(db: Db, workspaceId: string, listId: string, leadIds: readonly string[]): Promise<number> {
  if (!leadIds.length) return 0;
  const r = await db.deleteFrom('lead_list_member').where('workspace_id', '=', workspaceId).where('list_id', '=', listId).where(anyOf('lead_id', leadIds)).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Tags the workspace's leads among `leadIds`; returns how many did not have the tag. */
export async function addTag(db: Db, workspaceId: string, leadIds: readonly string[], tag: string, at: Date): Promise<number> {
  if (!leadIds.length) return 0;
  const r = await sql<{ lead_id: string }>`
    insert into lead_tag (lead_id, workspace_id, tag, created_at)
    select l.id, l.workspace_id, ${tag}, ${at} from lead l where l.workspace_id = ${workspaceId} and l.id = any(${[...leadIds]}::uuid[])
    on conflict (lead_id, tag) do nothing
    returning lead_id`.execute(db);
  return r.rows.length;
}

export async function removeTag(db: Db, workspaceId: string, leadIds: readonly string[], tag: string): Promise<number> {
  if (!leadIds.length) return 0;
  const r = await db.deleteFrom('lead_tag').where('workspace_id', '=', workspaceId).where('tag', '=', tag).where(anyOf('lead_id', leadIds)).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Each lead's tags, in tag order. */
export async function tagsOf(db: Db, workspaceId: string, leadIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!leadIds.length) return out;
  const rows = await db.selectFrom('lead_tag').select(['lead_id', 'tag']).where('workspace_id', '=', workspaceId).where(anyOf('lead_id', leadIds)).orderBy('tag').execute();
  for (const r of rows) out.set(r.lead_id, [...(out.get(r.lead_id) ?? []), r.tag]);
  return out;
}

/** The workspace's tags with how many leads have each, in tag order. */
export async function workspaceTags(db: Db, workspaceId: string): Promise<Array<{ tag: string; leads: number }>> {
  const rows = await db.selectFrom('lead_tag').select(['tag', sql<number>`count(*)`.as('n')]).where('workspace_id', '=', workspaceId).groupBy('tag').orderBy('tag').execute();
  return rows.map((r) => ({ tag: r.tag, leads: Number(r.n) }));
}

/**
 * The custom field keys of the workspace's newest `sample` leads (by the (workspace_id, created_at)
 * index), with how many of those have each, in key order, at most `max`: the segment editor's
 * picker. Bounded, so a workspace of 100k leads is not read whole each time the editor opens; a
 * key only older leads hold is typed by hand.
 */
export async function customFieldKeys(db: Db, workspaceId: string, sample: number, max: number): Promise<Array<{ key: string; leads: number }>> {
  const r = await sql<{ key: string; n: number | string }>`
    select k.key, count(*) as n
    from (select custom from lead where workspace_id = ${workspaceId} order by created_at desc, id desc limit ${sample}) l
    cross join lateral jsonb_object_keys(l.custom) as k(key)
    group by k.key
    order by k.key
    limit ${max}`.execute(db);
  return r.rows.map((x) => ({ key: x.key, leads: Number(x.n) }));
}

/**
 * The enrollments of these leads a stop acts on, locked in id order: the live ones (active or
 * paused), and a finished or replied one that still holds an open call or manual task (a call that
 * did not hold the sequence, the owner's notice of a reply): the stop cancels those tasks.
 * `openTasks`: how many open tasks each holds now, for the count the caller reports.
 */
export async function stoppableEnrollmentsOfLeads(tx: Tx, workspaceId: string, leadIds: readonly string[]): Promise<Array<{ id: string; openTasks: number }>> {
  if (!leadIds.length) return [];
  const r = await sql<{ id: string; open_tasks: number | string }>`
    select e.id, (select count(*) from task t where t.enrollment_id = e.id and t.state = 'open') as open_tasks
    from enrollment e
    where e.workspace_id = ${workspaceId} and e.lead_id = any(${[...leadIds]}::uuid[])
      and (e.state in ('active', 'paused')
           or (e.state in ('finished', 'replied') and exists (select 1 from task t where t.enrollment_id = e.id and t.state = 'open')))
    order by e.id
    for update of e`.execute(tx);
  return r.rows.map((x) => ({ id: x.id, openTasks: Number(x.open_tasks) }));
}

/** Deletes the workspace's leads among `leadIds` (their enrollments, tasks, list memberships and tags go with them). */
export async function deleteLeads(db: Db, workspaceId: string, leadIds: readonly string[]): Promise<number> {
  if (!leadIds.length) return 0;
  const r = await db.deleteFrom('lead').where('workspace_id', '=', workspaceId).where(anyOf('id', leadIds)).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** The static lists a lead is in, by name (a segment's matches are not stored). */
export function listsOfLead(db: Db, workspaceId: string, leadId: string) {
  return db
    .selectFrom('lead_list_member as m')
    .innerJoin('lead_list as l', 'l.id', 'm.list_id')
    .select(['l.id', 'l.name'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.lead_id', '=', leadId)
    .orderBy('l.name')
    .execute();
}

/** How many leads a segment's filter selects, counted up to `cap` + 1 (the caller says "more than"). */
export async function countSegment(db: Db, workspaceId: string, f: LeadFilter, cap: number): Promise<number> {
  const q = filteredLeads(db, workspaceId, f).select('lead.id').limit(cap + 1);
  return Number((await db.selectFrom(q.as('m')).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}

/** The export's rows of the leads given, oldest first. */
export function exportRows(db: Db, workspaceId: string, ids: readonly string[]) {
  return filteredLeads(db, workspaceId, { search: '' })
    .where(sql<boolean>`lead.id = any(${[...ids]}::uuid[])`)
    .select(['id', 'email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'time_zone'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
