import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { readWeeklyReport, saveWeeklyReport, setWeeklyReportSubscription } from '../weekly-report/settings.ts';

/**
 * The weekly analytics report by email (issue 18, api/weekly-report/): an admin turns it on and
 * picks the weekday and hour (the workspace's zone); each member asks for it or not for themselves.
 */

const view = z
  .object({
    enabled: z.boolean(),
    weekday: z.number().int().describe('ISO weekday: 1 Monday … 7 Sunday'),
    hour: z.number().int(),
    zone: z.string().describe("The workspace's time zone, which the weekday and hour are in"),
    mailConfigured: z.boolean().describe('Whether this installation can send mail as itself (CADENZA_SMTP_URL); without it no report goes out'),
    members: z.array(z.object({ userId: z.uuid(), email: z.string(), name: z.string().nullable(), role: z.string(), optedIn: z.boolean(), receives: z.boolean().describe('Opted in, or an owner while nobody has') })),
    next: z.string().nullable().describe('When the next report goes out (null: off)'),
    last: z.object({ week: z.string(), sentAt: z.string().nullable(), recipients: z.number().int().nullable(), error: z.string().nullable() }).nullable(),
  })
  .meta({ id: 'WeeklyReport' });

export const weeklyReportRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/weekly-report',
    summary: 'The weekly analytics report by email: on or off, its weekday and hour in the workspace\'s zone, who receives it, when the next goes out and how the last went',
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: view,
    handler: async ({ ctx, ws }) => ({ ...(await readWeeklyReport(ctx.store.db, ws.workspaceId, ctx.clock.now())), mailConfigured: ctx.mailer !== undefined }),
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/weekly-report',
    summary: 'Turn the weekly report on or off and choose its weekday and hour in the workspace\'s zone (admin)',
    tags: ['analytics'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({
      enabled: z.boolean(),
      weekday: z.number().int().min(1, 'weekday is 1 (Monday) to 7 (Sunday)').max(7, 'weekday is 1 (Monday) to 7 (Sunday)'),
      hour: z.number().int().min(0, 'hour is 0 to 23').max(23, 'hour is 0 to 23'),
    }),
    example: () => ({ body: { enabled: true, weekday: 1, hour: 8 } }),
    response: view,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      await saveWeeklyReport(ctx.store.db, ws.workspaceId, body, ctx.clock.now());
      await audit(c, { action: 'settings.changed', target: 'weekly-report', detail: body });
      return { ...(await readWeeklyReport(ctx.store.db, ws.workspaceId, ctx.clock.now())), mailConfigured: ctx.mailer !== undefined };
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/weekly-report/subscription',
    summary: 'Ask for the weekly report for yourself, or stop (any member; an API key has no member to subscribe)',
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ receive: z.boolean() }),
    example: () => ({ body: { receive: true } }),
    response: view,
    handler: async ({ ctx, ws, body }) => {
      if (!ws.userId) throw cadenzaError('INVALID_INPUT', 'an API key is not a member: sign in as the member who wants the report', { field: 'receive' });
      await setWeeklyReportSubscription(ctx.store.db, ws.workspaceId, ws.userId, body.receive, ctx.clock.now());
      return { ...(await readWeeklyReport(ctx.store.db, ws.workspaceId, ctx.clock.now())), mailConfigured: ctx.mailer !== undefined };
    },
  }),
];
