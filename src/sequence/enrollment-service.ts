import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import type { Random } from '../common/random.ts';
import type { Store, Tx } from '../store/store.ts';
import type { EnrollmentRow } from '../store/schema.ts';
import { applyEffects } from './effects.ts';
import { changedColumns, fromRow } from './enrollment-row.ts';
import { isTerminal, type EngineEvent, type Enrollment, type TransitionResult } from './model.ts';
import { SequenceCache } from './sequence-repo.ts';
import { transition } from './transition.ts';

/** What the scheduler hears after a commit: an enrollment's durable timer changed. */
export type TimerChange = { enrollmentId: string; dueAt: number | null };

export interface EnrollmentServiceDeps {
  store: Store;
  clock: Clock;
  random: Random;
  sequences?: SequenceCache;
}

type LoadedRow = EnrollmentRow & { country: string | null; region: string | null; email_norm: string };

export interface Applied {
  enrollmentId: string;
  event: EngineEvent;
  result: TransitionResult;
}

/**
 * Applies engine events durably: lock the enrollment row, run the pure transition, write the new
 * state, carry out the effects and append to the journal, all in one transaction. A step due is
 * claimed the same way: the row lock plus the re-checked due time is the claim, so two scheduler
 * processes can never fire one step twice (promise 1).
 */
export class EnrollmentService {
  readonly sequences: SequenceCache;
  private readonly listeners = new Set<(changes: TimerChange[]) => void>();

  constructor(private readonly deps: EnrollmentServiceDeps) {
    this.sequences = deps.sequences ?? new SequenceCache();
  }

