import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { auditCsvLine, AUDIT_CSV_HEADER } from '../audit/audit-csv.ts';
import { AUDIT_ACTIONS, listAudit, type AuditEvent, type AuditFilter } from '../audit/audit-log.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const auditEvent = z
  .object({
    id: z.uuid(),
    at: z.iso.datetime(),
    action: z.string().describe(`One of: ${AUDIT_ACTIONS.join(', ')}`),
    actorKind: z.enum(['session', 'api_key', 'system', 'anonymous']),
    actor: z.string().describe("The actor as it read at the time: a member's address, an API key's name and prefix, Cadenza"),
    actorUserId: z.uuid().nullable(),
    actorKeyId: z.uuid().nullable(),
    target: z.string().nullable().describe('What the act was about: an address, a key, a mailbox, a file'),
    ip: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEvent' });

const filters = {
  action: z.string().regex(/^[a-z_]+(\.[a-z_]+)?$/, 'an action such as member.removed, or a group such as member').max(64).optional(),
  actor: z.string().max(320).optional().describe("Text in the actor's address or key name"),
  target: z.string().max(320).optional().describe('Text in the target'),
  from: z.iso.datetime().optional().describe('Events at or after this instant'),
  to: z.iso.datetime().optional().describe('Events before this instant'),
};

const toBody = (e: AuditEvent): z.output<typeof auditEvent> => ({
  id: e.id,
  at: e.at.toISOString(),
  action: e.action,
  actorKind: e.actorKind,
  actor: e.actorLabel,
  actorUserId: e.actorUserId,
  actorKeyId: e.actorKeyId,
  target: e.target,
  ip: e.ip,
  detail: e.detail,
});

const cursorOf = (e: AuditEvent) => Buffer.from(`${e.at.toISOString()}|${e.id}`).toString('base64url');
function parseCursor(s: string): { at: Date; id: string } {
  const [at, id] = Buffer.from(s, 'base64url').toString('utf8').split('|');
  const d = new Date(at ?? '');
  if (Number.isNaN(d.getTime()) || !id || !/^[0-9a-f-]{36}$/.test(id)) throw cadenzaError('INVALID_INPUT', "before: not a cursor from this list's nextBefore", { field: 'before' });
  return { at: d, id };
}
function filterOf(q: { action?: string | undefined; actor?: string | undefined; target?: string | undefined; from?: string | undefined; to?: string | undefined }): AuditFilter {
  return { action: q.action, actor: q.actor, target: q.target, from: q.from ? new Date(q.from) : undefined, to: q.to ? new Date(q.to) : undefined };
}

/** The most rows one CSV export holds; a longer log is exported in date ranges (from/to). */
export const AUDIT_CSV_MAX_ROWS = 100_000;

export const auditRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/audit-log',
    summary: "The workspace's audit log, newest first, filtered (admin)",
    tags: ['workspace'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    query: z.object({
      ...filters,
      before: z.string().max(200).optional().describe("The previous page's nextBefore"),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
    response: z.object({ events: z.array(auditEvent), nextBefore: z.string().nullable() }).meta({ id: 'AuditLogPage' }),
    handler: async ({ ctx, ws, query }) => {
      const events = await listAudit(ctx.store.db, ws.workspaceId, { ...filterOf(query), before: query.before ? parseCursor(query.before) : undefined }, query.limit + 1);
      const page = events.slice(0, query.limit);
      return { events: page.map(toBody), nextBefore: events.length > query.limit ? cursorOf(page[page.length - 1]!) : null };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/audit-log.csv',
    summary: 'The audit log as CSV, with the same filters (admin); formula-looking cells are neutralised',
    tags: ['workspace'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    query: z.object(filters),
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, query, reply } = c;
      const events = await listAudit(ctx.store.db, ws.workspaceId, filterOf(query), AUDIT_CSV_MAX_ROWS);
      // Downloading the log is itself an event, recorded after the read so it is not in this file.
      await audit(c, { action: 'export.downloaded', target: 'audit-log.csv', detail: { rows: events.length, ...query } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit-log.csv"');
      return `${[AUDIT_CSV_HEADER, ...events.map(auditCsvLine)].join('\r\n')}\r\n`;
    },
  }),
];
