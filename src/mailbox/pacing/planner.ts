/**
 * The planner: gives each queued send request the instant it will be sent, for many mailboxes at
 * once, with no I/O. The store side (dispatch/plan.ts) loads the inputs and writes the result.
 *
 * Each mailbox walks forward through time on its own (a 10-mailbox pool sends ten times what one
 * mailbox sends); all of them advance together in time order through one heap, so the caps they
 * share (a sequence's, a workspace's) go to the earliest slots whichever mailbox owns them.
 *
 * A mailbox at instant t:
 *   1. t is moved to the mailbox's next open instant (bucket.ts: working day, lunch, daily cap in
 *      its local day, rolling-hour ceiling, the drawn gap after its last send).
 *   2. Of its requests that are due at t, inside their prospect's send window at t (the calendar's
 *      slots, holidays included) and whose sequence and workspace still have room on t's day, the
 *      one due first is placed at t; the next gap is drawn and the mailbox moves on.
 *   3. When none can go at t, the mailbox waits for the earliest moment one can (a due time, a
 *      window opening, the next day of a capped sequence), plus a short seeded "pickup" delay so
 *      that sends do not leave on the exact minute a window opens, and goes back to 1.
 * A request that finds no slot within the horizon is left unplaced, with a note saying why; it is
 * never dropped and never piled onto a later moment: every placed send has passed every check.
 *
 * Guarantees (property-tested in planner.property.test.ts): per mailbox, sends on a local day ≤
 * that day's cap; sends in any rolling hour ≤ the day's ceiling; two sends at least gapMin apart;
 * each send inside the mailbox's working day (not at lunch) and inside its prospect's window, at or
 * after its due time; per shared cap, sends on a local day ≤ the cap; the same input gives the
 * same plan.
 */
import { slotFrom, type Slot } from '../../calendar/allowed.ts';
import { contextOf, type CalendarContext } from '../../calendar/context.ts';
import type { CalendarSpec } from '../../calendar/index.ts';
import { MailboxBucket, type MailboxPacing } from './bucket.ts';
import { unit } from './draw.ts';
import { MinHeap } from './heap.ts';
import { LocalDays } from './local-day.ts';

export interface PlanRequest {
  id: string;
  mailboxId: string;
  dueAt: number;
  sequenceId: string;
  /** The prospect's calendar: zone, the sequence's window, holidays (calendarFor in sequence/plan.ts). */
  calendar: CalendarSpec;
}

export interface PlanMailbox {
  pacing: MailboxPacing;
  workspaceId: string;
  /** Why the mailbox may not send (paused, error), or null. A blocked mailbox gets no slot. */
  blocked: string | null;
  /** Instants of the sends the store already counts for this mailbox (at least since the start of yesterday). */
  counted: number[];
}

/** A cap shared by several mailboxes (a sequence's or a workspace's), counted per local day of `zone`. */
export interface SharedCap {
  zone: string;
  cap: number;
  /** Sends already counted or planned outside this plan, by local day number of `zone`. */
  used: Map<number, number>;
}

export interface PlanInput {
  now: number;
  /** Local days of each mailbox to plan, today included. */
  horizonDays: number;
  mailboxes: PlanMailbox[];
  requests: PlanRequest[];
  workspaceCaps?: Map<string, SharedCap>;
  sequenceCaps?: Map<string, SharedCap>;
}

export interface PlanResult {
  /** Request id → planned send instant. */
  slots: Map<string, number>;
  /** Request id → why it has no slot within the horizon. */
  unplaced: Map<string, string>;
  /** Requests decided (placed or not). */
  decisions: number;
}

class SharedBudget {
  private readonly days: LocalDays;
  private readonly used: Map<number, number>;

  constructor(readonly c: SharedCap) {
    this.days = new LocalDays(c.zone);
    this.used = new Map(c.used);
  }

  left(t: number): number {
    return this.c.cap - (this.used.get(this.days.dayOf(t)) ?? 0);
  }

  take(t: number): void {
    const d = this.days.dayOf(t);
    this.used.set(d, (this.used.get(d) ?? 0) + 1);
  }

