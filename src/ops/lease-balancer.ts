import type { Clock, TimerHandle } from '../common/clock.ts';
import { coalesce } from '../common/coalesce.ts';
import type { Logger } from '../common/logger.ts';
import type { Store } from '../store/store.ts';
import { planShare } from './fair-share.ts';
import { Leases, type Lease } from './leases.ts';
import { Membership, type MembershipOptions } from './membership.ts';

/** Mailboxes taken in one statement, and started side by side, in a balance pass. */
const TAKE_CHUNK = 100;

/**
 * What a pool (sender-pool.ts, ingest/worker/sync-pool.ts) does with the mailboxes the balancer
 * gives it. The pool runs one loop per mailbox; the balancer owns the leases.
 */
export interface ShardWorker<M extends { id: string }> {
  /** The mailboxes this role may work on now. */
  eligible(): Promise<M[]>;
  /**
   * Start working on m under this lease. 'release': it cannot (the lease is given back now);
   * 'keep': not now (the lease is kept until it expires, so no other process loops on it either,
   * and the next pass tries again).
   */
  start(m: M, lease: Lease): Promise<'started' | 'release' | 'keep'>;
  /** The lease was lost (expired and taken, or removed): stop at once; writes are fenced anyway. */
  lost(id: string): void;
  /** Over this member's share: finish what is in hand, record it, then call `ended(id)`. */
  handOver(id: string): void;
}

/** What both pools' options carry for their balancer. */
export interface PoolTuning {
  leaseTtlMs?: number;
  /** Most mailboxes this process works on (the rest are left to other processes). */
  maxMailboxes?: number;
  /** Tell the other processes' pools to balance now (app.ts: a 'mailboxes' work nudge over the push bus). */
  announce?: () => void;
  /** Heartbeat settings and the process identity (tests). */
  membership?: Pick<MembershipOptions, 'heartbeatMs' | 'staleAfter' | 'identity' | 'probe'>;
  log?: Logger;
}

export interface BalancerOptions<M extends { id: string }> {
  store: Store;
  clock: Clock;
  /** The membership role and the lease prefix: 'sender' → `mailbox:<id>`, 'sync' → `sync:<id>`. */
  role: string;
  prefix: string;
  owner: string;
  worker: ShardWorker<M>;
  pool: PoolTuning;
}

/**
 * One balance pass, the same for both pools: renew what we hold (a lease that cannot be renewed
 * is lost), read the eligible mailboxes, the live leases and the membership, let planShare
 * decide, hand over the excess, take free mailboxes (and those of members proven gone) up to the
 * quota. It runs every ttl/3 for the renewals; every heartbeat while under the quota (so a joining
 * member gets its share within seconds even when no nudge reaches it); at once when the live
 * membership changes (seen by the heartbeat) or a nudge asks (another process announced a join,
 * a leave or a hand-over).
 */
export class LeaseBalancer<M extends { id: string }> {
  private readonly leases: Leases;
  private readonly log: Logger | undefined;
  readonly membership: Membership;
  private readonly held = new Map<string, Lease>();
  private readonly leaving = new Set<string>();
  private stopped = false;
  /** When the held leases were last renewed (clock time). */
  private renewedAt = 0;
  private timer: TimerHandle | undefined;
  private balancing: Promise<void> = Promise.resolve();
  // One pass at a time (two would both take the same new mailbox), and a storm of nudges costs two.
  private readonly pass = coalesce(() => this.once());

  constructor(private readonly o: BalancerOptions<M>) {
    this.leases = new Leases(o.store, o.clock);
    this.log = o.pool.log;
    // The heartbeat keeps time with the lease (3 s for the default 60 s): a pool on an accelerated
    // clock (the demo) that shortens its leases in simulated time shortens its heartbeat with them,
    // instead of beating every millisecond of real time.
    const heartbeatMs = o.pool.membership?.heartbeatMs ?? Math.max(1, Math.round(this.ttlMs / 20));
    this.membership = new Membership({ store: o.store, clock: o.clock, role: o.role, id: o.owner, ...o.pool.membership, heartbeatMs, onChange: () => void this.balance(), ...(o.pool.log ? { log: o.pool.log } : {}) });
  }

  get ttlMs(): number {
    return this.o.pool.leaseTtlMs ?? 60_000;
  }

  async start(): Promise<void> {
    await this.membership.join();
    this.o.pool.announce?.();
    await this.balance();
  }

  balance(): Promise<void> {
    this.balancing = this.pass();
    return this.balancing;
  }

