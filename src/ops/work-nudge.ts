import { coalesce } from '../common/coalesce.ts';
import type { PushBus, PushMessage } from './push-bus.ts';

/**
 * What became due now:
 *   enrollments  enrollments were created, resumed or moved with a step due now or soon: the
 *                scheduler should read the store at once (a refill and a firing pass) instead of at
 *                its next 30 s refill;
 *   requests     the scheduler queued send requests: the dispatcher should plan them at once
 *                instead of at its next 30 s pass;
 *   mailboxes    a mailbox was connected, resumed or given new credentials: the sender and sync
 *                pools should take its leases at once instead of at their next 20 s balance (and
 *                the dispatcher plan a resumed mailbox's parked queue);
 *   credentials  a credential task was written (a mailbox test, a reply from the inbox, a grant to
 *                revoke: sending/credential-tasks/): the sender role's task runner takes it now.
 *
 * And, the other way, a task done: the API request waiting for that task answers at once.
 */
export type WorkKind = 'enrollments' | 'requests' | 'mailboxes' | 'credentials';

/** Mailbox ids per 'planned' message: 150 UUIDs in JSON are about 6,000 bytes. */
const PLANNED_CHUNK = 150;

/**
 * Nudges remove polling latency, nothing else: a nudged pass is the same pass the timers run, so
 * caps, gaps and working windows still decide when a message leaves. This process's listeners hear
 * a nudge at once; other processes hear it through the push bus (PostgreSQL LISTEN/NOTIFY,
 * push-bus.ts). A NOTIFY lost with the bus's connection is made up by catchUp() once it listens
 * again; any other lost NOTIFY costs one polling interval, as before.
 *
 * Publishing is coalesced per kind (one NOTIFY in flight plus one queued), and so is each
 * listener's pass (Scheduler.nudge, Dispatcher.nudge): a storm of API calls costs a few passes.
 */
export class WorkNudges {
  private readonly listeners = new Map<WorkKind, Set<() => void>>();
  private readonly pullListeners = new Set<(mailboxId: string) => void>();
  private readonly doneListeners = new Set<(taskId: string) => void>();
  private readonly plannedListeners = new Set<(mailboxIds: string[]) => void>();
  private readonly publish: Record<WorkKind, () => Promise<void>>;

  constructor(private readonly o: { origin: string; bus?: PushBus; onError?: (e: unknown) => void }) {
    const publish = (work: WorkKind) => coalesce(async () => o.bus?.publish({ origin: o.origin, kind: 'work', work }), o.onError);
    this.publish = { enrollments: publish('enrollments'), requests: publish('requests'), mailboxes: publish('mailboxes'), credentials: publish('credentials') };
    o.bus?.subscribe((m) => {
      if (m.kind === 'work' && m.origin !== o.origin) this.tell(m.work);
      if (m.kind === 'pull' && m.origin !== o.origin) for (const fn of this.pullListeners) fn(m.mailboxId);
      if (m.kind === 'task_done' && m.origin !== o.origin) for (const fn of this.doneListeners) fn(m.taskId);
      if (m.kind === 'planned' && m.origin !== o.origin) for (const fn of this.plannedListeners) fn(m.mailboxIds);
    });
  }

  /**
   * One mailbox should be pulled now (the sender's mailbox last look found a lead's mail its sync
   * has not read): its sync owner, here or in another process, pulls at once. Not coalesced: it
   * happens only on such a hit, and a pull already in flight absorbs a second one (MailboxLoop).
   */
  pull(mailboxId: string): void {
    this.announce(this.pullListeners, mailboxId, { origin: this.o.origin, kind: 'pull', mailboxId });
  }

  /**
   * A dispatcher here gave these mailboxes new slots: the processes that own their send loops wake
   * them (this process's own loops were woken by its pool). Without it, a loop owned elsewhere
   * would see a slot sooner than its wait only at its next poll. In messages of PLANNED_CHUNK ids,
   * under NOTIFY's 8,000-byte payload.
   */
  planned(mailboxIds: string[]): void {
    if (!this.o.bus) return;
    for (let i = 0; i < mailboxIds.length; i += PLANNED_CHUNK) {
      void this.o.bus.publish({ origin: this.o.origin, kind: 'planned', mailboxIds: mailboxIds.slice(i, i + PLANNED_CHUNK) }).catch((e: unknown) => this.o.onError?.(e));
    }
  }

  onPlanned(fn: (mailboxIds: string[]) => void): () => void {
    this.plannedListeners.add(fn);
    return () => this.plannedListeners.delete(fn);
  }

  onPull(fn: (mailboxId: string) => void): () => void {
    return listen(this.pullListeners, fn);
  }

  /**
   * A credential task was carried out: the request waiting for it, here or in another process,
   * answers now. Not coalesced: one per task, and each names its own.
   */
  taskDone(taskId: string): void {
    this.announce(this.doneListeners, taskId, { origin: this.o.origin, kind: 'task_done', taskId });
  }

  onTaskDone(fn: (taskId: string) => void): () => void {
    return listen(this.doneListeners, fn);
  }

  /** One named event: this process's listeners at once, the others' through the bus. */
  private announce(listeners: Set<(id: string) => void>, id: string, m: PushMessage): void {
    for (const fn of listeners) fn(id);
    if (this.o.bus) void this.o.bus.publish(m).catch((e: unknown) => this.o.onError?.(e));
  }

  /** Work of this kind is due now: wake this process's listeners, and other processes'. */
  nudge(work: WorkKind): void {
    this.tell(work);
    if (this.o.bus) void this.publish[work]();
  }

  /**
   * Every kind, in this process only: the push bus lost its connection, so nudges from other
   * processes may have been lost meanwhile; the passes they would have run run now.
   */
  catchUp(): void {
    for (const work of ['enrollments', 'requests', 'mailboxes', 'credentials'] as const) this.tell(work);
  }

  on(work: WorkKind, fn: () => void): () => void {
    let set = this.listeners.get(work);
    if (!set) this.listeners.set(work, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  private tell(work: WorkKind): void {
    for (const fn of this.listeners.get(work) ?? []) fn();
  }
}

function listen(set: Set<(id: string) => void>, fn: (id: string) => void): () => void {
  set.add(fn);
  return () => set.delete(fn);
}
