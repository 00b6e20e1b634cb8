/**
 * When a receiver answers a warmup mail (pure): a person reads mail some minutes to hours after it
 * lands, and only in working hours. The delay is drawn from [minDelay, maxDelay]; an instant outside
 * the receiver's working hours moves to the next working quarter hour (searched up to a week ahead:
 * a window that never opens means no reply).
 */
import type { Random } from '../../common/random.ts';

const QUARTER = 15 * 60_000;
const WEEK = 7 * 86_400_000;

export interface ReplyTiming {
  /** 0..1: the share of first mails answered. */
  share: number;
  minDelayMs: number;
  maxDelayMs: number;
  /** Whether an instant is in the receiver's working hours (its calendar: zone, days, hours). */
  working(t: number): boolean;
}

export const defaultReplyDelay = { minDelayMs: 20 * 60_000, maxDelayMs: 3 * 3_600_000 };

/** The instant to reply at, or null (not drawn for a reply, or no working time within a week). */
export function replyTime(receivedAt: number, timing: ReplyTiming, random: Random): number | null {
  if (random.next() >= timing.share) return null;
  let t = receivedAt + timing.minDelayMs + Math.floor(random.next() * (timing.maxDelayMs - timing.minDelayMs));
  if (timing.working(t)) return t;
  // The next working quarter hour, then a few minutes into it, so replies do not all land on :00.
  t = Math.ceil(t / QUARTER) * QUARTER;
  for (const end = t + WEEK; t < end; t += QUARTER) {
    if (!timing.working(t)) continue;
    // A few minutes in, unless that leaves the hours (a working day that ends at this quarter).
    const later = t + Math.floor(random.next() * 10 * 60_000);
    return timing.working(later) ? later : t;
  }
  return null;
}
