import type { EmulatorReply } from '../server.ts';
import type { Query } from './context.ts';
import { pipedriveErrors } from './errors.ts';

/**
 * What the v2 list endpoints (persons, deals, activities) share: `updated_since` (update_time
 * later than or equal to it) and `updated_until` (earlier than it), both RFC 3339; `sort_by` id,
 * update_time or add_time (default id); `sort_direction` asc or desc (default asc). Ties are broken
 * by id ascending (Pipedrive's tie order is unverified: a reader must not depend on it).
 */
export const listParams = ['updated_since', 'updated_until', 'sort_by', 'sort_direction', 'limit', 'cursor'] as const;

export function windowAndSort<T extends { id: number; update_time: number; add_time: number }>(items: readonly T[], q: Query): T[] | EmulatorReply {
  const since = instant(q, 'updated_since');
  const until = instant(q, 'updated_until');
  if (typeof since === 'object') return since;
  if (typeof until === 'object') return until;
  const by = q.sort_by ?? 'id';
  if (by !== 'id' && by !== 'update_time' && by !== 'add_time') return pipedriveErrors.badRequestV2(`Invalid sort_by '${by}' (id, update_time, add_time)`);
  const dir = q.sort_direction ?? 'asc';
  if (dir !== 'asc' && dir !== 'desc') return pipedriveErrors.badRequestV2(`Invalid sort_direction '${dir}' (asc, desc)`);
  const sign = dir === 'asc' ? 1 : -1;
  return items
    .filter((x) => (since === undefined || x.update_time >= since) && (until === undefined || x.update_time < until))
    .sort((a, b) => sign * (a[by] - b[by]) || a.id - b.id);
}

/** RFC 3339 with a zone (Z or ±hh:mm), fractions allowed; undefined when absent. */
function instant(q: Query, name: string): number | undefined | EmulatorReply {
  const v = q[name];
  if (v === undefined) return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && Number.isFinite(Date.parse(v));
  return ok ? Date.parse(v) : pipedriveErrors.badRequestV2(`Invalid ${name} '${v}': expected RFC 3339, e.g. 2025-01-01T10:20:00Z`);
}
