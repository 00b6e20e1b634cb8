import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonBody, type HubSpotRouteContext } from '../context.ts';
import { hubspotErrors } from '../errors.ts';
import { shapeError } from '../validate.ts';

/**
 * The Lists API (v3) for contact lists:
 *
 *   POST /crm/v3/lists/search                  {query?, offset?, count?} → {lists, offset, hasMore, total}
 *   GET  /crm/v3/lists/{listId}/memberships    ?after&limit (≤ 250) → {results: [{recordId, membershipTimestamp}], paging}
 *
 * Members come in the order they were added; `after` is an offset here (HubSpot's is an opaque
 * cursor: a client must only pass it back). Route names for faults: `lists.search`,
 * `lists.memberships`.
 */
export interface ContactList {
  listId: string;
  name: string;
  /** MANUAL (static) or DYNAMIC (active); the emulator does not evaluate filters: members are set by the test. */
  processingType: 'MANUAL' | 'DYNAMIC';
  members: Array<{ recordId: string; at: number }>;
}

const searchSchema = z
  .object({ query: z.string().optional(), offset: z.number().int().min(0).optional(), count: z.number().int().min(1).max(500).optional(), processingTypes: z.array(z.string()).optional(), additionalProperties: z.array(z.string()).optional() })
  .strict();

export function registerListRoutes(app: FastifyInstance, ctx: HubSpotRouteContext, lists: () => readonly ContactList[]): void {
  app.post('/crm/v3/lists/search', (req, reply) =>
    ctx.run('lists.search', req, reply, () => {
      const parsed = searchSchema.safeParse(jsonBody(req) ?? {});
      if (!parsed.success) return shapeError(parsed.error);
      const { query = '', offset = 0, count = 20, processingTypes } = parsed.data;
      const all = lists().filter((l) => l.name.toLowerCase().includes(query.toLowerCase()) && (!processingTypes || processingTypes.includes(l.processingType)));
      const page = all.slice(offset, offset + count).map((l) => ({
        listId: l.listId,
        name: l.name,
        objectTypeId: '0-1',
        processingType: l.processingType,
        additionalProperties: { hs_list_size: String(l.members.length) },
      }));
      return { status: 200, body: { lists: page, offset: offset + page.length, hasMore: offset + page.length < all.length, total: all.length } };
    }),
  );

  app.get<{ Params: { listId: string }; Querystring: { after?: string; limit?: string } }>('/crm/v3/lists/:listId/memberships', (req, reply) =>
    ctx.run('lists.memberships', req, reply, () => {
      const list = lists().find((l) => l.listId === req.params.listId);
      if (!list) return hubspotErrors.notFound();
      const limit = req.query.limit === undefined ? 100 : Number(req.query.limit);
      const after = req.query.after === undefined ? 0 : Number(req.query.after);
      if (!Number.isInteger(limit) || limit < 1 || limit > 250) return hubspotErrors.validation(`limit must be between 1 and 250, got ${req.query.limit}`);
      if (!Number.isInteger(after) || after < 0) return hubspotErrors.validation(`Invalid after: ${req.query.after}`);
      const results = list.members.slice(after, after + limit).map((m) => ({ recordId: m.recordId, membershipTimestamp: new Date(m.at).toISOString() }));
      return { status: 200, body: { results, ...(after + limit < list.members.length ? { paging: { next: { after: String(after + limit) } } } : {}) } };
    }),
  );
}
