import { z } from 'zod';
import { workspaceRow, updateWorkspace } from '../../workspace/workspace-row.ts';
import { checklistItems, checklistVisible, DISMISSED_KEY } from '../../workspace/getting-started.ts';
import { checklistFacts } from '../../workspace/getting-started-facts.ts';
import type { ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * The Getting started checklist (src/workspace/getting-started.ts): each item computed from the
 * workspace's state on every read; the one thing stored is that someone dismissed it.
 */

const checklist = z
  .object({
    visible: z.boolean().describe('false once every item is done or the checklist was dismissed'),
    dismissedAt: z.string().nullable(),
    items: z.array(
      z.object({
        key: z.enum(['mailbox', 'domain', 'leads', 'sequence', 'launch']),
        title: z.string(),
        done: z.boolean(),
        detail: z.string().describe('What is missing, or what was found, in words'),
        path: z.string().describe("The app's screen that does it"),
      }),
    ),
  })
  .meta({ id: 'GettingStarted' });

async function read(ctx: ApiContext, workspaceId: string): Promise<z.output<typeof checklist>> {
  const [w, facts] = await Promise.all([workspaceRow(ctx.store.db, workspaceId), checklistFacts(ctx.store.db, workspaceId)]);
  const dismissed = (w?.settings as Record<string, unknown> | undefined)?.[DISMISSED_KEY];
  const dismissedAt = typeof dismissed === 'string' ? dismissed : null;
  const items = checklistItems(facts);
  return { visible: checklistVisible(items, dismissedAt), dismissedAt, items };
}

export const gettingStartedRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/getting-started',
    summary: 'The Getting started checklist: connect a tested mailbox, a verified domain, leads, a sequence with steps, a launch; each ticked from the workspace\'s state',
    tags: ['workspace'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: checklist,
    handler: async ({ ctx, ws }) => read(ctx, ws.workspaceId),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/getting-started/dismiss',
    summary: 'Hide the checklist for everyone in the workspace (its items still tick themselves)',
    tags: ['workspace'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({}).strict(),
    example: () => ({ body: {} }),
    response: checklist,
    handler: async ({ ctx, ws }) => {
      await updateWorkspace(ctx.store.db, ws.workspaceId, {}, { [DISMISSED_KEY]: new Date(ctx.clock.now()).toISOString() });
      return read(ctx, ws.workspaceId);
    },
  }),
];
