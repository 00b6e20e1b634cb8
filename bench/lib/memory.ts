/**
 * Memory as a benchmark sees it. Typed arrays keep their bytes outside the JS heap (ArrayBuffer
 * backing stores count in `external`), so "bytes used" is heapUsed + external: heapUsed alone would
 * make a struct-of-arrays structure look almost free.
 */

type Gc = () => void;

function gcFunction(): Gc | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as Gc) : undefined;
}

/** True when node runs with --expose-gc (bench/run.ts re-executes itself with it). */
export function gcAvailable(): boolean {
  return gcFunction() !== undefined;
}

/** Full collections until the heap stops shrinking (weak references and finalizers need more than one). */
export function collect(): void {
  const gc = gcFunction();
  if (!gc) return;
  let prev = Infinity;
  for (let i = 0; i < 10; i++) {
    gc();
    const used = usedBytes();
    if (used >= prev - 1024) break;
    prev = used;
  }
}

export function usedBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

export interface MemoryDelta {
  /** heapUsed + external after minus before, after full collections; NaN without --expose-gc. */
  bytes: number;
  heapBytes: number;
  externalBytes: number;
}

/**
 * Measures what build() leaves alive: collects, reads, builds, collects, reads. The value build()
 * returns is held until after the second reading so it is not collected early; keep inputs that
 * should not count (pre-made keys, id arrays) allocated before calling this.
 */
export function retainedBy<T>(build: () => T): { value: T; delta: MemoryDelta } {
  if (!gcAvailable()) {
    const value = build();
    return { value, delta: { bytes: Number.NaN, heapBytes: Number.NaN, externalBytes: Number.NaN } };
  }
  collect();
  const before = process.memoryUsage();
  const value = build();
  collect();
  const after = process.memoryUsage();
  const heapBytes = after.heapUsed - before.heapUsed;
  const externalBytes = after.external - before.external;
  return { value, delta: { bytes: heapBytes + externalBytes, heapBytes, externalBytes } };
}
