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
  /** 1..3 levels of 256 slots. Default 3: 2^24 ticks (19 days at 100 ms) before the overflow slot. */
  levels?: number;
  /** Nodes allocated up front; the arrays double when full. Default 1024. */
  initialCapacity?: number;
}

const SLOT_BITS = 8;
const SLOTS = 1 << SLOT_BITS;
const SLOT_MASK = SLOTS - 1;
/** Occupancy words (32 slots each) per level. */
const WORDS = SLOTS >> 5;
/** 3 * 8 = 24 bits: a tick's position in its block stays a small positive int32 under every shift. */
const MAX_LEVELS = 3;
/** Ticks are clamped to ±2^52 so tick arithmetic stays exact; clamping is monotonic, see tickOf. */
const MAX_TICK = 2 ** 52;
/** A full node pool is compacted instead of grown when at least a quarter of it, and this many, are cancelled entries. */
const PURGE_MIN = 64;
/**
 * Slot entries live in chunks of CHUNK positions of the entry pool: position base holds the link
 * (the base of the slot's previous, full chunk; 0 for none), positions base+1 .. base+CHUNK-1 hold
 * entries. Chunk 0 is never handed out, so base 0 also means "no chunk". A free chunk's link is the
 * next free chunk. 64 is a compromise, measured on the benchmark's cancel-heavy load: 16 and 32
 * hop so often that the advance phase costs 8 and 14 ns per timer more; 256 saves about 3 ns per
 * timer there but ties up 6 KiB per occupied slot (1.5 KiB at 64); chunks growing from 16 to 256
 * per slot kept small slots small but slowed the insert burst by more than they saved.
 */
const CHUNK = 64;
const CHUNK_MASK = CHUNK - 1;
/** Doubles per entry position: node index, deadline, numeric key (see the class comment). */
const STRIDE = 3;
/**
 * The entry pool is pages of 2^14 positions (384 KiB): growing adds a page and copies nothing, and
 * a chunk never straddles two. The first page starts small and doubles up to full size, so a
 * small wheel stays small.
 */
const PAGE_BITS = 14;
const PAGE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE - 1;

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);

/** A BigInt that orders doubles as < does (+0 and -0 both 0): the bit pattern, negated for negatives. */
function ordinal(x: number): bigint {
  f64[0] = Math.abs(x);
  return x < 0 ? -i64[0]! : i64[0]!;
}

function fromOrdinal(o: bigint): number {
  i64[0] = o < 0n ? -o : o;
  return o < 0n ? -f64[0]! : f64[0]!;
}

