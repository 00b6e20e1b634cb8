import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { generateDkimKey } from '../compose/dkim.ts';
import { checkRecords, dnsResolver, parseResolverAddress, type RecordCheck, type TxtResolver } from './check.ts';
import { sendingRecords, splitTxt } from './records.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';

const key = generateDkimKey();
const other = generateDkimKey();

function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
    return (e as Error).message;
  }
  throw new Error('did not throw');
}

describe('sendingRecords', () => {
  it('prints SPF for the relay, DKIM from the key, DMARC at p=none with rua', () => {
    const plan = sendingRecords({ domain: 'Acme.TEST.', relayHost: 'spf.relay.cadenza.test', relayIps: ['192.0.2.10', '192.0.2.0/28', '2001:db8::1', '2001:db8::/48', '198.51.100.7/32'], dkimKey: key.privateKeyPem });
    expect(plan.domain).toBe('acme.test');
    expect(plan.selector).toBe('cadenza');
    const by = Object.fromEntries(plan.records.map((r) => [r.kind, r]));
    expect(by.spf).toMatchObject({ name: 'acme.test', type: 'TXT', value: 'v=spf1 include:spf.relay.cadenza.test ip4:192.0.2.10 ip4:192.0.2.0/28 ip6:2001:db8::1 ip6:2001:db8::/48 ip4:198.51.100.7 ~all' });
    expect(by.dkim!.name).toBe('cadenza._domainkey.acme.test');
    expect(by.dkim!.value).toMatch(/^v=DKIM1; k=rsa; p=MIIB/);
    expect(by.dkim!.strings.length).toBe(2);
    expect(by.dkim!.strings.every((s) => s.length <= 255)).toBe(true);
    expect(by.dkim!.strings.join('')).toBe(by.dkim!.value);
    expect(by.dmarc).toMatchObject({ name: '_dmarc.acme.test', value: 'v=DMARC1; p=none; rua=mailto:dmarc@acme.test' });
    expect(plan.notes).toEqual([]);
  });

  it('says what it cannot print without a relay or a key, and takes a selector and rua', () => {
    const plan = sendingRecords({ domain: 'bücher.test', selector: 'S2025', rua: 'mailto:reports@dmarc.example.test' });
    expect(plan.domain).toBe('xn--bcher-kva.test');
    expect(plan.records.map((r) => r.kind)).toEqual(['dmarc']);
    expect(plan.records[0]!.value).toBe('v=DMARC1; p=none; rua=mailto:reports@dmarc.example.test');
    expect(plan.notes.join('\n')).toMatch(/SPF: give the relay/);
    expect(plan.notes.join('\n')).toMatch(/DKIM: give the key/);
    expect(plan.selector).toBe('s2025');
  });

  it('refuses bad input with INVALID_INPUT', () => {
    expect(invalid(() => sendingRecords({ domain: 'not a domain' }))).toMatch(/not a domain name/);
    expect(invalid(() => sendingRecords({ domain: 'localhost' }))).toMatch(/not a domain name/);
    expect(invalid(() => sendingRecords({ domain: 'acme.test', relayIps: ['300.1.1.1'] }))).toMatch(/not an IPv4 or IPv6/);
    expect(invalid(() => sendingRecords({ domain: 'acme.test', relayIps: ['192.0.2.1/33'] }))).toMatch(/not an IPv4 or IPv6/);
    expect(invalid(() => sendingRecords({ domain: 'acme.test', relayHost: 'bad host' }))).toMatch(/relay host/);
    expect(invalid(() => sendingRecords({ domain: 'acme.test', selector: '-x' }))).toMatch(/selector/);
    expect(invalid(() => sendingRecords({ domain: 'acme.test', rua: 'nobody' }))).toMatch(/report address/);
    expect(invalid(() => sendingRecords({ domain: 'acme.test', dkimKey: 'garbage' }))).toMatch(/not a PEM key/);
  });

  it('splits TXT values into 255-octet strings', () => {
    expect(splitTxt('a'.repeat(600)).map((s) => s.length)).toEqual([255, 255, 90]);
    expect(splitTxt('')).toEqual(['']);
  });

  it('parses resolver addresses', () => {
    expect(parseResolverAddress('127.0.0.1:5353')).toEqual({ host: '127.0.0.1', port: 5353 });
    expect(parseResolverAddress('127.0.0.1')).toEqual({ host: '127.0.0.1', port: 53 });
    expect(parseResolverAddress('[::1]:53')).toEqual({ host: '::1', port: 53 });
    expect(parseResolverAddress('::1')).toEqual({ host: '::1', port: 53 });
    for (const bad of ['dns.google:53', '127.0.0.1:0', '127.0.0.1:70000', '127.0.0.1:x', '']) expect(invalid(() => parseResolverAddress(bad))).toMatch(/IP address/);
  });
});

