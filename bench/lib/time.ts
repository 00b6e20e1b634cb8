/** Monotonic nanoseconds (process.hrtime.bigint), immune to wall-clock steps. */
export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/** Runs fn once and returns the nanoseconds it took, as a number (exact below 2^53 ns, 104 days). */
export function timeNs(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0);
}

export async function timeNsAsync(fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0);
}
