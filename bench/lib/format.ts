/** Figures for people (printed while a benchmark runs) and for the JSON line (rounded numbers). */

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** 1234567 -> "1,234,567". */
export function int(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}

/** Nanoseconds with a unit that keeps 3 significant figures: "41.2 ns", "3.10 µs", "12.4 ms". */
export function duration(ns: number): string {
  if (!Number.isFinite(ns)) return String(ns);
  const [v, unit] = ns < 1e3 ? [ns, 'ns'] : ns < 1e6 ? [ns / 1e3, 'µs'] : ns < 1e9 ? [ns / 1e6, 'ms'] : [ns / 1e9, 's'];
  return `${v.toPrecision(3)} ${unit}`;
}

export function bytes(b: number): string {
  if (!Number.isFinite(b)) return String(b);
  const abs = Math.abs(b);
  if (abs < 1024) return `${b.toFixed(1)} B`;
  if (abs < 1024 ** 2) return `${(b / 1024).toFixed(1)} KiB`;
  if (abs < 1024 ** 3) return `${(b / 1024 ** 2).toFixed(1)} MiB`;
  return `${(b / 1024 ** 3).toFixed(2)} GiB`;
}

/** "5.3x". */
export function ratio(x: number): string {
  return `${x.toFixed(x < 10 ? 2 : 1)}x`;
}

/** A plain text table; the first row is the header, columns after the first are right-aligned. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}
