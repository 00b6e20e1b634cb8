import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { blocklistQueryName, parseZones, readBlocklistAnswer, NO_BLOCKLISTS } from './blocklist.ts';
import { dnsResolver, type DomainResolver } from './check.ts';
import { checkDomain, type DomainCheck, type DomainTarget } from './domain-health.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';

const NOW = Date.UTC(2026, 5, 1);

/** Every record kind of a domain's health against a DNS server on loopback: ok, missing, differs. */
describe('checkDomain against a DNS server on loopback', () => {
  let dns: TestDnsServer;
  let resolver: DomainResolver;
  beforeAll(async () => {
    dns = await startTestDnsServer();
    resolver = dnsResolver({ server: dns.address, timeoutMs: 1000 });
  });
  afterAll(() => dns.close());

  let n = 0;
  let domain = '';
  beforeEach(() => {
    domain = `d${++n}.acme.test`;
  });
  const gmail = (): DomainTarget => ({ purpose: 'sending', domain, providers: ['gmail'], smtpHosts: [] });
  const by = (cs: DomainCheck[], kind: string, name?: string) => cs.find((c) => c.kind === kind && (name === undefined || c.name === name))!;
  /** A Google Workspace domain set up right. */
  const publishGoogle = () => {
    dns.setTxt(domain, ['google-site-verification=abc', 'v=spf1 include:_spf.google.com ~all']);
    dns.setTxt(`google._domainkey.${domain}`, ['v=DKIM1; k=rsa; p=MIIBIjANBgkq']);
    dns.setTxt(`_dmarc.${domain}`, [`v=DMARC1; p=none; rua=mailto:dmarc@${domain}`]);
    dns.setMx(domain, [{ exchange: 'smtp.google.com', priority: 1 }]);
  };

  it('a domain set up right is ok, each check ok', async () => {
    publishGoogle();
    const h = await checkDomain(gmail(), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(h.verdict).toBe('ok');
    expect(h.checks.map((c) => `${c.kind}:${c.status}`)).toEqual(['spf:ok', 'dkim:ok', 'dmarc:ok', 'mx:ok']);
    expect(h.checks.every((c) => c.publish === undefined)).toBe(true);
    expect(by(h.checks, 'mx').published).toEqual(['1 smtp.google.com']);
  });

  it('nothing published: each record missing, with the exact record to publish', async () => {
    const h = await checkDomain(gmail(), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(h.verdict).toBe('broken');
    expect(h.checks.map((c) => `${c.kind}:${c.status}`)).toEqual(['spf:missing', 'dkim:missing', 'dmarc:missing', 'mx:missing']);
    expect(by(h.checks, 'spf').publish).toEqual({ type: 'TXT', name: domain, value: 'v=spf1 include:_spf.google.com ~all' });
    expect(by(h.checks, 'dkim').publish).toMatchObject({ type: 'TXT', name: `google._domainkey.${domain}`, note: expect.stringMatching(/Google Admin console/) });
    expect(by(h.checks, 'dmarc').publish).toEqual({ type: 'TXT', name: `_dmarc.${domain}`, value: `v=DMARC1; p=none; rua=mailto:dmarc@${domain}` });
    expect(by(h.checks, 'mx').publish).toEqual({ type: 'MX', name: domain, value: '1 smtp.google.com' });
  });

  it('each record differs: SPF without the include (merged record given), revoked DKIM, DMARC without rua, null MX', async () => {
    dns.setTxt(domain, ['v=spf1 include:mail.other.test -all']);
    dns.setTxt(`google._domainkey.${domain}`, ['v=DKIM1; k=rsa; p=']);
    dns.setTxt(`_dmarc.${domain}`, ['v=DMARC1; p=none']);
    dns.setMx(domain, [{ exchange: '.', priority: 0 }]);
    const h = await checkDomain(gmail(), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(h.checks.map((c) => `${c.kind}:${c.status}`)).toEqual(['spf:differs', 'dkim:differs', 'dmarc:differs', 'mx:differs']);
    expect(by(h.checks, 'spf').publish!.value).toBe('v=spf1 include:mail.other.test include:_spf.google.com -all');
    expect(by(h.checks, 'dkim').differences).toEqual(['p= is empty: the key is revoked (RFC 6376 §3.6.1)']);
    expect(by(h.checks, 'dmarc').differences[0]).toMatch(/no rua=/);
    expect(by(h.checks, 'dmarc').publish!.value).toBe(`v=DMARC1; p=none; rua=mailto:dmarc@${domain}`);
    expect(by(h.checks, 'mx').differences[0]).toMatch(/null MX \(RFC 7505\)/);
    expect(by(h.checks, 'mx').published).toEqual(['0 .']);
  });

  it('Microsoft: both selectors, each a CNAME to the tenant; SMTP mailboxes: the selector Cadenza signs with', async () => {
    dns.setTxt(domain, ['v=spf1 include:spf.protection.outlook.com ~all']);
    dns.setCname(`selector1._domainkey.${domain}`, `selector1-x._domainkey.t.onmicrosoft.test`);
    dns.setTxt('selector1-x._domainkey.t.onmicrosoft.test', ['v=DKIM1; k=rsa; p=AAAA']);
    const h = await checkDomain({ purpose: 'sending', domain, providers: ['graph', 'smtp_imap'], smtpHosts: [], selector: 's2026' }, resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    const dkim = h.checks.filter((c) => c.kind === 'dkim');
    expect(dkim.map((c) => `${c.name}:${c.status}`)).toEqual([`selector1._domainkey.${domain}:ok`, `selector2._domainkey.${domain}:missing`, `s2026._domainkey.${domain}:missing`]);
    expect(dkim[1]!.publish).toMatchObject({ type: 'CNAME', value: `selector2-${domain.replace(/\./g, '-')}._domainkey.<tenant>.onmicrosoft.com` });
    expect(dkim[2]!.publish!.note).toMatch(/--selector s2026 --generate-key/);
    expect(by(h.checks, 'mx').publish).toEqual({ type: 'MX', name: domain, value: `0 ${domain.replace(/\./g, '-')}.mail.protection.outlook.com` });
  });

  it("SMTP mailboxes with no selector given: DKIM is 'unchecked' (the host's selector cannot be guessed), and the verdict is not broken for it", async () => {
    dns.setTxt(domain, ['v=spf1 include:mail.host.test ~all']);
    dns.setTxt(`_dmarc.${domain}`, [`v=DMARC1; p=none; rua=mailto:dmarc@${domain}`]);
    dns.setMx(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
    dns.setA(`mx.${domain}`, ['127.0.0.7']);
    const h = await checkDomain({ purpose: 'sending', domain, providers: ['smtp_imap'], smtpHosts: [] }, resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    const dkim = h.checks.filter((c) => c.kind === 'dkim');
    expect(dkim).toHaveLength(1);
    expect(dkim[0]).toMatchObject({ status: 'unchecked', name: `<selector>._domainkey.${domain}` });
    expect(dkim[0]!.differences[0]).toMatch(/Settings \(DKIM selector\)/);
    expect(h.checks.filter((c) => c.status !== 'ok' && c.status !== 'unchecked').map((c) => `${c.kind}:${c.status}`)).toEqual([]);
    expect(h.verdict).toBe('ok');
  });

  it('DMARC at reject without reports: the fix adds rua and keeps the policy', async () => {
    dns.setTxt(`_dmarc.${domain}`, ['v=DMARC1; p=reject; pct=100;']);
    const h = await checkDomain(gmail(), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(by(h.checks, 'dmarc').publish).toEqual({ type: 'TXT', name: `_dmarc.${domain}`, value: `v=DMARC1; p=reject; pct=100; rua=mailto:dmarc@${domain}` });
  });

  it('a SERVFAIL is an error and the verdict unknown, never broken', async () => {
    publishGoogle();
    dns.servfail(`_dmarc.${domain}`);
    const h = await checkDomain(gmail(), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(by(h.checks, 'dmarc').status).toBe('error');
    expect(h.verdict).toBe('unknown');
  });

  it('tracking host: CNAME to the public host ok, missing, or pointing elsewhere', async () => {
    const t = (host: string): DomainTarget => ({ purpose: 'tracking', domain: host, cnameTarget: 'app.cadenza.test' });
    dns.setCname(`links.${domain}`, 'app.cadenza.test');
    expect((await checkDomain(t(`links.${domain}`), resolver, { blocklists: NO_BLOCKLISTS, now: NOW })).checks).toEqual([
      { kind: 'tracking', name: `links.${domain}`, status: 'ok', published: ['app.cadenza.test'], differences: [] },
    ]);
    const missing = await checkDomain(t(`go.${domain}`), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(missing.checks[0]).toMatchObject({ status: 'missing', publish: { type: 'CNAME', name: `go.${domain}`, value: 'app.cadenza.test' } });
    dns.setCname(`t.${domain}`, 'old-host.test');
    const differs = await checkDomain(t(`t.${domain}`), resolver, { blocklists: NO_BLOCKLISTS, now: NOW });
    expect(differs.verdict).toBe('broken');
    expect(differs.checks[0]).toMatchObject({ status: 'differs', differences: ['points to old-host.test, not to app.cadenza.test'] });
  });

  it('blocklists: the domain on a domain list, the mail host IPs on an IP list; a hit is listed, 127.255.255.x is refused', async () => {
    publishGoogle();
    dns.setMx(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
    dns.setA(`mx.${domain}`, ['192.0.2.10']);
    dns.setAaaa(`mx.${domain}`, ['2001:db8::1']);
    dns.setA(`smtp.${domain}`, ['198.51.100.7']);
    const zones = { ip: ['zen.bl.test', 'refusing.bl.test'], domain: ['dbl.bl.test'] };
    dns.setA(`${domain}.dbl.bl.test`, ['127.0.1.2']);
    dns.setTxt(`${domain}.dbl.bl.test`, ['https://check.bl.test/lookup']);
    dns.setA('7.100.51.198.zen.bl.test', ['127.0.0.4']);
    for (const ip of ['10.2.0.192', '7.100.51.198']) dns.setA(`${ip}.refusing.bl.test`, ['127.255.255.254']);
    dns.setA(`${blocklistQueryName('2001:db8::1', 'refusing.bl.test')}`, ['127.255.255.254']);
    const h = await checkDomain({ purpose: 'sending', domain, providers: ['gmail', 'smtp_imap'], smtpHosts: [`smtp.${domain}`] }, resolver, { blocklists: zones, now: NOW });
    const bl = h.checks.filter((c) => c.kind === 'blocklist').map((c) => `${c.zone} ${c.target} ${c.status}`).sort();
    expect(bl).toEqual([
      `dbl.bl.test ${domain} listed`,
      'refusing.bl.test 192.0.2.10 refused',
      'refusing.bl.test 198.51.100.7 refused',
      'refusing.bl.test 2001:db8::1 refused',
      'zen.bl.test 192.0.2.10 ok',
      'zen.bl.test 198.51.100.7 listed',
      'zen.bl.test 2001:db8::1 ok',
    ]);
    const dbl = h.checks.find((c) => c.zone === 'dbl.bl.test')!;
    expect(dbl.differences).toEqual([`${domain} is listed on dbl.bl.test: DBL: a spam domain`, 'https://check.bl.test/lookup']);
    const refused = h.checks.find((c) => c.status === 'refused')!;
    expect(refused.differences[0]).toMatch(/refused the query: it came through a public or open resolver/);
    expect(h.verdict).toBe('broken');
  });

  it('a refused blocklist query alone leaves the domain ok', async () => {
    publishGoogle();
    dns.setA(`${domain}.dbl.bl.test`, ['127.255.255.255']);
    const h = await checkDomain(gmail(), resolver, { blocklists: { ip: [], domain: ['dbl.bl.test'] }, now: NOW });
    expect(h.verdict).toBe('ok');
    expect(h.checks.at(-1)).toMatchObject({ kind: 'blocklist', status: 'refused', differences: ['the list refused the query: too many queries from this resolver'] });
  });
});

describe('blocklist answers', () => {
  it('query names: reversed octets, reversed IPv6 nibbles, the domain', () => {
    expect(blocklistQueryName('192.0.2.10', 'zen.test')).toBe('10.2.0.192.zen.test');
    expect(blocklistQueryName('2001:db8::1', 'zen.test')).toBe(`1.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.zen.test`);
    expect(blocklistQueryName('acme.test', 'dbl.test')).toBe('acme.test.dbl.test');
  });
  it('reads codes: clear, listed with meaning, refused, and a rewritten NXDOMAIN as an error', () => {
    expect(readBlocklistAnswer([])).toEqual({ status: 'clear' });
    expect(readBlocklistAnswer(['127.0.0.2', '127.0.0.10'])).toMatchObject({ status: 'listed', meaning: [expect.stringMatching(/^SBL/), expect.stringMatching(/^PBL/)] });
    expect(readBlocklistAnswer(['127.0.0.77'])).toMatchObject({ status: 'listed', meaning: ['listed (code 127.0.0.77)'] });
    expect(readBlocklistAnswer(['127.255.255.252'])).toMatchObject({ status: 'refused', meaning: [expect.stringMatching(/typing error/)] });
    expect(readBlocklistAnswer(['203.0.113.5'])).toMatchObject({ status: 'error' });
  });
  it('parses zone lists; a bad zone is a clear error', () => {
    expect(parseZones(' zen.spamhaus.org, dbl.spamhaus.org. ,', 'zones')).toEqual(['zen.spamhaus.org', 'dbl.spamhaus.org']);
    expect(parseZones('', 'zones')).toEqual([]);
    expect(() => parseZones('not a zone', 'CADENZA_DNSBL_IP_ZONES')).toThrow(/CADENZA_DNSBL_IP_ZONES: 'not a zone' is not a DNS zone name/);
  });
});
