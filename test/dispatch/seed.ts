/**
 * Helpers for the dispatcher's tests (src/sending/dispatch) and others that need a paced world:
 * a workspace with mailboxes, sequences and queued send requests written straight into the store,
 * and a sender that claims the way the outbox will once pacing is wired in (send_at <= now,
 * reserveSlot in the claim).
 */
import { sql } from 'kysely';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { parseWindow } from '../../src/calendar/index.ts';
import type { Store } from '../../src/store/store.ts';
import { reserveSlot, type Reservation } from '../../src/sending/dispatch/reserve.ts';

export interface SeedMailbox {
  zone?: string | null;
  dailyCap?: number;
  hourlyCap?: number | null;
  ramp?: Record<string, unknown>;
  rampStartedAt?: number;
  pacing?: Record<string, unknown>;
  health?: 'ok' | 'warning' | 'paused' | 'error';
}

export interface SeedSequence {
  window: string;
  cap?: number | null;
  /** Indexes into the mailboxes. */
  pool: number[];
  skipHolidays?: boolean;
}

export interface SeedRequest {
  mailbox: number;
  sequence?: number;
  dueAt: number;
  leadZone?: string;
  country?: string | null;
}

export interface Seeded {
  workspaceId: string;
  mailboxIds: string[];
  sequenceIds: string[];
  requestIds: string[];
}

/** A calm working day for tests that look at caps rather than at the day's shape: 00:30-23:30 every day, no lunch, no jitter. */
export const allDay = { dayStart: '00:30', dayEnd: '23:30', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null };

export async function seed(
  store: Store,
  o: { now: number; seed?: number; workspaceZone?: string; workspaceCap?: number | null; mailboxes: SeedMailbox[]; sequences: SeedSequence[]; requests: SeedRequest[] },
): Promise<Seeded> {
  const random = seededRandom(o.seed ?? 7);
  const id = () => newId(o.now, random);
  const workspaceId = id();
  await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Acme', time_zone: o.workspaceZone ?? 'America/New_York', daily_cap: o.workspaceCap ?? null }).execute();
  const mailboxIds: string[] = [];
  for (const [i, m] of o.mailboxes.entries()) {
    const mid = id();
    mailboxIds.push(mid);
    await store.db
      .insertInto('mailbox')
      .values({
        id: mid,
        workspace_id: workspaceId,
        email: `rep${i}@acme.test`,
        provider: 'smtp_imap',
        time_zone: m.zone === undefined ? 'America/New_York' : m.zone,
        daily_cap: m.dailyCap ?? 30,
        hourly_cap: m.hourlyCap ?? null,
        ramp: JSON.stringify(m.ramp ?? {}),
        ramp_started_at: m.rampStartedAt === undefined ? null : new Date(m.rampStartedAt),
        settings: JSON.stringify(m.pacing ? { pacing: m.pacing } : {}),
        health: m.health ?? 'ok',
        created_at: new Date(o.now),
      })
      .execute();
  }
  const sequenceIds: string[] = [];
  const stepIds: string[] = [];
  for (const [i, s] of o.sequences.entries()) {
    const sid = id();
    sequenceIds.push(sid);
    await store.db
      .insertInto('sequence')
      .values({
        id: sid,
        workspace_id: workspaceId,
        key: `seq${i}`,
        name: `Seq ${i}`,
        send_window: JSON.stringify(parseWindow(s.window)),
        settings: JSON.stringify({ skipHolidays: s.skipHolidays ?? false }),
        daily_cap: s.cap ?? null,
      })
      .execute();
    const stepId = id();
    stepIds.push(stepId);
    await store.db.insertInto('step').values({ id: stepId, sequence_id: sid, key: 'intro', position: 0, kind: 'email' }).execute();
    for (const p of s.pool) await store.db.insertInto('sequence_mailbox').values({ sequence_id: sid, mailbox_id: mailboxIds[p]! }).execute();
  }
  const leads: unknown[][] = [[], [], [], [], []];
  const enr: unknown[][] = [[], [], [], [], [], [], []];
  const req: unknown[][] = [[], [], [], [], [], [], []];
  const requestIds: string[] = [];
  for (const [i, r] of o.requests.entries()) {
    const leadId = id();
    const enrollmentId = id();
    const requestId = id();
    requestIds.push(requestId);
    const seq = r.sequence ?? 0;
    const zone = r.leadZone ?? 'America/New_York';
    leads[0]!.push(leadId);
    leads[1]!.push(`lead${i}@prospect.test`);
    leads[2]!.push(zone);
    leads[3]!.push(r.country ?? null);
    enr[0]!.push(enrollmentId);
    enr[1]!.push(sequenceIds[seq]);
    enr[2]!.push(leadId);
    enr[3]!.push(mailboxIds[r.mailbox]);
    enr[4]!.push(stepIds[seq]);
    enr[5]!.push(zone);
    req[0]!.push(requestId);
    req[1]!.push(enrollmentId);
    req[2]!.push(stepIds[seq]);
    req[3]!.push(mailboxIds[r.mailbox]);
    req[4]!.push(new Date(r.dueAt).toISOString());
  }
  if (o.requests.length) {
    await sql`
      insert into lead (id, workspace_id, email, email_norm, time_zone, country)
      select u.id, ${workspaceId}, u.email, u.email, u.zone, u.country
      from unnest(${leads[0]}::uuid[], ${leads[1]}::text[], ${leads[2]}::text[], ${leads[3]}::text[]) as u(id, email, zone, country)`.execute(store.db);
    await sql`
      insert into enrollment (id, workspace_id, sequence_id, lead_id, mailbox_id, state, waiting_for, next_step_id, time_zone, zone_source)
      select u.id, ${workspaceId}, u.seq, u.lead, u.mb, 'active', 'send', u.step, u.zone, 'lead'
      from unnest(${enr[0]}::uuid[], ${enr[1]}::uuid[], ${enr[2]}::uuid[], ${enr[3]}::uuid[], ${enr[4]}::uuid[], ${enr[5]}::text[])
        as u(id, seq, lead, mb, step, zone)`.execute(store.db);
    await sql`
      insert into send_request (id, workspace_id, enrollment_id, step_id, mailbox_id, state, due_at)
      select u.id, ${workspaceId}, u.e, u.step, u.mb, 'queued', u.due
      from unnest(${req[0]}::uuid[], ${req[1]}::uuid[], ${req[2]}::uuid[], ${req[3]}::uuid[], ${req[4]}::timestamptz[])
        as u(id, e, step, mb, due)`.execute(store.db);
  }
  return { workspaceId, mailboxIds, sequenceIds, requestIds };
}

