/**
 * Send times for one sender: n instants in its window, each at least `gap` from the others and
 * from every campaign send already planned (warmup and campaign share the mailbox's gaps).
 *
 * The window minus a `gap`-wide band around each busy instant leaves free intervals of total
 * length F. Measured along the free intervals only ("free time" u in [0, F)), slot i is
 * [i·F/n, (i+1)·F/n) and its send falls in the slot's first F/n − gap, so two sends are at least
 * `gap` apart in free time, hence in real time (which only adds the busy bands skipped between
 * them). A send inside a free interval [a, b) lies at least `gap` from the busy instants at its
 * ends, because the band around each busy instant is (b − gap, b + gap).
 */
import type { Random } from '../../common/random.ts';

export interface Interval {
  start: number;
  end: number;
}

/** The window [start, end) minus the open band (b − gap, b + gap) around each busy instant. */
export function freeIntervals(window: Interval, busy: readonly number[], gap: number): Interval[] {
  const bands = busy
    .map((b) => ({ start: b - gap, end: b + gap }))
    .filter((b) => b.end > window.start && b.start < window.end)
    .sort((x, y) => x.start - y.start);
  const free: Interval[] = [];
  let from = window.start;
  for (const b of bands) {
    // A band's own end is allowed (|t − b| = gap), so a free interval may start there; the
    // band's start is excluded as an end because intervals are half-open.
    if (b.start > from) free.push({ start: from, end: Math.min(b.start + 1, window.end) });
    from = Math.max(from, b.end);
  }
  if (from < window.end) free.push({ start: from, end: window.end });
  return free.filter((f) => f.end > f.start);
}

function freeLength(free: readonly Interval[]): number {
  let f = 0;
  for (const i of free) f += i.end - i.start;
  return f;
}

/** How many sends fit: every slot must be at least `gap` long in free time (and 1 ms at least). */
export function fitCount(free: readonly Interval[], gap: number): number {
  const f = freeLength(free);
  return Math.floor(f / Math.max(gap, 1));
}

/** n instants (whole ms, ascending) placed as described above; n must be <= fitCount. */
export function placeTimes(free: readonly Interval[], n: number, gap: number, random: Random): number[] {
  if (n === 0) return [];
  const f = freeLength(free);
  const slot = f / n;
  const spare = Math.max(0, slot - Math.max(gap, 1));
  const out: number[] = [];
  let k = 0;
  let before = 0; // free time before interval k
  for (let i = 0; i < n; i++) {
    const u = Math.floor(i * slot + random.next() * spare);
    while (before + (free[k]!.end - free[k]!.start) <= u) before += free[k]!.end - free[k]!.start, k++;
    out.push(free[k]!.start + (u - before));
  }
  return out;
}
