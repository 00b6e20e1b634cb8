/**
 * Timing wheel vs an indexed binary heap vs Node's setTimeout, on the scheduler's load: N timers
 * (default 1,000,000) due uniformly over the next hour, most of them cancelled before they fire
 * (the prospect replied).
 *
 *   npm run bench -- timing-wheel [--n=1000000] [--rounds=3] [--step-ms=1000] [--seed=42]
 *                                 [--churn-pending=n/5] [--churn-seconds=300]
 *
 * Per structure: insert ns/op (N inserts into a new, empty queue, growing from its default
 * capacity), cancel ns/op (all N cancelled in random order), bytes per pending timer (heapUsed +
 * external retained after full GCs, divided by N; numeric keys; typed arrays' ArrayBuffers count in
 * `external`; measured on a separate build, so no forced GC runs inside the timed rounds), and the
 * cancel-heavy mix: insert N, cancel 90% in random order, then advance through the hour in step-ms
 * steps firing the rest, timed phase by phase and reported per timer (each phase's time / N). The random
 * cancel order is laid out before the clock starts (ids copied into a shuffled array), so the timed
 * loop measures the queue's cancel, not the caller's random lookup of the id; the same for all
 * three. setTimeout is measured for insert and cancel only (unref'd; nothing waits an hour).
 * Figures are medians over the rounds, after a warm-up round; the order of wheel and heap alternates
 * between rounds, and setTimeout runs after both (its million Timeout objects would slow them).
 * Each timed loop sits inline between two clock reads, not in a closure handed to a timing helper:
 * inside a closure every queue call reads the queue and the arrays from the closure's context,
 * which was measured to add about 10 ns per cancel and per advanced timer, for both queues alike.
 *
 * The second cancel-heavy scenario, reschedule churn, is the scheduler's steady state rather than
 * one burst (src/sequence/scheduler.ts, its defaults): --churn-pending timers (default n / 5, the
 * scheduler's 200k cap at the default n) keyed by enrollment-id strings, due within a 10-minute
 * horizon, wheel tick 250 ms. Each second: timers whose prospect replied are cancelled (90% of all
 * timers, each at a random moment before it is due; a tenth of those are rescheduled instead,
 * cancel + insert within the horizon), new ones arrive at the horizon's edge, and the clock
 * advances 1 s, firing what is due; every 30 s the refill re-places every pending timer (cancel +
 * insert, in due order), as Scheduler.refill does today. --churn-seconds (default 300) of it,
 * after the initial load; then the same without the refill (replies, reschedules and arrivals
 * only), which is what the scheduler's load would be if refill skipped unchanged timers. The
 * whole sequence is generated before the clock starts (cancels name the insert whose id they
 * cancel) and replayed on each queue; the figure is the replay's time per operation, the caller's
 * id lookup (ids[i], a random read) included, and the same replay on a queue that does nothing is
 * reported as the harness's share.
 */
import { newId } from '../src/common/ids.ts';
import { seededRandom, type Random } from '../src/common/random.ts';
import { BinaryHeapTimers } from '../src/sequence/timers/binary-heap.ts';
import type { TimerId, TimerQueue } from '../src/sequence/timers/timer-queue.ts';
import { TimingWheel } from '../src/sequence/timers/timing-wheel.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, duration, int, ratio, round, table } from './lib/format.ts';
import { gcAvailable, retainedBy } from './lib/memory.ts';
import { median, percentile } from './lib/stats.ts';
import { nowNs } from './lib/time.ts';

const HOUR_MS = 3_600_000;
const CANCEL_SHARE = 0.9;
const START_MS = Date.UTC(2026, 10, 30, 9, 0);

// Reschedule churn: the scheduler's defaults (src/sequence/scheduler.ts).
const CHURN_HORIZON_MS = 10 * 60_000;
const CHURN_REFILL_MS = 30_000;
const CHURN_TICK_MS = 250;
const CHURN_STEP_MS = 1000;
/** Of the cancels, the share that reschedules (cancel + insert elsewhere in the horizon). */
const CHURN_RESCHEDULE_SHARE = 0.1;

const OP_INSERT = 0;
const OP_CANCEL = 1;
const OP_ADVANCE = 2;

