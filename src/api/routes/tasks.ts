import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { enrollmentService } from '../context.ts';
import type { CallOutcome } from '../../sequence/model.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const CALL_OUTCOMES = ['connected', 'no_answer', 'voicemail', 'wrong_number', 'meeting_booked', 'not_interested'] as const satisfies readonly CallOutcome[];

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
          leadEmail: z.string(),
          leadName: z.string().nullable(),
          phone: z.string().nullable(),
          sequenceName: z.string(),
        }),
      ),
    }),
    handler: async ({ ctx, ws, query }) => {
      const rows = await ctx.store.db
        .selectFrom('task as t')
        .innerJoin('enrollment as e', 'e.id', 't.enrollment_id')
        .innerJoin('lead as l', 'l.id', 'e.lead_id')
        .innerJoin('sequence as s', 's.id', 'e.sequence_id')
        .select(['t.id', 't.kind', 't.state', 't.title', 't.notes', 't.due_at', 'l.email', 'l.first_name', 'l.last_name', 'l.phone', 's.name'])
        .where('t.workspace_id', '=', ws.workspaceId)
        .where('t.state', '=', query.state)
        .orderBy('t.due_at')
        .limit(query.limit)
        .execute();
      return {
        tasks: rows.map((r) => ({
          id: r.id,
          kind: r.kind,
          state: r.state,
          title: r.title,
          notes: r.notes,
          dueAt: new Date(r.due_at).toISOString(),
          leadEmail: r.email,
          leadName: [r.first_name, r.last_name].filter(Boolean).join(' ') || null,
          phone: r.phone,
          sequenceName: r.name,
        })),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/tasks/:taskId/complete',
    summary: "Complete a task with its outcome; the enrollment moves on (or stops, for a booked meeting)",
    tags: ['tasks'],
    access: { workspace: 'member' },
    params: workspaceParams({ taskId: z.uuid() }),
    body: z.object({ outcome: z.enum(['done', 'skipped', ...CALL_OUTCOMES]) }),
    example: () => ({ body: { outcome: 'done' as const } }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params, body }) => {
      const t = await ctx.store.db
        .selectFrom('task')
        .select(['id', 'kind', 'state', 'enrollment_id', 'step_id'])
        .where('workspace_id', '=', ws.workspaceId)
        .where('id', '=', params.taskId)
        .executeTakeFirst();
      if (!t) throw cadenzaError('NOT_FOUND', 'no such task');
      if (t.state !== 'open') throw cadenzaError('INVALID_TRANSITION', `the task is already ${t.state}`);
      const svc = enrollmentService(ctx);
      const o = body.outcome;
      if (t.kind === 'call' && o !== 'done' && o !== 'skipped') await svc.apply(t.enrollment_id, { type: 'call_outcome', stepId: t.step_id, outcome: o });
      else await svc.apply(t.enrollment_id, { type: 'task_completed', stepId: t.step_id, outcome: o === 'skipped' ? 'skipped' : 'done' });
      // The engine closes the task when it moves the enrollment on; record the outcome either way.
      await ctx.store.db
        .updateTable('task')
        .set({ state: o === 'skipped' ? 'skipped' : 'done', outcome: o, completed_at: new Date(ctx.clock.now()) })
        .where('id', '=', t.id)
        .where('state', '=', 'open')
        .execute();
      await ctx.store.db.updateTable('task').set({ outcome: o }).where('id', '=', t.id).execute();
      return { ok: true as const };
    },
  }),
];
