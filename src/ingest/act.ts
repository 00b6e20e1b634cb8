import { contextOf } from '../sequence/calendar/context.ts';
import { nextSlotIn } from '../sequence/calendar/allowed.ts';
import { DAY_MS } from '../sequence/calendar/civil.ts';
import type { SendWindow } from '../sequence/calendar/index.ts';
import { instantOfWall } from '../sequence/calendar/zone.ts';
import type { EngineEvent, EnrollmentState } from '../sequence/model.ts';
import type { Classification } from './types.ts';

/**
 * What an inbound message does: its classification and the enrollment it threads to become engine
 * events and suppressions. Pure; the pipeline carries the decision out in its transaction.
 *
 * | classification                          | enrollment event                          | also                                  |
 * | --------------------------------------- | ----------------------------------------- | ------------------------------------- |
 * | human_reply                             | reply (replied; timer, sends cancelled)    | stop the company's others (option)    |
 * | human_reply, intent unsubscribe         | unsubscribe                               | address suppressed                    |
 * | unsubscribe_request, our mailto: token  | unsubscribe                               | address suppressed                    |
 * | bounce, hard (5.x.x)                    | bounce {hard}: bounced                    | failed recipients suppressed          |
 * | bounce, soft (4.x.x)                    | bounce {soft}: counted, bounced past max  | past max: suppressed (pipeline.ts)    |
 * | feedback (ARF complaint)                | unsubscribe                               | suppressed as a complaint             |
 * | auto_reply (out of office)              | out_of_office {send window on the return day} | default pause without a date     |
 * | delivery_report, auto_generated, challenge | none (inbox only)                      |                                       |
 * | any of the above below the threshold    | pause 'needs review'                      | flagged for the review queue          |
 * | matching no enrollment                  | none (inbox only)                         | low confidence flagged for review     |
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

export interface Decision {
  action: IngestAction;
  /** Events for the target enrollment, in order. */
  events: EngineEvent[];
  /** Written before the events (so a complaint keeps its reason; the engine's own insert does nothing then). */
  suppress: Array<{ email: string; reason: 'hard_bounce' | 'unsubscribe' | 'complaint' }>;
  /** Stop the other live enrollments of this domain in the workspace. */
  stopCompanyDomain: string | null;
  needsReview: boolean;
  /** For out-of-office: when the enrollment resumes (null: the sequence's default pause). */
  returnAt: number | null;
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

const none = (action: IngestAction, needsReview = false): Decision => ({ action, events: [], suppress: [], stopCompanyDomain: null, needsReview, returnAt: null });

export function decide(c: Classification, target: EnrollmentTarget | null, o: ActOptions = defaultActOptions): Decision {
  const acts = c.label !== 'delivery_report' && c.label !== 'auto_generated' && c.label !== 'challenge';
  const unsure = acts && !(c.confidence >= o.reviewThreshold);
  if (!target) return none('inbox', unsure);
  if (unsure) {
    return { ...none('needs_review', true), events: [{ type: 'pause', reason: 'needs review' }] };
  }
  const d = none('inbox');
  switch (c.label) {
    case 'human_reply': {
      const intent = c.intent;
      if (intent?.intent === 'unsubscribe') {
        if (intent.confidence >= o.reviewThreshold) {
          return { ...d, action: 'unsubscribe', events: [{ type: 'unsubscribe', source: `reply: ${intent.reason}`.slice(0, 200) }], suppress: [{ email: target.leadEmail, reason: 'unsubscribe' }] };
        }
        // Stopping on a reply never waits for a person; whether it was an opt-out does.
        return { ...d, action: 'reply', events: [{ type: 'reply' }], needsReview: true };
      }
      return { ...d, action: 'reply', events: [{ type: 'reply' }], stopCompanyDomain: target.stopCompanyOnReply ? companyDomain(target.leadEmail) : null };
    }
    case 'unsubscribe_request':
      return { ...d, action: 'unsubscribe', events: [{ type: 'unsubscribe', source: c.reason.slice(0, 200) }], suppress: [{ email: target.leadEmail, reason: 'unsubscribe' }] };
    case 'feedback':
      return { ...d, action: 'complaint', events: [{ type: 'unsubscribe', source: `complaint: ${c.feedback?.type ?? 'abuse'}` }], suppress: [{ email: target.leadEmail, reason: 'complaint' }] };
    case 'bounce': {
      const b = c.bounce;
      const reason = b ? [b.status, b.bounceClass, b.diagnostic?.slice(0, 120)].filter(Boolean).join(' ') : c.reason;
      if (b?.hardSoft === 'soft') return { ...d, action: 'soft_bounce', events: [{ type: 'bounce', hard: false, reason }] };
      const failed = new Set([target.leadEmail, ...(b?.recipients ?? []), ...(b?.recipient ? [b.recipient] : [])].map((a) => a.toLowerCase()));
      return { ...d, action: 'hard_bounce', events: [{ type: 'bounce', hard: true, reason }], suppress: [...failed].map((email) => ({ email, reason: 'hard_bounce' as const })) };
    }
    case 'auto_reply': {
      const returnAt = typeof c.returnDate === 'number' ? oooResumeAt(c.returnDate, target) : null;
      return { ...d, action: 'out_of_office', events: [returnAt === null ? { type: 'out_of_office' } : { type: 'out_of_office', returnAt }], returnAt };
    }
    case 'delivery_report':
    case 'auto_generated':
    case 'challenge':
      return d;
  }
}
