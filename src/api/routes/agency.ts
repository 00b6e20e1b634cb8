import { z } from 'zod';
import { isValidZone } from '../../calendar/index.ts';
import { cadenzaError } from '../../common/errors.ts';
import { csvRecord } from '../../common/csv-write.ts';
import { createClient } from '../../agency/clients.ts';
import { agencyOf, clientsOfAgency, clientUsage } from '../../agency/sql/agency.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import type { ApiContext } from '../context.ts';

/**
 * An agency workspace's clients (docs/web.md "Agency"; docs/security.md "Agencies"): the list with
 * each client's usage over a period, a new client, and the usage as CSV. The agency's admins and
 * owners call these in the agency's own workspace; they then reach each client as an admin.
 */
const DAY_MS = 86_400_000;
const period = z.object({
  from: z.iso.date().optional().describe('First day (UTC), inclusive; default 30 days before `to`'),
  to: z.iso.date().optional().describe('Last day (UTC), inclusive; default today'),
});

function window(q: z.output<typeof period>, now: number): { from: Date; to: Date } {
  const to = q.to ? Date.parse(`${q.to}T00:00:00Z`) + DAY_MS : Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  const from = q.from ? Date.parse(`${q.from}T00:00:00Z`) : to - 30 * DAY_MS;
  if (from >= to) throw cadenzaError('INVALID_INPUT', 'the period starts after it ends', { field: 'from' });
  if (to - from > 366 * DAY_MS) throw cadenzaError('INVALID_INPUT', 'a period is at most 366 days', { field: 'from' });
  return { from: new Date(from), to: new Date(to) };
}

const usage = z.object({
  sends: z.number().int().describe('Emails sent in the period'),
  replies: z.number().int().describe('Replies received in the period (threaded to an enrollment)'),
  mailboxes: z.number().int().describe('Mailboxes connected now'),
  leads: z.number().int().describe('Leads added in the period'),
  seats: z.number().int().describe("Members now (the client's own people; the agency's admins are not counted)"),
});

const clientView = z
  .object({
    id: z.uuid(),
    name: z.string(),
    displayName: z.string().nullable(),
    primaryColor: z.string().nullable(),
    accentColor: z.string().nullable(),
    createdAt: z.string(),
    usage,
  })
  .meta({ id: 'AgencyClient' });

async function clientsWithUsage(ctx: ApiContext, agencyId: string, w: { from: Date; to: Date }) {
  const [rows, use] = await Promise.all([clientsOfAgency(ctx.store.db, agencyId), clientUsage(ctx.store.db, agencyId, w.from, w.to)]);
  const byId = new Map(use.map((u) => [u.workspace_id, u]));
  return rows.map((r) => {
    const u = byId.get(r.id);
    return {
      id: r.id,
      name: r.name,
      displayName: r.display_name,
      primaryColor: r.primary_color,
      accentColor: r.accent_color,
      createdAt: new Date(r.created_at).toISOString(),
      usage: { sends: u?.sends ?? 0, replies: u?.replies ?? 0, mailboxes: u?.mailboxes ?? 0, leads: u?.leads ?? 0, seats: u?.seats ?? 0 },
    };
  });
}

const url = '/api/workspaces/:workspaceId/agency/clients';
const day = (d: Date) => d.toISOString().slice(0, 10);

export const agencyRoutes = [
  defineRoute({
    method: 'GET',
    url,
    summary: "The agency's client workspaces with each one's usage over the period (admin)",
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    query: period,
    response: z.object({ isClient: z.boolean().describe('This workspace is itself a client of an agency (it has no clients)'), from: z.string(), to: z.string(), clients: z.array(clientView) }),
    handler: async ({ ctx, ws, query }) => {
      const w = window(query, ctx.clock.now());
      const isClient = (await agencyOf(ctx.store.db, ws.workspaceId)) != null;
      return { isClient, from: day(w.from), to: day(new Date(w.to.getTime() - DAY_MS)), clients: isClient ? [] : await clientsWithUsage(ctx, ws.workspaceId, w) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/agency/usage.csv',
    summary: "Each client's usage over the period as CSV (admin): one row per client",
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    query: period,
    response: z.string().describe('text/csv'),
    handler: async ({ ctx, ws, query, reply }) => {
      const w = window(query, ctx.clock.now());
      const clients = await clientsWithUsage(ctx, ws.workspaceId, w);
      const from = day(w.from);
      const to = day(new Date(w.to.getTime() - DAY_MS));
      const lines = [
        csvRecord(['client_id', 'client', 'from', 'to', 'sends', 'replies', 'mailboxes', 'leads', 'seats']),
        ...clients.map((c) => csvRecord([c.id, c.name, from, to, ...[c.usage.sends, c.usage.replies, c.usage.mailboxes, c.usage.leads, c.usage.seats].map(String)])),
      ];
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="client-usage-${from}-to-${to}.csv"`);
      return lines.join('');
    },
  }),
  defineRoute({
    method: 'POST',
    url,
    summary: 'Create a client workspace under this agency (admin); its admins reach it as admins, and invite its people',
    tags: ['agency'],
    access: { workspace: 'admin' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      name: z.string().trim().min(1).max(200),
      timeZone: z.string().refine(isValidZone, 'an IANA time zone such as Europe/Paris').optional(),
    }),
    example: () => ({ body: { name: 'Northwind', timeZone: 'Europe/Paris' } }),
    response: z.object({ id: z.uuid(), name: z.string(), timeZone: z.string() }).meta({ id: 'AgencyClientCreated' }),
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const timeZone = body.timeZone ?? 'UTC';
      const r = await createClient(ctx.store, ctx, { agencyId: ws.workspaceId, name: body.name, timeZone });
      if (!r.ok) throw cadenzaError('CONFLICT', r.message);
      await audit(c, { action: 'settings.changed', target: `workspace:${r.workspaceId}`, detail: { clientCreated: { id: r.workspaceId, name: body.name } } });
      return { id: r.workspaceId, name: body.name, timeZone };
    },
  }),
];
