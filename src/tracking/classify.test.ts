import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAppleAddress, isMicrosoftEopAddress, parseIp } from './agents.ts';
import { classifyClick, classifyOpen, type ClickEvidence, type RequestEvidence } from './classify.ts';

// User agents as these fetchers send them.
const UA = {
  chrome: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  appleMailNoMpp: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)',
  gmail: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
  yahoo: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
  mpp: 'Mozilla/5.0',
  outlook: 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17029; Pro)',
  mimecast: 'Mozilla/5.0 (compatible; Mimecast URL Protect)',
  barracuda: 'Barracuda Sentinel (EE)',
  officeDiscovery: 'Microsoft Office Existence Discovery',
  curl: 'curl/8.5.0',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  cubotPhone: 'Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
};
const MIN = 60_000;

function open(over: Partial<RequestEvidence>): RequestEvidence {
  return { method: 'GET', userAgent: UA.chrome, ip: '203.0.113.7', delayMs: 30 * MIN, ...over };
}
function click(over: Partial<ClickEvidence>): ClickEvidence {
  return { method: 'GET', userAgent: UA.chrome, ip: '203.0.113.7', delayMs: 30 * MIN, linkIndex: 0, recentOtherLinks: [], ...over };
}

describe('classifyOpen', () => {
  it.each([
    ['a browser half an hour after the send', open({}), 'human', 'browser_ua'],
    ['Apple Mail without privacy protection', open({ userAgent: UA.appleMailNoMpp }), 'human', 'browser_ua'],
    ['Outlook desktop', open({ userAgent: UA.outlook }), 'human', 'mail_client'],
    ['Gmail proxy: fetched when opened', open({ userAgent: UA.gmail, ip: '66.249.84.1' }), 'human', 'gmail_proxy:fetched on open'],
    ['Gmail proxy a second after the send: a prefetch', open({ userAgent: UA.gmail, delayMs: 1000 }), 'proxy', 'gmail_proxy:prefetch 1.0s after send'],
    ['Yahoo proxy', open({ userAgent: UA.yahoo }), 'human', 'yahoo_proxy:fetched on open'],
    ['Apple MPP: bare UA from Apple', open({ userAgent: UA.mpp, ip: '17.58.101.12', delayMs: 2000 }), 'proxy', 'apple_mpp:ua+ip'],
    ['Apple MPP over IPv6', open({ userAgent: UA.mpp, ip: '2620:149:a41:100::1' }), 'proxy', 'apple_mpp:ua+ip'],
    ['Apple MPP, IPv4-mapped address', open({ userAgent: UA.mpp, ip: '::ffff:17.1.2.3' }), 'proxy', 'apple_mpp:ua+ip'],
    ['bare UA elsewhere', open({ userAgent: UA.mpp }), 'proxy', 'apple_mpp:ua'],
    ['HEAD request', open({ method: 'HEAD' }), 'scanner', 'head_request'],
    ['Mimecast', open({ userAgent: UA.mimecast }), 'scanner', 'scanner_ua:mimecast'],
    ['Barracuda', open({ userAgent: UA.barracuda }), 'scanner', 'scanner_ua:barracuda'],
    ['curl', open({ userAgent: UA.curl }), 'scanner', 'bot_ua:http_library'],
    ['no user agent', open({ userAgent: null }), 'scanner', 'no_user_agent'],
    ['Exchange Online Protection address', open({ ip: '40.107.22.5' }), 'scanner', 'microsoft_eop_ip'],
    ['a browser two seconds after the send', open({ delayMs: 2000 }), 'scanner', 'fast_open:2.0s after send'],
    ['a CUBOT phone is not a bot', open({ userAgent: UA.cubotPhone }), 'human', 'browser_ua'],
    ['something unheard of', open({ userAgent: 'Frobnicator 3000' }), 'unknown', 'unrecognised_ua'],
  ])('%s', (_name, ev, verdict, reason) => {
    const c = classifyOpen(ev);
    expect(c.verdict).toBe(verdict);
    expect(c.reason).toBe(reason);
  });

  it('ignores a negative delay (clock skew) rather than calling it a prefetch', () => {
    expect(classifyOpen(open({ delayMs: -5000 })).verdict).toBe('human');
    expect(classifyOpen(open({ delayMs: null })).verdict).toBe('human');
  });
});