  nextDay(t: number): number {
    return this.days.start(this.days.dayOf(t) + 1);
  }
}

/** A mailbox's requests that share one prospect calendar and one sequence, oldest due first. */
class Group {
  readonly queue: PlanRequest[] = [];
  head = 0;
  assigned = 0;
  private slot: Slot | null | undefined;
  private slotQuery = -Infinity;

  constructor(
    readonly ctx: CalendarContext,
    readonly seq: SharedBudget | null,
    private readonly searchDays: number,
  ) {}

  get live(): boolean {
    return this.head < this.queue.length;
  }

  /** The first window slot that ends after x (it contains x or comes next); null: none within the horizon. */
  slotAt(x: number): Slot | null {
    // Queries mostly move forward, so the last slot answers most of them.
    if (this.slot !== undefined && x >= this.slotQuery && (this.slot === null || x < this.slot.end)) return this.slot;
    this.slot = slotFrom(this.ctx, x, this.searchDays);
    this.slotQuery = x;
    return this.slot;
  }

  eligibleAt(t: number): boolean {
    const r = this.queue[this.head]!;
    if (r.dueAt > t) return false;
    if (this.seq && this.seq.left(t) <= 0) return false;
    const s = this.slotAt(t);
    return s !== null && s.start <= t;
  }

  /** The earliest instant > t at which the head request could go (ignoring the mailbox); Infinity if none. */
  nextEligible(t: number): number {
    let x = Math.max(this.queue[this.head]!.dueAt, t);
    for (let i = 0; i < 1000; i++) {
      const s = this.slotAt(x);
      if (s === null) return Infinity;
      if (s.start > x) x = s.start;
      if (this.seq && this.seq.left(x) <= 0) {
        x = this.seq.nextDay(x);
        continue;
      }
      return x > t ? x : t + 1;
    }
    return Infinity;
  }
}

interface Cursor {
  id: string;
  bucket: MailboxBucket;
  groups: Group[];
  live: number;
  t: number;
  until: number;
  ws: SharedBudget | null;
}

