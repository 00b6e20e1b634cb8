import { bulkEnroll, type EnrollResult } from '../sequence/bulk-enroll.ts';
import type { ApiContext } from './context.ts';

/**
 * The API's one enroll path (a sequence's Launch, a list's or a selection's enroll): every address
 * is checked first (leads never checked, created before list hygiene or by hand, and those whose DNS
 * did not answer last time), then bulkEnroll refuses each lead it cannot enroll with a reason.
 */
export async function enrollLeads(ctx: ApiContext, workspaceId: string, sequenceId: string, leadIds: string[]): Promise<Pick<EnrollResult, 'enrolled' | 'invalid' | 'held' | 'refused'>> {
  if (leadIds.length === 0) return { enrolled: 0, invalid: 0, held: 0, refused: [] };
  await ctx.hygiene?.checkLeads(ctx.store.db, workspaceId, leadIds, { onlyDue: true });
  const r = await bulkEnroll(ctx.store, { clock: ctx.clock, random: ctx.random }, { workspaceId, sequenceId, leadIds });
  // The first step is usually due now: the scheduler and dispatcher need not wait for their polls.
  if (r.enrolled > 0) ctx.workDue?.();
  return { enrolled: r.enrolled, invalid: r.invalid, held: r.held, refused: r.refused };
}
