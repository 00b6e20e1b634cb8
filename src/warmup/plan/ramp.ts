/**
 * The warmup ramp: a mailbox new to the pool sends `rampStart` warmup mails on its first day and
 * rises linearly to its target over `rampDays` (providers judge a sender by how fast its volume
 * grows). The ramp is the ceiling; the planner draws each day's volume a little below it so that
 * no two days look alike.
 *
 *   ceiling(day) = min(target, rampStart + floor(day × (target − rampStart) / rampDays))
 */
import type { WarmupMember, WarmupPlanConfig } from './types.ts';

export function warmupCeiling(member: Pick<WarmupMember, 'rampDay' | 'target'>, c: Pick<WarmupPlanConfig, 'rampStart' | 'rampDays'>): number {
  const target = member.target;
  const start = Math.min(c.rampStart, target);
  if (member.rampDay >= c.rampDays) return target;
  return Math.min(target, start + Math.floor((member.rampDay * (target - start)) / c.rampDays));
}

/** How many warmup mails a member accepts today: its declared limit (remote), else from its own volume. */
export function receiveLimit(member: WarmupMember, c: WarmupPlanConfig): number {
  if (member.receiveLimit !== undefined) return member.receiveLimit;
  return Math.max(c.minReceive, Math.ceil(warmupCeiling(member, c) * c.receiveRatio));
}
