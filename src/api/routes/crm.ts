import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { CRM_ACTIVITY_KINDS, CRM_KINDS, DEFAULT_BASE_URLS, createConnection, deleteConnection, listConnections, updateConnection } from '../../crm/connections.ts';
import { connectorKinds } from '../../crm/connectors.ts';
import { OAUTH_CRMS, type OAuthCrm } from '../../crm/oauth/apps.ts';
import { startCrmAuthorization } from '../../crm/oauth/flow.ts';
import { setHookSecret } from '../../crm/webhooks/register.ts';
import { checkEndpointUrl } from '../webhooks/destination.ts';
import { secretHash } from '../auth/tokens.ts';
import { crmCallbackUri, crmOAuthDeps } from '../crm-oauth-callback.ts';
import { realClock, type ApiContext } from '../context.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const connection = z
  .object({
    id: z.uuid(),
    kind: z.enum(CRM_KINDS as [string, ...string[]]),
    baseUrl: z.string(),
    activities: z.array(z.string()).describe('The activity kinds written to this CRM'),
    state: z.enum(['active', 'paused']),
    pausedReason: z.string().nullable().describe('Why it is paused (its token was refused or revoked, or an admin paused it); activities keep queueing and are written once it is active again'),
    preparedAt: z.iso.datetime().nullable().describe('When Cadenza set the CRM up (its custom property for activity ids); null until the first write'),
    createdAt: z.iso.datetime(),
    outbox: z.object({ pending: z.number().int(), written: z.number().int(), skipped: z.number().int().describe('No contact with that address in the CRM'), rejected: z.number().int().describe('Refused by the CRM for good; lastError says why') }),
    lastError: z.string().nullable(),
    lastWrittenAt: z.iso.datetime().nullable(),
    changes: z
      .object({
        cursorAt: z.iso.datetime().nullable().describe('When the change cursor last advanced; null until the first changes are read'),
        lastChangeAt: z.iso.datetime().nullable().describe('The newest CRM change read (the sync position)'),
        readError: z.string().nullable().describe("The change reader's last failure, until a round succeeds"),
        contacts: z.number().int().describe('CRM contacts mirrored'),
        conflicts: z.number().int().describe('CRM-side edits of Cadenza-owned fields logged'),
      })
      .describe('Changes in: where the reader stands'),
  })
  .meta({ id: 'CrmConnection' });

const activities = z.array(z.enum(CRM_ACTIVITY_KINDS as [string, ...string[]])).min(1).max(CRM_ACTIVITY_KINDS.length);

const vaultOf = (ctx: ApiContext) => {
  if (!ctx.vault) throw cadenzaError('CONFIG_INVALID', 'this server has no vault (master key) to seal CRM tokens with');
  return ctx.vault;
};

