import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seal } from '../../common/sealed-token.ts';
import { deriveKey } from '../../common/secrets.ts';
import { decodeEntities, escapeHtml } from '../../common/html.ts';
import { insertPixel, normaliseBaseUrl, openTrackingToken, rewriteLinks, trackingKey, trackingLinks } from './tracking.ts';
import { parseUnsubscribeMailto, recogniseUnsubscribeRequest, unsubscribeMailto } from './unsubscribe.ts';

const key = randomBytes(32);
const links = trackingLinks({ key, baseUrl: 'https://links.acme.test/track/', workspaceId: 'ws-1', sendRequestId: 'sr-1' });
const tokenOf = (url: string) => url.replace(/\.gif$/, '').split('/').pop()!;

describe('tracking links', () => {
  it('uses the agreed paths and payloads, on the given base (custom domains keep their path)', () => {
    expect(links.base).toBe('https://links.acme.test/track');
    expect(links.unsubscribeUrl).toBe(`https://links.acme.test/track/t/u/${links.unsubscribeToken}`);
    expect(openTrackingToken(key, links.unsubscribeToken)).toEqual({ k: 'u', ws: 'ws-1', sr: 'sr-1' });
    const pixel = links.pixelUrl();
    expect(pixel).toMatch(/^https:\/\/links\.acme\.test\/track\/t\/o\/[A-Za-z0-9_-]+\.gif$/);
    expect(openTrackingToken(key, tokenOf(pixel))).toEqual({ k: 'o', ws: 'ws-1', sr: 'sr-1' });
    const click = links.clickUrl('https://acme.test/a?b=c#d', 3)!;
    expect(click).toMatch(/^https:\/\/links\.acme\.test\/track\/t\/c\/[A-Za-z0-9_-]+$/);
    expect(click).not.toContain('acme.test/a');
    expect(openTrackingToken(key, tokenOf(click))).toEqual({ k: 'c', ws: 'ws-1', sr: 'sr-1', u: 'https://acme.test/a?b=c#d', i: 3 });
  });

  it('derives its key for the "tracking" purpose, and refuses tokens of another key or shape', () => {
    const master = randomBytes(32);
    expect(trackingKey(master).equals(deriveKey(master, 'tracking'))).toBe(true);
    expect(openTrackingToken(randomBytes(32), links.unsubscribeToken)).toBeNull();
    expect(openTrackingToken(key, seal(key, { k: 'x', ws: 'a', sr: 'b' }))).toBeNull();
    expect(openTrackingToken(key, seal(key, { k: 'c', ws: 'a', sr: 'b', u: 'x' }))).toBeNull();
    expect(openTrackingToken(key, seal(key, { k: 'u', ws: 1, sr: 'b' }))).toBeNull();
    expect(openTrackingToken(key, 'not a token')).toBeNull();
  });

  it('accepts only https bases (http on loopback for development), without query or credentials', () => {
    expect(normaliseBaseUrl('http://localhost:8080/')).toBe('http://localhost:8080');
    for (const bad of ['http://links.acme.test', 'ftp://x.test', 'links.acme.test', 'https://x.test/?a=1', 'https://u:p@x.test', '']) {
      expect(() => normaliseBaseUrl(bad), bad).toThrow();
      try {
        normaliseBaseUrl(bad);
      } catch (e) {
        expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
      }
    }
  });
});

describe('rewriteLinks', () => {
  it('rewrites http(s) hrefs in any quoting and case, decoding entities first, and counts them', () => {
    const html = `<A HREF="https://a.test/x?y=1&amp;z=2">1</A><a data-x='>' href='https://b.test/'>2</a><a href=http://c.test/p>3</a><a id=x\nhref = "https://d.test/&#x41;">4</a>`;
    const r = rewriteLinks(html, links);
    expect(r.tracked.map((t) => t.url)).toEqual(['https://a.test/x?y=1&z=2', 'https://b.test/', 'http://c.test/p', 'https://d.test/A']);
    const hrefs = [...r.html.matchAll(/href\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
    expect(hrefs).toHaveLength(4);
    hrefs.forEach((h, i) => expect(openTrackingToken(key, tokenOf(h))).toMatchObject({ k: 'c', i, u: r.tracked[i]!.url }));
    expect(r.html).toContain(`data-x='>'`);
    expect(r.html).toContain('>4</a>');
  });

  it('leaves a link too long for a click token as written, says why, and keeps counting the others from 0', () => {
    const long = `https://acme.test/l?q=${'a'.repeat(4000)}`;
    const html = `<a href="https://acme.test/1">1</a><a href="${long}">long</a><a href="https://acme.test/2">2</a>`;
    const r = rewriteLinks(html, links);
    expect(r.tracked).toEqual([
      { index: 0, url: 'https://acme.test/1' },
      { index: 1, url: 'https://acme.test/2' },
    ]);
    expect(r.untracked).toEqual([{ url: long, reason: `longer than a click token can carry (${long.length} characters)` }]);
    expect(r.html).toContain(`<a href="${long}">long</a>`);
    const hrefs = [...r.html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
    expect(openTrackingToken(key, tokenOf(hrefs[2]!))).toMatchObject({ u: 'https://acme.test/2', i: 1 });
  });

  it('leaves mailto:, tel:, anchors, relative links, the unsubscribe link and tracking links alone', () => {
    const html = [
      '<a href="mailto:sam@acme.test?subject=hi">m</a>',
      '<a href="tel:+15551234">t</a>',
      '<a href="#x">a</a>',
      '<a href="/relative">r</a>',
      `<a href="${escapeHtml(links.unsubscribeUrl)}">u</a>`,
      `<a href="${links.pixelUrl()}">p</a>`,
      '<a name="nohref">n</a>',
      '<link href="https://fonts.test/css" rel="stylesheet">',
    ].join('');
    const r = rewriteLinks(html, links);
    expect(r.tracked).toEqual([]);
    expect(r.html).toBe(html);
  });

  it('ignores href-like text inside other attribute values, and stops at a tag that never closes', () => {
    const r = rewriteLinks(`<a title=" href='https://no.test/'" href="https://yes.test/">x</a><abbr href="https://no2.test/">y</abbr><a href="https://late.test/`, links);
    expect(r.tracked.map((t) => t.url)).toEqual(['https://yes.test/']);
    expect(r.html).toContain(`title=" href='https://no.test/'"`);
    expect(r.html).toMatch(/<a href="https:\/\/late\.test\/$/);
  });

  it('stays linear on hostile markup (100 KB of unclosed tags and quotes)', () => {
    for (const s of ['<a href="x'.repeat(10_000), '<a '.repeat(33_000), "<a '".repeat(25_000), '<a x="'.repeat(16_000), '<a href=https://x.test/>'.repeat(4_000)]) {
      const started = performance.now();
      rewriteLinks(s, links);
      // The quadratic regex this replaced took seconds per case; the bound leaves room for a loaded machine.
      expect(performance.now() - started).toBeLessThan(2000);
    }
  });

  it('never breaks the markup it does not touch (property: text without <a is unchanged)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        fc.pre(!/<a\b/i.test(s));
        expect(rewriteLinks(s, links).html).toBe(s);
      }),
    );
  });
});

