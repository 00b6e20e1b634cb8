/**
 * A mailbox's health from its recent bounces: a pure classifier (verdict, confidence, reason), in
 * the manner of listmonk's bounce rules. Providers throttle or block a sender whose hard-bounce
 * rate climbs past a few percent, and the damage lasts longer than a pause, so the mailbox stops
 * itself first and a person looks at the list.
 *
 *   - fewer than minSample recent sends: too little to judge, unless the bounces already reach
 *     pauseAt × window (5 bounces pause a mailbox even after 8 sends: whatever the next 92 do, the
 *     window's rate is at the threshold);
 *   - rate ≥ pauseAt: pause; rate ≥ warnAt: warning; else ok.
 * Confidence grows with the share of the window observed.
 */
export interface BouncePolicy {
  /** How many of the mailbox's latest sends are looked at. */
  window: number;
  /** Fewer sends than this are not judged by rate. */
  minSample: number;
  /** Bounce rate at which the mailbox is paused (0.05 = 5 %). */
  pauseAt: number;
  /** Bounce rate at which the mailbox is marked 'warning'. */
  warnAt: number;
}

export const defaultBouncePolicy: BouncePolicy = { window: 100, minSample: 20, pauseAt: 0.05, warnAt: 0.03 };

export interface HealthVerdict {
  verdict: 'ok' | 'warning' | 'pause';
  /** 0..1: how much of the window the judgement rests on. */
  confidence: number;
  reason: string;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export function assessBounceRate(sample: { sends: number; bounces: number }, policy: BouncePolicy = defaultBouncePolicy): HealthVerdict {
  const sends = Math.max(0, Math.floor(sample.sends));
  const bounces = Math.min(sends, Math.max(0, Math.floor(sample.bounces)));
  const confidence = Math.min(1, sends / Math.max(1, policy.window));
  const rate = sends === 0 ? 0 : bounces / sends;
  const what = `${bounces} bounce${bounces === 1 ? '' : 's'} in the last ${sends} send${sends === 1 ? '' : 's'} (${pct(rate)})`;
  if (sends < policy.minSample) {
    if (bounces > 0 && bounces >= Math.ceil(policy.pauseAt * policy.window)) {
      return { verdict: 'pause', confidence: 1, reason: `${what}: at least ${pct(policy.pauseAt)} of a ${policy.window}-send window whatever comes next` };
    }
    return { verdict: 'ok', confidence, reason: `${what}: fewer than ${policy.minSample} sends, too few to judge the rate` };
  }
  if (rate >= policy.pauseAt) return { verdict: 'pause', confidence, reason: `${what}, at or above the ${pct(policy.pauseAt)} pause threshold` };
  if (rate >= policy.warnAt) return { verdict: 'warning', confidence, reason: `${what}, at or above the ${pct(policy.warnAt)} warning threshold` };
  return { verdict: 'ok', confidence, reason: `${what}, below ${pct(policy.warnAt)}` };
}