  /** The pool's loop for this mailbox has ended (handed over, stopped or finished): release its lease. */
  async ended(id: string): Promise<void> {
    const lease = this.held.get(id);
    if (!lease) return;
    this.held.delete(id);
    const handedOver = this.leaving.delete(id);
    await this.leases.release(lease).catch((e: unknown) => this.log?.warn({ err: e, resource: lease.resource }, 'lease release failed'));
    if (handedOver && !this.stopped) this.o.pool.announce?.();
  }

  /** No more passes (graceful stop, before the pool stops its loops). */
  async halt(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.balancing.catch(() => undefined);
  }

  /** After the loops ended and released their leases: leave the membership and tell the others. */
  async leave(): Promise<void> {
    await this.membership.leave().catch((e: unknown) => this.log?.warn({ err: e }, 'membership leave failed'));
    this.o.pool.announce?.();
  }

  /** Renews every lease held (one statement per 500); one that cannot be renewed is lost and its work stopped. */
  private async renewHeld(): Promise<void> {
    this.renewedAt = this.o.clock.now();
    const holding = [...this.held];
    const renewals = await this.leases.renewAll(
      holding.map(([, lease]) => lease),
      this.ttlMs,
    );
    for (let i = 0; i < holding.length; i++) {
      const [id] = holding[i]!;
      const renewed = renewals[i]!;
      // Released meanwhile (a loop that ended while the renewal ran): nothing to keep or stop.
      if (!this.held.has(id)) continue;
      if (renewed) this.held.set(id, renewed);
      else {
        this.held.delete(id);
        this.leaving.delete(id);
        this.log?.warn({ mailboxId: id, role: this.o.role }, 'lost the lease on a mailbox; stopping its loop');
        this.o.worker.lost(id);
      }
    }
  }

  private async once(): Promise<void> {
    if (this.stopped) return;
    // A nudged pass restarts the period, so that there is one timer, not one per nudge.
    this.timer?.cancel();
    let under = false;
    // Mailboxes kept but not started ('keep'): they count toward the quota, so that a mailbox that
    // cannot start does not make the pass run every heartbeat.
    let parked = 0;
    try {
      await this.renewHeld();
      const rows = await this.o.worker.eligible();
      const view = await this.membership.view();
      const gone = new Set(view.gone);
      const others = new Map<string, string>();
      for (const [id, owner] of await this.leases.holders(this.o.prefix)) if (owner !== this.o.owner && !gone.has(owner)) others.set(id, owner);
      const plan = planShare({
        me: this.o.owner,
        members: view.live,
        eligible: rows.map((m) => m.id),
        held: [...this.held.keys()],
        leaving: [...this.leaving],
        others,
        ...(this.o.pool.maxMailboxes !== undefined ? { max: this.o.pool.maxMailboxes } : {}),
      });
      for (const id of plan.giveBack) {
        this.leaving.add(id);
        this.log?.info({ mailboxId: id, role: this.o.role, quota: plan.quota }, 'handing a mailbox over to rebalance');
        this.o.worker.handOver(id);
      }
      const byId = new Map(rows.map((m) => [m.id, m]));
      // In chunks: one statement takes a chunk's leases, and its mailboxes start side by side
      // (10,000 mailboxes one lease and one start at a time took minutes to get going).
      for (let next = 0; next < plan.take.length && !this.stopped; ) {
        const room = plan.quota - (this.held.size - this.leaving.size + parked);
        if (room <= 0) break;
        // A long pass (thousands of mailboxes starting on a busy machine) renews what it took
        // first before those leases run out: the next pass may be a TTL away.
        if (this.o.clock.now() - this.renewedAt >= this.ttlMs / 3) await this.renewHeld();
        const chunk = plan.take.slice(next, next + Math.min(room, TAKE_CHUNK));
        next += chunk.length;
        const got = await this.leases.acquireAll(
          chunk.map((id) => `${this.o.prefix}${id}`),
          this.o.owner,
          this.ttlMs,
          view.gone,
        );
        const outcomes = await Promise.all(
          chunk.map(async (id) => {
            const lease = got.get(`${this.o.prefix}${id}`);
            if (!lease) return 'none' as const;
            this.held.set(id, lease);
            const started = await this.o.worker.start(byId.get(id)!, lease).catch((e: unknown) => {
              this.log?.error({ err: e, mailboxId: id }, 'cannot start work on a mailbox');
              return 'release' as const;
            });
            if (started === 'started') return started;
            this.held.delete(id);
            if (started === 'release') await this.leases.release(lease);
            return started;
          }),
        );
        parked += outcomes.filter((o) => o === 'keep').length;
      }
      under = this.held.size - this.leaving.size + parked < plan.quota;
    } catch (e) {
      this.log?.error({ err: e, role: this.o.role }, 'lease balancing failed');
    }
    if (!this.stopped) this.timer = this.o.clock.setTimer(under ? this.membership.heartbeatMs : this.ttlMs / 3, () => void this.balance());
  }
}
