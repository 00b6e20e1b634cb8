import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import type { ConnectorDeps, ConnectorSetup, MailboxRow, Transport } from '../mailbox/connectors/connector.ts';
import { isPaused } from '../mailbox/health/pause.ts';
import { MailboxPool, type MailboxWork, type PoolMailbox } from '../mailbox/mailbox-pool.ts';
import type { Vault } from '../mailbox/vault.ts';
import type { LeaseBalancer, PoolTuning } from '../ops/lease-balancer.ts';
import type { Lease } from '../ops/leases.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { Dispatcher, nextSendAt, recordSendOutcome } from './dispatch/index.ts';
import { MailboxSender, type MailboxSenderDeps, type StepResult } from './mailbox-sender.ts';
import { SentRecorder } from './sent-recorder.ts';
import type { RetryPolicy } from './outbox.ts';

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
  /** Only these mailboxes (tests and benchmarks that share a database with others). */
  mailboxIds?: string[];
  /** How long an idle mailbox waits before looking at its queue again. */
  idlePollMs?: number;
  /** The day planner's periodic pass (dispatch/dispatcher.ts; default 30 s); nudges plan at once whatever it is. */
  planEveryMs?: number;
  /** How often unknown sends are looked for in the Sent folder. */
  resolveEveryMs?: number;
  policy?: Partial<RetryPolicy>;
  /** What this process knows for building connectors (mailbox/connectors/registry.ts): token source, API base URLs, SMTP deadlines. */
  connectors?: ConnectorSetup;
  /** Builds a mailbox's sending part in place of the registry (tests: fakes). */
  transportFor?: (mailbox: MailboxRow, deps: ConnectorDeps) => Transport;
  /**
   * The mailbox's other mail sent under its bucket when the campaign queue has nothing due
   * (the runtime passes the warmup sender, warmup/send/warmup-sender.ts), built per owned mailbox
   * with its transport and lease.
   */
  extraStepFor?: (c: { transport: Transport; fence: { resource: string; token: number }; pauseMailbox: (id: string, reason: string) => Promise<void> }) => MailboxSenderDeps['extraStep'];
  /**
   * When the mailbox's next other mail is planned (null: none; warmup/send/warmup-sender.ts
   * warmupDueAt). Given with extraStepFor, an idle loop reads it beside its campaign queue's next
   * slot and claims only when one of them is due; without it, every wake tries both claims.
   */
  extraDueAt?: (mailboxId: string) => Promise<number | null>;
  log?: Logger;
  onStep?: (mailboxId: string, r: StepResult) => void;
  /** After a planning pass of this process's dispatcher: the mailboxes it gave slots (app.ts tells the other processes, whose loops they may be). */
  onPlanned?: (mailboxIds: string[]) => void;
  /** Asks the sync role to pull a mailbox now: the mailbox last look found unread mail from a lead (mailbox-last-look.ts). */
  pullMailbox?: (mailboxId: string) => void;
}

/** One owned mailbox's send loop (the pool's MailboxWork). */
class SendLoop implements MailboxWork {
  done: Promise<void> = Promise.resolve();
  stopping = false;
  /** Ends the loop's idle wait early (set while it waits). */
  wake?: () => void;
  /** Woken while busy: the next idle wait is skipped (what it was woken for may be after its last look). */
  woken = false;
  /**
   * A step failed with an error (the database went away mid-step, a failover): what it had claimed
   * may be in flight in the database with nobody sending it, or may have been handed over with
   * its record lost. Before the next claim, the loop does what a new owner does (recover): such
   * requests become unknown, settled from the Sent folder, never queued again on a guess.
   */
  recoverFirst = false;

  constructor(readonly sender: MailboxSender) {}

  stop(): void {
    this.stopping = true;
    this.nudge();
  }

  lost(): void {
    this.stopping = true;
  }

  nudge(): void {
    this.woken = true;
    this.wake?.();
  }
}

