import { hostname } from 'node:os';
import type { Clock, TimerHandle } from '../../common/clock.ts';
import { coalesce } from '../../common/coalesce.ts';
import { newId } from '../../common/ids.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { BackoffPolicy } from '../../mailbox/sync/backoff.ts';
import type { Vault } from '../../mailbox/vault.ts';
import { Leases, type Lease } from '../../ops/leases.ts';
import type { Metrics } from '../../ops/metrics.ts';
import type { EnrollmentService } from '../../sequence/enrollment-service.ts';
import type { Store } from '../../store/store.ts';
import { defaultIngestSteps } from '../pipeline-steps.ts';
import type { IngestDeps, IngestOptions, IngestReport, IngestSteps } from '../pipeline.ts';
import { recordSyncError } from '../store.ts';
import { connectors, type ConnectorFactory, type SyncMailbox } from './connectors.ts';
import { Gate } from './gate.ts';
import { MailboxLoop } from './mailbox-loop.ts';

export interface SyncPoolOptions {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
  random: Random;
  vault: Vault;
  /** Our List-Unsubscribe token key: mail to the unsubscribe mailto: is honoured exactly. */
  trackingKey?: Buffer;
  metrics?: Metrics;
  log?: Logger;
  /** This process's name in the lease table. */
  owner?: string;
  leaseTtlMs?: number;
  /** The reconciliation pull behind push (default 15 minutes). */
  reconcileMs?: number;
  /** Most mailboxes this process syncs. */
  maxMailboxes?: number;
  /** Only these mailboxes (tests and benchmarks that share a database with others). */
  mailboxIds?: string[];
  batchSize?: number;
  resyncWindowMs?: number;
  backoff?: BackoffPolicy;
  steps?: IngestSteps;
  ingestOptions?: Partial<IngestOptions>;
  /** Builds a mailbox's connector (Gmail/Graph emulators in tests; the provider registry by default). */
  connectorFor?: ConnectorFactory;
  onBatch?: (mailboxId: string, report: IngestReport) => void;
  /** Connections the loops may be opening at once (watch setup, pulls); default 32. */
  connectConcurrency?: number;
}

interface Running {
  lease: Lease;
  loop: MailboxLoop;
  done: Promise<void>;
}

/**
 * The sync role: takes leases `sync:<mailboxId>` (one owner per mailbox, fencing tokens), runs one
 * MailboxLoop per owned mailbox, renews its leases, and hands a mailbox back when its lease is
 * lost (the loop ends; its in-flight batch is refused by the fencing check in the pipeline's
 * transaction, so the new owner replays it from the stored cursor). Mailboxes are shared out by
 * count between the live owners, as the sender pool does.
 *
 * Mailboxes paused for sending are still synced: a reply to a paused mailbox's earlier mail must
 * still stop its enrollment. A removed mailbox is not (mailbox/removal.ts): its lease is deleted,
 * so its loop's next batch is refused and the next balance stops it and never takes it again.
 */
export class SyncPool {
  readonly owner: string;
  private readonly leases: Leases;
  private readonly running = new Map<string, Running>();
  private readonly ingest: IngestDeps;
  private stopped = false;
  private balanceTimer: TimerHandle | undefined;
  private balancing: Promise<void> = Promise.resolve();
  // One pass at a time (two would both take the same new mailbox), and a storm of nudges costs two.
  private readonly balancePass = coalesce(() => this.balanceOnce());
  private readonly gate: Gate;

  constructor(private readonly o: SyncPoolOptions) {
    this.owner = o.owner ?? `${hostname()}:${process.pid}:sync:${newId(o.clock.now(), o.random).slice(-8)}`;
    this.leases = new Leases(o.store, o.clock);
    this.gate = new Gate(o.connectConcurrency ?? 32);
    this.ingest = {
      store: o.store,
      service: o.service,
      clock: o.clock,
      random: o.random,
      steps: o.steps ?? defaultIngestSteps(),
      ...(o.trackingKey ? { trackingKey: o.trackingKey } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.log ? { log: o.log } : {}),
      ...(o.ingestOptions ? { options: o.ingestOptions } : {}),
    };
  }

  async start(): Promise<void> {
    await this.balance();
  }

  get mailboxes(): string[] {
    return [...this.running.keys()];
  }

  /** Pushes from outside (Gmail Pub/Sub, Graph notifications via the API): pull that mailbox now. */
  poke(mailboxId: string): boolean {
    const r = this.running.get(mailboxId);
    r?.loop.poke();
    return r !== undefined;
  }

