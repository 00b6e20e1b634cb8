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

export interface BinaryHeapTimersOptions {
  /** Nodes allocated up front; the arrays double when full. Default 1024. */
  initialCapacity?: number;
}

/**
 * Indexed binary min-heap of deadlines: the baseline the timing wheel is measured and model-tested
 * against, built to be a fair one. The heap arrays hold the deadline inline next to the node index
 * (no indirection on comparisons), and each node knows its heap position, so cancel removes it at
 * once in O(log n). Lazy deletion would be worse on the scheduler's load: with 90% of timers
 * cancelled, the heap would stay ten times larger and every cancelled timer would still cost an
 * O(log n) pop when it surfaced.
 *
 * nextDeadline() is exact: the root's deadline. Keys are kept by node (KeyColumn: unboxed while
 * they are numbers), read once per pop. The wheel keeps numeric keys in its slot entries, which
 * its sweeps read anyway; the heap's equivalent, a key array moved along with the deadlines, was
 * measured on the cancel-heavy load and was no faster overall (its pops gain what every sift step
 * of insert and cancel loses moving 8 more bytes), so the baseline keeps the simpler layout.
 */
export class BinaryHeapTimers<K = number> implements TimerQueue<K> {
  // `declare`d like the wheel's fields (see there): assigned first in the constructor, so V8 keeps
  // each field in its value's representation instead of a tagged one.
  private declare capacity: number;
  /** By heap position: deadline and node index. */
  private declare heapDeadline: Float64Array;
  private declare heapNode: Int32Array;
  /** By node: heap position while live; next free node while free (-1 ends the chain). */
  private declare pos: Int32Array;
  private declare gen: Int32Array;
  private declare readonly keys: KeyColumn<K>;
  private used = 0;
  private freeHead = -1;
  private count = 0;

  constructor(opts: BinaryHeapTimersOptions = {}) {
    const initialCapacity = opts.initialCapacity ?? 1024;
    if (!Number.isInteger(initialCapacity) || initialCapacity < 0) {
      throw cadenzaError('INVALID_INPUT', 'initialCapacity must be a non-negative integer', { opts });
    }
    this.capacity = growCapacity(0, initialCapacity);
    this.heapDeadline = new Float64Array(this.capacity);
    this.heapNode = new Int32Array(this.capacity);
    this.pos = new Int32Array(this.capacity);
    this.gen = new Int32Array(this.capacity);
    this.keys = new KeyColumn<K>(this.capacity);
  }

  get size(): number {
    return this.count;
  }

  insert(deadlineMs: number, key: K): TimerId {
    checkTime('deadlineMs', deadlineMs);
    let n = this.freeHead;
    if (n >= 0) {
      this.freeHead = this.pos[n]!;
    } else {
      n = this.used;
      if (n === this.capacity) this.grow(n + 1);
      this.used = n + 1;
    }
    const g = (this.gen[n]! + 1) & GEN_MASK; // odd: live
    this.gen[n] = g;
    this.keys.set(n, key);
    this.siftUp(this.count++, deadlineMs, n);
    return timerId(n, g);
  }

  cancel(id: TimerId): boolean {
    const n = idIndex(id);
    const g = idGen(id, n);
    if (this.gen[n] !== g || (g & 1) === 0) return false;
    const i = this.pos[n]!;
    const last = --this.count;
    if (i !== last) {
      const d = this.heapDeadline[last]!;
      const m = this.heapNode[last]!;
      if (i > 0 && d < this.heapDeadline[(i - 1) >> 1]!) this.siftUp(i, d, m);
      else this.siftDown(i, d, m);
    }
    this.release(n);
    return true;
  }

  advance(nowMs: number, out: K[] = []): K[] {
    checkTime('nowMs', nowMs);
    const heapDeadline = this.heapDeadline;
    while (this.count > 0 && heapDeadline[0]! <= nowMs) {
      const n = this.heapNode[0]!;
      out.push(this.keys.get(n));
      const last = --this.count;
      if (last > 0) this.siftDown(0, heapDeadline[last]!, this.heapNode[last]!);
      this.release(n);
    }
    return out;
  }

  nextDeadline(): number | undefined {
    return this.count > 0 ? this.heapDeadline[0] : undefined;
  }

  clear(): void {
    const gen = this.gen;
    for (let n = 0; n < this.used; n++) {
      if ((gen[n]! & 1) === 1) gen[n] = (gen[n]! + 1) & GEN_MASK;
    }
    this.keys.releaseAll(this.used);
    this.used = 0;
    this.freeHead = -1;
    this.count = 0;
  }

  /** Moves the hole at position i up until deadline d fits, then puts node n there. */
  private siftUp(i: number, d: number, n: number): void {
    const heapDeadline = this.heapDeadline;
    const heapNode = this.heapNode;
    const pos = this.pos;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pd = heapDeadline[p]!;
      if (pd <= d) break;
      const pn = heapNode[p]!;
      heapDeadline[i] = pd;
      heapNode[i] = pn;
      pos[pn] = i;
      i = p;
    }
    heapDeadline[i] = d;
    heapNode[i] = n;
    pos[n] = i;
  }

  /** Moves the hole at position i down (within count) until deadline d fits, then puts node n there. */
  private siftDown(i: number, d: number, n: number): void {
    const heapDeadline = this.heapDeadline;
    const heapNode = this.heapNode;
    const pos = this.pos;
    const size = this.count;
    const half = size >> 1;
    while (i < half) {
      let c = 2 * i + 1;
      let cd = heapDeadline[c]!;
      const r = c + 1;
      if (r < size) {
        const rd = heapDeadline[r]!;
        if (rd < cd) {
          c = r;
          cd = rd;
        }
      }
      if (d <= cd) break;
      const cn = heapNode[c]!;
      heapDeadline[i] = cd;
      heapNode[i] = cn;
      pos[cn] = i;
      i = c;
    }
    heapDeadline[i] = d;
    heapNode[i] = n;
    pos[n] = i;
  }

  private release(n: number): void {
    this.gen[n] = (this.gen[n]! + 1) & GEN_MASK;
    this.keys.release(n);
    this.pos[n] = this.freeHead;
    this.freeHead = n;
  }

  private grow(needed: number): void {
    this.capacity = growCapacity(this.capacity, needed);
    this.heapDeadline = growFloat64(this.heapDeadline, this.capacity);
    this.heapNode = growInt32(this.heapNode, this.capacity);
    this.pos = growInt32(this.pos, this.capacity);
    this.gen = growInt32(this.gen, this.capacity);
    this.keys.grow(this.capacity);
  }
}
