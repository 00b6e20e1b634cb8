import type { Clock, TimerHandle } from '../common/clock.ts';

/**
 * An in-process batch writer: items are queued in memory and written in batches, one batch at a
 * time, in arrival order, so the database sees multi-row inserts instead of one insert per HTTP
 * request. Two ways in:
 *
 *   - add(item): write-behind. Never waits; the item goes with the next batch, written when
 *     `maxBatch` are waiting or `flushMs` after the first one arrived, and everything left on close.
 *     Queued and not yet written when the process dies, it is lost.
 *   - addAndWait(item): group commit. Resolves 'written' once the batch holding the item has
 *     committed. A waiting item does not wait for flushMs: a batch starts on the next turn of the
 *     event loop, or as soon as the batch being written finishes, and takes everything that arrived
 *     meanwhile, so concurrent requests share one transaction (the busier, the bigger the batches)
 *     and an idle server writes a lone item at once. Bounded, so that a slow or absent database
 *     never holds a request for long: it resolves 'pending' when its first attempt failed, when
 *     the write takes longer than `waitMs`, or at once while the writer is backing off after a
 *     failure; the item then stays queued and is retried like add()'s. 'dropped' when refused.
 *
 * The tracking routes answer after addAndWait (recorder.ts): an answered open or click is in the
 * database, unless the database was failing or slower than waitMs at that moment.
 *
 * What queueing costs, and how it is bounded:
 *   - Overflow: at most `maxQueue` items wait. Past that, new items are dropped (counted in
 *     stats().dropped, reported to onDrop), not old ones: the queued ones are already in order and
 *     partly in flight, and memory stays bounded whatever the request rate.
 *   - Failure: a batch that fails is put back at the head and retried after a backoff (retryMs,
 *     doubling), up to maxAttempts; then it is dropped (stats().failed, onError). A database outage
 *     shorter than the backoff sum loses nothing; a row that can never be written cannot wedge the
 *     queue forever.
 *   - Crash: what is queued and not yet written is lost: with addAndWait, only items whose request
 *     was not answered yet, or was answered 'pending'. Anything that must survive a crash
 *     whatever the database's state (unsubscribes) is written synchronously instead, not here.
 *
 * Timers come from the injected Clock (a SimClock in tests), and every timer is cancelled on close;
 * "the next turn" is setImmediate, a phase of the event loop, not a timer.
 */
export interface BatchWriterOptions<T> {
  clock: Clock;
  /** Writes one batch; throws to have it retried. */
  write(batch: T[]): Promise<void>;
  /** Flush as soon as this many items wait (N). */
  maxBatch?: number;
  /** Flush at most this long after the first unflushed item arrived (T, milliseconds). */
  flushMs?: number;
  /** The most items that may wait; further ones are dropped. */
  maxQueue?: number;
  /** Tries per batch before it is dropped. */
  maxAttempts?: number;
  /** Delay before the first retry; doubles with each further failure. */
  retryMs?: number;
  /** The longest addAndWait waits for its batch to commit before it resolves 'pending'. */
  waitMs?: number;
  onError?(error: unknown, info: { size: number; attempt: number; dropped: boolean }): void;
  onDrop?(count: number, why: 'overflow' | 'closed'): void;
}

export interface BatchWriterStats {
  /** Items waiting (not yet written). */
  queued: number;
  /** Items written. */
  written: number;
  /** Items refused by add(): queue full, or the writer closed. */
  dropped: number;
  /** Items given up after maxAttempts failed writes. */
  failed: number;
  /** Batches written. */
  batches: number;
  /** Failed write attempts (each later retried or dropped). */
  errors: number;
  /** addAndWait calls resolved 'pending' (answered before their item was written). */
  unconfirmed: number;
}

/** How an addAndWait ended: committed, still queued (see the class comment), or refused. */
export type WaitOutcome = 'written' | 'pending' | 'dropped';
type Waiter = (outcome: WaitOutcome) => void;

export const batchDefaults = {
  // One multi-row insert of 1,000 rows costs far less than 1,000 inserts, and a second is as stale
  // as an open or click count needs to be.
  maxBatch: 1_000,
  flushMs: 1_000,
  maxQueue: 100_000,
  maxAttempts: 5,
  retryMs: 1_000,
  // Far above a healthy batch's commit (milliseconds), far below a browser's patience.
  waitMs: 2_000,
};

export class BatchWriter<T> {
  private readonly o: Required<Omit<BatchWriterOptions<T>, 'onError' | 'onDrop'>> & Pick<BatchWriterOptions<T>, 'onError' | 'onDrop'>;
  private queue: T[] = [];
  /** Parallel to queue: the addAndWait resolver of each item still waiting, else null. */
  private waiters: Array<Waiter | null> = [];
  /** Resolvers in waiters (not yet resolved). */
  private waiting = 0;
  /** A group-commit batch is scheduled for the next turn of the event loop. */
  private soon = false;
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  /** Consecutive failures of the batch at the head of the queue. */
  private headFailures = 0;
  private closed = false;
  private readonly s: Omit<BatchWriterStats, 'queued'> = { written: 0, dropped: 0, failed: 0, batches: 0, errors: 0, unconfirmed: 0 };

  constructor(opts: BatchWriterOptions<T>) {
    this.o = { ...batchDefaults, ...opts };
    for (const k of ['maxBatch', 'maxQueue', 'maxAttempts'] as const) {
      if (!Number.isSafeInteger(this.o[k]) || this.o[k] < 1) throw new RangeError(`BatchWriter ${k} must be a positive integer`);
    }
    if (!(this.o.flushMs >= 0) || !(this.o.retryMs >= 0) || !(this.o.waitMs >= 0)) throw new RangeError('BatchWriter flushMs, retryMs and waitMs must be non-negative');
  }

