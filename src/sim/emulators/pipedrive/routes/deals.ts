import type { FastifyInstance } from 'fastify';
import { intParam, isReply, strictQuery, type PipedriveRouteContext } from '../context.ts';
import { pipedriveErrors } from '../errors.ts';
import { listParams, windowAndSort } from '../list.ts';
import { page } from '../paging.ts';
import { dealView } from '../views.ts';

/**
 * Deals and stages over API v2:
 *
 *   GET /api/v2/deals    ids, person_id, stage_id, status (open, won, lost; default all but deleted),
 *                        updated_since/until, sort_by, sort_direction, limit, cursor
 *   GET /api/v2/stages   pipeline_id, limit, cursor
 *
 * Route names for faults: 'deals.list', 'stages.list'.
 */
export function registerDealRoutes(app: FastifyInstance, ctx: PipedriveRouteContext): void {
  app.get('/api/v2/deals', (req, reply) =>
    ctx.run('deals.list', req, reply, { api: 'v2', kind: 'list' }, () => {
      const q = strictQuery(req, ['ids', 'person_id', 'stage_id', 'status', ...listParams]);
      if (isReply(q)) return q;
      let deals = ctx.store.deals;
      if (q.ids !== undefined) {
        const ids = q.ids.split(',').map((s) => intParam(s));
        if (ids.some((i) => i === null) || ids.length > 100) return pipedriveErrors.badRequestV2('ids must be at most 100 comma-separated integers');
        deals = deals.filter((d) => ids.includes(d.id));
      }
      if (q.person_id !== undefined) deals = deals.filter((d) => d.person_id === intParam(q.person_id));
      if (q.stage_id !== undefined) deals = deals.filter((d) => d.stage_id === intParam(q.stage_id));
      if (q.status !== undefined) {
        const statuses = q.status.split(',');
        for (const s of statuses) if (!['open', 'won', 'lost', 'deleted'].includes(s)) return pipedriveErrors.badRequestV2(`Invalid status '${s}'`);
        deals = deals.filter((d) => statuses.includes(d.status));
      }
      const sorted = windowAndSort(deals, q);
      if (isReply(sorted)) return sorted;
      const paged = page(sorted, q.limit, q.cursor);
      if (isReply(paged)) return paged;
      return { status: 200, body: { success: true, data: paged.data.map(dealView), additional_data: { next_cursor: paged.next_cursor } } };
    }),
  );

  app.get('/api/v2/stages', (req, reply) =>
    ctx.run('stages.list', req, reply, { api: 'v2', kind: 'list' }, () => {
      const q = strictQuery(req, ['pipeline_id', 'limit', 'cursor']);
      if (isReply(q)) return q;
      const stages = ctx.store.stages.filter((s) => q.pipeline_id === undefined || s.pipeline_id === intParam(q.pipeline_id));
      const paged = page(stages, q.limit, q.cursor);
      if (isReply(paged)) return paged;
      return { status: 200, body: { success: true, data: paged.data, additional_data: { next_cursor: paged.next_cursor } } };
    }),
  );
}