/** The churn scenario as a flat sequence of operations, generated once and replayed on each queue. */
interface ChurnTrace {
  /** OP_INSERT (arg: deadline; key: keys[entity[k]]), OP_CANCEL (arg: index of the insert whose id it cancels), OP_ADVANCE (arg: now). */
  codes: Uint8Array;
  args: Float64Array;
  entity: Int32Array;
  length: number;
  inserts: number;
  cancels: number;
  advances: number;
  fires: number;
  entities: number;
  /** Pending when the replay ends (advanced through fewer than all deadlines). */
  pendingAtEnd: number;
}

class TraceWriter {
  codes = new Uint8Array(1 << 16);
  args = new Float64Array(1 << 16);
  entity = new Int32Array(1 << 16);
  length = 0;
  push(code: number, arg: number, entity: number): void {
    if (this.length === this.codes.length) {
      const grow = <T extends Uint8Array | Float64Array | Int32Array>(a: T, b: T): T => (b.set(a), b);
      this.codes = grow(this.codes, new Uint8Array(2 * this.length));
      this.args = grow(this.args, new Float64Array(2 * this.length));
      this.entity = grow(this.entity, new Int32Array(2 * this.length));
    }
    this.codes[this.length] = code;
    this.args[this.length] = arg;
    this.entity[this.length++] = entity;
  }
}

/**
 * Generates the churn sequence by simulating the scheduler's in-memory window (the model is plain
 * arrays; what fires is decided by the deadlines, not by either queue). An entity is an enrollment:
 * it keeps its key across re-placements, each of which is a new insert with a new id.
 */
function churnTrace(random: Random, pending: number, seconds: number, refill: boolean): ChurnTrace {
  const out = new TraceWriter();
  let cap = 1 << 16;
  let due = new Float64Array(cap);
  let cancelAt = new Float64Array(cap);
  let current = new Int32Array(cap); // the insert index of the entity's live timer
  let slot = new Int32Array(cap); // index in `live`, -1 once fired or cancelled for good
  let entities = 0;
  const live: number[] = [];
  const cancelBuckets: number[][] = [];
  const dueBuckets: number[][] = [];
  const bucketOf = (ms: number) => Math.ceil((ms - START_MS) / CHURN_STEP_MS);
  const addTo = (buckets: number[][], k: number, e: number) => (buckets[k] ??= []).push(e);
  let inserts = 0;
  let cancels = 0;
  let fires = 0;
  const insert = (e: number) => {
    current[e] = inserts++;
    out.push(OP_INSERT, due[e]!, e);
  };
  const decide = (e: number, now: number) => {
    cancelAt[e] = random.next() < CANCEL_SHARE ? now + random.next() * (due[e]! - now) : Infinity;
    if (cancelAt[e] !== Infinity) addTo(cancelBuckets, bucketOf(cancelAt[e]!), e);
  };
  const arrive = (dueMs: number, now: number) => {
    if (entities === cap) {
      cap *= 2;
      const g = <T extends Float64Array | Int32Array>(a: T, b: T): T => (b.set(a), b);
      due = g(due, new Float64Array(cap));
      cancelAt = g(cancelAt, new Float64Array(cap));
      current = g(current, new Int32Array(cap));
      slot = g(slot, new Int32Array(cap));
    }
    const e = entities++;
    due[e] = dueMs;
    slot[e] = live.length;
    live.push(e);
    addTo(dueBuckets, bucketOf(dueMs), e);
    decide(e, now);
    insert(e);
  };
  const drop = (e: number) => {
    const i = slot[e]!;
    const last = live.pop()!;
    if (last !== e) {
      live[i] = last;
      slot[last] = i;
    }
    slot[e] = -1;
  };
  const byDue = (a: number, b: number) => due[a]! - due[b]!;
  // The initial load: the first refill inserts the window in due order.
  const initial = Array.from({ length: pending }, () => START_MS + (1 - random.next()) * CHURN_HORIZON_MS).sort((a, b) => a - b);
  for (const d of initial) arrive(d, START_MS);
  const arrivalsPerStep = (pending * CHURN_STEP_MS) / CHURN_HORIZON_MS;
  let arrivalDebt = 0;
  for (let k = 1; k <= seconds; k++) {
    const now = START_MS + k * CHURN_STEP_MS;
    for (const e of cancelBuckets[k] ?? []) {
      if (slot[e] === -1 || bucketOf(cancelAt[e]!) !== k) continue; // fired, or a stale decision
      out.push(OP_CANCEL, current[e]!, e);
      cancels++;
      if (random.next() < CHURN_RESCHEDULE_SHARE) {
        due[e] = now + (1 - random.next()) * CHURN_HORIZON_MS;
        addTo(dueBuckets, bucketOf(due[e]!), e);
        decide(e, now);
        insert(e);
      } else {
        drop(e);
      }
    }
    for (arrivalDebt += arrivalsPerStep; arrivalDebt >= 1; arrivalDebt--) {
      arrive(now + CHURN_HORIZON_MS - random.next() * CHURN_STEP_MS, now);
    }
    if (refill && (k * CHURN_STEP_MS) % CHURN_REFILL_MS === 0) {
      for (const e of [...live].sort(byDue)) {
        out.push(OP_CANCEL, current[e]!, e);
        cancels++;
        insert(e);
      }
    }
    for (const e of dueBuckets[k] ?? []) {
      if (slot[e] === -1 || bucketOf(due[e]!) !== k) continue; // cancelled, or rescheduled
      drop(e);
      fires++;
    }
    out.push(OP_ADVANCE, now, -1);
  }
  return {
    codes: out.codes,
    args: out.args,
    entity: out.entity,
    length: out.length,
    inserts,
    cancels,
    advances: seconds,
    fires,
    entities,
    pendingAtEnd: live.length,
  };
}

