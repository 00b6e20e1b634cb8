/**
 * The claim-time half of the token bucket: reserveSlot (or reserveLoaded, when the outbox's claim
 * statement read the row itself) is called inside the outbox's claim transaction, after the
 * request and its enrollment are locked and re-checked and before the request is marked in flight.
 * It is the hard guard; the plan (send_at) is the schedule.
 *
 * It locks the mailbox row (FOR NO KEY UPDATE: reservations of one mailbox, and a pause, take
 * turns; inserts that reference the mailbox are not blocked), rebuilds the mailbox's bucket from
 * the sends the store counts (sql.ts, COUNTED_STATES), and checks, at `now`:
 *   - the mailbox is sendable (health ok or warning);
 *   - inside its working day, not at lunch; under its daily cap (its local day, ramp included,
 *     times the warmup placement's cap factor), the day's rolling-hour ceiling, and at least the
 *     minimum gap after its last send; its warmup mail counts as sends (warmup_mail.claimed_at);
 *   - inside the prospect's send window (a claim made late must not send at night);
 *   - under the sequence's and the workspace's daily caps (their local day), counted under an
 *     advisory lock per workspace, since mailboxes of one workspace are claimed by many processes.
 * Granted: the request's claimed_at is set, and from then on it counts while its state is
 * in_flight, sent, unknown or failed. Refused: the request stays queued and is marked for
 * re-planning (send_at null), so the dispatcher gives it its next allowed slot; nothing is
 * dropped, and the refusal cannot turn into a burst later because every later claim passes here.
 * (A paused mailbox's request is parked instead: no slot until resumeMailbox.)
 */
import { sql } from 'kysely';
import { isCadenzaError } from '../../common/errors.ts';
import { isAllowedIn, nextSlotIn } from '../../calendar/allowed.ts';
import { contextOf } from '../../calendar/context.ts';
import { parseWindow, resolveZone } from '../../calendar/index.ts';
import type { SequenceSettings } from '../../sequence/sequence-repo.ts';
import type { Tx } from '../../store/store.ts';
import { MailboxBucket } from '../../mailbox/pacing/bucket.ts';
import { LocalDays } from '../../mailbox/pacing/local-day.ts';
import { blockedReason, toMailboxPacing } from '../../mailbox/pacing/mailbox.ts';
import { lockSql, RESERVE_LOCK, type MailboxRow } from './sql.ts';
import { calendarColumns } from '../../sequence/sql/calendar-country.ts';

const DAY_MS = 86_400_000;

export type Reservation =
  | { granted: true; mailboxId: string }
  /** retryAt: the earliest instant the refusing limit allows (null when none is known). */
  | { granted: false; reason: string; retryAt: number | null };

export interface ReserveRow extends Omit<MailboxRow, 'id'> {
  request_id: string;
  request_state: string;
  mailbox_id: string;
  enrollment_zone: string;
  country: string | null;
  region: string | null;
  sequence_id: string;
  send_window: unknown;
  seq_settings: unknown;
  seq_cap: number | null;
}

// What a reservation reads, under the aliases r (send_request), e (enrollment), l (lead),
// s (sequence), w (workspace), m (mailbox): the claim reads it in its own statement (outbox.ts).
export const reserveColumns = sql`r.id as request_id, r.state as request_state, r.mailbox_id, r.workspace_id, e.time_zone as enrollment_zone, ${calendarColumns},
         e.sequence_id, s.send_window, s.settings as seq_settings, s.daily_cap as seq_cap,
         m.daily_cap, m.hourly_cap, m.ramp, m.ramp_started_at, m.created_at, m.time_zone, m.settings, m.health, m.health_reason,
         (select wm.cap_factor from warmup_member wm where wm.mailbox_id = m.id) as cap_factor, (select wm.cap_reason from warmup_member wm where wm.mailbox_id = m.id) as cap_reason,
         w.time_zone as ws_zone, w.settings as ws_settings, w.daily_cap as ws_cap`;

// -- name: reserve-load
const loadSql = (requestId: string) => sql<ReserveRow>`
  select ${reserveColumns}
  from send_request r
  join enrollment e on e.id = r.enrollment_id
  join lead l on l.id = e.lead_id
  join sequence s on s.id = e.sequence_id
  join workspace w on w.id = r.workspace_id
  join mailbox m on m.id = r.mailbox_id
  where r.id = ${requestId}
  for no key update of m`;

// -- name: reserve-usage
const usageSql = (mailboxId: string, requestId: string, since: number) => sql<{ claimed_at: Date }>`
  select claimed_at from send_request
  where mailbox_id = ${mailboxId} and claimed_at >= ${new Date(since)} and id <> ${requestId}
    and state in ('in_flight', 'sent', 'unknown', 'possibly_sent', 'failed')
  union all
  select claimed_at from warmup_mail where sender_mailbox_id = ${mailboxId} and claimed_at >= ${new Date(since)}`;

// -- name: reserve-shared-usage
const sharedUsageSql = (workspaceId: string, sequenceId: string, requestId: string, from: number, to: number) => sql<{ ws: number; seq: number }>`
  select count(*)::int as ws, count(*) filter (where e.sequence_id = ${sequenceId})::int as seq
  from send_request r join enrollment e on e.id = r.enrollment_id
  where r.workspace_id = ${workspaceId} and r.claimed_at >= ${new Date(from)} and r.claimed_at < ${new Date(to)}
    and r.id <> ${requestId} and r.state in ('in_flight', 'sent', 'unknown', 'possibly_sent', 'failed')`;

