import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { actorOf, audit } from '../audit/actor.ts';
import { createApiKey } from '../auth/api-keys.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const apiKey = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().describe('The first characters of the key, to tell keys apart'),
    role: z.enum(['admin', 'member']),
    createdBy: z.string().nullable().describe("Who created it, as it read then: a member's address, or the API key that made it"),
    createdById: z.uuid().nullable().describe('The creating member (app_user id); null once they left, or when a key made it'),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });

type Row = {
  id: string;
  name: string;
  prefix: string;
  role: 'admin' | 'member';
  created_by: string | null;
  created_by_label: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};
const toKey = (r: Row): z.output<typeof apiKey> => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  role: r.role,
  createdBy: r.created_by_label,
  createdById: r.created_by,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});
const columns = ['id', 'name', 'prefix', 'role', 'created_by', 'created_by_label', 'created_at', 'last_used_at', 'revoked_at'] as const;

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
      apiKeys: (await ctx.store.db.selectFrom('api_key').select(columns).where('workspace_id', '=', ws.workspaceId).orderBy('created_at').execute()).map(toKey),
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
    body: z.object({ name: z.string().min(1).max(100), role: z.enum(['admin', 'member']).default('admin') }),
    example: () => ({ body: { name: 'crm sync' } }),
    response: apiKey.extend({ key: z.string().describe('Send as Authorization: Bearer <key>. Shown once.') }),
    handler: async (c) => {
      const { ctx, ws, body } = c;
      // A member-role key cannot reach this route; an admin key may make keys up to admin.
      const actor = await actorOf(c);
      const k = await createApiKey(ctx.store.db, ctx, { workspaceId: ws.workspaceId, name: body.name, role: body.role, createdBy: ws.userId, createdByLabel: actor.label });
      const row = await ctx.store.db.selectFrom('api_key').select(columns).where('id', '=', k.id).executeTakeFirstOrThrow();
      await audit(c, { action: 'api_key.created', target: `${row.name} (${row.prefix}…)`, detail: { apiKeyId: row.id, role: row.role } });
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
      const row = await ctx.store.db
        .updateTable('api_key')
        .set({ revoked_at: new Date(ctx.clock.now()) })
        .where('id', '=', params.apiKeyId)
        .where('workspace_id', '=', ws.workspaceId)
        .where('revoked_at', 'is', null)
        .returning(columns)
        .executeTakeFirst();
      if (!row) throw cadenzaError('NOT_FOUND', 'no live API key with this id in this workspace');
      await audit(c, { action: 'api_key.revoked', target: `${row.name} (${row.prefix}…)`, detail: { apiKeyId: row.id } });
      return toKey(row);
    },
  }),
];
