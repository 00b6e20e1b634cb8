import { cadenzaError } from '../../common/errors.ts';
import {
  GEN_MASK,
  checkTime,
  growCapacity,
  growFloat64,
  growInt32,
  idGen,
  idIndex,
  timerId,
  type TimerId,
  type TimerQueue,
} from './timer-queue.ts';

export type { TimerId } from './timer-queue.ts';

export interface TimingWheelOptions {
  /** Time origin: tick 0 starts here. Usually the clock's now() when the scheduler starts. */
  startMs: number;
  /** Slot width. Default 100 ms: the scheduler's wake-ups are batched to this granularity. */
  tickMs?: number;
  /** 1..5 levels of 64 slots. Default 5: 2^30 ticks (3.4 years at 100 ms) before the overflow list. */
  levels?: number;
  /** Nodes allocated up front; the arrays double when full. Default 1024. */
  initialCapacity?: number;
}

const SLOT_BITS = 6;
const SLOTS = 1 << SLOT_BITS;
const SLOT_MASK = SLOTS - 1;
const MAX_LEVELS = 5; // 5 * 6 = 30 bits keeps a tick's position in its block a positive int32
/** Ticks are clamped to ±2^52 so tick arithmetic stays exact; clamping is monotonic, see tickOf. */
const MAX_TICK = 2 ** 52;

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);

/** The adjacent double above (dir 1) or below (dir -1) x; x finite. */
function nextFloat(x: number, dir: 1 | -1): number {
  if (x === 0) return dir * Number.MIN_VALUE;
  f64[0] = x;
  i64[0]! += (x > 0) === (dir > 0) ? 1n : -1n;
  return f64[0]!;
}

/**
 * Hierarchical timing wheel (Varghese & Lauck 1987, "Hashed and Hierarchical Timing Wheels"; the
 * layout of the Linux timer wheel and Kafka's purgatory): insert and cancel are O(1), advance is
 * proportional to the timers it fires or moves plus the non-empty slots it visits.
 *
 * Time is cut into ticks of tickMs from startMs; tick(t) = floor((t - startMs) / tickMs). Level L
 * has 64 slots of 64^L ticks each. A timer lives at the lowest level where its tick and the current
 * tick agree on every digit above L (base 64), in the slot named by its tick's digit L; when the
 * current tick reaches that slot, the slot is cascaded into the lower levels. Ticks beyond the top
 * level's block (64^levels ticks) wait in one overflow list that is re-examined when time reaches
 * the block of the earliest of them.
 *
 * Firing is exact, not rounded to the tick: advance(now) fires exactly the pending timers with
 * deadline <= now. Slots of ticks before now's tick fire whole; the slot of now's own tick is
 * scanned and only its due timers fire; the rest of that slot waits for the next advance. So a
 * timer never fires early and fires at the first advance with now >= its deadline. The scan is
 * bounded by one tick's worth of timers.
 *
 * Storage is struct-of-arrays: deadline (Float64Array), next/prev links of an intrusive circular
 * doubly-linked list per slot (Int32Array), generation (Int32Array), and the key (a JS array).
 * Each slot's list head is a sentinel node at index = slot number, so unlinking needs no slot
 * lookup. 20 bytes of typed arrays per node of capacity plus 8 bytes per key pointer (a string key
 * itself is the caller's and not counted). Freed nodes go on a free list and are reused.
 *
 * Not thread- or re-entrancy-sensitive: advance() takes no callbacks, it returns a batch.
 */
export class TimingWheel<K = number> implements TimerQueue<K> {
  private readonly startMs: number;
  private readonly tickMs: number;
  private readonly levels: number;
  /** 64^levels: ticks per top-level block. */
  private readonly blockTicks: number;
  /** Sentinel index of the overflow list; slot sentinels are 0 .. levels*64-1. */
  private readonly overflow: number;

  private capacity: number;
  private deadline: Float64Array;
  private next: Int32Array;
  private prev: Int32Array;
  private gen: Int32Array;
  private keys: (K | undefined)[];
  /** Nodes [0, used) have been handed out at least once (the sentinels included). */
  private used: number;
  /** Free nodes are chained through next[]; -1 ends the chain. */
  private freeHead = -1;
  private count = 0;

