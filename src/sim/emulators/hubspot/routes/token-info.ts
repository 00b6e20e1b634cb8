import type { FastifyInstance } from 'fastify';
import type { HubSpotRouteContext } from '../context.ts';
import { hubspotErrors } from '../errors.ts';

/**
 * GET /oauth/v1/access-tokens/{token}: the token's metadata (legacy OAuth docs): `user_id` (the
 * user it acts as, what hs_updated_by_user_id records for its writes), `hub_id`, `app_id`,
 * `scopes`. The path carries the token itself, so the request needs no Authorization header; an
 * unknown or expired token is a 404 (HubSpot's text unverified). Route name for faults: `oauth.tokenInfo`.
 */
export function registerTokenInfoRoute(app: FastifyInstance, ctx: HubSpotRouteContext, info: (token: string) => { userId: string; hubId: number } | null): void {
  app.get<{ Params: { token: string } }>('/oauth/v1/access-tokens/:token', (req, reply) =>
    ctx.run(
      'oauth.tokenInfo',
      req,
      reply,
      () => {
        const i = info(req.params.token);
        if (!i) return hubspotErrors.notFound();
        return { status: 200, body: { token: req.params.token, user_id: Number(i.userId), hub_id: i.hubId, app_id: 1_000_001, scopes: ['crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.objects.deals.read', 'crm.lists.read', 'crm.objects.owners.read'], token_type: 'access', expires_in: 1800 } };
      },
      { noAuth: true },
    ),
  );
}
