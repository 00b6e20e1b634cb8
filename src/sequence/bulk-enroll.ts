import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Store, Tx } from '../store/store.ts';
import { resolveZone } from '../calendar/index.ts';
import type { Enrollment, SequenceDef } from './model.ts';
import { SequenceCache } from './sequence-repo.ts';
import { transition } from './transition.ts';
import { assignMailboxes } from '../mailbox/pacing/assign-mailboxes.ts';
import { threadEntry, threadRefusal } from './thread-entry.ts';
import { hasThreadFrom } from './sql/thread-chain.ts';
import { calendarColumns } from './sql/calendar-country.ts';

/**
 * Why a lead was not enrolled. invalid_address: list hygiene found the address undeliverable, or a
 * member rejected it on review; held_for_review: hygiene found it risky and no one approved it yet
 * (src/leads/hygiene/, migration 0030). A lead never checked is enrolled as before. no_thread:
 * the sequence's first email has no subject and the lead has no thread with the rep for it to
 * continue (thread-entry.ts).
 */
export type RefusalReason = 'suppressed' | 'already_enrolled' | 'not_found' | 'sequence_not_active' | 'cannot_plan' | 'invalid_address' | 'held_for_review' | 'no_thread';

export interface EnrollResult {
  sequenceId: string;
  enrolled: number;
  refused: Array<{ leadId: string; email?: string; reason: RefusalReason; detail?: string }>;
  /** Of the refused: leads skipped because hygiene found them invalid (or they were rejected on review). */
  invalid: number;
  /** Of the refused: risky leads held until a member approves them. */
  held: number;
  durationMs: number;
}

export interface BulkEnrollOptions {
  workspaceId: string;
  sequenceId: string;
  leadIds: string[];
  chunkSize?: number;
  onProgress?: (done: number, total: number) => void;
}

/** What a move adds to an enrollment (sequence/move.ts); plain enrollment leaves it out. */
export interface EnrollExtras {
  /** Key of the step to start at; the steps before it are skipped (never run). Default: the first. */
  startAtStep?: string;
  /** A mailbox each lead keeps if it is in the sequence's pool (so follow-ups come from the same rep); else rotation picks. */
  keepMailbox?: ReadonlyMap<string, string | null>;
  /** The enrollment each lead comes from, written into the new one's journal entry. */
  movedFrom?: ReadonlyMap<string, string>;
  /** A subsequence (a branch's or reply rule's move): the first step is due no earlier than this instant (epoch ms). */
  notBefore?: number;
}

export interface EnrollInTxResult extends EnrollResult {
  /** The enrollments written, as the engine planned them. */
  created: Enrollment[];
}

interface Candidate {
  id: string;
  email: string;
  time_zone: string | null;
  country: string | null;
  region: string | null;
  suppressed: string | null;
  enrolled: boolean;
  hygiene_verdict: 'valid' | 'risky' | 'invalid' | null;
  hygiene_review: 'approved' | 'rejected' | null;
  hygiene_reasons: Array<{ code: string; message: string }>;
}

/**
 * Enrolls many leads in one sequence as one operation: one transaction, a few set-based queries
 * per chunk (suppression and existing enrollments are checked with joins, enrollments and journal
 * rows are written with unnest). A lead that cannot be enrolled is refused with a reason, never
 * silently dropped. The unique (sequence_id, lead_id) index is the last word on duplicates: a
 * lead enrolled concurrently by someone else is refused as already_enrolled.
 */
export async function bulkEnroll(store: Store, deps: EnrollDeps, opts: BulkEnrollOptions): Promise<EnrollResult> {
  let out!: EnrollInTxResult;
  await store.db.transaction().execute(async (tx) => {
    out = await enrollInTx(tx, deps, opts);
  });
  return { sequenceId: out.sequenceId, enrolled: out.enrolled, refused: out.refused, invalid: out.invalid, held: out.held, durationMs: out.durationMs };
}

type EnrollDeps = { clock: Clock; random: Random; sequences?: SequenceCache };

