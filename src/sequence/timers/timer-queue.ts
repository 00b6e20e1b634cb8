import { cadenzaError } from '../../common/errors.ts';

/**
 * In-memory timer queues for the scheduler's next window of due enrollments. PostgreSQL's due
 * time stays the truth; these only decide when to wake up, so a lost process loses nothing.
 *
 * Two implementations share this contract: TimingWheel (the product) and BinaryHeapTimers (the
 * baseline it is measured and model-tested against).
 */
export interface TimerQueue<K> {
  /** Schedules key at deadlineMs. A deadline already in the past fires at the next advance(). */
  insert(deadlineMs: number, key: K): TimerId;
  /** O(1) in the wheel. False when the id already fired, was cancelled, or is not one of ours. */
  cancel(id: TimerId): boolean;
  /**
   * Appends to out (and returns it) every pending key whose deadline <= nowMs, each exactly once.
   * The batch is not sorted.
   */
  advance(nowMs: number, out?: K[]): K[];
  /** When to arm the one real timer; undefined when nothing is pending. See each class for exactness. */
  nextDeadline(): number | undefined;
  readonly size: number;
  /** Drops every pending timer; their ids become stale. Time does not move. */
  clear(): void;
}

/**
 * A timer handle: node index in the low INDEX_BITS bits, the node's generation above them, so the
 * whole id stays an integer below 2^53. Reusing a node bumps its generation, which makes a stale
 * cancel (after fire, cancel or clear) a no-op instead of cancelling someone else's timer.
 * Generations wrap after 2^26 reuses of the same node; a handle kept that long can collide.
 */
export type TimerId = number;

export const INDEX_BITS = 26;
/** At most this many nodes (pending timers plus the wheel's slot heads) per queue. */
export const MAX_NODES = 2 ** INDEX_BITS;
export const INDEX_MASK = MAX_NODES - 1;
/** 27 generation bits + 26 index bits = 53 bits. A live node's generation is odd, a free one's even. */
export const GEN_MASK = 2 ** 27 - 1;

export function timerId(index: number, gen: number): TimerId {
  return gen * MAX_NODES + index;
}

/** `id & INDEX_MASK` is exact for ids below 2^53: ToInt32 keeps the low 32 bits. */
export function idIndex(id: TimerId): number {
  return id & INDEX_MASK;
}

export function idGen(id: TimerId, index: number): number {
  return (id - index) / MAX_NODES;
}

export function growCapacity(capacity: number, needed: number): number {
  if (needed > MAX_NODES) {
    throw cadenzaError('INVALID_INPUT', `a timer queue holds at most ${MAX_NODES} timers`, {
      limit: MAX_NODES,
    });
  }
  let c = Math.max(capacity, 16);
  while (c < needed) c *= 2;
  return Math.min(c, MAX_NODES);
}

export function checkTime(name: 'deadlineMs' | 'nowMs', value: number): void {
  // NaN compares false both ways, so a NaN deadline would never fire and a NaN now would stall time.
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw cadenzaError('INVALID_INPUT', `${name} must be a number of milliseconds`, { [name]: value });
  }
}

export function growFloat64(a: Float64Array, capacity: number): Float64Array {
  const b = new Float64Array(capacity);
  b.set(a);
  return b;
}

export function growInt32(a: Int32Array, capacity: number): Int32Array {
  const b = new Int32Array(capacity);
  b.set(a);
  return b;
}
