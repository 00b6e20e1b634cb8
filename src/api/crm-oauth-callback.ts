import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { isCadenzaError } from '../common/errors.ts';
import { completeCrmAuthorization, CRM_LABELS, type CrmOAuthDeps } from '../crm/oauth/flow.ts';
import { recordAudit } from './audit/audit-log.ts';
import { authenticate, workspaceAccess } from './auth/access.ts';
import { secretHash } from './auth/tokens.ts';
import { realClock, type ApiContext } from './context.ts';
import { statusForCode } from './http/errors.ts';
import { checkEndpointUrl } from './webhooks/destination.ts';

/**
 * GET /oauth/crm/callback: where HubSpot, Salesforce and Pipedrive send the admin's browser back
 * after the consent page (the redirect URI each CRM's app lists: `<CADENZA_PUBLIC_URL>/oauth/crm/callback`).
 * Outside /api: it is a browser navigation carrying the CRM's query, known by the session cookie.
 * A browser (Accept: text/html) lands on Settings (Integrations) with `?crmConnected=<kind>` or
 * `?crmError=<plain words>`; anything else gets JSON (the API's error shape for CRM_AUTH_FAILED).
 */
export function crmCallbackUri(ctx: ApiContext): string {
  return `${ctx.publicUrl.replace(/\/+$/, '')}/oauth/crm/callback`;
}

/** The flow's dependencies, from the API's context (its vault seals the grant; real time for the 10 minutes). */
export function crmOAuthDeps(ctx: ApiContext): CrmOAuthDeps {
  return {
    db: ctx.store.db,
    sealer: {
      seal: (...a) => vaultOf(ctx).seal(...a),
      open: (...a) => vaultOf(ctx).open(...a),
    },
    apps: ctx.crmOAuth ?? {},
    clock: realClock(ctx),
    random: ctx.random,
    checkUrl: (u) => checkEndpointUrl(u, { allowPrivate: ctx.webhooks?.allowPrivate ?? false }).href,
  };
}

function vaultOf(ctx: ApiContext) {
  if (!ctx.vault) throw new Error('this server has no vault (master key) to seal CRM tokens with');
  return ctx.vault;
}

export function registerCrmOAuthCallback(app: FastifyInstance, ctx: ApiContext): void {
  void app.register(async (scope) => {
    await scope.register(cookie);
    scope.get('/oauth/crm/callback', async (req, reply) => {
      const query = new URL(req.url, 'http://callback.invalid').searchParams;
      const page = (req.headers.accept ?? '').includes('text/html');
      const base = ctx.publicUrl.replace(/\/+$/, '');
      reply.header('cache-control', 'no-store');
      try {
        const p = await authenticate(req, ctx).catch(() => undefined);
        const session = p?.kind === 'session' ? p : undefined;
        const done = await completeCrmAuthorization(crmOAuthDeps(ctx), query, {
          sessionHash: session ? secretHash(session.sessionToken) : undefined,
          adminIn: async (workspaceId) => (session ? ((await workspaceAccess(ctx, session, workspaceId, 'admin').catch(() => undefined))?.userId ?? undefined) : undefined),
        });
        const u = done.userId ? await ctx.store.db.selectFrom('app_user').select('email').where('id', '=', done.userId).executeTakeFirst() : undefined;
        await recordAudit(ctx.store.db, { clock: realClock(ctx), random: ctx.random }, {
          workspaceId: done.workspaceId,
          action: done.created ? 'crm.connected' : 'crm.changed',
          actor: { kind: 'session', userId: done.userId, label: u?.email ?? 'an admin', ip: req.ip },
          target: `crm:${done.connectionId}`,
          detail: { kind: done.kind, baseUrl: new URL(done.baseUrl).origin, oauth: true, ...(done.created ? {} : { token: 'replaced' }) },
        });
        ctx.crm?.nudge();
        if (page) return reply.redirect(`${base}/settings?${new URLSearchParams({ crmConnected: done.kind, ...(done.created ? {} : { reauthorized: '1' }) })}#settings-integrations`, 303);
        return reply.send({ connectionId: done.connectionId, kind: done.kind, created: done.created, workspaceId: done.workspaceId, label: CRM_LABELS[done.kind] });
      } catch (e) {
        if (!isCadenzaError(e)) throw e;
        if (page) return reply.redirect(`${base}/settings?${new URLSearchParams({ crmError: e.message })}#settings-integrations`, 303);
        return reply.code(statusForCode[e.code]).send({ error: { code: e.code, message: e.message, details: e.details } });
      }
    });
  });
}
