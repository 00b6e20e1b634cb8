/**
 * "These leads" for a bulk action or an export (issue 19): ids picked on the screen, a list (a
 * static list's members, or a segment's matches now), or a filter. Resolved to the workspace's
 * lead ids, oldest first; ids of another workspace's leads are dropped, never acted on.
 */
import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';
import { filteredLeads, type LeadFilter } from '../sql/list-leads.ts';
import { storedFilter, toLeadFilter, type SegmentFilter } from './segment-filter.ts';
import { findList } from './sql/lead-lists.ts';

export type LeadTarget = { leadIds: string[] } | { listId: string } | { filter: SegmentFilter };

/** The most leads one bulk action takes: the enroll route's own bound. */
export const MAX_TARGET = 100_000;

export type Resolved = { ok: true; leadIds: string[] } | { ok: false; why: 'no_list' | 'too_many' };

/** The filter a list stands for at `now`: a static list's membership, a segment's saved filter (null: a filter that no longer parses). */
export async function listFilter(db: Db, workspaceId: string, listId: string, now: number): Promise<LeadFilter | null | undefined> {
  const list = await findList(db, workspaceId, listId);
  if (!list) return undefined;
  if (list.kind === 'static') return { search: '', listId };
  const f = storedFilter(list.filter);
  return f ? toLeadFilter(f, now) : null;
}

/** The target's leads at `now` (a segment's "within N days" counts back from it). */
export async function resolveTarget(db: Db, workspaceId: string, t: LeadTarget, now: number): Promise<Resolved> {
  let filter: LeadFilter | null;
  if ('leadIds' in t) {
    filter = { search: '' };
    const rows = await filteredLeads(db, workspaceId, filter)
      .where(sql<boolean>`lead.id = any(${[...new Set(t.leadIds)]}::uuid[])`)
      .select('lead.id')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return { ok: true, leadIds: rows.map((r) => r.id) };
  }
  if ('listId' in t) {
    const f = await listFilter(db, workspaceId, t.listId, now);
    if (f === undefined) return { ok: false, why: 'no_list' };
    if (f === null) return { ok: true, leadIds: [] };
    filter = f;
  } else filter = toLeadFilter(t.filter, now);
  const rows = await filteredLeads(db, workspaceId, filter).select('lead.id').orderBy('created_at').orderBy('id').limit(MAX_TARGET + 1).execute();
  if (rows.length > MAX_TARGET) return { ok: false, why: 'too_many' };
  return { ok: true, leadIds: rows.map((r) => r.id) };
}
