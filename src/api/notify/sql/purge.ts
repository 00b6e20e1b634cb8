/**
 * The notifications' retention (purge.ts): read notifications some days after they were read
 * (notification.read_at), and events, with every notification and Slack post of them (on delete
 * cascade), some days after they were handed out (notification_event.fanned_out_at). In batches,
 * each its own statement, so no delete holds its locks for long.
 */
import { sql } from 'kysely';
import type { Db } from '../../../store/store.ts';

/** What is purged, by the time it is kept from. */
const PURGED_BY = { notification: 'read_at', notification_event: 'fanned_out_at' } as const;

/** Deletes up to `limit` rows of `table` whose time is before `before`, oldest first; answers how many. */
// -- name: notify-purge
export async function purgeBefore(db: Db, table: keyof typeof PURGED_BY, before: Date, limit: number): Promise<number> {
  const t = sql.table(table);
  const at = sql.ref(PURGED_BY[table]);
  const r = await sql<{ id: number }>`
    delete from ${t} where id in (select id from ${t} where ${at} < ${before} order by ${at} limit ${limit})
    returning id`.execute(db);
  return r.rows.length;
}
