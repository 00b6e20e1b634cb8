import { z } from 'zod';
import { csvRecord } from '../../common/csv-write.ts';
import { cadenzaError } from '../../common/errors.ts';
import { checkEmail } from '../../leads/email.ts';
import { allSuppressions, listSuppressions, readSuppressionList, suppressAddresses } from '../../leads/suppression.ts';
import { liftSuppression, suppressedFor as reasonOf } from '../../sequence/suppress.ts';
import { enrollmentService, type ApiContext } from '../context.ts';
import type { WorkspaceAccess } from '../auth/access.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const reason = z.enum(['hard_bounce', 'unsubscribe', 'complaint', 'manual']);
// 'erased' is listed, never set here: its row holds a keyed hash of an erased person's address
// instead of the address (src/privacy/erase.ts).
const listedReason = z.enum([...reason.options, 'erased']);
const suppression = z
  .object({ email: z.string().describe("The address, or 'erased:' and a keyed hash for a person erased at their request"), reason: listedReason, source: z.string().nullable(), createdAt: z.iso.datetime() })
  .meta({ id: 'Suppression' });

// Import bodies are bounded: a list past this size is split by the client.
const MAX_IMPORT_CHARS = 5_000_000;

function who(ws: WorkspaceAccess): string {
  return ws.userId ? `api: member ${ws.userId}` : 'api: API key';
}

const deps = (ctx: ApiContext) => ({ store: ctx.store, service: enrollmentService(ctx), clock: ctx.clock });

export const suppressionRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/suppressions',
    summary: 'Suppressed addresses (never mailed from this workspace), in address order, searchable',
    tags: ['suppression'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({
      q: z.string().max(320).optional().describe('Addresses containing this text'),
      reason: listedReason.optional(),
      after: z.string().max(320).optional().describe("The previous page's nextAfter"),
      limit: z.coerce.number().int().min(1).max(500).default(100),
    }),
    example: () => ({ query: { limit: 10 } }),
    response: z.object({ suppressions: z.array(suppression), nextAfter: z.string().nullable() }),
    handler: async ({ ctx, ws, query }) => {
      const page = await listSuppressions(ctx.store.db, ws.workspaceId, query);
      return {
        suppressions: page.rows.map((r) => ({ email: r.email_norm, reason: r.reason, source: r.source, createdAt: r.created_at.toISOString() })),
        nextAfter: page.nextAfter,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/suppressions',
    summary: "Suppress an address; its live enrollments stop",
    tags: ['suppression'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({ email: z.string().min(3).max(320), reason: reason.default('manual') }),
    example: () => ({ body: { email: 'do-not-mail@prospects.test' } }),
    response: z.object({ email: z.string(), added: z.number().int(), stopped: z.number().int() }),
    handler: async ({ ctx, ws, body }) => {
      const c = checkEmail(body.email);
      if (!c.ok) throw cadenzaError('INVALID_INPUT', `email ${c.message}`, { field: 'email' });
      const r = await suppressAddresses(deps(ctx), ws.workspaceId, [c.norm], body.reason, who(ws));
      return { email: c.norm, ...r };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/suppressions/import',
    summary: 'Import a suppression list (CSV with an email column, or one address per line); rows that are not addresses are reported',
    tags: ['suppression'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ csv: z.string().min(1).max(MAX_IMPORT_CHARS), reason: reason.default('manual') }),
    example: () => ({ body: { csv: 'email\nold-customer@prospects.test\n' } }),
    response: z.object({
      read: z.number().int(),
      added: z.number().int(),
      stopped: z.number().int(),
      rejected: z.array(z.object({ line: z.number().int(), value: z.string(), message: z.string() })),
    }),
    handler: async ({ ctx, ws, body }) => {
      const list = await readSuppressionList(body.csv);
      const r = await suppressAddresses(deps(ctx), ws.workspaceId, list.emails, body.reason, `${who(ws)} import`);
      return { read: list.emails.length, ...r, rejected: list.rejected.slice(0, 1000) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/suppressions/export',
    summary: 'The whole suppression list as CSV (email, reason, source, created_at)',
    tags: ['suppression'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, reply } = c;
      const rows = await allSuppressions(ctx.store.db, ws.workspaceId);
      const lines = ['email,reason,source,created_at', ...rows.map((r) => csvRecord([r.email_norm, r.reason, r.source ?? '', r.created_at.toISOString()], ',', ''))];
      await audit(c, { action: 'export.downloaded', target: 'suppressions.csv', detail: { rows: rows.length } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="suppressions.csv"');
      return `${lines.join('\r\n')}\r\n`;
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/suppressions/:email',
    summary: 'Lift a suppression (admin): the address may be mailed again; stopped enrollments stay stopped. Recorded in the audit log (suppression.lifted) with the reason given',
    tags: ['suppression'],
    access: { workspace: 'admin' },
    params: workspaceParams({ email: z.string().min(3).max(320) }),
    body: z.object({ reason: z.string().trim().min(1).max(500).describe('Why the address may be mailed again (kept in the audit log)') }).nullish(),
    example: () => ({ body: { reason: 'They asked to hear from us again' } }),
    response: z.object({ ok: z.literal(true) }),
    handler: async (c) => {
      const { ctx, ws, params, body } = c;
      const e = checkEmail(params.email);
      const lifted = e.ok
        ? await ctx.store.db.transaction().execute(async (tx) => {
            const suppressedFor = await reasonOf(tx, ws.workspaceId, e.norm);
            if (suppressedFor === undefined || !(await liftSuppression(tx, ws.workspaceId, e.norm))) return false;
            // The act and its record commit together: a lift is never unaccounted for.
            await audit(c, { action: 'suppression.lifted', target: e.norm, detail: { suppressedFor, reason: body?.reason ?? null } }, tx);
            return true;
          })
        : false;
      if (!lifted) throw cadenzaError('NOT_FOUND', 'this address is not suppressed in this workspace');
      return { ok: true as const };
    },
  }),
];
