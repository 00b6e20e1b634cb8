import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { DestinationPolicy } from '../common/destination-policy.ts';
import { isCadenzaError } from '../common/errors.ts';
import type { CallbackSettings } from './auth/sso/callback-host.ts';
import { completeSsoSignIn, ssoLandingBase, type SsoDeps } from './auth/sso/flow.ts';
import { realClock, type ApiContext } from './context.ts';
import { statusForCode } from './http/errors.ts';
import { startSession } from './routes/auth.ts';
import type { RouteContext } from './http/route.ts';
import { requestHost } from '../tracking/domains/challenge-route.ts';

/**
 * GET /oauth/sso/callback: where a workspace's identity provider sends the browser back after
 * sign-in (the redirect URIs its admins register: `<CADENZA_PUBLIC_URL>/oauth/sso/callback`, and
 * the same path on each of an agency client's verified app hosts, auth/sso/callback-host.ts).
 * Outside /api: a browser navigation carrying the provider's query, bound to the browser by the
 * SSO_BINDING_COOKIE set at start. A browser (Accept: text/html) lands signed in on the app, or on
 * the sign-in page's SSO form (`/signin/sso?ssoError=<plain words>`), on the host it is on when
 * that is a serving client app host (else the public URL); anything else gets JSON.
 */
export const SSO_BINDING_COOKIE = 'cadenza_sso_flow';
export const SSO_BINDING_PATH = '/oauth/sso';

/** The public URL, and the port agency clients' app hosts are served on (none: custom hosts off). */
export function ssoCallbackSettings(ctx: ApiContext): CallbackSettings {
  return { publicUrl: ctx.publicUrl, appHttpsPort: ctx.trackingDomains?.httpsPort?.() };
}

/**
 * The issuer's destination policy: the one webhook URLs and CRM addresses follow (public only,
 * loopback and private networks with CADENZA_WEBHOOK_ALLOW_PRIVATE): an identity provider on
 * the office network is as common as a webhook receiver there.
 */
export function ssoDestinations(ctx: ApiContext): DestinationPolicy {
  const allowPrivate = ctx.webhooks?.allowPrivate ?? false;
  return { allow: new Set(allowPrivate ? ['loopback', 'private'] : []), setting: 'CADENZA_WEBHOOK_ALLOW_PRIVATE=true' };
}

/** The sign-in's dependencies, from the API's context: its vault opens the client secret; real time for the 10 minutes. */
export function ssoDeps(ctx: ApiContext): SsoDeps {
  const vault = ctx.vault;
  const sealer = {
    seal: (...a: Parameters<NonNullable<ApiContext['vault']>['seal']>) => {
      if (!vault) throw new Error('this server has no vault (master key) to seal the single sign-on client secret with');
      return vault.seal(...a);
    },
    open: (...a: Parameters<NonNullable<ApiContext['vault']>['open']>) => {
      if (!vault) throw new Error('this server has no vault (master key) to open the single sign-on client secret with');
      return vault.open(...a);
    },
  };
  return { db: ctx.store.db, sealer, clock: realClock(ctx), random: ctx.random, destinations: ssoDestinations(ctx), callback: ssoCallbackSettings(ctx) };
}

export function registerSsoCallback(app: FastifyInstance, ctx: ApiContext): void {
  void app.register(async (scope) => {
    await scope.register(cookie);
    scope.get('/oauth/sso/callback', async (req, reply) => {
      const query = new URL(req.url, 'http://callback.invalid').searchParams;
      const page = (req.headers.accept ?? '').includes('text/html');
      const deps = ssoDeps(ctx);
      const host = requestHost(req.headers.host);
      const base = await ssoLandingBase(deps, host);
      reply.header('cache-control', 'no-store');
      const binding = req.cookies[SSO_BINDING_COOKIE];
      // The binding is single use, like the flow it binds.
      reply.clearCookie(SSO_BINDING_COOKIE, { path: SSO_BINDING_PATH });
      try {
        const done = await completeSsoSignIn(deps, query, binding, req.ip, host);
        const me = await startSession({ ctx, req, reply } as unknown as RouteContext<unknown, unknown, unknown>, done.accountId);
        if (page) return reply.redirect(`${base}/?${new URLSearchParams({ workspace: done.workspaceId })}`, 303);
        return reply.send({ ...me, workspaceId: done.workspaceId, joined: done.joined });
      } catch (e) {
        if (!isCadenzaError(e)) throw e;
        if (page) return reply.redirect(`${base}/signin/sso?${new URLSearchParams({ ssoError: e.message })}`, 303);
        return reply.code(statusForCode[e.code]).send({ error: { code: e.code, message: e.message, details: e.details } });
      }
    });
  });
}
