import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsedMail } from '../../types.ts';
import { unsubscribeRequest } from '../intent/unsubscribe.ts';
import { detectOutOfOffice } from '../out-of-office.ts';
import { extractReturnDate } from './return-date.ts';

/**
 * Whatever text arrives, the phrase rungs answer (no throw, no runaway regex) and a return date is
 * always within the promised window. Inputs mix random text with the words the rules look for, so
 * that the interesting paths are taken often.
 */
const DAY = 86_400_000;
const words = ['back', 'until', 'bis', "jusqu'au", 'hasta el', 'tot', 'am', 'out of office', 'I am', 'on leave', 'Monday', 'December', 'dezembre', '12月', '日', 'まで', '3.12.', '12/03', '2026-12-03', 'the 5th', 'stop', 'remove me', 'unsubscribe', ' ', '\n', '.', '/', '-', 'Automatic reply:'];
const text = fc.array(fc.oneof(fc.constantFrom(...words), fc.string({ maxLength: 12 }), fc.integer({ min: 0, max: 40 }).map(String)), { maxLength: 60 }).map((parts) => parts.join(' '));
const reference = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) });

function mail(subject: string, body: string, date: number): ParsedMail {
  return { messageId: null, inReplyTo: null, references: [], subject, from: null, to: [], cc: [], replyTo: [], returnPath: null, date, headers: [], contentType: 'text/plain', text: body, html: null, parts: [], size: body.length };
}

describe('out-of-office and unsubscribe rules under arbitrary text', () => {
  it('a return date lies on or after the mail day and within 184 days', () => {
    fc.assert(
      fc.property(text, reference, (t, ref) => {
        const r = extractReturnDate(t, ref);
        if (!r) return;
        const refDay = Math.floor(ref / DAY) * DAY;
        expect(r.date % DAY).toBe(0);
        expect(r.date).toBeGreaterThanOrEqual(refDay);
        expect(r.date).toBeLessThanOrEqual(refDay + 184 * DAY);
      }),
      { numRuns: 400, seed: 4 },
    );
  });

  it('detectOutOfOffice and unsubscribeRequest answer in bounds, the same way twice', () => {
    fc.assert(
      fc.property(text, text, reference, (subject, body, ref) => {
        const m = mail(subject, body, ref);
        const a = detectOutOfOffice(m, body);
        expect(detectOutOfOffice(m, body)).toEqual(a);
        if (a) {
          expect(a.confidence).toBeGreaterThanOrEqual(0.5);
          expect(a.confidence).toBeLessThanOrEqual(0.99);
        }
        const u = unsubscribeRequest(body);
        if (u) expect(u.confidence).toBeGreaterThan(0);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('stays fast on long hostile text', () => {
    const hostile = ['I am '.repeat(5000), 'bis '.repeat(5000) + '3.12.', '1/'.repeat(10000), 'back '.repeat(4000) + ' on the', '3 de '.repeat(5000), 'stop '.repeat(10000)];
    for (const t of hostile) {
      expect(() => detectOutOfOffice(mail(t.slice(0, 500), t, Date.UTC(2026, 10, 27)), t)).not.toThrow();
      expect(() => extractReturnDate(t, Date.UTC(2026, 10, 27))).not.toThrow();
      expect(() => unsubscribeRequest(t)).not.toThrow();
    }
  });
});