/**
 * The sender role: on the mailboxes the pool leases to this process (mailbox/mailbox-pool.ts: one
 * owner each, fenced; paused mailboxes too, whose loops wait, inert, until resumed), one loop per
 * mailbox that claims and sends its due requests one at a time through the mailbox's connector.
 * On stop (SIGTERM) no loop claims again; each finishes the message it is handing to its server and
 * records the result; then the leases are released so another process can take the mailboxes at
 * once. A mailbox's pacing state lives in the store, so the next owner continues the same day's
 * budget.
 */
export class SenderPool {
  private readonly pool: MailboxPool<Transport, SendLoop>;
  private stopped = false;
  private dispatcher: Dispatcher | undefined;
  /** One group commit for the accepted sends of all this process's mailboxes. */
  private readonly recorder: SentRecorder;

  constructor(private readonly o: SenderPoolOptions) {
    this.recorder = new SentRecorder({ store: o.store, service: o.service, clock: o.clock, random: o.random, ...(o.policy ? { policy: o.policy } : {}) });
    this.pool = new MailboxPool<Transport, SendLoop>(
      { ...o, ...(o.transportFor ? { connectorFor: o.transportFor } : {}) },
      { name: 'sender', prefix: 'mailbox:', needs: 'send', run: (m, transport, lease) => this.launch(m, transport, lease) },
    );
  }

  get owner(): string {
    return this.pool.owner;
  }

  get balancer(): LeaseBalancer<PoolMailbox> {
    return this.pool.balancer;
  }

  async start(): Promise<void> {
    // The day planner gives every queued request its send instant (pacing); claims wait for it.
    this.dispatcher = new Dispatcher({
      store: this.o.store,
      clock: this.o.clock,
      ...(this.o.planEveryMs !== undefined ? { everyMs: this.o.planEveryMs } : {}),
      ...(this.o.log ? { log: this.o.log } : {}),
      // A new slot may be sooner than the idle poll: the mailbox's loop looks at its queue now.
      onPlanned: (ids) => {
        this.wake(ids);
        this.o.onPlanned?.(ids);
      },
    });
    await this.dispatcher.start();
    await this.pool.start();
  }

  /** These mailboxes have new slots (planned here or in another process): the loops this process runs for them read their next slot now. */
  wake(mailboxIds: string[]): void {
    for (const id of mailboxIds) this.pool.work(id)?.nudge();
  }

  /** Send requests were queued now: plan them at once (pacing still sets their slots). */
  nudge(): Promise<void> {
    return this.dispatcher?.nudge() ?? Promise.resolve();
  }

  get mailboxes(): string[] {
    return this.pool.mailboxes;
  }

  /**
   * One balance pass now (lease-balancer.ts: renew, hand over the excess, take free mailboxes up
   * to this process's share). It also runs on its own: every ttl/3, every heartbeat while under
   * the share, when the membership changes, and when a 'mailboxes' work nudge comes (a mailbox
   * connected or resumed, a process joined or left, a lease was handed over).
   */
  balance(): Promise<void> {
    return this.pool.balance();
  }

  private launch(m: PoolMailbox, transport: Transport, lease: Lease): SendLoop {
    const fence = { resource: lease.resource, token: lease.token };
    const extraStep = this.o.extraStepFor?.({ transport, fence, pauseMailbox: (id, reason) => this.pauseMailbox(id, reason) });
    const sender = new MailboxSender(m.id, {
      store: this.o.store,
      service: this.o.service,
      clock: this.o.clock,
      random: this.o.random,
      ...(this.o.policy ? { policy: this.o.policy } : {}),
      fence: { resource: lease.resource, token: lease.token },
      paced: true,
      transport,
      recorder: this.recorder,
      trackingKey: this.o.trackingKey,
      publicUrl: this.o.publicUrl,
      pauseMailbox: (id, reason) => this.pauseMailbox(id, reason),
      ...(this.o.pullMailbox ? { pullMailbox: this.o.pullMailbox } : {}),
      ...(this.o.log ? { log: this.o.log } : {}),
      ...(extraStep ? { extraStep } : {}),
    });
    const r = new SendLoop(sender);
    r.done = this.loop(r);
    return r;
  }

