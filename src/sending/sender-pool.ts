import { hostname } from 'node:os';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Vault } from '../mailbox/vault.ts';
import { LeaseBalancer, type PoolTuning } from '../ops/lease-balancer.ts';
import type { Lease } from '../ops/leases.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { Dispatcher, nextSendAt, recordSendOutcome } from './dispatch/index.ts';
import { MailboxSender, type StepResult } from './mailbox-sender.ts';
import type { RetryPolicy } from './outbox.ts';
import { transports, type TransportDeps, type TransportMailbox } from './transports/registry.ts';
import type { Transport } from './transports/transport.ts';

export interface SenderPoolOptions extends PoolTuning {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
  random: Random;
  vault: Vault;
  trackingKey: Buffer;
  publicUrl: string;
  /** This process's name in the lease table. */
  owner?: string;
  /** How long an idle mailbox waits before looking at its queue again. */
  idlePollMs?: number;
  /** How often unknown sends are looked for in the Sent folder. */
  resolveEveryMs?: number;
  policy?: Partial<RetryPolicy>;
  /** Builds a mailbox's transport (tests point Gmail/Graph at emulators through this). */
  transportFor?: (mailbox: TransportMailbox, deps: TransportDeps) => Transport;
  transportDeps?: Partial<TransportDeps>;
  log?: Logger;
  onStep?: (mailboxId: string, r: StepResult) => void;
  /** Asks the sync role to pull a mailbox now: the mailbox last look found unread mail from a lead (mailbox-last-look.ts). */
  pullMailbox?: (mailboxId: string) => void;
}

interface Running {
  sender: MailboxSender;
  transport: Transport;
  done: Promise<void>;
  stop: boolean;
  /** Ends the loop's idle wait early (set while it waits). */
  wake?: () => void;
  /** Woken while busy: the next idle wait is skipped (what it was woken for may be after its last look). */
  woken?: boolean;
}

/**
 * The sender role: takes leases on mailboxes (one owner each, fenced), and runs one loop per owned
 * mailbox that claims and sends its due requests one at a time. On stop (SIGTERM) no loop claims
 * again; each finishes the message it is handing to its server and records the result; then the
 * leases are released so another process can take the mailboxes at once. A mailbox's pacing
 * state lives in the store, so the next owner continues the same day's budget.
 */
export class SenderPool {
  readonly owner: string;
  readonly balancer: LeaseBalancer<TransportMailbox>;
  private readonly running = new Map<string, Running>();
  private stopped = false;
  private dispatcher: Dispatcher | undefined;

  constructor(private readonly o: SenderPoolOptions) {
    this.owner = o.owner ?? `${hostname()}:${process.pid}:${newId(o.clock.now(), o.random).slice(-8)}`;
    this.balancer = new LeaseBalancer<TransportMailbox>({
      store: o.store,
      clock: o.clock,
      role: 'sender',
      prefix: 'mailbox:',
      owner: this.owner,
      pool: o,
      worker: {
        eligible: () => o.store.db.selectFrom('mailbox').select(['id', 'email', 'provider', 'settings']).where('health', 'in', ['ok', 'warning']).orderBy('id').execute(),
        start: (m, lease) => this.launch(m, lease),
        lost: (id) => {
          const r = this.running.get(id);
          if (r) r.stop = true;
        },
        // The graceful stop of one mailbox: the loop finishes the message in hand, records it, and
        // its end releases the lease (ended), so the next owner claims after the record.
        handOver: (id) => {
          const r = this.running.get(id);
          if (!r) return void this.balancer.ended(id);
          r.stop = true;
          wakeLoop(r);
        },
      },
    });
  }

  async start(): Promise<void> {
    // The day planner gives every queued request its send instant (pacing); claims wait for it.
    this.dispatcher = new Dispatcher({
      store: this.o.store,
      clock: this.o.clock,
      ...(this.o.log ? { log: this.o.log } : {}),
      // A new slot may be sooner than the idle poll: the mailbox's loop looks at its queue now.
      onPlanned: (ids) => {
        for (const id of ids) {
          const r = this.running.get(id);
          if (r) wakeLoop(r);
        }
      },
    });
    await this.dispatcher.start();
    await this.balancer.start();
  }

  /** Send requests were queued now: plan them at once (pacing still sets their slots). */
  nudge(): Promise<void> {
    return this.dispatcher?.nudge() ?? Promise.resolve();
  }

  get mailboxes(): string[] {
    return [...this.running.keys()];
  }

  /** The day planner's passes (periodic and nudged) so far in this process. */
  get planPasses(): number {
    return this.dispatcher?.stats.passes ?? 0;
  }

