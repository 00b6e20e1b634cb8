import { afterEach, describe, expect, it } from 'vitest';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { systemClock } from '../../../common/clock.ts';
import { isCadenzaError } from '../../../common/errors.ts';
import { SimClock } from '../../../sim/sim-clock.ts';
import { startFaultProxy, type FaultProxy } from '../../../../test/mail/fault-proxy.ts';
import { classifyError, createSmtpTransport, headerOf, queueIdOf, type SmtpTransportConfig } from './smtp-transport.ts';
import { enhancedStatusOf, type SendOutcome } from '../outcomes.ts';

/**
 * The SMTP transport against a scripted in-process server (smtp-server, as nodemailer's own tests
 * do), one test per outcome class and per phase a connection can die in. Timeouts are a few
 * hundred ms; the whole-attempt deadline runs on a SimClock, so nothing waits for it.
 */

interface Received {
  from: string;
  to: string[];
  raw: Buffer;
  user: string | undefined;
  secure: boolean;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
  await expectNoOpenSockets();
});

/** Every socket the test opened (client, server, proxy) must be gone (STYLE habit 10). */
async function expectNoOpenSockets(): Promise<void> {
  const count = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TLSWrap' || r === 'TCPServerWrap').length;
  for (let i = 0; i < 50 && count() > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(process.getActiveResourcesInfo().filter((r) => /TCP|TLS/.test(r))).toEqual([]);
}

async function server(opts: Partial<SMTPServerOptions> = {}): Promise<{ port: number; received: Received[]; srv: SMTPServer }> {
  const received: Received[] = [];
  const srv = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    closeTimeout: 50,
    onAuth(auth, _session, cb) {
      if (auth.username === 'a@x.test' && auth.password === 'pw') return cb(null, { user: auth.username });
      const e = Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 });
      cb(e);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          user: session.user as string | undefined,
          secure: session.secure,
        });
        cb(null, 'Ok: queued as 4B76B18003C');
      });
    },
    ...opts,
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  closers.push(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  return { port: (srv.server.address() as AddressInfo).port, received, srv };
}

const MID = '<0192f7a0-1d2b-7c3d-9e4f-5a6b7c8d9e0f@x.test>';
function message(opts: { messageId?: string; body?: string } = {}): Buffer {
  return Buffer.from(
    `From: A <a@x.test>\r\nTo: b@y.test\r\nSubject: Quick question\r\nMessage-ID: ${opts.messageId ?? MID}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${opts.body ?? 'Hi Bob,\r\n.a line that starts with a dot\r\n\r\nA.\r\n'}`,
  );
}

function cfg(port: number, over: Partial<SmtpTransportConfig> = {}): SmtpTransportConfig {
  return {
    smtp: { host: '127.0.0.1', port, security: 'none', allowSelfSigned: false },
    imap: null,
    username: 'a@x.test',
    auth: { kind: 'password', password: 'pw' },
    serverSavesSent: true,
    timeouts: { connectMs: 1_000, greetingMs: 300, socketMs: 300, totalMs: 10_000 },
    ...over,
  };
}

