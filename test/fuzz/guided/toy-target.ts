/**
 * A target small enough to see guidance work (guided.test.ts): each branch needs the one before
 * it, as a parser's deeper states need a valid start. Random inputs almost never reach `depth 4`;
 * the fuzzer gets there by keeping each input that went one branch deeper.
 */
export function toyDepth(b: Uint8Array): number {
  if (b[0] !== 0x46) return 0; // F
  if (b[1] !== 0x55) return 1; // U
  if (b[2] !== 0x5a) return 2; // Z
  if (b[3] !== 0x5a) return 3; // Z
  return 4;
}