function byDue(a: PlanRequest, b: PlanRequest): number {
  return a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** After groups[i] gave up its head: drop it when empty, else move it right to its new place. */
function reposition(groups: Group[], i: number): void {
  const g = groups[i]!;
  if (!g.live) {
    groups.splice(i, 1);
    return;
  }
  const head = g.queue[g.head]!;
  let j = i;
  while (j + 1 < groups.length) {
    const n = groups[j + 1]!;
    if (byDue(n.queue[n.head]!, head) >= 0) break;
    groups[j] = n;
    j++;
  }
  groups[j] = g;
}

function groupKey(r: PlanRequest): string {
  const c = r.calendar;
  return `${r.sequenceId}\u0001${c.zone}\u0001${c.country ?? ''}\u0001${c.region ?? ''}\u0001${c.skipHolidays ? 1 : 0}`;
}

export function planSends(input: PlanInput): PlanResult {
  const { now, horizonDays } = input;
  const slots = new Map<string, number>();
  const unplaced = new Map<string, string>();
  let decisions = 0;
  const searchDays = horizonDays + 2;

  const wsBudgets = new Map<string, SharedBudget>();
  for (const [id, c] of input.workspaceCaps ?? []) wsBudgets.set(id, new SharedBudget(c));
  const seqBudgets = new Map<string, SharedBudget>();
  for (const [id, c] of input.sequenceCaps ?? []) seqBudgets.set(id, new SharedBudget(c));

  const byMailbox = new Map<string, PlanRequest[]>();
  for (const r of input.requests) {
    let list = byMailbox.get(r.mailboxId);
    if (!list) byMailbox.set(r.mailboxId, (list = []));
    list.push(r);
  }
  const leave = (reqs: Iterable<PlanRequest>, note: string) => {
    for (const r of reqs) {
      unplaced.set(r.id, note);
      decisions++;
    }
  };

  const heap = new MinHeap<Cursor>((a, b) => a.t < b.t || (a.t === b.t && a.id < b.id));
  const known = new Set<string>();
  for (const m of input.mailboxes) {
    const id = m.pacing.id;
    if (known.has(id)) continue; // listed twice: one cursor per mailbox
    known.add(id);
    const reqs = byMailbox.get(id);
    if (!reqs || reqs.length === 0) continue;
    if (m.blocked !== null) {
      leave(reqs, `mailbox ${m.blocked}`);
      continue;
    }
    const bucket = new MailboxBucket(m.pacing, m.counted);
    const groups = new Map<string, Group>();
    const contexts = new Map<string, CalendarContext | Error>();
    let live = 0;
    for (const r of reqs) {
      if (!Number.isFinite(r.dueAt)) {
        leave([r], `invalid due time ${String(r.dueAt)}`);
        continue;
      }
      const key = groupKey(r);
      let g = groups.get(key);
      if (!g) {
        let ctx = contexts.get(key);
        if (ctx === undefined) {
          try {
            ctx = contextOf(r.calendar);
          } catch (e) {
            ctx = e as Error;
          }
          contexts.set(key, ctx);
        }
        if (ctx instanceof Error) {
          leave([r], `cannot read the prospect's calendar: ${ctx.message}`);
          continue;
        }
        g = new Group(ctx, seqBudgets.get(r.sequenceId) ?? null, searchDays);
        groups.set(key, g);
      }
      g.queue.push(r);
      live++;
    }
    if (live === 0) continue;
    for (const g of groups.values()) g.queue.sort(byDue);
    const sorted = [...groups.values()].sort((a, b) => byDue(a.queue[0]!, b.queue[0]!));
    const until = bucket.days.start(bucket.days.dayOf(now) + horizonDays);
    heap.push({ id, bucket, groups: sorted, live, t: bucket.nextOpen(now, until), until, ws: wsBudgets.get(m.workspaceId) ?? null });
  }
  for (const [id, reqs] of byMailbox) if (!known.has(id)) leave(reqs, 'mailbox not found');

  const finish = (c: Cursor) => {
    for (const g of c.groups) {
      const rest = g.queue.slice(g.head);
      g.head = g.queue.length;
      const never = g.slotAt(now) === null;
      leave(
        rest,
        never
          ? `the prospect's send window does not open within ${horizonDays} days`
          : g.assigned === 0
            ? `no slot within ${horizonDays} days where the prospect's send window meets the mailbox's working day with room under its caps`
            : `no free slot within ${horizonDays} days under the mailbox's caps (requests ahead of it take the slots)`,
      );
    }
  };

  for (;;) {
    const c = heap.pop();
    if (!c) break;
    const t = c.t;
    if (!(t < c.until)) {
      finish(c);
      continue;
    }
    if (c.ws && c.ws.left(t) <= 0) {
      c.t = c.bucket.nextOpen(c.ws.nextDay(t), c.until);
      heap.push(c);
      continue;
    }
    // c.groups is kept in the order of their head requests (due time, id), so the first eligible
    // group holds the request to send, and the scan stops at the first head not yet due.
    let bestAt = -1;
    for (let i = 0; i < c.groups.length; i++) {
      const g = c.groups[i]!;
      if (g.queue[g.head]!.dueAt > t) break;
      if (g.eligibleAt(t)) {
        bestAt = i;
        break;
      }
    }
    if (bestAt >= 0) {
      const best = c.groups[bestAt]!;
      const r = best.queue[best.head++]!;
      reposition(c.groups, bestAt);
      best.assigned++;
      slots.set(r.id, t);
      decisions++;
      c.live--;
      c.bucket.record(t);
      c.ws?.take(t);
      best.seq?.take(t);
      if (c.live === 0) continue;
      c.t = c.bucket.nextOpen(t, c.until);
      heap.push(c);
      continue;
    }
    let next = Infinity;
    for (const g of c.groups) next = Math.min(next, g.nextEligible(t));
    if (next === Infinity || next >= c.until) {
      finish(c);
      continue;
    }
    // A person notices the new work a little after it arrives.
    const pickup = Math.floor(unit(`${c.id}:${next}:pickup`) * c.bucket.mb.pacing.pickupMs);
    c.t = c.bucket.nextOpen(next + pickup, c.until);
    heap.push(c);
  }
  return { slots, unplaced, decisions };
}