async function send(c: SmtpTransportConfig, opts: { to?: string[]; raw?: Buffer; signal?: AbortSignal; clock?: SimClock } = {}): Promise<SendOutcome> {
  const t = createSmtpTransport(c, { clock: opts.clock ?? systemClock });
  try {
    return await t.send(opts.raw ?? message(), { from: 'a@x.test', to: opts.to ?? ['b@y.test'] }, { messageId: MID, ...(opts.signal ? { signal: opts.signal } : {}) });
  } finally {
    await t.close();
  }
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

async function proxy(port: number, mode: Parameters<typeof startFaultProxy>[1]): Promise<FaultProxy> {
  const p = await startFaultProxy({ host: '127.0.0.1', port }, mode);
  closers.push(() => p.close());
  return p;
}

describe('accepted', () => {
  it('hands the raw bytes over unchanged (dot-stuffing undone by the server) and reads the queue id', async () => {
    const s = await server();
    const out = await send(cfg(s.port));
    expect(out).toEqual({ kind: 'accepted', response: '250 Ok: queued as 4B76B18003C', providerId: '4B76B18003C', bounced: [], sentCopy: 'server' });
    expect(s.received).toHaveLength(1);
    expect(s.received[0]!.raw.equals(message())).toBe(true);
    expect(s.received[0]).toMatchObject({ from: 'a@x.test', to: ['b@y.test'], user: 'a@x.test' });
  });

  it('upgrades with STARTTLS when the mailbox says starttls, and refuses an untrusted certificate unless allowed', async () => {
    const s = await server({ disabledCommands: [] }); // smtp-server's built-in self-signed certificate
    const ok = await send(cfg(s.port, { smtp: { host: '127.0.0.1', port: s.port, security: 'starttls', allowSelfSigned: true } }));
    expect(ok.kind).toBe('accepted');
    expect(s.received[0]!.secure).toBe(true);
    const refused = await send(cfg(s.port, { smtp: { host: '127.0.0.1', port: s.port, security: 'starttls', allowSelfSigned: false } }));
    expect(refused).toMatchObject({ kind: 'transient', phase: 'starttls' });
    expect(s.received).toHaveLength(1);
  });

  it('refuses to go on in clear text when STARTTLS is required but not offered', async () => {
    const s = await server(); // STARTTLS disabled
    const out = await send(cfg(s.port, { smtp: { host: '127.0.0.1', port: s.port, security: 'starttls', allowSelfSigned: true } }));
    expect(out).toMatchObject({ kind: 'transient', phase: 'starttls' });
    expect(s.received).toHaveLength(0);
  });

  it('speaks TLS from the first byte when the mailbox says tls', async () => {
    const s = await server({ secure: true });
    const out = await send(cfg(s.port, { smtp: { host: '127.0.0.1', port: s.port, security: 'tls', allowSelfSigned: true } }));
    expect(out.kind).toBe('accepted');
    expect(s.received[0]!.secure).toBe(true);
  });

  it('reports the refused recipients of a partly accepted message as bounced', async () => {
    const s = await server({
      onRcptTo(addr, _s, cb) {
        cb(addr.address === 'gone@y.test' ? smtpError('5.1.1 <gone@y.test>: Recipient address rejected: User unknown', 550) : null);
      },
    });
    const out = await send(cfg(s.port), { to: ['b@y.test', 'gone@y.test'] });
    expect(out).toMatchObject({ kind: 'accepted', bounced: [{ recipient: 'gone@y.test', responseCode: 550, enhancedStatus: '5.1.1' }] });
    expect(s.received[0]!.to).toEqual(['b@y.test']);
  });
});

describe('bounce, rejected and transient answers', () => {
  it('5xx at RCPT: bounce with the recipient, the enhanced status code and the diagnostic', async () => {
    const s = await server({ onRcptTo: (_a, _s, cb) => cb(smtpError('5.1.1 <b@y.test>: Recipient address rejected: User unknown in virtual mailbox table', 550)) });
    const out = await send(cfg(s.port));
    expect(out).toEqual({
      kind: 'bounce',
      recipients: [{ recipient: 'b@y.test', responseCode: 550, enhancedStatus: '5.1.1', diagnostic: '550 5.1.1 <b@y.test>: Recipient address rejected: User unknown in virtual mailbox table' }],
    });
    expect(s.received).toHaveLength(0);
  });

  it('4xx at RCPT (greylisting): transient, not a bounce', async () => {
    const s = await server({ onRcptTo: (_a, _s, cb) => cb(smtpError('4.7.1 <b@y.test>: Recipient address rejected: greylisted, try again later', 450)) });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'transient', phase: 'rcpt', responseCode: 450, enhancedStatus: '4.7.1' });
  });

  it('5xx at MAIL FROM: rejected (message-level, permanent)', async () => {
    const s = await server({ onMailFrom: (_a, _s, cb) => cb(smtpError('5.7.1 Sender address rejected: not owned by user', 553)) });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'rejected', phase: 'mail', responseCode: 553, enhancedStatus: '5.7.1' });
  });

  it('421 at MAIL FROM: transient', async () => {
    const s = await server({ onMailFrom: (_a, _s, cb) => cb(smtpError('4.3.2 Service shutting down', 421)) });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'transient', phase: 'mail', responseCode: 421 });
  });

  it('5xx after the terminator: rejected; 4xx after it: transient (an answer is never ambiguous)', async () => {
    let reply = smtpError('5.7.1 Message rejected as spam', 554);
    const s = await server({
      onData(stream, _s, cb) {
        stream.resume();
        stream.on('end', () => cb(reply));
      },
    });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'rejected', phase: 'end_of_data', responseCode: 554, enhancedStatus: '5.7.1' });
    reply = smtpError('4.3.0 Temporary queue failure', 451);
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'transient', phase: 'end_of_data', responseCode: 451 });
  });

  it('a refused connection: transient at connect', async () => {
    const port = await freePort();
    expect(await send(cfg(port))).toMatchObject({ kind: 'transient', phase: 'connect' });
  });

  it('a 554 greeting (no service for this client): transient at greeting', async () => {
    const s = await server({ onConnect: (_s, cb) => cb(smtpError('5.7.1 No SMTP service for you', 554)) });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'transient', phase: 'greeting', responseCode: 554 });
  });
});

