/**
 * Timing wheel vs an indexed binary heap (and Node's setTimeout), on the scheduler's load: timers
 * due uniformly over the next hour, most of them cancelled before they fire (the prospect replied),
 * at each size from 10,000 to --max pending timers (10,000,000 by default: the full run needs about
 * 2 GB of memory; --max=1000000 for a quick one).
 *
 *   npm run bench -- timing-wheel [--max=10000000] [--min=10000] [--rounds=3] [--step-ms=1000] [--seed=42]
 *                                 [--churn-pending=200000] [--churn-seconds=300]
 *
 * At each size N, the cancel-heavy mix: insert N into a new queue, cancel 90% in random order,
 * advance through the hour in step-ms steps firing the rest. Reported per operation: insert (per
 * insert), cancel (per cancel), fire (the advance phase per fired timer), and the whole mix per
 * timer; sizes below a million repeat the mix on new queues until it covers about a million
 * timers. Wheel and heap run in the same rounds (bench/lib/rounds.ts: interleaved, the first one
 * alternating), each figure the median over the rounds with its min–max, the heap/wheel ratio
 * taken within each round. Times are the process's CPU time (process.cpuUsage around each phase,
 * GC threads included), not wall time: on a shared machine wall time includes the neighbours'
 * slices. Bytes per pending timer (heapUsed + external retained after full GCs, numeric keys) and
 * advance() latency (wall clock, one separate pass) are measured at each size outside the rounds.
 * The cancel order is laid out before the clock starts (ids copied into a shuffled array), so
 * the timed loop measures the queue's cancel, not the caller's random lookup of the id. Each timed
 * loop sits inline between two clock reads, not in a closure handed to a timing helper: inside a
 * closure every queue call reads the queue and the arrays from the closure's context, which was
 * measured to add about 10 ns per cancel and per advanced timer, for both queues alike.
 *
 * The second cancel-heavy scenario, reschedule churn, is the scheduler's steady state rather than
 * one burst (src/sequence/scheduler.ts, its defaults): --churn-pending timers (default 200,000,
 * the scheduler's cap) keyed by enrollment-id strings, due within a 10-minute
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
 * reported as the harness's share. setTimeout runs last, at up to a million timers.
 */
import { newId } from '../src/common/ids.ts';
import { seededRandom, type Random } from '../src/common/random.ts';
import { BinaryHeapTimers } from '../src/sequence/timers/binary-heap.ts';
import type { TimerId, TimerQueue } from '../src/sequence/timers/timer-queue.ts';
import { TimingWheel } from '../src/sequence/timers/timing-wheel.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, duration, int, ratio, round, table } from './lib/format.ts';
import { gcAvailable, retainedBy } from './lib/memory.ts';
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spread, spreadFigures, type Figures, type RoundsResult } from './lib/rounds.ts';
import { median, percentile } from './lib/stats.ts';
import { cpuNs, nowNs } from './lib/time.ts';

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
  const t0 = cpuNs();
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
  const ns = cpuNs() - t0;
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

/** One size's load: N deadlines uniform over the hour and a random cancel order, made before any clock starts. */
interface Workload {
  n: number;
  deadlines: Float64Array;
  /** A random permutation of 0..n-1: the cancel order. */
  order: Int32Array;
  /** Caller-side storage for ids (not the queue's memory). */
  ids: Float64Array;
  /** ids[order[j]] at j: the cancel sequence, laid out between the timed phases. */
  cancelIds: Float64Array;
  stepMs: number;
}

function workload(random: Random, n: number, stepMs: number): Workload {
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
  return { n, deadlines, order, ids: new Float64Array(n), cancelIds: new Float64Array(n), stepMs };
}

/**
 * The cancel-heavy mix at one size, repeated `reps` times on a new queue each time (small sizes
 * repeat so that each figure covers about a million timers): insert N, cancel 90% in random order,
 * advance through the hour in stepMs steps firing the rest. Each phase is timed inline, between
 * two readings of the process's CPU time (see the header). Per operation: insert (per insert),
 * cancel (per cancel), fire (the advance phase per fired timer: it also sweeps the cancelled
 * entries and walks the empty slots), and the whole mix per timer.
 */
