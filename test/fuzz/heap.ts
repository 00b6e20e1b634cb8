import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Heap in use after a full collection, for the bounded-memory check. gc() is reached without
 * --expose-gc by setting the flag at run time and taking gc from a fresh context; null when
 * the runtime refuses.
 */
let gc: (() => void) | null | undefined;

function getGc(): (() => void) | null {
  if (gc !== undefined) return gc;
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return (gc = g);
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  } catch {
    gc = null;
  }
  return gc;
}

export function heapUsedAfterGc(): number | null {
  const f = getGc();
  if (!f) return null;
  f();
  f();
  return process.memoryUsage().heapUsed;
}
