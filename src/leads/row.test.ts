import { describe, expect, it } from 'vitest';
import { ISO_ALPHA2, normalizeCountry } from './country.ts';
import { resolveColumns } from './headers.ts';
import { checkRow } from './row.ts';
import { normalizeTimeZone } from './time-zone.ts';

describe('normalizeCountry', () => {
  it('holds the 249 assigned ISO 3166-1 alpha-2 codes, each one a region ICU names', () => {
    expect(ISO_ALPHA2.size).toBe(249);
    const names = new Intl.DisplayNames(['en'], { type: 'region' });
    for (const code of ISO_ALPHA2) expect(names.of(code), code).not.toBe(code);
  });

  it.each([
    ['DE', 'DE'], ['de', 'DE'], [' us ', 'US'], ['GB', 'GB'], ['UK', 'GB'], ['U.K.', 'GB'],
    ['United States', 'US'], ['united states of america', 'US'], ['USA', 'US'], ['U.S.A.', 'US'],
    ['Germany', 'DE'], ['Deutschland', 'DE'], ['Allemagne', 'DE'], ['United Kingdom', 'GB'], ['England', 'GB'],
    ['España', 'ES'], ['Espana', 'ES'], ['Côte d’Ivoire', 'CI'], ['Ivory Coast', 'CI'], ['South Korea', 'KR'],
    ['The Netherlands', 'NL'], ['Holland', 'NL'], ['Czech Republic', 'CZ'], ['Türkiye', 'TR'], ['Bosnia & Herzegovina', 'BA'],
    ['St. Lucia', 'LC'], ['FRA', 'FR'], ['Schweiz', 'CH'],
  ])('%j → %s', (input, code) => {
    expect(normalizeCountry(input)).toBe(code);
  });

  it('refuses what is not a country', () => {
    for (const s of ['', 'XX', 'ZZ', 'EU', 'Narnia', 'U', 'United', '12', 'US-CA']) expect(normalizeCountry(s), s).toBeNull();
  });
});

describe('normalizeTimeZone', () => {
  it('keeps IANA zones, writing a case-only variant canonically', () => {
    expect(normalizeTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(normalizeTimeZone(' america/new_york ')).toBe('America/New_York');
    expect(normalizeTimeZone('US/Eastern')).toBe('US/Eastern');
    expect(normalizeTimeZone('utc')).toBe('UTC');
  });

  it('refuses offsets, unknown names and free text', () => {
    for (const z of ['+05:00', 'GMT+05:30', 'Mars/Olympus', 'Eastern Time', 'America/New York', '']) expect(normalizeTimeZone(z), z).toBeNull();
  });
});

describe('checkRow', () => {
  const cols = resolveColumns(['Email', 'First Name', 'Country', 'Time Zone', 'Notes', 'Ignored'], { Ignored: '-' });

  it('builds the lead: one-line fields, NFC, custom fields, empty cells left out', () => {
    const r = checkRow([' Jane@Example.com ', '  Jane \n  Mary ', 'Germany', 'Europe/Berlin', ' line 1\nline 2 ', 'x'], cols);
    expect(r).toEqual({
      ok: true,
      lead: {
        email: 'Jane@example.com',
        email_norm: 'jane@example.com',
        first_name: 'Jane Mary',
        last_name: null,
        company: null,
        title: null,
        phone: null,
        country: 'DE',
        region: null,
        time_zone: 'Europe/Berlin',
        custom: { notes: 'line 1\nline 2' },
        phone_e164: null,
        phone_status: null,
        phone_reason: null,
      },
      warnings: [],
      phoneFlag: null,
    });
    const nfd = checkRow(['a@b.co', 'Zoe\u0308', '', '', '', ''], cols);
    expect(nfd.ok && nfd.lead.first_name).toBe('Zoë');
  });

  it.each([
    [['', 'Jane', '', '', '', ''], 'missing_email', /empty/],
    [['   ', 'Jane', '', '', '', ''], 'missing_email', /empty/],
    [['jane', '', '', '', '', ''], 'invalid_email', /"jane": has no '@'/],
    [['a@b.co', '', 'Narnia', '', '', ''], 'invalid_country', /"Narnia" in column 'Country'/],
    [['a@b.co', 'x'.repeat(257), '', '', '', ''], 'too_long', /'First Name' \(first_name\) is 257 characters long, more than 256/],
    [['a@b.co', '', '', '', 'x'.repeat(4097), ''], 'too_long', /'Notes' is 4097 characters/],
    [['a@b.co', 'J\ufffdrg', '', '', '', ''], 'invalid_encoding', /'First Name' is not valid UTF-8/],
    [['a@b.co', '', '', '', 'a\u0000b', ''], 'invalid_characters', /U\+0000/],
    [['a@b.co', 'bell\u0007', '', '', '', ''], 'invalid_characters', /U\+0007/],
  ])('%j → %s', (fields, reason, message) => {
    const r = checkRow(fields, cols);
    expect(r).toMatchObject({ ok: false, reason });
    if (!r.ok) expect(r.message).toMatch(message);
  });

  it('does not look at an ignored column', () => {
    expect(checkRow(['a@b.co', '', '', '', '', 'a\u0000\ufffd'], cols).ok).toBe(true);
  });

  it('imports a row with an unknown time zone without the zone, with a warning', () => {
    const r = checkRow(['a@b.co', '', '', 'Eastern Time', '', ''], cols);
    expect(r).toMatchObject({ ok: true, lead: { time_zone: null }, warnings: [{ reason: 'invalid_time_zone' }] });
  });
  it("keeps the number as written beside its E.164 form, read in the row's country, else the workspace's; a flagged one never refuses the row", () => {
    const phoneCols = resolveColumns(['Email', 'Phone', 'Country'], {});
    expect(checkRow(['a@b.co', '  030 901820 ', 'Germany'], phoneCols, 'US')).toMatchObject({
      ok: true,
      lead: { phone: '030 901820', country: 'DE', phone_e164: '+4930901820', phone_status: 'valid', phone_reason: null },
      phoneFlag: null,
    });
    expect(checkRow(['a@b.co', '(213) 373-4253', ''], phoneCols, 'US')).toMatchObject({ ok: true, lead: { country: null, phone_e164: '+12133734253', phone_status: 'valid' } });
    expect(checkRow(['a@b.co', '(213) 373-4253', ''], phoneCols)).toMatchObject({ ok: true, lead: { phone_e164: null, phone_status: 'flagged' }, phoneFlag: 'no_country' });
    expect(checkRow(['a@b.co', '123', 'GB'], phoneCols)).toMatchObject({ ok: true, lead: { phone: '123', phone_status: 'flagged', phone_reason: 'too short for GB' }, phoneFlag: 'too_short', warnings: [] });
  });
});
