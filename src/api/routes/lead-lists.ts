import { z } from 'zod';
import { csvRecord } from '../../common/csv-write.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { normalFilter, segmentFilter, storedFilter, tagText, toLeadFilter } from '../../leads/lists/segment-filter.ts';
import { addMembers, addTag, countSegment, customFieldKeys, deleteList, exportRows, findList, insertList, listsOf, removeMembers, removeTag, tagsOf, updateList, workspaceTags } from '../../leads/lists/sql/lead-lists.ts';
import { deleteLeadsInBatches, stopLeadsInBatches } from '../../leads/lists/bulk-batches.ts';
import { MAX_TARGET, resolveTarget, type LeadTarget } from '../../leads/lists/targets.ts';
import { findSequenceId } from '../../sequence/sql/sequences.ts';
import type { WorkspaceAccess } from '../auth/access.ts';
import { audit } from '../audit/actor.ts';
import { enrollmentService, type ApiContext } from '../context.ts';
import { enrollLeads } from '../enroll-leads.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { enrollOutcome } from './sequences.ts';

/**
 * Lead lists, saved segments and tags (issue 19; docs/api.md "Lists, segments and tags"), and the
 * bulk actions on a selection of leads, a list or a segment: tag, add to or remove from a list,
 * enroll (through the enroll path a sequence's Launch takes), stop, export as CSV, delete.
 */

/** A segment counts its matches up to here (a count of every match would scan them all). */
const COUNT_CAP = 10_000;

/** The custom field keys offered are read from this many newest leads, and at most this many listed. */
const KEY_SAMPLE = 20_000;
const MAX_KEYS = 200;

const listBody = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: z.enum(['static', 'segment']).describe('static: the leads put in it; segment: the leads matching its filter now'),
    filter: segmentFilter.nullable().describe('Segments: the saved filter'),
    leads: z.number().int().describe(`Members, or a segment's matches counted up to ${COUNT_CAP.toLocaleString('en')}`),
    leadsExact: z.boolean().describe('false when a segment has more matches than were counted'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'LeadList' });

const listName = z.string().trim().min(1, 'a list needs a name').max(200);

const target = z
  .union([
    z.object({ leadIds: z.array(z.uuid()).min(1).max(MAX_TARGET).describe('Leads picked one by one') }).strict(),
    z.object({ listId: z.uuid().describe("A static list's members, or a segment's matches now") }).strict(),
    z.object({ filter: segmentFilter.describe('Every lead the filter matches now') }).strict(),
  ])
  .describe('Which leads');

const action = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tag'), tag: tagText }),
  z.object({ kind: z.literal('untag'), tag: tagText }),
  z.object({ kind: z.literal('add_to_list'), listId: z.uuid() }),
  z.object({ kind: z.literal('remove_from_list'), listId: z.uuid() }),
  z.object({ kind: z.literal('enroll'), sequenceId: z.uuid() }),
  z.object({ kind: z.literal('stop') }).describe("Stops the leads' live (active or paused) enrollments"),
  z.object({ kind: z.literal('delete') }).describe('Admins: deletes the leads with their enrollments and tasks'),
]);

async function viewList(ctx: ApiContext, workspaceId: string, l: Awaited<ReturnType<typeof listsOf>>[number]): Promise<z.output<typeof listBody>> {
  let leads = Number(l.members ?? 0);
  let exact = true;
  if (l.kind === 'segment') {
    const f = storedFilter(l.filter);
    if (!f) leads = 0;
    else {
      const n = await countSegment(ctx.store.db, workspaceId, toLeadFilter(f, ctx.clock.now()), COUNT_CAP);
      leads = Math.min(n, COUNT_CAP);
      exact = n <= COUNT_CAP;
    }
  }
  return { id: l.id, name: l.name, kind: l.kind, filter: l.kind === 'segment' ? storedFilter(l.filter) : null, leads, leadsExact: exact, createdAt: l.created_at.toISOString(), updatedAt: l.updated_at.toISOString() };
}

