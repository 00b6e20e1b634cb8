import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { enrollmentService } from '../context.ts';
import { findTask, listTasks } from '../../sequence/sql/tasks.ts';
import { recordTaskOutcome } from '../../sequence/task-outcome.ts';
import { logTaskCall } from '../../dialer/calls.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { CALL_OUTCOMES } from './calls.ts';
import { csvRecord } from '../../common/csv-write.ts';
import { audit } from '../audit/actor.ts';

/** The most tasks one export holds: a day's calls of a large team is hundreds, a backlog thousands. */
const EXPORT_MAX = 50_000;

export const taskRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/tasks',
    summary: 'Call and manual tasks, soonest due first',
    tags: ['tasks'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ state: z.enum(['open', 'done', 'skipped', 'cancelled']).default('open'), limit: z.coerce.number().int().min(1).max(500).default(200) }),
    response: z.object({
      tasks: z.array(
        z.object({
          id: z.uuid(),
          kind: z.enum(['call', 'manual']),
          state: z.enum(['open', 'done', 'skipped', 'cancelled']),
          title: z.string(),
          notes: z.string().nullable(),
          dueAt: z.string(),
          leadId: z.uuid(),
          leadEmail: z.string(),
          leadName: z.string().nullable(),
          company: z.string().nullable(),
          phone: z.string().nullable().describe('As written'),
          phoneE164: z.string().nullable().describe('What the dialer dials; null when the number cannot be read'),
          attempts: z.number().int().describe('Calls logged on this task so far'),
          sequenceName: z.string(),
        }),
      ),
    }),
    handler: async ({ ctx, ws, query }) => {
      const rows = await listTasks(ctx.store.db, ws.workspaceId, query.state, query.limit);
      return {
        tasks: rows.map((r) => ({
          id: r.id,
          kind: r.kind,
          state: r.state,
          title: r.title,
          notes: r.notes,
          dueAt: new Date(r.due_at).toISOString(),
          leadId: r.lead_id,
          leadEmail: r.email,
          leadName: [r.first_name, r.last_name].filter(Boolean).join(' ') || null,
          company: r.company,
          phone: r.phone,
          phoneE164: r.phone_e164,
          attempts: r.attempts,
          sequenceName: r.name,
        })),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/tasks.csv',
    summary: `The tasks in one state as CSV, soonest due first (at most ${EXPORT_MAX.toLocaleString('en')}); formula-looking cells are neutralised`,
    tags: ['tasks'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ state: z.enum(['open', 'done', 'skipped', 'cancelled']).default('open') }),
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, query, reply } = c;
      const rows = await listTasks(ctx.store.db, ws.workspaceId, query.state, EXPORT_MAX);
      const head = csvRecord(['due_at', 'kind', 'state', 'title', 'lead_email', 'lead_name', 'company', 'phone', 'sequence', 'attempts', 'notes']);
      const body = rows.map((r) =>
        csvRecord([new Date(r.due_at).toISOString(), r.kind, r.state, r.title, r.email, [r.first_name, r.last_name].filter(Boolean).join(' '), r.company ?? '', r.phone ?? '', r.name, String(r.attempts), r.notes ?? '']),
      );
      await audit(c, { action: 'export.downloaded', target: 'tasks.csv', detail: { rows: rows.length, state: query.state } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="tasks-${query.state}.csv"`);
      return head + body.join('');
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/tasks/:taskId/complete',
    summary: "Complete a task with its outcome; the enrollment moves on (or stops, for a booked meeting)",
    tags: ['tasks'],
    access: { workspace: 'member' },
    params: workspaceParams({ taskId: z.uuid() }),
    body: z.object({
      outcome: z.enum(['done', 'skipped', ...CALL_OUTCOMES]),
      notes: z.string().max(10_000).optional().describe("A call task's notes, kept on the call's record"),
      durationSeconds: z.number().int().min(0).max(86_400).optional().describe('How long a call dialled elsewhere lasted'),
    }),
    example: () => ({ body: { outcome: 'done' as const } }),
    response: z.object({ ok: z.literal(true), state: z.enum(['open', 'done', 'skipped']), retryAt: z.string().nullable().describe("A call tried again per the step's retry rule: when it comes due") }),
    handler: async ({ ctx, ws, params, body }) => {
      const t = await findTask(ctx.store.db, ws.workspaceId, params.taskId);
      if (!t) throw cadenzaError('NOT_FOUND', 'no such task');
      if (t.state !== 'open') throw cadenzaError('INVALID_TRANSITION', `the task is already ${t.state}`);
      const service = enrollmentService(ctx);
      const o = body.outcome;
      let result: { state: 'open' | 'done' | 'skipped'; retryAt: Date | null } | null;
      if (t.kind === 'call' && o !== 'done' && o !== 'skipped') {
        // A call dialled from another phone: its record is kept like a dialled one's (source 'logged').
        const deps = { store: ctx.store, clock: ctx.clock, random: ctx.random, service };
        result = (await logTaskCall(deps, ws.workspaceId, ws.userId, t.id, o, body.notes?.trim() ? body.notes : null, body.durationSeconds !== undefined ? body.durationSeconds * 1000 : null))?.task ?? null;
      } else {
        const now = ctx.clock.now();
        const r = await ctx.store.db.transaction().execute((tx) => recordTaskOutcome(tx, service, { id: t.id, kind: t.kind, enrollmentId: t.enrollment_id, stepId: t.step_id }, o, now));
        if (r) service.notify(r.applied);
        result = r;
      }
      if (!result) throw cadenzaError('INVALID_TRANSITION', 'the task was completed meanwhile');
      return { ok: true as const, state: result.state, retryAt: result.retryAt ? result.retryAt.toISOString() : null };
    },
  }),
];
