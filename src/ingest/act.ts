import { contextOf } from '../calendar/context.ts';
import { nextSlotIn } from '../calendar/allowed.ts';
import { DAY_MS } from '../calendar/civil.ts';
import type { SendWindow } from '../calendar/index.ts';
import { instantOfWall } from '../calendar/zone.ts';
import type { EngineEvent, EnrollmentState } from '../sequence/model.ts';
import type { Classification } from './types.ts';

/**
 * What an inbound message does: its classification, the enrollment it threads to and the send it
 * answers become a list of steps. Pure; the pipeline carries the steps out, in order, in its
 * transaction (pipeline.ts carryOut), and decides nothing of its own.
 *
 * | classification                          | steps, in order                                                              |
 * | --------------------------------------- | ---------------------------------------------------------------------------- |
 * | human_reply                             | event reply (replied; timer, sends cancelled); then, if the reply applied and the sequence says so, stop the company's other live enrollments |
 * | human_reply, intent unsubscribe         | suppress the address (unsubscribe); event unsubscribe                        |
 * | unsubscribe_request, our mailto: token  | suppress the address (unsubscribe); event unsubscribe                        |
 * | feedback (ARF complaint)                | suppress the address (complaint); event unsubscribe                          |
 * | bounce, hard (5.x.x)                    | suppress every failed recipient; event bounce {hard}; count it against the sending mailbox |
 * | bounce, soft (4.x.x)                    | event bounce {soft} (counted; bounced past the sequence's max); if that ended it bounced, suppress the address as a hard bounce; count it against the sending mailbox |
 * | auto_reply (out of office)              | event out_of_office {send window on the return day; the default pause without a date} |
 * | delivery_report, auto_generated, challenge | none (inbox only)                                                         |
 * | any of the above below the threshold    | event pause 'needs review'; flagged for the review queue                     |
 * | matching no enrollment                  | none (inbox only); low confidence flagged for review                         |
 *
 * Two steps hang on the target's own transition, which only the engine knows (it holds the soft
 * bounce count and the sequence's limit, and it may ignore an event for an enrollment already
 * ended): the company stop (only if the reply applied) and the soft-bounce escalation (only if
 * the bounce ended the enrollment 'bounced'). They are steps with a condition (`when`), weighed
 * by `conditionHolds` below once the target's first event is applied, rather than a second
 * decide() after the engine: one list, in the order it is carried out, that a table test can
 * read whole.
 *
 * Suppressions come before the events and spare the target (and whatever it was moved to): its
 * own event ends it with its own state ('bounced', 'unsubscribed'), and a complaint keeps its
 * reason (the engine's own suppress effect, which follows, finds the address already suppressed).
 */

/** The enrollment a message threads to, with what the decision needs from its lead and sequence. */
export interface EnrollmentTarget {
  enrollmentId: string;
  workspaceId: string;
  state: EnrollmentState;
  /** The lead's normalised address. */
  leadEmail: string;
  zone: string;
  country: string | null;
  region: string | null;
  window: SendWindow;
  skipHolidays: boolean;
  /** Sequence option: a reply stops the other live enrollments of the lead's company (email domain). */
  stopCompanyOnReply: boolean;
}

export type IngestAction = 'own' | 'reply' | 'hard_bounce' | 'soft_bounce' | 'out_of_office' | 'unsubscribe' | 'complaint' | 'needs_review' | 'inbox';

/** A condition on the target's first transition (`conditionHolds`). */
export type StepCondition = 'target_applied' | 'target_bounced';

export type IngestStep =
  /** Suppress these addresses (sequence/suppress.ts: the list, and their enrollments stopped, sparing the target). */
  | { do: 'suppress'; addresses: Array<{ email: string; reason: 'hard_bounce' | 'unsubscribe' | 'complaint' }>; when?: StepCondition; note?: string }
  /** An engine event for the target enrollment (a reply gets the message's Message-ID there). */
  | { do: 'event'; event: EngineEvent }
  /** The company rule: stop the other live enrollments at this email domain (sequence/suppress.ts stopCompany). */
  | { do: 'stop_company'; domain: string; exceptEmail: string; reason: string; when: StepCondition }
  /** A bounce of one of our sends counts toward the sending mailbox's health, and may pause it. */
  | { do: 'count_bounce'; sendRequestId: string; hard: boolean };