// -- name: reserve-grant
const grantSql = (requestId: string, now: number) => sql`update send_request set claimed_at = ${new Date(now)} where id = ${requestId}`;

// -- name: reserve-refuse
// planned_at null hands the request back to the dispatcher; planned_at set parks it (a paused
// mailbox: nothing to plan until it is resumed, which clears it).
const refuseSql = (requestId: string, reason: string, park: Date | null) => sql`
  update send_request set send_at = null, planned_at = ${park}, plan_note = ${`claim refused: ${reason}`}
  where id = ${requestId} and state = 'queued'`;

/**
 * Reserves the send of `requestId` at `now` against every budget, inside the claim's transaction.
 * See the header for the checks. Must run before the request leaves 'queued'.
 */
export async function reserveSlot(tx: Tx, requestId: string, now: number): Promise<Reservation> {
  const row = (await loadSql(requestId).execute(tx)).rows[0];
  const r = await reserveLoaded(tx, row, now, requestId);
  if (r.granted) await grantSql(requestId, now).execute(tx);
  return r;
}

/**
 * reserveSlot for a claim that read the reservation's row itself (reserveColumns, with the mailbox
 * row locked FOR NO KEY UPDATE in that statement) and sets claimed_at itself when granted, in the
 * statement that marks the request in flight: the same checks, two statements fewer a send.
 * `row` undefined: the request or its mailbox was not found.
 */
export async function reserveLoaded(tx: Tx, row: ReserveRow | undefined, now: number, requestId = row?.request_id ?? ''): Promise<Reservation> {
  const refuse = async (reason: string, retryAt: number | null, park = false): Promise<Reservation> => {
    await refuseSql(requestId, reason, park ? new Date(now) : null).execute(tx);
    return { granted: false, reason, retryAt: retryAt !== null && Number.isFinite(retryAt) ? retryAt : null };
  };
  if (!row) return refuse('the request or its mailbox was not found', null);
  const blocked = blockedReason(row);
  if (blocked !== null) return refuse(`mailbox ${blocked}`, null, true);
  let bucket: MailboxBucket;
  try {
    const pacing = toMailboxPacing({ ...row, id: row.mailbox_id }, { time_zone: row.ws_zone, settings: row.ws_settings });
    const counted = (await usageSql(row.mailbox_id, requestId, now - 2 * DAY_MS).execute(tx)).rows.map((u) => u.claimed_at.getTime());
    bucket = new MailboxBucket(pacing, counted);
  } catch (e) {
    if (!isCadenzaError(e)) throw e;
    return refuse(`mailbox settings are invalid: ${e.message}`, null, true);
  }
  const check = bucket.check(now, now + 30 * DAY_MS);
  if (!check.ok) return refuse(check.reason, check.retryAt);

  // The prospect's window, as the plan saw it (calendarFor in sequence/plan.ts).
  try {
    const settings = (row.seq_settings ?? {}) as SequenceSettings;
    const ctx = contextOf({
      zone: row.enrollment_zone,
      window: parseWindow(row.send_window as Parameters<typeof parseWindow>[0]),
      ...(row.country ? { country: row.country } : {}),
      ...(row.region ? { region: row.region } : {}),
      skipHolidays: settings.skipHolidays ?? true,
      jitterMinutes: 0,
    });
    if (!isAllowedIn(ctx, now)) {
      let next: number | null = null;
      try {
        next = nextSlotIn(ctx, now).start;
      } catch {
        next = null;
      }
      return refuse(`outside the prospect's send window`, next);
    }
  } catch (e) {
    if (!isCadenzaError(e)) throw e;
    return refuse(`the prospect's calendar cannot be read: ${e.message}`, null);
  }

  if (row.ws_cap !== null || row.seq_cap !== null) {
    // Claims of one workspace's mailboxes run in several processes: counting and granting under
    // one lock keeps two of them from both taking the last unit.
    await lockSql(RESERVE_LOCK, row.workspace_id).execute(tx);
    const days = new LocalDays(resolveZone({ workspace: row.ws_zone }).zone);
    const d = days.dayOf(now);
    const from = days.start(d);
    const to = days.start(d + 1);
    const used = (await sharedUsageSql(row.workspace_id, row.sequence_id, requestId, from, to).execute(tx)).rows[0]!;
    if (row.ws_cap !== null && used.ws >= row.ws_cap) return refuse(`workspace daily cap reached (${used.ws} of ${row.ws_cap} on ${days.iso(d)})`, to);
    if (row.seq_cap !== null && used.seq >= row.seq_cap) return refuse(`sequence daily cap reached (${used.seq} of ${row.seq_cap} on ${days.iso(d)})`, to);
  }
  return { granted: true, mailboxId: row.mailbox_id };
}

// -- name: release
const releaseSql = (requestId: string) => sql<{ id: string }>`
  update send_request set claimed_at = null, send_at = null, planned_at = null, plan_note = null
  where id = ${requestId} and state in ('queued', 'cancelled')
  returning id`;

/**
 * Gives back a reservation whose request did not reach a server: call it in the transaction that
 * puts the request back in the queue (a transient failure, an unknown send not found in Sent) or
 * cancels it before the transport (lastLook), AFTER the state change. The request stops counting
 * by its state alone (only in_flight, sent, unknown and failed count); this also clears its slot,
 * so the dispatcher plans it again instead of it going out at its retry time unpaced.
 * Returns false (and changes nothing) when the request is in flight, sent, unknown or failed.
 */
export async function releaseSlot(tx: Tx, requestId: string): Promise<boolean> {
  return (await releaseSql(requestId).execute(tx)).rows.length > 0;
}
