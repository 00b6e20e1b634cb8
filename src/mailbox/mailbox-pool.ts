import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../common/clock.ts';
import { isCadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import { LeaseBalancer, type PoolTuning } from '../ops/lease-balancer.ts';
import type { Lease } from '../ops/leases.ts';
import type { Store } from '../store/store.ts';
import type { Ability, ConnectorDeps, ConnectorSetup, MailboxRow } from './connectors/connector.ts';
import { connectorDeps, createConnector } from './connectors/registry.ts';
import { cannotConnectReason, pauseMailbox } from './health/pause.ts';
import type { Vault } from './vault.ts';

/**
 * One generic per-mailbox lease pool: what the sender role (sending/sender-pool.ts) and the sync
 * role (ingest/worker/sync-pool.ts) share. It names this process in the lease table, holds the
 * leases through the LeaseBalancer (ops/lease-balancer.ts: one owner per mailbox, fencing tokens,
 * fair shares between the live processes, nudges), builds each owned mailbox's connector from the
 * registry, runs the role's work on it, stops that work when the lease is lost or handed over, and
 * on stop lets every work finish what it has in hand before the leases are released. A role says
 * only what to run per mailbox (MailboxRole).
 *
 * Which mailboxes, for both roles (the `eligible` query): every mailbox that is not removed and
 * not in health 'error'.
 *   - removed: its leases were deleted with it (sending/mailbox-removal.ts); it never works again.
 *   - 'error': the mailbox can do nothing, by decision (the demo's mailboxes once the demo ended).
 *   - 'paused' is taken, on purpose. The sync must keep reading a paused mailbox: a reply to its
 *     earlier mail must still stop the enrollment (promise 2). The sender holds it too and claims
 *     nothing from it: its loop waits while the mailbox is paused (sending/sender-pool.ts), the
 *     claim refuses a paused mailbox anyway (sending/dispatch/reserve.ts, its blockedReason) and
 *     the planner gives its queue no slot, so nothing leaves until a person resumes it; the
 *     resumed mailbox's loop is already running.
 *   - 'warning' is a verdict shown to people, not a stop.
 *
 * A connector that cannot be built (createConnector: no credential, an OAuth grant and no token
 * source here, settings that do not parse, no server for what the role does, an unknown
 * provider), one rule for both roles:
 *   - the mailbox is paused with the reason ('cannot connect: …', health/pause.ts), so the person
 *     sees it on the Mailboxes page and nothing is planned on a mailbox that cannot send, or whose
 *     replies no one could read (a follow-up must not go to a lead whose reply is unseen: promise
 *     3). Like every pause it is lifted by a person, or by an OAuth reconnect (oauth/flow.ts);
 *   - the lease is kept and nothing started ('keep', lease-balancer.ts) until this process's next
 *     renewal pass (a third of the TTL), which tries again: giving it back would have every
 *     process rebuild and fail it on every heartbeat.
 * Anything else that fails while starting (the vault cannot be read) is not the mailbox's doing:
 * it is logged and the lease given back (the balancer's rule).
 */
export interface PoolMailbox extends MailboxRow {
  workspaceId: string;
}

/** One mailbox's work, as a role runs it. */
export interface MailboxWork {
  /** Settles when the work has ended: stopped, lost, or ended by itself (then its lease is released). */
  readonly done: Promise<void>;
  /** Finish what is in hand, record it, then end: a hand-over to another process, or a graceful stop. */
  stop(): void;
  /** The lease is gone (expired and taken, or deleted): end now; its writes are fenced anyway. */
  lost(): void;
}

/** What a role runs per mailbox, and what it uses from the connector. */
export interface MailboxRole<C, W extends MailboxWork> {
  /** The membership role and the lease prefix: 'sender' and `mailbox:<id>`, 'sync' and `sync:<id>`. */
  name: string;
  prefix: string;
  /** The connector part the role uses (createConnector's needs). */
  needs: Ability;
  run(mailbox: PoolMailbox, connector: C, lease: Lease): W;
  /** A connector could not be built (after the mailbox was paused): the sync counts it. */
  cannotConnect?(mailbox: PoolMailbox, reason: string): void;
  /** The number of mailboxes worked on changed (the sync's gauge). */
  changed?(running: number): void;
}

export interface MailboxPoolOptions<C> extends PoolTuning {
  store: Store;
  clock: Clock;
  random: Random;
  vault: Pick<Vault, 'get'>;
  /** This process's name in the lease table (default: host, pid, role and a random suffix). */
  owner?: string;
  /** Only these mailboxes (tests and benchmarks that share a database with others). */
  mailboxIds?: string[];
  /** What this process knows for building connectors: token source, API base URLs, push, deadlines. */
  connectors?: ConnectorSetup;
  /** Builds a mailbox's connector in place of the registry (tests: fakes and emulators). */
  connectorFor?: (mailbox: MailboxRow, deps: ConnectorDeps) => C;
  log?: Logger;
}

export class MailboxPool<C extends { close(): Promise<void> }, W extends MailboxWork> {
  readonly owner: string;
  readonly balancer: LeaseBalancer<PoolMailbox>;
  /** Each owned mailbox's work, and its end: the work done, the connector closed, the lease released. */
  private readonly running = new Map<string, { work: W; ended: Promise<void> }>();

  constructor(
    private readonly o: MailboxPoolOptions<C>,
    private readonly role: MailboxRole<C, W>,
  ) {
    this.owner = o.owner ?? `${hostname()}:${process.pid}:${role.name}:${newId(o.clock.now(), o.random).slice(-8)}`;
    this.balancer = new LeaseBalancer<PoolMailbox>({
      store: o.store,
      clock: o.clock,
      // A pool limited to some mailboxes (tests, benchmarks sharing a database) shares them only
      // with pools limited the same way, not with every process of its role on the database. The
      // set is named by its digest: thousands of ids would not fit the membership table's index.
      role: o.mailboxIds ? `${role.name}:${createHash('sha256').update([...o.mailboxIds].sort().join(',')).digest('hex').slice(0, 32)}` : role.name,
      prefix: role.prefix,
      owner: this.owner,
      pool: o,
      worker: {
        eligible: () => this.eligible(),
        start: (m, lease) => this.launch(m, lease),
        lost: (id) => this.running.get(id)?.work.lost(),
        // The work finishes what it has in hand and records it; its end releases the lease
        // (ended), so that the next owner starts after the record.
        handOver: (id) => {
          const r = this.running.get(id);
          if (!r) return void this.balancer.ended(id);
          r.work.stop();
        },
      },
    });
  }

  start(): Promise<void> {
    return this.balancer.start();
  }

  /** One balance pass now (lease-balancer.ts); it also runs on its own and on 'mailboxes' nudges. */
  balance(): Promise<void> {
    return this.balancer.balance();
  }

  get mailboxes(): string[] {
    return [...this.running.keys()];
  }

  /** The work running on a mailbox here, if this process owns it. */
  work(mailboxId: string): W | undefined {
    return this.running.get(mailboxId)?.work;
  }

  works(): W[] {
    return [...this.running.values()].map((r) => r.work);
  }

  /**
   * Graceful stop: no more passes; each work finishes what it has in hand, and its end releases its
   * lease; then this process leaves the membership, which tells the others to balance. A role
   * stops its own parts between (`afterHalt`: the sender's planner; `beforeLeave`: the sync's
   * worker threads), so that the others take the mailboxes over only once it is done.
   */
  async stop(o: { afterHalt?: () => Promise<unknown>; beforeLeave?: () => Promise<unknown> } = {}): Promise<void> {
    // A pass in flight may still launch a work: wait for it, so that the work is stopped below.
    await this.balancer.halt();
    await o.afterHalt?.();
    for (const r of this.running.values()) r.work.stop();
    await Promise.all([...this.running.values()].map((r) => r.ended));
    await o.beforeLeave?.();
    await this.balancer.leave();
  }

  // -- name: pool-eligible (the rule is in the file comment)
  private async eligible(): Promise<PoolMailbox[]> {
    let q = this.o.store.db
      .selectFrom('mailbox')
      .select(['id', 'workspace_id', 'email', 'provider', 'settings'])
      .where('removed_at', 'is', null)
      .where('health', '<>', 'error');
    if (this.o.mailboxIds) q = q.where('id', 'in', this.o.mailboxIds.length ? this.o.mailboxIds : ['00000000-0000-0000-0000-000000000000']);
    const rows = await q.orderBy('id').execute();
    return rows.map((m) => ({ id: m.id, workspaceId: m.workspace_id, email: m.email, provider: m.provider, settings: m.settings }));
  }

  private async launch(m: PoolMailbox, lease: Lease): Promise<'started' | 'keep'> {
    // The previous work on this mailbox is still winding down (its lease was lost): not yet.
    if (this.running.has(m.id)) return 'keep';
    const credential = await this.o.vault.get(m.id);
    const deps = connectorDeps(m, credential, { clock: this.o.clock, random: this.o.random, ...(this.o.log ? { logger: this.o.log } : {}) }, this.o.connectors);
    let connector: C;
    try {
      connector = this.o.connectorFor ? this.o.connectorFor(m, deps) : (createConnector(m, deps, [this.role.needs]) as unknown as C);
    } catch (e) {
      if (!isCadenzaError(e, 'CONFIG_INVALID') && !isCadenzaError(e, 'INVALID_INPUT')) throw e;
      await this.cannotConnect(m, e.message);
      return 'keep';
    }
    const work = this.role.run(m, connector, lease);
    const ended = work.done
      .catch((e: unknown) => this.o.log?.error({ err: e, mailboxId: m.id, role: this.role.name }, 'mailbox work crashed'))
      .finally(async () => {
        this.running.delete(m.id);
        this.role.changed?.(this.running.size);
        await connector.close().catch(() => undefined);
        await this.balancer.ended(m.id);
      });
    this.running.set(m.id, { work, ended });
    this.role.changed?.(this.running.size);
    return 'started';
  }

  /** The rule for a connector that cannot be built (file comment): pause with the reason, keep the lease. */
  private async cannotConnect(m: PoolMailbox, why: string): Promise<void> {
    const paused = await pauseMailbox(this.o.store.db, m.id, cannotConnectReason(why), this.o.clock.now()).catch((e: unknown) => {
      this.o.log?.error({ err: e, mailboxId: m.id }, 'could not pause a mailbox that cannot connect');
      return false;
    });
    // Said once, when it pauses the mailbox; the retries on later passes are quiet.
    if (paused) this.o.log?.warn({ mailboxId: m.id, role: this.role.name, reason: why }, 'mailbox cannot connect: paused');
    this.role.cannotConnect?.(m, why);
  }
}