describe('auth', () => {
  it('a wrong password: auth_failed with the 535', async () => {
    const s = await server();
    const out = await send(cfg(s.port, { auth: { kind: 'password', password: 'wrong' } }));
    expect(out).toMatchObject({ kind: 'auth_failed', phase: 'auth', responseCode: 535 });
    expect(s.received).toHaveLength(0);
  });

  it('454 (temporary authentication failure): transient', async () => {
    const s = await server({ onAuth: (_a, _s, cb) => cb(smtpError('4.7.0 Temporary authentication failure', 454)) });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'transient', phase: 'auth', responseCode: 454 });
  });

  it('a server that offers no AUTH: auth_failed, never an unauthenticated send', async () => {
    const s = await server({ disabledCommands: ['STARTTLS', 'AUTH'], authOptional: true });
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'auth_failed', phase: 'auth' });
    expect(s.received).toHaveLength(0);
  });

  it('XOAUTH2: a refused token is refreshed once (forceRefresh) and the send goes through', async () => {
    const seen: string[] = [];
    const s = await server({
      authMethods: ['XOAUTH2'],
      onAuth(auth, _s, cb) {
        seen.push(`${auth.method}:${auth.username}:${auth.accessToken}`);
        if (auth.accessToken === 'fresh') return cb(null, { user: auth.username });
        cb(null, { data: { status: '401', schemes: 'bearer', scope: 'https://mail.google.com/' } });
      },
    });
    const asked: boolean[] = [];
    const out = await send(
      cfg(s.port, {
        auth: {
          kind: 'xoauth2',
          accessToken: async ({ forceRefresh }) => {
            asked.push(forceRefresh);
            return forceRefresh ? 'fresh' : 'stale';
          },
        },
      }),
    );
    expect(out.kind).toBe('accepted');
    expect(asked).toEqual([false, true]);
    expect(seen).toEqual(['XOAUTH2:a@x.test:stale', 'XOAUTH2:a@x.test:fresh']);
  });

  it('XOAUTH2: a revoked grant is auth_failed, an unreachable token endpoint is transient', async () => {
    const s = await server({ authMethods: ['XOAUTH2'] });
    const revoked = await send(cfg(s.port, { auth: { kind: 'xoauth2', accessToken: async () => Promise.reject(new Error('invalid_grant')) } }));
    expect(revoked).toMatchObject({ kind: 'auth_failed', phase: 'auth' });
    const down = await send(cfg(s.port, { auth: { kind: 'xoauth2', accessToken: async () => Promise.reject(Object.assign(new Error('token endpoint: ECONNRESET'), { transient: true })) } }));
    expect(down).toMatchObject({ kind: 'transient', phase: 'auth' });
  });
});

