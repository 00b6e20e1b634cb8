import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import type { Random } from '../common/random.ts';
import { oneStatement } from '../store/one-statement.ts';
import type { Store, Tx } from '../store/store.ts';
import type { EnrollmentRow } from '../store/schema.ts';
import { cancellations, createWork, planEffects } from './effects.ts';
import { fromRow } from './enrollment-row.ts';
import { isTerminal, prospectSignals, type Effect, type EngineEvent, type Enrollment, type SequenceDef, type TransitionResult } from './model.ts';
import { SequenceCache } from './sequence-repo.ts';
import { suppress, type StopEngine } from './suppress.ts';
import { transition } from './transition.ts';
import { gatherFacts } from './branch-facts.ts';
import { enrollInTx } from './bulk-enroll.ts';
import { calendarColumns } from './sql/calendar-country.ts';

/** What the scheduler hears after a commit: an enrollment's durable timer changed. */
export type TimerChange = { enrollmentId: string; dueAt: number | null };

export interface EnrollmentServiceDeps {
  store: Store;
  clock: Clock;
  random: Random;
  sequences?: SequenceCache;
}

/** An enrollment row as the service locks it, with its lead's calendar and its sequence's current version. */
type LoadedRow = EnrollmentRow & { country: string | null; region: string | null; email_norm: string; sequence_version: number };

export interface Applied {
  enrollmentId: string;
  event: EngineEvent;
  result: TransitionResult;
  /** The due time the transition consumed (for firing lag). */
  dueAt: number | null;
}

/**
 * Applies engine events durably: lock the enrollment rows, run the pure transition, write the new
 * states, carry out the effects and append to the journal, all in one transaction, with one
 * set-based statement per kind of write so a batch costs a handful of round trips. Firing a timer
 * is a claim the same way: the row lock (skip locked) plus the due time re-checked under it, so two
 * scheduler processes can never fire one step twice (promise 1).
 */
