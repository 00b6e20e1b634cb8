import { z } from 'zod';
import { recordAudit } from '../audit/audit-log.ts';
import { checkIssuer, startSsoSignIn } from '../auth/sso/flow.ts';
import { cadenzaError } from '../../common/errors.ts';
import { checkDomainProof, domainProofs, type DomainProof } from '../auth/sso/domain-proof.ts';
import { deleteSsoSettings, readSsoSettings, saveSsoSettings, type SsoSettings } from '../auth/sso/settings.ts';
import { realClock, type ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { cookiesSecure } from './auth.ts';
import { SSO_BINDING_COOKIE, SSO_BINDING_PATH, ssoCallbackSettings, ssoDeps } from '../sso-callback.ts';
import { redirectUrisOf } from '../auth/sso/callback-host.ts';
import { requestHost } from '../../tracking/domains/challenge-route.ts';
import type { Principal } from '../auth/access.ts';

const ssoRole = z.enum(['admin', 'member']);
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .transform((d) => d.replace(/^@/, ''))
  .pipe(z.string().regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a domain such as example.com'));

const settings = z
  .object({
    enabled: z.boolean(),
    issuer: z.string().describe("The provider's issuer URL; its metadata is read from <issuer>/.well-known/openid-configuration"),
    clientId: z.string(),
    hasClientSecret: z.literal(true).describe('The client secret is stored sealed and never returned'),
    allowedDomains: z.array(z.string()).describe('A verified address of these domains joins the workspace on its first sign-in, once the domain is proven by DNS (domains)'),
    groupsClaim: z.string(),
    roleMapping: z.array(z.object({ group: z.string(), role: ssoRole })),
    defaultRole: ssoRole,
    passwordAllowed: z.boolean().describe('False: members and admins sign in with SSO only (owners keep their password)'),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'SsoSettings' });

const domainProof = z
  .object({
    domain: z.string(),
    recordName: z.string().describe('Where to publish the TXT record: _cadenza-sso.<domain>'),
    recordValue: z.string().describe('The TXT record: cadenza-sso=<token issued to this workspace>'),
    verifiedAt: z.iso.datetime().nullable().describe('Null: not proven; the domain admits nobody new'),
    checkedAt: z.iso.datetime().nullable(),
    checkError: z.string().nullable().describe('Why the last check failed, in words'),
  })
  .meta({ id: 'SsoDomainProof' });

const answer = z
  .object({
    sso: settings.nullable(),
    domains: z.array(domainProof).describe('The DNS proof of each listed domain: only a verified one admits newcomers'),
    redirectUri: z.string().describe("The public URL's redirect URI (the first of redirectUris)"),
    redirectUris: z.array(z.string()).describe("Every redirect URI to register at the provider: the public URL's, then that of each of this workspace's verified client app hosts (an agency client signing in on its own domain)"),
  })
  .meta({ id: 'SsoSetup' });

const shown = (s: SsoSettings | undefined) => (s ? { ...s, hasClientSecret: true as const, updatedAt: s.updatedAt.toISOString() } : null);
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const proofView = (p: DomainProof) => ({ ...p, verifiedAt: iso(p.verifiedAt), checkedAt: iso(p.checkedAt) });
const setupOf = async (ctx: ApiContext, workspaceId: string, s: SsoSettings | undefined) => {
  const redirectUris = await redirectUrisOf(ctx.store.db, ssoCallbackSettings(ctx), workspaceId);
  return { sso: shown(s), domains: (await domainProofs(ctx.store.db, workspaceId)).map(proofView), redirectUri: redirectUris[0]!, redirectUris };
};

const actorOf = (p: Principal | undefined, userId: string | null | undefined, ip: string) =>
  p?.kind === 'api_key' ? { kind: 'api_key' as const, keyId: p.keyId, label: 'an API key', ip } : { kind: 'session' as const, userId: userId ?? null, label: 'an admin', ip };

const audit = (ctx: ApiContext, workspaceId: string, actor: ReturnType<typeof actorOf>, detail: Record<string, unknown>) =>
  recordAudit(ctx.store.db, { clock: realClock(ctx), random: ctx.random }, { workspaceId, action: 'settings.changed', actor, target: 'sso', detail });

/** Single sign-on (docs/security.md "Single sign-on"): the admins' settings, and the public start of a sign-in. */
export const ssoRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/sso',
    summary: "The workspace's single sign-on settings (admin; never the client secret) and the redirect URI to register",
    tags: ['sso'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: answer,
    handler: async ({ ctx, ws }) => setupOf(ctx, ws.workspaceId, await readSsoSettings(ctx.store.db, ws.workspaceId)),
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/sso',
    summary: 'Set up or change single sign-on with an OpenID Connect provider (admin); the issuer is read by discovery before it is saved',
    tags: ['sso'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({
      enabled: z.boolean().default(true),
      issuer: z.string().trim().min(8).max(2000),
      clientId: z.string().trim().min(1).max(500),
      clientSecret: z.string().min(1).max(2000).optional().describe('Required the first time; absent: the stored one stays'),
      allowedDomains: z.array(domain).max(50).default([]),
      groupsClaim: z.string().trim().min(1).max(100).default('groups'),
      roleMapping: z.array(z.object({ group: z.string().trim().min(1).max(200), role: ssoRole })).max(50).default([]),
      defaultRole: ssoRole.default('member'),
      passwordAllowed: z.boolean().default(true),
    }),
    example: () => ({
      body: { issuer: 'https://id.example.com', clientId: 'cadenza', clientSecret: 'from-the-provider', allowedDomains: ['example.com'], roleMapping: [{ group: 'sales-admins', role: 'admin' as const }] },
    }),
    response: answer,
    handler: async ({ ctx, ws, body, principal, req }) => {
      const d = ssoDeps(ctx);
      await checkIssuer(body.issuer, d);
      const saved = await saveSsoSettings(ctx.store.db, d.sealer, ws.workspaceId, body, new Date(d.clock.now()));
      await audit(ctx, ws.workspaceId, actorOf(principal, ws.userId, req.ip), {
        issuer: saved.issuer,
        enabled: saved.enabled,
        allowedDomains: saved.allowedDomains,
        passwordAllowed: saved.passwordAllowed,
        ...(body.clientSecret ? { clientSecret: 'replaced' } : {}),
      });
      return setupOf(ctx, ws.workspaceId, saved);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/sso/domains/:domain/verify',
    summary: "Check a listed domain's DNS proof (admin): the TXT record _cadenza-sso.<domain> must read cadenza-sso=<this workspace's token>; answers the domain's state and, when it is not proven, why",
    tags: ['sso'],
    access: { workspace: 'admin' },
    params: workspaceParams({ domain }),
    response: z.object({ verified: z.boolean(), reason: z.enum(['verified', 'missing', 'wrong_token', 'lookup_failed', 'taken']), domain: domainProof }),
    handler: async ({ ctx, ws, params, principal, req }) => {
      const r = await checkDomainProof(ctx.store.db, ctx.domains?.resolver, ws.workspaceId, params.domain, new Date(realClock(ctx).now()));
      if (r.kind === 'unknown_domain') throw cadenzaError('NOT_FOUND', "that domain is not listed in this workspace's single sign-on domains");
      if (r.kind === 'no_resolver') throw cadenzaError('CONFLICT', 'DNS checks are off on this server (CADENZA_DOMAIN_CHECKS=off), so no domain can be verified; ask whoever runs Cadenza to turn them on');
      if (r.kind === 'verified') await audit(ctx, ws.workspaceId, actorOf(principal, ws.userId, req.ip), { domainVerified: params.domain });
      return { verified: r.kind === 'verified', reason: r.kind, domain: proofView(r.proof) };
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/sso',
    summary: 'Remove single sign-on (admin): members sign in with their passwords again; those who joined by SSO need a password reset by invitation',
    tags: ['sso'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ removed: z.boolean() }),
    handler: async ({ ctx, ws, principal, req }) => {
      const removed = await deleteSsoSettings(ctx.store.db, ws.workspaceId);
      if (removed) await audit(ctx, ws.workspaceId, actorOf(principal, ws.userId, req.ip), { removed: true });
      return { removed };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/auth/sso/start',
    summary: "Begin signing in with a workspace's identity provider: named, or the one whose client app host this is, or found by the address's domain; answers the provider's URL to send the browser to, which comes back to this host",
    tags: ['auth', 'sso'],
    access: 'public',
    body: z
      .object({
        email: z.string().trim().max(320).optional().describe('Your work address: its domain finds the workspace'),
        workspaceId: z.uuid().optional(),
      })
      .refine((b) => !!b.email || !!b.workspaceId, 'give your work address or a workspace'),
    example: () => ({ body: { email: 'rep@example.com' } }),
    response: z.object({ url: z.string().describe("The provider's authorization URL") }),
    rateLimit: (ctx) => ({ max: ctx.loginLimit.perIp, windowMs: ctx.loginLimit.windowMs }),
    handler: async ({ ctx, req, body, reply }) => {
      const s = await startSsoSignIn(ssoDeps(ctx), body, requestHost(req.headers.host));
      reply.setCookie(SSO_BINDING_COOKIE, s.binding, { httpOnly: true, sameSite: 'lax', secure: cookiesSecure(ctx, req), path: SSO_BINDING_PATH, maxAge: 600 });
      return { url: s.url.href };
    },
  }),
];