/** Replays the churn sequence on q (checking its results unless it is the NullQueue); returns ns per operation. */
function replayChurn(q: TimerQueue<string>, t: ChurnTrace, keys: string[], ids: Float64Array): number {
  const { codes, args, entity } = t;
  const out: string[] = [];
  let fired = 0;
  let inserted = 0;
  let cancelled = 0;
  const t0 = nowNs();
  for (let k = 0; k < t.length; k++) {
    const code = codes[k]!;
    if (code === OP_INSERT) ids[inserted++] = q.insert(args[k]!, keys[entity[k]!]!);
    else if (code === OP_CANCEL) {
      if (q.cancel(ids[args[k]!]!)) cancelled++;
    } else {
      out.length = 0;
      q.advance(args[k]!, out);
      fired += out.length;
    }
  }
  const ns = Number(nowNs() - t0);
  if (!(q instanceof NullQueue) && (cancelled !== t.cancels || fired !== t.fires || q.size !== t.pendingAtEnd)) {
    throw new Error(`churn replay: cancelled ${cancelled}/${t.cancels}, fired ${fired}/${t.fires}, pending ${q.size}/${t.pendingAtEnd}`);
  }
  return ns / t.length;
}

/** A queue that does nothing (and fires nothing): the churn replay on it is the harness's own cost. */
class NullQueue implements TimerQueue<string> {
  private next = 0;
  private pending = 0;
  insert(): TimerId {
    this.pending++;
    return this.next++;
  }
  cancel(): boolean {
    this.pending--;
    return true;
  }
  advance(_nowMs: number, out: string[] = []): string[] {
    return out;
  }
  nextDeadline(): number | undefined {
    return undefined;
  }
  get size(): number {
    return this.pending;
  }
  clear(): void {
    this.pending = 0;
  }
}

interface Workload {
  n: number;
  deadlines: Float64Array;
  /** A random permutation of 0..n-1: the cancel order. */
  order: Int32Array;
  /** Caller-side storage for ids, allocated before any memory baseline (it is not the queue's). */
  ids: Float64Array;
  /** ids[order[j]] at j: the cancel sequence, filled between the timed phases. */
  cancelIds: Float64Array;
  stepMs: number;
}