export class EnrollmentService implements StopEngine {
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
    let applied: Applied[] = [];
    await this.deps.store.db.transaction().execute(async (tx) => {
      applied = await this.applyInTx(tx, enrollmentId, event);
    });
    this.notify(applied);
    return applied[0]!.result;
  }

  /**
   * Applies an event inside the caller's transaction, so that it commits or rolls back with the
   * caller's own writes (the outbox records a send and its step_sent in one transaction). The
   * caller must pass the returned list to `notify` after its commit. The first entry is the
   * enrollment's own (or, for a prospect's signal to a moved enrollment, its successor's); any
   * further ones are its siblings stopped by a suppression.
   */
  async applyInTx(tx: Tx, enrollmentId: string, event: EngineEvent, now = this.deps.clock.now()): Promise<Applied[]> {
    return (await this.applyEachInTx(tx, [{ enrollmentId, event }], now))[0]!;
  }

  /**
   * `applyInTx` for many enrollments at once, inside the caller's transaction: the rows locked in
   * one statement (id order, the order every batch takes its locks in), the transitions written,
   * their effects carried out and journalled with one statement per kind of write. Returns, per
   * item and in order, what `applyInTx` returns for it (its own transition first, then any siblings
   * its suppress effect stopped). Items are applied as if one after the other: two that land on
   * the same enrollment (the same id twice, or a signal passed on along a move to one already in
   * the list) are split into successive commits, the later one seeing the earlier's state.
   */
  async applyEachInTx(tx: Tx, items: ReadonlyArray<{ enrollmentId: string; event: EngineEvent }>, now = this.deps.clock.now()): Promise<Applied[][]> {
    if (items.length === 0) return [];
    const ids = [...new Set(items.map((i) => i.enrollmentId))];
    const locked = new Map((await lockRows(tx, sql`e.id = any(${ids}::uuid[])`, ids.length, false, true)).map((r) => [r.id, r]));
    const resolved: LoadedRow[] = [];
    for (const { enrollmentId, event } of items) {
      const first = locked.get(enrollmentId);
      if (!first) throw cadenzaError('NOT_FOUND', `enrollment ${enrollmentId} not found`, { enrollmentId });
      let row: LoadedRow = first;
      // The prospect answered a message of a sequence they were since moved out of: the answer is
      // about them, so it goes to the enrollment that replaced this one (and on, if that was moved
      // too). Locks follow the move's own order (old, then new), so this cannot deadlock with a move.
      // An enrollment a reply rule moved ended 'replied' but points on all the same: a second
      // answer (or an opt-out) stops the nurture it went to, and suppress() spares that chain
      // expecting this (sql/suppression.ts stoppableEnrollmentsOf).
      for (let hop = 0; hop < 32 && prospectSignals.has(event.type) && isTerminal(row.state) && row.moved_to && !sameReply(row, event); hop++) {
        const next: LoadedRow | undefined = locked.get(row.moved_to) ?? (await lockRows(tx, sql`e.id = ${row.moved_to}`, 1, false))[0];
        if (!next) break;
        locked.set(next.id, next);
        row = next;
      }
      resolved.push(row);
    }
    const out: Applied[][] = [];
    // Successive commits, each holding an enrollment at most once; a later one re-reads its rows.
    for (let start = 0; start < items.length; ) {
      const seen = new Set<string>();
      let end = start;
      while (end < items.length && !seen.has(resolved[end]!.id)) seen.add(resolved[end++]!.id);
      const rows = start === 0 ? resolved.slice(start, end) : await this.reread(tx, resolved.slice(start, end));
      out.push(...(await this.commit(tx, rows.map((row, i) => ({ row, event: items[start + i]!.event, addressedTo: items[start + i]!.enrollmentId })), now)));
      start = end;
    }
    return out;
  }

  private async reread(tx: Tx, rows: LoadedRow[]): Promise<LoadedRow[]> {
    const fresh = new Map((await lockRows(tx, sql`e.id = any(${rows.map((r) => r.id)}::uuid[])`, rows.length, false, true)).map((r) => [r.id, r]));
    return rows.map((r) => fresh.get(r.id)!);
  }

  /**
   * Stops each of these enrollments inside the caller's transaction, as one batch: rows locked in
   * id order (the order every stop takes its locks in), one journal statement. Used by suppress()
   * and the company rule (suppress.ts). A stop is not a prospect's signal, so nothing is passed on
   * along moves; its effects never suppress, so this never calls suppress() back.
   */
  async stopEachInTx(tx: Tx, enrollmentIds: readonly string[], reason: string, now = this.deps.clock.now()): Promise<Applied[]> {
    if (enrollmentIds.length === 0) return [];
    const rows = await lockRows(tx, sql`e.id = any(${[...enrollmentIds]}::uuid[])`, enrollmentIds.length, false, true);
    return (await this.commit(tx, rows.map((row) => ({ row, event: { type: 'stop', reason } as const })), now)).flat();
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
   * Claims and fires up to `limit` timers due now: step_due for active enrollments, resume for
   * paused ones. Rows another process holds are skipped, not waited for; a row whose timer moved
   * after the scan is re-checked under the lock by the WHERE clause.
   */
  async fireDue(limit: number): Promise<Applied[]> {
    const now = this.deps.clock.now();
    let applied: Applied[] = [];
    await this.deps.store.db.transaction().execute(async (tx) => {
      const rows = await lockRows(tx, sql`e.due_at <= ${new Date(now)} and e.state in ('active', 'paused')`, limit, true);
      applied = (await this.commit(tx, rows.map((row) => ({ row, event: row.state === 'paused' ? ({ type: 'resume' } as const) : ({ type: 'step_due' } as const) })), now)).flat();
    });
    this.notify(applied);
    return applied;
  }

  /** Re-plans every live enrollment of a sequence after an edit (the edit rule in plan.ts). Returns how many changed. */
  async replanSequence(sequenceId: string, batch = 500): Promise<number> {
    let after = '00000000-0000-0000-0000-000000000000';
    let changed = 0;
    for (;;) {
      let applied: Applied[] = [];
      let last: string | undefined;
      await this.deps.store.db.transaction().execute(async (tx) => {
        const rows = await lockRows(tx, sql`e.sequence_id = ${sequenceId} and e.state in ('active', 'paused') and e.id > ${after}`, batch, false, true);
        last = rows[rows.length - 1]?.id;
        applied = (await this.commit(tx, rows.map((row) => ({ row, event: { type: 'sequence_edited' } as const })), this.deps.clock.now())).flat();
      });
      this.notify(applied);
      changed += applied.filter((a) => a.result.outcome === 'applied').length;
      if (!last) return changed;
      after = last;
    }
  }

  /** Tells the listeners about timers changed by a committed transaction. */
  notify(applied: Applied[]): void {
    const changes: TimerChange[] = [];
    for (const a of applied) {
      if (a.result.effects.some((f) => f.type === 'schedule_timer' || f.type === 'cancel_timer') || isTerminal(a.result.next.state)) {
        changes.push({ enrollmentId: a.enrollmentId, dueAt: a.result.next.dueAt });
      }
    }
    if (changes.length) for (const fn of this.listeners) fn(changes);
  }

  /** Per item, in order: its own transition, then the siblings its suppress effect stopped. */
  /**
   * `addressedTo`: the enrollment a signal was addressed to; where a move passed it on to this row,
   * the journal entry names it (`addressedTo`), so the analytics credit the email the prospect
   * answered, not the successor's (ops/figure-facts.ts `creditedEnrollment`).
   */
  private async commit(tx: Tx, items: Array<{ row: LoadedRow; event: EngineEvent; addressedTo?: string }>, now: number): Promise<Applied[][]> {
    if (items.length === 0) return [];
    const seqs = await this.sequences.current(tx, new Map(items.map((i) => [i.row.sequence_id, i.row.sequence_version])));
    // A step coming due in a sequence with branches may be a branch: its facts are read here, in
    // the transaction, and carried by the event, so the engine stays free of I/O.
    const branching = items.filter((i) => i.event.type === 'step_due' && !i.event.facts && seqs.get(i.row.sequence_id)!.steps.some((s) => s.kind === 'branch'));
    if (branching.length) {
      const facts = await gatherFacts(tx, branching.map((i) => i.row.id));
      for (const i of branching) i.event = { type: 'step_due', facts: facts.get(i.row.id)! };
    }
    const done = items.map(({ row, event, addressedTo }) => {
      const seq = seqs.get(row.sequence_id)!;
      const before = fromRow(row, { country: row.country, region: row.region });
      return { row, event, seq, before, result: transition(before, event, now, seq), passedFrom: addressedTo !== undefined && addressedTo !== row.id ? addressedTo : null };
    });
    const changed = done.filter((d) => d.result.outcome === 'applied');
    const plan = planEffects(
      this.deps,
      changed.map((d) => ({ enrollment: d.result.next, seq: d.seq, mailboxId: d.row.mailbox_id, emailNorm: d.row.email_norm, effects: d.result.effects })),
    );
    const at = new Date(this.deps.clock.now());
    // The new states, the cancelled sends and tasks and the journal: independent tables, one statement.
    await oneStatement(tx, [...statesUpdate(changed.map((d) => ({ next: d.result.next, version: d.row.version + 1 })), now), ...cancellations(plan, at)], journalInsert(done, now));
    await createWork(tx, plan, at);
    const suppressions = plan.suppressions;
    const applied: Applied[][] = done.map((d) => [{ enrollmentId: d.row.id, event: d.event, result: d.result, dueAt: d.before.dueAt }]);
    for (const [i, d] of done.entries()) {
      for (const fx of d.result.effects) if (fx.type === 'move_to_sequence') applied[i]!.push(...(await moveToSequence(tx, this.deps, this.sequences, d.row, fx)));
    }
    const index = new Map(done.map((d, i) => [d.row.id, i]));
    // One opt-out is everywhere (promise 6): suppress() writes the address's suppression and stops
    // its other enrollments through this service, in the same transaction. The enrollment whose
    // transition asked is spared: it is written and journalled above.
    for (const s of suppressions) {
      applied[index.get(s.enrollmentId)!]!.push(...(await suppress(tx, this, s.workspaceId, [s], { now, spare: [s.enrollmentId] })).applied);
    }
    return applied;
  }
}

