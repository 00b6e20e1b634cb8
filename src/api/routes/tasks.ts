import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { enrollmentService } from '../context.ts';
import type { CallOutcome } from '../../sequence/model.ts';
import { findTask, listTasks, recordTaskOutcome } from '../../sequence/sql/tasks.ts';
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
      const rows = await listTasks(ctx.store.db, ws.workspaceId, query.state, query.limit);
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
      const t = await findTask(ctx.store.db, ws.workspaceId, params.taskId);
      if (!t) throw cadenzaError('NOT_FOUND', 'no such task');
      if (t.state !== 'open') throw cadenzaError('INVALID_TRANSITION', `the task is already ${t.state}`);
      const svc = enrollmentService(ctx);
      const o = body.outcome;
      if (t.kind === 'call' && o !== 'done' && o !== 'skipped') await svc.apply(t.enrollment_id, { type: 'call_outcome', stepId: t.step_id, outcome: o });
      else await svc.apply(t.enrollment_id, { type: 'task_completed', stepId: t.step_id, outcome: o === 'skipped' ? 'skipped' : 'done' });
      // The engine closes the task when it moves the enrollment on; record the outcome either way.
      await recordTaskOutcome(ctx.store.db, t.id, o, new Date(ctx.clock.now()));
      return { ok: true as const };
    },
  }),
];
