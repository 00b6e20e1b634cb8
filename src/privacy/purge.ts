import type { Clock } from '../common/clock.ts';
import type { Store } from '../store/store.ts';
import { cutoffs, retentionOf, type RetentionKind } from './retention.ts';
import { PURGES, type PurgeStatement } from './sql/purge.ts';

/** Rows per statement: small enough that a batch holds its locks for milliseconds. */
export const PURGE_BATCH = 1000;

export interface PurgeOptions {
  batchSize?: number;
  /** Asked between batches: true stops the pass where it is (the next pass goes on from there). */
  stopping?: () => boolean;
}

export interface PurgeReport {
  /** Rows deleted or cleared, by what (message_bodies, events, …), over every workspace. */
  counts: Record<string, number>;
  /** The same by workspace id (a workspace with nothing removed is left out): what its admins are shown. */
  byWorkspace: Record<string, Record<string, number>>;
  /** Statements run (each one batch). */
  batches: number;
  /** The pass stopped early (stopping() said so). */
  stopped: boolean;
}

/**
 * One pass: every workspace's data older than its retention (retention.ts) removed, in batches of
 * at most `batchSize` rows, each batch its own statement. A kind set to null is not touched.
 * Running it again at once finds nothing more to do.
 */
export async function purgeExpiredData(store: Store, clock: Clock, o: PurgeOptions = {}): Promise<PurgeReport> {
  const limit = o.batchSize ?? PURGE_BATCH;
  const report: PurgeReport = { counts: {}, byWorkspace: {}, batches: 0, stopped: false };
  const workspaces = await store.db.selectFrom('workspace').select(['id', 'settings']).orderBy('id').execute();
  for (const w of workspaces) {
    const cut = cutoffs(retentionOf(w.settings as Record<string, unknown>), clock.now());
    for (const kind of Object.keys(PURGES) as RetentionKind[]) {
      const cutoff = cut[kind];
      if (!cutoff) continue;
      for (const [name, stmt] of Object.entries(PURGES[kind]) as Array<[string, PurgeStatement]>) {
        for (;;) {
          if (o.stopping?.()) return { ...report, stopped: true };
          const n = (await stmt(w.id, cutoff, limit).execute(store.db)).rows.length;
          report.batches++;
          if (n) {
            report.counts[name] = (report.counts[name] ?? 0) + n;
            const mine = (report.byWorkspace[w.id] ??= {});
            mine[name] = (mine[name] ?? 0) + n;
          }
          if (n < limit) break;
        }
      }
    }
  }
  return report;
}
