import { z } from 'zod';
import { patchMailboxPacing, patchWorkspacePacing, readMailboxPacing, readWorkspacePacing } from '../../mailbox/pacing/pacing-settings.ts';
import { pacingPatchSchema } from '../../mailbox/pacing/pacing-patch.ts';
import { pacingOverridesSchema } from '../../mailbox/pacing/settings.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { ownMailbox } from './mailboxes.ts';

/**
 * Every pacing setting, per workspace (defaults its mailboxes inherit) and per mailbox
 * (overrides). One patch schema for both (mailbox/pacing/pacing-patch.ts), as in the CLI.
 */

const ramp = z.object({ start: z.number().int(), step: z.number().int(), target: z.number().int().optional() });

const level = z.object({
  caps: z.object({ dailyCap: z.number().int().optional(), hourlyCap: z.number().int().optional(), ramp: ramp.nullable().optional() }),
  pacing: pacingOverridesSchema,
});

const lunch = z.object({ at: z.string(), jitterMinutes: z.number(), minutes: z.tuple([z.number(), z.number()]), probability: z.number() });

const effective = z.object({
  dailyCap: z.number().int(),
  hourlyCap: z.number().int().nullable(),
  ramp: ramp.nullable(),
  dayStart: z.string(),
  dayEnd: z.string(),
  dayJitterMinutes: z.number(),
  workDays: z.array(z.number().int()),
  lunch: lunch.nullable(),
  gapMinutes: z.tuple([z.number(), z.number()]),
  spreadDay: z.boolean(),
  hourlyCeiling: z.tuple([z.number().int(), z.number().int()]),
  pickupMinutes: z.number(),
});

const pacingView = z
  .object({
    own: level.describe('What this workspace or mailbox sets itself'),
    inherited: level.optional().describe("For a mailbox: its workspace's defaults"),
    effective: effective.describe('The settings in force (own, else inherited, else built-in)'),
  })
  .meta({ id: 'Pacing' });

const patchExample = { gapMinutes: [0.5, 1.5] as [number, number], spreadDay: false, hourlyCap: 20, workDays: [1, 2, 3, 4, 5], dayStart: '08:00', dayEnd: '18:00' };

export const pacingRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/pacing',
    summary: "The workspace's pacing defaults for its mailboxes (caps, ramp, gaps, working days and hours, lunch, human timing)",
    tags: ['pacing'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: pacingView,
    handler: async ({ ctx, ws }) => readWorkspacePacing(ctx.store.db, ws.workspaceId),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/pacing',
    summary: "Change the workspace's pacing defaults (admin); fields left out are unchanged, `reset` clears some",
    tags: ['pacing'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: pacingPatchSchema,
    example: () => ({ body: patchExample }),
    response: pacingView,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const view = await patchWorkspacePacing(ctx.store, ws.workspaceId, body);
      await audit(c, { action: 'settings.changed', target: 'pacing', detail: { fields: Object.keys(body).sort() } });
      ctx.workDue?.(); // queued sends may be planned differently now
      return view;
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/pacing',
    summary: "A mailbox's pacing: what it sets, what it inherits from the workspace, and what is in force",
    tags: ['pacing'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    response: pacingView,
    handler: async ({ ctx, ws, params }) => readMailboxPacing(ctx.store.db, ws.workspaceId, params.mailboxId),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/pacing',
    summary: "Change a mailbox's pacing overrides (its owner, or an admin); `reset` makes a setting inherit again",
    tags: ['pacing'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    body: pacingPatchSchema,
    example: () => ({ body: patchExample }),
    response: pacingView,
    handler: async ({ ctx, ws, params, body }) => {
      await ownMailbox(ctx, ws, params.mailboxId);
      const view = await patchMailboxPacing(ctx.store, ws.workspaceId, params.mailboxId, body);
      ctx.workDue?.();
      return view;
    },
  }),
];