/**
 * The enrollment itself, inside the caller's transaction: bulkEnroll's, or a move's, which ends the
 * old enrollment in the same transaction (sequence/move.ts). One code path, so a moved lead meets
 * exactly the checks a newly enrolled one does.
 */
export async function enrollInTx(tx: Tx, deps: EnrollDeps, opts: BulkEnrollOptions & EnrollExtras): Promise<EnrollInTxResult> {
  const started = deps.clock.now();
  const sequences = deps.sequences ?? new SequenceCache();
  const chunkSize = opts.chunkSize ?? 5000;
  const refused: EnrollResult['refused'] = [];
  const created: Enrollment[] = [];
  const result = () => ({
    sequenceId: opts.sequenceId,
    enrolled: created.length,
    refused,
    invalid: refused.filter((r) => r.reason === 'invalid_address').length,
    held: refused.filter((r) => r.reason === 'held_for_review').length,
    created,
    durationMs: deps.clock.now() - started,
  });
  const seqRow = await tx.selectFrom('sequence').select(['status', 'workspace_id']).where('id', '=', opts.sequenceId).executeTakeFirst();
  if (!seqRow || seqRow.workspace_id !== opts.workspaceId) throw cadenzaError('NOT_FOUND', `sequence ${opts.sequenceId} not found in this workspace`);
  if (seqRow.status !== 'active') {
    for (const id of opts.leadIds) refused.push({ leadId: id, reason: 'sequence_not_active', detail: `sequence is ${seqRow.status}` });
    return result();
  }
  const seq = await sequences.get(tx, opts.sequenceId);
  const skipped = skippedSteps(seq, opts.startAtStep);
  const entry = threadEntry(seq, skipped);
  const ws = await tx.selectFrom('workspace').select('time_zone').where('id', '=', opts.workspaceId).executeTakeFirstOrThrow();
  const kept = await keptMailboxes(tx, opts.sequenceId, opts.keepMailbox);
  // Rotation: each enrollment gets the pool mailbox with the most room (ramped cap over the next
  // days against its live enrollments), and keeps it for every later step so follow-ups thread.
  const assigned = await assignMailboxes(tx, { sequenceId: opts.sequenceId, count: opts.leadIds.length - kept.size, now: deps.clock.now() });
  let rotated = 0;
  const unique = [...new Set(opts.leadIds)];
  for (let i = 0; i < unique.length; i += chunkSize) {
    const chunk = unique.slice(i, i + chunkSize);
    const found = await candidates(tx, opts.workspaceId, opts.sequenceId, chunk);
    const seen = new Set(found.map((c) => c.id));
    for (const id of chunk) if (!seen.has(id)) refused.push({ leadId: id, reason: 'not_found' });
    const rows: Enrollment[] = [];
    const mailboxes: Array<string | null> = [];
    const zoneSources: string[] = [];
    const now = deps.clock.now();
    for (const c of found) {
      if (c.suppressed) {
        refused.push({ leadId: c.id, email: c.email, reason: 'suppressed', detail: c.suppressed });
        continue;
      }
      if (c.enrolled) {
        refused.push({ leadId: c.id, email: c.email, reason: 'already_enrolled' });
        continue;
      }
      const hygiene = hygieneRefusal(c);
      if (hygiene) {
        refused.push({ leadId: c.id, email: c.email, ...hygiene });
        continue;
      }
      if (entry) {
        const from = opts.movedFrom?.get(c.id);
        const keptMb = kept.get(c.id);
        const why = threadRefusal(entry, { movedFrom: !!from, mailboxKept: !!keptMb, threadFound: !!from && !!keptMb && (await hasThreadFrom(tx, from, keptMb.id)) });
        if (why) {
          refused.push({ leadId: c.id, email: c.email, reason: 'no_thread', detail: why });
          continue;
        }
      }
      const mb = kept.get(c.id) ?? assigned[rotated];
      const zone = resolveZone({ lead: c.time_zone, mailbox: mb?.time_zone ?? null, workspace: ws.time_zone });
      const e: Enrollment = {
        id: newId(now, deps.random),
        workspaceId: opts.workspaceId,
        sequenceId: opts.sequenceId,
        leadId: c.id,
        state: 'active',
        stateReason: null,
        waitingFor: null,
        nextStepId: null,
        lastStepId: null,
        lastStepAt: null,
        doneStepIds: skipped,
        dueAt: null,
        pausedDueAt: null,
        zone: zone.zone,
        country: c.country,
        region: c.region,
        softBounces: 0,
        enrolledAt: now,
      };
      const planned = transition(e, opts.notBefore !== undefined ? { type: 'enrolled', notBefore: opts.notBefore } : { type: 'enrolled' }, now, seq).next;
      if (planned.state === 'failed') {
        // e.g. a country or region the holiday calendar does not know: refused, with the reason.
        refused.push({ leadId: c.id, email: c.email, reason: 'cannot_plan', detail: planned.stateReason ?? '' });
        continue;
      }
      if (!kept.has(c.id)) rotated++;
      rows.push(planned);
      mailboxes.push(mb?.id ?? null);
      zoneSources.push(zone.source);
    }
    if (rows.length) {
      const inserted = await insertEnrollments(tx, rows, mailboxes, zoneSources, now, opts.movedFrom);
      for (const r of rows) {
        if (inserted.has(r.id)) created.push(r);
        else refused.push({ leadId: r.leadId, reason: 'already_enrolled', detail: 'enrolled concurrently' });
      }
    }
    opts.onProgress?.(Math.min(i + chunkSize, unique.length), unique.length);
  }
  return result();
}

