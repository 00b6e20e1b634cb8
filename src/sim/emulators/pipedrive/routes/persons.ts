import type { FastifyInstance } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import { intParam, isReply, jsonObject, strictQuery, type PipedriveRouteContext } from '../context.ts';
import { pipedriveErrors } from '../errors.ts';
import { listParams, windowAndSort } from '../list.ts';
import { page } from '../paging.ts';
import { rfc3339, type Person, type PipedriveStore } from '../store.ts';
import { personView } from '../views.ts';

/**
 * Persons over API v2:
 *
 *   GET   /api/v2/persons/search   term, fields (email, name, phone, notes, custom_fields),
 *                                  exact_match, limit, cursor → {data: {items: [{result_score, item}]}}
 *   GET   /api/v2/persons          filter_id, ids, owner_id, include_fields, updated_since/until,
 *                                  sort_by, sort_direction, limit, cursor
 *   PATCH /api/v2/persons/{id}     name, job_title, marketing_status, custom_fields {<key>: value|null}
 *
 * Route names for faults: 'persons.search', 'persons.list', 'persons.update'.
 */
export function registerPersonRoutes(app: FastifyInstance, ctx: PipedriveRouteContext): void {
  app.get('/api/v2/persons/search', (req, reply) =>
    ctx.run('persons.search', req, reply, { api: 'v2', kind: 'search' }, () => {
      const q = strictQuery(req, ['term', 'fields', 'exact_match', 'organization_id', 'include_fields', 'limit', 'cursor']);
      if (isReply(q)) return q;
      const term = q.term ?? '';
      const exact = q.exact_match === 'true';
      if (q.exact_match !== undefined && q.exact_match !== 'true' && q.exact_match !== 'false') return pipedriveErrors.badRequestV2(`Invalid exact_match '${q.exact_match}'`);
      // Documented: at least 2 characters, or 1 with exact_match.
      if (term.length < (exact ? 1 : 2)) return pipedriveErrors.badRequestV2('The search term must be at least 2 characters long (1 with exact_match)');
      const fields = (q.fields ?? 'email,name,phone,notes,custom_fields').split(',');
      for (const f of fields) if (!['email', 'name', 'phone', 'notes', 'custom_fields'].includes(f)) return pipedriveErrors.badRequestV2(`Invalid fields value '${f}'`);
      if (q.organization_id !== undefined || q.include_fields !== undefined) return pipedriveErrors.notImplemented('persons/search organization_id and include_fields');
      const hits = ctx.store.persons.filter((p) => matches(p, term.toLowerCase(), fields, exact));
      const paged = page(hits, q.limit, q.cursor);
      if (isReply(paged)) return paged;
      const items = paged.data.map((p) => ({ result_score: exact ? 1 : 0.5, item: searchItem(p) }));
      return { status: 200, body: { success: true, data: { items }, additional_data: { next_cursor: paged.next_cursor } } };
    }),
  );

  app.get('/api/v2/persons', (req, reply) =>
    ctx.run('persons.list', req, reply, { api: 'v2', kind: 'list' }, () => {
      const q = strictQuery(req, ['filter_id', 'ids', 'owner_id', 'include_fields', ...listParams]);
      if (isReply(q)) return q;
      let persons = ctx.store.persons;
      if (q.filter_id !== undefined) {
        const f = ctx.store.filters.find((x) => x.id === intParam(q.filter_id));
        if (!f) return pipedriveErrors.badRequestV2(`Filter ${q.filter_id} not found`);
        persons = persons.filter((p) => f.personIds.includes(p.id));
      }
      if (q.ids !== undefined) {
        const ids = q.ids.split(',').map((s) => intParam(s));
        if (ids.some((i) => i === null) || ids.length > 100) return pipedriveErrors.badRequestV2('ids must be at most 100 comma-separated integers');
        persons = persons.filter((p) => ids.includes(p.id));
      }
      if (q.owner_id !== undefined) persons = persons.filter((p) => p.owner_id === intParam(q.owner_id));
      const include = new Set((q.include_fields ?? '').split(',').filter(Boolean));
      for (const f of include) if (f !== 'marketing_status') return pipedriveErrors.notImplemented(`include_fields=${f}`);
      const sorted = windowAndSort(persons, q);
      if (isReply(sorted)) return sorted;
      const paged = page(sorted, q.limit, q.cursor);
      if (isReply(paged)) return paged;
      return { status: 200, body: { success: true, data: paged.data.map((p) => personView(ctx.store, p, include)), additional_data: { next_cursor: paged.next_cursor } } };
    }),
  );

  app.patch<{ Params: { id: string } }>('/api/v2/persons/:id', (req, reply) =>
    ctx.run('persons.update', req, reply, { api: 'v2', kind: 'mutate' }, (userId) => {
      const p = ctx.store.person(intParam(req.params.id) ?? -1);
      if (!p) return pipedriveErrors.notFoundV2('Person');
      const body = jsonObject(req);
      if (!body) return pipedriveErrors.badRequestV2('The body must be a JSON object');
      const next = applyPatch(ctx.store, p, body);
      if (isReply(next)) return next;
      const previous = structuredClone(p);
      Object.assign(p, next);
      ctx.store.touch('person', 'change', userId, p, previous);
      return { status: 200, body: { success: true, data: personView(ctx.store, p) } };
    }),
  );
}

