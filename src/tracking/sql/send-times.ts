import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';

// -- name: send-times
// When each send went out: the outbound message's time (written by the outbox with the send), else
// the request's last update if it is marked sent (a send recorded before its message row existed).
// One query per batch of tracking events, on message_send_request (0003_tracking.sql).
const sendTimesSql = (ids: string[]) => sql<{ id: string; sent_at: Date | null }>`
  select r.id,
         coalesce(m.at, case when r.state = 'sent' then r.updated_at end) as sent_at
    from send_request r
    left join lateral (
      select min(at) as at from message
       where send_request_id = r.id and direction = 'outbound'
    ) m on true
   where r.id = any(${ids}::uuid[])`;

/** Send time (epoch ms) by send request id; absent when unknown or not sent. */
export async function sendTimes(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const r = await sendTimesSql([...ids]).execute(db);
  const out = new Map<string, number>();
  for (const row of r.rows) if (row.sent_at) out.set(row.id, new Date(row.sent_at).getTime());
  return out;
}