/**
 * The steps a start at `key` skips: every step before it, removed ones included (so restoring one
 * later does not run it out of context). They count as done, so the edit rule (plan.ts) never
 * plans them.
 */
function skippedSteps(seq: SequenceDef, key: string | undefined): string[] {
  if (key === undefined) return [];
  const start = seq.steps.find((s) => s.key === key && !s.archived);
  if (!start) throw cadenzaError('INVALID_INPUT', `the sequence has no step '${key}'`, { field: 'startAtStep', steps: seq.steps.filter((s) => !s.archived).map((s) => s.key) });
  return seq.steps.filter((s) => s.position < start.position).map((s) => s.id);
}

/** The kept mailboxes that are in the sequence's pool, by lead, with their zones. */
async function keptMailboxes(tx: Tx, sequenceId: string, keep: ReadonlyMap<string, string | null> | undefined): Promise<Map<string, { id: string; time_zone: string | null }>> {
  const out = new Map<string, { id: string; time_zone: string | null }>();
  const ids = [...new Set([...(keep?.values() ?? [])].filter((x): x is string => x !== null))];
  if (!keep || ids.length === 0) return out;
  const pool = await tx
    .selectFrom('sequence_mailbox as sm')
    .innerJoin('mailbox as m', 'm.id', 'sm.mailbox_id')
    .select(['m.id', 'm.time_zone'])
    .where('sm.sequence_id', '=', sequenceId)
    .where('m.id', 'in', ids)
    .execute();
  const byId = new Map(pool.map((m) => [m.id, m]));
  for (const [leadId, mb] of keep) if (mb && byId.has(mb)) out.set(leadId, byId.get(mb)!);
  return out;
}

/** List hygiene's word on a candidate (migration 0030): invalid or rejected leads are skipped, risky unapproved ones held. */
function hygieneRefusal(c: Candidate): { reason: RefusalReason; detail: string } | null {
  const why = c.hygiene_reasons.map((r) => r.message).join('; ');
  if (c.hygiene_verdict === 'invalid') return { reason: 'invalid_address', detail: why };
  if (c.hygiene_verdict === 'risky' && c.hygiene_review === 'rejected') return { reason: 'invalid_address', detail: `rejected on review (${why})` };
  if (c.hygiene_verdict === 'risky' && c.hygiene_review !== 'approved') return { reason: 'held_for_review', detail: why };
  return null;
}

