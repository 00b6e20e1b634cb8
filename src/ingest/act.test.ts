import type { Weekday } from '../calendar/index.ts';
import { describe, expect, it } from 'vitest';
import { companyDomain, conditionHolds, decide, oooResumeAt, type Decision, type EnrollmentTarget } from './act.ts';
import type { Classification } from './types.ts';

const target: EnrollmentTarget = { enrollmentId: 'e1', workspaceId: 'w', state: 'active', leadEmail: 'pat@acme.test', zone: 'Europe/Berlin', country: 'DE', region: null, window: { kind: 'any' }, skipHolidays: true, stopCompanyOnReply: true };
const c = (o: Partial<Classification>): Classification => ({ label: 'human_reply', confidence: 0.9, reason: 'r', rung: 'default', ...o });
const bounce = (hardSoft: 'hard' | 'soft') => c({ label: 'bounce', bounce: { recipient: 'old@acme.test', recipients: ['old@acme.test'], status: hardSoft === 'hard' ? '5.1.1' : '4.2.2', replyCode: null, hardSoft, bounceClass: 'user_unknown', diagnostic: null, originalMessageId: null } });

const events = (d: Decision) => d.steps.flatMap((s) => (s.do === 'event' ? [s.event] : []));
const suppressed = (d: Decision) => d.steps.flatMap((s) => (s.do === 'suppress' && !s.when ? s.addresses : []));
const companyStop = (d: Decision) => d.steps.find((s) => s.do === 'stop_company') ?? null;

describe('decide', () => {
  it('a human reply stops (and the company when asked); without an enrollment it only goes to the inbox', () => {
    const reply = decide(c({}), target);
    expect(reply).toMatchObject({ action: 'reply' });
    expect(events(reply)).toEqual([{ type: 'reply' }]);
    expect(companyStop(reply)).toMatchObject({ domain: 'acme.test' });
    expect(companyStop(decide(c({}), { ...target, leadEmail: 'pat@gmail.com' }))).toBeNull();
    expect(decide(c({}), null)).toMatchObject({ action: 'inbox', steps: [], needsReview: false });
  });

  it('an unsure opt-out still stops the sequence, and asks a person', () => {
    const sure = decide(c({ intent: { intent: 'unsubscribe', confidence: 0.9, reason: 'remove me' } }), target);
    expect(sure).toMatchObject({ action: 'unsubscribe' });
    expect(suppressed(sure)).toEqual([{ email: 'pat@acme.test', reason: 'unsubscribe' }]);
    expect(decide(c({ intent: { intent: 'unsubscribe', confidence: 0.2, reason: '?' } }), target)).toMatchObject({ action: 'reply', needsReview: true });
  });

  it('low confidence pauses for review; reports that act on nothing never do', () => {
    expect(decide(c({ label: 'bounce', confidence: 0.1 }), target)).toMatchObject({ action: 'needs_review', steps: [{ do: 'event', event: { type: 'pause', reason: 'needs review' } }], needsReview: true });
    expect(decide(c({ label: 'delivery_report', confidence: 0.1 }), target)).toMatchObject({ action: 'inbox', steps: [], needsReview: false });
    expect(decide(c({ confidence: 0.1 }), null)).toMatchObject({ action: 'inbox', needsReview: true });
  });

  it('bounces: hard suppresses every failed recipient, soft only counts', () => {
    const hard = decide(bounce('hard'), target);
    expect(hard).toMatchObject({ action: 'hard_bounce' });
    expect(events(hard)).toMatchObject([{ type: 'bounce', hard: true }]);
    expect(suppressed(hard)).toMatchObject([{ email: 'pat@acme.test' }, { email: 'old@acme.test' }]);
    const soft = decide(bounce('soft'), target);
    expect(soft).toMatchObject({ action: 'soft_bounce' });
    expect(events(soft)).toMatchObject([{ type: 'bounce', hard: false }]);
    expect(suppressed(soft)).toEqual([]);
  });

  // Every decision, whole: the pipeline carries these steps out in this order and decides nothing.
  const send = 'send-1';
  const bounceReason = (s: '5.1.1' | '4.2.2') => `${s} user_unknown`;
  it.each<[string, Classification, EnrollmentTarget, string | null, Decision]>([
    ['reply, company rule on', c({}), target, send, {
      action: 'reply', needsReview: false, returnAt: null,
      steps: [
        { do: 'event', event: { type: 'reply' } },
        { do: 'stop_company', domain: 'acme.test', exceptEmail: 'pat@acme.test', reason: 'acme.test replied (pat@acme.test)', when: 'target_applied' },
      ],
    }],
    ['reply, company rule off', c({}), { ...target, stopCompanyOnReply: false }, send, {
      action: 'reply', needsReview: false, returnAt: null, steps: [{ do: 'event', event: { type: 'reply' } }],
    }],
    ['hard bounce of our send', bounce('hard'), target, send, {
      action: 'hard_bounce', needsReview: false, returnAt: null,
      steps: [
        { do: 'suppress', addresses: [{ email: 'pat@acme.test', reason: 'hard_bounce' }, { email: 'old@acme.test', reason: 'hard_bounce' }] },
        { do: 'event', event: { type: 'bounce', hard: true, reason: bounceReason('5.1.1') } },
        { do: 'count_bounce', sendRequestId: send, hard: true },
      ],
    }],
    ['soft bounce of our send (escalated only if the engine ends it bounced)', bounce('soft'), target, send, {
      action: 'soft_bounce', needsReview: false, returnAt: null,
      steps: [
        { do: 'event', event: { type: 'bounce', hard: false, reason: bounceReason('4.2.2') } },
        { do: 'suppress', addresses: [{ email: 'pat@acme.test', reason: 'hard_bounce' }], when: 'target_bounced', note: 'soft bounces past the limit' },
        { do: 'count_bounce', sendRequestId: send, hard: false },
      ],
    }],
    ['hard bounce threaded to no send (a person\'s relabel)', bounce('hard'), target, null, {
      action: 'hard_bounce', needsReview: false, returnAt: null,
      steps: [
        { do: 'suppress', addresses: [{ email: 'pat@acme.test', reason: 'hard_bounce' }, { email: 'old@acme.test', reason: 'hard_bounce' }] },
        { do: 'event', event: { type: 'bounce', hard: true, reason: bounceReason('5.1.1') } },
      ],
    }],
    ['unsubscribe request (our mailto: token)', c({ label: 'unsubscribe_request', confidence: 1, reason: 'List-Unsubscribe mailto' }), target, null, {
      action: 'unsubscribe', needsReview: false, returnAt: null,
      steps: [
        { do: 'suppress', addresses: [{ email: 'pat@acme.test', reason: 'unsubscribe' }] },
        { do: 'event', event: { type: 'unsubscribe', source: 'List-Unsubscribe mailto' } },
      ],
    }],
    ['complaint (ARF)', c({ label: 'feedback', feedback: { type: 'abuse', recipient: null, originalMessageId: null } }), target, send, {
      action: 'complaint', needsReview: false, returnAt: null,
      steps: [
        { do: 'suppress', addresses: [{ email: 'pat@acme.test', reason: 'complaint' }] },
        { do: 'event', event: { type: 'unsubscribe', source: 'complaint: abuse' } },
      ],
    }],
    ['out of office without a date', c({ label: 'auto_reply' }), target, send, {
      action: 'out_of_office', needsReview: false, returnAt: null, steps: [{ do: 'event', event: { type: 'out_of_office' } }],
    }],
    ['out of office back on a date', c({ label: 'auto_reply', returnDate: Date.UTC(2026, 5, 5) }), { ...target, zone: 'UTC', country: null }, send, {
      action: 'out_of_office', needsReview: false, returnAt: Date.UTC(2026, 5, 5),
      steps: [{ do: 'event', event: { type: 'out_of_office', returnAt: Date.UTC(2026, 5, 5) } }],
    }],
  ])('%s', (_, cls, t, sendId, want) => {
    expect(decide(cls, t, undefined, sendId)).toEqual(want);
  });

  it('a conditional step holds only on the target transition it names', () => {
    expect(conditionHolds(undefined, null)).toBe(true);
    expect(conditionHolds('target_applied', null)).toBe(false);
    expect(conditionHolds('target_applied', { applied: false, state: 'replied' })).toBe(false);
    expect(conditionHolds('target_applied', { applied: true, state: 'replied' })).toBe(true);
    // Under the limit the soft bounce is counted and the enrollment stays active: no escalation.
    expect(conditionHolds('target_bounced', { applied: true, state: 'active' })).toBe(false);
    // Past the limit the engine ends it bounced: the address is suppressed as a hard bounce.
    expect(conditionHolds('target_bounced', { applied: true, state: 'bounced' })).toBe(true);
    // Already ended (the bounce ignored): nothing follows.
    expect(conditionHolds('target_bounced', { applied: false, state: 'bounced' })).toBe(false);
  });
});