export interface Decision {
  action: IngestAction;
  /** What to do, in order (see the table above). */
  steps: IngestStep[];
  needsReview: boolean;
  /** For out-of-office: when the enrollment resumes (null: the sequence's default pause). */
  returnAt: number | null;
}

/** The target's first transition, as the engine applied it. */
export interface TargetOutcome {
  applied: boolean;
  state: EnrollmentState;
}

/** Whether a conditional step is carried out, given the target's first transition (null: none was made). */
export function conditionHolds(when: StepCondition | undefined, first: TargetOutcome | null): boolean {
  if (when === undefined) return true;
  if (!first?.applied) return false;
  return when === 'target_applied' || first.state === 'bounced';
}

export interface ActOptions {
  /** Below this confidence a decision waits for a person (default 0.6). */
  reviewThreshold: number;
}

// The ladder's own line (classify/ladder.ts DEFAULT_REVIEW_BELOW): below it a verdict is a guess.
export const defaultActOptions: ActOptions = { reviewThreshold: 0.6 };

/**
 * Free-mail and consumer ISP domains: two prospects at gmail.com are not one company, so the
 * company rule never stops anyone by these.
 */
export const FREE_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'hotmail.co.uk', 'hotmail.fr', 'live.com', 'msn.com',
  'yahoo.com', 'yahoo.co.uk', 'yahoo.fr', 'yahoo.de', 'ymail.com', 'icloud.com', 'me.com', 'mac.com', 'aol.com',
  'proton.me', 'protonmail.com', 'gmx.de', 'gmx.net', 'gmx.com', 'web.de', 't-online.de', 'mail.com', 'zoho.com',
  'yandex.ru', 'yandex.com', 'mail.ru', 'qq.com', '163.com', '126.com', 'orange.fr', 'free.fr', 'laposte.net', 'libero.it',
  'fastmail.com', 'hey.com', 'tutanota.com',
]);

export function companyDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 0) return null;
  const domain = email.slice(at + 1).toLowerCase();
  return domain && !FREE_MAIL_DOMAINS.has(domain) ? domain : null;
}

/**
 * When an out-of-office enrollment resumes: the opening of the send window on the stated return
 * day, in the prospect's calendar (zone, send-window days, country's holidays); when the return day
 * is not a sending day (a weekend, a holiday), the next window that is. The return date is already
 * the first day back ("through Friday 4 December" is back on Monday the 7th: return-date.ts), so
 * resuming a business day later, or at midnight, would let a day pass after the person is back. Null when the
 * date cannot be placed (the engine then applies the sequence's default pause).
 */
export function oooResumeAt(returnDate: number, t: Pick<EnrollmentTarget, 'zone' | 'window' | 'country' | 'region' | 'skipHolidays'>): number | null {
  try {
    const ctx = contextOf({ zone: t.zone, window: t.window, ...(t.country ? { country: t.country } : {}), ...(t.region ? { region: t.region } : {}), skipHolidays: t.skipHolidays, jitterMinutes: 0 });
    const day = Math.floor(returnDate / DAY_MS);
    return nextSlotIn(ctx, instantOfWall(ctx.zone, day * DAY_MS, 'target')).start;
  } catch {
    return null;
  }
}

const none = (action: IngestAction, needsReview = false): Decision => ({ action, steps: [], needsReview, returnAt: null });
const event = (e: EngineEvent): IngestStep => ({ do: 'event', event: e });

/**
 * `sendRequestId`: the send the message answers, when it threads to one by our Message-ID (a
 * bounce of it counts against its mailbox); null for a person's relabel or an unsubscribe token.
 */
