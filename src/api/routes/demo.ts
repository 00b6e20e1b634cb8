import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import type { DemoControl } from '../../demo/control.ts';
import type { ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * The first-run page's "demo workspace": fills the caller's workspace with mailboxes on the Gmail
 * and Graph emulators, leads and two sequences, and plays a few days of prospects on an
 * accelerated clock in this server's process (src/demo, docs/demo.md). One demo per process.
 */
const sequence = z.object({
  key: z.string(),
  name: z.string(),
  enrolled: z.number().int(),
  sent: z.number().int(),
  replied: z.number().int(),
  bounced: z.number().int(),
  outOfOffice: z.number().int().describe('Enrollments that got an out-of-office note'),
  pausedNow: z.number().int(),
  unsubscribed: z.number().int(),
  finished: z.number().int(),
  callTasks: z.number().int(),
});
const status = z
  .object({
    running: z.boolean(),
    startedAt: z.iso.datetime().nullable(),
    endsAt: z.iso.datetime().nullable().describe('When the demo stops by itself (real time)'),
    simulatedNow: z.iso.datetime().nullable().describe("The demo clock's time"),
    inbound: z.number().int(),
    suppressed: z.number().int(),
    sequences: z.array(sequence),
  })
  .meta({ id: 'DemoStatus' });

const idle: z.output<typeof status> = { running: false, startedAt: null, endsAt: null, simulatedNow: null, inbound: 0, suppressed: 0, sequences: [] };

function control(ctx: ApiContext): DemoControl {
  if (!ctx.demo) throw cadenzaError('CONFLICT', 'this server does not run demos (start it with every role: cadenza start)');
  return ctx.demo;
}

async function read(ctx: ApiContext, workspaceId: string): Promise<z.output<typeof status>> {
  const s = await ctx.demo?.status();
  // Another workspace's demo is none of this one's business.
  if (!s || s.workspaceId !== workspaceId) return idle;
  const iso = (ms: number) => new Date(ms).toISOString();
  return { running: true, startedAt: iso(s.startedAt), endsAt: iso(s.endsAt), simulatedNow: iso(s.progress.at), inbound: s.progress.inbound, suppressed: s.progress.suppressed, sequences: s.progress.sequences };
}

export const demoRoutes = [
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/demo',
    summary: 'Fill this workspace with a demo (emulated mailboxes, leads, sequences, simulated prospects) and run it on an accelerated clock',
    tags: ['demo'],
    access: { workspace: 'owner' },
    params: workspaceParams({}),
    body: z.object({
      leads: z.number().int().min(10).max(2000).default(300),
      speed: z.number().min(60).max(100_000).default(3600).describe('Simulated time per real time (3600: an hour a second)'),
      durationSeconds: z.number().int().min(10).max(3600).default(120).describe('Real seconds before the demo stops by itself'),
    }),
    example: () => ({ body: { leads: 30 } }),
    status: 202,
    response: status,
    handler: async ({ ctx, ws, body }) => {
      await control(ctx).start({ workspaceId: ws.workspaceId, leads: body.leads, rate: body.speed, durationMs: body.durationSeconds * 1000 });
      return read(ctx, ws.workspaceId);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/demo',
    summary: "The running demo's progress per sequence (running: false when none runs in this workspace)",
    tags: ['demo'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: status,
    handler: async ({ ctx, ws }) => read(ctx, ws.workspaceId),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/demo',
    summary: 'Stop the demo now (its running enrollments are stopped, its mailboxes marked gone)',
    tags: ['demo'],
    access: { workspace: 'owner' },
    params: workspaceParams({}),
    response: status,
    handler: async ({ ctx, ws }) => {
      const s = await ctx.demo?.status();
      if (s?.workspaceId === ws.workspaceId) await ctx.demo!.stop();
      return idle;
    },
  }),
];