  /** One bit per slot (slot s is bit s & 31 of word s >> 5), then the overflow bit. Set iff non-empty. */
  private readonly occupied: Int32Array;
  /** Lower bound of the ticks in the overflow list (cancels only raise the true minimum). */
  private overflowMinTick = 0;

  /** Current tick = curBase + curLocal; curBase is a multiple of blockTicks, 0 <= curLocal < blockTicks. */
  private curBase = 0;
  private curLocal = 0;

  constructor(opts: TimingWheelOptions) {
    const tickMs = opts.tickMs ?? 100;
    const levels = opts.levels ?? MAX_LEVELS;
    const initialCapacity = opts.initialCapacity ?? 1024;
    const problems: string[] = [];
    if (!Number.isFinite(opts.startMs)) problems.push('startMs must be a finite number');
    if (!(tickMs > 0) || !Number.isFinite(tickMs)) problems.push('tickMs must be a positive finite number');
    if (!Number.isInteger(levels) || levels < 1 || levels > MAX_LEVELS) {
      problems.push(`levels must be an integer from 1 to ${MAX_LEVELS}`);
    }
    if (!Number.isInteger(initialCapacity) || initialCapacity < 0) {
      problems.push('initialCapacity must be a non-negative integer');
    }
    if (problems.length > 0) {
      throw cadenzaError('INVALID_INPUT', 'invalid timing wheel options', { problems, opts });
    }
    this.startMs = opts.startMs;
    this.tickMs = tickMs;
    this.levels = levels;
    this.blockTicks = 2 ** (SLOT_BITS * levels);
    this.overflow = levels * SLOTS;
    const sentinels = this.overflow + 1;
    this.capacity = growCapacity(0, sentinels + initialCapacity);
    this.deadline = new Float64Array(this.capacity);
    this.next = new Int32Array(this.capacity);
    this.prev = new Int32Array(this.capacity);
    this.gen = new Int32Array(this.capacity);
    // Filled with undefined (not holes) so the array stays PACKED_ELEMENTS whatever K is.
    this.keys = Array.from({ length: sentinels }, () => undefined);
    for (let s = 0; s < sentinels; s++) {
      this.next[s] = s;
      this.prev[s] = s;
    }
    this.used = sentinels;
    this.occupied = new Int32Array(2 * levels + 1);
  }

  get size(): number {
    return this.count;
  }

  insert(deadlineMs: number, key: K): TimerId {
    checkTime('deadlineMs', deadlineMs);
    let n = this.freeHead;
    if (n >= 0) {
      this.freeHead = this.next[n]!;
    } else {
      n = this.used;
      if (n === this.capacity) this.grow(n + 1);
      this.used = n + 1;
    }
    const g = (this.gen[n]! + 1) & GEN_MASK; // odd: live
    this.gen[n] = g;
    this.deadline[n] = deadlineMs;
    this.keys[n] = key;
    this.place(n);
    this.count++;
    return timerId(n, g);
  }

  cancel(id: TimerId): boolean {
    const n = idIndex(id);
    const g = idGen(id, n);
    // Sentinels and free nodes have even generations, so they never match; a garbage id (negative,
    // fractional, NaN, or beyond capacity, where the typed array reads undefined) never matches either.
    if (this.gen[n] !== g || (g & 1) === 0) return false;
    const next = this.next;
    const prev = this.prev;
    const p = prev[n]!;
    const x = next[n]!;
    next[p] = x;
    prev[x] = p;
    // Only the sentinel is its own neighbour both ways: the slot just became empty.
    if (p === x) this.occupied[p >> 5]! &= ~(1 << (p & 31));
    this.release(n);
    return true;
  }