interface QueueFigures {
  insertNs: number;
  cancelNs: number;
  bytesPerTimer: number;
  mixedNsPerTimer: number;
  /** The mix's three phases, each divided by N (not by the operations in the phase). */
  mixedInsertNsPerTimer: number;
  mixedCancelNsPerTimer: number;
  mixedAdvanceNsPerTimer: number;
  advanceP99Us: number;
  advanceMaxUs: number;
}

/** Lays out the ids of timers 0..count-1 in the cancel order; returns how many there are. */
function shuffleIds(w: Workload, count: number): number {
  let c = 0;
  for (let j = 0; j < w.n; j++) {
    const i = w.order[j]!;
    if (i < count) w.cancelIds[c++] = w.ids[i]!;
  }
  return c;
}

function insertAndCancel(make: () => TimerQueue<number>, w: Workload, count: number) {
  const { deadlines, ids, cancelIds } = w;
  const q = make();
  let t0 = nowNs();
  for (let i = 0; i < count; i++) ids[i] = q.insert(deadlines[i]!, i);
  const insertNs = Number(nowNs() - t0);
  if (q.size !== count) throw new Error(`expected ${count} pending, got ${q.size}`);
  shuffleIds(w, count);
  let cancelled = 0;
  t0 = nowNs();
  for (let j = 0; j < count; j++) if (q.cancel(cancelIds[j]!)) cancelled++;
  const cancelNs = Number(nowNs() - t0);
  if (cancelled !== count || q.size !== 0) throw new Error(`cancelled ${cancelled} of ${count}`);
  return { insertNs: insertNs / count, cancelNs: cancelNs / count };
}

/** Bytes retained per pending timer: a separate build, so forced GCs stay out of the timed rounds. */
function bytesPerTimer(make: () => TimerQueue<number>, w: Workload): number {
  const { value: q, delta } = retainedBy(() => {
    const q = make();
    for (let i = 0; i < w.n; i++) w.ids[i] = q.insert(w.deadlines[i]!, i);
    return q;
  });
  if (q.size !== w.n) throw new Error('memory build lost timers');
  q.clear();
  return delta.bytes / w.n;
}

function cancelHeavy(make: () => TimerQueue<number>, w: Workload, count: number) {
  const { deadlines, ids, cancelIds } = w;
  const toCancel = Math.floor(count * CANCEL_SHARE);
  const advanceNs: number[] = [];
  const out: number[] = [];
  let fired = 0;
  const q = make();
  let t0 = nowNs();
  for (let i = 0; i < count; i++) ids[i] = q.insert(deadlines[i]!, i);
  const insertNs = Number(nowNs() - t0);
  shuffleIds(w, count);
  t0 = nowNs();
  for (let j = 0; j < toCancel; j++) q.cancel(cancelIds[j]!);
  const cancelNs = Number(nowNs() - t0);
  t0 = nowNs();
  for (let now = START_MS + w.stepMs; now < START_MS + HOUR_MS + w.stepMs; now += w.stepMs) {
    out.length = 0;
    const a = nowNs();
    q.advance(now, out);
    advanceNs.push(Number(nowNs() - a));
    fired += out.length;
  }
  const firingNs = Number(nowNs() - t0);
  const totalNs = insertNs + cancelNs + firingNs;
  if (fired !== count - toCancel || q.size !== 0) throw new Error(`fired ${fired}, expected ${count - toCancel}`);
  return {
    mixedNsPerTimer: totalNs / count,
    mixedInsertNsPerTimer: insertNs / count,
    mixedCancelNsPerTimer: cancelNs / count,
    mixedAdvanceNsPerTimer: firingNs / count,
    advanceP99Us: percentile(advanceNs, 99) / 1e3,
    advanceMaxUs: Math.max(...advanceNs) / 1e3,
  };
}