  /**
   * Renews what it holds, drops what it lost, takes free mailboxes up to this process's share.
   * Runs every ttl/3, and at once when a mailbox was connected or resumed (a 'mailboxes' work
   * nudge): a new mailbox's replies are then read from its first minute.
   */
  balance(): Promise<void> {
    this.balancing = this.balancePass();
    return this.balancing;
  }

  private async balanceOnce(): Promise<void> {
    if (this.stopped) return;
    // A nudged pass restarts the period, so that there is one timer, not one per nudge.
    this.balanceTimer?.cancel();
    const ttl = this.o.leaseTtlMs ?? 60_000;
    try {
      for (const [id, r] of this.running) {
        const renewed = await this.leases.renew(r.lease, ttl);
        if (renewed) r.lease = renewed;
        else {
          this.o.log?.warn({ mailboxId: id }, 'lost the sync lease on a mailbox; stopping its loop');
          r.loop.stop();
        }
      }
      let q = this.o.store.db.selectFrom('mailbox').select(['id', 'workspace_id', 'email', 'provider', 'settings']).where('health', '<>', 'error').where('removed_at', 'is', null);
      if (this.o.mailboxIds) q = q.where('id', 'in', this.o.mailboxIds.length ? this.o.mailboxIds : ['00000000-0000-0000-0000-000000000000']);
      const rows = await q.orderBy('id').execute();
      const owners = await this.leases.owners('sync:');
      owners.set(this.owner, this.running.size);
      const share = Math.min(this.o.maxMailboxes ?? Infinity, Math.ceil(rows.length / Math.max(1, owners.size)));
      for (const m of rows) {
        if (this.stopped || this.running.size >= share) break;
        if (this.running.has(m.id)) continue;
        const lease = await this.leases.acquire(`sync:${m.id}`, this.owner, ttl);
        if (lease) await this.launch({ id: m.id, workspaceId: m.workspace_id, email: m.email, provider: m.provider, settings: m.settings }, lease);
      }
      this.o.metrics?.syncedMailboxes.set(this.running.size);
    } catch (e) {
      this.o.log?.error({ err: e }, 'sync balancing failed');
    }
    if (!this.stopped) this.balanceTimer = this.o.clock.setTimer(ttl / 3, () => void this.balance());
  }

  private async launch(m: SyncMailbox, lease: Lease): Promise<void> {
    let connector;
    try {
      const credential = await this.o.vault.get(m.id);
      const factory = this.o.connectorFor ?? connectors[m.provider];
      connector = factory(m, { credential, clock: this.o.clock, random: this.o.random, ...(this.o.log ? { log: this.o.log } : {}) });
    } catch (e) {
      // Not this process's to fix (no password, no IMAP settings): say so on the mailbox, keep the lease
      // until it expires so that no other process loops on it either, and retry at a later balance.
      const message = (e as Error).message;
      this.o.log?.warn({ mailboxId: m.id, err: message }, 'cannot sync this mailbox');
      this.o.metrics?.syncErrors.inc({ provider: m.provider });
      await recordSyncError(this.o.store.db, m.id, message, this.o.clock.now()).catch(() => undefined);
      return;
    }
    const loop = new MailboxLoop({
      ingest: this.ingest,
      mailbox: { id: m.id, workspaceId: m.workspaceId, provider: m.provider },
      connector,
      fence: { resource: lease.resource, token: lease.token },
      gate: this.gate,
      clock: this.o.clock,
      random: this.o.random,
      reconcileMs: this.o.reconcileMs ?? 15 * 60_000,
      ...(this.o.batchSize ? { batchSize: this.o.batchSize } : {}),
      ...(this.o.resyncWindowMs ? { resyncWindowMs: this.o.resyncWindowMs } : {}),
      ...(this.o.backoff ? { backoff: this.o.backoff } : {}),
      ...(this.o.metrics ? { metrics: this.o.metrics } : {}),
      ...(this.o.log ? { log: this.o.log } : {}),
      ...(this.o.onBatch ? { onBatch: (r: IngestReport) => this.o.onBatch!(m.id, r) } : {}),
    });
    const r: Running = { lease, loop, done: Promise.resolve() };
    this.running.set(m.id, r);
    r.done = loop
      .run()
      .catch((e: unknown) => this.o.log?.error({ err: e, mailboxId: m.id }, 'sync loop crashed'))
      .finally(async () => {
        this.running.delete(m.id);
        await this.leases.release(r.lease).catch(() => undefined);
      });
  }

  /** Graceful stop (SIGTERM): every loop finishes and commits the batch in flight, closes, and releases its lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.balanceTimer?.cancel();
    await this.balancing.catch(() => undefined);
    for (const r of this.running.values()) r.loop.stop();
    await Promise.all([...this.running.values()].map((r) => r.done));
  }
}