  /** Called after each commit with the timers it set or cleared (for the in-memory wheel). */
  onTimers(fn: (changes: TimerChange[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async apply(enrollmentId: string, event: EngineEvent): Promise<TransitionResult> {
    return this.transaction((_tx, apply) => apply(enrollmentId, event));
  }

  /**
   * Runs fn in one transaction in which events are applied together with the caller's own writes:
   * the outbox marks a request sent, inserts the message row and applies step_sent atomically, so
   * a crash leaves either all three or none. Timer listeners hear of the changes after the commit,
   * as with apply(); nothing is heard when fn throws (the transaction rolled back).
   */
  async transaction<T>(fn: (tx: Tx, apply: (enrollmentId: string, event: EngineEvent) => Promise<TransitionResult>) => Promise<T>): Promise<T> {
    const applied: Applied[] = [];
    const out = await this.deps.store.db.transaction().execute((tx) =>
      fn(tx, async (enrollmentId, event) => {
        const a = await this.applyInTx(tx, enrollmentId, event, this.deps.clock.now());
        applied.push(a);
        return a.result;
      }),
    );
    this.committed(applied);
    return out;
  }

  /**
   * Applies one event inside the caller's transaction: locks the row, transitions, writes, journals.
   * Listeners are not told (the caller owns the commit): pass the result to committed() once the
   * transaction has committed, or use transaction(), which does both.
   */
  async applyInTx(tx: Tx, enrollmentId: string, event: EngineEvent, now: number): Promise<Applied> {
    const row = await this.lockRows(tx, sql`e.id = ${enrollmentId}`, 1, false);
    if (!row[0]) throw cadenzaError('NOT_FOUND', `enrollment ${enrollmentId} not found`, { enrollmentId });
    return this.applyToRow(tx, row[0], event, now);
  }

  /** Tells the timer listeners what committed transactions changed (see applyInTx). */
  committed(applied: Applied[]): void {
    this.notify(applied);
  }

  /** Applies one event to many enrollments, each in its own transaction (a failure stops only that one). */
  async applyMany(enrollmentIds: string[], event: EngineEvent): Promise<Map<string, TransitionResult | Error>> {
    const out = new Map<string, TransitionResult | Error>();
    for (const id of enrollmentIds) {
      try {
        out.set(id, await this.apply(id, event));
      } catch (e) {
        out.set(id, e as Error);
      }
    }
    return out;
  }

  /**
   * Claims and fires up to `limit` timers that are due at `now`: step_due for active enrollments,
   * resume for paused ones. Rows another process holds are skipped, not waited for; a row whose
   * timer moved after we read it is re-checked under the lock by the WHERE clause.
   */
  async fireDue(limit: number): Promise<Applied[]> {
    const now = this.deps.clock.now();
    const applied: Applied[] = [];
    await this.deps.store.db.transaction().execute(async (tx) => {
      const rows = await this.lockRows(tx, sql`e.due_at <= ${new Date(now)} and e.state in ('active', 'paused')`, limit, true);
      for (const row of rows) {
        const event: EngineEvent = row.state === 'paused' ? { type: 'resume' } : { type: 'step_due' };
        applied.push(await this.applyToRow(tx, row, event, now));
      }
    });
    this.notify(applied);
    return applied;
  }

  /** Re-plans every enrollment of a sequence after an edit (the edit rule in plan.ts). */
  async replanSequence(sequenceId: string, batch = 500): Promise<number> {
    let after = '00000000-0000-0000-0000-000000000000';
    let changed = 0;
    for (;;) {
      const applied: Applied[] = [];
      const now = this.deps.clock.now();
      let last: string | undefined;
      await this.deps.store.db.transaction().execute(async (tx) => {
        const rows = await this.lockRows(tx, sql`e.sequence_id = ${sequenceId} and e.state in ('active', 'paused') and e.id > ${after}`, batch, false, true);
        for (const row of rows) {
          const a = await this.applyToRow(tx, row, { type: 'sequence_edited' }, now);
          if (a.result.outcome === 'applied') applied.push(a);
          last = row.id;
        }
      });
      this.notify(applied);
      changed += applied.length;
      if (!last) return changed;
      after = last;
    }
  }

  private async lockRows(tx: Tx, where: ReturnType<typeof sql>, limit: number, skipLocked: boolean, byId = false): Promise<LoadedRow[]> {
    // Ties on due_at (a batch enrolled at once with a zero delay) are broken by id, so a batch is
    // the same set in the same order on every run: a simulation replays exactly from its seed.
    const order = byId ? sql`e.id` : sql`e.due_at, e.id`;
    const r = await sql<LoadedRow>`
      select e.*, l.country, l.region, l.email_norm
      from enrollment e join lead l on l.id = e.lead_id
      where ${where}
      order by ${order}
      limit ${limit}
      for update of e ${skipLocked ? sql`skip locked` : sql``}`.execute(tx);
    return r.rows;
  }

  private async applyToRow(tx: Tx, row: LoadedRow, event: EngineEvent, now: number): Promise<Applied> {
    const seq = await this.sequences.get(tx, row.sequence_id);
    const before = fromRow(row, { country: row.country, region: row.region });
    const result = transition(before, event, now, seq);
    if (result.outcome === 'applied') {
      await tx
        .updateTable('enrollment')
        .set({ ...changedColumns(result.next), version: row.version + 1, updated_at: new Date(now) })
        .where('id', '=', row.id)
        .execute();
      await applyEffects({ tx, clock: this.deps.clock, random: this.deps.random, seq, enrollment: result.next, mailboxId: row.mailbox_id, emailNorm: row.email_norm }, result.effects);
      if (result.effects.some((f) => f.type === 'suppress')) await this.stopSiblings(tx, row, now);
    }
    await journal(tx, before, result, event, now);
    return { enrollmentId: row.id, event, result };
  }

  /** One opt-out is everywhere (promise 6): the lead's other live enrollments stop in the same transaction. */
  private async stopSiblings(tx: Tx, row: LoadedRow, now: number): Promise<void> {
    const others = await this.lockRows(tx, sql`e.lead_id = ${row.lead_id} and e.id <> ${row.id} and e.state in ('active', 'paused')`, 1000, false, true);
    for (const o of others) await this.applyToRow(tx, o, { type: 'stop', reason: 'address suppressed' }, now);
  }

  private notify(applied: Applied[]): void {
    const changes: TimerChange[] = [];
    for (const a of applied) {
      if (a.result.effects.some((f) => f.type === 'schedule_timer' || f.type === 'cancel_timer') || isTerminal(a.result.next.state)) {
        changes.push({ enrollmentId: a.enrollmentId, dueAt: a.result.next.dueAt });
      }
    }
    if (changes.length) for (const fn of this.listeners) fn(changes);
  }
}

export async function journal(tx: Tx, before: Enrollment, result: TransitionResult, event: EngineEvent, now: number): Promise<void> {
  await tx
    .insertInto('event')
    .values({
      workspace_id: before.workspaceId,
      enrollment_id: before.id,
      type: result.outcome === 'applied' ? event.type : `${event.type}.ignored`,
      payload: JSON.stringify({
        event,
        from: before.state,
        to: result.next.state,
        ...(result.next.nextStepId ? { nextStepId: result.next.nextStepId } : {}),
        ...(result.next.dueAt !== null ? { dueAt: new Date(result.next.dueAt).toISOString() } : {}),
        effects: result.effects.map((f) => f.type),
        ...(result.note ? { note: result.note } : {}),
      }),
      at: new Date(now),
    })
    .execute();
}