function matches(p: Person, term: string, fields: string[], exact: boolean): boolean {
  const values: string[] = [];
  if (fields.includes('email')) values.push(...p.emails.map((e) => e.value));
  if (fields.includes('name')) values.push(p.name);
  if (fields.includes('phone')) values.push(...p.phones.map((e) => e.value));
  // Case-insensitive, exact or substring (Pipedrive's matching rules beyond this are unverified).
  return values.some((v) => (exact ? v.toLowerCase() === term : v.toLowerCase().includes(term)));
}

/** A search hit: v2 search items list emails and phones as plain strings. */
function searchItem(p: Person): Record<string, unknown> {
  return {
    id: p.id,
    type: 'person',
    name: p.name,
    phones: p.phones.map((e) => e.value),
    emails: p.emails.map((e) => e.value),
    primary_email: p.emails.find((e) => e.primary)?.value ?? null,
    visible_to: 3,
    owner: { id: p.owner_id },
    organization: null,
    custom_fields: [],
    notes: [],
    update_time: rfc3339(p.update_time),
  };
}

const patchable = new Set(['name', 'job_title', 'marketing_status', 'custom_fields']);

function applyPatch(store: PipedriveStore, p: Person, body: Record<string, unknown>): Partial<Person> | EmulatorReply {
  const next: Partial<Person> = {};
  for (const [k, v] of Object.entries(body)) {
    if (!patchable.has(k)) return pipedriveErrors.badRequestV2(`'${k}' is not a field the emulator's PATCH /persons takes (${[...patchable].join(', ')})`);
    if (k === 'name') {
      if (typeof v !== 'string' || v.trim() === '') return pipedriveErrors.badRequestV2("'name' must be a non-empty string");
      next.name = v;
    } else if (k === 'job_title') {
      if (v !== null && typeof v !== 'string') return pipedriveErrors.badRequestV2("'job_title' must be a string");
      next.job_title = v;
    } else if (k === 'marketing_status') {
      if (!['no_consent', 'unsubscribed', 'subscribed', 'archived'].includes(v as string)) return pipedriveErrors.badRequestV2(`Invalid marketing_status '${String(v)}'`);
      next.marketing_status = v as Person['marketing_status'];
    } else {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return pipedriveErrors.badRequestV2("'custom_fields' must be an object");
      const custom = { ...p.custom_fields };
      for (const [key, value] of Object.entries(v)) {
        const field = store.personFieldByKey(key);
        if (!field) return pipedriveErrors.badRequestV2(`Custom field '${key}' does not exist`);
        const bad = invalidValue(field.field_type, value);
        if (bad) return pipedriveErrors.badRequestV2(`Invalid value for custom field '${field.name}': ${bad}`);
        if (value === null) delete custom[key];
        else custom[key] = value;
      }
      next.custom_fields = custom;
    }
  }
  return next;
}

/** Why `value` does not fit a field of `type`, or null (null clears any field). */
function invalidValue(type: string, value: unknown): string | null {
  if (value === null) return null;
  switch (type) {
    case 'varchar':
      return typeof value === 'string' && value.length <= 255 ? null : 'expected a string of at most 255 characters';
    case 'text':
      return typeof value === 'string' ? null : 'expected a string';
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? null : 'expected YYYY-MM-DD';
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'expected a number';
    default:
      return `fields of type ${type} are not served by the emulator`;
  }
}
