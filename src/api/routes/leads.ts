import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { z } from 'zod';
import { importLeads, type ColumnTarget } from '../../leads/index.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/** A column's target as the mapping names it: a field, custom.<name>, or '-'. */
function targetText(t: ColumnTarget): string {
  return t.kind === 'field' ? t.field : t.kind === 'custom' ? `custom.${t.name}` : '-';
}

const leadBody = z
  .object({
    id: z.uuid(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    company: z.string().nullable(),
    title: z.string().nullable(),
    phone: z.string().nullable(),
    country: z.string().nullable(),
    timeZone: z.string().nullable(),
    custom: z.record(z.string(), z.string()),
  })
  .meta({ id: 'Lead' });

/** A CSV sent in the request body: the web app's import reads the file in the browser. 20 MB is ~100k leads. */
const MAX_CSV_CHARS = 20 * 1024 * 1024;

export const leadRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads',
    summary: 'Leads, newest first, optionally matching a search in email, name or company',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({
      search: z.string().max(200).default(''),
      limit: z.coerce.number().int().min(1).max(500).default(100),
      offset: z.coerce.number().int().min(0).default(0),
    }),
    response: z.object({ leads: z.array(leadBody), total: z.number().int() }),
    handler: async ({ ctx, ws, query }) => {
      let q = ctx.store.db.selectFrom('lead').where('workspace_id', '=', ws.workspaceId);
      const s = query.search.trim();
      if (s) {
        const like = `%${s.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
        q = q.where((eb) =>
          eb.or([
            eb('email_norm', 'ilike', like),
            eb('first_name', 'ilike', like),
            eb('last_name', 'ilike', like),
            eb('company', 'ilike', like),
            eb(sql<string>`coalesce(first_name, '') || ' ' || coalesce(last_name, '')`, 'ilike', like),
          ]),
        );
      }
      const [rows, total] = await Promise.all([
        q
          .select(['id', 'email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'time_zone', 'custom'])
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(query.limit)
          .offset(query.offset)
          .execute(),
        q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return {
        total: Number(total.n),
        leads: rows.map((l) => ({
          id: l.id,
          email: l.email,
          firstName: l.first_name,
          lastName: l.last_name,
          company: l.company,
          title: l.title,
          phone: l.phone,
          country: l.country,
          timeZone: l.time_zone,
          custom: (l.custom ?? {}) as Record<string, string>,
        })),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/import',
    summary: 'Import leads from CSV text with a column mapping; answers the counts and the rejected rows',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({
      csv: z.string().min(1).max(MAX_CSV_CHARS),
      mapping: z.record(z.string(), z.string()).optional().describe("CSV column → email, first_name, …, custom.<name>, or '-' to leave out"),
      onDuplicate: z.enum(['skip', 'update']).default('skip'),
    }),
    example: () => ({ body: { csv: 'email,first_name\nana@example.test,Ana\n' } }),
    response: z
      .object({
        rowsRead: z.number().int(),
        imported: z.number().int(),
        updated: z.number().int(),
        unchanged: z.number().int(),
        rejected: z.number().int(),
        rejectsByReason: z.record(z.string(), z.number()),
        warnings: z.number().int(),
        issues: z.array(z.object({ kind: z.string(), line: z.number().int(), reason: z.string(), message: z.string() })),
        columns: z.array(z.object({ header: z.string(), target: z.string().describe("A field, custom.<name>, or '-' (left out)") })),
        durationMs: z.number(),
      })
      .meta({ id: 'ImportReport' }),
    handler: async ({ ctx, ws, body }) => {
      const r = await importLeads(ctx.store, {
        workspaceId: ws.workspaceId,
        input: Readable.from([Buffer.from(body.csv, 'utf8')]),
        ...(body.mapping ? { mapping: body.mapping } : {}),
        onDuplicate: body.onDuplicate,
        clock: ctx.clock,
        random: ctx.random,
      });
      return {
        rowsRead: r.rowsRead,
        imported: r.imported,
        updated: r.updated,
        unchanged: r.unchanged,
        rejected: r.rejected,
        rejectsByReason: r.rejectsByReason,
        warnings: r.warnings,
        issues: r.issues.map((i) => ({ kind: i.kind, line: i.line, reason: i.reason, message: i.message })),
        columns: r.columns.map((c) => ({ header: c.header, target: targetText(c.target) })),
        durationMs: r.durationMs,
      };
    },
  }),
];