describe('connections that die: the phase decides', () => {
  it('greeting never comes: transient at greeting after greetingTimeout', async () => {
    const s = await server({ onConnect: () => undefined });
    const t0 = Date.now();
    expect(await send(cfg(s.port))).toMatchObject({ kind: 'transient', phase: 'greeting' });
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('no answer after the terminator: ambiguous after socketTimeout', async () => {
    const s = await server({ onData: (stream) => stream.resume() }); // never answers
    const out = await send(cfg(s.port));
    expect(out).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data', sentCopy: 'server' });
  });

  it('the whole-attempt deadline (injected clock): ambiguous once the terminator was written', async () => {
    const clock = new SimClock(0);
    let gotMessage!: () => void;
    const got = new Promise<void>((r) => (gotMessage = r));
    const s = await server({
      onData(stream) {
        stream.resume();
        stream.on('end', () => gotMessage());
      },
    });
    const c = cfg(s.port, { timeouts: { connectMs: 1_000, greetingMs: 1_000, socketMs: 30_000, totalMs: 5_000 } });
    const pending = send(c, { clock });
    await got;
    clock.advance(5_000);
    expect(await pending).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data', reason: 'no final answer within 5000 ms' });
  });

  it('the deadline before the message was handed over: transient', async () => {
    const clock = new SimClock(0);
    const s = await server({ onConnect: () => undefined });
    const c = cfg(s.port, { timeouts: { connectMs: 1_000, greetingMs: 30_000, socketMs: 30_000, totalMs: 5_000 } });
    const pending = send(c, { clock });
    await new Promise((r) => setTimeout(r, 50));
    clock.advance(5_000);
    expect(await pending).toMatchObject({ kind: 'transient', phase: 'greeting' });
  });

  it('abort: transient before the handover, ambiguous after it', async () => {
    // The server takes the whole message (its terminator included) and never answers it: the abort
    // then comes while the 250 is awaited, whatever the machine's load made the handshake take.
    let terminated!: () => void;
    const dataEnded = new Promise<void>((r) => (terminated = r));
    const s = await server({
      onData: (stream) => {
        stream.on('end', () => terminated());
        stream.resume();
      },
    });
    const before = new AbortController();
    before.abort();
    expect(await send(cfg(s.port), { signal: before.signal })).toMatchObject({ kind: 'transient', phase: 'connect' });
    const after = new AbortController();
    const c = cfg(s.port, { timeouts: { connectMs: 1_000, greetingMs: 1_000, socketMs: 30_000, totalMs: 30_000 } });
    const pending = send(c, { signal: after.signal });
    await dataEnded;
    after.abort();
    expect(await pending).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
  });

  it('dropped after the terminator (the 250 swallowed): ambiguous, and the server did get the message', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'drop_after_terminator' });
    const out = await send(cfg(p.port));
    expect(out).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
    expect(p.stats.swallowedReplies).toBe(1);
    expect(s.received).toHaveLength(1);
  });

  it('dropped just before the terminator: the same ambiguous answer, and the server got nothing', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'drop_before_terminator' });
    const out = await send(cfg(p.port));
    expect(out).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
    expect(p.stats.dropped).toBe(1);
    expect(s.received).toHaveLength(0);
  });

  it('dropped while the body is still being written (terminator not yet written): transient', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'drop_in_body' });
    // 8 MB: more than the kernel takes in one burst (send buffer <= 4 MB + the proxy's receive
    // buffer, which cannot grow while the proxy is not reading), so the socket pushes back, and the
    // proxy drops the connection before nodemailer gets to write the terminator.
    const big = message({ body: `${'x'.repeat(998)}\r\n`.repeat(8_000) });
    const out = await send(cfg(p.port), { raw: big });
    expect(out).toMatchObject({ kind: 'transient', phase: 'body' });
    expect(s.received).toHaveLength(0);
  });

  it('a reply delayed past socketTimeout: ambiguous (timeout in end_of_data)', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'delay', ms: 600, only: 'final_reply' });
    expect(await send(cfg(p.port))).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
    expect(s.received).toHaveLength(1);
  });
});

