/**
 * Seeded draws for pacing. Each draw is a pure function of a label built from the mailbox id, the
 * local date and what is drawn ('gap', 'start', …), so a day's plan is reproducible from its seed
 * (mailbox id + local date), and re-planning the same day after some sends gives the same
 * remaining slots. The label is hashed (FNV-1a, common/random.ts) and the hash mixed through
 * murmur3's finalizer, so labels that differ in one character give unrelated numbers. No
 * generator object is built per draw: the planner draws a few times per send, 300k sends a pass.
 */
import { hashString } from '../../common/random.ts';

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform in [0, 1). */
export function unit(label: string): number {
  return fmix32(hashString(label)) / 4294967296;
}

/** Uniform in [a, b). */
export function uniform(label: string, a: number, b: number): number {
  return a + (b - a) * unit(label);
}

/**
 * Symmetric triangular on [a, b] (the mean of two uniforms): most values near the middle, none
 * outside, no two gaps alike. A human's pauses cluster around a typical length; a constant gap is
 * a machine's signature.
 */
export function triangular(label: string, a: number, b: number): number {
  const h = hashString(label);
  const u1 = fmix32(h) / 4294967296;
  const u2 = fmix32((h ^ 0x9e3779b9) >>> 0) / 4294967296;
  return a + ((b - a) * (u1 + u2)) / 2;
}

/** Uniform integer in [a, b]. */
export function integer(label: string, a: number, b: number): number {
  return a + Math.floor(unit(label) * (b - a + 1));
}
