import type { Clock, TimerHandle } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { BackoffSchedule, type BackoffPolicy } from '../../common/backoff.ts';
import type { MailboxSync, WatchHandle } from '../../mailbox/sync/source.ts';
import type { Metrics } from '../../ops/metrics.ts';
import type { MailboxConnector } from '../../mailbox/connectors/connector.ts';
import { commitBatch, prepareBatch, type Fence, type IngestDeps, type IngestReport, type MailboxRef, type PreparedBatch, type WarmupFolders } from '../pipeline.ts';
import { clearSyncError, loadCursor, recordSyncError } from '../store.ts';
import type { Gate } from './gate.ts';

/**
 * How many messages a loop prepares ahead of the batch committing, in whole batches (at least one):
 * enough that one-message batches (IDLE arrivals) keep the prepare pool busy, no more than one
 * batch of 100 so that memory stays at two batches a mailbox.
 */
export const PREPARE_AHEAD = 100;

export interface MailboxLoopOptions {
  ingest: IngestDeps;
  mailbox: MailboxRef & { provider: string };
  connector: MailboxSync;
  /** The sync lease: every batch's transaction checks it (the pool always passes one). */
  fence?: Fence;
  clock: Clock;
  random: Random;
  /** The pull behind every push: even with a healthy watch, a pull this often (default 15 min). */
  reconcileMs: number;
  batchSize?: number;
  resyncWindowMs?: number;
  backoff?: BackoffPolicy;
  metrics?: Metrics;
  log?: Logger;
  onBatch?: (report: IngestReport) => void;
  /** Bounds the connections the pool's loops open at once (watch setup and pulls). */
  gate?: Gate;
}

/**
 * One owned mailbox: pull from the stored cursor; watch for push, where a push only marks the
 * mailbox dirty and wakes the loop (a burst of pushes during a pull coalesces into one more pull);
 * a reconciliation pull every `reconcileMs` whatever the push says; after any failure (the pull,
 * or the watch reporting `failed`) the connections are dropped and the loop waits the jittered
 * backoff before it watches and pulls again (a reconnect may have missed a push, so it pulls).
 *
 * Every wait is "signal or timeout" (STYLE habit 5): a wait ends on a push, on stop, or at its
 * deadline, whichever comes first.
 *
 * Stop: no new pull; a batch in flight is ingested and committed first (the pull's network
 * operations are aborted, the batch already in hand is not), then the connector is closed.
 */
export class MailboxLoop {
  private dirty = true;
  /** The next pull was asked for by a push: it passes reconnects and first syncs at the gate. */
  private pushed = false;
  private stopping = false;
  private wake: (() => void) | null = null;
  private onStop: (() => void) | null = null;
  private watch: WatchHandle | null = null;
  private watchError: unknown = null;
  private readonly abort = new AbortController();
  /** Why the loop ended: 'stopped', or 'fenced' when the lease moved to another owner. */
  ended: 'stopped' | 'fenced' | null = null;

  constructor(private readonly o: MailboxLoopOptions) {}

  /** A push: something may have arrived. */
  poke(): void {
    this.dirty = true;
    this.pushed = true;
    this.wake?.();
  }

  stop(): void {
    this.stopping = true;
    this.abort.abort();
    this.wake?.();
    this.onStop?.();
  }

  async run(): Promise<void> {
    const backoff = new BackoffSchedule(this.o.random, this.o.backoff);
    let nextReconcile = 0;
    try {
      while (!this.stopping) {
        try {
          if (this.watchError !== null) {
            const e = this.watchError;
            this.watchError = null;
            throw e;
          }
          if (!this.watch && this.o.connector.watch) {
            const watch = this.o.connector.watch.bind(this.o.connector);
            this.watch = await this.gated(() =>
              watch(
                () => this.poke(),
                (e) => {
                  this.watchError = e ?? new Error('watch failed');
                  this.wake?.();
                },
              ),
            );
          }
          if (this.dirty || this.o.clock.now() >= nextReconcile) {
            this.dirty = false;
            const urgent = this.pushed;
            this.pushed = false;
            await this.gated(() => this.pullOnce(), urgent);
            nextReconcile = this.o.clock.now() + this.o.reconcileMs;
            if (backoff.failures > 0) await clearSyncError(this.o.ingest.store.db, this.o.mailbox.id);
            backoff.reset();
          }
          await this.waitUntil(nextReconcile);
        } catch (e) {
          if (isCadenzaError(e, 'CONFLICT') && (e.details as { fenced?: boolean }).fenced) {
            this.ended = 'fenced';
            this.o.log?.warn({ mailboxId: this.o.mailbox.id }, 'sync lease moved to another owner; this loop ends');
            return;
          }
          if (this.stopping) break;
          await this.failed(e);
          // Pushes do not cut a backoff short (a flapping watch would reconnect at once); stop does.
          await this.pause(backoff.next());
          // The watch may have missed a push while it was down: pull once it is back.
          this.dirty = true;
        }
      }
      this.ended = 'stopped';
    } finally {
      await this.closeWatch();
      await this.o.connector.close().catch(() => undefined);
    }
  }

