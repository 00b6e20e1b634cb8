import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PHONE_TEXT_CHARS, normalizePhone, phoneVerdict } from './phone.ts';

describe('normalizePhone', () => {
  it('reads a national number in the lead\'s country, keeping the number\'s own country and its type', () => {
    expect(normalizePhone('020 7946 0958', 'GB')).toEqual({
      e164: '+442079460958',
      country: 'GB',
      nationalNumber: '2079460958',
      extension: null,
      type: 'fixed-line',
      status: 'valid',
      code: null,
      reason: null,
    });
    // An Isle of Man mobile written as a British lead's national number.
    expect(normalizePhone('07624 369230', 'GB')).toMatchObject({ e164: '+447624369230', country: 'IM', type: 'mobile', status: 'valid' });
  });

  it("falls back to the workspace's country, and to it only when the lead's has no numbering plan", () => {
    expect(normalizePhone('(213) 373-4253', null, 'US')).toMatchObject({ e164: '+12133734253', status: 'valid' });
    expect(normalizePhone('01 23 45 67 89', 'FR', 'US')).toMatchObject({ e164: '+33123456789', status: 'valid' });
    expect(normalizePhone('(213) 373-4253', 'AQ', 'US')).toMatchObject({ e164: '+12133734253', status: 'valid' });
    expect(normalizePhone('2133734253', 'aq', null)).toMatchObject({ e164: null, code: 'no_country', reason: 'no numbering plan for AQ: write it with +<country code>' });
  });

  it('keeps the extension apart from the E.164 form', () => {
    expect(normalizePhone('(213) 373-4253 ext. 1234', 'US')).toMatchObject({ e164: '+12133734253', extension: '1234', status: 'valid' });
    expect(normalizePhone('+1 213 373 4253 x12', null)).toMatchObject({ e164: '+12133734253', extension: '12', status: 'valid' });
  });

  it('reads a number out of the text around it', () => {
    expect(normalizePhone('Phone: 8 (800) 555 35 35.', 'RU')).toMatchObject({ e164: '+78005553535', type: 'toll-free', status: 'valid' });
    expect(normalizePhone('Tel.: +49 30 901820', null)).toMatchObject({ e164: '+4930901820', status: 'valid' });
  });

  it('ignores invisible format characters (bidirectional marks, zero-width spaces, BOM, soft hyphen)', () => {
    expect(normalizePhone('+4915784846111\u202c', null)).toMatchObject({ e164: '+4915784846111', status: 'valid' });
    expect(normalizePhone('\u200e\ufeff+44\u00a020\u200b7946\u00ad0958\u2069', null)).toMatchObject({ e164: '+442079460958', status: 'valid' });
  });

  it('reads + and 00 forms; 00 stands for + only where no country says otherwise', () => {
    expect(normalizePhone('+44 20 7946 0958', 'US')).toMatchObject({ e164: '+442079460958', country: 'GB' });
    expect(normalizePhone('0044 20 7946 0958', null)).toMatchObject({ e164: '+442079460958', status: 'valid' });
    expect(normalizePhone('00 44 20 7946 0958', 'FR')).toMatchObject({ e164: '+442079460958', status: 'valid' });
    // The United States dial abroad with 011: 0044… there is a (too long) national number.
    const us = normalizePhone('0044 20 7946 0958', 'US');
    expect(us).toMatchObject({ e164: null, status: 'flagged', code: 'too_long' });
    expect(us.reason).toBe('too long for US (00 is not how US dials abroad: write + and the country code)');
  });

  it('flags each kind of bad number with a reason in plain words naming the country', () => {
    const cases: Array<[string, string | null, string, string]> = [
      ['', 'GB', 'empty', 'empty'],
      [' \u200b ', 'GB', 'empty', 'empty'],
      ['n/a', 'GB', 'not_a_number', 'not a phone number'],
      ['2133734253', null, 'no_country', 'no country: write it with +<country code>, or give the lead or the workspace a country'],
      ['+0123', null, 'unknown_calling_code', 'no country has the calling code it starts with (+012)'],
      ['123', 'DE', 'too_short', 'too short for DE'],
      ['(800) 55 35 35', 'RU', 'too_short', 'too short for RU'],
      ['020 7946 09581111', 'GB', 'too_long', 'too long for GB'],
      ['1111111111111111111111', 'US', 'too_long', 'too long: more digits than any phone number'],
      ['+44 20 7946 0958, mobile +44 7911 123456', null, 'several_numbers', 'holds 2 numbers: keep one in the phone column (the others can go in a custom field)'],
    ];
    for (const [input, country, code, reason] of cases) {
      const v = normalizePhone(input, country);
      expect({ input, status: v.status, code: v.code, reason: v.reason, e164: v.e164 }).toEqual({ input, status: 'flagged', code, reason, e164: null });
    }
  });

  it('keeps the E.164 form of a number of a possible length in no known range, flagged "possible but not valid"', () => {
    expect(normalizePhone('911231231', 'BE')).toMatchObject({
      e164: '+32911231231',
      status: 'flagged',
      code: 'not_valid',
      reason: 'possible but not valid: the right length for BE, but in none of its number ranges',
    });
    // A +1 number in no North American country's ranges: no country to name but its calling code.
    expect(normalizePhone('+1 222 333 3333', null)).toMatchObject({ e164: '+12223333333', country: null, code: 'not_valid', reason: expect.stringContaining('for +1') });
  });

  it('refuses a text longer than MAX_PHONE_TEXT_CHARS before reading it', () => {
    const v = normalizePhone(`+44 20 7946 0958${' '.repeat(MAX_PHONE_TEXT_CHARS)}`, null);
    expect(v).toMatchObject({ status: 'flagged', code: 'text_too_long', e164: null });
  });
});

