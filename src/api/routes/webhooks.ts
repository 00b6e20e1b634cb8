import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { realClock, type ApiContext } from '../context.ts';
import { createEndpoint, defaultPreviousSecretMs, deleteEndpoint, listDeliveries, listEndpoints, maxPreviousSecretMs, queueTestEvent, rotateSecret, webhookEvents } from '../webhooks/endpoints.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const endpoint = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

const delivery = z
  .object({
    id: z.number().int(),
    eventId: z.string().describe('The same on every attempt: deduplicate on it'),
    eventType: z.string(),
    state: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    responseCode: z.number().int().nullable().describe("The last attempt's HTTP status; null when no answer came"),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    lastAttemptAt: z.iso.datetime().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
    deliveredAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

// Webhooks out run in real time (the dispatcher's claims, the signature's timestamp), demo or not.
const deps = (ctx: ApiContext) => ({ db: ctx.store.db, clock: realClock(ctx), random: ctx.random });
/** Signing secrets are stored sealed by the vault: without one, none can be made. */
const sealing = (ctx: ApiContext) => {
  if (!ctx.vault) throw cadenzaError('CONFIG_INVALID', 'this server has no vault (master key) to seal webhook signing secrets with');
  return { ...deps(ctx), sealer: ctx.vault };
};
const secretShownOnce = z.string().describe('The HMAC-SHA256 key of the Cadenza-Signature header. Shown in this answer only: it is stored sealed and never returned again.');

/** Webhooks out (docs/api.md "Webhooks"): endpoints, their delivery log, and a test event. Admins only: an endpoint receives prospects' data. */
export const webhookRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/webhooks',
    summary: "The workspace's webhook endpoints (never their secrets)",
    tags: ['webhooks'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ webhooks: z.array(endpoint) }),
    handler: async ({ ctx, ws }) => ({ webhooks: await listEndpoints(ctx.store.db, ws.workspaceId) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/webhooks',
    summary: 'Add a webhook endpoint (admin); its signing secret is in this answer only (stored sealed with the workspace key)',
    tags: ['webhooks'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      url: z.string().min(1).max(2000).describe('https (http and private addresses only where the installation allows them)'),
      events: z.array(z.enum(webhookEvents)).min(1),
      description: z.string().max(200).optional(),
    }),
    example: () => ({ body: { url: 'https://hooks.example.com/cadenza', events: ['reply' as const, 'bounce' as const] } }),
    response: endpoint.extend({ secret: secretShownOnce }),
    handler: async ({ ctx, ws, body }) =>
      createEndpoint(sealing(ctx), { allowPrivate: ctx.webhooks?.allowPrivate ?? false }, { workspaceId: ws.workspaceId, url: body.url, events: body.events, description: body.description }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/webhooks/:webhookId/rotate-secret',
    summary: "Replace an endpoint's signing secret (admin); the new one is in this answer only. The old one keeps signing alongside (a second v1) for keepPreviousHours",
    tags: ['webhooks'],
    access: { workspace: 'admin' },
    params: workspaceParams({ webhookId: z.uuid() }),
    query: z.object({
      keepPreviousHours: z.coerce
        .number()
        .int()
        .min(0)
        .max(maxPreviousSecretMs / 3_600_000)
        .default(defaultPreviousSecretMs / 3_600_000)
        .describe('How long deliveries are also signed with the replaced secret, so receivers can switch over; 0 for a leaked secret'),
    }),
    response: endpoint.extend({
      secret: secretShownOnce,
      previousSecretExpiresAt: z.iso.datetime().nullable().describe('Until when the replaced secret still signs; null: it no longer does'),
    }),
    handler: async ({ ctx, ws, params, query }) => rotateSecret(sealing(ctx), ws.workspaceId, params.webhookId, query.keepPreviousHours * 3_600_000),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/webhooks/:webhookId',
    summary: 'Remove a webhook endpoint with its delivery log (admin); nothing more is sent to it',
    tags: ['webhooks'],
    access: { workspace: 'admin' },
    params: workspaceParams({ webhookId: z.uuid() }),
    response: endpoint,
    handler: async ({ ctx, ws, params }) => deleteEndpoint(ctx.store.db, ws.workspaceId, params.webhookId),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/webhooks/:webhookId/deliveries',
    summary: "An endpoint's delivery log, newest first: state, attempts, last response code and error",
    tags: ['webhooks'],
    access: { workspace: 'admin' },
    params: workspaceParams({ webhookId: z.uuid() }),
    query: z.object({
      limit: z.coerce.number().int().min(1).max(200).default(50),
      before: z.coerce.number().int().positive().optional().describe('A delivery id: the page before it'),
      state: z.enum(['pending', 'delivered', 'failed']).optional(),
    }),
    response: z.object({ deliveries: z.array(delivery) }),
    handler: async ({ ctx, ws, params, query }) => ({ deliveries: await listDeliveries(ctx.store.db, ws.workspaceId, params.webhookId, query) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/webhooks/:webhookId/test',
    summary: "Send a `test` event to one endpoint (admin); its outcome appears in the endpoint's delivery log",
    tags: ['webhooks'],
    access: { workspace: 'admin' },
    status: 202,
    params: workspaceParams({ webhookId: z.uuid() }),
    response: z.object({ deliveryId: z.number().int(), eventId: z.string() }),
    handler: async ({ ctx, ws, params }) => {
      const queued = await queueTestEvent(deps(ctx), ws.workspaceId, params.webhookId);
      ctx.webhooks?.nudge?.();
      return queued;
    },
  }),
];