async function oneList(ctx: ApiContext, workspaceId: string, listId: string) {
  const l = (await listsOf(ctx.store.db, workspaceId)).find((x) => x.id === listId);
  if (!l) throw cadenzaError('NOT_FOUND', 'no such list in this workspace');
  return viewList(ctx, workspaceId, l);
}

/**
 * The ids a filter names are the workspace's: a sequence of another workspace (or none) is refused,
 * not kept as a filter that silently matches nobody. A segment may name a static list (its
 * members), never another segment: a segment is one filter.
 */
async function checkFilterIds(ctx: ApiContext, workspaceId: string, f: { listId?: string | undefined; sequenceId?: string | undefined } | undefined, field: string): Promise<void> {
  if (f?.sequenceId && !(await findSequenceId(ctx.store.db, workspaceId, f.sequenceId))) {
    throw cadenzaError('INVALID_INPUT', `${field}.sequenceId: no such sequence in this workspace`, { field: `${field}.sequenceId` });
  }
  const listId = f?.listId;
  if (!listId) return;
  field = `${field}.listId`;
  const l = await findList(ctx.store.db, workspaceId, listId);
  if (!l) throw cadenzaError('INVALID_INPUT', `${field}: no such list in this workspace`, { field });
  if (l.kind !== 'static') throw cadenzaError('INVALID_INPUT', `${field}: a segment can narrow to a static list, not to another segment`, { field });
}

async function targetIds(ctx: ApiContext, workspaceId: string, t: LeadTarget): Promise<string[]> {
  if ('filter' in t) await checkFilterIds(ctx, workspaceId, t.filter, 'target.filter');
  const r = await resolveTarget(ctx.store.db, workspaceId, t, ctx.clock.now());
  if (!r.ok) throw r.why === 'no_list' ? cadenzaError('NOT_FOUND', 'no such list in this workspace') : cadenzaError('INVALID_INPUT', `more than ${MAX_TARGET.toLocaleString('en')} leads: narrow the filter or split the list`, { field: 'target' });
  return r.leadIds;
}

async function staticList(ctx: ApiContext, ws: WorkspaceAccess, listId: string) {
  const l = await findList(ctx.store.db, ws.workspaceId, listId);
  if (!l) throw cadenzaError('NOT_FOUND', 'no such list in this workspace');
  if (l.kind !== 'static') throw cadenzaError('CONFLICT', `${l.name} is a segment: its leads are the ones its filter matches, not added by hand`);
  return l;
}

