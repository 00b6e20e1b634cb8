import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { readFolded, sendHourWindow } from './figure-rollup.ts';
import type { SequenceFilter, Span } from './figures.ts';

/**
 * Best send hours in the prospect's time (issue 18): the sends of the window (`isEmailSend`) by the
 * hour of day, and the ISO weekday, in the prospect's zone at the moment of sending, and the replies
 * credited to them (a reply credits the last email sent before it, `lastEmailSentAtBefore`, however
 * long after the window it came).
 *
 * The prospect's zone: the lead's own, as the enrollment resolved it when it was made (an IANA name
 * that was valid, calendar/zone.ts resolveZone: source 'lead'); otherwise the workspace's zone (a
 * mailbox's zone is the rep's, not the prospect's). A send with no enrollment takes the workspace's.
 *
 * The facts are defined once (figure-facts.ts sendHourFacts) and read through the rollup's level
 * 'z' (figure-rollup.ts sendHourWindow): a window reads its days' buckets and the journal rows past
 * the fold, not every send of the window joined to its enrollment (docs/benchmarks.md).
 */

/** An hour is ranked only with at least this many sends: below it one reply swings the rate by 5 points. */
export const MIN_SENDS_PER_HOUR = 20;
/** At most this many hours are named best. */
const BEST_COUNT = 3;

export interface HourCell {
  /** ISO weekday, 1 Monday … 7 Sunday. */
  weekday: number;
  hour: number;
  sends: number;
  replies: number;
}

export interface HourFigures {
  hour: number;
  sends: number;
  replies: number;
  replyRate: number | null;
}

export interface BestHours {
  /** Whether enough hours had enough sends to compare (at least two with MIN_SENDS_PER_HOUR). */
  enough: boolean;
  minSends: number;
  /** The best hours by reply rate among those with enough sends, best first (empty: not enough). */
  hours: HourFigures[];
  /** What a person reads: which hours did best, or why nothing is said. */
  text: string;
}

/** "9:00–10:00" */
export const hourLabel = (h: number) => `${h}:00–${h + 1}:00`;

/**
 * Which hours did best: among the hours with at least MIN_SENDS_PER_HOUR sends, the highest reply
 * rates (more sends first on a tie); nothing is said when fewer than two hours can be compared.
 */
export function bestHours(hours: readonly HourFigures[]): BestHours {
  const total = hours.reduce((n, h) => n + h.sends, 0);
  const ranked = hours.filter((h) => h.sends >= MIN_SENDS_PER_HOUR);
  if (ranked.length < 2) {
    return {
      enough: false,
      minSends: MIN_SENDS_PER_HOUR,
      hours: [],
      text: `Not enough sends to say which hours do best: ${total} sends in the period, and an hour is compared only with ${MIN_SENDS_PER_HOUR} or more (${ranked.length} ${ranked.length === 1 ? 'hour has' : 'hours have'} that many).`,
    };
  }
  const best = [...ranked].sort((a, b) => b.replyRate! - a.replyRate! || b.sends - a.sends || a.hour - b.hour).slice(0, BEST_COUNT);
  const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
  const named = best.map((h) => `${hourLabel(h.hour)} (${pct(h.replyRate!)} of ${h.sends} sends)`);
  return {
    enough: true,
    minSends: MIN_SENDS_PER_HOUR,
    hours: best,
    text: `Best hours in the prospect's time, by reply rate: ${named.join(', ')}. Compared over the ${ranked.length} hours with ${MIN_SENDS_PER_HOUR} or more sends, ${total} sends in all.`,
  };
}

/** The per-hour figures of the cells (every weekday together), all 24 hours. */
export function byHour(cells: readonly HourCell[]): HourFigures[] {
  const hours = Array.from({ length: 24 }, (_, hour) => ({ hour, sends: 0, replies: 0, replyRate: null as number | null }));
  for (const c of cells) {
    hours[c.hour]!.sends += c.sends;
    hours[c.hour]!.replies += c.replies;
  }
  for (const h of hours) h.replyRate = h.sends > 0 ? h.replies / h.sends : null;
  return hours;
}

// -- name: figures-send-hours
export async function sendHourCells(db: Db, workspaceId: string, span: Span, o: SequenceFilter = {}): Promise<HourCell[]> {
  const r = await readFolded(db, (db, fold) =>
    sql<{ local_hour: number; sends: number; replies: number }>`
      select f.local_hour, sum(f.n) filter (where f.series = 'sends')::int as sends, sum(f.n) filter (where f.series = 'replies')::int as replies
      from (${sendHourWindow(fold, workspaceId, span.since, span.until, o.sequenceId)}) f
      group by 1
      order by 1`.execute(db),
  );
  return r.rows.map((x) => ({ weekday: Math.floor(Number(x.local_hour) / 24) + 1, hour: Number(x.local_hour) % 24, sends: Number(x.sends ?? 0), replies: Number(x.replies ?? 0) }));
}
