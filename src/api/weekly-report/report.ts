import { DateTime } from 'luxon';
import type { Db } from '../../store/store.ts';
import { breakdownCsv } from '../../ops/breakdown-csv.ts';
import { breakdown, calendarWindow, headlineOf, ratesOf, type BreakdownRow, type Headline, type Rates, type Totals } from '../../ops/figures.ts';
import type { SystemMessage } from '../system-mailer.ts';

/**
 * The weekly report's content (issue 18): the last seven whole days in the workspace's zone, the
 * headline figures with their change from the seven days before, the top sequences, and the
 * breakdown per sequence attached as CSV: the same figures (ops/figures.ts) the Analytics screen
 * shows for that week, so the mail and the screen agree.
 */

const DAYS = 7;
const TOP = 5;

/** The headline lines, in the order the Analytics screen's cards read. */
const LINES: ReadonlyArray<{ key: keyof Totals; label: string; lowerIsBetter?: true }> = [
  { key: 'sends', label: 'Sends' },
  { key: 'opened', label: 'Opened by a person' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'replies', label: 'Replies' },
  { key: 'positiveReplies', label: 'Interested replies' },
  { key: 'meetings', label: 'Meetings' },
  { key: 'bounces', label: 'Bounces', lowerIsBetter: true },
  { key: 'unsubscribes', label: 'Unsubscribes', lowerIsBetter: true },
];

/** The change from the week before, in words: "+20% (100 the week before)". */
export function changeText(now: number, before: number): string {
  if (before === 0) return now === 0 ? 'none either week' : 'none the week before';
  const pct = Math.round(((now - before) / before) * 100);
  return `${pct === 0 ? 'no change' : `${pct > 0 ? '+' : '−'}${Math.abs(pct)}%`} (${before} the week before)`;
}

const pct = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(1)}%`);

export interface WeeklyFigures {
  workspaceName: string;
  head: Headline;
  sequences: Array<BreakdownRow & Rates>;
}

/** The figures of the seven whole days before `nowMs`'s day in `zone`. */
export async function weeklyFigures(db: Db, workspaceId: string, workspaceName: string, nowMs: number, zone: string): Promise<WeeklyFigures> {
  // The last whole day is yesterday: a report sent on Monday morning covers Monday to Sunday.
  const yesterday = DateTime.fromMillis(nowMs, { zone }).startOf('day').toMillis() - 1;
  const head = await headlineOf(db, workspaceId, calendarWindow(yesterday, DAYS, zone));
  const rows = await breakdown(db, workspaceId, head.window, 'sequence');
  return { workspaceName, head, sequences: rows.map((r) => ({ ...r, ...ratesOf(r) })) };
}

/** The mail: subject, text and the CSV; `appUrl` links to the Analytics screen. Pure. */
export function weeklyMessage(f: WeeklyFigures, to: string, appUrl: string | undefined): SystemMessage {
  const w = f.head.window;
  const [first, last] = [w.dayKeys[0]!, w.dayKeys.at(-1)!];
  const t = f.head.totals;
  const b = f.head.previous.totals;
  const width = Math.max(...LINES.map((l) => l.label.length));
  const top = f.sequences.filter((s) => s.key !== null && (s.sends > 0 || s.replies > 0)).slice(0, TOP);
  const text = [
    `Cadenza weekly report for ${f.workspaceName}`,
    `${first} to ${last} (${w.zone}), compared with the 7 days before.`,
    '',
    ...LINES.map((l) => `${l.label.padEnd(width)}  ${String(t[l.key]).padStart(6)}   ${changeText(t[l.key], b[l.key])}`),
    '',
    top.length === 0 ? 'No sequence sent anything this week.' : 'Top sequences, by sends:',
    ...top.map((s, i) => `${i + 1}. ${s.label}: ${s.sends} sends, ${s.replies} replies (${pct(s.replyRate)}), ${s.positiveReplies} interested, ${s.meetings} meetings, bounce rate ${pct(s.bounceRate)}`),
    '',
    'Every sequence\'s figures are attached as CSV.',
    ...(appUrl ? [`The Analytics screen: ${appUrl.replace(/\/$/, '')}/analytics`] : []),
    '',
    'You receive this because you asked for it in Settings, or because you own the workspace and nobody asked for it; an admin turns it off there.',
    '',
  ].join('\n');
  return {
    to,
    subject: `${f.workspaceName}: ${t.sends} sends, ${t.replies} replies, ${t.meetings} meetings (${first} to ${last})`,
    text,
    attachments: [{ filename: `analytics-by-sequence-${first}-to-${last}.csv`, content: breakdownCsv('sequence', f.sequences), contentType: 'text/csv; charset=utf-8' }],
  };
}
