import type { Random } from '../common/random.ts';

/**
 * How simulated prospects answer an email: pure, from a seeded random source. Each delivery may
 * produce signals at later times; the simulation turns them into the engine's events, as the
 * mailbox sync and the classifier would.
 */
export type Signal =
  | { type: 'reply' }
  /** A reply timed to land exactly when the enrollment's next step comes due (resolved once it is planned). */
  | { type: 'reply_at_next_due' }
  | { type: 'bounce'; hard: boolean }
  | { type: 'out_of_office'; returnIn: number | null }
  | { type: 'unsubscribe' }
  | { type: 'meeting_booked' };

export interface Reaction {
  after: number;
  signal: Signal;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

export interface ProspectRates {
  hardBounce: number;
  softBounce: number;
  outOfOffice: number;
  reply: number;
  replyAtNextDue: number;
  /** A reply within seconds: it lands between the handover and the record of the send. */
  instantReply: number;
  unsubscribe: number;
  meeting: number;
  /** The same signal processed twice (the sync re-reads a message after a restart). */
  duplicate: number;
}

export const defaultRates: ProspectRates = {
  hardBounce: 0.04,
  softBounce: 0.06,
  outOfOffice: 0.08,
  reply: 0.1,
  replyAtNextDue: 0.05,
  instantReply: 0.02,
  unsubscribe: 0.03,
  meeting: 0.02,
  duplicate: 0.05,
};

export function reactToEmail(r: Random, rates: ProspectRates = defaultRates): Reaction[] {
  const out: Reaction[] = [];
  const between = (a: number, b: number) => a + Math.floor(r.next() * (b - a));
  if (r.next() < rates.hardBounce) {
    out.push({ after: between(MIN, 20 * MIN), signal: { type: 'bounce', hard: true } });
  } else {
    if (r.next() < rates.softBounce) out.push({ after: between(MIN, HOUR), signal: { type: 'bounce', hard: false } });
    if (r.next() < rates.outOfOffice) {
      const x = r.next();
      // A return date ahead, one already past (a stale auto-reply), or none at all.
      const returnIn = x < 0.55 ? between(HOUR, 12 * DAY) : x < 0.65 ? -between(HOUR, 3 * DAY) : null;
      out.push({ after: between(10_000, 10 * MIN), signal: { type: 'out_of_office', returnIn } });
    }
    if (r.next() < rates.reply) out.push({ after: between(2 * MIN, 4 * DAY), signal: { type: 'reply' } });
    if (r.next() < rates.replyAtNextDue) out.push({ after: between(1000, 5 * MIN), signal: { type: 'reply_at_next_due' } });
    if (r.next() < rates.instantReply) out.push({ after: between(0, 15_000), signal: { type: 'reply' } });
    if (r.next() < rates.unsubscribe) out.push({ after: between(MIN, 2 * DAY), signal: { type: 'unsubscribe' } });
    if (r.next() < rates.meeting) out.push({ after: between(HOUR, 5 * DAY), signal: { type: 'meeting_booked' } });
  }
  for (const x of [...out]) {
    if (r.next() < rates.duplicate) out.push({ after: x.after + between(0, 10 * MIN), signal: x.signal });
  }
  return out;
}