describe('classifyClick', () => {
  it.each([
    ['a browser half an hour after the send', click({}), 'human', 'browser_ua'],
    ['a browser 40 s after the send: human, less sure', click({ delayMs: 40_000 }), 'human', 'browser_ua:within a minute of send'],
    ['HEAD request (link checker)', click({ method: 'HEAD' }), 'scanner', 'head_request'],
    ['Office link probe', click({ userAgent: UA.officeDiscovery }), 'scanner', 'scanner_ua:microsoft_office_discovery'],
    ['Googlebot', click({ userAgent: UA.googlebot }), 'scanner', 'bot_ua:crawler'],
    ['a click 3 s after the send', click({ delayMs: 3000 }), 'scanner', 'fast_click:3.0s after send'],
    ['every link at once', click({ linkIndex: 2, recentOtherLinks: [{ linkIndex: 0, agoMs: 800 }, { linkIndex: 1, agoMs: 400 }] }), 'scanner', 'link_burst:3 links in 5.0s'],
    ['two links within a second', click({ linkIndex: 1, recentOtherLinks: [{ linkIndex: 0, agoMs: 300 }] }), 'scanner', 'link_burst:2 links in 1.0s'],
    ['Apple link preview', click({ userAgent: UA.mpp, ip: '17.2.3.4' }), 'proxy', 'apple_link_preview:ua+ip'],
    ['Exchange Online Protection', click({ ip: '52.101.4.4' }), 'scanner', 'microsoft_eop_ip'],
    ['no user agent', click({ userAgent: '' }), 'scanner', 'no_user_agent'],
  ])('%s', (_name, ev, verdict, reason) => {
    const c = classifyClick(ev);
    expect(c.verdict).toBe(verdict);
    expect(c.reason).toBe(reason);
  });

  it('a person clicking the same link twice, or two links a minute apart, is still a person', () => {
    expect(classifyClick(click({ linkIndex: 0, recentOtherLinks: [{ linkIndex: 0, agoMs: 200 }] })).verdict).toBe('human');
    expect(classifyClick(click({ linkIndex: 1, recentOtherLinks: [{ linkIndex: 0, agoMs: 20_000 }] })).verdict).toBe('human');
  });
});

describe('classifiers on any input', () => {
  it('never throw, and answer a known verdict with a confidence in [0, 1] and a reason', () => {
    const ev = fc.record({
      method: fc.oneof(fc.constantFrom('GET', 'HEAD', 'get', 'POST'), fc.string()),
      userAgent: fc.option(fc.oneof(fc.string(), fc.constantFrom(...Object.values(UA))), { nil: null }),
      ip: fc.option(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), { nil: null }),
      delayMs: fc.option(fc.oneof(fc.integer(), fc.double()), { nil: null }),
      linkIndex: fc.nat(),
      recentOtherLinks: fc.array(fc.record({ linkIndex: fc.nat(5), agoMs: fc.oneof(fc.integer(), fc.double()) }), { maxLength: 8 }),
    });
    fc.assert(
      fc.property(ev, (e) => {
        for (const c of [classifyOpen(e), classifyClick(e)]) {
          expect(['human', 'proxy', 'scanner', 'unknown']).toContain(c.verdict);
          expect(c.confidence).toBeGreaterThanOrEqual(0);
          expect(c.confidence).toBeLessThanOrEqual(1);
          expect(c.reason.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('address blocks', () => {
  // node:net's BlockList is the oracle; agents.ts matches by hand for speed.
  const apple = new BlockList();
  apple.addSubnet('17.0.0.0', 8, 'ipv4');
  apple.addSubnet('2620:149::', 32, 'ipv6');
  apple.addSubnet('2a01:b740::', 32, 'ipv6');
  const eop = new BlockList();
  for (const [n, b] of [['40.92.0.0', 15], ['40.107.0.0', 16], ['52.100.0.0', 14], ['104.47.0.0', 17]] as const) eop.addSubnet(n, b, 'ipv4');
  eop.addSubnet('2a01:111:f400::', 48, 'ipv6');

  it('agree with node:net BlockList on any address', () => {
    const near = fc.oneof(
      fc.tuple(fc.constantFrom(17, 16, 18, 40, 52, 104), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.')),
      fc.tuple(fc.constantFrom('2620:149', '2620:148', '2a01:b740', '2a01:111:f400', '2a01:111:f401'), fc.array(fc.nat(0xffff), { maxLength: 3 })).map(([p, r]) => `${p}::${r.map((x) => x.toString(16)).join(':')}`),
    );
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), near), (ip) => {
        const fam = ip.includes(':') ? 'ipv6' : 'ipv4';
        expect(isAppleAddress(ip), ip).toBe(apple.check(ip, fam));
        expect(isMicrosoftEopAddress(ip), ip).toBe(eop.check(ip, fam));
      }),
      { numRuns: 2000 },
    );
  });

  it('parses what is an address and nothing else', () => {
    expect(parseIp('::ffff:17.1.2.3')).toEqual([0x1101, 0x0203]);
    expect(parseIp('2620:149::1')).toEqual([0x2620, 0x149, 0, 0, 0, 0, 0, 1]);
    for (const bad of ['', '17.1.2', '256.1.1.1', '1::2::3', ':::', '1:2:3:4:5:6:7:8:9', 'g::1', '12345::', 'localhost']) expect(parseIp(bad), bad).toBeNull();
  });
});
