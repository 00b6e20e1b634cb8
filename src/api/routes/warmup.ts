import { z } from 'zod';
import { getWarmup, setWarmup } from '../../warmup/membership.ts';
import { placementView } from '../../warmup/placement/evaluate.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { ownMailbox } from './mailboxes.ts';

/**
 * The warmup network, per mailbox: opt in or out (its owner, or an admin), and its placement (the
 * share of its warmup mail receivers found in the inbox over 7 and 30 days) with the cap factor
 * placement set and why (src/warmup/placement/).
 */

const membership = z
  .object({
    mailboxId: z.uuid(),
    enabled: z.boolean(),
    pool: z.string().nullable(),
    target: z.number().int().nullable().describe('The daily warmup volume the ramp rises to'),
    joinedAt: z.string().nullable(),
    capFactor: z.number().describe("1, or below 1 while placement is low: the mailbox's daily cap is multiplied by it"),
    capReason: z.string().nullable(),
  })
  .meta({ id: 'WarmupMembership' });

const placement = z
  .object({
    share7: z.number().nullable().describe('Inbox share over 7 days; null with no receipts'),
    share30: z.number().nullable(),
    receipts7: z.number().int(),
    receipts30: z.number().int(),
    capFactor: z.number(),
    capReason: z.string().nullable(),
    days: z.array(z.object({ day: z.string(), inbox: z.number().int(), junk: z.number().int() })).describe('The last 30 UTC days, oldest first'),
  })
  .meta({ id: 'WarmupPlacement' });

const view = (m: Awaited<ReturnType<typeof getWarmup>>) => ({ ...m, joinedAt: m.joinedAt?.toISOString() ?? null });

export const warmupRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/warmup',
    summary: "Whether the mailbox takes part in the warmup network, its target, and the cap factor placement set",
    tags: ['warmup'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    response: membership,
    handler: async ({ ctx, ws, params }) => view(await getWarmup(ctx.store.db, ws.workspaceId, params.mailboxId)),
  }),
  defineRoute({
    method: 'PUT',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/warmup',
    summary: 'Opt the mailbox in or out of the warmup network (its owner, or an admin); target is the daily warmup volume (1–200)',
    tags: ['warmup'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    body: z.object({ enabled: z.boolean(), target: z.number().int().min(1).max(200).optional() }),
    example: () => ({ body: { enabled: true, target: 30 } }),
    response: membership,
    handler: async (c) => {
      const { ctx, ws, params, body } = c;
      await ownMailbox(ctx, ws, params.mailboxId);
      const m = await setWarmup(ctx.store.db, ws.workspaceId, params.mailboxId, body, ctx.clock.now());
      await audit(c, { action: 'settings.changed', target: 'warmup', detail: { mailboxId: params.mailboxId, enabled: body.enabled } });
      return view(m);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/warmup/placement',
    summary: "The mailbox's warmup placement: the share of its warmup mail found in the inbox over 7 and 30 days",
    tags: ['warmup'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    response: placement,
    handler: async ({ ctx, ws, params }) => {
      await getWarmup(ctx.store.db, ws.workspaceId, params.mailboxId); // NOT_FOUND outside the workspace
      return placementView(ctx.store.db, params.mailboxId, ctx.clock.now());
    },
  }),
];
