import type { Weekday } from '../sequence/calendar/index.ts';
import { describe, expect, it } from 'vitest';
import { companyDomain, decide, oooResumeAt, type EnrollmentTarget } from './act.ts';
import type { Classification } from './types.ts';

const target: EnrollmentTarget = { enrollmentId: 'e1', workspaceId: 'w', state: 'active', leadEmail: 'pat@acme.test', zone: 'Europe/Berlin', country: 'DE', region: null, window: { kind: 'any' }, skipHolidays: true, stopCompanyOnReply: true };
const c = (o: Partial<Classification>): Classification => ({ label: 'human_reply', confidence: 0.9, reason: 'r', rung: 'default', ...o });

describe('decide', () => {
  it('a human reply stops (and the company when asked); without an enrollment it only goes to the inbox', () => {
    expect(decide(c({}), target)).toMatchObject({ action: 'reply', events: [{ type: 'reply' }], stopCompanyDomain: 'acme.test' });
    expect(decide(c({}), { ...target, leadEmail: 'pat@gmail.com' }).stopCompanyDomain).toBeNull();
    expect(decide(c({}), null)).toMatchObject({ action: 'inbox', events: [], needsReview: false });
  });

  it('an unsure opt-out still stops the sequence, and asks a person', () => {
    expect(decide(c({ intent: { intent: 'unsubscribe', confidence: 0.9, reason: 'remove me' } }), target)).toMatchObject({ action: 'unsubscribe', suppress: [{ email: 'pat@acme.test', reason: 'unsubscribe' }] });
    expect(decide(c({ intent: { intent: 'unsubscribe', confidence: 0.2, reason: '?' } }), target)).toMatchObject({ action: 'reply', needsReview: true });
  });

  it('low confidence pauses for review; reports that act on nothing never do', () => {
    expect(decide(c({ label: 'bounce', confidence: 0.1 }), target)).toMatchObject({ action: 'needs_review', events: [{ type: 'pause', reason: 'needs review' }], needsReview: true });
    expect(decide(c({ label: 'delivery_report', confidence: 0.1 }), target)).toMatchObject({ action: 'inbox', events: [], needsReview: false });
    expect(decide(c({ confidence: 0.1 }), null)).toMatchObject({ action: 'inbox', needsReview: true });
  });

  it('bounces: hard suppresses every failed recipient, soft only counts', () => {
    const bounce = (hardSoft: 'hard' | 'soft') => c({ label: 'bounce', bounce: { recipient: 'old@acme.test', recipients: ['old@acme.test'], status: hardSoft === 'hard' ? '5.1.1' : '4.2.2', replyCode: null, hardSoft, bounceClass: 'user_unknown', diagnostic: null, originalMessageId: null } });
    expect(decide(bounce('hard'), target)).toMatchObject({ action: 'hard_bounce', events: [{ type: 'bounce', hard: true }], suppress: [{ email: 'pat@acme.test' }, { email: 'old@acme.test' }] });
    expect(decide(bounce('soft'), target)).toMatchObject({ action: 'soft_bounce', events: [{ type: 'bounce', hard: false }], suppress: [] });
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
