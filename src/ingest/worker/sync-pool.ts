import { hostname } from 'node:os';
import type { Clock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { BackoffPolicy } from '../../mailbox/sync/backoff.ts';
import type { Vault } from '../../mailbox/vault.ts';
import { LeaseBalancer, type PoolTuning } from '../../ops/lease-balancer.ts';
import type { Lease } from '../../ops/leases.ts';
import type { Metrics } from '../../ops/metrics.ts';
import type { EnrollmentService } from '../../sequence/enrollment-service.ts';
import type { Store } from '../../store/store.ts';
import type { IngestDeps, IngestOptions, IngestReport, IngestSteps } from '../pipeline.ts';
import { recordSyncError } from '../store.ts';
import { connectors, type ConnectorFactory, type SyncMailbox } from './connectors.ts';
import { Gate } from './gate.ts';
import { MailboxLoop } from './mailbox-loop.ts';
import { PreparePool, type PreparePoolOptions } from './prepare-pool.ts';

export interface SyncPoolOptions extends PoolTuning {
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
  /** The reconciliation pull behind push (default 15 minutes). */
  reconcileMs?: number;
  /** Only these mailboxes (tests and benchmarks that share a database with others). */
  mailboxIds?: string[];
  batchSize?: number;
  resyncWindowMs?: number;
  backoff?: BackoffPolicy;
  /** The CPU stages in this thread (tests); by default they run in the prepare pool below. */
  steps?: IngestSteps;
  /** The worker pool that parses and classifies off the main thread (ignored when `steps` is given). */
  prepare?: PreparePoolOptions;
  ingestOptions?: Partial<IngestOptions>;
  /** Builds a mailbox's connector (Gmail/Graph emulators in tests; the provider registry by default). */
  connectorFor?: ConnectorFactory;
  onBatch?: (mailboxId: string, report: IngestReport) => void;
  /** Connections the loops may be opening at once (watch setup, pulls); default 32. */
  connectConcurrency?: number;
}

interface Running {
  loop: MailboxLoop;
  done: Promise<void>;
}

/**
 * The sync role: takes leases `sync:<mailboxId>` (one owner per mailbox, fencing tokens), runs one
 * MailboxLoop per owned mailbox, renews its leases, and hands a mailbox back when its lease is
 * lost (the loop ends; its in-flight batch is refused by the fencing check in the pipeline's
 * transaction, so the new owner replays it from the stored cursor). Mailboxes are shared out
 * between the live sync processes by the same balancer as the sender pool's (ops/lease-balancer.ts).
 *
 * Messages are parsed and classified in a worker pool (prepare-pool.ts), so that however long a
 * hostile message takes (up to its deadline, then it is quarantined) the main thread keeps
 * renewing the leases and the loops' other mailboxes keep committing.
 *
 * Mailboxes paused for sending are still synced: a reply to a paused mailbox's earlier mail must
 * still stop its enrollment. A removed mailbox is not (mailbox/removal.ts): its lease is deleted,
 * so its loop's next batch is refused and the next balance stops it and never takes it again.
 */
export class SyncPool {
  readonly owner: string;
  readonly balancer: LeaseBalancer<SyncMailbox>;
  private readonly running = new Map<string, Running>();
  private readonly ingest: IngestDeps;
  private readonly gate: Gate;
  /** Owned here when the caller gave no steps: closed on stop, after the loops. */
  readonly preparePool: PreparePool | null;

  constructor(private readonly o: SyncPoolOptions) {
    this.owner = o.owner ?? `${hostname()}:${process.pid}:sync:${newId(o.clock.now(), o.random).slice(-8)}`;
    this.balancer = new LeaseBalancer<SyncMailbox>({
      store: o.store,
      clock: o.clock,
      // A pool limited to some mailboxes (tests, benchmarks sharing a database) shares them only
      // with pools limited the same way, not with every sync process on the database.
      role: o.mailboxIds ? `sync:${[...o.mailboxIds].sort().join(',')}` : 'sync',
      prefix: 'sync:',
      owner: this.owner,
      pool: o,
      worker: {
        eligible: () => this.eligible(),
        start: (m, lease) => this.launch(m, lease),
        lost: (id) => this.running.get(id)?.loop.stop(),
        // The loop finishes and commits the batch in flight, then its end releases the lease.
        handOver: (id) => this.running.get(id)?.loop.stop(),
      },
    });
    this.gate = new Gate(o.connectConcurrency ?? 32);
    this.preparePool = o.steps ? null : new PreparePool({ ...(o.log ? { log: o.log } : {}), ...o.prepare });
    this.ingest = {
      store: o.store,
      service: o.service,
      clock: o.clock,
      random: o.random,
      steps: o.steps ?? this.preparePool!.steps(),
      ...(o.trackingKey ? { trackingKey: o.trackingKey } : {}),
      ...(o.metrics ? { metrics: o.metrics } : {}),
      ...(o.log ? { log: o.log } : {}),
      ...(o.ingestOptions ? { options: o.ingestOptions } : {}),
    };
  }

  async start(): Promise<void> {
    await this.balancer.start();
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

  /** One balance pass now (lease-balancer.ts, the same rule as the sender pool's). */
  balance(): Promise<void> {
    return this.balancer.balance();
  }

  /** Pull every mailbox this process syncs now (after a lost push-bus connection: pushes relayed meanwhile are gone). */
  pokeAll(): void {
    for (const r of this.running.values()) r.loop.poke();
  }

  private async eligible(): Promise<SyncMailbox[]> {
    let q = this.o.store.db.selectFrom('mailbox').select(['id', 'workspace_id', 'email', 'provider', 'settings']).where('health', '<>', 'error').where('removed_at', 'is', null);
    if (this.o.mailboxIds) q = q.where('id', 'in', this.o.mailboxIds.length ? this.o.mailboxIds : ['00000000-0000-0000-0000-000000000000']);
    const rows = await q.orderBy('id').execute();
    return rows.map((m) => ({ id: m.id, workspaceId: m.workspace_id, email: m.email, provider: m.provider, settings: m.settings }));
  }

  private async launch(m: SyncMailbox, lease: Lease): Promise<'started' | 'keep'> {
    // The previous loop on this mailbox is still winding down (its lease was lost): not yet.
    if (this.running.has(m.id)) return 'keep';
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
      return 'keep';
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
    const r: Running = { loop, done: Promise.resolve() };
    this.running.set(m.id, r);
    this.o.metrics?.syncedMailboxes.set(this.running.size);
    r.done = loop
      .run()
      .catch((e: unknown) => this.o.log?.error({ err: e, mailboxId: m.id }, 'sync loop crashed'))
      .finally(async () => {
        this.running.delete(m.id);
        this.o.metrics?.syncedMailboxes.set(this.running.size);
        await this.balancer.ended(m.id);
      });
    return 'started';
  }

  /** Graceful stop (SIGTERM): every loop finishes and commits the batch in flight, closes, and releases its lease. */
  async stop(): Promise<void> {
    await this.balancer.halt();
    for (const r of this.running.values()) r.loop.stop();
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.preparePool?.close();
    await this.balancer.leave();
  }
}
