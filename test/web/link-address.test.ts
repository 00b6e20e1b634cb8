import { describe, expect, it } from 'vitest';
import { linkAddress } from '../../web/src/screens/link-address.ts';

/**
 * The email editor's link dialog (web/src/screens/link-address.ts): http(s) and mailto, the
 * schemes the server's sanitiser keeps; anything else refused in plain words, before the rep saves.
 */
describe('linkAddress', () => {
  it('takes web and email addresses as written', () => {
    expect(linkAddress('https://example.com/guide')).toEqual({ ok: true, href: 'https://example.com/guide' });
    expect(linkAddress('  http://example.com:8080/a?b=c#d ')).toEqual({ ok: true, href: 'http://example.com:8080/a?b=c#d' });
    expect(linkAddress('HTTPS://Example.com')).toEqual({ ok: true, href: 'HTTPS://Example.com' });
    expect(linkAddress('mailto:pat@example.com?subject=Hi')).toEqual({ ok: true, href: 'mailto:pat@example.com?subject=Hi' });
    // A variable inside an address is the renderer's to fill in.
    expect(linkAddress('https://example.com/?ref={{first_name}}')).toEqual({ ok: true, href: 'https://example.com/?ref={{first_name}}' });
  });

  it('reads a bare domain as https and a bare email address as mailto', () => {
    expect(linkAddress('example.com/pricing')).toEqual({ ok: true, href: 'https://example.com/pricing' });
    expect(linkAddress('www.example.com')).toEqual({ ok: true, href: 'https://www.example.com' });
    expect(linkAddress('example.com:8443/x')).toEqual({ ok: true, href: 'https://example.com:8443/x' });
    expect(linkAddress('//example.com/x')).toEqual({ ok: true, href: 'https://example.com/x' });
    expect(linkAddress('pat@example.com')).toEqual({ ok: true, href: 'mailto:pat@example.com' });
  });

  it('refuses javascript: and every other scheme, in words that say what is allowed', () => {
    for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:void(0)', 'data:text/html,<b>x</b>', 'vbscript:x', 'file:///etc/passwd', 'ftp://example.com', 'tel:+4412345']) {
      const r = linkAddress(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.problem).toMatch(/^"[a-z]+:" links are not allowed in an email: use a web address \(https:\/\/ or http:\/\/\) or an email address \(mailto:\)\.$/);
    }
    expect(linkAddress('javascript:alert(1)')).toEqual({ ok: false, problem: '"javascript:" links are not allowed in an email: use a web address (https:// or http://) or an email address (mailto:).' });
  });

  it('refuses what is not an address, saying why', () => {
    expect(linkAddress('')).toEqual({ ok: false, problem: 'Type the address the link goes to, e.g. https://example.com.' });
    expect(linkAddress('   ')).toMatchObject({ ok: false });
    expect(linkAddress('https://exa mple.com')).toEqual({ ok: false, problem: 'A link address has no spaces.' });
    expect(linkAddress('pricing')).toEqual({ ok: false, problem: '"pricing" is not a full web address: it needs a domain, e.g. example.com.' });
    expect(linkAddress('https://')).toEqual({ ok: false, problem: '"https://" is not a web or email address.' });
    expect(linkAddress('mailto:')).toEqual({ ok: false, problem: '"mailto:" has no email address after mailto: (e.g. mailto:pat@example.com).' });
    expect(linkAddress('mailto:nobody')).toMatchObject({ ok: false });
    expect(linkAddress('https://exa<mple.com')).toMatchObject({ ok: false });
  });
});