/**
 * A branch arm's or a reply rule's move (effect move_to_sequence): the lead is enrolled in the
 * workspace's sequence of that key, in this transaction, by the code every enrollment goes through
 * (suppression, one enrollment per lead and sequence, the target active), keeping its mailbox when
 * the target's pool has it, its first step due no earlier than `notBefore`. An enrollment the
 * engine ended 'moved' points at the new one (moved_to), so the prospect's later answers reach it.
 * A refused move (no such sequence, already enrolled, suppressed) leaves the reason on the old one.
 */
async function moveToSequence(tx: Tx, deps: EnrollmentServiceDeps, sequences: SequenceCache, row: LoadedRow, fx: Extract<Effect, { type: 'move_to_sequence' }>): Promise<Applied[]> {
  const target = await tx.selectFrom('sequence').select('id').where('workspace_id', '=', row.workspace_id).where('key', '=', fx.sequenceKey).executeTakeFirst();
  const refuse = async (why: string) => {
    await tx.updateTable('enrollment').set({ state_reason: `${fx.reason} (not enrolled: ${why})`.slice(0, 500) }).where('id', '=', row.id).execute();
    return [];
  };
  if (!target) return refuse(`no sequence '${fx.sequenceKey}'`);
  if (target.id === row.sequence_id) return refuse('same sequence');
  const enrolled = await enrollInTx(tx, { clock: deps.clock, random: deps.random, sequences }, {
    workspaceId: row.workspace_id,
    sequenceId: target.id,
    leadIds: [row.lead_id],
    keepMailbox: new Map([[row.lead_id, row.mailbox_id]]),
    movedFrom: new Map([[row.lead_id, row.id]]),
    notBefore: fx.notBefore,
  });
  const made = enrolled.created[0];
  if (!made) return refuse(enrolled.refused[0]?.reason ?? 'refused');
  // Ended 'moved' (a branch arm) or 'replied' (a reply rule): either way it points at its
  // successor, as a person's move does (move.ts), for the lead's timeline, the prospect's later
  // signals and the thread the successor's first email continues (sending/send-context.ts).
  await tx.updateTable('enrollment').set({ moved_to: made.id }).where('id', '=', row.id).execute();
  return [{ enrollmentId: made.id, event: { type: 'enrolled', notBefore: fx.notBefore }, result: { outcome: 'applied', next: made, effects: made.dueAt !== null ? [{ type: 'schedule_timer', at: made.dueAt }] : [] }, dueAt: null }];
}