function cancelHeavy(make: () => TimerQueue<number>, w: Workload, reps: number): Figures {
  const { n, deadlines, ids, cancelIds, order } = w;
  const toCancel = Math.floor(n * CANCEL_SHARE);
  const out: number[] = [];
  let insertNs = 0;
  let cancelNs = 0;
  let firingNs = 0;
  for (let rep = 0; rep < reps; rep++) {
    let fired = 0;
    const q = make();
    let t0 = cpuNs();
    for (let i = 0; i < n; i++) ids[i] = q.insert(deadlines[i]!, i);
    insertNs += cpuNs() - t0;
    for (let j = 0; j < toCancel; j++) cancelIds[j] = ids[order[j]!]!;
    t0 = cpuNs();
    for (let j = 0; j < toCancel; j++) q.cancel(cancelIds[j]!);
    cancelNs += cpuNs() - t0;
    t0 = cpuNs();
    for (let now = START_MS + w.stepMs; now < START_MS + HOUR_MS + w.stepMs; now += w.stepMs) {
      out.length = 0;
      q.advance(now, out);
      fired += out.length;
    }
    firingNs += cpuNs() - t0;
    if (fired !== n - toCancel || q.size !== 0) throw new Error(`fired ${fired}, expected ${n - toCancel}`);
  }
  const timers = n * reps;
  return {
    insert_ns: insertNs / timers,
    cancel_ns: cancelNs / (toCancel * reps),
    fire_ns: firingNs / ((n - toCancel) * reps),
    mix_ns_per_timer: (insertNs + cancelNs + firingNs) / timers,
  };
}

/** The same mix once, each advance() call timed on the wall clock (its latency), apart from the figures above. */
function advanceLatency(make: () => TimerQueue<number>, w: Workload): { p99Us: number; maxUs: number } {
  const q = make();
  for (let i = 0; i < w.n; i++) w.ids[i] = q.insert(w.deadlines[i]!, i);
  const toCancel = Math.floor(w.n * CANCEL_SHARE);
  for (let j = 0; j < toCancel; j++) q.cancel(w.ids[w.order[j]!]!);
  const out: number[] = [];
  const ns: number[] = [];
  for (let now = START_MS + w.stepMs; now < START_MS + HOUR_MS + w.stepMs; now += w.stepMs) {
    out.length = 0;
    const a = nowNs();
    q.advance(now, out);
    ns.push(Number(nowNs() - a));
  }
  return { p99Us: percentile(ns, 99) / 1e3, maxUs: Math.max(...ns) / 1e3 };
}

/** Bytes retained per pending timer at size N: a separate build, so forced GCs stay out of the timed rounds. */
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

function setTimeoutInsertAndCancel(w: Workload, handles: (NodeJS.Timeout | null)[], inOrder: (NodeJS.Timeout | null)[]): Figures {
  const { deadlines, order, n } = w;
  const noop = () => undefined;
  let insertNs = 0;
  const { delta } = retainedBy(() => {
    const t0 = cpuNs();
    for (let i = 0; i < n; i++) handles[i] = setTimeout(noop, deadlines[i]! - START_MS).unref();
    insertNs = cpuNs() - t0;
    return handles;
  });
  // Synchronous from insert to here: the event loop never turns, so none of them can fire.
  for (let j = 0; j < n; j++) inOrder[j] = handles[order[j]!]!;
  const t0 = cpuNs();
  for (let j = 0; j < n; j++) clearTimeout(inOrder[j]!);
  const cancelNs = cpuNs() - t0;
  handles.fill(null);
  inOrder.fill(null);
  return { insert_ns: insertNs / n, cancel_ns: cancelNs / n, bytes_per_timer: delta.bytes / n };
}

type Structure = 'wheel' | 'heap';
const STRUCTURES: readonly Structure[] = ['wheel', 'heap'];
const makers: Record<Structure, () => TimerQueue<number>> = {
  wheel: () => new TimingWheel<number>({ startMs: START_MS }),
  heap: () => new BinaryHeapTimers<number>(),
};

interface SizeResult {
  n: number;
  reps: number;
  r: RoundsResult<Structure>;
  bytes: Record<Structure, number>;
  /** advance() call latency, wall clock, p99 and max (one pass). */
  latency: Record<Structure, { p99Us: number; maxUs: number }>;
}

