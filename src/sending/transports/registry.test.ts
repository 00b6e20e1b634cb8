import { afterEach, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { createTransport, transports, type TransportMailbox } from './registry.ts';

const mailbox = (over: Partial<TransportMailbox> = {}): TransportMailbox => ({ id: '0192f7a0-0000-7000-8000-000000000001', email: 'rep@x.test', provider: 'smtp_imap', settings: {}, ...over });

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isCadenzaError(e, 'CONFIG_INVALID') || isCadenzaError(e, 'INVALID_INPUT')) return e.code;
    throw e;
  }
  throw new Error('expected an error');
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

describe('transport registry', () => {
  it('lists one transport per mailbox provider', () => {
    expect(Object.keys(transports).sort()).toEqual(['gmail', 'graph', 'smtp_imap']);
    const tokens = async () => 'token';
    expect(createTransport(mailbox({ provider: 'gmail' }), { clock: systemClock, credential: undefined, tokens }).kind).toBe('gmail');
    expect(createTransport(mailbox({ provider: 'graph' }), { clock: systemClock, credential: undefined, tokens }).kind).toBe('graph');
  });

  it('says what is missing instead of building a transport that cannot work', () => {
    const pw = { kind: 'password' as const, username: 'rep@x.test', password: 'pw' };
    expect(configError(() => createTransport(mailbox(), { clock: systemClock, credential: pw }))).toBe('CONFIG_INVALID'); // no smtp settings
    const smtp = { smtp: { host: '127.0.0.1', port: 2525, security: 'none' } };
    expect(configError(() => createTransport(mailbox({ settings: smtp }), { clock: systemClock, credential: undefined }))).toBe('CONFIG_INVALID');
    expect(configError(() => createTransport(mailbox({ settings: { ...smtp, serverSavesSent: false } }), { clock: systemClock, credential: pw }))).toBe('CONFIG_INVALID'); // no imap for the copy
    expect(configError(() => createTransport(mailbox({ settings: { smtp: { host: '', port: 0, security: 'plain' } } }), { clock: systemClock, credential: pw }))).toBe('INVALID_INPUT');
    expect(configError(() => createTransport(mailbox({ provider: 'gmail' }), { clock: systemClock, credential: undefined }))).toBe('CONFIG_INVALID'); // no token provider
    expect(configError(() => createTransport(mailbox({ provider: 'pigeon' as never }), { clock: systemClock, credential: undefined }))).toBe('CONFIG_INVALID');
  });

  it('builds an SMTP transport from mailbox.settings and the vault credential, and it sends', async () => {
    const got: string[] = [];
    const srv = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      closeTimeout: 50,
      onAuth: (a, _s, cb) => (a.username === 'rep-login' && a.password === 'pw' ? cb(null, { user: a.username }) : cb(new Error('no'))),
      onData(stream, _s, cb) {
        stream.on('data', (c: Buffer) => got.push(c.toString()));
        stream.on('end', () => cb(null, 'Ok: queued as ABC'));
      },
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    closers.push(() => new Promise<void>((r) => srv.close(() => r())));
    const port = (srv.server.address() as AddressInfo).port;
    const t = createTransport(mailbox({ settings: { smtp: { host: '127.0.0.1', port, security: 'none' } } }), {
      clock: systemClock,
      credential: { kind: 'password', username: 'rep-login', password: 'pw' },
    });
    const id = '<r1@x.test>';
    const out = await t.send(Buffer.from(`Message-ID: ${id}\r\nSubject: hi\r\n\r\nhello\r\n`), { from: 'rep@x.test', to: ['lead@y.test'] }, { messageId: id });
    await t.close();
    expect(out).toMatchObject({ kind: 'accepted', providerId: 'ABC', sentCopy: 'server' });
    expect(got.join('')).toContain('hello');
  });
});