/** CRM sync (docs/crm.md): a workspace's connections, their status and outbox. Admins only: a CRM token reads and writes the company's customer data. */
export const crmRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/crm/connections',
    summary: "The workspace's CRM connections with their sync status (never their tokens)",
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({
      connections: z.array(connection),
      available: z.array(z.string()).describe('The CRMs this server has a connector for'),
      oauth: z.array(z.enum(OAUTH_CRMS as [OAuthCrm, ...OAuthCrm[]])).describe("The CRMs this server has an OAuth app for (CADENZA_<CRM>_CLIENT_ID): connected with POST …/crm/oauth/{kind}/start, the pasted token staying the alternative"),
    }),
    handler: async ({ ctx, ws }) => ({ connections: await listConnections(ctx.store.db, ws.workspaceId), available: [...connectorKinds], oauth: OAUTH_CRMS.filter((k) => ctx.crmOAuth?.[k]) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/crm/connections',
    summary: "Connect a CRM with its API token (admin): stored sealed with the workspace's key; activities are written from now on",
    tags: ['crm'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      kind: z.enum(CRM_KINDS as [string, ...string[]]),
      baseUrl: z.string().max(2000).optional().describe("The CRM's API address; default the CRM's own (a self-hosted Twenty's, or Salesforce's instance, must be given)"),
      token: z.string().min(1).max(4000).describe('A private app token (HubSpot), an API key (Twenty, Pipedrive) or an access token'),
      activities: activities.optional(),
    }),
    example: () => ({ body: { kind: 'hubspot' as const, token: 'pat-na1-00000000-0000-0000-0000-000000000000' } }),
    response: connection,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      if (!connectorKinds.has(body.kind as never)) throw cadenzaError('INVALID_INPUT', `${body.kind} cannot be connected yet on this version (available: ${[...connectorKinds].join(', ')})`, { field: 'kind' });
      const raw = body.baseUrl ?? DEFAULT_BASE_URLS[body.kind as keyof typeof DEFAULT_BASE_URLS];
      if (!raw) throw cadenzaError('INVALID_INPUT', `give the address of your ${body.kind} API (baseUrl)`, { field: 'baseUrl' });
      // The writer sends prospects' activities there: the same destination rules as webhooks.
      const url = checkEndpointUrl(raw, { allowPrivate: ctx.webhooks?.allowPrivate ?? false });
      const id = await createConnection(
        { db: ctx.store.db, random: ctx.random, now: realClock(ctx).now(), sealer: vaultOf(ctx) },
        { workspaceId: ws.workspaceId, kind: body.kind as never, baseUrl: url.href.replace(/\/$/, ''), token: body.token, ...(body.activities ? { activities: body.activities } : {}) },
      );
      await audit(c, { action: 'crm.connected', target: `crm:${id}`, detail: { kind: body.kind, baseUrl: url.origin } });
      return (await listConnections(ctx.store.db, ws.workspaceId, id))[0]!;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/crm/oauth/:kind/start',
    summary: "Start connecting (or re-authorizing) a CRM with OAuth (admin, signed in): returns the CRM's consent page to send the browser to; the CRM sends it back to /oauth/crm/callback",
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: workspaceParams({ kind: z.enum(OAUTH_CRMS as [OAuthCrm, ...OAuthCrm[]]) }),
    body: z.object({
      baseUrl: z.string().max(2000).optional().describe("HubSpot: the API address (default https://api.hubapi.com); Salesforce and Pipedrive name their own in the token answer"),
    }),
    example: () => ({ params: { kind: 'hubspot' as const }, body: {} }),
    response: z.object({ url: z.string().describe("The CRM's consent page, with state (and PKCE where the CRM supports it)"), expiresAt: z.iso.datetime().describe('The flow is good until then (10 minutes), once') }),
    handler: async (c) => {
      const { ctx, ws, params, body, principal } = c;
      // The consent comes back to a browser: only the session that started it may finish it.
      if (principal?.kind !== 'session' || !ws.userId) throw cadenzaError('FORBIDDEN', 'a CRM is connected with OAuth by a signed-in admin in the web app, not with an API key; with a key, connect with a token');
      const checkUrl = (u: string) => checkEndpointUrl(u, { allowPrivate: ctx.webhooks?.allowPrivate ?? false }).href;
      const started = await startCrmAuthorization(crmOAuthDeps(ctx), {
        workspaceId: ws.workspaceId,
        userId: ws.userId,
        sessionHash: secretHash(principal.sessionToken),
        kind: params.kind,
        redirectUri: crmCallbackUri(ctx),
        ...(body.baseUrl ? { baseUrl: checkUrl(body.baseUrl).replace(/\/$/, '') } : {}),
      });
      return { url: started.url.href, expiresAt: new Date(started.expiresAt).toISOString() };
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId',
    summary: 'Change what a CRM connection writes, pause or resume it, or give it a new token (which resumes it) (admin)',
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: workspaceParams({ connectionId: z.uuid() }),
    body: z
      .object({
        activities,
        state: z.enum(['active', 'paused']),
        token: z.string().min(1).max(4000),
        webhookSecret: z.string().min(1).max(500).nullable().describe("HubSpot: the app's client secret, which signs its webhooks (v3) to <public URL>/hooks/crm/<connection id>; sealed, never shown. Null removes it (changes are then polled only). Pipedrive's webhooks are registered by Cadenza itself"),
      })
      .partial(),
    example: () => ({ body: { state: 'active' as const } }),
    response: connection,
    handler: async (c) => {
      const { ctx, ws, params, body } = c;
      const { webhookSecret, ...change } = body;
      await updateConnection({ db: ctx.store.db, sealer: vaultOf(ctx) }, ws.workspaceId, params.connectionId, change);
      if (webhookSecret !== undefined) await setHookSecret({ db: ctx.store.db, sealer: vaultOf(ctx) }, ws.workspaceId, params.connectionId, webhookSecret);
      await audit(c, { action: 'crm.changed', target: `crm:${params.connectionId}`, detail: { ...(body.activities ? { activities: body.activities } : {}), ...(body.state ? { state: body.state } : {}), ...(body.token ? { token: 'replaced' } : {}), ...(webhookSecret !== undefined ? { webhookSecret: webhookSecret === null ? 'removed' : 'replaced' } : {}) } });
      ctx.crm?.nudge();
      return (await listConnections(ctx.store.db, ws.workspaceId, params.connectionId))[0]!;
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId',
    summary: 'Disconnect a CRM (admin): its token and its outbox are deleted; what was written stays in the CRM',
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: workspaceParams({ connectionId: z.uuid() }),
    response: z.object({ deleted: z.literal(true) }),
    handler: async (c) => {
      await deleteConnection(c.ctx.store.db, c.ws.workspaceId, c.params.connectionId);
      await audit(c, { action: 'crm.disconnected', target: `crm:${c.params.connectionId}`, detail: {} });
      return { deleted: true as const };
    },
  }),
];
