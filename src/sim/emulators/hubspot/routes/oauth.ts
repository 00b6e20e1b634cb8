import type { FastifyInstance } from 'fastify';
import { formBody, type CrmOAuthApp } from '../../oauth/crm-app.ts';
import type { EmulatorReply } from '../../server.ts';
import type { HubSpotRouteContext } from '../context.ts';
import { correlationId } from '../errors.ts';

/**
 * HubSpot's OAuth for public apps (developers.hubspot.com, "Working with OAuth" and the OAuth API
 * reference), both hosts on the emulator's one origin:
 *
 *   GET  /oauth/authorize      (app.hubspot.com) client_id, redirect_uri, scope (space-separated,
 *                              each a scope HubSpot has; the app's required ones), state → 302 to
 *                              redirect_uri?code=…&state=…; declined: ?error=access_denied (unverified)
 *   POST /oauth/v1/token       (api.hubapi.com) form-encoded only: grant_type=authorization_code
 *                              with client_id, client_secret, redirect_uri, code; or
 *                              grant_type=refresh_token with client_id, client_secret, refresh_token
 *                              → {token_type: "bearer", refresh_token, access_token, expires_in: 1800};
 *                              the refresh token does not rotate
 *
 * Errors are HubSpot's 400 bodies {status, message, correlationId}: BAD_GRANT_TYPE, BAD_CLIENT_ID,
 * BAD_CLIENT_SECRET, BAD_REDIRECT_URI, BAD_AUTH_CODE ("missing or unknown auth code"),
 * BAD_REFRESH_TOKEN ("missing or unknown refresh token"); texts other than those two unverified.
 * Route names for faults: `oauth.authorize`, `oauth.token`.
 */
export const HUBSPOT_KNOWN_SCOPES = new Set(['oauth', 'crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.schemas.contacts.write', 'crm.schemas.contacts.read', 'crm.objects.deals.read', 'crm.objects.deals.write', 'crm.lists.read', 'crm.lists.write', 'crm.objects.owners.read']);

const bad = (status: string, message: string): EmulatorReply => ({ status: 400, body: { status, message, correlationId: correlationId(), requestId: '' } });

export function registerHubSpotOAuthRoutes(app: FastifyInstance, ctx: HubSpotRouteContext, oauth: CrmOAuthApp): void {
  app.get('/oauth/authorize', (req, reply) =>
    ctx.run(
      'oauth.authorize',
      req,
      reply,
      () => {
        const q = req.query as Record<string, string | undefined>;
        const scopes = (q.scope ?? '').split(/[ +]/).filter(Boolean);
        const unknown = scopes.filter((s) => !HUBSPOT_KNOWN_SCOPES.has(s));
        const problem = !scopes.includes('oauth') ? 'The scope parameter must include oauth.' : unknown.length ? `Unknown scopes: ${unknown.join(', ')}` : null;
        return oauth.authorizeReply(q, scopes, problem);
      },
      { noAuth: true },
    ),
  );

  app.post('/oauth/v1/token', (req, reply) =>
    ctx.run(
      'oauth.token',
      req,
      reply,
      () => {
        const f = formBody(req);
        const grantType = f?.get('grant_type') ?? '';
        oauth.tokenRequests.push(grantType);
        if (!f || (grantType !== 'authorization_code' && grantType !== 'refresh_token')) return bad('BAD_GRANT_TYPE', 'missing or unknown grant type');
        const c = oauth.client(f.get('client_id'));
        if (!c) return bad('BAD_CLIENT_ID', 'missing or unknown client id');
        if (c.secret !== f.get('client_secret')) return bad('BAD_CLIENT_SECRET', 'missing or invalid client secret');
        let r;
        if (grantType === 'authorization_code') {
          if (!f.get('redirect_uri')) return bad('BAD_REDIRECT_URI', 'missing or mismatched redirect uri');
          r = oauth.exchange(c, f.get('code') ?? '', f.get('redirect_uri'));
          if (r === 'bad_code') return bad('BAD_AUTH_CODE', 'missing or unknown auth code');
          if (r === 'bad_redirect') return bad('BAD_REDIRECT_URI', 'missing or mismatched redirect uri');
        } else {
          r = oauth.refresh(c, f.get('refresh_token') ?? '');
          if (r === 'bad_refresh') return bad('BAD_REFRESH_TOKEN', 'missing or unknown refresh token');
        }
        return { status: 200, headers: { 'cache-control': 'no-store' }, body: { token_type: 'bearer', refresh_token: r.refreshToken, access_token: r.accessToken, expires_in: r.expiresIn } };
      },
      { noAuth: true },
    ),
  );
}
