import { Readable } from 'node:stream';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { importLeads, type ColumnTarget } from '../../leads/index.ts';
import { leadColumns } from '../../leads/lead-fields.ts';
import { phoneFlagCodes } from '../../leads/phone.ts';
import { deleteLead, findLead, insertLead, updateLead } from '../../leads/sql/leads.ts';
import { refuseErased } from '../../leads/erased.ts';
import { listLeads } from '../../leads/sql/list-leads.ts';
import { leadCalls, leadEnrollments, timelineSources } from '../../leads/sql/lead-timeline.ts';
import { newId } from '../../common/ids.ts';
import { decodeCursor, page, pageQuery } from '../http/pagination.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { inboxReader } from '../auth/inbox-scope.ts';
import type { EnrollmentState } from '../../sequence/model.ts';
import { VERDICTS, type Verdict } from '../../leads/hygiene/reasons.ts';
import { LEAD_HYGIENE_FILTERS, type LeadFilter } from '../../leads/sql/list-leads.ts';
import { tagText } from '../../leads/lists/segment-filter.ts';
import { listsOfLead, tagsOf } from '../../leads/lists/sql/lead-lists.ts';
import { listFilter } from '../../leads/lists/targets.ts';

/** A column's target as the mapping names it: a field, custom.<name>, or '-'. */
function targetText(t: ColumnTarget): string {
  return t.kind === 'field' ? t.field : t.kind === 'custom' ? `custom.${t.name}` : '-';
}

/** One reason of a list-hygiene verdict (src/leads/hygiene/reasons.ts). */
export const hygieneReason = z.object({ code: z.string(), message: z.string() }).meta({ id: 'HygieneReason' });