export function decide(c: Classification, target: EnrollmentTarget | null, o: ActOptions = defaultActOptions, sendRequestId: string | null = null): Decision {
  const acts = c.label !== 'delivery_report' && c.label !== 'auto_generated' && c.label !== 'challenge';
  const unsure = acts && !(c.confidence >= o.reviewThreshold);
  if (!target) return none('inbox', unsure);
  if (unsure) {
    return { ...none('needs_review', true), steps: [event({ type: 'pause', reason: 'needs review' })] };
  }
  const d = none('inbox');
  const optOut = (action: 'unsubscribe' | 'complaint', source: string): Decision => ({
    ...d,
    action,
    steps: [{ do: 'suppress', addresses: [{ email: target.leadEmail, reason: action }] }, event({ type: 'unsubscribe', source: source.slice(0, 200) })],
  });
  const counted = (hard: boolean): IngestStep[] => (sendRequestId ? [{ do: 'count_bounce', sendRequestId, hard }] : []);
  switch (c.label) {
    case 'human_reply': {
      const intent = c.intent;
      if (intent?.intent === 'unsubscribe') {
        if (intent.confidence >= o.reviewThreshold) return optOut('unsubscribe', `reply: ${intent.reason}`);
        // Stopping on a reply never waits for a person; whether it was an opt-out does.
        return { ...d, action: 'reply', steps: [event({ type: 'reply' })], needsReview: true };
      }
      const domain = target.stopCompanyOnReply ? companyDomain(target.leadEmail) : null;
      const company: IngestStep[] = domain ? [{ do: 'stop_company', domain, exceptEmail: target.leadEmail, reason: `${domain} replied (${target.leadEmail})`, when: 'target_applied' }] : [];
      // A sure intent travels with the reply: the sequence's reply rules (stop_rules.on_reply) act on it.
      const sure = intent && intent.confidence >= o.reviewThreshold ? { intent: intent.intent, from: target.leadEmail } : {};
      return { ...d, action: 'reply', steps: [event({ type: 'reply', ...sure }), ...company] };
    }
    case 'unsubscribe_request':
      return optOut('unsubscribe', c.reason);
    case 'feedback':
      return optOut('complaint', `complaint: ${c.feedback?.type ?? 'abuse'}`);
    case 'bounce': {
      const b = c.bounce;
      const reason = b ? [b.status, b.bounceClass, b.diagnostic?.slice(0, 120)].filter(Boolean).join(' ') : c.reason;
      if (b?.hardSoft === 'soft') {
        // Soft bounces past the sequence's limit count as a hard one: the address is suppressed
        // and its other enrollments stop, as the engine does for a hard bounce.
        const escalate: IngestStep = { do: 'suppress', addresses: [{ email: target.leadEmail, reason: 'hard_bounce' }], when: 'target_bounced', note: 'soft bounces past the limit' };
        return { ...d, action: 'soft_bounce', steps: [event({ type: 'bounce', hard: false, reason }), escalate, ...counted(false)] };
      }
      const failed = new Set([target.leadEmail, ...(b?.recipients ?? []), ...(b?.recipient ? [b.recipient] : [])].map((a) => a.toLowerCase()));
      const addresses = [...failed].map((email) => ({ email, reason: 'hard_bounce' as const }));
      return { ...d, action: 'hard_bounce', steps: [{ do: 'suppress', addresses }, event({ type: 'bounce', hard: true, reason }), ...counted(true)] };
    }
    case 'auto_reply': {
      const returnAt = typeof c.returnDate === 'number' ? oooResumeAt(c.returnDate, target) : null;
      return { ...d, action: 'out_of_office', steps: [event(returnAt === null ? { type: 'out_of_office' } : { type: 'out_of_office', returnAt })], returnAt };
    }
    case 'delivery_report':
    case 'auto_generated':
    case 'challenge':
      return d;
  }
}