function setTimeoutInsertAndCancel(w: Workload, count: number, handles: (NodeJS.Timeout | null)[], inOrder: (NodeJS.Timeout | null)[]) {
  const { deadlines, order } = w;
  const noop = () => undefined;
  let insertNs = 0;
  const { delta } = retainedBy(() => {
    const t0 = nowNs();
    for (let i = 0; i < count; i++) handles[i] = setTimeout(noop, deadlines[i]! - START_MS).unref();
    insertNs = Number(nowNs() - t0);
    return handles;
  });
  // Synchronous from insert to here: the event loop never turns, so none of them can fire.
  let c = 0;
  for (let j = 0; j < w.n; j++) {
    const i = order[j]!;
    if (i < count) inOrder[c++] = handles[i]!;
  }
  const t0 = nowNs();
  for (let j = 0; j < count; j++) clearTimeout(inOrder[j]!);
  const cancelNs = Number(nowNs() - t0);
  handles.fill(null);
  inOrder.fill(null);
  return { insertNs: insertNs / count, cancelNs: cancelNs / count, bytesPerTimer: delta.bytes / count };
}

interface ChurnFigures {
  ops: number;
  inserts: number;
  cancels: number;
  fires: number;
  wheel: number;
  heap: number;
  harness: number;
}

/** Generates one churn sequence and replays it on wheel, heap and the null queue; medians of ns per operation. */
function runChurn(random: Random, pending: number, seconds: number, refill: boolean, rounds: number): ChurnFigures {
  const trace = churnTrace(random.fork('trace'), pending, seconds, refill);
  const warmTrace = churnTrace(random.fork('warm'), Math.max(1, Math.floor(pending / 10)), 60, refill);
  const keyRandom = random.fork('keys');
  // Flat strings, as a database driver hands enrollment ids over.
  const keys = Array.from({ length: Math.max(trace.entities, warmTrace.entities) }, () =>
    Buffer.from(newId(START_MS, keyRandom), 'latin1').toString('latin1'),
  );
  const ids = new Float64Array(Math.max(trace.inserts, warmTrace.inserts));
  const makers: Record<'wheel' | 'heap' | 'harness', () => TimerQueue<string>> = {
    wheel: () => new TimingWheel<string>({ startMs: START_MS, tickMs: CHURN_TICK_MS }),
    heap: () => new BinaryHeapTimers<string>(),
    harness: () => new NullQueue(),
  };
  console.log(
    `\nreschedule churn${refill ? `, refill every ${CHURN_REFILL_MS / 1000} s` : ', no refill'}: ${int(pending)} pending over a ` +
      `${CHURN_HORIZON_MS / 60_000}-minute horizon, string keys, wheel tick ${CHURN_TICK_MS} ms, ${seconds} s in 1 s steps; ` +
      `${int(trace.length)} operations: ${int(trace.inserts)} inserts, ${int(trace.cancels)} cancels, ` +
      `${int(trace.advances)} advances firing ${int(trace.fires)}`,
  );
  for (const make of Object.values(makers)) replayChurn(make(), warmTrace, keys, ids);
  const ns: Record<'wheel' | 'heap' | 'harness', number[]> = { wheel: [], heap: [], harness: [] };
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? (['wheel', 'heap', 'harness'] as const) : (['heap', 'wheel', 'harness'] as const)) {
      ns[name].push(replayChurn(makers[name](), trace, keys, ids));
    }
    console.log(
      `churn round ${r + 1}: wheel ${duration(ns.wheel[r]!)}/op, heap ${duration(ns.heap[r]!)}/op ` +
        `(${ratio(ns.heap[r]! / ns.wheel[r]!)}), harness ${duration(ns.harness[r]!)}/op`,
    );
  }
  return {
    ops: trace.length,
    inserts: trace.inserts,
    cancels: trace.cancels,
    fires: trace.fires,
    wheel: median(ns.wheel),
    heap: median(ns.heap),
    harness: median(ns.harness),
  };
}

