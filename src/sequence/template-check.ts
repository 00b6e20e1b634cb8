import { renderEmail } from './template/render.ts';
import type { LeadValues, SenderValues } from './template/variables.ts';
import type { SequenceDefinition } from './definition.ts';

/** How many leads the save check renders against: enough to tell "fails for everyone" from "fails for some". */
export const TEMPLATE_CHECK_SAMPLE = 200;

export interface TemplateFailure {
  step: string;
  variant: string;
  /** The reason for the first lead of the sample (every other lead failed too). */
  reason: string;
}

/**
 * The email variants that render for none of the given leads, as the sender would render them
 * (the same renderEmail, the pool's first mailbox as the sender). No leads: nothing to judge.
 * The unsubscribe link is a placeholder here: the sender always has one.
 */
export function templatesFailingForAll(def: Pick<SequenceDefinition, 'steps'>, leads: readonly LeadValues[], sender: SenderValues | null): TemplateFailure[] {
  if (leads.length === 0) return [];
  const out: TemplateFailure[] = [];
  for (const step of def.steps) {
    if (step.kind !== 'email') continue;
    for (const v of step.variants) {
      let first: string | null = null;
      const okForSome = leads.some((lead, i) => {
        const r = renderEmail({ subject: v.subject, text: v.body }, { lead, sender, unsubscribeUrl: 'https://unsubscribe.invalid/' }, { enrollmentId: `check-${i}`, stepId: step.key });
        if (!r.ok) first ??= r.reason;
        return r.ok;
      });
      if (!okForSome) out.push({ step: step.key, variant: v.key, reason: first ?? 'fails' });
    }
  }
  return out;
}
