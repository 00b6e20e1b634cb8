import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../common/errors.ts';
import { customFieldName, headerKey, matchHeader, resolveColumns, type ResolvedColumn } from './headers.ts';

const targets = (cols: ResolvedColumn[]) =>
  cols.map((c) => (c.target.kind === 'field' ? c.target.field : c.target.kind === 'custom' ? `custom.${c.target.name}` : '-'));

function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isCadenzaError(e, 'INVALID_INPUT')) return e.message;
    throw e;
  }
  throw new Error('expected INVALID_INPUT');
}

describe('matchHeader: synonyms, without case, spacing, underscores or accents', () => {
  it.each([
    ['email', 'email'], ['E-mail', 'email'], ['Email Address', 'email'], ['EMAIL_ADDRESS', 'email'], ['e.mail', 'email'], ['Work Email', 'email'],
    ['First Name', 'first_name'], ['firstname', 'first_name'], ['first_name', 'first_name'], ['Given name', 'first_name'], ['Prénom', 'first_name'],
    ['Last Name', 'last_name'], ['Surname', 'last_name'], ['Family Name', 'last_name'], ['lname', 'last_name'],
    ['Company', 'company'], ['Company Name', 'company'], ['Organization', 'company'], ['Organisation', 'company'], ['Account Name', 'company'],
    ['Title', 'title'], ['Job Title', 'title'], ['Position', 'title'],
    ['Phone', 'phone'], ['Mobile', 'phone'], ['Phone Number', 'phone'], ['Mobile Phone', 'phone'], ['Tel.', 'phone'],
    ['Country', 'country'], ['Country Code', 'country'], ['Country/Region', 'country'],
    ['State', 'region'], ['Region', 'region'], ['State/Province', 'region'], ['Province', 'region'],
    ['Timezone', 'time_zone'], ['Time Zone', 'time_zone'], ['TZ', 'time_zone'], ['time_zone', 'time_zone'], ['IANA Time Zone', 'time_zone'],
  ])('%j → %s', (header, field) => {
    expect(matchHeader(header)).toBe(field);
  });

  it('matches nothing else', () => {
    for (const h of ['City', 'LinkedIn URL', 'Notes', '', '   ', 'Full Name', 'Email 2 Type']) expect(matchHeader(h), h).toBeNull();
  });

  it('property: case, blanks, underscores, hyphens and dots around or inside a synonym change nothing', () => {
    const synonyms = ['Email Address', 'First Name', 'Last Name', 'Company Name', 'Job Title', 'Phone Number', 'Country Code', 'State', 'Time Zone'];
    fc.assert(
      fc.property(
        fc.constantFrom(...synonyms),
        fc.array(fc.constantFrom(' ', '_', '-', '.', '  '), { minLength: 0, maxLength: 12 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        fc.nat(),
        (header, seps, upper, seed) => {
          // Insert separators at positions drawn from the seed, and flip letter case.
          const chars = header.split('').map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c.toLowerCase()));
          seps.forEach((sep, k) => chars.splice((seed + k * 7) % (chars.length + 1), 0, sep));
          expect(matchHeader(chars.join(''))).toBe(matchHeader(header));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('property: headerKey is idempotent and holds only [a-z0-9]', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (h) => {
        const k = headerKey(h);
        expect(k).toMatch(/^[a-z0-9]*$/);
        expect(headerKey(k)).toBe(k);
      }),
    );
  });
});

describe('customFieldName: snake_case', () => {
  it.each([
    ['LinkedIn URL', 'linked_in_url'],
    ['Deal Size ($)', 'deal_size'],
    ['deal-size', 'deal_size'],
    ['HTMLParser', 'html_parser'],
    ['leadSource', 'lead_source'],
    ['  Über Größe ', 'uber_grosse'],
    ['€€€', ''],
    ['a'.repeat(100), 'a'.repeat(63)],
  ])('%j → %j', (header, name) => {
    expect(customFieldName(header)).toBe(name);
  });

  it('property: always [a-z0-9_], at most 63, no leading, trailing or doubled underscore', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (h) => {
        const n = customFieldName(h);
        expect(n).toMatch(/^(?:[a-z0-9]+(?:_[a-z0-9]+)*)?$/);
        expect(n.length).toBeLessThanOrEqual(63);
      }),
    );
  });
});

describe('resolveColumns', () => {
  it('matches synonyms and keeps unmatched columns as custom fields', () => {
    const cols = resolveColumns(['E-mail', 'Given name', 'Surname', 'Organization', 'City', 'Lead Source', '']);
    expect(targets(cols)).toEqual(['email', 'first_name', 'last_name', 'company', 'custom.city', 'custom.lead_source', 'custom.column_7']);
    expect(cols.map((c) => c.source)).toEqual(['synonym', 'synonym', 'synonym', 'synonym', 'unmatched', 'unmatched', 'unmatched']);
  });

  it('gives a field to its first column; a second one becomes a custom field (nothing is dropped)', () => {
    const cols = resolveColumns(['Email', 'E-mail', 'Phone', 'Mobile', 'mobile']);
    expect(targets(cols)).toEqual(['email', 'custom.e_mail', 'phone', 'custom.mobile', 'custom.mobile_2']);
    expect(cols[1]!.source).toBe('duplicate');
  });

  it('a mapping overrides per column, leaves the rest to synonyms, and can drop a column', () => {
    const cols = resolveColumns(['Work Mail', 'Email', 'Nom', 'Secret', 'Extra'], {
      'Work Mail': 'email',
      Nom: 'last_name',
      Secret: '-',
      Extra: 'custom.Extra Info',
    });
    // 'Email' would be the email by synonym, but the mapping gave that field to 'Work Mail'.
    expect(targets(cols)).toEqual(['email', 'custom.email_2', 'last_name', '-', 'custom.extra_info']);
  });

  it('finds mapping columns without case or spacing when no exact header matches', () => {
    expect(targets(resolveColumns(['Work  Mail '], { 'work mail': 'email' }))).toEqual(['email']);
  });

  it('refuses a bad mapping with a message naming the problem', () => {
    expect(invalid(() => resolveColumns(['a', 'email'], { b: 'first_name' }))).toMatch(/column 'b'.*does not have/);
    expect(invalid(() => resolveColumns(['a', 'email'], { a: 'nickname' }))).toMatch(/'nickname' is not a lead field/);
    expect(invalid(() => resolveColumns(['a', 'b'], { a: 'email', b: 'email' }))).toMatch(/both 'a' and 'b' to email/);
    expect(invalid(() => resolveColumns(['a', 'email'], { a: 'custom.' }))).toMatch(/not a lead field/);
  });

  it('refuses a header without an email column, and says when the header looks like data', () => {
    expect(invalid(() => resolveColumns(['name', 'company']))).toMatch(/no column holds the email.*"name", "company"/);
    expect(invalid(() => resolveColumns(['jane@example.com', 'Jane']))).toMatch(/needs a header line/);
  });

  it("recognises a reject file's bookkeeping columns and leaves them out", () => {
    const cols = resolveColumns(['email', 'name', 'line', 'reason', 'message', 'raw']);
    expect(targets(cols)).toEqual(['email', 'custom.name', '-', '-', '-', '-']);
    // Only as the last four, in that order: elsewhere they are ordinary columns.
    expect(targets(resolveColumns(['email', 'message']))).toEqual(['email', 'custom.message']);
  });
});