export default async function timingWheelBench(args: string[]): Promise<Record<string, unknown>> {
  const n = intFlag(args, 'n', 1_000_000);
  const rounds = intFlag(args, 'rounds', 3);
  const stepMs = intFlag(args, 'step-ms', 1000);
  const seed = flag(args, 'seed') ?? '42';
  const random = seededRandom(seed);
  const deadlines = new Float64Array(n);
  for (let i = 0; i < n; i++) deadlines[i] = START_MS + Math.floor(random.next() * HOUR_MS);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = random.int(0, i);
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  const w: Workload = { n, deadlines, order, ids: new Float64Array(n), cancelIds: new Float64Array(n), stepMs };

  const makers: Record<'wheel' | 'heap', () => TimerQueue<number>> = {
    wheel: () => new TimingWheel<number>({ startMs: START_MS }),
    heap: () => new BinaryHeapTimers<number>(),
  };
  console.log(
    `timing-wheel: n=${int(n)}, deadlines uniform over 1 h, cancel-heavy mix cancels ${CANCEL_SHARE * 100}%, ` +
      `advance every ${stepMs} ms; wheel tick 100 ms, 3 levels x 256 slots; ${rounds} rounds after a warm-up; ` +
      `node ${process.version}, gc ${gcAvailable() ? 'exposed' : 'NOT exposed (bytes are NaN)'}`,
  );
  if (n < 1_000_000) console.log('note: below the default n one GC pause or scheduler hiccup can swamp a round; bytes below 100,000 are noise');

  // Warm-up: the same code paths on a tenth of the load, so the rounds measure optimised code.
  const warm = Math.max(1, Math.floor(n / 10));
  for (const make of Object.values(makers)) {
    insertAndCancel(make, w, warm);
    cancelHeavy(make, w, warm);
  }

  const runs: Record<'wheel' | 'heap', QueueFigures[]> = { wheel: [], heap: [] };
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? (['wheel', 'heap'] as const) : (['heap', 'wheel'] as const)) {
      runs[name].push({ ...insertAndCancel(makers[name], w, n), ...cancelHeavy(makers[name], w, n), bytesPerTimer: 0 });
    }
    const [wr, hr] = [runs.wheel[r]!, runs.heap[r]!];
    console.log(
      `round ${r + 1}: cancel-heavy mix wheel ${duration(wr.mixedNsPerTimer)}/timer, heap ${duration(hr.mixedNsPerTimer)}/timer ` +
        `(${ratio(hr.mixedNsPerTimer / wr.mixedNsPerTimer)}); insert wheel ${duration(wr.insertNs)}, heap ${duration(hr.insertNs)}; ` +
        `cancel wheel ${duration(wr.cancelNs)}, heap ${duration(hr.cancelNs)}`,
    );
  }

  // Memory after the timed rounds, each structure built once more and measured after full GCs.
  for (const name of ['wheel', 'heap'] as const) {
    const bytes = bytesPerTimer(makers[name], w);
    for (const run of runs[name]) run.bytesPerTimer = bytes;
  }
  const med = (xs: QueueFigures[], k: keyof QueueFigures) => median(xs.map((x) => x[k]));
  const wheel = {
    insert: med(runs.wheel, 'insertNs'),
    cancel: med(runs.wheel, 'cancelNs'),
    bytes: med(runs.wheel, 'bytesPerTimer'),
    mixed: med(runs.wheel, 'mixedNsPerTimer'),
    mixInsert: med(runs.wheel, 'mixedInsertNsPerTimer'),
    mixCancel: med(runs.wheel, 'mixedCancelNsPerTimer'),
    mixAdvance: med(runs.wheel, 'mixedAdvanceNsPerTimer'),
    p99: med(runs.wheel, 'advanceP99Us'),
    max: med(runs.wheel, 'advanceMaxUs'),
  };
  const heap = {
    insert: med(runs.heap, 'insertNs'),
    cancel: med(runs.heap, 'cancelNs'),
    bytes: med(runs.heap, 'bytesPerTimer'),
    mixed: med(runs.heap, 'mixedNsPerTimer'),
    mixInsert: med(runs.heap, 'mixedInsertNsPerTimer'),
    mixCancel: med(runs.heap, 'mixedCancelNsPerTimer'),
    mixAdvance: med(runs.heap, 'mixedAdvanceNsPerTimer'),
    p99: med(runs.heap, 'advanceP99Us'),
    max: med(runs.heap, 'advanceMaxUs'),
  };
  // String keys: the wheel stores a pointer per key; the strings exist anyway (the enrollment ids
  // the scheduler holds), so they are made before the baseline and not counted. Their own size is
  // reported next to it for context. Measured last: a second key type would make the JIT see a
  // polymorphic keys array in the rounds above.
  // Flat strings, as a database driver would hand them over (newId builds them by concatenation).
  const strings = retainedBy(() =>
    Array.from({ length: n }, () => Buffer.from(newId(START_MS, random), 'latin1').toString('latin1')),
  );
  const stringKeyed = retainedBy(() => {
    const q = new TimingWheel<string>({ startMs: START_MS });
    for (let i = 0; i < n; i++) q.insert(deadlines[i]!, strings.value[i]!);
    return q;
  });
  const wheelStringBytes = stringKeyed.delta.bytes / n;
  const uuidStringBytes = strings.delta.bytes / n;
  stringKeyed.value.clear();

  // Reschedule churn, string keys: after the numeric rounds for the same reason as the memory
  // figure above. Twice: as Scheduler.refill works today (every pending timer re-placed every
  // 30 s), and with replies, reschedules and arrivals only.
  const churnPending = intFlag(args, 'churn-pending', Math.max(1, Math.floor(n / 5)));
  const churnSeconds = intFlag(args, 'churn-seconds', 300);
  const churnWith = runChurn(random.fork('churn'), churnPending, churnSeconds, true, rounds);
  const churnWithout = runChurn(random.fork('churn-no-refill'), churnPending, churnSeconds, false, rounds);

  // setTimeout last: a million Timeout objects leave the process's heap and Node's timer lists in a
  // state that slows whatever is measured after them.
  const handles: (NodeJS.Timeout | null)[] = Array.from({ length: n }, () => null);
  const inOrder: (NodeJS.Timeout | null)[] = Array.from({ length: n }, () => null);
  setTimeoutInsertAndCancel(w, warm, handles, inOrder);
  const st: { insertNs: number; cancelNs: number; bytesPerTimer: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    st.push(setTimeoutInsertAndCancel(w, n, handles, inOrder));
    console.log(`setTimeout round ${r + 1}: insert ${duration(st[r]!.insertNs)}, clearTimeout ${duration(st[r]!.cancelNs)}`);
  }
  const timeout = {
    insert: median(st.map((x) => x.insertNs)),
    cancel: median(st.map((x) => x.cancelNs)),
    bytes: median(st.map((x) => x.bytesPerTimer)),
  };
  const stPair = timeout.insert + timeout.cancel;
  const wheelPair = wheel.insert + wheel.cancel;
  console.log(
    '\n' +
      table([
        ['', 'insert', 'cancel', 'insert+cancel', 'mix (ins/cancel/advance)', 'advance p99', 'advance max', 'bytes/timer'],
        ...(
          [
            ['timing wheel', wheel],
            ['binary heap', heap],
          ] as const
        ).map(([label, f]) => [
          label,
          duration(f.insert),
          duration(f.cancel),
          duration(f.insert + f.cancel),
          `${duration(f.mixed)} (${f.mixInsert.toFixed(0)}/${f.mixCancel.toFixed(0)}/${f.mixAdvance.toFixed(0)})`,
          duration(f.p99 * 1e3),
          duration(f.max * 1e3),
          f.bytes.toFixed(1),
        ]),
        ['setTimeout', duration(timeout.insert), duration(timeout.cancel), duration(stPair), '-', '-', '-', timeout.bytes.toFixed(1)],
      ]),
  );
  console.log(
    `\nwheel vs heap: insert ${ratio(heap.insert / wheel.insert)}, cancel ${ratio(heap.cancel / wheel.cancel)}, ` +
      `cancel-heavy mix ${ratio(heap.mixed / wheel.mixed)} faster (target >= 5x)`,
  );
  for (const [label, c] of [
    ['refill every 30 s', churnWith],
    ['no refill', churnWithout],
  ] as const) {
    console.log(
      `reschedule churn, ${label}: wheel ${duration(c.wheel)}/op, heap ${duration(c.heap)}/op, harness ${duration(c.harness)}/op: ` +
        `${ratio(c.heap / c.wheel)} faster, ${ratio((c.heap - c.harness) / (c.wheel - c.harness))} without the harness`,
    );
  }
  console.log(`wheel vs setTimeout: insert+cancel ${ratio(stPair / wheelPair)} faster, ${ratio(timeout.bytes / wheel.bytes)} less memory`);
  console.log(
    `wheel bytes per pending timer: ${wheel.bytes.toFixed(1)} with numeric keys (target < 100), ` +
      `${wheelStringBytes.toFixed(1)} with string keys not counting the strings (a 36-char UUID string is ${bytes(uuidStringBytes)} more, the caller's)`,
  );

  return {
    n,
    rounds,
    step_ms: stepMs,
    node: process.version,
    wheel_insert_ns: round(wheel.insert),
    wheel_cancel_ns: round(wheel.cancel),
    wheel_mixed_ns_per_timer: round(wheel.mixed),
    wheel_mixed_insert_phase_ns_per_timer: round(wheel.mixInsert),
    wheel_mixed_cancel_phase_ns_per_timer: round(wheel.mixCancel),
    wheel_mixed_advance_phase_ns_per_timer: round(wheel.mixAdvance),
    wheel_advance_p99_us: round(wheel.p99),
    wheel_advance_max_us: round(wheel.max),
    wheel_bytes_per_timer: round(wheel.bytes),
    wheel_bytes_per_timer_string_keys_excluding_strings: round(wheelStringBytes),
    uuid_string_bytes: round(uuidStringBytes),
    heap_insert_ns: round(heap.insert),
    heap_cancel_ns: round(heap.cancel),
    heap_mixed_ns_per_timer: round(heap.mixed),
    heap_mixed_insert_phase_ns_per_timer: round(heap.mixInsert),
    heap_mixed_cancel_phase_ns_per_timer: round(heap.mixCancel),
    heap_mixed_advance_phase_ns_per_timer: round(heap.mixAdvance),
    heap_advance_p99_us: round(heap.p99),
    heap_advance_max_us: round(heap.max),
    heap_bytes_per_timer: round(heap.bytes),
    settimeout_insert_ns: round(timeout.insert),
    settimeout_cancel_ns: round(timeout.cancel),
    settimeout_insert_cancel_ns: round(stPair),
    settimeout_bytes_per_timer: round(timeout.bytes),
    ratio_heap_over_wheel_insert: round(heap.insert / wheel.insert, 2),
    ratio_heap_over_wheel_cancel: round(heap.cancel / wheel.cancel, 2),
    ratio_heap_over_wheel_mixed: round(heap.mixed / wheel.mixed, 2),
    churn_pending: churnPending,
    churn_seconds: churnSeconds,
    churn_refill_ops: churnWith.ops,
    churn_refill_inserts: churnWith.inserts,
    churn_refill_cancels: churnWith.cancels,
    churn_refill_fires: churnWith.fires,
    wheel_churn_refill_ns_per_op: round(churnWith.wheel),
    heap_churn_refill_ns_per_op: round(churnWith.heap),
    harness_churn_refill_ns_per_op: round(churnWith.harness),
    ratio_heap_over_wheel_churn_refill: round(churnWith.heap / churnWith.wheel, 2),
    ratio_heap_over_wheel_churn_refill_excluding_harness: round((churnWith.heap - churnWith.harness) / (churnWith.wheel - churnWith.harness), 2),
    churn_no_refill_ops: churnWithout.ops,
    churn_no_refill_inserts: churnWithout.inserts,
    churn_no_refill_cancels: churnWithout.cancels,
    churn_no_refill_fires: churnWithout.fires,
    wheel_churn_no_refill_ns_per_op: round(churnWithout.wheel),
    heap_churn_no_refill_ns_per_op: round(churnWithout.heap),
    harness_churn_no_refill_ns_per_op: round(churnWithout.harness),
    ratio_heap_over_wheel_churn_no_refill: round(churnWithout.heap / churnWithout.wheel, 2),
    ratio_heap_over_wheel_churn_no_refill_excluding_harness: round(
      (churnWithout.heap - churnWithout.harness) / (churnWithout.wheel - churnWithout.harness),
      2,
    ),
    ratio_settimeout_over_wheel_insert_cancel: round(stPair / wheelPair, 2),
    ratio_settimeout_over_wheel_bytes: round(timeout.bytes / wheel.bytes, 2),
    target_mixed_5x_met: heap.mixed / wheel.mixed >= 5,
    target_bytes_under_100_met: wheel.bytes < 100,
  };
}
