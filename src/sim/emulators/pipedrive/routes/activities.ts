import type { FastifyInstance } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import { intParam, isReply, jsonObject, strictQuery, type PipedriveRouteContext } from '../context.ts';
import { pipedriveErrors } from '../errors.ts';
import { listParams, windowAndSort } from '../list.ts';
import { page } from '../paging.ts';
import { defaultActivityTypes, type Activity, type PipedriveStore } from '../store.ts';
import { activityView } from '../views.ts';

/**
 * Activities over API v2:
 *
 *   POST /api/v2/activities   subject, type (an activity type's key_string), owner_id, due_date
 *                             (YYYY-MM-DD), due_time (HH:MM, UTC), duration (HH:MM), done (boolean),
 *                             busy, note (HTML), participants [{person_id, primary}].
 *                             `person_id` is read-only in v2: Pipedrive answers 400 "'person_id' is a
 *                             read-only field. Add a primary participant to set 'person_id'
 *                             instead." (quoted on devcommunity.pipedrive.com; the migration guide
 *                             says the same). No idempotency key: every POST creates an activity.
 *   GET  /api/v2/activities   person_id, owner_id, done, updated_since/until, sort_by,
 *                             sort_direction, limit, cursor
 *
 * Activities have no custom fields a client can create through the API that the emulator knows
 * of (GET /api/v2/activityFields lists fields; creating activity custom fields is not in the
 * documentation found), so nothing else is accepted: deal, lead, org and project links are a loud
 * gap, anything else a 400.
 *
 * Route names for faults: 'activities.create', 'activities.list'.
 */
const served = new Set(['subject', 'type', 'owner_id', 'due_date', 'due_time', 'duration', 'done', 'busy', 'note', 'participants']);
const unserved = new Set(['deal_id', 'lead_id', 'org_id', 'project_id', 'location', 'attendees', 'public_description', 'priority']);

export function registerActivityRoutes(app: FastifyInstance, ctx: PipedriveRouteContext): void {
  app.post('/api/v2/activities', (req, reply) =>
    ctx.run('activities.create', req, reply, { api: 'v2', kind: 'mutate' }, (userId) => {
      const body = jsonObject(req);
      if (!body) return pipedriveErrors.badRequestV2('The body must be a JSON object');
      const a = parseActivity(ctx.store, body, userId);
      if (isReply(a)) return a;
      ctx.store.activities.push(a);
      ctx.store.touch('activity', 'create', userId, a, null);
      return { status: 200, body: { success: true, data: activityView(a) } };
    }),
  );

  app.get('/api/v2/activities', (req, reply) =>
    ctx.run('activities.list', req, reply, { api: 'v2', kind: 'list' }, () => {
      const q = strictQuery(req, ['person_id', 'owner_id', 'done', ...listParams]);
      if (isReply(q)) return q;
      let list = ctx.store.activities;
      if (q.person_id !== undefined) list = list.filter((a) => a.participants.some((p) => p.person_id === intParam(q.person_id)));
      if (q.owner_id !== undefined) list = list.filter((a) => a.owner_id === intParam(q.owner_id));
      if (q.done !== undefined) {
        if (q.done !== 'true' && q.done !== 'false') return pipedriveErrors.badRequestV2(`Invalid done '${q.done}'`);
        list = list.filter((a) => a.done === (q.done === 'true'));
      }
      const sorted = windowAndSort(list, q);
      if (isReply(sorted)) return sorted;
      const paged = page(sorted, q.limit, q.cursor);
      if (isReply(paged)) return paged;
      return { status: 200, body: { success: true, data: paged.data.map(activityView), additional_data: { next_cursor: paged.next_cursor } } };
    }),
  );
}

function parseActivity(store: PipedriveStore, b: Record<string, unknown>, userId: number): Activity | EmulatorReply {
  const bad = pipedriveErrors.badRequestV2;
  for (const k of Object.keys(b)) {
    if (k === 'person_id') return bad("'person_id' is a read-only field. Add a primary participant to set 'person_id' instead.");
    if (unserved.has(k)) return pipedriveErrors.notImplemented(`activities.${k}`);
    if (!served.has(k)) return bad(`Unknown field '${k}'`);
  }
  const str = (k: string, re?: RegExp): string | null | EmulatorReply => {
    const v = b[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || (re && !re.test(v))) return bad(`Invalid value for '${k}'`);
    return v;
  };
  const type = str('type') ?? 'call';
  if (isReply(type) || !defaultActivityTypes.has(type)) return bad(`Invalid activity type '${String(b.type)}'`);
  const subject = str('subject');
  const dueDate = str('due_date', /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);
  const dueTime = str('due_time', /^([01]\d|2[0-3]):[0-5]\d$/);
  const duration = str('duration', /^\d{2}:[0-5]\d$/);
  const note = str('note');
  for (const v of [subject, dueDate, dueTime, duration, note]) if (isReply(v)) return v;
  for (const k of ['done', 'busy']) if (b[k] !== undefined && typeof b[k] !== 'boolean') return bad(`'${k}' must be a boolean`);
  let owner = userId;
  if (b.owner_id !== undefined) {
    if (typeof b.owner_id !== 'number' || !store.users.some((u) => u.id === b.owner_id)) return bad(`User ${String(b.owner_id)} not found`);
    owner = b.owner_id;
  }
  const participants: Activity['participants'] = [];
  if (b.participants !== undefined) {
    if (!Array.isArray(b.participants)) return bad("'participants' must be an array");
    for (const p of b.participants as unknown[]) {
      const o = p as Record<string, unknown>;
      if (typeof o !== 'object' || o === null || Object.keys(o).some((k) => k !== 'person_id' && k !== 'primary')) return bad("A participant is {person_id, primary} ('primary_flag' is how GET shows it, not what POST takes)");
      if (typeof o.person_id !== 'number' || !store.person(o.person_id)) return bad(`Person ${String(o.person_id)} not found`);
      participants.push({ person_id: o.person_id, primary: o.primary === true });
    }
    if (participants.filter((p) => p.primary).length > 1) return bad('Only one participant can be primary');
  }
  const now = store.now();
  return {
    id: store.id('activity'),
    subject: (subject as string | null) ?? 'Call',
    type,
    owner_id: owner,
    participants,
    due_date: dueDate as string | null,
    due_time: dueTime as string | null,
    duration: duration as string | null,
    done: b.done === true,
    busy: b.busy === true,
    note: note as string | null,
    add_time: now,
    update_time: now,
  };
}
