import { cadenzaError } from '../../common/errors.ts';
import { KeyColumn } from './key-column.ts';
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
  /** 1..5 levels of 64 slots. Default 5: 2^30 ticks (3.4 years at 100 ms) before the overflow slot. */
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
/** A full node pool is compacted instead of grown when at least a quarter of it, and this many, are cancelled entries. */
const PURGE_MIN = 64;
/** A slot array emptied by a sweep keeps its buffer up to this many entries; a bigger one is dropped. */
const KEEP_SLOT_CAPACITY = 1024;
const EMPTY = new Int32Array(0);

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
 * level's block (64^levels ticks) wait in one overflow slot, re-examined when time reaches the
 * block of the earliest of them. advance() jumps straight to the next non-empty slot using one
 * occupancy bit per slot, so a jump of years costs the slots it finds, not the ticks it skips.
 *
 * Firing is exact, not rounded to the tick: advance(now) fires exactly the pending timers with
 * deadline <= now. Slots of ticks before now's tick fire whole; the slot of now's own tick is
 * scanned and only its due timers fire; the rest wait for the next advance. So a timer never fires
 * early and fires at the first advance with now >= its deadline. The scan is bounded by one tick's
 * worth of timers.
 *
 * Cancel is lazy, as in Kafka's purgatory: it only turns the node's generation even, one write to a
 * 4-bytes-per-node array, so a random cancel touches one cache line and nothing else. The dead
 * entry stays in its slot until the slot is swept (fired, cascaded, or scanned by nextDeadline) or
 * until an insert finds the node pool full with at least a quarter of it dead, when every slot is
 * compacted in one sequential pass instead of growing the pool, or until the last live timer is
 * cancelled, when everything is dropped at once. So the pool only grows while at least three
 * quarters of it are pending timers (it peaks under 2.7 nodes per pending timer; like the heap's,
 * it never shrinks), and a cancelled timer's key is held until its entry is swept.
 *
 * Storage is struct-of-arrays, 24 bytes per node of capacity (capacity doubles when full): deadline
 * (Float64Array), generation (Int32Array), free-node stack (Int32Array), key (KeyColumn: a
 * Float64Array while keys are numbers, else a JS array of 8-byte pointers; a string key itself is
 * the caller's and not counted). Each slot is a growable Int32Array of node indices, 4 bytes per
 * entry: sweeping a slot reads it sequentially and the node loads are independent of each other,
 * where a linked list through the nodes would chase one pointer at a time.
 */
export class TimingWheel<K = number> implements TimerQueue<K> {
  private readonly startMs: number;
  private readonly tickMs: number;
  private readonly levels: number;
  /** 64^levels: ticks per top-level block. */
  private readonly blockTicks: number;
  /** Index of the overflow slot; the wheel's slots are 0 .. levels*64-1 (level << 6 | digit). */
  private readonly overflow: number;

  private nodeCapacity: number;
  private deadline: Float64Array;
  /** Odd: live. Even: free, or cancelled and not yet swept. */
  private gen: Int32Array;
  private readonly keys: KeyColumn<K>;
  /** Free nodes, LIFO: pushing while a slot is swept writes sequentially, not at each node. */
  private freeStack: Int32Array;
  private freeTop = 0;
  /** Nodes [0, used) have been handed out at least once. */
  private used = 0;
  private count = 0;
  /** Cancelled entries still in a slot. */
  private dead = 0;

  /** Node indices per slot, live and cancelled, in slotNodes[s][0 .. slotLen[s]). */
  private readonly slotNodes: Int32Array[];
  private readonly slotLen: Int32Array;
  /** One bit per slot (slot s is bit s & 31 of word s >> 5), the overflow last. Set iff slotLen > 0. */
  private readonly occupied: Int32Array;
  /** Lower bound of the ticks in the overflow slot (cancels only raise the true minimum). */
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
    this.nodeCapacity = growCapacity(0, initialCapacity);
    this.deadline = new Float64Array(this.nodeCapacity);
    this.gen = new Int32Array(this.nodeCapacity);
    this.freeStack = new Int32Array(this.nodeCapacity);
    this.keys = new KeyColumn<K>(this.nodeCapacity);
    this.slotNodes = Array.from({ length: this.overflow + 1 }, () => EMPTY);
    this.slotLen = new Int32Array(this.overflow + 1);
    this.occupied = new Int32Array(2 * levels + 1);
  }

  get size(): number {
    return this.count;
  }

  /** Nodes allocated: room for pending timers, cancelled ones not yet swept, and free ones. For metrics. */
  get capacity(): number {
    return this.nodeCapacity;
  }

  insert(deadlineMs: number, key: K): TimerId {
    checkTime('deadlineMs', deadlineMs);
    if (this.freeTop === 0 && this.used === this.nodeCapacity) this.reclaim();
    const n = this.freeTop > 0 ? this.freeStack[--this.freeTop]! : this.used++;
    const g = (this.gen[n]! + 1) & GEN_MASK; // odd: live
    this.gen[n] = g;
    this.deadline[n] = deadlineMs;
    this.keys.set(n, key);
    this.place(n, deadlineMs);
    this.count++;
    return timerId(n, g);
  }

  cancel(id: TimerId): boolean {
    const n = idIndex(id);
    const g = idGen(id, n);
    const gen = this.gen;
    // Free and cancelled nodes have even generations, so they never match; a garbage id (negative,
    // fractional, NaN, or beyond capacity, where the typed array reads undefined) never does either.
    if (gen[n] !== g || (g & 1) === 0) return false;
    gen[n] = (g + 1) & GEN_MASK;
    this.count--;
    // Going idle after cancels: every entry left is dead, so drop them all at once.
    if (++this.dead >= PURGE_MIN && this.count === 0) this.dropAll();
    return true;
  }

  advance(nowMs: number, out: K[] = []): K[] {
    checkTime('nowMs', nowMs);
    const nowTick = this.tickOf(nowMs);
    while (this.curBase + this.curLocal < nowTick) {
      // Every timer of the current tick is due: its deadline < the start of the next tick <= now.
      const cs = this.curLocal & SLOT_MASK;
      if (this.slotLen[cs] !== 0) this.fireSlot(cs, out);
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
      const local = this.slotStart(s);
      if (this.curBase + local > nowTick) {
        this.setCurrent(nowTick);
        break;
      }
      this.curLocal = local;
      if (s >= SLOTS) this.cascade(s);
    }
    // The current tick may be only partly past: fire exactly the timers with deadline <= now.
    const cs = this.curLocal & SLOT_MASK;
    if (this.slotLen[cs] !== 0) this.fireDue(cs, nowMs, out);
    return out;
  }

  /**
   * Exact (the earliest pending deadline) when that timer is due within the current 64-tick window
   * (6.4 s at the default tick): the slot holding it is scanned. Otherwise a lower bound: the start
   * of the wheel slot (or overflow block) that holds it, which is always after the current tick.
   * Arming one real timer for this value and calling advance() when it fires is therefore safe and
   * never spins; re-ask after each advance (a few early wake-ups, at most one per level plus one
   * per slot that holds only cancelled timers, before the exact value).
   */
  nextDeadline(): number | undefined {
    if (this.count === 0) return undefined;
    const cs = this.curLocal & SLOT_MASK;
    if (this.slotLen[cs] !== 0) {
      const min = this.minLive(cs);
      if (min === min) return min; // not NaN: the slot holds a live timer
    }
    for (;;) {
      const s = this.nextOccupied();
      if (s < 0) return undefined; // unreachable while count > 0
      if (s === this.overflow) {
        return this.firstMsOfTick(Math.max(this.curBase + this.blockTicks, this.overflowMinTick));
      }
      if (s >= SLOTS) return this.firstMsOfTick(this.curBase + this.slotStart(s));
      const min = this.minLive(s);
      if (min === min) return min;
    }
  }

  clear(): void {
    const gen = this.gen;
    for (let n = 0; n < this.used; n++) {
      if ((gen[n]! & 1) === 1) gen[n] = (gen[n]! + 1) & GEN_MASK;
    }
    this.count = 0;
    this.dropAll();
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

  /** The current block's local tick where slot s (a wheel slot, not overflow) starts, at or after the current tick. */
  private slotStart(s: number): number {
    const shift = SLOT_BITS * (s >> SLOT_BITS);
    const above = shift + SLOT_BITS;
    return ((this.curLocal >>> above) << above) | ((s & SLOT_MASK) << shift);
  }

  /** Appends node n to the slot for its deadline, relative to the current tick. */
  private place(n: number, deadlineMs: number): void {
    const rel = this.tickOf(deadlineMs) - this.curBase;
    let s: number;
    if (rel >= this.blockTicks) {
      s = this.overflow;
      const t = rel + this.curBase;
      if (this.slotLen[s] === 0 || t < this.overflowMinTick) this.overflowMinTick = t;
    } else {
      // Past deadlines (and the current tick) go to the current slot and fire at the next advance.
      const local = rel > this.curLocal ? rel : this.curLocal;
      const x = local ^ this.curLocal;
      // floor(msb / 6) as (msb * 43) >> 8, exact for msb 0..31; x < 64 is level 0.
      const level = x < SLOTS ? 0 : ((31 - Math.clz32(x)) * 43) >> 8;
      s = (level << SLOT_BITS) | ((local >>> (SLOT_BITS * level)) & SLOT_MASK);
    }
    const len = this.slotLen[s]!;
    let nodes = this.slotNodes[s]!;
    if (len === nodes.length) nodes = this.growSlot(s, len);
    nodes[len] = n;
    this.slotLen[s] = len + 1;
    if (len === 0) this.occupied[s >> 5]! |= 1 << (s & 31);
  }

  private growSlot(s: number, len: number): Int32Array {
    const nodes = new Int32Array(len < 8 ? 16 : len * 2);
    nodes.set(this.slotNodes[s]!);
    this.slotNodes[s] = nodes;
    return nodes;
  }

  /**
   * The first non-empty slot after the current tick, searching level 0 first (earlier ticks), each
   * level from the slot after the current tick's digit; the overflow slot if only it is occupied;
   * -1 if nothing is pending beyond the current slot.
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

  /** Empties slot s, dropping a large buffer so a burst does not pin memory. */
  private release(s: number): void {
    this.slotLen[s] = 0;
    if (this.slotNodes[s]!.length > KEEP_SLOT_CAPACITY) this.slotNodes[s] = EMPTY;
    this.occupied[s >> 5]! &= ~(1 << (s & 31));
  }

  /** Re-places each live timer of slot s relative to the (new) current tick; frees the dead. */
  private cascade(s: number): void {
    const nodes = this.slotNodes[s]!;
    const len = this.slotLen[s]!;
    // Detach first: the overflow slot may take some of its own timers back.
    this.slotNodes[s] = EMPTY;
    this.slotLen[s] = 0;
    this.occupied[s >> 5]! &= ~(1 << (s & 31));
    const gen = this.gen;
    for (let i = 0; i < len; i++) {
      const n = nodes[i]!;
      if ((gen[n]! & 1) === 1) this.place(n, this.deadline[n]!);
      else this.free(n);
    }
    if (this.slotLen[s] === 0 && nodes.length <= KEEP_SLOT_CAPACITY) this.slotNodes[s] = nodes;
  }

  private fireSlot(s: number, out: K[]): void {
    const nodes = this.slotNodes[s]!;
    const len = this.slotLen[s]!;
    const gen = this.gen;
    const keys = this.keys;
    for (let i = 0; i < len; i++) {
      const n = nodes[i]!;
      const g = gen[n]!;
      if ((g & 1) === 1) {
        out.push(keys.get(n));
        gen[n] = (g + 1) & GEN_MASK;
        this.count--;
        this.dead++; // free() counts it back down
      }
      this.free(n);
    }
    this.release(s);
  }

  private fireDue(s: number, nowMs: number, out: K[]): void {
    const nodes = this.slotNodes[s]!;
    const len = this.slotLen[s]!;
    const gen = this.gen;
    const deadline = this.deadline;
    let kept = 0;
    for (let i = 0; i < len; i++) {
      const n = nodes[i]!;
      const g = gen[n]!;
      if ((g & 1) === 0) {
        this.free(n);
      } else if (deadline[n]! <= nowMs) {
        out.push(this.keys.get(n));
        gen[n] = (g + 1) & GEN_MASK;
        this.count--;
        this.dead++;
        this.free(n);
      } else {
        nodes[kept++] = n;
      }
    }
    if (kept === 0) this.release(s);
    else this.slotLen[s] = kept;
  }

  /** The earliest live deadline in slot s, or NaN if it holds none; frees the dead on the way. */
  private minLive(s: number): number {
    const nodes = this.slotNodes[s]!;
    const len = this.slotLen[s]!;
    const gen = this.gen;
    const deadline = this.deadline;
    let min = Number.NaN;
    let kept = 0;
    for (let i = 0; i < len; i++) {
      const n = nodes[i]!;
      if ((gen[n]! & 1) === 0) {
        this.free(n);
      } else {
        if (!(deadline[n]! >= min)) min = deadline[n]!; // true while min is NaN
        nodes[kept++] = n;
      }
    }
    if (kept === 0) this.release(s);
    else this.slotLen[s] = kept;
    return min;
  }

  /** Returns a swept dead node to the free stack. */
  private free(n: number): void {
    this.keys.release(n);
    this.freeStack[this.freeTop++] = n;
    this.dead--;
  }

  /**
   * The node pool is full. If enough of it is cancelled entries, compacts them out of every slot
   * (one sequential pass), freeing their nodes; otherwise doubles the pool. A compaction frees at
   * least a quarter of the pool, so its cost is O(1) per insert amortised.
   */
  private reclaim(): void {
    if (this.dead >= PURGE_MIN && this.dead >= this.nodeCapacity >> 2) this.purge();
    else this.grow(this.nodeCapacity + 1);
  }

  /**
   * With no live timer left: empties every slot and frees every node at once. Nodes keep their
   * (even) generations, so ids issued before stay stale after reuse. O(slots + used), and used only
   * grows by inserts, so the cost is O(1) per insert amortised.
   */
  private dropAll(): void {
    for (let s = 0; s <= this.overflow; s++) if (this.slotLen[s] !== 0) this.release(s);
    this.keys.releaseAll(this.used);
    this.used = 0;
    this.freeTop = 0;
    this.dead = 0;
  }

  /** Compacts every slot, dropping cancelled entries, and frees their nodes. */
  private purge(): void {
    const gen = this.gen;
    for (let s = 0; s <= this.overflow; s++) {
      const len = this.slotLen[s]!;
      if (len === 0) continue;
      const nodes = this.slotNodes[s]!;
      let kept = 0;
      for (let i = 0; i < len; i++) {
        const n = nodes[i]!;
        if ((gen[n]! & 1) === 1) nodes[kept++] = n;
        else this.free(n);
      }
      if (kept === 0) this.release(s);
      else this.slotLen[s] = kept;
    }
  }

  private grow(needed: number): void {
    this.nodeCapacity = growCapacity(this.nodeCapacity, needed);
    this.deadline = growFloat64(this.deadline, this.nodeCapacity);
    this.gen = growInt32(this.gen, this.nodeCapacity);
    this.freeStack = growInt32(this.freeStack, this.nodeCapacity);
    this.keys.grow(this.nodeCapacity);
  }
}