export type SendAttempt = { kind: 'sent'; requestId: string } | { kind: 'refused'; requestId: string; reservation: Reservation } | { kind: 'empty' };

/**
 * One claim as the outbox makes it once wired: the mailbox's earliest planned request whose slot
 * has come, locked, reserved in the same transaction, then handed to the (here: instant) server.
 */
export async function claimAndSend(store: Store, mailboxId: string, now: number): Promise<SendAttempt> {
  return store.db.transaction().execute(async (tx): Promise<SendAttempt> => {
    const r = (
      await sql<{ id: string }>`
        select id from send_request
        where mailbox_id = ${mailboxId} and state = 'queued' and due_at <= ${new Date(now)}
          and send_at <= ${new Date(now)} and send_at >= due_at
        order by send_at, id limit 1
        for update skip locked`.execute(tx)
    ).rows[0];
    if (!r) return { kind: 'empty' };
    const reservation = await reserveSlot(tx, r.id, now);
    if (!reservation.granted) return { kind: 'refused', requestId: r.id, reservation };
    await sql`update send_request set state = 'sent', updated_at = ${new Date(now)} where id = ${r.id}`.execute(tx);
    return { kind: 'sent', requestId: r.id };
  });
}

/** Marks requests as sent at the given instants (counted usage), as if claimed then. */
export async function markSent(store: Store, requestIds: string[], at: number[]): Promise<void> {
  await sql`
    update send_request r set state = 'sent', claimed_at = u.at
    from unnest(${requestIds}::uuid[], ${at.map((t) => new Date(t).toISOString())}::timestamptz[]) as u(id, at)
    where r.id = u.id`.execute(store.db);
}
