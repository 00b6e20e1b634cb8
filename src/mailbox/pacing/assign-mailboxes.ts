/**
 * Mailbox rotation, the store side: the pool is the sequence's `sequence_mailbox` rows; each
 * mailbox's capacity is what its working days and caps allow over the coming days (ramp included,
 * so a new mailbox takes a small share that grows), its load its live enrollments; the pure rule
 * (rotation.ts) spreads new enrollments by load relative to capacity. One set-based read
 * for any number of enrollments, so bulk enrollment asks once for 100k.
 */
import { sql } from 'kysely';
import { HOUR_MS } from '../../calendar/civil.ts';
import { MailboxBucket } from './bucket.ts';
import { isSendable, toMailboxPacing } from './mailbox.ts';
import { spreadAssignments, type PoolMailbox } from './rotation.ts';
import type { Conn } from '../../store/in-tx.ts';
import type { PacedMailboxRow as MailboxRow } from './mailbox.ts';

export interface MailboxChoice {
  id: string;
  time_zone: string | null;
  /**
   * False when no mailbox of the pool could send (all paused, in error, or capped at 0): the
   * enrollment then gets the least loaded mailbox anyway and waits for it to be resumed, rather
   * than having no mailbox at all (nothing would ever send it).
   */
  eligible: boolean;
}

// -- name: pool
const poolSql = (sequenceId: string) => sql<MailboxRow & { load: number }>`
  select m.id, m.workspace_id, m.daily_cap, m.hourly_cap, m.ramp, m.ramp_started_at, m.created_at, m.time_zone, m.settings,
         m.health, m.health_reason, w.time_zone as ws_zone, w.settings as ws_settings, w.daily_cap as ws_cap,
         (select count(*)::int from enrollment e where e.mailbox_id = m.id and e.state in ('active', 'paused')) as load
  from sequence_mailbox sm
  join mailbox m on m.id = sm.mailbox_id
  join workspace w on w.id = m.workspace_id
  where sm.sequence_id = ${sequenceId}
  order by m.id`;

/** Average sends a day the mailbox can make over `days` local days from now (working days, caps, hourly ceilings). */
function capacity(row: MailboxRow, now: number, days: number): number {
  let pacing;
  try {
    pacing = toMailboxPacing(row, { time_zone: row.ws_zone, settings: row.ws_settings });
  } catch {
    return 0; // unreadable settings: the planner reports them; no new load meanwhile
  }
  const b = new MailboxBucket(pacing);
  const today = b.days.dayOf(now);
  let total = 0;
  for (let d = today; d < today + days; d++) {
    const plan = b.plan(d);
    if (plan === null) continue;
    const lunch = plan.lunch ? plan.lunch.end - plan.lunch.start : 0;
    total += Math.min(b.cap(d), (plan.hourlyCeiling * (plan.end - plan.start - lunch)) / HOUR_MS);
  }
  return total / days;
}

/**
 * Mailboxes for `count` new enrollments of a sequence, in the order to hand them out (interleaved,
 * so any prefix is balanced too). [] when the sequence has no mailbox.
 */
export async function assignMailboxes(db: Conn, opts: { sequenceId: string; count: number; now: number; days?: number }): Promise<MailboxChoice[]> {
  if (opts.count <= 0) return [];
  const rows = (await poolSql(opts.sequenceId).execute(db)).rows;
  if (rows.length === 0) return [];
  const days = opts.days ?? 14;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const pool: PoolMailbox[] = rows.filter((r) => isSendable(r.health)).map((r) => ({ id: r.id, capacity: capacity(r, opts.now, days), load: r.load }));
  let ids = spreadAssignments(pool, opts.count);
  let eligible = true;
  if (ids.length === 0) {
    eligible = false;
    ids = spreadAssignments(rows.map((r) => ({ id: r.id, capacity: 1, load: r.load })), opts.count);
  }
  return ids.map((id) => ({ id, time_zone: byId.get(id)!.time_zone, eligible }));
}

/** The pool mailbox with the most room for one new enrollment; null when the sequence has none. */
export async function chooseMailbox(db: Conn, opts: { sequenceId: string; now: number }): Promise<MailboxChoice | null> {
  return (await assignMailboxes(db, { ...opts, count: 1 }))[0] ?? null;
}
