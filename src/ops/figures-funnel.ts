import type { Totals } from './figures.ts';

/**
 * A sequence's funnel (issue 18): how many of the emails sent went on to each later stage, read
 * from the headline's totals for the same window (ops/figures.ts perDay through the rollup), so the
 * funnel and the headline cards can never disagree. Stages are counted in the window by when each
 * happened, not per cohort: a reply in the window to an email sent before it counts, so a stage may
 * exceed the one before it (the conversion then reads above 100 %, and says so honestly).
 *
 * - **delivered**: sends less bounces (a bounce is the only news that an email did not arrive);
 * - **opened**: emails opened by a person (image proxies apart); **clicked**: by a person (link
 *   scanners apart); **replied**, **positive** (interested), **meetings**: the headline's series.
 */
export const FUNNEL_STAGES = [
  { key: 'sent', label: 'Sent' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'opened', label: 'Opened by a person' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'replied', label: 'Replied' },
  { key: 'positive', label: 'Interested replies' },
  { key: 'meetings', label: 'Meetings' },
] as const;
export type FunnelStageKey = (typeof FUNNEL_STAGES)[number]['key'];

export interface FunnelStage {
  key: FunnelStageKey;
  label: string;
  count: number;
  /** count / the stage before's count (null: the first stage, or none in the stage before). */
  conversion: number | null;
  /** count / sent (null: nothing sent). */
  ofSent: number | null;
}

export function sequenceFunnel(t: Totals): FunnelStage[] {
  const counts: Record<FunnelStageKey, number> = {
    sent: t.sends,
    delivered: Math.max(0, t.sends - t.bounces),
    opened: t.opened,
    clicked: t.clicked,
    replied: t.replies,
    positive: t.positiveReplies,
    meetings: t.meetings,
  };
  return FUNNEL_STAGES.map((s, i) => {
    const before = i === 0 ? null : counts[FUNNEL_STAGES[i - 1]!.key];
    return {
      key: s.key,
      label: s.label,
      count: counts[s.key],
      conversion: before === null || before === 0 ? null : counts[s.key] / before,
      ofSent: counts.sent > 0 ? counts[s.key] / counts.sent : null,
    };
  });
}