/**
 * The very reply that ended this enrollment, seen again (a person relabels it, a resync reads it
 * once more): not a new answer, so it is not passed on to the nurture its reply rule moved the
 * lead to, which it would stop. The engine names the reply in the reason it stops with.
 */
function sameReply(row: LoadedRow, event: EngineEvent): boolean {
  return event.type === 'reply' && !!event.messageId && row.state === 'replied' && row.state_reason === `reply ${event.messageId}`;
}

async function lockRows(tx: Tx, where: ReturnType<typeof sql>, limit: number, skipLocked: boolean, byId = false): Promise<LoadedRow[]> {
  // Ties on due_at (a batch enrolled at once with a zero delay) are broken by id, so a batch is the
  // same rows in the same order on every run (a simulation replays exactly from its seed).
  const order = byId ? sql`e.id` : sql`e.due_at, e.id`;
  const r = await sql<LoadedRow>`
    select e.*, ${calendarColumns}, l.email_norm, s.version as sequence_version
    from enrollment e join lead l on l.id = e.lead_id join sequence s on s.id = e.sequence_id
    where ${where}
    order by ${order}
    limit ${limit}
    for update of e ${skipLocked ? sql`skip locked` : sql``}`.execute(tx);
  return r.rows;
}

/** The update of a batch of enrollments' new states (none when nothing changed). */
function statesUpdate(rows: Array<{ next: Enrollment; version: number }>, now: number): RawBuilder<unknown>[] {
  if (rows.length === 0) return [];
  const c = <T>(f: (e: Enrollment) => T) => rows.map((r) => f(r.next));
  const ts = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return [sql`
    update enrollment e set
      state = u.state, state_reason = u.state_reason, waiting_for = u.waiting_for,
      next_step_id = u.next_step_id, last_step_id = u.last_step_id, last_step_at = u.last_step_at,
      done_step_ids = u.done_step_ids::uuid[], due_at = u.due_at, paused_due_at = u.paused_due_at,
      soft_bounces = u.soft_bounces, branch_choices = u.branch_choices, version = u.version, updated_at = ${new Date(now)}
    from unnest(${c((e) => e.id)}::uuid[], ${c((e) => e.state)}::text[], ${c((e) => e.stateReason)}::text[], ${c((e) => e.waitingFor)}::text[],
                ${c((e) => e.nextStepId)}::uuid[], ${c((e) => e.lastStepId)}::uuid[], ${c((e) => ts(e.lastStepAt))}::timestamptz[],
                ${c((e) => `{${e.doneStepIds.join(',')}}`)}::text[], ${c((e) => ts(e.dueAt))}::timestamptz[], ${c((e) => ts(e.pausedDueAt))}::timestamptz[],
                ${c((e) => e.softBounces)}::int[], ${c((e) => JSON.stringify(e.branchChoices ?? {}))}::jsonb[], ${rows.map((r) => r.version)}::int[])
      as u(id, state, state_reason, waiting_for, next_step_id, last_step_id, last_step_at, done_step_ids, due_at, paused_due_at, soft_bounces, branch_choices, version)
    where e.id = u.id`];
}

/** The journal entries of every transition, applied or ignored (with why). */
function journalInsert(done: Array<{ before: Enrollment; event: EngineEvent; result: TransitionResult; passedFrom: string | null }>, now: number): RawBuilder<unknown> {
  const payloads = done.map(({ before, event, result, passedFrom }) =>
    JSON.stringify({
      event,
      ...(passedFrom ? { addressedTo: passedFrom } : {}),
      from: before.state,
      to: result.next.state,
      ...(result.next.nextStepId ? { nextStepId: result.next.nextStepId } : {}),
      ...(result.next.dueAt !== null ? { dueAt: new Date(result.next.dueAt).toISOString() } : {}),
      effects: result.effects.map((f) => f.type),
      ...(result.note ? { note: result.note } : {}),
    }),
  );
  return sql`
    insert into event (workspace_id, enrollment_id, type, payload, at)
    select u.ws, u.e, u.type, u.payload, ${new Date(now)}
    from unnest(${done.map((d) => d.before.workspaceId)}::uuid[], ${done.map((d) => d.before.id)}::uuid[],
                ${done.map((d) => (d.result.outcome === 'applied' ? d.event.type : `${d.event.type}.ignored`))}::text[], ${payloads}::jsonb[])
      as u(ws, e, type, payload)`;
}
