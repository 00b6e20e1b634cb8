import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { nodeResolver } from '../../common/dns-resolver.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { MailDomainCache } from './domain-cache.ts';
import { lookupMailDomain } from './mail-domain.ts';

/** Against the local DNS server (test/dns-server.ts): real packets through node:dns, never the machine's resolver. */
describe('mail domain status and its cache', () => {
  let dns: TestDnsServer;
  const resolver = () => nodeResolver({ server: dns.address, timeoutMs: 1000 });
  const asked = (name: string, type?: string) => dns.queries.filter((q) => q.name === name && (type === undefined || q.type === type)).length;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    dns.setMx('mx.test', [{ exchange: 'mail.mx.test', priority: 10 }]);
    dns.setA('mail.mx.test', ['192.0.2.1']);
    dns.setA('a-only.test', ['192.0.2.2']);
    dns.setAaaa('aaaa-only.test', ['2001:db8::1']);
    dns.setMx('null-mx.test', [{ exchange: '.', priority: 0 }]);
    dns.setTxt('txt-only.test', ['v=spf1 -all']);
    dns.servfail('broken.test');
    dns.setMx('slow.test', [{ exchange: 'mail.slow.test', priority: 10 }]);
    dns.delay('slow.test', 5000);
  });
  afterAll(async () => {
    await dns.close();
  });

  it('MX, implicit MX (A or AAAA only), null MX (RFC 7505), NXDOMAIN, no mail host, SERVFAIL', async () => {
    const r = resolver();
    const status = (d: string) => lookupMailDomain(r, systemClock, d, 2000);
    expect(await status('mx.test')).toEqual({ kind: 'mx' });
    expect(await status('a-only.test')).toEqual({ kind: 'implicit_mx' });
    expect(await status('aaaa-only.test')).toEqual({ kind: 'implicit_mx' });
    expect(await status('null-mx.test')).toEqual({ kind: 'null_mx' });
    expect(await status('nxdomain.test')).toEqual({ kind: 'nxdomain' });
    expect(await status('txt-only.test')).toEqual({ kind: 'no_mail_host' });
    expect(await status('broken.test')).toEqual({ kind: 'unknown', error: expect.stringContaining('ESERVFAIL') });
  });

  it('a server that does not answer: unknown after the per-lookup timeout, not after c-ares gives up', async () => {
    const slowResolver = nodeResolver({ server: dns.address, timeoutMs: 10_000 });
    const t = performance.now();
    expect(await lookupMailDomain(slowResolver, systemClock, 'slow.test', 300)).toEqual({ kind: 'unknown', error: expect.stringContaining('ETIMEOUT') });
    expect(performance.now() - t).toBeLessThan(2000);
    slowResolver.cancel();
  });

  it('caches answers by TTL (negative ones shorter), and asks again once they expire', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 5));
    const cache = new MailDomainCache({ resolver: resolver(), clock, ttlMs: 60_000, negativeTtlMs: 10_000, unknownTtlMs: 1000 });
    const before = { mx: asked('mx.test', 'MX'), nx: asked('gone.test', 'MX') };
    expect(await cache.status('mx.test')).toEqual({ kind: 'mx' });
    expect(await cache.status('gone.test')).toEqual({ kind: 'nxdomain' });
    expect(await cache.status('mx.test')).toEqual({ kind: 'mx' });
    expect(await cache.status('gone.test')).toEqual({ kind: 'nxdomain' });
    expect({ mx: asked('mx.test', 'MX') - before.mx, nx: asked('gone.test', 'MX') - before.nx }).toEqual({ mx: 1, nx: 1 });
    expect(cache.lookups).toBe(2);
    clock.advance(10_001); // the negative answer expired, the positive one not
    await cache.status('mx.test');
    await cache.status('gone.test');
    expect({ mx: asked('mx.test', 'MX') - before.mx, nx: asked('gone.test', 'MX') - before.nx }).toEqual({ mx: 1, nx: 2 });
    clock.advance(60_000);
    await cache.status('mx.test');
    expect(asked('mx.test', 'MX') - before.mx).toBe(2);
  });

  it('one lookup for many concurrent questions about one domain', async () => {
    dns.setMx('busy.test', [{ exchange: 'mail.busy.test', priority: 10 }]);
    dns.delay('busy.test', 100);
    const cache = new MailDomainCache({ resolver: resolver(), clock: systemClock });
    const all = await Promise.all(Array.from({ length: 50 }, () => cache.status('busy.test')));
    expect(new Set(all.map((s) => s.kind))).toEqual(new Set(['mx']));
    expect(asked('busy.test', 'MX')).toBe(1);
    expect(cache.lookups).toBe(1);
    dns.delay('busy.test', 0);
  });

  it('stays within its size, dropping the least recently used', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 5));
    const cache = new MailDomainCache({ resolver: resolver(), clock, maxEntries: 2 });
    await cache.status('mx.test');
    await cache.status('a-only.test');
    await cache.status('mx.test'); // used: a-only.test is now the oldest
    await cache.status('aaaa-only.test');
    expect(cache.size).toBe(2);
    const n = cache.lookups;
    await cache.status('mx.test');
    expect(cache.lookups).toBe(n);
    await cache.status('a-only.test');
    expect(cache.lookups).toBe(n + 1);
  });

  it('remembers a dead server briefly, so an import of one domain waits one timeout, not one per row', async () => {
    const r = nodeResolver({ server: dns.address, timeoutMs: 10_000 });
    const cache = new MailDomainCache({ resolver: r, clock: systemClock, timeoutMs: 200 });
    const t = performance.now();
    for (let i = 0; i < 20; i++) expect((await cache.status('slow.test')).kind).toBe('unknown');
    expect(cache.lookups).toBe(1);
    expect(performance.now() - t).toBeLessThan(1500);
    r.cancel();
  });
});
