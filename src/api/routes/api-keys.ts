import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { actorOf, audit } from '../audit/actor.ts';
import { apiKeyView, createApiKey, listApiKeys, revokeApiKey, type ApiKeyView } from '../auth/api-keys.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const apiKey = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().describe('The first characters of the key, to tell keys apart'),
    role: z.enum(['admin', 'member']),
    scope: z.enum(['read_write', 'read_only']).describe('read_only: GET requests only, whatever the role allows'),
    createdBy: z.string().nullable().describe("Who created it, as it read then: a member's address, or the API key that made it"),
    createdById: z.uuid().nullable().describe('The creating member (app_user id); null once they left, or when a key made it'),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });

const toKey = (r: ApiKeyView): z.output<typeof apiKey> => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  role: r.role,
  scope: r.read_only ? 'read_only' : 'read_write',
  createdBy: r.created_by_label,
  createdById: r.created_by,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

export const apiKeyRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/api-keys',
    summary: "The workspace's API keys (never the keys themselves), with who created each and when it was last used",
    tags: ['api-keys'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ apiKeys: z.array(apiKey) }),
    handler: async ({ ctx, ws }) => ({
      apiKeys: (await listApiKeys(ctx.store.db, ws.workspaceId)).map(toKey),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/api-keys',
    summary: 'Create an API key (admin); the key is in this answer only',
    tags: ['api-keys'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      name: z.string().min(1).max(100),
      role: z.enum(['admin', 'member']).default('admin'),
      scope: z.enum(['read_write', 'read_only']).default('read_write').describe('read_only: the key may only make GET requests'),
    }),
    example: () => ({ body: { name: 'crm sync' } }),
    response: apiKey.extend({ key: z.string().describe('Send as Authorization: Bearer <key>. Shown once.') }),
    handler: async (c) => {
      const { ctx, ws, body } = c;
      // A member-role key cannot reach this route; an admin key may make keys up to admin.
      const actor = await actorOf(c);
      const k = await createApiKey(ctx.store.db, ctx, { workspaceId: ws.workspaceId, name: body.name, role: body.role, readOnly: body.scope === 'read_only', createdBy: ws.userId, createdByLabel: actor.label });
      const row = await apiKeyView(ctx.store.db, k.id);
      await audit(c, { action: 'api_key.created', target: `${row.name} (${row.prefix}…)`, detail: { apiKeyId: row.id, role: row.role, scope: body.scope } });
      return { ...toKey(row), key: k.key };
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/api-keys/:apiKeyId',
    summary: 'Revoke an API key (admin); it stops working at once',
    tags: ['api-keys'],
    access: { workspace: 'admin' },
    params: workspaceParams({ apiKeyId: z.uuid() }),
    response: apiKey,
    handler: async (c) => {
      const { ctx, ws, params } = c;
      const row = await revokeApiKey(ctx.store.db, ws.workspaceId, params.apiKeyId, new Date(ctx.clock.now()));
      if (!row) throw cadenzaError('NOT_FOUND', 'no live API key with this id in this workspace');
      await audit(c, { action: 'api_key.revoked', target: `${row.name} (${row.prefix}…)`, detail: { apiKeyId: row.id } });
      return toKey(row);
    },
  }),
];
