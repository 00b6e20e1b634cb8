import type { SequenceDefinition } from './definition.ts';
import { formatDelay } from './definition-document.ts';

/**
 * A step delay shorter than the gap its mailboxes keep between two sends is not kept: the send
 * waits for the gap (issue 10: a 2-minute follow-up left 8-15 minutes later, silently). Said
 * when the sequence is applied, naming the step and the mailboxes, so that the person either
 * lengthens the delay or shortens those mailboxes' gap (`cadenza mailbox set --gap-min …`).
 */

const MINUTES = { minutes: 1, hours: 60, days: 1440, business_days: 1440 } as const;

const fmt = (m: number) => (m < 1 ? `${Math.round(m * 60)} s` : `${Math.round(m * 10) / 10} min`);

export function gapWarnings(def: Pick<SequenceDefinition, 'steps'>, gaps: Array<{ email: string; gapMinutes: [number, number] }>): string[] {
  const out: string[] = [];
  def.steps.forEach((s, i) => {
    // The first step's delay counts from enrollment, not from a send of the same mailbox.
    if (i === 0 || s.kind !== 'email') return;
    const delay = s.delay.amount * MINUTES[s.delay.unit];
    const short = gaps.filter((g) => delay < g.gapMinutes[1]);
    if (!short.length) return;
    const list = short.map((g) => `${g.email} (${fmt(g.gapMinutes[0])}-${fmt(g.gapMinutes[1])})`).join(', ');
    out.push(
      `step ${s.key}: its delay (${formatDelay(s.delay)}) is shorter than the gap between two sends of ${list}; it will leave up to ${fmt(Math.max(...short.map((g) => g.gapMinutes[1])))} after the previous send. Lengthen the delay, or shorten the gap (cadenza mailbox set EMAIL --gap 30s-60s; cadenza workspace pacing --gap … for every mailbox).`,
    );
  });
  return out;
}
