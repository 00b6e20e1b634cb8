import { sql } from 'kysely';
import type { Db, Tx } from '../../store/store.ts';
import type { TrackingVerdict } from '../../store/schema.ts';

export interface TrackingRow {
  workspaceId: string;
  sendRequestId: string | null;
  kind: 'open' | 'click' | 'unsubscribe';
  url: string | null;
  linkIndex: number | null;
  method: string | null;
  userAgent: string | null;
  /** A valid IPv4 or IPv6 address (checked by the caller: the column is inet), or null. */
  ip: string | null;
  delayMs: number | null;
  verdict: TrackingVerdict | null;
  confidence: number | null;
  reason: string | null;
  at: number;
}

// -- name: insert-tracking-events
// One statement per batch, the rows passed as one JSON array: JSON.stringify is native, where 13
// array parameters cost the pg driver an escape per element (measured: half the client CPU per row).
// The enrollment comes from the send request as it is now. An event whose workspace is gone is
// dropped (the join), and one whose send request is gone keeps its workspace with no send (the left
// join): a batch never fails because someone deleted a lead meanwhile. Ids follow arrival order
// (with ordinality), whatever join order the planner picks. Times go as epoch milliseconds (a Date
// and its ISO string per row cost the server more than to_timestamp costs the database; the
// microseconds to_timestamp keeps hold every millisecond exactly).
// With skipExisting (clicks read back from the click journal, which may have been committed just
// before a crash): a row whose click is already there (same workspace, send, kind, link and
// instant, to the microsecond) is skipped, found through the (workspace_id, at) index.
const skipExistingSql = sql`
     where not exists (select 1 from tracking_event e
                        where e.workspace_id = u.ws and e.at = to_timestamp(u.at_ms / 1000) and e.kind = u.kind
                          and e.send_request_id is not distinct from r.id and e.link_index is not distinct from u.link_index)`;
const insertSql = (json: string, skipExisting: boolean) => sql<{ n: number }>`
  with ins as (
    insert into tracking_event (workspace_id, send_request_id, enrollment_id, kind, url, link_index, method, user_agent, ip, delay_ms, verdict, confidence, reason, at)
    select u.ws, r.id, r.enrollment_id, u.kind, u.url, u.link_index, u.method, u.ua, u.ip, u.delay_ms, u.verdict, u.confidence, u.reason, to_timestamp(u.at_ms / 1000)
      from rows from (json_to_recordset(${json}::json) as (ws uuid, sr uuid, kind text, url text, link_index int, method text, ua text, ip inet,
                                                            delay_ms bigint, verdict text, confidence real, reason text, at_ms double precision))
           with ordinality as u(ws, sr, kind, url, link_index, method, ua, ip, delay_ms, verdict, confidence, reason, at_ms, ord)
      join workspace w on w.id = u.ws
      left join send_request r on r.id = u.sr and r.workspace_id = u.ws
     ${skipExisting ? skipExistingSql : sql``}
     order by u.ord
    returning 1
  )
  select count(*)::int as n from ins`;

function toJson(rows: readonly TrackingRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      ws: r.workspaceId,
      sr: r.sendRequestId,
      kind: r.kind,
      url: r.url,
      link_index: r.linkIndex,
      method: r.method,
      ua: r.userAgent,
      ip: r.ip,
      delay_ms: r.delayMs,
      verdict: r.verdict,
      confidence: r.confidence,
      reason: r.reason,
      at_ms: r.at,
    })),
  );
}

/** Inserts the rows; returns how many were kept (rows of deleted workspaces are not). */
export async function insertTrackingEvents(db: Db | Tx, rows: readonly TrackingRow[], opts: { skipExisting?: boolean } = {}): Promise<number> {
  if (rows.length === 0) return 0;
  const r = await insertSql(toJson(rows), opts.skipExisting === true).execute(db);
  return r.rows[0]?.n ?? 0;
}

