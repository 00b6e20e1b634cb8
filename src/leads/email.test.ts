import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEmail, normalizeEmail } from './email.ts';

describe('checkEmail: accepts real addresses and normalises them', () => {
  it.each([
    ['jane@example.com', 'jane@example.com', 'jane@example.com'],
    ['  Jane.Doe@Example.COM ', 'Jane.Doe@example.com', 'jane.doe@example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk'],
    ["o'brien@example.ie", "o'brien@example.ie", "o'brien@example.ie"],
    ['x_y-z@my-host.example', 'x_y-z@my-host.example', 'x_y-z@my-host.example'],
    ['a@b.co', 'a@b.co', 'a@b.co'],
    ['\u200bjane@example.com\ufeff', 'jane@example.com', 'jane@example.com'],
    ['user@bücher.de', 'user@bücher.de', 'user@bücher.de'],
    ['user@xn--bcher-kva.de', 'user@bücher.de', 'user@bücher.de'],
    ['user@BÜCHER.de', 'user@bücher.de', 'user@bücher.de'],
    ['user@example.xn--p1ai', 'user@example.рф', 'user@example.рф'],
  ])('%j', (input, email, norm) => {
    expect(checkEmail(input)).toEqual({ ok: true, email, norm });
  });

  it('keeps the local part as written (RFC 5321: it may be case-sensitive) but keys on the lowercased whole', () => {
    const r = checkEmail('John.SMITH@Example.com');
    expect(r).toEqual({ ok: true, email: 'John.SMITH@example.com', norm: 'john.smith@example.com' });
  });
});

describe('checkEmail: refuses with a reason', () => {
  it.each([
    ['', /empty/],
    ['jane', /no '@'/],
    ['@example.com', /nothing before/],
    ['jane@', /nothing after/],
    ['jane@example', /no dot/],
    ['jane@localhost', /no dot/],
    ['jane doe@example.com', /spaces/],
    ['jane@exa mple.com', /spaces/],
    ['a@example.com, b@example.com', /several addresses/],
    ['a@example.com;b@example.com', /several addresses/],
    ['a@b@example.com', /more than one '@'/],
    ['.jane@example.com', /dot/],
    ['jane.@example.com', /dot/],
    ['ja..ne@example.com', /dot/],
    ['"jane doe"@example.com', /spaces|quoted/],
    ['"jane"@example.com', /quoted/],
    ['jäne@example.com', /non-ASCII/],
    ['ja(ne)@example.com', /character not allowed/],
    ['jane@[192.0.2.1]', /address literals/],
    ['jane@1.2.3.4', /top-level/],
    ['jane@example.c', /top-level/],
    ['jane@-example.com', /label/],
    ['jane@example-.com', /label/],
    ['jane@exa_mple.com', /label/],
    ['jane@example..com', /empty label/],
    ['jane@.example.com', /empty label/],
    ['jane@example.com.', /ends with a dot/],
    ['Jane <jane@example.com>', /spaces|bare address/],
    ['<jane@example.com>', /bare address/],
    ['mailto:jane@example.com', /bare address/],
    [`${'a'.repeat(65)}@example.com`, /64/],
    [`jane@${'a'.repeat(64)}.com`, /longer than 63/],
    [`${'a'.repeat(64)}@${`${'b'.repeat(63)}.`.repeat(3)}com`, /254/],
    ['x'.repeat(100_000), /longer than 254/],
  ])('%j', (input, why) => {
    const r = checkEmail(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(why);
  });

  it('accepts exactly the RFC 5321 limits: 64-octet local part, 254-octet address', () => {
    const local = 'a'.repeat(64);
    const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`; // 254 - 64 - 1 = 189 characters
    const addr = `${local}@${domain}`;
    expect(addr.length).toBe(254);
    expect(checkEmail(addr).ok).toBe(true);
    const tooLong = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;
    expect(tooLong.length).toBe(255);
    expect(checkEmail(tooLong).ok).toBe(false);
  });
});

describe('checkEmail properties', () => {
  it('never throws, and what it accepts is normal, bounded and stable', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.emailAddress(), fc.string({ unit: 'binary' })), (s) => {
        const r = checkEmail(s);
        if (!r.ok) return;
        expect(r.norm).toBe(r.email.toLowerCase());
        expect(r.email).toBe(r.email.trim());
        expect(r.email).not.toMatch(/\s/);
        // Normalising again changes nothing.
        expect(checkEmail(r.email)).toEqual(r);
        expect(checkEmail(r.norm)).toEqual({ ok: true, email: r.norm, norm: r.norm });
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts every address fast-check generates within the RFC 5321 lengths (dot-atom local part, host names)', () => {
    fc.assert(
      fc.property(fc.emailAddress(), (addr) => {
        const [local, domain] = [addr.slice(0, addr.lastIndexOf('@')), addr.slice(addr.lastIndexOf('@') + 1)];
        fc.pre(addr.length <= 254 && local.length <= 64);
        // Single-label or numeric-TLD hosts are refused on purpose (see email.ts).
        fc.pre(domain.includes('.') && /^[a-z]{2,}$|^xn--/i.test(domain.split('.').pop()!));
        expect(checkEmail(addr)).toMatchObject({ ok: true, norm: addr.toLowerCase() });
      }),
      { numRuns: 1000 },
    );
  });

  it('keys on neither case nor surrounding blanks', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.constantFrom('', ' ', '\t', '  \u200b'), fc.boolean(), (addr, pad, upper) => {
        const a = checkEmail(addr);
        const b = checkEmail(pad + (upper ? addr.toUpperCase() : addr) + pad);
        expect(b.ok).toBe(a.ok);
        if (a.ok && b.ok) expect(b.norm).toBe(a.norm);
      }),
      { numRuns: 1000 },
    );
  });

  it('normalizeEmail is checkEmail().norm or null', () => {
    expect(normalizeEmail(' A@B.CO ')).toBe('a@b.co');
    expect(normalizeEmail('nope')).toBeNull();
  });
});
