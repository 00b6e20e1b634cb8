/**
 * The dispatcher loop: every `everyMs` it finds the mailboxes whose queue needs a plan and plans
 * them (plan.ts). A mailbox needs one when
 *   - a request of its queue is new (send_at and planned_at null: the engine just queued it, a
 *     claim refused it, a release or a resume cleared it), or its slot is older than its due time
 *     (a retry or a revival moved the due time: the old slot is stale);
 *   - or its mailbox_plan.replan_at has passed (once a day, after its local midnight).
 * Any number of dispatchers may run: plans of one workspace are serialized by an advisory lock.
 */
import { sql } from 'kysely';
import type { Clock, TimerHandle } from '../../common/clock.ts';
import { coalesce } from '../../common/coalesce.ts';
import type { Logger } from '../../common/logger.ts';
import type { Store } from '../../store/store.ts';
import { planMailboxes, type PlanOptions, type PlanReport } from './plan.ts';
import { type Conn, toPlanSql } from './sql.ts';

/** Mailboxes whose queue needs (re)planning now, at most `limit`. */
export async function mailboxesToPlan(db: Conn, now: number, limit = 10_000): Promise<string[]> {
  return (await toPlanSql(now, limit).execute(db)).rows.map((r) => r.mailbox_id);
}

// -- name: next-send
const nextSendSql = (mailboxId: string) => sql<{ at: Date | null }>`
  select min(send_at) as at from send_request
  where mailbox_id = ${mailboxId} and state = 'queued' and send_at is not null and send_at >= due_at`;

/** The mailbox's next planned send instant (for its sender to sleep until), or null. */
export async function nextSendAt(db: Conn, mailboxId: string): Promise<number | null> {
  const r = (await nextSendSql(mailboxId).execute(db)).rows[0];
  return r?.at ? new Date(r.at).getTime() : null;
}

export interface DispatcherOptions extends PlanOptions {
  store: Store;
  clock: Clock;
  log?: Logger;
  /** Pause between passes. Default 30 s (a new request waits at most this long for its slot; its slot is minutes away anyway). */
  everyMs?: number;
  /** Mailboxes planned per pass at most. Default 10,000. */
  maxMailboxes?: number;
  /** After a pass that wrote slots: the mailboxes it planned (their senders may have a send due sooner). */
  onPlanned?: (mailboxIds: string[]) => void;
}

export class Dispatcher {
  private timer: TimerHandle | undefined;
  private running = false;
  private chain: Promise<unknown> = Promise.resolve();
  readonly stats = { passes: 0, mailboxes: 0, planned: 0, unplaced: 0 };
  private readonly nudged: () => Promise<void>;

  constructor(private readonly opts: DispatcherOptions) {
    this.nudged = coalesce(async () => {
      if (this.running) await this.runOnce();
    });
  }

  /**
   * Requests were queued now (the scheduler fired steps): plan them without waiting for the next
   * pass. The pass is the periodic one, so pacing decides the slot. Coalesced: one nudged pass in
   * flight plus one queued, however many nudges come.
   */
  nudge(): Promise<void> {
    return this.running ? this.nudged() : Promise.resolve();
  }

  /** One pass now: plans every mailbox that needs it. */
  runOnce(): Promise<PlanReport> {
    const run = this.chain.then(() => this.pass());
    this.chain = run.catch((e) => this.opts.log?.error({ err: e }, 'dispatch pass failed'));
    return run;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.tick();
  }

  /** Stops the loop; waits for a pass in progress to commit. */
  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    await this.chain.catch(() => undefined);
  }

  private async tick(): Promise<void> {
    await this.runOnce().catch(() => undefined);
    if (!this.running) return;
    this.timer = this.opts.clock.setTimer(this.opts.everyMs ?? 30_000, () => void this.tick());
  }

  private async pass(): Promise<PlanReport> {
    const now = this.opts.clock.now();
    const ids = await mailboxesToPlan(this.opts.store.db, now, this.opts.maxMailboxes ?? 10_000);
    const deps = { store: this.opts.store, clock: this.opts.clock, ...(this.opts.log ? { log: this.opts.log } : {}) };
    const report = await planMailboxes(deps, ids, this.opts);
    this.stats.passes++;
    this.stats.mailboxes += report.mailboxes;
    this.stats.planned += report.planned;
    this.stats.unplaced += report.unplaced;
    for (const e of report.errors) this.opts.log?.warn({ mailboxId: e.mailboxId }, `dispatch: ${e.message}`);
    if (report.written > 0) this.opts.onPlanned?.(ids);
    return report;
  }
}
