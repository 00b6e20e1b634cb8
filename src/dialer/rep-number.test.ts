import { describe, expect, it } from 'vitest';
import { repNumber } from './rep-number.ts';

describe('repNumber: the number a rep calls from and is called on', () => {
  it('takes a valid international number in any common writing and gives E.164', () => {
    expect(repNumber('+44 20 7946 0123')).toEqual({ ok: true, e164: '+442079460123' });
    expect(repNumber(' +1 (415) 555-2671 ')).toEqual({ ok: true, e164: '+14155552671' });
    expect(repNumber('+49 30 901820')).toEqual({ ok: true, e164: '+4930901820' });
  });

  it('refuses a national number, an extension, and what is not a valid number, saying why', () => {
    expect(repNumber('020 7946 0123')).toMatchObject({ ok: false, reason: expect.stringMatching(/international form/) });
    expect(repNumber('+44 20 7946 0123 ext. 12')).toMatchObject({ ok: false, reason: expect.stringMatching(/extension/) });
    expect(repNumber('+999 123 4567')).toMatchObject({ ok: false });
    expect(repNumber('+44 20')).toMatchObject({ ok: false, reason: expect.any(String) });
    expect(repNumber('+')).toMatchObject({ ok: false });
  });
});
