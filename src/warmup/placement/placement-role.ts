/**
 * The periodic placement pass (scheduler role, src/app/app.ts): every hour, each warmup member's
 * placement is judged again (evaluate.ts) from the receipts recorded since, by the local receiving
 * side (membership.ts recordWarmupReceipt, in the sync role) and by peers' reports (federation/
 * exchange.ts). Time alone changes a verdict too: receipts leave the 7- and 30-day windows, so a
 * warning set on last week's junk is lifted without new mail. One process judges: it holds the
 * `warmup-placement` lease for the pass. A pass changes a mailbox only when its verdict changed
 * (evaluatePlacement rewrites the same cap factor and health otherwise, and the notification
 * triggers of 0120 tell a change once), so a second pass, a second process or a restart mid-pass
 * does no harm; each mailbox is judged in its own transaction, its row locked.
 */
import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import { runEvery, type Periodic } from '../../common/periodic.ts';
import { Leases } from '../../ops/leases.ts';
import type { Store } from '../../store/store.ts';
import { evaluatePlacement, type PlacementResult } from './evaluate.ts';

export const WARMUP_PLACEMENT_LEASE = 'warmup-placement';
export const PLACEMENT_EVERY_MS = 3_600_000;
const LEASE_TTL_MS = 10 * 60_000;

export interface PlacementDutyDeps {
  store: Store;
  clock: Clock;
  /** This process, as the lease owner. */
  owner: string;
  /** The lease's lifetime on `clock` (default 10 minutes); the demo's faster clock sizes it in real time. */
  leaseTtlMs?: number;
  log?: Logger;
}

// -- name: warmup-placement-members
// Every warmup member whose mailbox is still there, oldest id first.
const membersSql = () => sql<{ mailbox_id: string }>`
  select wm.mailbox_id from warmup_member wm join mailbox m on m.id = wm.mailbox_id
  where m.removed_at is null order by wm.mailbox_id`;

/**
 * Judges every warmup member's placement at the clock's now. Null when another process holds the
 * lease; else each member's result, and the members whose health or cap factor this pass changed
 * are logged.
 */
export async function evaluateWarmupPlacements(d: PlacementDutyDeps): Promise<PlacementResult[] | null> {
  const leases = new Leases(d.store, d.clock);
  const ttl = d.leaseTtlMs ?? LEASE_TTL_MS;
  let lease = await leases.acquire(WARMUP_PLACEMENT_LEASE, d.owner, ttl);
  if (!lease) return null;
  try {
    const out: PlacementResult[] = [];
    const ids = (await membersSql().execute(d.store.db)).rows.map((r) => r.mailbox_id);
    let renewedAt = d.clock.now();
    for (const id of ids) {
      if (d.clock.now() - renewedAt > ttl / 3) {
        lease = await leases.renew(lease, ttl);
        if (!lease) return out; // taken over: the other process judges the rest
        renewedAt = d.clock.now();
      }
      const before = await d.store.db.selectFrom('mailbox').innerJoin('warmup_member', 'warmup_member.mailbox_id', 'mailbox.id').select(['mailbox.health', 'warmup_member.cap_factor']).where('mailbox.id', '=', id).executeTakeFirst();
      if (!before) continue; // left the pool since the list was read
      const r = await evaluatePlacement(d.store.db, id, d.clock.now());
      if (r.health !== before.health || r.capFactor !== before.cap_factor) d.log?.info({ mailboxId: id, verdict: r.verdict, health: r.health, capFactor: r.capFactor, reason: r.reason }, 'warmup placement changed');
      out.push(r);
    }
    return out;
  } finally {
    if (lease) await leases.release(lease).catch(() => undefined);
  }
}

/** The duty: evaluateWarmupPlacements now, then every `everyMs` (default 1 h); `onPass` sees each pass's results. */
export function startPlacementDuty(d: PlacementDutyDeps & { everyMs?: number; onPass?: (r: PlacementResult[] | null) => void }): Periodic {
  return runEvery(
    d.clock,
    d.everyMs ?? PLACEMENT_EVERY_MS,
    // The pass first, then onPass: `d.onPass?.(await …)` skipped the pass itself where no onPass
    // was given (app.ts), so the scheduler judged nothing.
    async () => {
      const r = await evaluateWarmupPlacements(d);
      d.onPass?.(r);
    },
    (e) => d.log?.error({ err: e instanceof Error ? e.message : String(e) }, 'warmup placement pass failed'),
  );
}
