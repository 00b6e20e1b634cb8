import { describe, expect, it } from 'vitest';
import { trackingKey, trackingLinks } from '../sending/compose/tracking.ts';
import { checkTrackingDomain, trackingBaseUrl } from './links.ts';
import { openToken } from './tokens.ts';
import { MAX_TOKEN_LENGTH } from '../common/sealed-token.ts';

const key = trackingKey(Buffer.alloc(32, 1));
const ids = { workspaceId: '019e830e-1a00-7972-9500-6932fdbe02dd', sendRequestId: '019e830e-1a00-7e52-ac49-e64c4a833022' };

describe('trackingBaseUrl', () => {
  it("uses the workspace's tracking domain, else the public URL", () => {
    expect(trackingBaseUrl({ settings: { trackingDomain: 'Links.Acme.com.' } }, 'https://cadenza.example')).toBe('https://links.acme.com');
    expect(trackingBaseUrl({ settings: {} }, 'https://cadenza.example/')).toBe('https://cadenza.example');
    expect(trackingBaseUrl({ settings: { trackingDomain: '' } }, 'https://cadenza.example/base/')).toBe('https://cadenza.example/base');
    expect(trackingBaseUrl({}, 'http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });

  it('refuses a malformed domain or public URL with a clear error, rather than pointing links elsewhere', () => {
    for (const bad of ['https://links.acme.com', 'links.acme.com/path', 'localhost', '10.0.0.1', 'a..b.com', '-x.acme.com', 42]) {
      expect(() => trackingBaseUrl({ settings: { trackingDomain: bad } }, 'https://cadenza.example'), String(bad)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
    expect(() => trackingBaseUrl({}, 'not a url')).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => trackingBaseUrl({}, 'ftp://cadenza.example')).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('checkTrackingDomain normalises and explains', () => {
    expect(checkTrackingDomain(' T.Example.ORG ')).toEqual({ ok: true, domain: 't.example.org' });
    expect(checkTrackingDomain('xn--bcher-kva.example')).toEqual({ ok: true, domain: 'xn--bcher-kva.example' });
    expect(checkTrackingDomain('links.acme.com:8443')).toMatchObject({ ok: false, message: expect.stringContaining('without scheme, port or path') });
    expect(checkTrackingDomain('x'.repeat(300) + '.com')).toMatchObject({ ok: false });
  });
});

describe('links built by the composer', () => {
  // The contract with sending/compose/tracking.ts: what it seals, openToken opens, and nothing else.
  it('open with the agreed payloads, each only as its own kind, and carry nothing in clear', () => {
    const l = trackingLinks({ key, baseUrl: 'https://links.acme.com', ...ids });
    const dest = 'https://www.example.com/secret-offer?x=1';
    const click = l.clickUrl(dest, 3)!;
    expect(click).toMatch(/^https:\/\/links\.acme\.com\/t\/c\/[A-Za-z0-9_-]+$/);
    expect(click).not.toContain('secret-offer');
    const tok = (url: string) => url.split('/').pop()!.replace(/\.gif$/, '');
    expect(openToken(key, tok(click), 'c')).toEqual({ k: 'c', ws: ids.workspaceId, sr: ids.sendRequestId, u: dest, i: 3 });
    expect(l.pixelUrl()).toMatch(/\/t\/o\/[A-Za-z0-9_-]+\.gif$/);
    expect(openToken(key, tok(l.pixelUrl()), 'o')).toEqual({ k: 'o', ws: ids.workspaceId, sr: ids.sendRequestId });
    expect(openToken(key, tok(l.unsubscribeUrl), 'u')).toEqual({ k: 'u', ws: ids.workspaceId, sr: ids.sendRequestId });
    expect(openToken(key, tok(l.unsubscribeUrl), 'o')).toBeNull();
    expect(openToken(key, tok(l.pixelUrl()), 'c')).toBeNull();
    expect(openToken(trackingKey(Buffer.alloc(32, 2)), tok(click), 'c')).toBeNull();
  });

  it('refuse to follow what is not http or https, and give the destination back header-safe', () => {
    const l = trackingLinks({ key, baseUrl: 'https://links.acme.com', ...ids });
    const tok = (url: string) => url.split('/').pop()!;
    for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'mailto:x@y.com', 'not a url']) {
      expect(openToken(key, tok(l.clickUrl(bad, 0)!), 'c'), bad).toBeNull();
    }
    expect(openToken(key, tok(l.clickUrl('https://b\u00fccher.example/a b\n?q=\u00e9', 0)!), 'c')?.u).toBe('https://xn--bcher-kva.example/a%20b?q=%C3%A9');
  });

  it('track a long destination up to what a token carries, and give up (null) beyond, never a broken link', () => {
    const l = trackingLinks({ key, baseUrl: 'https://links.acme.com', ...ids });
    const tok = (url: string) => url.split('/').pop()!;
    const long = (n: number) => `https://www.example.com/landing?utm=${'x'.repeat(n - 36)}`;
    // Every length from short to just past the limit: either a link the redirect opens to the same
    // destination, or null; and the boundary is where the token limit says.
    let last = 0;
    for (let n = 2800; n <= 3100; n += 7) {
      const click = l.clickUrl(long(n), 9);
      if (click === null) continue;
      last = n;
      expect(tok(click).length).toBeLessThanOrEqual(MAX_TOKEN_LENGTH);
      expect(openToken(key, tok(click), 'c')?.u).toBe(long(n));
    }
    expect(last).toBeGreaterThan(2850);
    expect(last).toBeLessThan(3100);
    expect(l.clickUrl(long(last + 7), 9)).toBeNull();
    expect(l.clickUrl(long(20_000), 9)).toBeNull();
  });
});
