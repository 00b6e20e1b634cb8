/**
 * List hygiene (src/leads/hygiene/, docs/deliverability.md "List hygiene"): the review queue of
 * risky leads, its decisions and its CSV export, and a re-check of leads on demand.
 */
import { z } from 'zod';
import { csvRecord } from '../../common/csv-write.ts';
import { cadenzaError } from '../../common/errors.ts';
import { decideReview, reviewQueue, reviewQueueCount, type ReviewRow } from '../../leads/sql/hygiene.ts';
import { audit } from '../audit/actor.ts';
import { decodeCursor, page, pageQuery } from '../http/pagination.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { hygieneReason, leadBody } from './leads.ts';

const reviewLead = leadBody
  .pick({ id: true, email: true, firstName: true, lastName: true, company: true })
  .extend({ reasons: z.array(hygieneReason), checkedAt: z.string() })
  .meta({ id: 'ReviewLead' });

const toReviewLead = (r: ReviewRow): z.output<typeof reviewLead> => ({
  id: r.id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  company: r.company,
  reasons: r.hygiene_reasons,
  checkedAt: new Date(r.hygiene_checked_at).toISOString(),
});

/** Rows read per query for the export. */
const EXPORT_PAGE = 1000;
/** Leads per decision or re-check call: a page of the queue is at most 200, a select-all of it a few thousand. */
const MAX_IDS = 10_000;

export const leadHygieneRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads/review',
    summary: 'The review queue: leads list hygiene found risky (role account, domain not checkable) and no one decided on yet, newest first',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ ...pageQuery }),
    example: () => ({ query: { limit: 50 } }),
    response: z.object({
      leads: z.array(reviewLead),
      nextCursor: z.string().nullable(),
      waiting: z.number().int().describe('Leads in the queue (all pages)'),
    }),
    handler: async ({ ctx, ws, query }) => {
      const rows = await reviewQueue(ctx.store.db, ws.workspaceId, decodeCursor(query.cursor), query.limit + 1);
      const p = page(rows, query.limit, (r) => ({ at: new Date(r.created_at), id: r.id }));
      return { leads: p.items.map(toReviewLead), nextCursor: p.nextCursor, waiting: await reviewQueueCount(ctx.store.db, ws.workspaceId) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads/review/export',
    summary: 'The review queue as CSV (email, first_name, last_name, company, reasons, checked_at)',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, reply } = c;
      const lines = [csvRecord(['email', 'first_name', 'last_name', 'company', 'reasons', 'checked_at'], ',', '')];
      let after: { at: Date; id: string } | undefined;
      for (;;) {
        const rows = await reviewQueue(ctx.store.db, ws.workspaceId, after, EXPORT_PAGE);
        for (const r of rows) {
          const reasons = r.hygiene_reasons.map((x) => x.code).join(' ');
          lines.push(csvRecord([r.email, r.first_name ?? '', r.last_name ?? '', r.company ?? '', reasons, new Date(r.hygiene_checked_at).toISOString()], ',', ''));
        }
        const last = rows[rows.length - 1];
        if (!last || rows.length < EXPORT_PAGE) break;
        after = { at: new Date(last.created_at), id: last.id };
      }
      await audit(c, { action: 'export.downloaded', target: 'lead-review.csv', detail: { rows: lines.length - 1 } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="lead-review.csv"');
      return `${lines.join('\r\n')}\r\n`;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/review',
    summary: 'Decide on risky leads: approve (they may be enrolled) or reject (they are never enrolled); leads that are not risky are left alone',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ leadIds: z.array(z.uuid()).min(1).max(MAX_IDS), decision: z.enum(['approve', 'reject']) }),
    example: (ids) => ({ body: { leadIds: [ids.leadId ?? '00000000-0000-4000-8000-000000000000'], decision: 'approve' as const } }),
    response: z.object({
      decided: z.number().int(),
      // A count, not the ids: an id of another workspace is not echoed back as if it meant something here.
      notRisky: z.number().int().describe('Distinct ids left alone: not risky, or not a lead of this workspace'),
    }),
    handler: async ({ ctx, ws, body }) => {
      const decision = body.decision === 'approve' ? 'approved' : 'rejected';
      const decided = await decideReview(ctx.store.db, ws.workspaceId, body.leadIds, decision, ws.userId, new Date(ctx.clock.now()));
      return { decided: decided.length, notRisky: new Set(body.leadIds).size - decided.length };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/hygiene/check',
    summary: "Check leads' addresses again now (syntax, MX/A, disposable domain, role account, bounces and complaints) and store the verdicts",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ leadIds: z.array(z.uuid()).min(1).max(MAX_IDS) }),
    example: (ids) => ({ body: { leadIds: [ids.leadId ?? '00000000-0000-4000-8000-000000000000'] } }),
    response: z.object({ valid: z.number().int(), risky: z.number().int(), invalid: z.number().int() }),
    handler: async ({ ctx, ws, body }) => {
      if (!ctx.hygiene) throw cadenzaError('CONFLICT', 'list hygiene is off on this server (CADENZA_LIST_HYGIENE=off)');
      return (await ctx.hygiene.checkLeads(ctx.store.db, ws.workspaceId, body.leadIds)).counts;
    },
  }),
];