  /**
   * One balance pass now (lease-balancer.ts: renew, hand over the excess, take free mailboxes up
   * to this process's share). It also runs on its own: every ttl/3, every heartbeat while under
   * the share, when the membership changes, and when a 'mailboxes' work nudge comes (a mailbox
   * connected or resumed, a process joined or left, a lease was handed over).
   */
  balance(): Promise<void> {
    return this.balancer.balance();
  }

  private async launch(m: TransportMailbox, lease: Lease): Promise<'started' | 'release' | 'keep'> {
    // The previous loop on this mailbox is still winding down (its lease was lost): not yet.
    if (this.running.has(m.id)) return 'keep';
    const credential = await this.o.vault.get(m.id);
    const factory = this.o.transportFor ?? ((mb: TransportMailbox, deps: TransportDeps) => transports[mb.provider](mb, deps));
    let transport: Transport;
    try {
      transport = factory(m, { clock: this.o.clock, credential, ...(this.o.log ? { logger: this.o.log } : {}), ...this.o.transportDeps });
    } catch (e) {
      await this.pauseMailbox(m.id, `cannot send: ${(e as Error).message}`);
      return 'release';
    }
    const sender = new MailboxSender(m.id, {
      store: this.o.store,
      service: this.o.service,
      clock: this.o.clock,
      random: this.o.random,
      ...(this.o.policy ? { policy: this.o.policy } : {}),
      fence: { resource: lease.resource, token: lease.token },
      paced: true,
      transport,
      trackingKey: this.o.trackingKey,
      publicUrl: this.o.publicUrl,
      pauseMailbox: (id, reason) => this.pauseMailbox(id, reason),
      ...(this.o.pullMailbox ? { pullMailbox: this.o.pullMailbox } : {}),
      ...(this.o.log ? { log: this.o.log } : {}),
    });
    const r: Running = { sender, transport, stop: false, done: Promise.resolve() };
    this.running.set(m.id, r);
    r.done = this.loop(r).finally(async () => {
      this.running.delete(m.id);
      await transport.close().catch(() => undefined);
      await this.balancer.ended(m.id);
    });
    return 'started';
  }

  private async loop(r: Running): Promise<void> {
    const idle = this.o.idlePollMs ?? 5_000;
    const resolveEvery = this.o.resolveEveryMs ?? 60_000;
    await r.sender.recover();
    let nextResolve = 0;
    while (!r.stop && !this.stopped) {
      try {
        if (this.o.clock.now() >= nextResolve) {
          const settled = await r.sender.resolveUnknowns();
          nextResolve = this.o.clock.now() + resolveEvery;
          // serverSavesSent was wrong (sent-copy-check.ts): give the mailbox back, so that the
          // next balance pass launches it again with a transport built from the new setting.
          if (settled.sentCopyCheck === 'switched') return;
        }
        r.woken = false;
        const res = await r.sender.step();
        this.o.onStep?.(r.sender.mailboxId, res);
        if (res.kind === 'fenced' || res.kind === 'mailbox_paused') return;
        if (res.kind === 'idle') {
          // Wake for the next planned send (sends leave at their planned instant), or poll.
          const next = await nextSendAt(this.o.store.db, r.sender.mailboxId);
          const wait = next === null ? idle : Math.min(idle, Math.max(50, next - this.o.clock.now()));
          await this.idle(r, wait);
        }
      } catch (e) {
        this.o.log?.error({ err: e, mailboxId: r.sender.mailboxId }, 'sender step failed');
        await this.o.clock.sleep(idle);
      }
    }
  }

  /** Sleeps up to ms, or until the dispatcher planned this mailbox or the pool stops. */
  private idle(r: Running, ms: number): Promise<void> {
    if (r.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        timer.cancel();
        r.wake = undefined;
        resolve();
      };
      const timer = this.o.clock.setTimer(ms, done);
      r.wake = done;
    });
  }

  private async pauseMailbox(mailboxId: string, reason: string): Promise<void> {
    await recordSendOutcome(this.o.store.db, { kind: 'credentials_failed', mailboxId, detail: reason, at: this.o.clock.now() });
    this.o.log?.warn({ mailboxId, reason }, 'mailbox paused');
  }

  /**
   * Graceful stop: no new claims; each loop finishes the message in hand and records it (a loop
   * idling ends at once); leases are released.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    // A pass in flight may still launch a loop: wait for it, so that the loop is stopped below.
    await this.balancer.halt();
    await this.dispatcher?.stop();
    for (const r of this.running.values()) {
      r.stop = true;
      wakeLoop(r);
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.balancer.leave();
  }
}

function wakeLoop(r: Running): void {
  r.woken = true;
  r.wake?.();
}