describe('oooResumeAt', () => {
  const weekdays = { kind: 'hours' as const, days: [1, 2, 3, 4, 5] as Weekday[], start: '09:00', end: '17:00' };

  it('is the opening of the send window on the return day, in the prospect’s zone', () => {
    // "Out until 1 December" (a Tuesday) reads as back on Wednesday the 2nd: resume at 09:00 New York
    // that day, not at midnight and not a business day later.
    const ny = { ...target, zone: 'America/New_York', country: 'US', window: weekdays };
    expect(new Date(oooResumeAt(Date.UTC(2026, 11, 2), ny)!).toISOString()).toBe('2026-12-02T14:00:00.000Z');
    // A window that opens at 00:00 (any time) resumes at the start of the return day.
    expect(new Date(oooResumeAt(Date.UTC(2026, 5, 5), { ...target, zone: 'UTC', country: null })!).toISOString()).toBe('2026-06-05T00:00:00.000Z');
  });

  it('moves a return day that is not a sending day to the next one that is (weekend, holidays)', () => {
    const berlin = { ...target, window: weekdays };
    // Back Saturday 2026-12-05: Monday the 7th at 09:00 Berlin.
    expect(new Date(oooResumeAt(Date.UTC(2026, 11, 5), berlin)!).toISOString()).toBe('2026-12-07T08:00:00.000Z');
    // Back on Christmas Day in Germany: the 25th and 26th are holidays, the 27th a Sunday: Monday the 28th.
    expect(new Date(oooResumeAt(Date.UTC(2026, 11, 25), berlin)!).toISOString()).toBe('2026-12-28T08:00:00.000Z');
    // Thursday the 24th is a working day there: that day.
    expect(new Date(oooResumeAt(Date.UTC(2026, 11, 24), berlin)!).toISOString()).toBe('2026-12-24T08:00:00.000Z');
    expect(new Date(oooResumeAt(Date.UTC(2026, 11, 25), { ...berlin, skipHolidays: false })!).toISOString()).toBe('2026-12-25T08:00:00.000Z');
  });

  it('the company domain ignores free-mail hosts', () => {
    expect(companyDomain('x@Sub.Acme.test')).toBe('sub.acme.test');
    expect(companyDomain('x@gmail.com')).toBeNull();
  });
});