describe('phoneVerdict', () => {
  it('gives all-null columns for no number, and the code beside the columns for a flagged one', () => {
    expect(phoneVerdict(null, 'GB', null)).toEqual({ columns: { phone_e164: null, phone_status: null, phone_reason: null }, code: null });
    expect(phoneVerdict('  ', 'GB', null).columns.phone_status).toBeNull();
    expect(phoneVerdict('123', 'DE', null)).toEqual({ columns: { phone_e164: null, phone_status: 'flagged', phone_reason: 'too short for DE' }, code: 'too_short' });
  });
});

// Strings that look like phone numbers often enough to reach deep into the library: digits, the
// separators and prefixes people write, extension words, letters, invisible and odd characters.
const PHONE_ALPHABET = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '+', ' ', '-', '(', ')', '.', '/', 'x', 'ext', ';', 'tel:', '00', '011', '#', '*', '\u202c', '\u200b', '\u00a0', '\uff11', 'a', ',', 'Phone: '];
const phoneish = fc.array(fc.constantFrom(...PHONE_ALPHABET), { maxLength: 60 }).map((a) => a.join(''));
const anyText = fc.oneof(phoneish, fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 80 }));
const country = fc.oneof(fc.constant(null), fc.constantFrom('US', 'GB', 'DE', 'FR', 'RU', 'BR', 'CN', 'IN', 'AQ', 'XX', 'us', ''));

describe('normalizePhone on arbitrary strings', () => {
  it('never throws, always answers a verdict, and stays fast', () => {
    normalizePhone('+1 213 373 4253', null); // the metadata's first use is not the input's cost
    let slowest = { ms: 0, args: ['', null, null] as [string, string | null, string | null] };
    fc.assert(
      fc.property(anyText, country, country, (text, lead, ws) => {
        const t0 = performance.now();
        const v = normalizePhone(text, lead, ws);
        const ms = performance.now() - t0;
        if (ms > slowest.ms) slowest = { ms, args: [text, lead, ws] };
        expect(['valid', 'flagged']).toContain(v.status);
        expect(v.status === 'valid' ? v.reason === null && v.code === null : typeof v.reason === 'string' && v.reason !== '').toBe(true);
        if (v.e164 !== null) expect(v.e164).toMatch(/^\+[1-9]\d{1,16}$/);
      }),
      { numRuns: 2000 },
    );
    // The slowest input timed again, its best of five: a collection or a neighbour's burst on a
    // loaded machine can stretch any one call, a super-linear pattern stretches every call of it.
    // One number is tens of microseconds; 20 ms would be a thousand times that.
    const again = Array.from({ length: 5 }, () => {
      const t0 = performance.now();
      normalizePhone(...slowest.args);
      return performance.now() - t0;
    });
    expect(Math.min(...again), JSON.stringify(slowest.args)).toBeLessThan(20);
  });

  it('reads hostile texts of the longest length it accepts in bounded time', () => {
    const n = MAX_PHONE_TEXT_CHARS;
    const hostile = ['1'.repeat(n), '1-'.repeat(n / 2), '+('.repeat(n / 2), 'ext'.repeat(n / 3), '1 x'.repeat(n / 3), '00'.repeat(n / 2), '\u202c'.repeat(n), '+1 213 373 4253 / '.repeat(n / 18), '\u202c'.repeat(100_000)];
    for (const text of hostile) {
      const best = Math.min(
        ...Array.from({ length: 3 }, () => {
          const t0 = performance.now();
          expect(normalizePhone(text, 'US').status).toBe('flagged');
          return performance.now() - t0;
        }),
      );
      expect(best, JSON.stringify(text.slice(0, 40))).toBeLessThan(20);
    }
  });

  it('gives a valid E.164 number back as itself, valid, whatever the country it is read in', () => {
    // Numbers of plausible shapes, so that a good share of them are valid and the property bites.
    const likely = fc
      .tuple(fc.constantFrom('+1 ', '+44 ', '+49 ', '+33 ', '+7 ', '+55 ', '+86 ', '+91 ', '0', '00 33 ', ''), fc.stringMatching(/^[1-9][0-9]{5,10}$/))
      .map(([prefix, digits]) => prefix + digits);
    let valid = 0;
    fc.assert(
      fc.property(fc.oneof(likely, phoneish), country, country, (text, lead, other) => {
        const v = normalizePhone(text, lead);
        if (v.status !== 'valid') return;
        valid++;
        const again = normalizePhone(v.e164!, other);
        expect(again).toMatchObject({ e164: v.e164, status: 'valid', country: v.country, nationalNumber: v.nationalNumber, type: v.type });
      }),
      { numRuns: 2000 },
    );
    expect(valid).toBeGreaterThan(100);
  });
});
