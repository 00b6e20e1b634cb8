import { sql } from 'kysely';
import type { Store } from './store.ts';

/**
 * The event journal is partitioned by month (range on `at`), so old months can be detached and
 * archived without rewriting the table. This creates the partitions for the current month and the
 * next `ahead` months; events outside them land in event_default. A month whose range already has
 * rows in the default partition is left there (PostgreSQL refuses to create a partition that would
 * take rows from the default one) and reported.
 */
export function ensureEventPartitions(store: Store, nowMs: number, ahead = 2): Promise<{ created: string[]; skipped: string[] }> {
  // Processes starting together (a supervisor's role children) would otherwise race from the
  // pg_class check to the create: "if not exists" does not cover a concurrent create of a
  // partition, and the loser failed with 'relation "event_…" already exists'.
  return store.withExclusiveLock(PARTITION_LOCK, () => ensure(store, nowMs, ahead));
}

const PARTITION_LOCK = 0x0cade0b;

async function ensure(store: Store, nowMs: number, ahead: number): Promise<{ created: string[]; skipped: string[] }> {
  const created: string[] = [];
  const skipped: string[] = [];
  const d = new Date(nowMs);
  for (let i = 0; i <= ahead; i++) {
    const from = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + i, 1));
    const to = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + i + 1, 1));
    const name = `event_${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
    const exists = await sql<{ n: number }>`select count(*)::int as n from pg_class where relname = ${name}`.execute(store.db);
    if (exists.rows[0]!.n > 0) continue;
    const inDefault = await sql<{ n: number }>`select count(*)::int as n from event_default where at >= ${from} and at < ${to}`.execute(store.db);
    if (inDefault.rows[0]!.n > 0) {
      skipped.push(name);
      continue;
    }
    // Through the owner's function (migration 0040): a role process is not the table's owner.
    await sql`select cadenza_create_event_partition(${from})`.execute(store.db);
    created.push(name);
  }
  return { created, skipped };
}
