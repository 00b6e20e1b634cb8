import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint } from '../../../test/mail/mailbed.ts';
import type { Endpoint } from '../settings.ts';
import { testConnection, testImap, testSmtp, type ConnectionTestInput } from './test-connection.ts';

/**
 * The connection test against the bed: each way a mailbox can be misconfigured gives its own
 * kind of problem. Servers that misbehave on purpose (silent, not IMAP) are tiny local sockets.
 */

const input = (over: Partial<ConnectionTestInput> = {}): ConnectionTestInput => ({
  username: 'sync6@inbox.test',
  auth: { kind: 'password', password: 'pass' },
  imap: bedEndpoint('imap'),
  smtp: bedEndpoint('smtp'),
  timeoutMs: 3_000,
  ...over,
});
const imapAt = (over: Partial<Endpoint>): Endpoint => ({ ...bedEndpoint('imap'), ...over });
const smtpAt = (over: Partial<Endpoint>): Endpoint => ({ ...bedEndpoint('smtp'), ...over });

let closedPort = 0;
let silent: net.Server;
let silentPort = 0;
let notImap: net.Server;
let notImapPort = 0;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  closedPort = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  // Accepts and never says a word (a firewall that lets SYN through, a hung server).
  silent = net.createServer((c) => void sockets.add(c.on('error', () => undefined)));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  silentPort = (silent.address() as AddressInfo).port;
  // Answers like a web server.
  notImap = net.createServer((c) => {
    sockets.add(c.on('error', () => undefined));
    c.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((r) => notImap.listen(0, '127.0.0.1', () => r()));
  notImapPort = (notImap.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all([silent, notImap].map((s) => new Promise<void>((r) => s.close(() => r()))));
});

describeMailBed('mailbox connection test against the bed', () => {
  it('reports capabilities and the special folders of a working account, on both servers', async () => {
    const r = await testConnection(input());
    expect(r.ok).toBe(true);
    if (!r.imap?.ok || !r.smtp?.ok) throw new Error(JSON.stringify(r));
    expect(r.imap.features).toEqual({ idle: true, condstore: true, qresync: true, specialUse: true, move: true, uidplus: true });
    expect(r.imap.capabilities).toEqual(expect.arrayContaining(['IDLE', 'CONDSTORE', 'QRESYNC', 'SPECIAL-USE', 'MOVE']));
    expect(r.imap.folders).toEqual({ sent: 'Sent', junk: 'Junk', trash: 'Trash' });
    expect(r.imap.warnings).toEqual([]);
    expect(r.smtp.tls).toBe(true);
    expect(r.smtp.authMechanisms).toEqual(expect.arrayContaining(['PLAIN']));
  });

  it('wrong password: auth_failed on each server, the password never in the answer', async () => {
    const r = await testConnection(input({ auth: { kind: 'password', password: 'not-the-password' } }));
    expect(r.ok).toBe(false);
    expect(r.imap).toMatchObject({ ok: false, problem: { kind: 'auth_failed' } });
    expect(r.smtp).toMatchObject({ ok: false, problem: { kind: 'auth_failed' } });
    expect(JSON.stringify(r)).not.toContain('not-the-password');
  });

  it('IMAP disabled for the account: the password is right, the login is still refused', async () => {
    const r = await testImap(input({ username: 'noimap@inbox.test' }), bedEndpoint('imap'));
    expect(r).toMatchObject({ ok: false, problem: { kind: 'imap_disabled' } });
  });

  it('TLS: a self-signed certificate, TLS spoken to a plain port, STARTTLS not offered', async () => {
    const selfSigned = await testSmtp(input(), smtpAt({ allowSelfSigned: false }));
    expect(selfSigned).toMatchObject({ ok: false, problem: { kind: 'tls', message: expect.stringContaining('untrusted certificate') } });
    const tlsOnPlainImap = await testImap(input(), imapAt({ security: 'tls' }));
    expect(tlsOnPlainImap).toMatchObject({ ok: false, problem: { kind: 'tls', hint: expect.stringContaining('starttls') } });
    const tlsOnPlainSmtp = await testSmtp(input(), smtpAt({ security: 'tls' }));
    expect(tlsOnPlainSmtp).toMatchObject({ ok: false, problem: { kind: 'tls' } });
    const noStarttls = await testImap(input(), imapAt({ security: 'starttls' }));
    expect(noStarttls).toMatchObject({ ok: false, problem: { kind: 'tls', message: expect.stringContaining('STARTTLS') } });
  });

  it('unreachable (closed port), DNS (no such host), timeout (silent server), not IMAP (an HTTP answer)', async () => {
    const closed = await testConnection(input({ imap: imapAt({ port: closedPort }), smtp: smtpAt({ port: closedPort }) }));
    expect(closed.imap).toMatchObject({ ok: false, problem: { kind: 'unreachable' } });
    expect(closed.smtp).toMatchObject({ ok: false, problem: { kind: 'unreachable' } });
    const dns = await testConnection(input({ imap: imapAt({ host: 'no-such-host.invalid' }), smtp: smtpAt({ host: 'no-such-host.invalid' }) }));
    expect(dns.imap).toMatchObject({ ok: false, problem: { kind: 'dns' } });
    expect(dns.smtp).toMatchObject({ ok: false, problem: { kind: 'dns' } });
    const t0 = performance.now();
    const slow = await testConnection(input({ timeoutMs: 500, imap: imapAt({ port: silentPort }), smtp: smtpAt({ port: silentPort, security: 'none' }) }));
    expect(slow.imap).toMatchObject({ ok: false, problem: { kind: 'timeout' } });
    expect(slow.smtp).toMatchObject({ ok: false, problem: { kind: 'timeout' } });
    expect(performance.now() - t0).toBeLessThan(3_000);
    const http = await testImap(input(), imapAt({ port: notImapPort }));
    expect(http).toMatchObject({ ok: false, problem: { kind: 'protocol' } });
  });
});

