import type { Random } from './random.ts';

/**
 * UUIDv7-shaped ids (time-ordered, so B-tree inserts stay append-mostly) drawn from the injected
 * clock time and random source, so a simulation produces the same ids from the same seed.
 */
export function newId(nowMs: number, random: Random): string {
  const bytes = new Uint8Array(16);
  let ts = Math.floor(nowMs);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ts % 256;
    ts = Math.floor(ts / 256);
  }
  for (let i = 6; i < 16; i++) bytes[i] = random.int(0, 255);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export type IdGen = () => string;
