import type { Clock, TimerHandle } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { BackoffSchedule, type BackoffPolicy } from '../../common/backoff.ts';
import type { MailboxSync, PullOptions, SyncBatch, SyncCursor, WatchHandle } from '../../mailbox/sync/source.ts';
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
 * Two kinds of pull. A push from the watch asks only for what the watch covers: when the watch
 * offers it (`WatchHandle.pull`, IMAP IDLE), that pull runs on the watch's own connection, without
 * the connect gate (it opens nothing), so a reply is fetched without a connect, a LOGIN and a
 * server process of its own. Everything else is a full pull (every folder, a new connection,
 * through the gate): the first, the reconciliation, a poke from outside (a sender's last look
 * found mail, possibly in Junk; a relayed Gmail or Graph notification), the one after a failure.
 * If the pull on the watch's connection fails, the watch has failed with it: the push's pull is
 * made at once the full way, and the watch is reconnected after the backoff like any failed watch.
 *
 * Stop: no new pull; a batch in flight is ingested and committed first (the pull's network
 * operations are aborted, the batch already in hand is not), then the connector is closed.
 */
export class MailboxLoop {
  private dirty = true;
  /** The next pull was asked for by a push: it passes reconnects and first syncs at the gate. */
  private urgent = false;
  /** The next pull must be a full one (see the class comment): only the watch's own pushes leave it false. */
  private full = true;
  private stopping = false;
  private wake: (() => void) | null = null;
  private onStop: (() => void) | null = null;
  private watch: WatchHandle | null = null;
  private watchError: unknown = null;
  /**
   * The cursor this loop last committed, which is what the store holds: only the lease holder
   * writes it, and a commit under a lost lease is refused (the loop ends). Undefined: read it from
   * the store: the first pull, after a commit that failed (it may or may not have landed), and
   * after any failure the loop backs off from. A pull asked for by a push then waits for no read
   * of its own in the database's queue.
   */
  private cursor: SyncCursor | null | undefined = undefined;
  private readonly abort = new AbortController();
  /** Why the loop ended: 'stopped', or 'fenced' when the lease moved to another owner. */
  ended: 'stopped' | 'fenced' | null = null;

  constructor(private readonly o: MailboxLoopOptions) {}

  /** A push from outside the watch (a last look, the push bus): something may have arrived, in any folder. */
  poke(): void {
    this.full = true;
    this.pushed();
  }