/**
 * Hierarchical timing wheel (Varghese & Lauck 1987, "Hashed and Hierarchical Timing Wheels"; the
 * layout of the Linux timer wheel and Kafka's purgatory): insert and cancel are O(1), advance is
 * proportional to the timers it fires or moves plus the non-empty slots it visits.
 *
 * Time is cut into ticks of tickMs from startMs; tick(t) = floor((t - startMs) * (1 / tickMs)),
 * one multiply (see tickOf: only monotonicity matters). Level L has 256 slots of 256^L ticks each.
 * A timer lives at the lowest level where its tick and the current tick agree on every digit above
 * L (base 256), in the slot named by its tick's digit L; when the current tick reaches that slot,
 * the slot is cascaded into the lower levels. 256 slots rather than 64 because every level a
 * surviving timer passes through is another move: at the default 100 ms tick level 0 spans 25.6 s
 * and level 1 spans 1.8 h, so a timer due within the hour is moved at most once before it fires
 * (twice with 64). Ticks beyond the top level's block (256^levels ticks) wait in one overflow slot,
 * re-examined when time reaches the block of the earliest of them. advance() jumps straight to the
 * next non-empty slot using one occupancy bit per slot, so a jump of years costs the slots it
 * finds, not the ticks it skips.
 *
 * Firing is exact, not rounded to the tick: advance(now) fires exactly the pending timers with
 * deadline <= now. Slots of ticks before now's tick fire whole; the slot of now's own tick is
 * scanned and only its due timers fire; the rest wait for the next advance. So a timer never fires
 * early and fires at the first advance with now >= its deadline. The scan is bounded by one tick's
 * worth of timers.
 *
 * A timer is two things. Its node is its identity, what its id names: a generation (Int32Array;
 * the id carries it, so a stale id never matches a reused node) and a live bit (a bitmap). Its
 * entry is where it waits: node index, deadline and key, three adjacent doubles in a slot's chunk.
 * Cancel touches only the node; cascading and firing touch only entries and live bits. So cancel
 * is one read of a generation and one cleared bit, and a sweep reads its slot's chunks in order
 * and tests bits in a bitmap of 128 KiB per million nodes that stays in cache: a surviving timer
 * costs no random memory access from insert to fire, nor a cancelled one after its cancel. (Kept
 * by node, the deadline and key cost each survivor a cache miss per move and per fire, and the
 * generation each cancelled entry a miss when swept: most of the cancel-heavy load's advance.)
 *
 * Cancel is lazy, as in Kafka's purgatory: it clears the live bit and leaves the entry in its slot
 * until the slot is swept (fired, cascaded, or scanned by nextDeadline) or until an insert finds
 * the node pool full with at least a quarter of it dead, when every slot is compacted in one pass
 * instead of growing the pool, or until the last live timer is cancelled, when everything is
 * dropped at once. So the node pool only grows while at least three quarters of it are pending
 * timers (it peaks under 2.7 nodes per pending timer; like the heap's, it never shrinks), and a
 * cancelled timer's key is held until its entry is swept.
 *
 * Chunks of 64 entry positions (a link to the slot's previous chunk, then 63 entries): appending is
 * a store into the slot's open chunk, with no per-slot buffer to grow or copy, and a sweep reads
 * 63 entries between hops (a hop is a dependent load, the walk's only one). The entry pool is
 * pages of 16,384 positions, added as needed without copying. Keys are stored in the entry while
 * every key is a number (unboxed, nothing for the GC to scan); the first key that is not moves
 * them to a JS array by node, read only when a timer fires.
 *
 * Memory: 8.1 bytes per node of capacity (generation, free-node stack, live bit), 24 bytes per
 * entry position (about 24.4 per entry, counting links), plus a JS array pointer per node once keys
 * are not numbers (the key itself is the caller's). Pending timers in a million-timer wheel cost
 * 33 bytes each with numeric keys, 44 with string keys. At worst, just before the node pool is
 * compacted (2.7 nodes and entries per pending timer), 87 and 108 bytes. Fixed: up to one
 * part-filled chunk (1.5 KiB) per occupied slot and one page beyond what is used.
 */
export class TimingWheel<K = number> implements TimerQueue<K> {
  // Fields set in the constructor are `declare`d: under ES2022 class-field semantics a field
  // declared without an initializer is first defined as undefined, and V8 then tracks it as tagged
  // (a Smi-or-HeapNumber check on each read, a fresh HeapNumber on each double store). Assigned
  // first in the constructor, each field gets its value's representation.
  private declare readonly startMs: number;
  private declare readonly tickMs: number;
  /** 1 / tickMs: tickOf multiplies instead of dividing. */
  private declare readonly perTick: number;
  private declare readonly levels: number;
  /** 256^levels: ticks per top-level block. */
  private declare readonly blockTicks: number;
  /** Index of the overflow slot; the wheel's slots are 0 .. levels*256-1 (level << 8 | digit). */
  private declare readonly overflow: number;

