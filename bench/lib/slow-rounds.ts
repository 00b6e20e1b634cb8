/**
 * Which request rounds of a benchmark were slow, and when: for tails that hit several requests of
 * the same rounds (docs/benchmarks.md, analytics at 1M), the wall-clock time of each slow round is
 * what lines it up with the database's log (checkpoints, autovacuum) and with this process's
 * garbage-collection pauses, which are watched here too.
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';

export interface Round {
  /** Wall-clock start (ms since the epoch). */
  at: number;
  /** Each request's time in the round, ms. */
  ms: Map<string, number>;
}

export interface Pause {
  at: number;
  ms: number;
  kind: string;
}

/** Records this process's garbage-collection pauses of at least `minMs` until stopped. */
export function watchPauses(minMs = 20): { stop(): Pause[] } {
  const pauses: Pause[] = [];
  const kinds: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration < minMs) continue;
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      pauses.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: kinds[kind] ?? String(kind) });
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      obs.disconnect();
      return pauses;
    },
  };
}

/**
 * Rounds whose total time is over `factor` times the median round's, with their slowest
 * requests, and the pauses that fell in them: lines for the report.
 */
export function describeSlowRounds(rounds: readonly Round[], pauses: readonly Pause[], factor = 1.5, top = 4): string[] {
  const total = (r: Round) => [...r.ms.values()].reduce((a, b) => a + b, 0);
  const totals = rounds.map(total).sort((a, b) => a - b);
  const median = totals[Math.floor(totals.length / 2)] ?? 0;
  const lines: string[] = [];
  for (const [i, r] of rounds.entries()) {
    const t = total(r);
    if (t <= factor * median) continue;
    const slowest = [...r.ms.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    const gc = pauses.filter((p) => p.at >= r.at && p.at < r.at + t);
    lines.push(
      `round ${i + 1} at ${new Date(r.at).toISOString()}: ${t.toFixed(0)} ms (median round ${median.toFixed(0)} ms); slowest ${slowest.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(', ')}` +
        (gc.length ? `; GC pauses ${gc.map((p) => `${p.kind} ${p.ms.toFixed(0)} ms`).join(', ')}` : '; no GC pause over 20 ms'),
    );
  }
  return lines;
}
