import type { FastifyInstance } from 'fastify';
import type { HubSpotRouteContext } from '../context.ts';
import { hubspotErrors } from '../errors.ts';

/**
 * The Owners API: GET /crm/v3/owners (the account's users who can own records), paged with
 * `limit` (at most 500, default 100) and `after`; `email` filters by address. A record's
 * hubspot_owner_id is an owner's `id` (not its `userId`). Route name for faults: `owners.list`.
 */
export interface Owner {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  /** The user's id: what hs_updated_by_user_id holds for that user's changes. */
  userId: number;
}

export function registerOwnerRoutes(app: FastifyInstance, ctx: HubSpotRouteContext, owners: () => readonly Owner[]): void {
  app.get<{ Querystring: { limit?: string; after?: string; email?: string; archived?: string } }>('/crm/v3/owners', (req, reply) =>
    ctx.run('owners.list', req, reply, () => {
      const limit = req.query.limit === undefined ? 100 : Number(req.query.limit);
      const after = req.query.after === undefined ? 0 : Number(req.query.after);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) return hubspotErrors.validation(`limit must be between 1 and 500, got ${req.query.limit}`);
      if (!Number.isInteger(after) || after < 0) return hubspotErrors.validation(`Invalid after: ${req.query.after}`);
      const email = req.query.email?.toLowerCase();
      const all = owners().filter((o) => email === undefined || o.email.toLowerCase() === email);
      const now = new Date(ctx.store.clock.now()).toISOString();
      const results = all.slice(after, after + limit).map((o) => ({ ...o, archived: false, createdAt: now, updatedAt: now }));
      return { status: 200, body: { results, ...(after + limit < all.length ? { paging: { next: { after: String(after + limit) } } } : {}) } };
    }),
  );
}
