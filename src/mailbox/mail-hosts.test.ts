import { Resolver } from 'node:dns/promises';
import { createServer, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addressCategory } from '../common/destination-policy.ts';
import { isCadenzaError } from '../common/errors.ts';
import { startTestDnsServer, type TestDnsServer } from '../../test/dns-server.ts';
import { connectImap } from './imap/connect.ts';
import { testSmtp } from './imap/test-connection.ts';
import { checkMailEndpoints, pinnedHost, type MailHostSettings } from './mail-hosts.ts';

const off: MailHostSettings = { allowPrivate: false, allowLoopback: false };

describe('the destination policy for mailbox hosts', () => {
  let dns: TestDnsServer;
  let resolve: (host: string) => Promise<string[]>;
  let server: Server;
  let port: number;
  let connections = 0;
  const saved = process.env.CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS;
  beforeAll(async () => {
    // Names come from a DNS server of the test's own on loopback, never the machine's resolver.
    dns = await startTestDnsServer();
    const r = new Resolver();
    r.setServers([dns.address]);
    resolve = (h) => r.resolve4(h);
    server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as { port: number }).port;
  });
  afterEach(() => {
    process.env.CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS = saved;
  });
  afterAll(async () => {
    await dns.close();
    await new Promise((ok) => server.close(ok));
  });

  it('sorts addresses into categories', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].map(addressCategory)).toEqual(['loopback', 'loopback', 'loopback']);
    expect(['169.254.169.254', 'fe80::1'].map(addressCategory)).toEqual(['link-local', 'link-local']);
    expect(['10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', 'fd00::1'].map(addressCategory)).toEqual(Array(5).fill('private'));
    expect(['0.0.0.0', '224.0.0.1', '::'].map(addressCategory)).toEqual(['reserved', 'reserved', 'reserved']);
    expect(['93.184.216.34', '2606:4700::1'].map(addressCategory)).toEqual(['public', 'public']);
  });

  it('refuses loopback, metadata and (unless allowed) private hosts when a mailbox is saved', async () => {
    const ep = (host: string) => ({ host, port: 587, security: 'starttls' as const, allowSelfSigned: false });
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '169.254.169.254', '10.0.0.5', '0.0.0.0']) {
      await expect(checkMailEndpoints([ep(host)], off), host).rejects.toThrow(/does not connect there/);
    }
    await expect(checkMailEndpoints([ep('10.0.0.5')], { ...off, allowPrivate: true })).resolves.toBeUndefined();
    await expect(checkMailEndpoints([ep('169.254.169.254')], { allowPrivate: true, allowLoopback: true })).rejects.toThrow(/link-local/);
    await expect(checkMailEndpoints([ep('127.0.0.1')], { ...off, allowLoopback: true })).resolves.toBeUndefined();
    // A name is checked where it is connected to, not here.
    await expect(checkMailEndpoints([ep('smtp.example.test')], off)).resolves.toBeUndefined();
  });

  it('checks a name on what it resolves to at connect time, and connects to that address (DNS rebinding)', async () => {
    dns.setA('mail.public.test', ['93.184.216.34']);
    expect(await pinnedHost('mail.public.test', { ...off, resolve })).toEqual({ host: '93.184.216.34', servername: 'mail.public.test' });
    // The same name later answers loopback, then the metadata address: refused both times.
    dns.setA('mail.public.test', ['127.0.0.1']);
    await expect(pinnedHost('mail.public.test', { ...off, resolve })).rejects.toThrow(/resolves only to loopback addresses \(127\.0\.0\.1\)/);
    dns.setA('mail.public.test', ['169.254.169.254']);
    await expect(pinnedHost('mail.public.test', { allowPrivate: true, allowLoopback: true, resolve })).rejects.toThrow(/link-local/);
    dns.setA('mail.office.test', ['10.20.30.40']);
    await expect(pinnedHost('mail.office.test', { ...off, resolve })).rejects.toThrow(/private/);
    expect(await pinnedHost('mail.office.test', { ...off, allowPrivate: true, resolve })).toEqual({ host: '10.20.30.40', servername: 'mail.office.test' });
  });

  it('never opens an IMAP or SMTP connection to a refused host', async () => {
    process.env.CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS = 'false';
    const endpoint = { host: '127.0.0.1', port, security: 'none' as const, allowSelfSigned: false };
    const imap = await connectImap({ endpoint, username: 'u', auth: { kind: 'password', password: 'p' } }).catch((e: unknown) => e);
    expect(isCadenzaError(imap, 'MAILBOX_UNAVAILABLE') && imap.details.refused).toBe(true);
    const smtp = await testSmtp({ username: 'u', auth: { kind: 'password', password: 'p' }, timeoutMs: 2_000 }, endpoint);
    expect(smtp.ok).toBe(false);
    expect(!smtp.ok && smtp.problem.message).toMatch(/loopback/);
    expect(connections).toBe(0);
    // Allowed (as the test setup does for the mail bed), the same host is connected to.
    process.env.CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS = 'true';
    await testSmtp({ username: 'u', auth: { kind: 'password', password: 'p' }, timeoutMs: 2_000 }, endpoint);
    expect(connections).toBe(1);
  });
});