describe('one kept connection per mailbox', () => {
  const env = { from: 'a@x.test', to: ['b@y.test'] };
  const mid = (i: number) => `<0192f7a0-1d2b-7c3d-9e4f-5a6b7c8d9e${String(i).padStart(2, '0')}@x.test>`;
  async function sendOn(t: ReturnType<typeof createSmtpTransport>, i: number): Promise<SendOutcome> {
    return t.send(message({ messageId: mid(i) }), env, { messageId: mid(i) });
  }

  it('carries consecutive messages on one connection (RSET between them) and closes it with the transport', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'pass' });
    const t = createSmtpTransport(cfg(p.port), { clock: systemClock });
    for (let i = 0; i < 3; i++) expect(await sendOn(t, i)).toMatchObject({ kind: 'accepted' });
    expect(p.stats.connections).toBe(1);
    expect(s.received.map((r) => headerOf(r.raw, 'message-id'))).toEqual([mid(0), mid(1), mid(2)]);
    await t.close(); // afterEach: no socket left open
  });

  it('closes the connection after idleMs without a send; the next send opens a new one', async () => {
    const clock = new SimClock(Date.UTC(2026, 5, 1));
    const s = await server();
    const p = await proxy(s.port, { kind: 'pass' });
    const t = createSmtpTransport(cfg(p.port, { timeouts: { connectMs: 1_000, greetingMs: 1_000, socketMs: 5_000, totalMs: 10_000, idleMs: 30_000 } }), { clock });
    expect(await sendOn(t, 0)).toMatchObject({ kind: 'accepted' });
    clock.advance(29_999);
    expect(await sendOn(t, 1)).toMatchObject({ kind: 'accepted' });
    expect(p.stats.connections).toBe(1);
    clock.advance(30_000);
    for (let i = 0; i < 50 && process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap')).toEqual([]); // QUIT sent, closed
    expect(await sendOn(t, 2)).toMatchObject({ kind: 'accepted' });
    expect(p.stats.connections).toBe(2);
    await t.close();
  });

  it('a kept connection the server closed while it waited: the send goes on a new one, accepted, once', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'pass' });
    const t = createSmtpTransport(cfg(p.port), { clock: systemClock });
    expect(await sendOn(t, 0)).toMatchObject({ kind: 'accepted' });
    p.cut();
    expect(await sendOn(t, 1)).toMatchObject({ kind: 'accepted' });
    expect(p.stats.connections).toBe(2);
    expect(s.received).toHaveLength(2);
    await t.close();
  });

  it('a kept connection gone silent (no FIN): the RSET goes unanswered, the send goes on a new one within reuseCheckMs, not ambiguous', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'pass' });
    const t = createSmtpTransport(cfg(p.port, { timeouts: { connectMs: 1_000, greetingMs: 1_000, socketMs: 5_000, totalMs: 10_000, reuseCheckMs: 200 } }), { clock: systemClock });
    expect(await sendOn(t, 0)).toMatchObject({ kind: 'accepted' });
    p.freeze();
    expect(await sendOn(t, 1)).toMatchObject({ kind: 'accepted' });
    expect(p.stats.connections).toBe(2);
    expect(s.received).toHaveLength(2);
    await t.close();
  });

  it('a kept connection dropped after the terminator: ambiguous, exactly as on a new connection', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'drop_after_terminator', fromMessage: 2 });
    const t = createSmtpTransport(cfg(p.port), { clock: systemClock });
    expect(await sendOn(t, 0)).toMatchObject({ kind: 'accepted' });
    expect(await sendOn(t, 1)).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
    expect(p.stats.connections).toBe(1);
    expect(p.stats.swallowedReplies).toBe(1);
    expect(s.received).toHaveLength(2);
    // The next message does not reuse the broken connection.
    p.setMode({ kind: 'pass' });
    expect(await sendOn(t, 2)).toMatchObject({ kind: 'accepted' });
    expect(p.stats.connections).toBe(2);
    await t.close();
  });

  it('a kept connection dropped before the terminator: ambiguous (the client cannot tell it from a drop after it)', async () => {
    const s = await server();
    const p = await proxy(s.port, { kind: 'drop_before_terminator', fromMessage: 2 });
    const t = createSmtpTransport(cfg(p.port), { clock: systemClock });
    expect(await sendOn(t, 0)).toMatchObject({ kind: 'accepted' });
    expect(await sendOn(t, 1)).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
    expect(s.received).toHaveLength(1);
    await t.close();
  });
});

