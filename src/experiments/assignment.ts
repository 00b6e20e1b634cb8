import { createHash } from 'node:crypto';

/**
 * Which arm of an experiment an enrollment gets: pure, and a function of (experiment, enrollment,
 * arms) only, so a retry, a restart, a replay or a worker on another machine computes the same arm.
 *
 * Weighted rendezvous hashing (highest random weight; Thaler & Ravishankar 1998, weighted form as in
 * Schindelhauer & Schomaker 2005): each arm draws u = hash(experiment, enrollment, arm) in (0, 1)
 * and scores -ln(u) / weight; the lowest score wins. The scores are independent exponentials with
 * rates equal to the weights, so arm i wins with probability w_i / Σw. Unlike cutting [0, 1) into
 * consecutive slices (what pickVariant did before: adding an arm moved every later slice), an
 * enrollment changes arm only when the arm it had is removed or down-weighted, or when a new or
 * up-weighted arm beats it: adding an arm moves enrollments only onto the new arm.
 *
 * What an enrollment was actually sent is its send request's `variant_id`, fixed once the request
 * exists (sequence/effects.ts); the exposure that counts is that record, never a re-computation.
 */

export interface Arm {
  id: string;
  weight: number;
}

/** A declared winner: enrollments enrolled at or after `since` (epoch ms) all get `armId`. */
export interface Winner {
  armId: string;
  since: number;
}

/** Uniform in (0, 1) from SHA-256: FNV-style hashes of ids that share a prefix (UUIDv7) correlate. */
export function unitHash(text: string): number {
  const h = createHash('sha256').update(text).digest();
  // 52 bits, shifted off zero so that ln(u) is finite.
  const hi = h.readUInt32BE(0) >>> 12;
  const lo = h.readUInt32BE(4);
  return (hi * 4294967296 + lo + 0.5) / 4503599627370496;
}

/** The arm for this enrollment among arms of positive weight; null when there is none. */
export function assignArm(experimentId: string, enrollmentId: string, arms: readonly Arm[]): string | null {
  let best: string | null = null;
  let bestScore = Infinity;
  for (const a of arms) {
    if (!(a.weight > 0)) continue;
    const score = -Math.log(unitHash(`${experimentId}:${enrollmentId}:${a.id}`)) / a.weight;
    // Ties (practically impossible) go to the smaller id, so the answer never depends on order.
    if (score < bestScore || (score === bestScore && best !== null && a.id < best)) {
      best = a.id;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The arm with a declared winner: enrollments from `since` on get the winner (while it is still a
 * live arm); those enrolled before keep the arm the hash gave them, so no one already in the
 * experiment changes side.
 */
export function armFor(experimentId: string, enrollment: { id: string; enrolledAt: number }, arms: readonly Arm[], winner?: Winner | null): string | null {
  if (winner && enrollment.enrolledAt >= winner.since && arms.some((a) => a.id === winner.armId)) return winner.armId;
  return assignArm(experimentId, enrollment.id, arms);
}
