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

/**
 * CPU time this process has used (user + system, all its threads: GC helpers included), in
 * nanoseconds with microsecond resolution. On a shared machine wall time includes the slices the
 * neighbours got; CPU time is what the measured code itself cost, so it moves far less with load.
 * Time phases of at least milliseconds with it, not single calls.
 */
export function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}
