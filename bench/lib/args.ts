/** `--name=value` flags for benchmarks; anything else in args is ignored. */
export function flag(args: string[], name: string): string | undefined {
  const prefix = `--${name}=`;
  let value: string | undefined;
  for (const a of args) if (a.startsWith(prefix)) value = a.slice(prefix.length); // the last one wins
  return value;
}

/** An integer flag; accepts 1_000_000, 1e6 and 1,000,000. Throws on anything else. */
export function intFlag(args: string[], name: string, fallback: number): number {
  const raw = flag(args, name);
  if (raw === undefined) return fallback;
  const v = Number(raw.replace(/[_,]/g, ''));
  if (!Number.isSafeInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return v;
}
