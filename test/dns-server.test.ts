import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDnsServer, type TestDnsServer } from './dns-server.ts';

describe('the test DNS server', () => {
  let dns: TestDnsServer;
  let resolver: Resolver;
  beforeAll(async () => {
    dns = await startTestDnsServer();
    resolver = new Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([dns.address]);
  });
  afterAll(() => dns.close());

  it('answers MX, AAAA and A, and NOERROR with no answer for a type the name lacks', async () => {
    dns.setMx('example.test', [{ exchange: 'mx1.example.test', priority: 10 }]);
    dns.setA('mx1.example.test', ['127.0.0.9']);
    dns.setAaaa('mx1.example.test', ['::1']);
    expect(await resolver.resolveMx('example.test')).toEqual([{ exchange: 'mx1.example.test', priority: 10 }]);
    expect(await resolver.resolve4('mx1.example.test')).toEqual(['127.0.0.9']);
    expect(await resolver.resolve6('mx1.example.test')).toEqual(['::1']);
    await expect(resolver.resolveTxt('mx1.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolveMx('nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('follows a CNAME to its target and answers the alias itself when asked', async () => {
    dns.setCname('track.example.test', 'cadenza.host.test');
    dns.setA('cadenza.host.test', ['127.0.0.5']);
    expect(await resolver.resolve4('track.example.test')).toEqual(['127.0.0.5']);
    expect(await resolver.resolveCname('track.example.test')).toEqual(['cadenza.host.test']);
  });

  it('holds back the answers of a delayed name, so a resolver timeout can be tested', async () => {
    dns.setA('slow.example.test', ['127.0.0.1']);
    dns.delay('slow.example.test', 2_000);
    await expect(resolver.resolve4('slow.example.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    dns.delay('slow.example.test', 0);
    expect(await resolver.resolve4('slow.example.test')).toEqual(['127.0.0.1']);
  });
});