describe('checkRecords against a DNS server on loopback', () => {
  let dns: TestDnsServer;
  let resolver: TxtResolver;
  beforeAll(async () => {
    dns = await startTestDnsServer();
    resolver = dnsResolver({ server: dns.address, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await dns.close();
  });

  let n = 0;
  let domain = '';
  beforeEach(() => {
    domain = `d${++n}.acme.test`;
  });
  const plan = (o: { key?: string | null; relay?: boolean; rua?: string } = {}) =>
    sendingRecords({ domain, relayHost: o.relay === false ? null : 'spf.relay.test', dkimKey: o.key === undefined ? key.publicKeyPem : o.key, ...(o.rua ? { rua: o.rua } : {}) });
  const publishAll = (p: ReturnType<typeof plan>) => {
    for (const r of p.records) dns.setTxt(r.name, [...(r.kind === 'spf' ? ['google-site-verification=abc'] : []), r.value]);
  };
  const statuses = (cs: RecordCheck[]) => cs.map((c) => `${c.kind}:${c.status}`);

  it('reports each record missing when nothing is published', async () => {
    const c = await checkRecords(plan(), resolver);
    expect(statuses(c)).toEqual(['spf:missing', 'dkim:missing', 'dmarc:missing']);
    expect(c.map((x) => x.name)).toEqual([domain, `cadenza._domainkey.${domain}`, `_dmarc.${domain}`]);
    expect(c.every((x) => x.expected)).toBe(true);
  });

  it('matches what it printed, with the DKIM key served in two strings and unrelated TXT records around', async () => {
    const p = plan();
    publishAll(p);
    const c = await checkRecords(p, resolver);
    expect(statuses(c)).toEqual(['spf:matches', 'dkim:matches', 'dmarc:matches']);
    expect(c[1]!.published).toEqual([p.records.find((r) => r.kind === 'dkim')!.value]);
  });

  it('SPF: an existing record naming other senders matches when it names the relay; otherwise a merged record is suggested', async () => {
    dns.setTxt(domain, ['v=spf1 include:_spf.google.com include:spf.relay.test -all']);
    expect((await checkRecords(plan(), resolver))[0]).toMatchObject({ status: 'matches', differences: [] });
    dns.setTxt(domain, ['v=spf1 include:_spf.google.com -all']);
    expect((await checkRecords(plan(), resolver))[0]).toMatchObject({
      status: 'differs',
      differences: ["does not name the relay: 'include:spf.relay.test' is missing"],
      suggestion: 'v=spf1 include:_spf.google.com include:spf.relay.test -all',
    });
    dns.setTxt(domain, ['v=spf1 a mx']);
    expect((await checkRecords(plan(), resolver))[0]!.suggestion).toBe('v=spf1 a mx include:spf.relay.test ~all');
  });

  it('SPF: two records, +all, and more than 10 lookups differ', async () => {
    dns.setTxt(domain, ['v=spf1 include:spf.relay.test ~all', 'v=spf1 mx ~all']);
    expect((await checkRecords(plan(), resolver))[0]!.differences[0]).toMatch(/2 SPF records.*only one/);
    dns.setTxt(domain, ['v=spf1 include:spf.relay.test +all']);
    expect((await checkRecords(plan(), resolver))[0]!.differences[0]).toMatch(/'\+all' lets any server send/);
    dns.setTxt(domain, [`v=spf1 ${Array.from({ length: 10 }, (_, i) => `include:s${i}.test`).join(' ')} all`.replace(' all', ' ~all')]);
    const c = (await checkRecords(plan(), resolver))[0]!;
    expect(c.status).toBe('differs');
    expect(c.differences.join('\n')).toMatch(/11 terms that each need a DNS lookup/);
  });

  it('DKIM: another key, a revoked key, a non-RSA key and two records differ', async () => {
    const p = plan();
    const name = `cadenza._domainkey.${domain}`;
    dns.setTxt(name, [sendingRecords({ domain, dkimKey: other.publicKeyPem }).records.find((r) => r.kind === 'dkim')!.value]);
    expect((await checkRecords(p, resolver))[1]!.differences[0]).toMatch(/p= is a different public key \(published …\S+, expected …\S+\)/);
    dns.setTxt(name, ['v=DKIM1; k=rsa; p=']);
    expect((await checkRecords(p, resolver))[1]!.differences).toEqual(['p= is empty: the key is revoked (RFC 6376 §3.6.1)']);
    dns.setTxt(name, ['v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=']);
    expect((await checkRecords(p, resolver))[1]!.differences.join('\n')).toMatch(/k=ed25519: Cadenza signs with RSA/);
    dns.setTxt(name, ['v=DKIM1; p=AAAA', 'v=DKIM1; p=BBBB']);
    expect((await checkRecords(p, resolver))[1]!.differences[0]).toMatch(/2 key records/);
  });

  it('DMARC: a stricter policy with reports matches; no rua, a bad p, two records, or a given rua not listed differ', async () => {
    const name = `_dmarc.${domain}`;
    dns.setTxt(name, ['v=DMARC1; p=reject; rua=mailto:agg@acme.test; pct=100']);
    expect((await checkRecords(plan(), resolver))[2]!.status).toBe('matches');
    expect((await checkRecords(plan({ rua: 'dmarc@reports.test' }), resolver, { ruaGiven: true }))[2]!.differences).toEqual(['rua=mailto:agg@acme.test does not include mailto:dmarc@reports.test']);
    dns.setTxt(name, ['v=DMARC1; p=none']);
    expect((await checkRecords(plan(), resolver))[2]!.differences[0]).toMatch(/no rua=/);
    dns.setTxt(name, ['v=DMARC1; p=maybe; rua=mailto:a@b.test']);
    expect((await checkRecords(plan(), resolver))[2]!.differences[0]).toMatch(/p=maybe: must be none, quarantine or reject/);
    dns.setTxt(name, ['v=DMARC1; p=none; rua=mailto:a@b.test', 'v=DMARC1; p=reject; rua=mailto:a@b.test']);
    expect((await checkRecords(plan(), resolver))[2]!.differences[0]).toMatch(/2 DMARC records/);
  });

  it('without a key or a relay a published record is "present"; a failing lookup is "error"', async () => {
    dns.setTxt(domain, ['v=spf1 mx ~all']);
    dns.setTxt(`cadenza._domainkey.${domain}`, [`v=DKIM1; k=rsa; p=AAAA`]);
    dns.servfail(`_dmarc.${domain}`);
    const c = await checkRecords(plan({ key: null, relay: false }), resolver);
    expect(statuses(c)).toEqual(['spf:present', 'dkim:present', 'dmarc:error']);
    expect(c[2]!.differences[0]).toMatch(/ESERVFAIL/);
  });

  it('reads an answer too big for UDP over TCP', async () => {
    const big = `v=DKIM1; k=rsa; p=${'A'.repeat(700)}`;
    dns.setTxt(`cadenza._domainkey.${domain}`, [big]);
    const c = await checkRecords(plan({ key: null }), resolver);
    expect(c[1]!.published).toEqual([big]);
    expect(dns.queries.some((q) => q.name === `cadenza._domainkey.${domain}` && q.transport === 'tcp')).toBe(true);
  });

  it('an unreachable server is reported as an error, not a crash', async () => {
    const dead = dnsResolver({ server: '127.0.0.1:9', timeoutMs: 200 });
    const c = await checkRecords(plan(), dead);
    expect(c.map((x) => x.status)).toEqual(['error', 'error', 'error']);
  });
});
