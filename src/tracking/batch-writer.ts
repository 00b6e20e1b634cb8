import type { Clock, TimerHandle } from '../common/clock.ts';

/**
 * An in-process write-behind buffer: items are queued in memory and written in batches, when
 * `maxBatch` are waiting or `flushMs` after the first one arrived, whichever comes first, and
 * everything left on close. One batch is written at a time, in arrival order, so the database sees a
 * steady trickle of multi-row inserts instead of one insert per HTTP request.
 *
 * It is for facts whose loss is tolerable but unwelcome (opens, clicks): `add` never waits for the
 * database, so a slow or absent database never slows the requests that produce them. What that
 * costs, and how it is bounded:
 *   - Overflow: at most `maxQueue` items wait. Past that, new items are dropped (counted in
 *     stats().dropped, reported to onDrop), not old ones: the queued ones are already in order and
 *     partly in flight, and memory stays bounded whatever the request rate.
 *   - Failure: a batch that fails is put back at the head and retried after a backoff (retryMs,
 *     doubling), up to maxAttempts; then it is dropped (stats().failed, onError). A database outage
 *     shorter than the backoff sum loses nothing; a row that can never be written cannot wedge the
 *     queue forever.
 *   - Crash: what is queued and not yet written is lost. Anything that must survive a crash
 *     (unsubscribes) is written synchronously instead, not through this writer.
 *
 * Timers come from the injected Clock (a SimClock in tests), and every timer is cancelled on close.
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
}

export const batchDefaults = {
  // One multi-row insert of 1,000 rows costs far less than 1,000 inserts, and a second is as stale
  // as an open or click count needs to be.
  maxBatch: 1_000,
  flushMs: 1_000,
  maxQueue: 100_000,
  maxAttempts: 5,
  retryMs: 1_000,
};

export class BatchWriter<T> {
  private readonly o: Required<Omit<BatchWriterOptions<T>, 'onError' | 'onDrop'>> & Pick<BatchWriterOptions<T>, 'onError' | 'onDrop'>;
  private queue: T[] = [];
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  /** Consecutive failures of the batch at the head of the queue. */
  private headFailures = 0;
  private closed = false;
  private readonly s: Omit<BatchWriterStats, 'queued'> = { written: 0, dropped: 0, failed: 0, batches: 0, errors: 0 };

  constructor(opts: BatchWriterOptions<T>) {
    this.o = { ...batchDefaults, ...opts };
    for (const k of ['maxBatch', 'maxQueue', 'maxAttempts'] as const) {
      if (!Number.isSafeInteger(this.o[k]) || this.o[k] < 1) throw new RangeError(`BatchWriter ${k} must be a positive integer`);
    }
    if (!(this.o.flushMs >= 0) || !(this.o.retryMs >= 0)) throw new RangeError('BatchWriter flushMs and retryMs must be non-negative');
  }

  /** Queues one item; never waits. False when it was dropped (queue full or writer closed). */
  add(item: T): boolean {
    if (this.closed) {
      this.drop(1, 'closed');
      return false;
    }
    if (this.queue.length >= this.o.maxQueue) {
      this.drop(1, 'overflow');
      return false;
    }
    this.queue.push(item);
    if (this.queue.length >= this.o.maxBatch && this.headFailures === 0) this.kick(false);
    else this.arm();
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
      if (await this.writeOne(batch)) this.queue.splice(0, batch.length);
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

  /** Makes sure something will write what waits: a full batch now, or a timer. */
  private arm(): void {
    if (this.running || this.timer || this.queue.length === 0 || this.closed) return;
    if (this.headFailures === 0 && this.queue.length >= this.o.maxBatch) {
      this.kick(false);
      return;
    }
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
      this.queue.splice(0, batch.length);
      budget -= batch.length;
    }
  }

  /** One attempt at the head batch. True when it left the queue's head (written or given up). */
  private async writeOne(batch: T[]): Promise<boolean> {
    try {
      await this.o.write(batch);
      this.s.written += batch.length;
      this.s.batches++;
      this.headFailures = 0;
      return true;
    } catch (e) {
      this.s.errors++;
      this.headFailures++;
      const giveUp = this.headFailures >= this.o.maxAttempts;
      this.o.onError?.(e, { size: batch.length, attempt: this.headFailures, dropped: giveUp });
      if (giveUp) {
        this.s.failed += batch.length;
        this.headFailures = 0;
        return true;
      }
      return false;
    }
  }
}
