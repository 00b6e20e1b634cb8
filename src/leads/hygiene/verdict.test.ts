import fc from 'fast-check';
import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkEmail } from '../email.ts';
import { disposableListSize, isDisposableDomain } from './disposable.ts';
import { isRoleAccount } from './role-accounts.ts';
import { decideVerdict, needsDns, parseAddress } from './verdict.ts';

const codes = (r: { reasons: Array<{ code: string }> }) => r.reasons.map((x) => x.code);

describe('decideVerdict', () => {
  const a = (s: string) => parseAddress(s);
  it('valid: a person at a domain with an MX or an implicit MX', () => {
    expect(decideVerdict(a('ana@example.com'), { kind: 'mx' }, null)).toEqual({ verdict: 'valid', reasons: [] });
    expect(decideVerdict(a('ana@example.com'), { kind: 'implicit_mx' }, null).verdict).toBe('valid');
  });
  it('invalid: NXDOMAIN, null MX, no mail host, syntax, disposable, earlier hard bounce or complaint', () => {
    expect(codes(decideVerdict(a('ana@nowhere.example'), { kind: 'nxdomain' }, null))).toEqual(['no_such_domain']);
    expect(decideVerdict(a('ana@example.com'), { kind: 'null_mx' }, null)).toMatchObject({ verdict: 'invalid', reasons: [{ code: 'null_mx' }] });
    expect(decideVerdict(a('ana@example.com'), { kind: 'no_mail_host' }, null).verdict).toBe('invalid');
    expect(decideVerdict(a('ana@@example.com'), null, null)).toMatchObject({ verdict: 'invalid', reasons: [{ code: 'syntax', message: expect.stringContaining("more than one '@'") }] });
    expect(decideVerdict(a('ana@mailinator.com'), null, null)).toMatchObject({ verdict: 'invalid', reasons: [{ code: 'disposable' }] });
    expect(decideVerdict(a('ana@example.com'), { kind: 'mx' }, 'hard_bounce')).toMatchObject({ verdict: 'invalid', reasons: [{ code: 'hard_bounce' }] });
    expect(decideVerdict(a('ana@example.com'), { kind: 'mx' }, 'complaint').verdict).toBe('invalid');
  });
  it('risky: a role account, or a domain that could not be checked (never invalid for a timeout)', () => {
    expect(decideVerdict(a('Sales+EU@example.com'), { kind: 'mx' }, null)).toMatchObject({ verdict: 'risky', reasons: [{ code: 'role_account' }] });
    const t = decideVerdict(a('ana@example.com'), { kind: 'unknown', error: 'ETIMEOUT: no answer within 200 ms' }, null);
    expect(t).toEqual({ verdict: 'risky', reasons: [{ code: 'domain_unchecked', message: expect.stringContaining('ETIMEOUT') }] });
  });
  it('lists every reason, invalid ones first', () => {
    expect(codes(decideVerdict(a('info@example.com'), { kind: 'null_mx' }, null))).toEqual(['null_mx', 'role_account']);
  });
  it('asks DNS only when the answer could matter', () => {
    expect(needsDns(a('ana@example.com'), null)).toBe(true);
    expect(needsDns(a('ana@example.com'), 'hard_bounce')).toBe(false);
    expect(needsDns(a('ana@sub.mailinator.com'), null)).toBe(false);
    expect(needsDns(a('not an address'), null)).toBe(false);
  });
});

describe('disposable domains and role accounts', () => {
  it('reads the list shipped in the pinned package, parents included', () => {
    expect(disposableListSize()).toBeGreaterThan(10_000);
    expect(isDisposableDomain('mailinator.com')).toBe(true);
    expect(isDisposableDomain('x.y.mailinator.com')).toBe(true);
    expect(isDisposableDomain('example.com')).toBe(false);
    expect(isDisposableDomain('gmail.com')).toBe(false);
    expect(isDisposableDomain('com')).toBe(false);
  });
  it('knows the RFC 2142 names and shared inboxes, not people', () => {
    for (const r of ['postmaster', 'ABUSE', 'info', 'sales+emea', 'noreply', 'no-reply', 'support']) expect(isRoleAccount(r)).toBe(true);
    for (const p of ['ana', 'john.smith', 'infodesk.ana', 'salesforce']) expect(isRoleAccount(p)).toBe(false);
  });
});

// Labels of letters from several scripts, digits and inner hyphens: what IDNA turns into xn-- A-labels.
const unicodeLabel = fc
  .array(fc.constantFrom(...'abcxyz019éüßçñøåłžёжыдあいう中文한국ελ'.split('')), { minLength: 1, maxLength: 12 })
  .map((cs) => cs.join(''));
const asciiLocal = fc.stringMatching(/^[a-z0-9!#$%&'*+/=?^_`{|}~-]{1,20}(\.[a-z0-9_-]{1,10}){0,2}$/);

describe('syntax with international domains (property)', () => {
  it('any address of a valid local part and Unicode labels parses, and DNS is asked its IDNA ASCII form', () => {
    fc.assert(
      fc.property(asciiLocal, fc.array(unicodeLabel, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'de', 'jp', 'xn--p1ai'), (local, labels, tld) => {
        const domain = [...labels, tld].join('.');
        const ascii = domainToASCII(domain);
        fc.pre(ascii !== '' && ascii.length <= 253 && ascii.split('.').every((l) => l.length <= 63));
        const p = parseAddress(`${local}@${domain}`);
        expect(p.ok).toBe(true);
        if (!p.ok) return;
        expect(p.asciiDomain).toBe(ascii);
        expect(/^[a-z0-9.-]+$/.test(p.asciiDomain)).toBe(true);
        // The ASCII spelling of the same address is the same address (one norm, one suppression).
        const again = parseAddress(`${local}@${ascii}`);
        expect(again.ok && again.norm).toBe(p.norm);
      }),
      { numRuns: 500 },
    );
  });

  it('any string: never throws, and an address the syntax check refuses is invalid for its syntax alone', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 80 }), fc.constant('a@b'), fc.constant('"x y"@example.com')), (s) => {
        const r = decideVerdict(parseAddress(s), null, null);
        if (!checkEmail(s).ok) expect(r).toMatchObject({ verdict: 'invalid', reasons: [{ code: 'syntax' }] });
        else expect(r.reasons.every((x) => x.code !== 'syntax')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('answers a hostile 1 MB string in bounded time', () => {
    const t = performance.now();
    expect(parseAddress(`${'a.'.repeat(500_000)}@${'b-'.repeat(1000)}.com`).ok).toBe(false);
    expect(performance.now() - t).toBeLessThan(200);
  });
});
