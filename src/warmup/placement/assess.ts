/**
 * A warmup member's placement, judged (pure): of its warmup mail that receivers read, the share
 * they found in the inbox rather than junk, over the last 7 and 30 days. Placement is the earliest
 * sign that providers are filtering a mailbox; campaigns sent while it drops land in junk and teach
 * the filters more. So a low or dropping placement lowers the mailbox's cap (warmup and campaign
 * share it), and a very low one pauses the mailbox, each with a reason the user reads.
 *
 *   - fewer than minSample receipts in 7 days: too little to judge (ok);
 *   - 7-day share < pauseBelow: pause;
 *   - 7-day share < lowerBelow, or more than dropBy under the 30-day share: cap × lowerFactor;
 *   - else ok (cap × 1).
 */
export interface PlacementPolicy {
  minSample: number;
  pauseBelow: number;
  lowerBelow: number;
  /** A 7-day share this far below the 30-day share is a drop, even above lowerBelow. */
  dropBy: number;
  lowerFactor: number;
}

/** Every reason a verdict gives starts so, which is how evaluate.ts (and leaving warmup) knows a warning is placement's. */
export const PLACEMENT_REASON_PREFIX = 'warmup placement:';

export const defaultPlacementPolicy: PlacementPolicy = { minSample: 10, pauseBelow: 0.5, lowerBelow: 0.8, dropBy: 0.15, lowerFactor: 0.5 };

export interface PlacementCounts {
  inbox7: number;
  junk7: number;
  inbox30: number;
  junk30: number;
}

export interface Placement {
  /** Inbox share over 7 and 30 days; null with no receipts. */
  share7: number | null;
  share30: number | null;
  receipts7: number;
  receipts30: number;
}

export interface PlacementVerdict {
  verdict: 'ok' | 'lower' | 'pause';
  /** The factor applied to the mailbox's daily cap: 1, or policy.lowerFactor. */
  capFactor: number;
  /** 0..1: the 7-day sample's size against minSample × 3. */
  confidence: number;
  reason: string;
}

export function placementOf(c: PlacementCounts): Placement {
  const share = (inbox: number, junk: number) => (inbox + junk === 0 ? null : inbox / (inbox + junk));
  return { share7: share(c.inbox7, c.junk7), share30: share(c.inbox30, c.junk30), receipts7: c.inbox7 + c.junk7, receipts30: c.inbox30 + c.junk30 };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

export function assessPlacement(c: PlacementCounts, policy: PlacementPolicy = defaultPlacementPolicy): PlacementVerdict {
  const p = placementOf(c);
  const confidence = Math.min(1, p.receipts7 / (3 * Math.max(1, policy.minSample)));
  if (p.share7 === null || p.receipts7 < policy.minSample) {
    return { verdict: 'ok', capFactor: 1, confidence, reason: `${PLACEMENT_REASON_PREFIX} ${p.receipts7} warmup mails read by receivers in 7 days, fewer than ${policy.minSample}, too few to judge` };
  }
  const what = `${PLACEMENT_REASON_PREFIX} ${pct(p.share7)} of ${p.receipts7} warmup mails in the inbox over 7 days${p.share30 === null ? '' : ` (${pct(p.share30)} over 30)`}`;
  if (p.share7 < policy.pauseBelow) return { verdict: 'pause', capFactor: policy.lowerFactor, confidence, reason: `${what}, below ${pct(policy.pauseBelow)}: paused` };
  if (p.share7 < policy.lowerBelow) return { verdict: 'lower', capFactor: policy.lowerFactor, confidence, reason: `${what}, below ${pct(policy.lowerBelow)}: daily cap × ${policy.lowerFactor}` };
  if (p.share30 !== null && p.share30 - p.share7 > policy.dropBy) {
    return { verdict: 'lower', capFactor: policy.lowerFactor, confidence, reason: `${what}, down more than ${pct(policy.dropBy)}: daily cap × ${policy.lowerFactor}` };
  }
  return { verdict: 'ok', capFactor: 1, confidence, reason: what };
}