async function candidates(tx: Tx, workspaceId: string, sequenceId: string, ids: string[]): Promise<Candidate[]> {
  const r = await sql<Candidate>`
    select l.id, l.email, l.time_zone, ${calendarColumns}, s.reason as suppressed,
           l.hygiene_verdict, l.hygiene_review, l.hygiene_reasons,
           exists (select 1 from enrollment e where e.sequence_id = ${sequenceId} and e.lead_id = l.id) as enrolled
    from lead l
    left join suppression s on s.workspace_id = l.workspace_id and s.email_norm = l.email_norm
    where l.workspace_id = ${workspaceId} and l.id = any(${ids}::uuid[])`.execute(tx);
  return r.rows;
}

async function insertEnrollments(tx: Tx, rows: Enrollment[], mailboxes: Array<string | null>, zoneSources: string[], now: number, movedFrom?: ReadonlyMap<string, string>): Promise<Set<string>> {
  const col = <T>(f: (e: Enrollment, i: number) => T) => rows.map(f);
  const at = new Date(now);
  const res = await sql<{ id: string; lead_id: string }>`
    insert into enrollment (id, workspace_id, sequence_id, lead_id, mailbox_id, state, state_reason, waiting_for,
                            next_step_id, done_step_ids, due_at, time_zone, zone_source, experiment_arms, created_at, updated_at)
    select u.id, u.workspace_id, u.sequence_id, u.lead_id, u.mailbox_id, u.state, u.state_reason, u.waiting_for,
           u.next_step_id, u.done_step_ids::uuid[], u.due_at, u.time_zone, u.zone_source, u.experiment_arms, ${at}, ${at}
    from unnest(${col((e) => e.id)}::uuid[], ${col((e) => e.workspaceId)}::uuid[], ${col((e) => e.sequenceId)}::uuid[],
                ${col((e) => e.leadId)}::uuid[], ${mailboxes}::uuid[], ${col((e) => e.state)}::text[],
                ${col((e) => e.stateReason)}::text[], ${col((e) => e.waitingFor)}::text[], ${col((e) => e.nextStepId)}::uuid[],
                ${col((e) => `{${e.doneStepIds.join(',')}}`)}::text[],
                ${col((e) => (e.dueAt === null ? null : new Date(e.dueAt).toISOString()))}::timestamptz[],
                ${col((e) => e.zone)}::text[], ${zoneSources}::text[], ${col((e) => JSON.stringify(e.experimentArms ?? {}))}::jsonb[])
      as u(id, workspace_id, sequence_id, lead_id, mailbox_id, state, state_reason, waiting_for, next_step_id, done_step_ids, due_at, time_zone, zone_source, experiment_arms)
    on conflict (sequence_id, lead_id) do nothing
    returning id, lead_id`.execute(tx);
  const ids = new Set(res.rows.map((r) => r.id));
  const kept = rows.filter((r) => ids.has(r.id));
  if (kept.length) {
    // The journal row of each enrollment, built in SQL from the rows just written.
    // A moved lead's entry names the enrollment it came from (the lead's timeline says from where).
    await sql`
      insert into event (workspace_id, enrollment_id, type, payload, at)
      select e.workspace_id, e.id, 'enrolled',
             jsonb_build_object('event', jsonb_build_object('type', 'enrolled'), 'from', null, 'to', e.state,
                                'nextStepId', e.next_step_id, 'dueAt', e.due_at, 'zone', e.time_zone, 'zoneSource', e.zone_source)
               || case when k.moved_from is null then '{}'::jsonb else jsonb_build_object('movedFrom', k.moved_from) end,
             ${at}
      from unnest(${kept.map((e) => e.id)}::uuid[], ${kept.map((e) => movedFrom?.get(e.leadId) ?? null)}::uuid[]) as k(id, moved_from)
      join enrollment e on e.id = k.id`.execute(tx);
  }
  return ids;
}