  private gated<T>(fn: () => Promise<T>, urgent = false): Promise<T> {
    return this.o.gate ? this.o.gate.run(fn, urgent) : fn();
  }

  /**
   * One pull, pipelined: while a batch's transaction runs, the next batches are fetched and their
   * CPU stages run in the prepare pool (up to PREPARE_AHEAD messages' worth of batches, at least
   * one), so the database and the parser work at the same time. Commits stay in the connector's
   * order, one at a time, each with its own cursor (promise 5); a batch prepared ahead and not
   * committed (stop, a lost lease, a failed commit) is simply pulled again from the stored cursor.
   */
  private async pullOnce(): Promise<void> {
    const { ingest, mailbox } = this.o;
    const cursor = await loadCursor(ingest.store.db, mailbox.id);
    const batches = this.o.connector
      .pull(cursor, {
        signal: this.abort.signal,
        ...(this.o.batchSize ? { batchSize: this.o.batchSize } : {}),
        ...(this.o.resyncWindowMs ? { resyncWindowMs: this.o.resyncWindowMs } : {}),
      })
      [Symbol.asyncIterator]();
    const depth = Math.max(1, Math.floor(PREPARE_AHEAD / (this.o.batchSize ?? PREPARE_AHEAD)));
    const ahead: Array<Promise<PreparedBatch | null>> = [];
    let exhausted = false;
    const fill = () => {
      while (!exhausted && ahead.length < depth) {
        // The generator answers its next() calls in order: the k-th promise holds the k-th batch.
        const next = batches.next().then((n) => {
          if (n.done) {
            exhausted = true;
            return null;
          }
          return prepareBatch(ingest, mailbox, n.value, { folders: foldersOf(this.o.connector) });
        });
        // Settled either way when the loop leaves early; the reason is the commit's, not this one's.
        next.catch(() => undefined);
        ahead.push(next);
      }
    };
    let resyncCounted = false;
    try {
      fill();
      for (;;) {
        const current = await ahead.shift()!;
        if (!current) return;
        fill();
        const countResync: boolean = current.batch.mode === 'resync' && !resyncCounted;
        resyncCounted ||= countResync;
        const report = await commitBatch(ingest, mailbox, current, { ...(this.o.fence ? { fence: this.o.fence } : {}), countResync });
        this.o.onBatch?.(report);
        if (this.stopping) return;
      }
    } finally {
      // Ends the connector's pull once its fetches in flight settle (stop aborts them); batches
      // being prepared ahead are left to finish in the pool and dropped.
      await batches.return?.().catch(() => undefined);
    }
  }

  private async failed(e: unknown): Promise<void> {
    const message = e instanceof Error ? e.message : String(e);
    this.o.metrics?.syncErrors.inc({ provider: this.o.mailbox.provider });
    this.o.log?.warn({ mailboxId: this.o.mailbox.id, err: message }, 'mailbox sync failed; reconnecting after backoff');
    await this.closeWatch();
    await recordSyncError(this.o.ingest.store.db, this.o.mailbox.id, message, this.o.clock.now()).catch(() => undefined);
  }

  private async closeWatch(): Promise<void> {
    const w = this.watch;
    this.watch = null;
    await w?.close().catch(() => undefined);
  }

  /** `ms` of backoff, cut short only by stop. */
  private pause(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.o.clock.setTimer(ms, () => {
        this.onStop = null;
        resolve();
      });
      this.onStop = () => {
        timer.cancel();
        resolve();
      };
    });
  }

  /** Until a push, stop, a watch failure, or `at`. */
  private waitUntil(at: number): Promise<void> {
    if (this.dirty || this.stopping || this.watchError !== null) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = () => {
        timer?.cancel();
        this.wake = null;
        resolve();
      };
      this.wake = done;
      timer = this.o.clock.setTimer(Math.max(0, at - this.o.clock.now()), done);
    });
  }
}

/**
 * The connector's folder actions for the warmup receiving side, when it has them: the pools build
 * a whole MailboxConnector (registry.ts) whose `lacks('folders')` says whether they work with this
 * mailbox's settings; a bare sync part (tests, emulators) has none.
 */
export function foldersOf(connector: MailboxSync): WarmupFolders | null {
  const c = connector as Partial<MailboxConnector>;
  return typeof c.lacks === 'function' && c.lacks('folders') === null && c.moveToInbox && c.flag && c.markRead ? (c as WarmupFolders) : null;
}
