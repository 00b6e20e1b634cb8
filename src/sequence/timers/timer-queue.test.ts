import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { BinaryHeapTimers } from './binary-heap.ts';
import type { TimerId, TimerQueue } from './timer-queue.ts';
import { TimingWheel } from './timing-wheel.ts';

/** The trivial reference: a map of pending timers; advance fires every deadline <= now. */
class ModelQueue {
  private readonly pending = new Map<number, { deadline: number; key: number }>();
  private nextRef = 0;
  insert(deadline: number, key: number): number {
    const ref = this.nextRef++;
    this.pending.set(ref, { deadline, key });
    return ref;
  }
  cancel(ref: number): boolean {
    return this.pending.delete(ref);
  }
  advance(now: number): number[] {
    const due: number[] = [];
    for (const [ref, t] of this.pending) {
      if (t.deadline <= now) {
        due.push(t.key);
        this.pending.delete(ref);
      }
    }
    return due;
  }
  min(): number | undefined {
    let m: number | undefined;
    for (const t of this.pending.values()) if (m === undefined || t.deadline < m) m = t.deadline;
    return m;
  }
  get size(): number {
    return this.pending.size;
  }
  clear(): void {
    this.pending.clear();
  }
}

type Op =
  | { op: 'insert'; offset: number }
  | { op: 'cancel'; pick: number }
  | { op: 'cancelGarbage'; id: number }
  | { op: 'advance'; delta: number }
  | { op: 'nextDeadline' }
  | { op: 'clear' };

const offsetArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -50, max: 500 }) },
  { weight: 2, arbitrary: fc.double({ min: -1e4, max: 1e5, noNaN: true }) },
  // Far future: beyond the top level of small test wheels (overflow list), and beyond 2^30 ticks.
  { weight: 1, arbitrary: fc.integer({ min: 1e5, max: 1e12 }) },
  { weight: 1, arbitrary: fc.constantFrom(-Infinity, Infinity, -1e300, 1e300, 0) },
);
const deltaArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }) },
  { weight: 2, arbitrary: fc.integer({ min: -100, max: 0 }) }, // a clock that steps back
  { weight: 2, arbitrary: fc.integer({ min: 1e3, max: 1e9 }) }, // big jumps
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1e4, noNaN: true }) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 40, arbitrary: offsetArb.map((offset) => ({ op: 'insert' as const, offset })) },
  { weight: 25, arbitrary: fc.nat().map((pick) => ({ op: 'cancel' as const, pick })) },
  {
    weight: 5,
    arbitrary: fc
      .constantFrom(
        // Never a live id: live generations are odd, and these have generation 0 or 2 (sentinels, free nodes).
        ...[0, 1, 2, 65, 129, 321].flatMap((index) => [index, 2 * 2 ** 26 + index]),
        -1,
        0.5,
        Number.NaN,
        2 ** 53,
        2 ** 60,
        -(2 ** 26),
      )
      .map((id) => ({ op: 'cancelGarbage' as const, id })),
  },
  { weight: 20, arbitrary: deltaArb.map((delta) => ({ op: 'advance' as const, delta })) },
  { weight: 10, arbitrary: fc.constant({ op: 'nextDeadline' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
);

interface Config {
  make: (startMs: number) => TimerQueue<number>;
  /** Whether nextDeadline() must equal the earliest deadline, or may be a lower bound. */
  exactNextDeadline: boolean;
  name: string;
}

const wheelArb: fc.Arbitrary<Config> = fc
  .record({
    // 0.01 ms: test offsets of a few hundred ms span tens of thousands of ticks, so level 1 and 2
    // slots cascade often; 1 ms with one level sends most of them to the overflow slot.
    tickMs: fc.constantFrom(1, 3, 7, 100, 0.25, 1000, 0.01),
    levels: fc.integer({ min: 1, max: 3 }),
    initialCapacity: fc.integer({ min: 0, max: 8 }),
  })
  .map(({ tickMs, levels, initialCapacity }) => ({
    make: (startMs: number) => new TimingWheel<number>({ startMs, tickMs, levels, initialCapacity }),
    exactNextDeadline: false,
    name: `wheel tick=${tickMs} levels=${levels} cap=${initialCapacity}`,
  }));

const heapArb: fc.Arbitrary<Config> = fc.integer({ min: 0, max: 8 }).map((initialCapacity) => ({
  make: () => new BinaryHeapTimers<number>({ initialCapacity }),
  exactNextDeadline: true,
  name: `heap cap=${initialCapacity}`,
}));

const startArb = fc.oneof(fc.constant(0), fc.integer({ min: 1.6e12, max: 1.8e12 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }));

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** The wheel's private state, read by checkWheel below (tests only). */
interface WheelInternals {
  gen: Int32Array;
  live: Int32Array;
  freeStack: Int32Array;
  freeTop: number;
  used: number;
  count: number;
  dead: number;
  pages: Float64Array[];
  chunkTop: number;
  freeChunk: number;
  slotPos: Int32Array;
  occupied: Int32Array;
}

// The wheel's entry layout (see timing-wheel.ts).
const CHUNK = 64;
const STRIDE = 3;
const PAGE_BITS = 14;

/**
 * Structural invariants of the lazy-cancel wheel: every live node has exactly one entry, every
 * cancelled-not-swept node exactly one entry and nowhere else, free nodes no entry and one place
 * on the free stack, no node at or past `used` is live, every used node has an odd generation, the
 * counters match, and a slot's occupancy bit is set iff it has entries. Chunks: every chunk handed
 * out is in exactly one slot's chain or on the free list, and no slot's chain has an empty chunk.
 */
function checkWheel(q: TimerQueue<number>): void {
  if (!(q instanceof TimingWheel)) return;
  const w = q as unknown as WheelInternals;
  const problems: string[] = [];
  const isLive = (n: number) => ((w.live[n >> 5]! >>> (n & 31)) & 1) === 1;
  /** The node index (or, at a chunk's base, the link) stored at entry position p. */
  const nodeAt = (p: number) => w.pages[p >> PAGE_BITS]![STRIDE * (p & ((1 << PAGE_BITS) - 1))]!;
  const inSlots = new Uint8Array(w.used);
  const chunkSeen = new Uint8Array(w.chunkTop / CHUNK);
  const seeChunk = (base: number, where: string): boolean => {
    if (!(base >= CHUNK && base < w.chunkTop && base % CHUNK === 0) || chunkSeen[base / CHUNK] !== 0) {
      problems.push(`chunk ${base} (${where}): out of range or reachable twice`);
      return false;
    }
    chunkSeen[base / CHUNK] = 1;
    return true;
  };
  let live = 0;
  let dead = 0;
  w.slotPos.forEach((pos, s) => {
    if ((((w.occupied[s >> 5]! >>> (s & 31)) & 1) === 1) !== (pos !== 0)) problems.push(`slot ${s}: occupancy bit`);
    if (pos === 0) return;
    let base = (pos - 1) & ~(CHUNK - 1);
    let end = pos;
    while (seeChunk(base, `slot ${s}`)) {
      if (end <= base + 1) problems.push(`slot ${s}: empty chunk ${base}`);
      for (let i = base + 1; i < end; i++) {
        const n = nodeAt(i);
        if (!(n >= 0 && n < w.used) || inSlots[n]! > 0) problems.push(`node ${n}: out of range or in two slots`);
        inSlots[n] = 1;
        if (isLive(n)) live++;
        else dead++;
      }
      const link = nodeAt(base);
      if (link === 0) break;
      base = link;
      end = link + CHUNK;
    }
  });
  for (let c = w.freeChunk; c !== 0 && seeChunk(c, 'free list'); c = nodeAt(c));
  if (chunkSeen.some((x, i) => i > 0 && x === 0)) problems.push('a chunk is neither in a slot nor free');
  if (live !== w.count) problems.push(`live ${live} !== count ${w.count}`);
  if (dead !== w.dead) problems.push(`dead ${dead} !== dead counter ${w.dead}`);
  for (let i = 0; i < w.freeTop; i++) {
    const n = w.freeStack[i]!;
    if (inSlots[n] !== 0 || isLive(n)) problems.push(`free node ${n}: in a slot, twice free, or live`);
    inSlots[n] = 2;
  }
  if (inSlots.some((x) => x === 0)) problems.push('a node is neither in a slot nor free');
  for (let n = 0; n < w.gen.length; n++) {
    if (n < w.used && (w.gen[n]! & 1) !== 1) problems.push(`node ${n}: used with an even generation`);
    if (n >= w.used && isLive(n)) problems.push(`node ${n}: live beyond used`);
  }
  expect(problems).toEqual([]);
}

function runAgainstModel(config: Config, startMs: number, ops: Op[]): void {
  const q = config.make(startMs);
  const model = new ModelQueue();
  const issued: { id: TimerId; ref: number }[] = [];
  let now = startMs;
  let key = 0;
  for (const o of ops) {
    switch (o.op) {
      case 'insert': {
        const deadline = now + o.offset;
        const k = key++;
        issued.push({ id: q.insert(deadline, k), ref: model.insert(deadline, k) });
        break;
      }
      case 'cancel': {
        if (issued.length === 0) break;
        const t = issued[o.pick % issued.length]!;
        expect(q.cancel(t.id)).toBe(model.cancel(t.ref));
        break;
      }
      case 'cancelGarbage':
        expect(q.cancel(o.id)).toBe(false);
        break;
      case 'advance': {
        // The clock may step back; the wheel must then fire only what is due at that earlier now.
        const at = now + o.delta;
        expect(sorted(q.advance(at))).toEqual(sorted(model.advance(at)));
        if (at > now) now = at;
        break;
      }
      case 'nextDeadline': {
        const got = q.nextDeadline();
        const min = model.min();
        if (min === undefined) expect(got).toBeUndefined();
        else if (config.exactNextDeadline) expect(got).toBe(min);
        else {
          expect(got).toBeDefined();
          expect(got!).toBeLessThanOrEqual(min);
          // Arming a timer for it must make progress: either something fires or the answer moves on.
          const fired = q.advance(got!);
          expect(sorted(fired)).toEqual(sorted(model.advance(got!)));
          if (fired.length === 0) {
            const again = q.nextDeadline();
            expect(again === undefined || again > got!).toBe(true);
          }
          if (got! > now) now = got!;
        }
        break;
      }
      case 'clear':
        q.clear();
        model.clear();
        break;
    }
    expect(q.size).toBe(model.size);
    checkWheel(q);
  }
  // Drain: everything left fires exactly once at a now past every deadline.
  expect(sorted(q.advance(Infinity))).toEqual(sorted(model.advance(Infinity)));
  expect(q.size).toBe(0);
  expect(q.nextDeadline()).toBeUndefined();
  for (const t of issued) expect(q.cancel(t.id)).toBe(false);
}

describe.each([
  ['TimingWheel', wheelArb],
  ['BinaryHeapTimers', heapArb],
] as const)('%s against the reference model', (_name, configArb) => {
  it('agrees on every insert, cancel, advance, nextDeadline and clear', () => {
    fc.assert(
      fc.property(configArb, startArb, fc.array(opArb, { maxLength: 300 }), (config, startMs, ops) =>
        runAgainstModel(config, startMs, ops),
      ),
      { numRuns: 400 },
    );
  });

  it('agrees under a cancel-heavy load of thousands of timers (90% cancelled, interleaved)', () => {
    fc.assert(
      fc.property(configArb, fc.integer(), (config, seed) => {
        const random = seededRandom(seed);
        const q = config.make(0);
        const model = new ModelQueue();
        const live: { id: TimerId; ref: number }[] = [];
        let now = 0;
        for (let round = 0; round < 20; round++) {
          for (let i = 0; i < 200; i++) {
            const d = now + random.int(-10, 20_000);
            const k = round * 1000 + i;
            live.push({ id: q.insert(d, k), ref: model.insert(d, k) });
          }
          for (let i = 0; i < 180 && live.length > 0; i++) {
            const j = random.int(0, live.length - 1);
            const t = live[j]!;
            live[j] = live[live.length - 1]!;
            live.pop();
            expect(q.cancel(t.id)).toBe(model.cancel(t.ref));
          }
          now += random.int(0, 1500);
          expect(sorted(q.advance(now))).toEqual(sorted(model.advance(now)));
          expect(q.size).toBe(model.size);
          checkWheel(q);
          if (config.exactNextDeadline) expect(q.nextDeadline()).toBe(model.min());
        }
      }),
      { numRuns: 40 },
    );
  });

  it('fires each timer exactly once, never early, at the first advance with now >= its deadline', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 200 }),
        fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 40 }),
        (config, deadlines, steps) => {
          const q = config.make(0);
          deadlines.forEach((d, k) => q.insert(d, k));
          const firedAt = new Map<number, number>();
          let now = 0;
          let prev = -Infinity;
          for (const step of [...steps, 6000]) {
            now += step;
            for (const k of q.advance(now)) {
              expect(firedAt.has(k)).toBe(false); // exactly once
              firedAt.set(k, now);
              const d = deadlines[k]!;
              expect(d).toBeLessThanOrEqual(now); // never early
              expect(d).toBeGreaterThan(prev); // not late: the previous advance did not cover it
            }
            prev = now;
          }
          expect(firedAt.size).toBe(deadlines.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('TimingWheel', () => {
  it('fires a deadline inside the current tick exactly, not rounded to the tick', () => {
    const w = new TimingWheel<string>({ startMs: 1000, tickMs: 100 });
    w.insert(1150, 'a');
    w.insert(1199, 'b');
    expect(w.advance(1149)).toEqual([]);
    expect(w.advance(1150)).toEqual(['a']);
    expect(w.advance(1198.5)).toEqual([]);
    expect(w.advance(1250)).toEqual(['b']);
  });

  it('fires deadlines already in the past at the next advance, even one before startMs', () => {
    const w = new TimingWheel<string>({ startMs: 1000 });
    w.advance(5000);
    w.insert(4000, 'past');
    w.insert(10, 'before start');
    w.insert(5000, 'now');
    expect(w.nextDeadline()).toBe(10);
    expect(w.advance(5000).sort()).toEqual(['before start', 'now', 'past']);
  });

  it('makes stale handles harmless after the node is reused', () => {
    const w = new TimingWheel<string>({ startMs: 0, initialCapacity: 1 });
    const a = w.insert(100, 'a');
    expect(w.cancel(a)).toBe(true);
    const b = w.insert(100, 'b'); // reuses a's node
    expect(b).not.toBe(a);
    expect(w.cancel(a)).toBe(false);
    expect(w.size).toBe(1);
    expect(w.advance(100)).toEqual(['b']);
    expect(w.cancel(b)).toBe(false);
  });

  it('keeps ids from before clear() stale', () => {
    const w = new TimingWheel<number>({ startMs: 0 });
    const ids = [w.insert(10, 1), w.insert(20, 2)];
    w.clear();
    w.insert(10, 3);
    w.insert(20, 4);
    for (const id of ids) expect(w.cancel(id)).toBe(false);
    expect(w.advance(20).sort()).toEqual([3, 4]);
  });

  it('grows past its initial capacity', () => {
    const w = new TimingWheel<number>({ startMs: 0, tickMs: 1, initialCapacity: 1 });
    const ids: number[] = [];
    for (let i = 0; i < 10_000; i++) ids.push(w.insert((i * 7919) % 100_000, i));
    for (let i = 0; i < 10_000; i += 2) expect(w.cancel(ids[i]!)).toBe(true);
    expect(w.size).toBe(5000);
    const fired = w.advance(100_000);
    expect(fired.length).toBe(5000);
    expect(fired.every((k) => k % 2 === 1)).toBe(true);
  });

  it('keeps memory proportional to pending timers under insert/cancel churn (lazy cancel is reclaimed)', () => {
    const w = new TimingWheel<string>({ startMs: 0, tickMs: 100 });
    const live: TimerId[] = [];
    let cancelled = 0;
    for (let i = 0; i < 200_000; i++) {
      // Far-future deadlines: no advance ever sweeps these slots, only reclaiming can.
      live.push(w.insert(3_600_000 + (i % 5000), `k${i}`));
      if (live.length > 100 && w.cancel(live.shift()!)) cancelled++;
    }
    expect(cancelled).toBe(200_000 - 100);
    expect(w.size).toBe(100);
    expect(w.capacity).toBeLessThanOrEqual(1024);
  });

  it('drops everything when the last live timer is cancelled, keeping old ids stale', () => {
    const w = new TimingWheel<number>({ startMs: 0, initialCapacity: 16 });
    const ids: TimerId[] = [];
    for (let i = 0; i < 500; i++) ids.push(w.insert(1000 + i * 997, i));
    for (const id of ids) expect(w.cancel(id)).toBe(true);
    expect(w.size).toBe(0);
    expect(w.nextDeadline()).toBeUndefined();
    const fresh = [w.insert(50, 1000), w.insert(60, 1001)];
    for (const id of ids) expect(w.cancel(id)).toBe(false);
    expect(fresh.every((id) => !ids.includes(id))).toBe(true);
    expect(w.advance(1e9).sort()).toEqual([1000, 1001]);
    // The nodes are whole again: new timers get distinct nodes and each fires once.
    const again = Array.from({ length: 600 }, (_, i) => w.insert(2e9 + i, i));
    expect(new Set(again.map((id) => id % 2 ** 26)).size).toBe(600);
    expect(w.size).toBe(600);
    expect(w.advance(3e9)).toHaveLength(600);
    expect(w.size).toBe(0);
  });

  it('keeps keys of any type: numbers first, then strings and objects', () => {
    for (const q of [new TimingWheel<unknown>({ startMs: 0 }), new BinaryHeapTimers<unknown>()]) {
      const obj = { enrollment: 'e1' };
      q.insert(10, 1.5);
      q.insert(20, -0);
      q.insert(30, 'enr_1');
      q.insert(40, obj);
      q.insert(50, 2 ** 40);
      const fired = q.advance(100);
      expect(fired).toHaveLength(5);
      expect(fired).toEqual(expect.arrayContaining([1.5, 'enr_1', obj, 2 ** 40]));
      expect(fired.some((k) => Object.is(k, -0))).toBe(true);
    }
  });

  it('jumps years ahead without walking the ticks (1 ms tick, 10^12 ticks)', () => {
    const w = new TimingWheel<string>({ startMs: 0, tickMs: 1, levels: 2 });
    w.insert(5, 'soon');
    w.insert(3e9, 'weeks');
    w.insert(9e11, 'decades');
    const t0 = performance.now();
    expect(w.advance(1e12).sort()).toEqual(['decades', 'soon', 'weeks']);
    expect(performance.now() - t0).toBeLessThan(1000); // walking tick by tick would take hours
  });

  it('reports the earliest deadline exactly within the current 256 ticks, a lower bound beyond', () => {
    const w = new TimingWheel<string>({ startMs: 0, tickMs: 100 });
    w.insert(250_000, 'far');
    const bound = w.nextDeadline()!;
    expect(bound).toBeLessThanOrEqual(250_000);
    expect(bound).toBeGreaterThan(0);
    w.insert(1234, 'near');
    expect(w.nextDeadline()).toBe(1234);
  });

  it('can drive one real timer: advancing to nextDeadline() fires within levels + 1 wake-ups, never early', () => {
    // Fractional startMs and tickMs make startMs + tick * tickMs land an ulp off the slot start
    // (e.g. startMs 0.1, tickMs 0.1, tick 3039253); the wheel must still never spin nor overshoot.
    fc.assert(
      fc.property(
        fc.constantFrom(0.1, 123.456, -999_999.3, 1.7e12 + 0.3),
        fc.constantFrom(0.1, 0.3, 0.7, 3, 100),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 5 }),
        (startMs, tickMs, levels, offsets) => {
          const w = new TimingWheel<number>({ startMs, tickMs, levels });
          offsets.forEach((o, k) => w.insert(startMs + o, k));
          let wakeUps = 0;
          let fired = 0;
          for (let armed = w.nextDeadline(); armed !== undefined; armed = w.nextDeadline()) {
            expect(armed).toBeLessThanOrEqual(Math.min(...offsets.map((o) => startMs + o)));
            for (const k of w.advance(armed)) {
              expect(startMs + offsets[k]!).toBeLessThanOrEqual(armed);
              offsets[k] = Infinity;
              fired++;
            }
            expect(++wakeUps).toBeLessThanOrEqual((levels + 1) * offsets.length + 1);
          }
          expect(fired).toBe(offsets.length);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('keeps the nextDeadline() lower bound at or below a deadline that opens its slot (float rounding)', () => {
    // 0.1 + 768 * 0.1 === 76.9, but 76.89999999999999 already falls in tick 768 (level 1, slot 3).
    const w = new TimingWheel<string>({ startMs: 0.1, tickMs: 0.1 });
    w.insert(76.89999999999999, 'slot start');
    expect(w.nextDeadline()).toBeLessThanOrEqual(76.89999999999999);
    expect(w.advance(w.nextDeadline()!)).toEqual(['slot start']);
  });

  it('finds the first ms of a slot when the deadline is far smaller than startMs (thousands of ulps off)', () => {
    // Near -63.3 a step of one ulp of ms moves (ms - startMs) not at all: the slot's first ms is
    // thousands of ulps from startMs + tick * tickMs. An answer a few ulps off would never reach
    // the slot, and a caller re-arming on nextDeadline() would spin.
    const startMs = -999_999.3;
    const w = new TimingWheel<string>({ startMs, tickMs: 0.7 });
    w.insert(startMs + 999_967.409145354, 'far');
    let wakeUps = 0;
    const fired: string[] = [];
    for (let at = w.nextDeadline(); at !== undefined; at = w.nextDeadline()) {
      expect(at).toBeLessThanOrEqual(startMs + 999_967.409145354);
      fired.push(...w.advance(at));
      expect(++wakeUps).toBeLessThanOrEqual(4);
    }
    expect(fired).toEqual(['far']);
  });

  it('agrees with the model at scale: big multi-chunk slots, several entry pages, purges, and keys turning into strings', () => {
    // 1 ms ticks over 200 s: thousands of timers per level-1 slot (many chunks each), tens of
    // thousands of entries (several 16,384-position pages), compactions when the node pool fills
    // with cancelled entries, nextDeadline scans, cascades that open many level-0 chunks while the
    // pool has to grow, and a switch from numeric keys (kept in the entries) to string keys (kept
    // by node) with tens of thousands of entries in place.
    const random = seededRandom('scale');
    const w = new TimingWheel<number | string>({ startMs: 0, tickMs: 1, initialCapacity: 0 });
    const pending = new Map<number | string, { deadline: number; id: TimerId }>();
    const ids: (number | string)[] = [];
    let now = 0;
    let next = 0;
    const expectFired = (fired: (number | string)[]) => {
      const due = [...pending].filter(([, t]) => t.deadline <= now).map(([k]) => k);
      expect(new Set(fired)).toEqual(new Set(due));
      expect(fired).toHaveLength(due.length);
      for (const k of fired) pending.delete(k);
    };
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 2000; i++) {
        const key = round < 20 ? next++ : `k${next++}`;
        const deadline = now + random.int(-5, 200_000);
        pending.set(key, { deadline, id: w.insert(deadline, key) });
        ids.push(key);
      }
      for (let i = 0; i < 1700; i++) {
        const key = ids[random.int(0, ids.length - 1)]!;
        const t = pending.get(key);
        if (t === undefined) continue;
        expect(w.cancel(t.id)).toBe(true);
        expect(w.cancel(t.id)).toBe(false);
        pending.delete(key);
      }
      if (round % 5 === 4) {
        const min = Math.min(...[...pending.values()].map((t) => t.deadline));
        expect(w.nextDeadline()!).toBeLessThanOrEqual(min);
      }
      now += random.int(0, 3000);
      expectFired(w.advance(now));
      expect(w.size).toBe(pending.size);
      if (round % 10 === 9) checkWheel(w as unknown as TimerQueue<number>);
    }
    now = 1e9;
    expectFired(w.advance(now));
    expect(w.size).toBe(0);
    checkWheel(w as unknown as TimerQueue<number>);
  });

  it('keeps working at the tick clamp: after advance(Infinity), huge and past deadlines still fire', () => {
    const w = new TimingWheel<string>({ startMs: 0, tickMs: 1 });
    w.insert(5, 'soon');
    expect(w.advance(Infinity)).toEqual(['soon']);
    // Ticks are clamped at 2^52: a deadline a few ticks past that must not land in a slot that the
    // clamped current tick never reaches.
    w.insert(2 ** 52 + 5, 'just past the clamp');
    w.insert(1e300, 'far');
    w.insert(Infinity, 'never before Infinity');
    w.insert(-1, 'past');
    expect(w.advance(2 ** 52 + 4).sort()).toEqual(['past']);
    expect(w.advance(Infinity).sort()).toEqual(['far', 'just past the clamp', 'never before Infinity']);
    expect(w.size).toBe(0);
  });

  it('rejects a NaN deadline or now, and bad options, with INVALID_INPUT', () => {
    const w = new TimingWheel<number>({ startMs: 0 });
    expect(() => w.insert(Number.NaN, 1)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => w.advance(Number.NaN)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    for (const bad of [{ tickMs: 0 }, { levels: 4 }, { levels: 0 }, { tickMs: 1e-320 }, { initialCapacity: -1 }]) {
      try {
        new TimingWheel({ startMs: 0, ...bad });
        expect.unreachable();
      } catch (e) {
        expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
      }
    }
  });
});
