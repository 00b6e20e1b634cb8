/** The first `prefix-N` not in `used`: a new step's, arm's or experiment's key. */
export function freshKey(prefix: string, used: Set<string>): string {
  for (let n = 1; ; n++) if (!used.has(`${prefix}-${n}`)) return `${prefix}-${n}`;
}
