import { z } from 'zod';
import type { EmulatorReply } from '../server.ts';
import { hubspotErrors } from './errors.ts';
import { defaultSearchProperties, type ObjectType } from './schema.ts';
import { publicObject, type CrmRecord, type HubSpotStore } from './store.ts';
import { shapeError } from './validate.ts';

/**
 * POST /crm/v3/objects/{type}/search as the CRM search guide documents it: filterGroups ORed,
 * the filters of a group ANDed; `properties` picks what each result carries; `limit` per page
 * (at most 100 in v3) and `after` (an offset, as a string in `paging.next.after`); no query can page
 * past the first 10,000 results (documented: a 400). What is not implemented here (sorts, the free
 * text `query`, range and token operators) is a 400 naming it, never a wrong answer.
 *
 * Newly written records take "a few moments" to appear in search results (documented); `lagMs`
 * plays that: a record is found only once it is that old.
 */

const filterSchema = z
  .object({
    propertyName: z.string().min(1),
    operator: z.enum(['EQ', 'NEQ', 'LT', 'LTE', 'GT', 'GTE', 'BETWEEN', 'IN', 'NOT_IN', 'HAS_PROPERTY', 'NOT_HAS_PROPERTY', 'CONTAINS_TOKEN', 'NOT_CONTAINS_TOKEN']),
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
    values: z.array(z.union([z.string(), z.number()])).optional(),
    highValue: z.union([z.string(), z.number()]).optional(),
  })
  .strict();
type Filter = z.infer<typeof filterSchema>;

const searchSchema = z
  .object({
    filterGroups: z.array(z.object({ filters: z.array(filterSchema) }).strict()).optional(),
    sorts: z.array(z.unknown()).optional(),
    query: z.string().optional(),
    properties: z.array(z.string()).optional(),
    limit: z.number().int().optional(),
    after: z.union([z.string(), z.number().int()]).optional(),
  })
  .strict();

/**
 * The limits. filterGroups: 5 (changelog, August 2024). Filters: 6 per group and 18 in all per
 * the current search guide; the same changelog said 10 and 25, so the smaller is kept (a connector
 * within it is within both). IN values: 100, unverified (the docs name no cap).
 */
export const searchLimits = { maxPageSize: 100, defaultPageSize: 10, maxResults: 10_000, maxGroups: 5, maxFiltersPerGroup: 6, maxFilters: 18, maxInValues: 100 };

const implemented = new Set(['EQ', 'NEQ', 'IN', 'NOT_IN', 'HAS_PROPERTY', 'NOT_HAS_PROPERTY']);

export function runSearch(store: HubSpotStore, type: ObjectType, body: unknown, lagMs: number): EmulatorReply {
  const parsed = searchSchema.safeParse(body ?? {});
  if (!parsed.success) return shapeError(parsed.error);
  const req = parsed.data;
  if (req.query !== undefined && req.query !== '') return hubspotErrors.validation('emulator: the free-text `query` is not implemented');
  if (req.sorts && req.sorts.length > 0) return hubspotErrors.validation('emulator: `sorts` is not implemented (results come in creation order)');
  const groups = req.filterGroups ?? [];
  const filters = groups.flatMap((g) => g.filters);
  if (groups.length > searchLimits.maxGroups || groups.some((g) => g.filters.length > searchLimits.maxFiltersPerGroup) || filters.length > searchLimits.maxFilters) {
    return hubspotErrors.validation(`Too many filters: at most ${searchLimits.maxGroups} filterGroups of ${searchLimits.maxFiltersPerGroup} filters, ${searchLimits.maxFilters} in all`);
  }
  for (const f of filters) {
    const problem = filterProblem(store, type, f);
    if (problem) return hubspotErrors.validation(problem);
  }
  const limit = req.limit ?? searchLimits.defaultPageSize;
  if (limit < 0 || limit > searchLimits.maxPageSize) return hubspotErrors.validation(`limit must be between 0 and ${searchLimits.maxPageSize}, got ${limit}`);
  const after = req.after === undefined ? 0 : Number(req.after);
  if (!Number.isInteger(after) || after < 0) return hubspotErrors.validation(`Invalid after: ${String(req.after)}`);
  // Documented: a query cannot page past 10,000 results (the text is unverified).
  if (after >= searchLimits.maxResults) return hubspotErrors.validation(`Cannot page beyond ${searchLimits.maxResults} results (after=${after})`);

  const visibleBefore = store.clock.now() - lagMs;
  const all = store
    .all(type)
    .filter((r) => r.createdAt <= visibleBefore)
    .filter((r) => groups.length === 0 || groups.some((g) => g.filters.every((f) => matches(r, f))));
  const end = Math.min(after + limit, all.length, searchLimits.maxResults);
  const names = req.properties && req.properties.length > 0 ? req.properties : defaultSearchProperties[type];
  const out: Record<string, unknown> = { total: all.length, results: all.slice(after, end).map((r) => publicObject(r, names)) };
  if (end < Math.min(all.length, searchLimits.maxResults)) out.paging = { next: { after: String(end) } };
  return { status: 200, body: out };
}

function filterProblem(store: HubSpotStore, type: ObjectType, f: Filter): string | null {
  if (!implemented.has(f.operator)) return `emulator: operator ${f.operator} is not implemented`;
  // Filtering on a property the object lacks: a 400 (HubSpot's text is unverified).
  if (!store.property(type, f.propertyName)) return `Property ${f.propertyName} does not exist on ${type}`;
  if (f.operator === 'IN' || f.operator === 'NOT_IN') {
    if (!f.values || f.values.length === 0) return `${f.operator} needs a non-empty values list`;
    if (f.values.length > searchLimits.maxInValues) return `${f.operator} takes at most ${searchLimits.maxInValues} values, got ${f.values.length}`;
  } else if ((f.operator === 'EQ' || f.operator === 'NEQ') && f.value === undefined) {
    return `${f.operator} needs a value`;
  }
  return null;
}

/** String values compare without regard to case (unverified; the connector sends lower case either way). */
function matches(r: CrmRecord, f: Filter): boolean {
  const stored = r.properties[f.propertyName];
  const same = (v: string | number | boolean) => stored !== undefined && stored.toLowerCase() === String(v).toLowerCase();
  switch (f.operator) {
    case 'EQ':
      return same(f.value!);
    case 'NEQ':
      return !same(f.value!);
    case 'IN':
      return f.values!.some(same);
    case 'NOT_IN':
      return !f.values!.some(same);
    case 'HAS_PROPERTY':
      return stored !== undefined && stored !== '';
    default:
      return stored === undefined || stored === '';
  }
}