export const leadBody = z
  .object({
    id: z.uuid(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    company: z.string().nullable(),
    title: z.string().nullable(),
    phone: z.string().nullable().describe('As written'),
    phoneE164: z.string().nullable().describe("The number in E.164 ('+' and digits, no extension), read in the lead's country, else the workspace's; null when it has none or none could be found"),
    phoneStatus: z.enum(['valid', 'flagged']).nullable().describe('null when the lead has no number (or it was written before numbers were checked)'),
    phoneReason: z.string().nullable().describe('Why the number is flagged, in plain words ("too short for GB", "possible but not valid: …")'),
    country: z.string().nullable(),
    timeZone: z.string().nullable(),
    custom: z.record(z.string(), z.string()),
    hygiene: z
      .object({
        verdict: z.enum(VERDICTS),
        reasons: z.array(hygieneReason).describe('Worst first (docs/deliverability.md "List hygiene")'),
        checkedAt: z.string(),
        review: z.enum(['approved', 'rejected']).nullable().describe('A risky lead: null while it waits in the review queue'),
      })
      .nullable()
      .describe('List hygiene: null until the address is checked (at import, or when it is enrolled)'),
  })
  .meta({ id: 'Lead' });

/** An import's flagged numbers (src/leads/phone.ts): the JSON import's report and an import job's. */
export const phonesFlaggedFields = {
  phonesFlagged: z.number().int().describe('Leads written whose phone number is flagged: imported all the same, the reason on the lead (phoneReason)'),
  phonesFlaggedByReason: z
    .record(z.string(), z.number().int())
    .describe(`By reason code: ${Object.keys(phoneFlagCodes).join(', ')} (src/leads/phone.ts)`),
};

/** A CSV sent in the request body: the web app's import reads the file in the browser. 20 MB is ~100k leads. */
const MAX_CSV_CHARS = 20 * 1024 * 1024;

function toLead(l: {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  title: string | null;
  phone: string | null;
  phone_e164: string | null;
  phone_status: 'valid' | 'flagged' | null;
  phone_reason: string | null;
  country: string | null;
  time_zone: string | null;
  custom: unknown;
  hygiene_verdict: Verdict | null;
  hygiene_reasons: Array<{ code: string; message: string }>;
  hygiene_checked_at: Date | null;
  hygiene_review: 'approved' | 'rejected' | null;
}): z.output<typeof leadBody> {
  return {
    id: l.id,
    email: l.email,
    firstName: l.first_name,
    lastName: l.last_name,
    company: l.company,
    title: l.title,
    phone: l.phone,
    phoneE164: l.phone_e164,
    phoneStatus: l.phone_status,
    phoneReason: l.phone_reason,
    country: l.country,
    timeZone: l.time_zone,
    custom: (l.custom ?? {}) as Record<string, string>,
    hygiene:
      l.hygiene_verdict === null
        ? null
        : { verdict: l.hygiene_verdict, reasons: l.hygiene_reasons, checkedAt: new Date(l.hygiene_checked_at ?? 0).toISOString(), review: l.hygiene_review },
  };
}

/** The first page counts its matches up to this many; past it the list says "at least". */
const TOTAL_CAP = 10_000;

/** The editable fields of a lead (POST and PATCH); null clears a field. */
const leadInput = z.object({
  firstName: z.string().max(200).nullable().optional(),
  lastName: z.string().max(200).nullable().optional(),
  company: z.string().max(300).nullable().optional(),
  title: z.string().max(300).nullable().optional(),
  phone: z.string().max(50).nullable().optional(),
  country: z.string().max(100).nullable().optional().describe('A country name or ISO 3166-1 code'),
  timeZone: z.string().max(100).nullable().optional().describe('An IANA zone or a common alias'),
  custom: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a name of letters, digits and _'), z.string().max(2000).nullable())
    .refine((c) => Object.keys(c).length <= 100, 'at most 100 custom fields')
    .optional()
    .describe('Template variables {{custom.name}}'),
});

const timelineEntry = z.object({
  at: z.string(),
  kind: z.enum(['event', 'sent', 'received', 'open', 'click', 'task', 'call']),
  what: z.string().describe('The journal event type, message subject, task title, link, or the call and its length'),
  detail: z.string().nullable().describe('Label and confidence, state change, human/automatic verdict of an open…'),
  sequenceName: z.string().nullable(),
});

/** "Outbound call, 2 min 14 s", "Inbound call", "Outbound call (logged)". */
function callTitle(c: { direction: string; source: string; duration_ms: number | null }): string {
  const d = c.duration_ms;
  const length = d === null ? '' : d < 60_000 ? `, ${Math.round(d / 1000)} s` : `, ${Math.floor(d / 60_000)} min ${Math.round((d % 60_000) / 1000)} s`;
  return `${c.direction === 'inbound' ? 'Inbound' : 'Outbound'} call${c.source === 'logged' ? ' (logged)' : ''}${length}`;
}

/** An enrollment state to filter leads by, or none: not enrolled. */
const LEAD_FILTER_STATES = ['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved', 'none'] as const satisfies readonly (EnrollmentState | 'none')[];

export const leadRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads',
    summary: 'Leads, newest first, paged by a cursor, optionally matching a search in email, name or company, a country, a sequence, an enrollment state and a list-hygiene verdict',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({
      search: z.string().max(200).default('').describe('A substring of the email, "first last" name or company, any case'),
      country: z
        .string()
        .regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code such as FR')
        .optional()
        .describe("The lead's country"),
      sequenceId: z.uuid().optional().describe('Only leads enrolled in this sequence (with state: in that state there)'),
      state: z
        .enum(LEAD_FILTER_STATES)
        .optional()
        .describe('Only leads with an enrollment in this state (in sequenceId when given); none: leads not enrolled (in sequenceId when given)'),
      verdict: z
        .enum(LEAD_HYGIENE_FILTERS)
        .optional()
        .describe('List hygiene: valid, risky, invalid; review: risky and waiting for a decision; unchecked: never checked'),
      tag: tagText.optional().describe('Only leads with this tag'),
      listId: z.uuid().optional().describe("Only a static list's members, or a segment's matches (the segment's own conditions win over these where both name one)"),
      enrolled: z.enum(['true', 'false']).transform((v) => v === 'true').optional().describe('Without state: true, enrolled (in sequenceId when given); false, not enrolled there'),
      replied: z.enum(['true', 'false']).transform((v) => v === 'true').optional().describe('true: an enrollment of theirs stopped on their reply; false: none did'),
      ...pageQuery,
    }),
    example: () => ({ query: { search: 'acme', country: 'FR', state: 'active' as const, limit: 50 } }),
    response: z.object({
      leads: z.array(leadBody.extend({ tags: z.array(z.string()) }).meta({ id: 'LeadRow' })),
      nextCursor: z.string().nullable(),
      total: z.number().int().nullable().describe(`The matches, counted on the first page only (null with a cursor), up to ${TOTAL_CAP.toLocaleString('en')}`),
      totalExact: z.boolean().describe(`true when total is the number of matches; false when the count stopped at ${TOTAL_CAP.toLocaleString('en')} (there are more) or was not made (a later page)`),
    }),
    handler: async ({ ctx, ws, query }) => {
      const after = decodeCursor(query.cursor);
      let filter: LeadFilter = { search: query.search, country: query.country?.toUpperCase(), sequenceId: query.sequenceId, state: query.state, verdict: query.verdict, tag: query.tag, enrolled: query.enrolled, replied: query.replied };
      if (query.listId) {
        const list = await listFilter(ctx.store.db, ws.workspaceId, query.listId, ctx.clock.now());
        if (list === undefined) throw cadenzaError('NOT_FOUND', 'no such list in this workspace');
        // A segment whose stored filter no longer parses matches nobody.
        if (list === null) return { leads: [], nextCursor: null, total: 0, totalExact: true };
        filter = { ...filter, ...Object.fromEntries(Object.entries(list).filter(([k, v]) => v !== undefined && !(k === 'search' && v === ''))) };
      }
      const { leads: found, matches: n } = await listLeads(ctx.store.db, ws.workspaceId, filter, after, query.limit + 1, TOTAL_CAP);
      const p = page(found, query.limit, (r) => ({ at: new Date(r.created_at), id: r.id }));
      const tags = await tagsOf(ctx.store.db, ws.workspaceId, p.items.map((r) => r.id));
      return {
        leads: p.items.map((r) => ({ ...toLead(r), tags: tags.get(r.id) ?? [] })),
        nextCursor: p.nextCursor,
        total: n === null ? null : Math.min(n, TOTAL_CAP),
        totalExact: n !== null && n <= TOTAL_CAP,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/import',
    summary: 'Import leads from CSV text with a column mapping; answers the counts and the rejected rows',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({
      csv: z.string().min(1).max(MAX_CSV_CHARS),
      mapping: z.record(z.string(), z.string()).optional().describe("CSV column → email, first_name, …, custom.<name>, or '-' to leave out"),
      onDuplicate: z.enum(['skip', 'update']).default('skip'),
    }),
    example: () => ({ body: { csv: 'email,first_name\nana@example.test,Ana\n' } }),
    response: z
      .object({
        rowsRead: z.number().int(),
        imported: z.number().int(),
        updated: z.number().int(),
        unchanged: z.number().int(),
        rejected: z.number().int(),
        rejectsByReason: z.record(z.string(), z.number()),
        warnings: z.number().int(),
        ...phonesFlaggedFields,
        issues: z.array(z.object({ kind: z.string(), line: z.number().int(), reason: z.string(), message: z.string() })),
        columns: z.array(z.object({ header: z.string(), target: z.string().describe("A field, custom.<name>, or '-' (left out)") })),
        hygiene: z
          .object({ valid: z.number().int(), risky: z.number().int(), invalid: z.number().int() })
          .nullable()
          .describe('The written leads by list-hygiene verdict; null when hygiene is off'),
        durationMs: z.number(),
      })
      .meta({ id: 'ImportReport' }),
    handler: async ({ ctx, ws, body }) => {
      const checker = ctx.hygiene;
      const hygiene = checker ? { valid: 0, risky: 0, invalid: 0 } : null;
      const r = await importLeads(ctx.store, {
        ...(checker && hygiene
          ? {
              onBatch: async (b) => {
                const c = (await checker.checkLeads(ctx.store.db, ws.workspaceId, b.leadIds)).counts;
                for (const k of VERDICTS) hygiene[k] += c[k];
              },
            }
          : {}),
        workspaceId: ws.workspaceId,
        input: Readable.from([Buffer.from(body.csv, 'utf8')]),
        ...(body.mapping ? { mapping: body.mapping } : {}),
        onDuplicate: body.onDuplicate,
        ...(ctx.erasure ? { erasure: ctx.erasure } : {}),
        clock: ctx.clock,
        random: ctx.random,
      });
      return {
        rowsRead: r.rowsRead,
        imported: r.imported,
        updated: r.updated,
        unchanged: r.unchanged,
        rejected: r.rejected,
        rejectsByReason: r.rejectsByReason,
        warnings: r.warnings,
        phonesFlagged: r.phonesFlagged,
        phonesFlaggedByReason: r.phonesFlaggedByReason,
        issues: r.issues.map((i) => ({ kind: i.kind, line: i.line, reason: i.reason, message: i.message })),
        columns: r.columns.map((c) => ({ header: c.header, target: targetText(c.target) })),
        hygiene,
        durationMs: r.durationMs,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads/:leadId',
    summary: "A lead and its timeline, newest first: the engine's journal, emails sent and received, opens and clicks (human or automatic), tasks, calls",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({ leadId: z.uuid() }),
    response: z.object({
      lead: leadBody,
      tags: z.array(z.string()),
      lists: z.array(z.object({ id: z.uuid(), name: z.string() })).describe('The static lists the lead is in'),
      enrollments: z.array(z.object({ id: z.uuid(), sequenceId: z.uuid(), sequenceName: z.string(), state: z.string(), reason: z.string().nullable() })),
      timeline: z.array(timelineEntry),
    }),
    handler: async ({ ctx, ws, params }) => {
      const db = ctx.store.db;
      const lead = await findLead(db, ws.workspaceId, params.leadId);
      if (!lead) throw cadenzaError('NOT_FOUND', 'no such lead');
      const enrollments = await leadEnrollments(db, ws.workspaceId, lead.id);
      const ids = enrollments.map((e) => e.id);
      const seqOf = new Map(enrollments.map((e) => [e.id, e.name]));
      const out: z.output<typeof timelineEntry>[] = [];
      const iso = (d: Date | string) => new Date(d).toISOString();
      if (ids.length) {
        // Received mail only from the mailboxes the caller may read (a member's own, unless granted all).
        const { events, messages, tracking, tasks } = await timelineSources(db, ws.workspaceId, ids, inboxReader(ws));
        for (const e of events) {
          const p = (e.payload ?? {}) as { from?: string | null; to?: string | null; movedFrom?: string; event?: { toEnrollmentId?: string } };
          const here = seqOf.get(e.enrollment_id ?? '') ?? null;
          // Both ends of a move are this lead's enrollments: say where it went, and where it came from.
          let detail = p.to && p.from !== p.to ? `${p.from ?? 'new'} → ${p.to}` : null;
          if (e.type === 'move') detail = `moved from ${here ?? 'a sequence'} to ${seqOf.get(p.event?.toEnrollmentId ?? '') ?? 'another sequence'}`;
          if (e.type === 'enrolled' && p.movedFrom) detail = `moved from ${seqOf.get(p.movedFrom) ?? 'another sequence'} to ${here ?? 'this sequence'}`;
          out.push({ at: iso(e.at), kind: 'event', what: e.type, detail, sequenceName: here });
        }
        for (const m of messages) {
          const label = m.label ? `${m.label}${m.confidence !== null ? ` ${Math.round(m.confidence * 100)}%` : ''}` : null;
          // An inbound message is placed by its arrival, not by its Date header (the sender's clock, to the second).
          out.push({ at: iso(m.received_at ?? m.at), kind: m.direction === 'outbound' ? 'sent' : 'received', what: m.subject ?? '(no subject)', detail: label, sequenceName: seqOf.get(m.enrollment_id ?? '') ?? null });
        }
        for (const t of tracking) {
          const verdict = t.verdict === 'human' ? 'likely a person' : t.verdict ? `automatic (${t.verdict})` : null;
          out.push({ at: iso(t.at), kind: t.kind as 'open' | 'click', what: t.kind === 'click' ? (t.url ?? 'a link') : 'opened', detail: verdict, sequenceName: seqOf.get(t.enrollment_id ?? '') ?? null });
        }
        for (const t of tasks) {
          out.push({ at: iso(t.completed_at ?? t.due_at), kind: 'task', what: t.title, detail: t.state === 'open' ? `${t.kind}, due` : `${t.kind}, ${t.outcome ?? t.state}`, sequenceName: seqOf.get(t.enrollment_id) ?? null });
        }
      }
      // Calls are the lead's, whether or not a sequence placed them (an incoming call, a call from the lead's page).
      for (const c of await leadCalls(db, ws.workspaceId, lead.id)) {
        const words = c.outcome ? c.outcome.replace('_', ' ') : c.state === 'ended' ? 'no outcome yet' : c.state;
        out.push({ at: iso(c.created_at), kind: 'call', what: callTitle(c), detail: c.notes ? `${words}: ${c.notes}` : words, sequenceName: seqOf.get(c.enrollment_id ?? '') ?? null });
      }
      out.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
      const [tags, lists] = await Promise.all([tagsOf(db, ws.workspaceId, [lead.id]), listsOfLead(db, ws.workspaceId, lead.id)]);
      return { lead: toLead(lead), tags: tags.get(lead.id) ?? [], lists, enrollments: enrollments.map((e) => ({ id: e.id, sequenceId: e.sequence_id, sequenceName: e.name, state: e.state, reason: e.state_reason })), timeline: out };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads',
    summary: 'Create one lead (normalised as an import would); custom fields are free text',
    tags: ['leads'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    body: leadInput.extend({ email: z.string().min(3).max(320) }),
    example: () => ({ body: { email: 'new.lead@prospects.test', firstName: 'Ada', custom: { source: 'event' } } }),
    response: leadBody,
    handler: async ({ ctx, ws, body }) => {
      const cols = leadColumns(body);
      await refuseErased(ctx.store.db, ws.workspaceId, cols.email_norm!, ctx.erasure);
      const id = newId(ctx.clock.now(), ctx.random);
      const row = await insertLead(ctx.store.db, { id, workspaceId: ws.workspaceId, cols: { ...cols, email: cols.email!, email_norm: cols.email_norm! }, custom: body.custom });
      return toLead(row);
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/leads/:leadId',
    summary: 'Change a lead; custom fields merge (null removes one)',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({ leadId: z.uuid() }),
    body: leadInput.extend({ email: z.string().min(3).max(320).optional() }),
    example: () => ({ body: { title: 'CTO', custom: { stage: 'warm' } } }),
    response: leadBody,
    handler: async ({ ctx, ws, params, body }) => {
      const cols = leadColumns(body);
      if (cols.email_norm) await refuseErased(ctx.store.db, ws.workspaceId, cols.email_norm, ctx.erasure);
      const row = await updateLead(ctx.store.db, { workspaceId: ws.workspaceId, leadId: params.leadId, cols, custom: body.custom, now: new Date(ctx.clock.now()) });
      if (!row) throw cadenzaError('NOT_FOUND', 'no such lead');
      return toLead(row);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/leads/:leadId',
    summary: 'Delete a lead with its enrollments and tasks (its address stays suppressed if it was)',
    tags: ['leads'],
    access: { workspace: 'admin' },
    params: workspaceParams({ leadId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      if (!(await deleteLead(ctx.store.db, ws.workspaceId, params.leadId))) throw cadenzaError('NOT_FOUND', 'no such lead');
      return { ok: true as const };
    },
  }),
];
