import type { Clock } from '../../common/clock.ts';
import type { Store } from '../../store/store.ts';
import { planDeliveries } from './plan.ts';
import { claimEvents, markFannedOut, membersOf, writeDeliveries } from './sql/fanout.ts';

/**
 * Hands recorded events (0099's triggers) out to the members who want them: one round claims up
 * to `batch` events, plans per workspace (plan.ts) and writes the notifications and Slack posts in
 * the same transaction as the mark, so an event is handed out once whatever crashes. Runs in the
 * API role: it reads the members (app_user). Returns how many events it handed out.
 */
export async function fanOut(d: { store: Store; clock: Clock; batch?: number }): Promise<number> {
  return d.store.db.transaction().execute(async (tx) => {
    const events = await claimEvents(tx, d.batch ?? 200);
    const now = new Date(d.clock.now());
    const byWorkspace = new Map<string, typeof events>();
    for (const e of events) byWorkspace.set(e.workspaceId, [...(byWorkspace.get(e.workspaceId) ?? []), e]);
    for (const [workspaceId, es] of byWorkspace) await writeDeliveries(tx, workspaceId, planDeliveries(es, await membersOf(tx, workspaceId)), now);
    await markFannedOut(tx, events.map((e) => e.id), now);
    return events.length;
  });
}