  private async loop(r: SendLoop): Promise<void> {
    const idle = this.o.idlePollMs ?? 5_000;
    const resolveEvery = this.o.resolveEveryMs ?? 60_000;
    // A wake first reads the mailbox's next planned instants (campaign queue, and other mail when
    // its reader is given: one indexed read each) and claims only when one is due, so that the
    // wakes of idle mailboxes (the poll, the planner's nudges) do not each cost the claim
    // transactions, a health read and the next-slot read: five round trips (ten with warmup), most
    // of the statements of a day at 10,000 mailboxes (docs/benchmarks.md, "A working day").
    const probeFirst = !this.o.extraStepFor || !!this.o.extraDueAt;
    await r.sender.recover();
    let nextResolve = 0;
    while (!r.stopping && !this.stopped) {
      try {
        const resolveDue = this.o.clock.now() >= nextResolve;
        // A paused mailbox is held but inert: no search of its Sent folder, whose login may be the
        // very thing refused, and no other mail. Its campaign claims are refused anyway (reserve.ts
        // parks them), so the probe alone needs no health read. Resumed, the dispatcher plans its
        // queue and wakes this loop.
        if ((resolveDue || !probeFirst) && (await isPaused(this.o.store.db, r.sender.mailboxId))) {
          r.woken = false;
          await this.idle(r, idle);
          continue;
        }
        if (resolveDue) {
          const settled = await r.sender.resolveUnknowns();
          nextResolve = this.o.clock.now() + resolveEvery;
          // serverSavesSent was wrong (sent-copy-check.ts): give the mailbox back, so that the
          // next balance pass launches it again with a transport built from the new setting.
          if (settled.sentCopyCheck === 'switched') return;
        }
        if (r.recoverFirst) {
          await r.sender.recover();
          r.recoverFirst = false;
        }
        r.woken = false;
        if (probeFirst) {
          const next = await this.nextDue(r.sender.mailboxId);
          if (next === null || next > this.o.clock.now()) {
            await this.idle(r, this.untilNext(next, idle));
            continue;
          }
        }
        const res = await r.sender.step();
        this.o.onStep?.(r.sender.mailboxId, res);
        // The lease moved on: the next owner sends. A mailbox paused now (its credentials were
        // refused) keeps its loop: its claims are refused until a person resumes it.
        if (res.kind === 'fenced') return;
        if (res.kind === 'idle' || res.kind === 'mailbox_paused') {
          // Wake for the next planned send (sends leave at their planned instant), or poll. After a
          // due probe this is rare (the request was refused by the bucket and re-planned, or its
          // enrollment was locked): the wait of at least 50 ms keeps it from spinning.
          const next = probeFirst ? await this.nextDue(r.sender.mailboxId) : await nextSendAt(this.o.store.db, r.sender.mailboxId);
          await this.idle(r, next === null ? idle : Math.max(50, this.untilNext(next, idle)));
        }
      } catch (e) {
        this.o.log?.error({ err: e, mailboxId: r.sender.mailboxId }, 'sender step failed');
        r.recoverFirst = true;
        r.woken = false;
        await this.idle(r, idle);
      }
    }
  }

  /** The earliest of the mailbox's next planned campaign send and next other mail (null: neither). */
  private async nextDue(mailboxId: string): Promise<number | null> {
    const [campaign, extra] = await Promise.all([nextSendAt(this.o.store.db, mailboxId), this.o.extraDueAt?.(mailboxId) ?? null]);
    return campaign === null ? extra : extra === null ? campaign : Math.min(campaign, extra);
  }

  /** How long to sleep for a next planned send at `next` (null: none), the poll `idle` at most. */
  private untilNext(next: number | null, idle: number): number {
    return next === null ? idle : Math.min(idle, Math.max(0, next - this.o.clock.now()));
  }

  /** Sleeps up to ms, or until the dispatcher planned this mailbox or the pool stops. */
  private idle(r: SendLoop, ms: number): Promise<void> {
    // Stopping: a stop() that came while the loop was busy has already spent its wake (and the
    // loop reset `woken` before its step), so the wait would last its full time on a stop.
    if (r.woken || r.stopping) return Promise.resolve();
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
    await this.pool.stop({ afterHalt: async () => this.dispatcher?.stop() });
  }
}
