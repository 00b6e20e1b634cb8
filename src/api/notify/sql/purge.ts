/**
 * The notifications' retention (purge.ts): read notifications some days after they were read, and
 * events, with every notification and Slack post of them (on delete cascade), some days after they
 * were handed out. In batches, each its own statement, so no delete holds its locks for long.
 */
import { sql } from 'kysely';
import type { Db } from '../../../store/store.ts';

// -- name: notify-purge-read
export async function purgeReadNotifications(db: Db, readBefore: Date, limit: number): Promise<number> {
  const r = await sql<{ id: number }>`
    delete from notification where id in (
      select id from notification where read_at < ${readBefore} order by read_at limit ${limit})
    returning id`.execute(db);
  return r.rows.length;
}

// -- name: notify-purge-events
export async function purgeOldEvents(db: Db, handedOutBefore: Date, limit: number): Promise<number> {
  const r = await sql<{ id: number }>`
    delete from notification_event where id in (
      select id from notification_event where fanned_out_at < ${handedOutBefore} order by fanned_out_at limit ${limit})
    returning id`.execute(db);
  return r.rows.length;
}
