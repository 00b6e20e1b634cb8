/**
 * Timing wheel vs an indexed binary heap vs Node's setTimeout, on the scheduler's load: N timers
 * (default 1,000,000) due uniformly over the next hour, most of them cancelled before they fire
 * (the prospect replied).
 *
 *   npm run bench -- timing-wheel [--n=1000000] [--rounds=3] [--step-ms=1000] [--seed=42]
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
 */
import { newId } from '../src/common/ids.ts';
import { seededRandom } from '../src/common/random.ts';
import { BinaryHeapTimers } from '../src/sequence/timers/binary-heap.ts';
import type { TimerQueue } from '../src/sequence/timers/timer-queue.ts';
import { TimingWheel } from '../src/sequence/timers/timing-wheel.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, duration, int, ratio, round, table } from './lib/format.ts';
import { gcAvailable, retainedBy } from './lib/memory.ts';
import { median, percentile } from './lib/stats.ts';
import { timeNs } from './lib/time.ts';

const HOUR_MS = 3_600_000;
const CANCEL_SHARE = 0.9;
const START_MS = Date.UTC(2026, 10, 30, 9, 0);

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
  const insertNs = timeNs(() => {
    for (let i = 0; i < count; i++) ids[i] = q.insert(deadlines[i]!, i);
  });
  if (q.size !== count) throw new Error(`expected ${count} pending, got ${q.size}`);
  shuffleIds(w, count);
  let cancelled = 0;
  const cancelNs = timeNs(() => {
    for (let j = 0; j < count; j++) if (q.cancel(cancelIds[j]!)) cancelled++;
  });
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
  const insertNs = timeNs(() => {
    for (let i = 0; i < count; i++) ids[i] = q.insert(deadlines[i]!, i);
  });
  shuffleIds(w, count);
  const cancelNs = timeNs(() => {
    for (let j = 0; j < toCancel; j++) q.cancel(cancelIds[j]!);
  });
  const firingNs = timeNs(() => {
    for (let now = START_MS + w.stepMs; now < START_MS + HOUR_MS + w.stepMs; now += w.stepMs) {
      out.length = 0;
      const t0 = process.hrtime.bigint();
      q.advance(now, out);
      advanceNs.push(Number(process.hrtime.bigint() - t0));
      fired += out.length;
    }
  });
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
    insertNs = timeNs(() => {
      for (let i = 0; i < count; i++) handles[i] = setTimeout(noop, deadlines[i]! - START_MS).unref();
    });
    return handles;
  });
  // Synchronous from insert to here: the event loop never turns, so none of them can fire.
  let c = 0;
  for (let j = 0; j < w.n; j++) {
    const i = order[j]!;
    if (i < count) inOrder[c++] = handles[i]!;
  }
  const cancelNs = timeNs(() => {
    for (let j = 0; j < count; j++) clearTimeout(inOrder[j]!);
  });
  handles.fill(null);
  inOrder.fill(null);
  return { insertNs: insertNs / count, cancelNs: cancelNs / count, bytesPerTimer: delta.bytes / count };
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
      `advance every ${stepMs} ms; wheel tick 100 ms, 5 levels x 64 slots; ${rounds} rounds after a warm-up; ` +
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
    ratio_settimeout_over_wheel_insert_cancel: round(stPair / wheelPair, 2),
    ratio_settimeout_over_wheel_bytes: round(timeout.bytes / wheel.bytes, 2),
    target_mixed_5x_met: heap.mixed / wheel.mixed >= 5,
    target_bytes_under_100_met: wheel.bytes < 100,
  };
}
