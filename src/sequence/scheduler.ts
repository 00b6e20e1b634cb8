import type { Clock, TimerHandle } from '../common/clock.ts';
import { coalesce } from '../common/coalesce.ts';
import type { Logger } from '../common/logger.ts';
import type { Store } from '../store/store.ts';
import type { EnrollmentService, TimerChange } from './enrollment-service.ts';
import { TimingWheel, type TimerId } from './timers/timing-wheel.ts';

export interface SchedulerOptions {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
  log?: Logger;
  /** How far ahead the wheel holds timers. Default 10 minutes. */
  horizonMs?: number;
  /** How often the store is re-read for timers other processes set. Default 30 s. */
  refillEveryMs?: number;
  /** Enrollments fired per transaction. Default 200. */
  batchSize?: number;
  /** Most timers loaded per refill; past it the horizon shrinks to the last one loaded. Default 200k. */
  maxLoaded?: number;
  /** Wheel tick: wake-ups are batched to this granularity. Default 250 ms. */
  tickMs?: number;
  /** After a wake-up that fired steps (they may have queued sends: the dispatcher can plan them now). */
  onFired?: (fired: number) => void;
}

export interface SchedulerStats {
  wakeups: number;
  fired: number;
  refills: number;
  loaded: number;
}

/**
 * Turns durable due times into step_due (and resume) events at the right moment.
 *
 * The due_at column is the truth. In memory, a timing wheel holds only the timers due within the
 * horizon; it is refilled from the store as time advances, after a restart, and every
 * refillEveryMs (to see timers other processes set). Timers this process sets or cancels reach the
 * wheel directly, after their transaction commits. The wheel only decides when to wake: on waking,
 * the firing itself is a claim in the database (EnrollmentService.fireDue, FOR UPDATE SKIP LOCKED
 * with the due time re-checked under the lock), so a restart or a second scheduler on the same
 * PostgreSQL never fires a step twice and never forgets one.
 */
export class Scheduler {
  private readonly horizonMs: number;
  private readonly refillEveryMs: number;
  private readonly batchSize: number;
  private readonly maxLoaded: number;
  private readonly wheel: TimingWheel<string>;
  private readonly handles = new Map<string, { id: TimerId; at: number }>();
  private loadedUntil = -Infinity;
  private nextRefillAt = -Infinity;
  private timer: TimerHandle | undefined;
  private armedAt = Infinity;
  private chain: Promise<unknown> = Promise.resolve();
  private running = false;
  private unsubscribe: (() => void) | undefined;
  private readonly nudged: () => Promise<void>;
  readonly stats: SchedulerStats = { wakeups: 0, fired: 0, refills: 0, loaded: 0 };

  constructor(private readonly opts: SchedulerOptions) {
    this.horizonMs = opts.horizonMs ?? 10 * 60_000;
    this.refillEveryMs = opts.refillEveryMs ?? 30_000;
    this.batchSize = opts.batchSize ?? 200;
    this.maxLoaded = opts.maxLoaded ?? 200_000;
    this.wheel = new TimingWheel<string>({ startMs: opts.clock.now(), tickMs: opts.tickMs ?? 250 });
    this.nudged = coalesce(async () => {
      if (!this.running) return;
      // Timers set by another process (or by a bulk insert that bypassed the service) are only in
      // the store: read it now rather than at the next refill.
      this.nextRefillAt = -Infinity;
      await this.runOnce();
    });
  }

  /**
   * Enrollments were created or made due by someone else (the API, another process): refill and
   * fire now. Coalesced: one nudged wake-up in flight plus one queued, however many nudges come.
   */
  nudge(): Promise<void> {
    return this.running ? this.nudged() : Promise.resolve();
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.opts.service.onTimers((c) => this.onTimers(c));
    await this.runOnce();
  }

  /** Stops waking; waits for a batch in progress to commit. In-memory timers are dropped (the store keeps them). */
  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.unsubscribe?.();
    await this.chain.catch(() => undefined);
  }

  /** One wake-up now: refill if due, fire everything due, re-arm. Returns how many fired. */
  runOnce(): Promise<number> {
    const run = this.chain.then(() => this.wake());
    this.chain = run.catch((e) => this.opts.log?.error({ err: e }, 'scheduler wake-up failed'));
    return run;
  }

  /** Settles when no wake-up is in progress (for simulations that drive the clock). */
  async idle(): Promise<void> {
    await this.chain.catch(() => undefined);
  }

  get pending(): number {
    return this.wheel.size;
  }

  private async wake(): Promise<number> {
    this.stats.wakeups++;
    const now = this.opts.clock.now();
    if (now >= this.nextRefillAt || now >= this.loadedUntil - this.horizonMs / 2) await this.refill(now);
    for (const key of this.wheel.advance(now)) this.handles.delete(key);
    let fired = 0;
    // Fire whatever the store says is due, not only what the wheel held: that covers timers set by
    // other processes since the last refill and anything overdue after a restart.
    for (;;) {
      const batch = await this.opts.service.fireDue(this.batchSize);
      fired += batch.length;
      if (batch.length < this.batchSize) break;
    }
    this.stats.fired += fired;
    this.arm();
    if (fired > 0) this.opts.onFired?.(fired);
    return fired;
  }

  private async refill(now: number): Promise<void> {
    this.stats.refills++;
    const until = now + this.horizonMs;
    const rows = await this.opts.store.db
      .selectFrom('enrollment')
      .select(['id', 'due_at'])
      .where('due_at', 'is not', null)
      .where('due_at', '<', new Date(until))
      .where('state', 'in', ['active', 'paused'])
      .orderBy('due_at')
      .limit(this.maxLoaded)
      .execute();
    for (const r of rows) this.place(r.id, r.due_at!.getTime());
    this.loadedUntil = rows.length === this.maxLoaded ? rows[rows.length - 1]!.due_at!.getTime() : until;
    this.nextRefillAt = now + this.refillEveryMs;
    this.stats.loaded = this.wheel.size;
  }

  private onTimers(changes: TimerChange[]): void {
    for (const c of changes) {
      if (c.dueAt === null) {
        const h = this.handles.get(c.enrollmentId);
        if (h !== undefined) this.wheel.cancel(h.id);
        this.handles.delete(c.enrollmentId);
      } else if (c.dueAt < this.loadedUntil) {
        this.place(c.enrollmentId, c.dueAt);
      } else {
        // Beyond the horizon: a later refill loads it.
        const h = this.handles.get(c.enrollmentId);
        if (h !== undefined) this.wheel.cancel(h.id);
        this.handles.delete(c.enrollmentId);
      }
    }
    if (this.running) this.arm();
  }

  /** Puts a timer in the wheel; a refill that finds it already there at the same time changes nothing. */
  private place(enrollmentId: string, dueAt: number): void {
    const old = this.handles.get(enrollmentId);
    if (old !== undefined) {
      if (old.at === dueAt) return;
      this.wheel.cancel(old.id);
    }
    this.handles.set(enrollmentId, { id: this.wheel.insert(dueAt, enrollmentId), at: dueAt });
  }

  /** One real timer, for the earlier of the wheel's next deadline and the next refill. */
  private arm(): void {
    if (!this.running) return;
    const at = Math.min(this.wheel.nextDeadline() ?? Infinity, this.nextRefillAt);
    if (this.timer && at >= this.armedAt) return;
    this.timer?.cancel();
    this.armedAt = at;
    this.timer = this.opts.clock.setTimer(Math.max(0, at - this.opts.clock.now()), () => {
      this.timer = undefined;
      this.armedAt = Infinity;
      void this.runOnce();
    });
  }
}