  /** The watch's push: something arrived in a folder it watches. */
  private pushed(): void {
    this.dirty = true;
    this.urgent = true;
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
    // Known to the gate for as long as it runs: while another workspace is, neither takes every place.
    const unregister = this.o.gate?.register(this.o.mailbox.workspaceId);
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
                () => this.pushed(),
                (e) => {
                  this.watchError = e ?? new Error('watch failed');
                  this.wake?.();
                },
              ),
            );
          }
          if (this.dirty || this.o.clock.now() >= nextReconcile) {
            const onWatch = this.watch?.pull && !this.full && this.o.clock.now() < nextReconcile ? this.watch : null;
            this.dirty = false;
            this.full = false;
            const urgent = this.urgent;
            this.urgent = false;
            const pulledOnWatch = onWatch ? await this.pullOnWatch(onWatch) : false;
            if (!pulledOnWatch) {
              await this.gated(() => this.pullFull(), urgent);
              nextReconcile = this.o.clock.now() + this.o.reconcileMs;
            }
            // After a fallback the watch's failure is still to be waited out: the backoff stays.
            if (onWatch && !pulledOnWatch) continue;
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
          this.cursor = undefined;
          await this.failed(e);
          // Pushes do not cut a backoff short (a flapping watch would reconnect at once); stop does.
          await this.pause(backoff.next());
          // The watch may have missed a push while it was down: pull everything once it is back.
          this.dirty = true;
          this.full = true;
        }
      }
      this.ended = 'stopped';
    } finally {
      unregister?.();
      await this.closeWatch();
      await this.o.connector.close().catch(() => undefined);
    }
  }

  private gated<T>(fn: () => Promise<T>, urgent = false): Promise<T> {
    return this.o.gate ? this.o.gate.run(fn, { urgent, key: this.o.mailbox.workspaceId }) : fn();
  }

  /**
   * One pull, pipelined: while a batch's transaction runs, the next batches are fetched and their
   * CPU stages run in the prepare pool (up to PREPARE_AHEAD messages' worth of batches, at least
   * one), so the database and the parser work at the same time. Commits stay in the connector's
   * order, one at a time, each with its own cursor (promise 5); a batch prepared ahead and not
   * committed (stop, a lost lease, a failed commit) is simply pulled again from the stored cursor.
   * The connector's errors come out as SourceFailure, so that the caller can tell them apart.
   */
  private async pullOnce(source: (cursor: SyncCursor | null, options: PullOptions) => AsyncIterable<SyncBatch> = (c, o) => this.o.connector.pull(c, o)): Promise<void> {
    const { ingest, mailbox } = this.o;
    const cursor = this.cursor !== undefined ? this.cursor : await loadCursor(ingest.store.db, mailbox.id);
    this.cursor = cursor;
    const batches = source(cursor, {
      signal: this.abort.signal,
      ...(this.o.batchSize ? { batchSize: this.o.batchSize } : {}),
      ...(this.o.resyncWindowMs ? { resyncWindowMs: this.o.resyncWindowMs } : {}),
    })[Symbol.asyncIterator]();
    const depth = Math.max(1, Math.floor(PREPARE_AHEAD / (this.o.batchSize ?? PREPARE_AHEAD)));
    const ahead: Array<Promise<PreparedBatch | null>> = [];
    let exhausted = false;
    const fill = () => {
      while (!exhausted && ahead.length < depth) {
        // The generator answers its next() calls in order: the k-th promise holds the k-th batch.
        const next = batches.next().then(
          (n) => n,
          (e: unknown) => {
            throw new SourceFailure(e);
          },
        ).then((n) => {
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
        this.cursor = undefined;
        const report = await commitBatch(ingest, mailbox, current, { ...(this.o.fence ? { fence: this.o.fence } : {}), countResync });
        this.cursor = current.batch.cursor;
        this.o.onBatch?.(report);
        if (this.stopping) return;
      }
    } finally {
      // Ends the connector's pull once its fetches in flight settle (stop aborts them); batches
      // being prepared ahead are left to finish in the pool and dropped.
      await batches.return?.().catch(() => undefined);
    }
  }

  /** Every folder, on a new connection; errors as the connector threw them. */
  private async pullFull(): Promise<void> {
    try {
      await this.pullOnce();
    } catch (e) {
      throw e instanceof SourceFailure ? e.cause : e;
    }
  }

  /**
   * The pull a watch push asked for, on the watch's connection. False when that connection failed
   * before the pull was done: the watch has failed with it (its error is kept for the loop, which
   * reconnects after the backoff) and the caller makes the pull the full way now, so the push is
   * not kept waiting for the backoff. Any other failure (a commit, a lost lease) is thrown as from
   * a full pull.
   */
  private async pullOnWatch(watch: WatchHandle): Promise<boolean> {
    try {
      await this.pullOnce((cursor, options) => watch.pull!(cursor, options));
      return true;
    } catch (e) {
      if (!(e instanceof SourceFailure) || this.stopping) throw e instanceof SourceFailure ? e.cause : e;
      this.o.log?.info({ mailboxId: this.o.mailbox.id, err: e.cause instanceof Error ? e.cause.message : String(e.cause) }, 'pull on the watch connection failed; pulling on a new connection');
      this.watchError ??= e.cause ?? new Error('watch failed');
      await this.closeWatch();
      return false;
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

/** An error of the connector's pull (fetching), as opposed to the pipeline's (preparing, committing). */
class SourceFailure extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
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