  advance(nowMs: number, out: K[] = []): K[] {
    checkTime('nowMs', nowMs);
    const nowTick = this.tickOf(nowMs);
    while (this.curBase + this.curLocal < nowTick) {
      // Every timer of the current tick is due: its deadline < the start of the next tick <= now.
      const cs = this.curLocal & SLOT_MASK;
      if (this.next[cs] !== cs) this.fireSlot(cs, out);
      const s = this.nextOccupied();
      if (s < 0) {
        this.setCurrent(nowTick);
        break;
      }
      if (s === this.overflow) {
        // All levels are empty: jump straight to the block of the earliest overflow tick.
        let base = this.curBase + this.blockTicks;
        const minBase = Math.floor(this.overflowMinTick / this.blockTicks) * this.blockTicks;
        if (minBase > base) base = minBase;
        if (base > nowTick) {
          this.setCurrent(nowTick);
          break;
        }
        this.curBase = base;
        this.curLocal = 0;
        this.cascade(s);
        continue;
      }
      // Jump to the start of slot s: every slot before it, at every level, is empty.
      const level = s >> SLOT_BITS;
      const shift = SLOT_BITS * level;
      const above = shift + SLOT_BITS;
      const local = ((this.curLocal >>> above) << above) | ((s & SLOT_MASK) << shift);
      if (this.curBase + local > nowTick) {
        this.setCurrent(nowTick);
        break;
      }
      this.curLocal = local;
      if (level > 0) this.cascade(s);
    }
    // The current tick may be only partly past: fire exactly the timers with deadline <= now.
    const cs = this.curLocal & SLOT_MASK;
    if (this.next[cs] !== cs) this.fireDue(cs, nowMs, out);
    return out;
  }

  /**
   * Exact (the earliest pending deadline) when that timer is due within the current 64-tick window
   * (6.4 s at the default tick): the slot holding it is scanned. Otherwise a lower bound: the start
   * of the wheel slot (or overflow block) that holds it, which is always after the current tick.
   * Arming one real timer for this value and calling advance() when it fires is therefore safe and
   * never spins; re-ask after each advance (at most `levels` early wake-ups before the exact value).
   */
  nextDeadline(): number | undefined {
    if (this.count === 0) return undefined;
    const cs = this.curLocal & SLOT_MASK;
    if (this.next[cs] !== cs) return this.minDeadline(cs);
    const s = this.nextOccupied();
    if (s < 0) return undefined; // unreachable while count > 0
    if (s === this.overflow) {
      return this.firstMsOfTick(Math.max(this.curBase + this.blockTicks, this.overflowMinTick));
    }
    const level = s >> SLOT_BITS;
    if (level === 0) return this.minDeadline(s);
    const shift = SLOT_BITS * level;
    const above = shift + SLOT_BITS;
    const local = ((this.curLocal >>> above) << above) | ((s & SLOT_MASK) << shift);
    return this.firstMsOfTick(this.curBase + local);
  }

  clear(): void {
    const gen = this.gen;
    for (let n = this.overflow + 1; n < this.used; n++) {
      if ((gen[n]! & 1) === 1) gen[n] = (gen[n]! + 1) & GEN_MASK;
    }
    for (let s = 0; s <= this.overflow; s++) {
      this.next[s] = s;
      this.prev[s] = s;
    }
    this.occupied.fill(0);
    // Nodes keep their generations, so ids issued before clear() stay stale after reuse.
    this.keys.length = this.overflow + 1;
    this.used = this.overflow + 1;
    this.freeHead = -1;
    this.count = 0;
  }

  /**
   * Monotonic and clamped to ±2^52, which is all correctness needs: a slot fires whole only when
   * tickOf(now) > its tick, and then every deadline in it is < now; the slot of tickOf(now) itself
   * is compared deadline by deadline.
   */
  private tickOf(ms: number): number {
    const t = Math.floor((ms - this.startMs) / this.tickMs);
    return t > MAX_TICK ? MAX_TICK : t < -MAX_TICK ? -MAX_TICK : t;
  }

  /**
   * The smallest float ms with tickOf(ms) >= tick. startMs + tick * tickMs can land an ulp off
   * either way; too low and advance() at it would not reach the slot (a caller re-arming on
   * nextDeadline() would spin), too high and it would not be a lower bound.
   */
  private firstMsOfTick(tick: number): number {
    let ms = this.startMs + tick * this.tickMs;
    for (let i = 0; i < 64 && this.tickOf(ms) < tick; i++) ms = nextFloat(ms, 1);
    for (let i = 0; i < 64 && this.tickOf(nextFloat(ms, -1)) >= tick; i++) ms = nextFloat(ms, -1);
    return ms;
  }

  private setCurrent(tick: number): void {
    const base = Math.floor(tick / this.blockTicks) * this.blockTicks;
    this.curBase = base;
    this.curLocal = tick - base;
  }