describe('insertPixel', () => {
  it('goes before the last </body>, or at the end without one', () => {
    const url = links.pixelUrl();
    expect(insertPixel('<html><body><p>x</p></BODY ></html>', url)).toMatch(/<p>x<\/p><img src="[^"]+\.gif" width="1" height="1" alt="" [^>]*\/><\/BODY ><\/html>$/);
    expect(insertPixel('<p>x</p>', url)).toMatch(/^<p>x<\/p><img /);
  });
});

describe('html helpers', () => {
  it('escapes and decodes', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(decodeEntities('a&amp;b&amp c&lt;&#39;&#x1F600;&copy=1&bogus;&#0;')).toBe("a&b& c<'😀&copy=1&bogus;\ufffd");
  });
});

describe('unsubscribe mailto', () => {
  it('goes to the mailbox itself with the token in the subject, encoded per RFC 6068', () => {
    expect(unsubscribeMailto('sam@acme.test', 'TOKEN')).toBe('mailto:sam@acme.test?subject=unsubscribe%20TOKEN');
    expect(unsubscribeMailto('sam+x%y@acme.test', 'T')).toBe('mailto:sam+x%25y@acme.test?subject=unsubscribe%20T');
    const t = links.unsubscribeToken;
    expect(parseUnsubscribeMailto(unsubscribeMailto('sam+x%y@acme.test', t))).toEqual({ to: 'sam+x%y@acme.test', token: t });
  });

  it('parses only our own mailto form', () => {
    expect(parseUnsubscribeMailto('mailto:sam@acme.test')).toBeNull();
    expect(parseUnsubscribeMailto('mailto:sam@acme.test?subject=hello')).toBeNull();
    expect(parseUnsubscribeMailto('https://acme.test/?subject=unsubscribe%20x')).toBeNull();
    expect(parseUnsubscribeMailto('mailto:%E0%A4%A@x.test?subject=unsubscribe%20x')).toBeNull();
  });

  it('recognises a request only when it carries a valid unsubscribe token of this key', () => {
    const t = links.unsubscribeToken;
    expect(recogniseUnsubscribeRequest(key, { subject: `unsubscribe ${t}` })).toEqual({
      verdict: 'unsubscribe',
      confidence: 1,
      reason: 'List-Unsubscribe mailto with a valid unsubscribe token for send request sr-1',
      workspaceId: 'ws-1',
      sendRequestId: 'sr-1',
    });
    expect(recogniseUnsubscribeRequest(key, { subject: 'Re: hi', text: `Unsubscribe: ${t}\n-- sent from my phone` })).toMatchObject({ sendRequestId: 'sr-1' });
    expect(recogniseUnsubscribeRequest(key, { subject: 'please unsubscribe me', text: 'Unsubscribe me from this list' })).toBeNull();
    expect(recogniseUnsubscribeRequest(randomBytes(32), { subject: `unsubscribe ${t}` })).toBeNull();
    // A click token is not an unsubscribe token.
    expect(recogniseUnsubscribeRequest(key, { subject: `unsubscribe ${tokenOf(links.clickUrl('https://x.test', 0)!)}` })).toBeNull();
    expect(recogniseUnsubscribeRequest(key, { subject: `unsubscribe ${t.slice(0, -2)}AA` })).toBeNull();
    expect(recogniseUnsubscribeRequest(key, {})).toBeNull();
  });
});