const LEAD_CSV_COLUMNS = ['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'time_zone', 'tags'] as const;

export const leadListRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/lead-lists',
    summary: 'Lead lists and saved segments, by name, with their size',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ lists: z.array(listBody) }),
    handler: async ({ ctx, ws }) => ({ lists: await Promise.all((await listsOf(ctx.store.db, ws.workspaceId)).map((l) => viewList(ctx, ws.workspaceId, l))) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/lead-lists',
    summary: 'Create a static list (empty) or a segment (a saved filter over lead fields and activity)',
    tags: ['leads'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    body: z.union([z.object({ name: listName, kind: z.literal('static') }).strict(), z.object({ name: listName, kind: z.literal('segment'), filter: segmentFilter }).strict()]),
    example: () => ({ body: { name: 'German leads not enrolled', kind: 'segment' as const, filter: { country: 'DE', enrolled: false } } }),
    response: listBody,
    handler: async ({ ctx, ws, body }) => {
      const filter = body.kind === 'segment' ? normalFilter(body.filter) : null;
      await checkFilterIds(ctx, ws.workspaceId, filter ?? undefined, 'filter');
      const id = newId(ctx.clock.now(), ctx.random);
      if (!(await insertList(ctx.store.db, { id, workspaceId: ws.workspaceId, name: body.name, kind: body.kind, filter, createdBy: ws.userId, at: new Date(ctx.clock.now()) })))
        throw cadenzaError('CONFLICT', `a list named ${body.name} exists already`, { field: 'name' });
      return oneList(ctx, ws.workspaceId, id);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/lead-lists/:listId',
    summary: "Rename a list, or change a segment's filter",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({ listId: z.uuid() }),
    body: z.object({ name: listName.optional(), filter: segmentFilter.optional() }).strict(),
    example: () => ({ body: { name: 'Renamed list' } }),
    response: listBody,
    handler: async ({ ctx, ws, params, body }) => {
      const l = await findList(ctx.store.db, ws.workspaceId, params.listId);
      if (!l) throw cadenzaError('NOT_FOUND', 'no such list in this workspace');
      if (body.filter && l.kind !== 'segment') throw cadenzaError('INVALID_INPUT', 'filter: a static list has no filter (its leads are added by hand)', { field: 'filter' });
      await checkFilterIds(ctx, ws.workspaceId, body.filter, 'filter');
      const r = await updateList(ctx.store.db, ws.workspaceId, params.listId, { name: body.name, filter: body.filter && normalFilter(body.filter) }, new Date(ctx.clock.now()));
      if (r === 'taken') throw cadenzaError('CONFLICT', `a list named ${body.name} exists already`, { field: 'name' });
      return oneList(ctx, ws.workspaceId, params.listId);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/lead-lists/:listId',
    summary: 'Delete a list or segment (its leads stay); a static list that segments select from is refused (409, naming them)',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({ listId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      const r = await deleteList(ctx.store.db, ws.workspaceId, params.listId);
      if (r.ok) return { ok: true as const };
      if (r.why === 'missing') throw cadenzaError('NOT_FOUND', 'no such list in this workspace');
      const names = r.segments.map((x) => `“${x.name}”`).join(', ');
      throw cadenzaError('CONFLICT', `“${r.name}” is used by ${r.segments.length === 1 ? 'the segment' : `${r.segments.length} segments:`} ${names}: change or delete ${r.segments.length === 1 ? 'it' : 'them'} first, or it would match nobody`, {
        segments: r.segments,
      });
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/lead-tags',
    summary: "The workspace's tags with how many leads have each",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ tags: z.array(z.object({ tag: z.string(), leads: z.number().int() })) }),
    handler: async ({ ctx, ws }) => ({ tags: await workspaceTags(ctx.store.db, ws.workspaceId) }),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/lead-fields',
    summary: "The custom field keys of the workspace's newest leads, for a segment's field conditions",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({
      custom: z
        .array(z.object({ key: z.string(), leads: z.number().int().describe(`Of the newest ${KEY_SAMPLE.toLocaleString('en')} leads, how many have it`) }))
        .describe(`Keys in order, at most ${MAX_KEYS}, read from the newest ${KEY_SAMPLE.toLocaleString('en')} leads`),
    }),
    handler: async ({ ctx, ws }) => ({ custom: await customFieldKeys(ctx.store.db, ws.workspaceId, KEY_SAMPLE, MAX_KEYS) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/bulk',
    summary: 'One action on many leads (picked, a list, a segment or a filter): tag or untag, add to or remove from a static list, enroll in a sequence (each refusal with its reason), stop their live enrollments, delete (admins)',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ target, action }).strict(),
    example: (ids) => ({ body: { target: { leadIds: [ids.leadId ?? '00000000-0000-4000-8000-000000000000'] }, action: { kind: 'tag' as const, tag: 'fair-2026' } } }),
    response: z
      .object({
        leads: z.number().int().describe('Leads the target resolved to'),
        changed: z.number().int().describe('tag, untag, add_to_list, remove_from_list, delete: leads changed (one that had the tag already is not); stop: enrollments stopped; enroll: leads enrolled'),
        enroll: enrollOutcome.optional().describe('enroll: what the enrollment did, each refusal with its reason'),
        tasksCancelled: z.number().int().optional().describe('stop: open call and manual tasks closed (of the enrollments stopped, and of finished or replied ones that still held one)'),
      })
      .meta({ id: 'BulkLeadResult' }),
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const a = body.action;
      if (a.kind === 'delete' && ws.role === 'member') throw cadenzaError('FORBIDDEN', 'only an owner or an admin deletes leads');
      const at = new Date(ctx.clock.now());
      // Checked before the target is read: a wrong list or sequence is said as such, even for no leads.
      if (a.kind === 'add_to_list' || a.kind === 'remove_from_list') await staticList(ctx, ws, a.listId);
      const sequenceId = a.kind === 'enroll' ? await findSequenceId(ctx.store.db, ws.workspaceId, a.sequenceId) : undefined;
      if (a.kind === 'enroll' && !sequenceId) throw cadenzaError('NOT_FOUND', 'no such sequence');
      const ids = await targetIds(ctx, ws.workspaceId, body.target);
      const db = ctx.store.db;
      switch (a.kind) {
        case 'tag':
          return { leads: ids.length, changed: await addTag(db, ws.workspaceId, ids, a.tag, at) };
        case 'untag':
          return { leads: ids.length, changed: await removeTag(db, ws.workspaceId, ids, a.tag) };
        case 'add_to_list':
          return { leads: ids.length, changed: await addMembers(db, ws.workspaceId, a.listId, ids, at) };
        case 'remove_from_list':
          return { leads: ids.length, changed: await removeMembers(db, ws.workspaceId, a.listId, ids) };
        case 'enroll': {
          const r = await enrollLeads(ctx, ws.workspaceId, sequenceId!, ids);
          return { leads: ids.length, changed: r.enrolled, enroll: r };
        }
        case 'stop': {
          // Batched (bulk-batches.ts); the log says what the committed batches did even when one fails midway.
          const r = { batches: 0, stopped: 0, tasksCancelled: 0 };
          try {
            await stopLeadsInBatches(db, enrollmentService(ctx), ws.workspaceId, ids, { reason: 'stopped by hand', now: at.getTime(), progress: r });
          } finally {
            await audit(c, { action: 'leads.bulk_stopped', target: `${ids.length} leads`, detail: { target: targetDetail(body.target, ids), leads: ids.length, stopped: r.stopped, tasksCancelled: r.tasksCancelled, batches: r.batches } });
          }
          return { leads: ids.length, changed: r.stopped, tasksCancelled: r.tasksCancelled };
        }
        case 'delete': {
          const r = { batches: 0, deleted: 0 };
          try {
            await deleteLeadsInBatches(db, ws.workspaceId, ids, { progress: r });
          } finally {
            await audit(c, { action: 'leads.bulk_deleted', target: `${ids.length} leads`, detail: { target: targetDetail(body.target, ids), leads: ids.length, deleted: r.deleted, batches: r.batches } });
          }
          return { leads: ids.length, changed: r.deleted };
        }
      }
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/export',
    summary: 'Leads (picked, a list, a segment or a filter) as CSV: email, names, company, title, phone, country, time zone, tags',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ target }).strict(),
    example: (ids) => ({ body: { target: { leadIds: [ids.leadId ?? '00000000-0000-4000-8000-000000000000'] } } }),
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, body, reply } = c;
      const ids = await targetIds(ctx, ws.workspaceId, body.target);
      const rows = ids.length ? await exportRows(ctx.store.db, ws.workspaceId, ids) : [];
      const tags = await tagsOf(ctx.store.db, ws.workspaceId, ids);
      const lines = [LEAD_CSV_COLUMNS.join(','), ...rows.map((r) => csvRecord([r.email, r.first_name ?? '', r.last_name ?? '', r.company ?? '', r.title ?? '', r.phone ?? '', r.country ?? '', r.time_zone ?? '', (tags.get(r.id) ?? []).join(';')], ',', ''))];
      await audit(c, { action: 'export.downloaded', target: 'leads.csv', detail: { rows: rows.length, target: targetDetail(body.target, ids) } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="leads.csv"');
      return `${lines.join('\r\n')}\r\n`;
    },
  }),
];

/** Which leads an action took, for the audit log: the list or filter as given, or how many were picked. */
function targetDetail(t: LeadTarget, ids: readonly string[]): Record<string, unknown> {
  return 'listId' in t ? { listId: t.listId } : 'filter' in t ? { filter: t.filter } : { picked: ids.length };
}
