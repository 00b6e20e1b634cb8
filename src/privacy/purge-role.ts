/**
 * The nightly purge: once per UTC day, after `atHourUtc`, one process runs purgeExpiredData
 * (purge.ts) under the `privacy-purge` lease, renewing it between batches, and records the day in
 * privacy_purge_day (migration 0042). A process that finds the day recorded, or the lease held,
 * does nothing; a pass cut short (a stop, a crash) records nothing, so the next tick runs it again
 * and finds less to do.
 */
import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import { Leases, type Lease } from '../ops/leases.ts';
import type { Db, Store } from '../store/store.ts';
import { purgeExpiredData, type PurgeReport } from './purge.ts';

export const PRIVACY_PURGE_LEASE = 'privacy-purge';
const LEASE_TTL_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

export interface PurgeRoleDeps {
  store: Store;
  clock: Clock;
  /** This process, as the lease owner. */
  owner: string;
  log?: Logger;
  /** The UTC hour from which the day's pass may run (default 2: the quiet of the night in Europe). */
  atHourUtc?: number;
  /** How often the role looks whether today's pass is due (default 1 h). */
  everyMs?: number;
  batchSize?: number;
}

export type PurgeDay = { day: string; report: PurgeReport } | { day: string; skipped: 'not yet' | 'done' | 'lease held' | 'stopped' };

/** Today's pass if it is due and nobody ran it (`stopping` cuts it between batches). */
export async function runNightlyPurge(d: PurgeRoleDeps, stopping: () => boolean = () => false): Promise<PurgeDay> {
  const now = d.clock.now();
  const day = new Date(Math.floor(now / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
  if (new Date(now).getUTCHours() < (d.atHourUtc ?? 2)) return { day, skipped: 'not yet' };
  if (await dayDone(d.store, day)) return { day, skipped: 'done' };
  const leases = new Leases(d.store, d.clock);
  let lease: Lease | null = await leases.acquire(PRIVACY_PURGE_LEASE, d.owner, LEASE_TTL_MS);
  if (!lease) return { day, skipped: 'lease held' };
  try {
    // Another process may have finished the day between our look and our lease.
    if (await dayDone(d.store, day)) return { day, skipped: 'done' };
    let lost = false;
    let renewedAt = d.clock.now();
    const report = await purgeExpiredData(d.store, d.clock, {
      ...(d.batchSize ? { batchSize: d.batchSize } : {}),
      // Renewed between batches, well before it runs out; a lost lease stops the pass (another
      // process may start one: both would only delete what is due, but one is enough).
      stopping: () => {
        if (stopping() || lost) return true;
        if (d.clock.now() - renewedAt > LEASE_TTL_MS / 3) {
          renewedAt = d.clock.now();
          void leases.renew(lease!, LEASE_TTL_MS).then((l) => {
            if (l) lease = l;
            else lost = true;
          });
        }
        return false;
      },
    });
    if (report.stopped) return { day, skipped: 'stopped' };
    await d.store.db
      .insertInto('privacy_purge_day')
      .values({ day, started_at: new Date(now), finished_at: new Date(d.clock.now()), counts: JSON.stringify(report.counts), workspace_counts: JSON.stringify(report.byWorkspace) })
      .onConflict((oc) => oc.column('day').doNothing())
      .execute();
    d.log?.info({ day, counts: report.counts, batches: report.batches }, 'privacy purge: data past its retention removed');
    return { day, report };
  } finally {
    await leases.release(lease).catch(() => undefined);
  }
}

/**
 * The last day a purge completed, for one workspace's retention settings: when, and what it removed
 * of that workspace's data only (null: that day was purged before counts were kept per workspace).
 */
export async function lastPurgeDay(db: Db, workspaceId: string): Promise<{ day: string; finishedAt: Date; counts: Record<string, number> | null } | null> {
  const last = await db.selectFrom('privacy_purge_day').select(['day', 'finished_at', 'workspace_counts']).orderBy('day', 'desc').limit(1).executeTakeFirst();
  if (!last) return null;
  const byWorkspace = last.workspace_counts as Record<string, Record<string, number>> | null;
  return { day: dayText(last.day as unknown), finishedAt: last.finished_at, counts: byWorkspace ? (byWorkspace[workspaceId] ?? {}) : null };
}

async function dayDone(store: Store, day: string): Promise<boolean> {
  return !!(await store.db.selectFrom('privacy_purge_day').select('day').where('day', '=', day).executeTakeFirst());
}

/** The role: runNightlyPurge now, then every `everyMs`; stop() ends a pass between two batches. */
export class PrivacyPurgeRole {
  private timer: TimerHandle | null = null;
  private stopped = false;
  private running: Promise<unknown> = Promise.resolve();
  constructor(private readonly d: PurgeRoleDeps) {}

  start(): void {
    this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  private tick(): void {
    if (this.stopped) return;
    this.running = runNightlyPurge(this.d, () => this.stopped)
      .catch((e: unknown) => this.d.log?.error({ err: e instanceof Error ? e.message : String(e) }, 'privacy purge failed'))
      .then(() => {
        if (!this.stopped) this.timer = this.d.clock.setTimer(this.d.everyMs ?? 3_600_000, () => this.tick());
      });
  }
}

/** A date column as YYYY-MM-DD: PostgreSQL's driver reads `date` as a Date at local midnight, PGlite as text. */
function dayText(d: unknown): string {
  return d instanceof Date ? `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}` : String(d).slice(0, 10);
}
