import type { FastifyInstance } from 'fastify';
import type { GraphRouteContext } from '../context.ts';
import type { GraphSubscriptions } from '../subscriptions.ts';
import { origin } from './messages.ts';

/**
 * `POST /subscriptions`, `PATCH /subscriptions/{id}`, `DELETE /subscriptions/{id}`
 * (api-reference/v1.0/api/subscription-post-subscriptions.md and siblings), for the token's own
 * mailbox. Route names for fault injection: 'subscriptions.create', 'subscriptions.update',
 * 'subscriptions.delete'.
 */
export function registerSubscriptionRoutes(app: FastifyInstance, ctx: GraphRouteContext & { subscriptions: GraphSubscriptions }): void {
  const root = (req: { headers: { host?: string } }) => `${origin(req)}/v1.0`;
  app.post('/v1.0/subscriptions', (req, reply) =>
    ctx.run('subscriptions.create', req as never, reply, (mb) => ctx.subscriptions.create(mb, req.body, root(req))),
  );
  app.patch<{ Params: { id: string } }>('/v1.0/subscriptions/:id', (req, reply) =>
    ctx.run('subscriptions.update', req as never, reply, (mb) => ctx.subscriptions.update(mb, req.params.id, req.body, root(req))),
  );
  app.delete<{ Params: { id: string } }>('/v1.0/subscriptions/:id', (req, reply) =>
    ctx.run('subscriptions.delete', req as never, reply, (mb) => ctx.subscriptions.remove(mb, req.params.id)),
  );
}