/** One churn scenario replayed on wheel, heap and the null queue in interleaved rounds. */
async function runChurn(random: Random, pending: number, seconds: number, refill: boolean, rounds: number) {
  const trace = churnTrace(random.fork('trace'), pending, seconds, refill);
  const warmTrace = churnTrace(random.fork('warm'), Math.max(1, Math.floor(pending / 10)), 60, refill);
  const keyRandom = random.fork('keys');
  // Flat strings, as a database driver hands enrollment ids over.
  const keys = Array.from({ length: Math.max(trace.entities, warmTrace.entities) }, () =>
    Buffer.from(newId(START_MS, keyRandom), 'latin1').toString('latin1'),
  );
  const ids = new Float64Array(Math.max(trace.inserts, warmTrace.inserts));
  const churnMakers: Record<Structure | 'harness', () => TimerQueue<string>> = {
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
  for (const make of Object.values(churnMakers)) replayChurn(make(), warmTrace, keys, ids);
  const r = await interleavedRounds({
    rounds,
    cases: ['wheel', 'heap', 'harness'] as const,
    warmup: false,
    run: (c) => ({ ns_per_op: replayChurn(churnMakers[c](), trace, keys, ids) }),
    onRound: (i, f) =>
      console.log(
        `churn round ${i + 1}: wheel ${duration(f.wheel.ns_per_op!)}/op, heap ${duration(f.heap.ns_per_op!)}/op ` +
          `(${ratio(f.heap.ns_per_op! / f.wheel.ns_per_op!)}), harness ${duration(f.harness.ns_per_op!)}/op`,
      ),
  });
  const net = (c: Structure) => r.values(c, 'ns_per_op').map((v, i) => v - r.values('harness', 'ns_per_op')[i]!);
  const netRatio = spread(net('heap').map((v, i) => v / net('wheel')[i]!));
  return { trace, r, netRatio };
}

/** Sizes 10k, 100k, 1M, ... up to max (max itself included). */
function sizesUpTo(min: number, max: number): number[] {
  const out: number[] = [];
  for (let n = min; n < max; n *= 10) out.push(n);
  out.push(max);
  return out;
}

const ns = (x: number) => duration(x);

export default async function timingWheelBench(args: string[]): Promise<Record<string, unknown>> {
  const max = intFlag(args, 'max', 10_000_000);
  const min = Math.min(intFlag(args, 'min', 10_000), max);
  const rounds = intFlag(args, 'rounds', 3);
  const stepMs = intFlag(args, 'step-ms', 1000);
  const seed = flag(args, 'seed') ?? '42';
  const churnPending = intFlag(args, 'churn-pending', 200_000);
  const churnSeconds = intFlag(args, 'churn-seconds', 300);
  const random = seededRandom(seed);
  const sizes = sizesUpTo(min, max);
  const loadBefore = machineLoad();
  console.log(
    `timing-wheel: sizes ${sizes.map(int).join(', ')} pending timers, deadlines uniform over 1 h, cancel-heavy mix cancels ` +
      `${CANCEL_SHARE * 100}%, advance every ${stepMs} ms; wheel tick 100 ms, 3 levels x 256 slots; ${rounds} interleaved rounds ` +
      `per size; node ${process.version}, gc ${gcAvailable() ? 'exposed' : 'NOT exposed (bytes are NaN)'}\n${describeLoad(loadBefore)} before`,
  );

  // Warm-up: the same code paths on 100,000 timers, so the rounds measure optimised code.
  const warm = workload(random.fork('warm'), Math.min(100_000, max), stepMs);
  for (const s of STRUCTURES) cancelHeavy(makers[s], warm, 2);

  const results: SizeResult[] = [];
  for (const n of sizes) {
    const w = workload(random.fork(`n${n}`), n, stepMs);
    // Each figure covers at least about a million timers, so a small size is not one GC pause.
    const reps = Math.max(1, Math.round(1_000_000 / n));
    const r = await interleavedRounds({
      rounds,
      cases: STRUCTURES,
      warmup: false,
      run: (s) => cancelHeavy(makers[s], w, reps),
      onRound: (i, f) =>
        console.log(
          `n=${int(n)} round ${i + 1}: mix wheel ${ns(f.wheel.mix_ns_per_timer!)}/timer, heap ${ns(f.heap.mix_ns_per_timer!)}/timer ` +
            `(${ratio(f.heap.mix_ns_per_timer! / f.wheel.mix_ns_per_timer!)}); insert ${ns(f.wheel.insert_ns!)} vs ${ns(f.heap.insert_ns!)}, ` +
            `cancel ${ns(f.wheel.cancel_ns!)} vs ${ns(f.heap.cancel_ns!)}, fire ${ns(f.wheel.fire_ns!)} vs ${ns(f.heap.fire_ns!)}`,
        ),
    });
    const bytesOf = { wheel: bytesPerTimer(makers.wheel, w), heap: bytesPerTimer(makers.heap, w) };
    const latency = { wheel: advanceLatency(makers.wheel, w), heap: advanceLatency(makers.heap, w) };
    results.push({ n, reps, r, bytes: bytesOf, latency });
  }

  // String keys at the largest size: the wheel stores a pointer per key; the strings exist anyway
  // (the enrollment ids the scheduler holds), so they are made before the baseline and not counted.
  // Measured after the numeric rounds: a second key type would make the JIT see a polymorphic keys
  // array in them.
  const big = Math.min(max, 1_000_000);
  const bigW = workload(random.fork('strings'), big, stepMs);
  const strings = retainedBy(() => Array.from({ length: big }, () => Buffer.from(newId(START_MS, random), 'latin1').toString('latin1')));
  const stringKeyed = retainedBy(() => {
    const q = new TimingWheel<string>({ startMs: START_MS });
    for (let i = 0; i < big; i++) q.insert(bigW.deadlines[i]!, strings.value[i]!);
    return q;
  });
  const wheelStringBytes = stringKeyed.delta.bytes / big;
  const uuidStringBytes = strings.delta.bytes / big;
  stringKeyed.value.clear();

  // Reschedule churn, string keys (the scheduler's steady state, its 200k cap by default): with the
  // refill as Scheduler.refill works today, and with replies, reschedules and arrivals only.
  const churnWith = await runChurn(random.fork('churn'), churnPending, churnSeconds, true, rounds);
  const churnWithout = await runChurn(random.fork('churn-no-refill'), churnPending, churnSeconds, false, rounds);

  // setTimeout last, at up to a million timers: its Timeout objects leave the process's heap and
  // Node's timer lists in a state that slows whatever is measured after them.
  const handles: (NodeJS.Timeout | null)[] = Array.from({ length: big }, () => null);
  const inOrder: (NodeJS.Timeout | null)[] = Array.from({ length: big }, () => null);
  setTimeoutInsertAndCancel(workload(random.fork('st-warm'), Math.max(1, Math.floor(big / 10)), stepMs), handles, inOrder);
  const stRuns: Figures[] = [];
  for (let i = 0; i < rounds; i++) stRuns.push(setTimeoutInsertAndCancel(bigW, handles, inOrder));
  const st = {
    insert: spread(stRuns.map((f) => f.insert_ns!)),
    cancel: spread(stRuns.map((f) => f.cancel_ns!)),
    bytes: median(stRuns.map((f) => f.bytes_per_timer!)),
  };
  const loadAfter = machineLoad();

  // The table: per size, medians (and the heap/wheel ratio's spread over the rounds).
  const med = (x: SizeResult, s: Structure, f: string) => x.r.spread(s, f).median;
  console.log(
    '\n' +
      table([
        ['pending', 'wheel insert', 'cancel', 'fire', 'mix/timer', 'bytes', 'heap insert', 'cancel', 'fire', 'mix/timer', 'bytes', 'heap/wheel, mix'],
        ...results.map((x) => [
          int(x.n),
          ns(med(x, 'wheel', 'insert_ns')),
          ns(med(x, 'wheel', 'cancel_ns')),
          ns(med(x, 'wheel', 'fire_ns')),
          ns(med(x, 'wheel', 'mix_ns_per_timer')),
          x.bytes.wheel.toFixed(1),
          ns(med(x, 'heap', 'insert_ns')),
          ns(med(x, 'heap', 'cancel_ns')),
          ns(med(x, 'heap', 'fire_ns')),
          ns(med(x, 'heap', 'mix_ns_per_timer')),
          x.bytes.heap.toFixed(1),
          showSpread(x.r.ratio('heap', 'wheel', 'mix_ns_per_timer'), ratio),
        ]),
      ]),
  );
  const flatness = (f: string) => {
    const v = results.map((x) => med(x, 'wheel', f));
    return Math.max(...v) / Math.min(...v);
  };
  const flat = { insert: flatness('insert_ns'), cancel: flatness('cancel_ns'), fire: flatness('fire_ns'), mix: flatness('mix_ns_per_timer') };
  const largest = results[results.length - 1]!;
  const mixRatio = largest.r.ratio('heap', 'wheel', 'mix_ns_per_timer');
  const maxBytes = Math.max(...results.map((x) => x.bytes.wheel));
  console.log(
    `\nwheel flatness (slowest size / fastest, target <= 1.5x): insert ${ratio(flat.insert)}, cancel ${ratio(flat.cancel)}, ` +
      `fire ${ratio(flat.fire)}, mix ${ratio(flat.mix)}`,
  );
  console.log(`cancel-heavy mix at ${int(largest.n)}: heap / wheel ${showSpread(mixRatio, ratio)} (target >= 5x at 10,000,000)`);
  console.log(
    `wheel bytes per pending timer: at most ${maxBytes.toFixed(1)} with numeric keys (target < 100), ` +
      `${wheelStringBytes.toFixed(1)} with string keys at ${int(big)} not counting the strings (a 36-char UUID string is ${bytes(uuidStringBytes)} more, the caller's)`,
  );
  for (const [label, c] of [
    ['refill every 30 s', churnWith],
    ['no refill', churnWithout],
  ] as const) {
    console.log(
      `reschedule churn, ${label}: wheel ${showSpread(c.r.spread('wheel', 'ns_per_op'), ns)}/op, heap ${showSpread(c.r.spread('heap', 'ns_per_op'), ns)}/op, ` +
        `harness ${ns(c.r.spread('harness', 'ns_per_op').median)}/op: heap / wheel ${showSpread(c.r.ratio('heap', 'wheel', 'ns_per_op'), ratio)}, ` +
        `${showSpread(c.netRatio, ratio)} without the harness`,
    );
  }
  const wheelAt = results.find((x) => x.n === big) ?? largest;
  const wheelPair = med(wheelAt, 'wheel', 'insert_ns') + med(wheelAt, 'wheel', 'cancel_ns');
  console.log(
    `setTimeout at ${int(big)}: insert ${showSpread(st.insert, ns)}, clearTimeout ${showSpread(st.cancel, ns)}, ${st.bytes.toFixed(1)} bytes/timer; ` +
      `insert+cancel ${ratio((st.insert.median + st.cancel.median) / wheelPair)} the wheel's`,
  );
  console.log(`${describeLoad(loadAfter)} after`);

  const figures: Record<string, unknown> = { max, rounds, step_ms: stepMs, node: process.version, ...loadFigures(loadBefore, loadAfter) };
  for (const x of results) {
    const k = x.n >= 1e6 ? `${x.n / 1e6}m` : `${x.n / 1e3}k`;
    for (const s of STRUCTURES) {
      for (const f of ['insert_ns', 'cancel_ns', 'fire_ns', 'mix_ns_per_timer']) Object.assign(figures, spreadFigures(`${s}_${k}_${f}`, x.r.spread(s, f)));
      figures[`${s}_${k}_advance_p99_us`] = round(x.latency[s].p99Us);
      figures[`${s}_${k}_advance_max_us`] = round(x.latency[s].maxUs);
      figures[`${s}_${k}_bytes_per_timer`] = round(x.bytes[s]);
    }
    Object.assign(figures, spreadFigures(`ratio_heap_over_wheel_${k}_mix`, x.r.ratio('heap', 'wheel', 'mix_ns_per_timer'), 2));
  }
  Object.assign(figures, {
    wheel_flatness_insert: round(flat.insert, 2),
    wheel_flatness_cancel: round(flat.cancel, 2),
    wheel_flatness_fire: round(flat.fire, 2),
    wheel_flatness_mix: round(flat.mix, 2),
    wheel_bytes_per_timer_string_keys_excluding_strings: round(wheelStringBytes),
    uuid_string_bytes: round(uuidStringBytes),
    churn_pending: churnPending,
    churn_seconds: churnSeconds,
    churn_refill_ops: churnWith.trace.length,
    churn_no_refill_ops: churnWithout.trace.length,
    ...spreadFigures('wheel_churn_refill_ns_per_op', churnWith.r.spread('wheel', 'ns_per_op')),
    ...spreadFigures('heap_churn_refill_ns_per_op', churnWith.r.spread('heap', 'ns_per_op')),
    harness_churn_refill_ns_per_op: round(churnWith.r.spread('harness', 'ns_per_op').median),
    ...spreadFigures('ratio_heap_over_wheel_churn_refill', churnWith.r.ratio('heap', 'wheel', 'ns_per_op'), 2),
    ...spreadFigures('wheel_churn_no_refill_ns_per_op', churnWithout.r.spread('wheel', 'ns_per_op')),
    ...spreadFigures('heap_churn_no_refill_ns_per_op', churnWithout.r.spread('heap', 'ns_per_op')),
    harness_churn_no_refill_ns_per_op: round(churnWithout.r.spread('harness', 'ns_per_op').median),
    ...spreadFigures('ratio_heap_over_wheel_churn_no_refill', churnWithout.r.ratio('heap', 'wheel', 'ns_per_op'), 2),
    settimeout_n: big,
    ...spreadFigures('settimeout_insert_ns', st.insert),
    ...spreadFigures('settimeout_cancel_ns', st.cancel),
    settimeout_bytes_per_timer: round(st.bytes),
    target_flat_1_5x_met: Math.max(flat.insert, flat.cancel, flat.fire, flat.mix) <= 1.5,
    target_mixed_5x_met: largest.n >= 10_000_000 && mixRatio.median >= 5,
    target_bytes_under_100_met: maxBytes < 100,
  });
  return figures;
}