  /** Queues one item; never waits. False when it was dropped (queue full or writer closed). */
  add(item: T): boolean {
    if (!this.accept()) return false;
    this.queue.push(item);
    this.waiters.push(null);
    if (this.queue.length >= this.o.maxBatch && this.headFailures === 0) this.kick(false);
    else this.arm();
    return true;
  }

  /** Queues one item and resolves when its batch has committed, or 'pending' / 'dropped' (see the class comment). */
  addAndWait(item: T): Promise<WaitOutcome> {
    if (!this.accept()) return Promise.resolve('dropped');
    this.queue.push(item);
    if (this.headFailures > 0) {
      // Backing off after a failure: answer now, and let the item wait for the retry.
      this.waiters.push(null);
      this.s.unconfirmed++;
      this.arm();
      return Promise.resolve('pending');
    }
    return new Promise<WaitOutcome>((resolve) => {
      this.waiters.push(resolve);
      this.waiting++;
      this.arm();
    });
  }

  private accept(): boolean {
    if (this.closed) {
      this.drop(1, 'closed');
      return false;
    }
    if (this.queue.length >= this.o.maxQueue) {
      this.drop(1, 'overflow');
      return false;
    }
    return true;
  }

  /** Resolves when no write is in progress (a batch started by size or by the timer has finished). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Writes everything queued now (retries included, as their timers allow) and resolves when done trying. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    if (this.queue.length === 0) return;
    this.kick(true);
    while (this.running) await this.running;
  }

  /**
   * Stops accepting items and writes what is queued. A batch that fails is retried at once, without
   * the backoff (a stopping process cannot wait minutes), and dropped after maxAttempts.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelTimer();
    while (this.running) await this.running;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.o.maxBatch);
      if (await this.writeOne(batch)) this.shift(batch.length);
    }
  }

  stats(): BatchWriterStats {
    return { queued: this.queue.length, ...this.s };
  }

  private drop(count: number, why: 'overflow' | 'closed'): void {
    this.s.dropped += count;
    this.o.onDrop?.(count, why);
  }

  /** Starts a pump unless one runs: `all` drains what is queued now, else only full batches. */
  private kick(all: boolean): void {
    if (this.running) return;
    this.cancelTimer();
    this.running = this.pump(all).finally(() => {
      this.running = null;
      if (!this.closed) this.arm();
    });
  }

  /** Makes sure something will write what waits: a full batch now, a group commit next turn, or a timer. */
  private arm(): void {
    if (this.running || this.queue.length === 0 || this.closed) return;
    if (this.headFailures === 0 && this.queue.length >= this.o.maxBatch) {
      this.kick(false);
      return;
    }
    if (this.headFailures === 0 && this.waiting > 0) {
      // Group commit: what arrives before the next turn goes in the same batch.
      if (!this.soon) {
        this.soon = true;
        setImmediate(() => {
          this.soon = false;
          if (!this.closed) this.kick(true);
        });
      }
      return;
    }
    if (this.timer) return;
    const delay = this.headFailures > 0 ? this.o.retryMs * 2 ** (this.headFailures - 1) : this.o.flushMs;
    this.timer = this.o.clock.setTimer(delay, () => {
      this.timer = null;
      this.kick(true);
    });
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private async pump(all: boolean): Promise<void> {
    // Under load new items keep arriving: `all` drains only what was there when it started, so a
    // flush() returns, and later items wait for their own batch or timer.
    let budget = all ? this.queue.length : Infinity;
    while (this.queue.length > 0 && budget > 0 && (all || this.queue.length >= this.o.maxBatch)) {
      const batch = this.queue.slice(0, this.o.maxBatch);
      if (!(await this.writeOne(batch))) return; // backoff: arm() sets the retry timer
      this.shift(batch.length);
      budget -= batch.length;
    }
  }

  /** One attempt at the head batch. True when it left the queue's head (written or given up). */
  private async writeOne(batch: T[]): Promise<boolean> {
    // Its waiters get an answer within waitMs, whatever the database does.
    let waitTimer: TimerHandle | null = null;
    if (this.waiting > 0) {
      waitTimer = this.o.clock.setTimer(this.o.waitMs, () => {
        waitTimer = null;
        this.settle(batch.length, 'pending');
      });
    }
    try {
      await this.o.write(batch);
      this.s.written += batch.length;
      this.s.batches++;
      this.headFailures = 0;
      this.settle(batch.length, 'written');
      return true;
    } catch (e) {
      this.s.errors++;
      this.headFailures++;
      const giveUp = this.headFailures >= this.o.maxAttempts;
      this.o.onError?.(e, { size: batch.length, attempt: this.headFailures, dropped: giveUp });
      this.settle(batch.length, 'pending');
      if (giveUp) {
        this.s.failed += batch.length;
        this.headFailures = 0;
        return true;
      }
      return false;
    } finally {
      waitTimer?.cancel();
    }
  }

  /** Resolves the waiters of the first `count` queued items (each once). */
  private settle(count: number, outcome: WaitOutcome): void {
    if (this.waiting === 0) return;
    const w = this.waiters;
    for (let i = 0; i < count; i++) {
      const resolve = w[i];
      if (!resolve) continue;
      w[i] = null;
      this.waiting--;
      if (outcome === 'pending') this.s.unconfirmed++;
      resolve(outcome);
    }
  }

  /** Removes the first `count` items (written or given up) from the queue. */
  private shift(count: number): void {
    this.queue.splice(0, count);
    this.waiters.splice(0, count);
  }
}