describe('input and configuration', () => {
  it('refuses a message whose Message-ID is not the one findSent would search for', async () => {
    const s = await server();
    const t = createSmtpTransport(cfg(s.port), { clock: systemClock });
    const err = await t.send(message({ messageId: '<other@x.test>' }), { from: 'a@x.test', to: ['b@y.test'] }, { messageId: MID }).catch((e: unknown) => e);
    expect(isCadenzaError(err, 'INVALID_INPUT')).toBe(true);
    const noRcpt = await t.send(message(), { from: 'a@x.test', to: [] }, { messageId: MID }).catch((e: unknown) => e);
    expect(isCadenzaError(noRcpt, 'INVALID_INPUT')).toBe(true);
    const crlf = await t.send(message(), { from: 'a@x.test', to: ['b@y.test\r\nRCPT TO:<c@z.test>'] }, { messageId: MID }).catch((e: unknown) => e);
    expect(isCadenzaError(crlf, 'INVALID_INPUT')).toBe(true);
    expect(s.received).toHaveLength(0);
  });

  it('needs IMAP settings when the client files the Sent copy; without IMAP, findSent is unavailable', async () => {
    expect(() => createSmtpTransport(cfg(1, { serverSavesSent: false }), { clock: systemClock })).toThrow(/no IMAP settings/);
    const t = createSmtpTransport(cfg(1), { clock: systemClock });
    expect(await t.findSent(MID)).toMatchObject({ status: 'unavailable' });
  });
});

describe('pure parts', () => {
  it('classifies what nodemailer reports without a server reply', () => {
    expect(classifyError(Object.assign(new Error('Connection closed unexpectedly'), { code: 'ECONNECTION', command: 'CONN' }), 'rcpt')).toMatchObject({ kind: 'transient', phase: 'rcpt' });
    expect(classifyError(Object.assign(new Error('Connection closed unexpectedly'), { code: 'ECONNECTION', command: 'CONN' }), 'end_of_data')).toMatchObject({ kind: 'ambiguous' });
    expect(classifyError(Object.assign(new Error('Timeout'), { code: 'ETIMEDOUT', command: 'CONN' }), 'body')).toMatchObject({ kind: 'transient', phase: 'body' });
    expect(classifyError(Object.assign(new Error('Missing credentials for "PLAIN"'), { code: 'EAUTH', command: 'API' }), 'auth')).toMatchObject({ kind: 'auth_failed' });
    expect(classifyError(Object.assign(new Error('Message size larger than allowed 1000'), { code: 'EMESSAGE', command: 'MAIL FROM' }), 'mail')).toMatchObject({ kind: 'rejected', phase: 'mail' });
    const mixed = Object.assign(new Error("Can't send mail - all recipients were rejected"), {
      code: 'EENVELOPE',
      command: 'RCPT TO',
      rejectedErrors: [
        Object.assign(new Error('x'), { recipient: 'a@y.test', responseCode: 550, response: '550 5.1.1 no' }),
        Object.assign(new Error('y'), { recipient: 'b@y.test', responseCode: 451, response: '451 4.3.0 later' }),
      ],
    });
    expect(classifyError(mixed, 'rcpt')).toMatchObject({ kind: 'transient', responseCode: 451, enhancedStatus: '4.3.0' });
  });

  it('reads headers, queue ids and enhanced status codes', () => {
    expect(headerOf(Buffer.from('Subject: a\r\nMessage-ID:\r\n <x@y>\r\n\r\nMessage-ID: <body@y>'), 'message-id')).toBe('<x@y>');
    expect(headerOf(Buffer.from('Subject: a\r\n\r\nMessage-ID: <body@y>'), 'message-id')).toBeNull();
    expect(queueIdOf('250 2.0.0 Ok: queued as 4B76B18003C')).toBe('4B76B18003C');
    expect(queueIdOf('250 OK id=1rXyZa-0004Qk-2B')).toBe('1rXyZa-0004Qk-2B');
    expect(queueIdOf('250 2.0.0 OK  1700000000 d9443c01a7336-1e0c5c2b1a5si - gsmtp')).toBeNull();
    expect(enhancedStatusOf('550 5.1.1 <x@y>: User unknown')).toBe('5.1.1');
    expect(enhancedStatusOf('5.7.1 denied')).toBe('5.7.1');
    expect(enhancedStatusOf('550 User unknown')).toBeNull();
  });
});

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
