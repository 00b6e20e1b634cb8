import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { ConnectorDeps, ConnectorSetup, MailboxRow } from '../../mailbox/connectors/connector.ts';
import { MailboxPool, type MailboxWork, type PoolMailbox } from '../../mailbox/mailbox-pool.ts';
import type { BackoffPolicy } from '../../common/backoff.ts';
import type { MailboxSync } from '../../mailbox/sync/source.ts';
import type { Vault } from '../../mailbox/vault.ts';
import type { LeaseBalancer, PoolTuning } from '../../ops/lease-balancer.ts';
import type { Lease } from '../../ops/leases.ts';
import type { Metrics } from '../../ops/metrics.ts';
import type { EnrollmentService } from '../../sequence/enrollment-service.ts';
import type { Store } from '../../store/store.ts';
import type { IngestDeps, IngestOptions, IngestReport, IngestSteps, WarmupRecogniser } from '../pipeline.ts';
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
  /** The warmup network's receiving side (the composition root wires warmup/receive/recogniser.ts). */
  warmup?: WarmupRecogniser;
  /** What this process knows for building connectors (mailbox/connectors/registry.ts): token source, API base URLs, push. */
  connectors?: ConnectorSetup;
  /** Builds a mailbox's sync part in place of the registry (tests: fakes and emulators). */
  connectorFor?: (mailbox: MailboxRow, deps: ConnectorDeps) => MailboxSync;
  onBatch?: (mailboxId: string, report: IngestReport) => void;
  /** Connections the loops may be opening at once (watch setup, pulls); default 32. */
  connectConcurrency?: number;
}

/** One owned mailbox's sync loop, as the pool runs it. */
class SyncWork implements MailboxWork {
  constructor(
    readonly loop: MailboxLoop,
    readonly done: Promise<void>,
  ) {}

  // The loop finishes and commits the batch in flight, then ends; its end releases the lease.
  stop(): void {
    this.loop.stop();
  }

  lost(): void {
    this.loop.stop();
  }
}

/**
 * The sync role: on the mailboxes the pool leases to this process (mailbox/mailbox-pool.ts: leases
 * `sync:<mailboxId>`, one owner per mailbox, fencing tokens, the same rules as the sender's), one
 * MailboxLoop per owned mailbox on its connector's sync part; a mailbox whose lease is lost is
 * handed back (the loop ends; its in-flight batch is refused by the fencing check in the
 * pipeline's transaction, so the new owner replays it from the stored cursor).
 *
 * Messages are parsed and classified in a worker pool (prepare-pool.ts), so that however long a
 * hostile message takes (up to its deadline, then it is quarantined) the main thread keeps
 * renewing the leases and the loops' other mailboxes keep committing.
 *
 * Mailboxes paused for sending are still synced: a reply to a paused mailbox's earlier mail must
 * still stop its enrollment. A removed mailbox is not (sending/mailbox-removal.ts): its lease is
 * deleted, so its loop's next batch is refused and the next balance stops it and never takes it
 * again.
 */
export class SyncPool {
  private readonly pool: MailboxPool<MailboxSync, SyncWork>;
  private readonly ingest: IngestDeps;
  private readonly gate: Gate;
  /** Owned here when the caller gave no steps: closed on stop, after the loops. */
  readonly preparePool: PreparePool | null;

  constructor(private readonly o: SyncPoolOptions) {
    this.pool = new MailboxPool<MailboxSync, SyncWork>(o, {
      name: 'sync',
      prefix: 'sync:',
      needs: 'sync',
      run: (m, connector, lease) => this.launch(m, connector, lease),
      cannotConnect: (m) => this.o.metrics?.syncErrors.inc({ provider: m.provider }),
      changed: (n) => this.o.metrics?.syncedMailboxes.set(n),
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
      ...(o.warmup ? { warmup: o.warmup } : {}),
    };
  }

  get owner(): string {
    return this.pool.owner;
  }

  get balancer(): LeaseBalancer<PoolMailbox> {
    return this.pool.balancer;
  }

  async start(): Promise<void> {
    await this.pool.start();
  }

  get mailboxes(): string[] {
    return this.pool.mailboxes;
  }

  /** Pushes from outside (Gmail Pub/Sub, Graph notifications via the API): pull that mailbox now. */
  poke(mailboxId: string): boolean {
    const w = this.pool.work(mailboxId);
    w?.loop.poke();
    return w !== undefined;
  }

  /** One balance pass now (lease-balancer.ts, the same rule as the sender pool's). */
  balance(): Promise<void> {
    return this.pool.balance();
  }

  /** Pull every mailbox this process syncs now (after a lost push-bus connection: pushes relayed meanwhile are gone). */
  pokeAll(): void {
    for (const w of this.pool.works()) w.loop.poke();
  }

  private launch(m: PoolMailbox, connector: MailboxSync, lease: Lease): SyncWork {
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
    return new SyncWork(loop, loop.run());
  }

  /** Graceful stop (SIGTERM): every loop finishes and commits the batch in flight, closes, and releases its lease. */
  async stop(): Promise<void> {
    await this.pool.stop({ beforeLeave: async () => this.preparePool?.close() });
  }
}