  // Nodes: a timer's identity.
  private declare nodeCapacity: number;
  /** The generation of the node's current or last timer: odd once used, 0 before (a bare 0 is never issued). */
  private declare gen: Int32Array;
  /** Bit n & 31 of word n >> 5 is set iff node n holds a pending timer. */
  private declare live: Int32Array;
  /** Free nodes, LIFO: pushing while a slot is swept writes sequentially, not at each node. */
  private declare freeStack: Int32Array;
  private freeTop = 0;
  /** Nodes [0, used) have been handed out at least once. */
  private used = 0;
  private count = 0;
  /** Cancelled entries still in a slot. */
  private dead = 0;
  /**
   * Keys by node once a key that is not a number has been inserted (packed, undefined where none);
   * null while every key is a number and lives in its entry.
   */
  private refs: (K | undefined)[] | null = null;

  // Entries: where a timer waits, with all that moving or firing it needs.
  /** Entry positions allocated: the pages' total. */
  private declare entryCapacity: number;
  /**
   * Position p is page p >> PAGE_BITS, doubles q .. q+2 with q = 3 * (p & PAGE_MASK): node index,
   * deadline, numeric key. A chunk's link sits in its base position's node index.
   */
  private declare readonly pages: Float64Array[];
  /** Chunks below this base have been handed out at least once. */
  private chunkTop = CHUNK;
  /** Base of the first free chunk; 0 when the free list is empty. */
  private freeChunk = 0;
  /**
   * Per slot, the entry position where its next entry goes: 0 when the slot is empty, a multiple
   * of CHUNK when its newest chunk is full. Its newest chunk holds the entries below it; the
   * chunk's link leads to the older, full ones.
   */
  private declare readonly slotPos: Int32Array;
  /** One bit per slot (slot s is bit s & 31 of word s >> 5), the overflow last. Set iff slotPos != 0. */
  private declare readonly occupied: Int32Array;
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
    // A subnormal tick has no finite reciprocal.
    if (!(tickMs > 0) || !Number.isFinite(tickMs) || !Number.isFinite(1 / tickMs)) {
      problems.push('tickMs must be a positive finite number');
    }
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
    this.perTick = 1 / tickMs;
    this.levels = levels;
    this.blockTicks = 2 ** (SLOT_BITS * levels);
    this.overflow = levels * SLOTS;
    this.nodeCapacity = growCapacity(0, initialCapacity);
    this.gen = new Int32Array(this.nodeCapacity);
    this.live = new Int32Array((this.nodeCapacity + 31) >> 5);
    this.freeStack = new Int32Array(this.nodeCapacity);
    // Room for the initial nodes and a part-filled chunk in 16 slots; grows on demand.
    this.entryCapacity = Math.min(CHUNK * (Math.ceil(this.nodeCapacity / (CHUNK - 1)) + 17), PAGE);
    this.pages = [new Float64Array(STRIDE * this.entryCapacity)];
    this.slotPos = new Int32Array(this.overflow + 1);
    this.occupied = new Int32Array(WORDS * levels + 1);
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
    let n = this.freeTop;
    if (n > 0) {
      this.freeTop = --n;
      n = this.freeStack[n]!;
    } else {
      n = this.used;
      if (n === this.nodeCapacity) n = this.allocateSlow();
      else this.used = n + 1;
    }
    // A new odd generation per use: ids of the node's earlier timers stop matching.
    const gen = this.gen;
    const g = ((gen[n]! + 2) & GEN_MASK) | 1;
    gen[n] = g;
    this.live[n >> 5]! |= 1 << (n & 31);
    let numKey = 0;
    if (this.refs === null && typeof key === 'number') numKey = key;
    else this.setRef(n, key);
    this.place(n, deadlineMs, numKey);
    this.count++;
    return timerId(n, g);
  }

  cancel(id: TimerId): boolean {
    const n = idIndex(id);
    // Only a pending timer's id passes both checks. A garbage id (negative, fractional, NaN, or
    // beyond capacity, where the typed array reads undefined) matches no generation, or generation
    // 0 of a never-used node, whose live bit is clear; a stale id matches only until its node is
    // reused, and meanwhile the node's live bit is clear.
    if (this.gen[n] !== idGen(id, n)) return false;
    const live = this.live;
    const w = live[n >> 5]!;
    const bit = 1 << (n & 31);
    if ((w & bit) === 0) return false;
    live[n >> 5] = w & ~bit;
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
      if (this.slotPos[cs] !== 0) this.fireSlot(cs, out);
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
    if (this.slotPos[cs] !== 0) this.sweep(cs, SWEEP_FIRE_DUE, nowMs, out);
    return out;
  }

  /**
   * Exact (the earliest pending deadline) when that timer is due within the current 256-tick window
   * (25.6 s at the default tick): the slot holding it is scanned. Otherwise a lower bound: the start
   * of the wheel slot (or overflow block) that holds it, which is always after the current tick.
   * Arming one real timer for this value and calling advance() when it fires is therefore safe and
   * never spins; re-ask after each advance (a few early wake-ups, at most one per level plus one
   * per slot that holds only cancelled timers, before the exact value).
   */
  nextDeadline(): number | undefined {
    if (this.count === 0) return undefined;
    const cs = this.curLocal & SLOT_MASK;
    if (this.slotPos[cs] !== 0) {
      const min = this.sweep(cs, SWEEP_MIN_LIVE, 0, null);
      if (min === min) return min; // not NaN: the slot holds a live timer
    }
    for (;;) {
      const s = this.nextOccupied();
      if (s < 0) return undefined; // unreachable while count > 0
      if (s === this.overflow) {
        return this.firstMsOfTick(Math.max(this.curBase + this.blockTicks, this.overflowMinTick));
      }
      if (s >= SLOTS) return this.firstMsOfTick(this.curBase + this.slotStart(s));
      const min = this.sweep(s, SWEEP_MIN_LIVE, 0, null);
      if (min === min) return min;
    }
  }

  clear(): void {
    // Ids issued so far stay stale: their nodes' live bits are clear, and a reused node gets a new generation.
    this.live.fill(0);
    this.count = 0;
    this.dropAll();
  }

  /**
   * Monotonic and clamped to ±2^52, which is all correctness needs: a slot fires whole only when
   * tickOf(now) > its tick, and then every deadline in it is < now (a monotonic tickOf cannot put
   * a later time in an earlier tick); the slot of tickOf(now) itself is compared deadline by
   * deadline. A multiply by the rounded reciprocal can put a tick boundary an ulp away from
   * startMs + k * tickMs; nothing depends on where exactly the boundaries fall.
   */
  private tickOf(ms: number): number {
    const t = Math.floor((ms - this.startMs) * this.perTick);
    return t > MAX_TICK ? MAX_TICK : t < -MAX_TICK ? -MAX_TICK : t;
  }

  /**
   * The smallest double ms with tickOf(ms) >= tick. startMs + tick * tickMs can land off the
   * boundary either way, by many ulps of ms when ms is much smaller than startMs (the subtraction
   * in tickOf then rounds away thousands of them); too low and advance() at it would not reach the
   * slot (a caller re-arming on nextDeadline() would spin), too high and it would not be a lower
   * bound. So it brackets the boundary a few ticks wide and bisects the doubles in between by
   * their order (at most 64 halvings). Only nextDeadline's lower-bound answer comes here.
   */
  private firstMsOfTick(tick: number): number {
    const guess = this.startMs + tick * this.tickMs;
    let lo = guess;
    let hi = guess;
    for (let k = 1; this.tickOf(lo) >= tick; k *= 2) {
      lo = guess - k * this.tickMs;
      if (lo === -Infinity) return lo;
    }
    for (let k = 1; this.tickOf(hi) < tick; k *= 2) {
      hi = guess + k * this.tickMs;
      if (hi === Infinity) return hi;
    }
    // tickOf(lo) < tick <= tickOf(hi)
    let a = ordinal(lo);
    let b = ordinal(hi);
    while (b - a > 1n) {
      const mid = (a + b) >> 1n;
      if (this.tickOf(fromOrdinal(mid)) >= tick) b = mid;
      else a = mid;
    }
    return fromOrdinal(b);
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

  /** Appends an entry for node n to the slot for its deadline, relative to the current tick. */
  private place(n: number, deadlineMs: number, numKey: number): void {
    const x = (deadlineMs - this.startMs) * this.perTick; // tickOf(deadlineMs) = floor(x), clamped
    const cur = this.curLocal;
    // Fast path, a tick in the current block at or after the current one: floor(x) - curBase is
    // x - curBase truncated (exact: curBase is 0 or within a factor 2 of x, Sterbenz), in int32
    // range, and floor(x) is below the clamp. Everything else (past, overflow, huge) takes slot().
    const local = x - this.curBase;
    const s = local >= cur && local < this.blockTicks && x < MAX_TICK ? this.wheelSlot(local | 0, cur) : this.slot(x);
    let p = this.slotPos[s]!;
    if ((p & CHUNK_MASK) === 0) p = this.newChunk(s, p);
    const page = this.pages[p >> PAGE_BITS]!;
    const q = STRIDE * (p & PAGE_MASK);
    page[q] = n;
    page[q + 1] = deadlineMs;
    page[q + 2] = numKey;
    this.slotPos[s] = p + 1;
  }

  /**
   * The wheel slot of local tick `local` (current block, >= cur, the current local tick): the
   * highest digit where they differ is the level (< levels, as local < blockTicks), and the slot
   * is local's digit there.
   */
  private wheelSlot(local: number, cur: number): number {
    const x = local ^ cur;
    return x < SLOTS ? local & SLOT_MASK : x < SLOTS * SLOTS ? SLOTS | ((local >>> 8) & SLOT_MASK) : 2 * SLOTS | (local >>> 16);
  }

  /** The slot for tick floor(x) in general (place handles the common case without it). */
  private slot(x: number): number {
    let t = Math.floor(x);
    t = t > MAX_TICK ? MAX_TICK : t < -MAX_TICK ? -MAX_TICK : t; // as tickOf
    const rel = t - this.curBase;
    // Past deadlines (and the current tick) go to the current slot and fire at the next advance.
    if (rel < this.blockTicks) return this.wheelSlot(rel > this.curLocal ? rel : this.curLocal, this.curLocal);
    if (this.slotPos[this.overflow] === 0 || t < this.overflowMinTick) this.overflowMinTick = t;
    return this.overflow;
  }

  /** Appends entry (node n, deadline, numeric key) to slot s, where it already belongs (a put-back). */
  private append(s: number, n: number, deadlineMs: number, numKey: number): void {
    let p = this.slotPos[s]!;
    if ((p & CHUNK_MASK) === 0) p = this.newChunk(s, p);
    const page = this.pages[p >> PAGE_BITS]!;
    const q = STRIDE * (p & PAGE_MASK);
    page[q] = n;
    page[q + 1] = deadlineMs;
    page[q + 2] = numKey;
    this.slotPos[s] = p + 1;
  }

  /** Opens a chunk for slot s, whose position p is 0 (empty) or the end of a full chunk; returns its first entry position. */
  private newChunk(s: number, p: number): number {
    let c = this.freeChunk;
    if (c !== 0) {
      this.freeChunk = this.pages[c >> PAGE_BITS]![STRIDE * (c & PAGE_MASK)]! | 0;
    } else {
      c = this.chunkTop;
      if (c === this.entryCapacity) this.growEntries();
      this.chunkTop = c + CHUNK;
    }
    // The link: the full chunk's base, or 0.
    this.pages[c >> PAGE_BITS]![STRIDE * (c & PAGE_MASK)] = p === 0 ? 0 : p - CHUNK;
    if (p === 0) this.occupied[s >> 5]! |= 1 << (s & 31);
    return c + 1;
  }

  /** Returns chunk `base` (fully read) to the free list. */
  private freeChunkAt(base: number): void {
    this.pages[base >> PAGE_BITS]![STRIDE * (base & PAGE_MASK)] = this.freeChunk;
    this.freeChunk = base;
  }

  /**
   * The first non-empty slot after the current tick, searching level 0 first (earlier ticks), each
   * level from the slot after the current tick's digit; the overflow slot if only it is occupied;
   * -1 if nothing is pending beyond the current slot.
   */
  private nextOccupied(): number {
    const occ = this.occupied;
    for (let level = 0; level < this.levels; level++) {
      const from = ((this.curLocal >>> (SLOT_BITS * level)) & SLOT_MASK) + 1;
      if (from === SLOTS) continue;
      const first = level * WORDS;
      let w = from >> 5;
      let m = occ[first + w]! & (-1 << (from & 31));
      while (m === 0 && ++w < WORDS) m = occ[first + w]!;
      if (m !== 0) return (level << SLOT_BITS) | (w << 5) | (31 - Math.clz32(m & -m));
    }
    return (occ[WORDS * this.levels]! & 1) !== 0 ? this.overflow : -1;
  }

  /**
   * Cascade: empties slot s (a higher level's slot the current tick has just entered, or the
   * overflow) and re-places its live timers relative to the current tick, freeing the dead. Walks
   * newest chunk first, returning each chunk to the free list once read, so the re-placing reuses
   * them (and the overflow slot can take some of its own timers back). This and fireSlot are the
   * loops every surviving timer goes through, so they are written out rather than sharing sweep.
   */
  private cascade(s: number): void {
    let end = this.slotPos[s]!;
    this.slotPos[s] = 0;
    this.occupied[s >> 5]! &= ~(1 << (s & 31));
    const live = this.live;
    const refs = this.refs;
    const freeStack = this.freeStack;
    let freeTop = this.freeTop;
    let base = (end - 1) & ~CHUNK_MASK;
    for (;;) {
      // Re-read: a re-placing may have grown the first page (the old one still holds this chunk as it was).
      const ent = this.pages[base >> PAGE_BITS]!;
      const b = STRIDE * (base & PAGE_MASK);
      const link = ent[b]! | 0;
      for (let q = b + STRIDE, qEnd = b + STRIDE * (end - base); q < qEnd; q += STRIDE) {
        const n = ent[q]! | 0;
        if ((live[n >> 5]! & (1 << (n & 31))) !== 0) {
          this.place(n, ent[q + 1]!, ent[q + 2]!);
        } else {
          freeStack[freeTop++] = n;
          if (refs !== null) refs[n] = undefined;
        }
      }
      this.freeChunkAt(base);
      if (link === 0) break;
      base = link;
      end = link + CHUNK;
    }
    this.dead -= freeTop - this.freeTop; // only the dead were freed
    this.freeTop = freeTop;
  }

  /** Fires every live timer in slot s (its tick is wholly past) and frees every node in it. */
  private fireSlot(s: number, out: K[]): void {
    let end = this.slotPos[s]!;
    this.slotPos[s] = 0;
    this.occupied[s >> 5]! &= ~(1 << (s & 31));
    const pages = this.pages; // nothing is appended during this walk
    const live = this.live;
    const refs = this.refs;
    const freeStack = this.freeStack;
    let freeTop = this.freeTop;
    let fired = 0;
    let base = (end - 1) & ~CHUNK_MASK;
    for (;;) {
      const ent = pages[base >> PAGE_BITS]!;
      const b = STRIDE * (base & PAGE_MASK);
      const link = ent[b]! | 0;
      for (let q = b + STRIDE, qEnd = b + STRIDE * (end - base); q < qEnd; q += STRIDE) {
        const n = ent[q]! | 0;
        const w = live[n >> 5]!;
        const bit = 1 << (n & 31);
        if ((w & bit) !== 0) {
          out.push(refs === null ? (ent[q + 2] as K) : refs[n]!);
          live[n >> 5] = w & ~bit;
          fired++;
        }
        if (refs !== null) refs[n] = undefined;
        freeStack[freeTop++] = n;
      }
      this.freeChunkAt(base);
      if (link === 0) break;
      base = link;
      end = link + CHUNK;
    }
    this.dead -= freeTop - this.freeTop - fired;
    this.freeTop = freeTop;
    this.count -= fired;
  }

  /**
   * The rarer walks, which keep some entries where they are: frees dead entries' nodes; of the
   * live, fires those due (fire due: the current tick's slot, partly past) or folds their deadlines
   * into the minimum (min live: the return value, NaN when none is live), and keeps the rest (all
   * of them for keep: compaction). Compacts in place: kept entries are moved down the slot's own
   * chain (the writer never passes the reader, which has read each chunk's link before the writer
   * reaches it), the chain is relinked so that the last chunk written is the newest, and the
   * chunks beyond it are freed. So a purge of every slot moves no entry to another chunk and opens
   * none.
   */
  private sweep(s: number, mode: SweepMode, nowMs: number, out: K[] | null): number {
    const end0 = this.slotPos[s]!;
    const pages = this.pages; // nothing is appended during this walk
    const live = this.live;
    const refs = this.refs;
    const freeStack = this.freeStack;
    let freeTop = this.freeTop;
    let fired = 0;
    let min = Number.NaN;
    // Reader: chunk rBase, up to rEnd. Writer: chunk wBase (page wEnt at wB), next entry wPos;
    // wPrev, the chunk it filled before (0: none), becomes wBase's link once wBase is full.
    let rBase = (end0 - 1) & ~CHUNK_MASK;
    let rEnd = end0;
    let wBase = rBase;
    let wPos = rBase + 1;
    let wPrev = 0;
    let wEnt = pages[wBase >> PAGE_BITS]!;
    let wB = STRIDE * (wBase & PAGE_MASK);
    for (;;) {
      const ent = pages[rBase >> PAGE_BITS]!;
      const b = STRIDE * (rBase & PAGE_MASK);
      const link = ent[b]! | 0;
      for (let q = b + STRIDE, qEnd = b + STRIDE * (rEnd - rBase); q < qEnd; q += STRIDE) {
        const n = ent[q]! | 0;
        const bit = 1 << (n & 31);
        if ((live[n >> 5]! & bit) === 0) {
          freeStack[freeTop++] = n;
          if (refs !== null) refs[n] = undefined;
          continue;
        }
        const d = ent[q + 1]!;
        if (mode === SWEEP_FIRE_DUE && d <= nowMs) {
          out!.push(refs === null ? (ent[q + 2] as K) : refs[n]!);
          live[n >> 5]! &= ~bit;
          if (refs !== null) refs[n] = undefined;
          freeStack[freeTop++] = n;
          fired++;
          continue;
        }
        if (mode === SWEEP_MIN_LIVE && !(d >= min)) min = d; // true while min is NaN
        if (wPos === wBase + CHUNK) {
          const next = wEnt[wB]! | 0; // wBase's old link: the reader is at or past it
          wEnt[wB] = wPrev;
          wPrev = wBase;
          wBase = next;
          wPos = wBase + 1;
          wEnt = pages[wBase >> PAGE_BITS]!;
          wB = STRIDE * (wBase & PAGE_MASK);
        }
        const wq = wB + STRIDE * (wPos - wBase);
        wEnt[wq] = n;
        wEnt[wq + 1] = d;
        wEnt[wq + 2] = ent[q + 2]!;
        wPos++;
      }
      if (link === 0) break;
      rBase = link;
      rEnd = link + CHUNK;
    }
    // Free the chunks past the writer's (all of them if nothing was kept), then relink it.
    const kept = wPos !== wBase + 1 || wPrev !== 0;
    let rest = wEnt[wB]! | 0;
    if (kept) {
      wEnt[wB] = wPrev;
      this.slotPos[s] = wPos;
    } else {
      rest = wBase;
      this.slotPos[s] = 0;
      this.occupied[s >> 5]! &= ~(1 << (s & 31));
    }
    while (rest !== 0) {
      const next = pages[rest >> PAGE_BITS]![STRIDE * (rest & PAGE_MASK)]! | 0;
      this.freeChunkAt(rest);
      rest = next;
    }
    this.dead -= freeTop - this.freeTop - fired;
    this.freeTop = freeTop;
    this.count -= fired;
    return min;
  }

  /**
   * Stores a key that is not a number (or any key once one was not), by node. The first one moves
   * every numeric key out of the entries into a packed array by node, once.
   */
  private setRef(n: number, key: K): void {
    let refs = this.refs;
    if (refs === null) {
      refs = [];
      for (let i = 0; i < this.nodeCapacity; i++) refs.push(undefined);
      for (let s = 0; s <= this.overflow; s++) {
        let end = this.slotPos[s]!;
        for (let base = (end - 1) & ~CHUNK_MASK; end !== 0; ) {
          const ent = this.pages[base >> PAGE_BITS]!;
          const b = STRIDE * (base & PAGE_MASK);
          for (let q = b + STRIDE, qEnd = b + STRIDE * (end - base); q < qEnd; q += STRIDE) refs[ent[q]! | 0] = ent[q + 2] as K;
          base = ent[b]! | 0;
          end = base === 0 ? 0 : base + CHUNK;
        }
      }
      this.refs = refs;
    }
    refs[n] = key;
  }

  /** A node when the pool is full: reclaims (compacts or grows) first. */
  private allocateSlow(): number {
    this.reclaim();
    if (this.freeTop > 0) return this.freeStack[--this.freeTop]!;
    return this.used++;
  }

  /**
   * The node pool is full. If enough of it is cancelled entries, compacts them out of every slot
   * (one pass), freeing their nodes; otherwise doubles the pool. A compaction frees at least a
   * quarter of the pool, so its cost is O(1) per insert amortised.
   */
  private reclaim(): void {
    if (this.dead >= PURGE_MIN && this.dead >= this.nodeCapacity >> 2) {
      for (let s = 0; s <= this.overflow; s++) if (this.slotPos[s] !== 0) this.sweep(s, SWEEP_KEEP, 0, null);
    } else {
      this.grow(this.nodeCapacity + 1);
    }
  }

  /**
   * With no live timer left: empties every slot and frees every node at once. Nodes keep their
   * generations, so ids issued before stay stale after reuse. O(slots + used), and used only grows
   * by inserts, so the cost is O(1) per insert amortised.
   */
  private dropAll(): void {
    this.slotPos.fill(0);
    this.occupied.fill(0);
    this.refs?.fill(undefined, 0, this.used);
    this.chunkTop = CHUNK;
    this.freeChunk = 0;
    this.used = 0;
    this.freeTop = 0;
    this.dead = 0;
  }

  private grow(needed: number): void {
    this.nodeCapacity = growCapacity(this.nodeCapacity, needed);
    this.gen = growInt32(this.gen, this.nodeCapacity);
    this.live = growInt32(this.live, (this.nodeCapacity + 31) >> 5);
    this.freeStack = growInt32(this.freeStack, this.nodeCapacity);
    const refs = this.refs;
    if (refs !== null) for (let i = refs.length; i < this.nodeCapacity; i++) refs.push(undefined);
  }

  /** Doubles the first page while it is the only one and not full size; then adds a page. */
  private growEntries(): void {
    if (this.entryCapacity < PAGE) {
      this.entryCapacity = Math.min(2 * this.entryCapacity, PAGE);
      this.pages[0] = growFloat64(this.pages[0]!, STRIDE * this.entryCapacity);
    } else {
      this.pages.push(new Float64Array(STRIDE * PAGE));
      this.entryCapacity += PAGE;
    }
  }
}

type SweepMode = 0 | 1 | 2;
/** Fire live entries with deadline <= now; keep the rest. */
const SWEEP_FIRE_DUE = 0;
/** Keep live entries; return the earliest live deadline. */
const SWEEP_MIN_LIVE = 1;
/** Keep live entries (compaction). */
const SWEEP_KEEP = 2;