  /** Links node n into the slot for its deadline, relative to the current tick. */
  private place(n: number): void {
    const rel = this.tickOf(this.deadline[n]!) - this.curBase;
    let s: number;
    if (rel >= this.blockTicks) {
      s = this.overflow;
      const t = rel + this.curBase;
      if (this.next[s] === s || t < this.overflowMinTick) this.overflowMinTick = t;
    } else {
      // Past deadlines (and the current tick) go to the current slot and fire at the next advance.
      const local = rel > this.curLocal ? rel : this.curLocal;
      const x = local ^ this.curLocal;
      const level = x < SLOTS ? 0 : ((31 - Math.clz32(x)) / SLOT_BITS) | 0;
      s = (level << SLOT_BITS) | ((local >>> (SLOT_BITS * level)) & SLOT_MASK);
    }
    this.occupied[s >> 5]! |= 1 << (s & 31);
    const next = this.next;
    const first = next[s]!;
    next[n] = first;
    next[s] = n;
    this.prev[n] = s;
    this.prev[first] = n;
  }

  /**
   * The first non-empty slot after the current tick, searching level 0 first (earlier ticks), each
   * level from the slot after the current tick's digit; the overflow sentinel if only it is
   * occupied; -1 if nothing is pending beyond the current slot.
   */
  private nextOccupied(): number {
    const occ = this.occupied;
    for (let level = 0; level < this.levels; level++) {
      const digit = (this.curLocal >>> (SLOT_BITS * level)) & SLOT_MASK;
      const lo = occ[2 * level]!;
      const hi = occ[2 * level + 1]!;
      let i = -1;
      if (digit < 31) {
        const m = lo & (-1 << (digit + 1));
        if (m !== 0) i = 31 - Math.clz32(m & -m);
        else if (hi !== 0) i = 63 - Math.clz32(hi & -hi);
      } else if (digit < 63) {
        const m = hi & (-1 << (digit - 31));
        if (m !== 0) i = 63 - Math.clz32(m & -m);
      }
      if (i >= 0) return (level << SLOT_BITS) | i;
    }
    return (occ[2 * this.levels]! & 1) !== 0 ? this.overflow : -1;
  }

  /** Unlinks the whole slot and re-places each of its timers relative to the (new) current tick. */
  private cascade(s: number): void {
    const next = this.next;
    let n = next[s]!;
    next[s] = s;
    this.prev[s] = s;
    this.occupied[s >> 5]! &= ~(1 << (s & 31));
    while (n !== s) {
      const after = next[n]!;
      this.place(n);
      n = after;
    }
  }

  private fireSlot(s: number, out: K[]): void {
    const next = this.next;
    const keys = this.keys;
    let n = next[s]!;
    next[s] = s;
    this.prev[s] = s;
    this.occupied[s >> 5]! &= ~(1 << (s & 31));
    while (n !== s) {
      const after = next[n]!;
      out.push(keys[n] as K);
      this.release(n);
      n = after;
    }
  }

  private fireDue(s: number, nowMs: number, out: K[]): void {
    const next = this.next;
    const prev = this.prev;
    const deadline = this.deadline;
    const keys = this.keys;
    let n = next[s]!;
    while (n !== s) {
      const after = next[n]!;
      if (deadline[n]! <= nowMs) {
        const p = prev[n]!;
        next[p] = after;
        prev[after] = p;
        out.push(keys[n] as K);
        this.release(n);
      }
      n = after;
    }
    if (next[s] === s) this.occupied[s >> 5]! &= ~(1 << (s & 31));
  }

  private minDeadline(s: number): number {
    const next = this.next;
    const deadline = this.deadline;
    let min = Infinity;
    for (let n = next[s]!; n !== s; n = next[n]!) {
      if (deadline[n]! < min) min = deadline[n]!;
    }
    return min;
  }

  /** Returns node n to the free list; its generation turns even so its id goes stale. */
  private release(n: number): void {
    this.gen[n] = (this.gen[n]! + 1) & GEN_MASK;
    this.keys[n] = undefined;
    this.next[n] = this.freeHead;
    this.freeHead = n;
    this.count--;
  }

  private grow(needed: number): void {
    this.capacity = growCapacity(this.capacity, needed);
    this.deadline = growFloat64(this.deadline, this.capacity);
    this.next = growInt32(this.next, this.capacity);
    this.prev = growInt32(this.prev, this.capacity);
    this.gen = growInt32(this.gen, this.capacity);
  }
}
