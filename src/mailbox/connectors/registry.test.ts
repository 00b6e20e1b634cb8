import { afterEach, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import type { Ability, ConnectorDeps, MailboxRow } from './connector.ts';
import { connectorDeps, connectors, createConnector } from './registry.ts';

const mailbox = (over: Partial<MailboxRow> = {}): MailboxRow => ({ id: '0192f7a0-0000-7000-8000-000000000001', email: 'rep@x.test', provider: 'smtp_imap', settings: {}, ...over });

const random = seededRandom(7);
const deps = (over: Partial<ConnectorDeps> = {}): ConnectorDeps => ({ clock: systemClock, random, credential: undefined, ...over });

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

describe('connector registry', () => {
  it('lists one connector per mailbox provider, each with every part', () => {
    expect(Object.keys(connectors).sort()).toEqual(['gmail', 'graph', 'smtp_imap']);
    const tokens = async () => 'token';
    for (const provider of ['gmail', 'graph'] as const) {
      const c = createConnector(mailbox({ provider }), deps({ tokens }), ['send', 'sync', 'folders']);
      expect(c).toMatchObject({ provider, kind: provider, sentProof: 'provider_copy' });
      expect(typeof c.watch).toBe('undefined'); // no push configured: polled
    }
    const pw = { kind: 'password' as const, username: 'rep@x.test', password: 'pw' };
    const both = { smtp: { host: '127.0.0.1', port: 2525, security: 'none' }, imap: { host: '127.0.0.1', port: 1143, security: 'none' } };
    const c = createConnector(mailbox({ settings: both }), deps({ credential: pw }), ['send', 'sync', 'folders']);
    expect(c).toMatchObject({ provider: 'smtp_imap', kind: 'smtp', sentProof: 'provider_copy' });
    expect(typeof c.watch).toBe('function'); // IMAP IDLE
  });

  it('says what is missing instead of building a connector that cannot work', () => {
    const pw = { kind: 'password' as const, username: 'rep@x.test', password: 'pw' };
    const smtp = { smtp: { host: '127.0.0.1', port: 2525, security: 'none' } };
    const need = (m: MailboxRow, d: ConnectorDeps, needs: Ability[]) => configError(() => createConnector(m, d, needs));
    expect(need(mailbox(), deps({ credential: pw }), ['send'])).toBe('CONFIG_INVALID'); // no smtp settings
    expect(need(mailbox({ settings: smtp }), deps(), [])).toBe('CONFIG_INVALID'); // no credential
    expect(need(mailbox({ settings: { ...smtp, serverSavesSent: false } }), deps({ credential: pw }), ['send'])).toBe('CONFIG_INVALID'); // no imap for the copy
    expect(need(mailbox({ settings: { smtp: { host: '', port: 0, security: 'plain' } } }), deps({ credential: pw }), [])).toBe('INVALID_INPUT');
    expect(need(mailbox({ provider: 'gmail' }), deps(), [])).toBe('CONFIG_INVALID'); // no token provider
    expect(need(mailbox({ provider: 'pigeon' as never }), deps(), [])).toBe('CONFIG_INVALID');
    expect(need(mailbox({ provider: 'toString' as never }), deps(), [])).toBe('CONFIG_INVALID'); // not a provider, though every object has it
    // An OAuth grant on an SMTP/IMAP mailbox in a process without a token source: nothing to sign in with.
    expect(need(mailbox({ settings: smtp }), connectorDeps(mailbox(), { kind: 'oauth', accessToken: 'at' }, { clock: systemClock, random }), [])).toBe('CONFIG_INVALID');

    // A part the settings do not allow is reported by lacks, and only a role that needs it is refused.
    const sendOnly = createConnector(mailbox({ settings: smtp }), deps({ credential: pw }), ['send']);
    expect(sendOnly.lacks('send')).toBeNull();
    expect(sendOnly.lacks('sync')).toBe('mailbox rep@x.test has no IMAP server in its settings');
    expect(() => createConnector(mailbox({ settings: smtp }), deps({ credential: pw }), ['sync'])).toThrow(/no IMAP server/);
    expect(() => sendOnly.pull(null)).toThrow(/cannot be synced: mailbox rep@x.test has no IMAP server/);
  });

  it('gives a token provider only to a mailbox with an OAuth grant, from the process token source', () => {
    const asked: string[] = [];
    const setup = { tokens: (m: MailboxRow) => (asked.push(m.id), async () => 'at'), baseUrls: { gmail: 'http://127.0.0.1:1' } };
    const pw = connectorDeps(mailbox(), { kind: 'password', username: 'u', password: 'p' }, { clock: systemClock, random }, setup);
    expect(pw.tokens).toBeUndefined();
    expect(pw.baseUrls).toEqual({ gmail: 'http://127.0.0.1:1' });
    const oauth = connectorDeps(mailbox(), { kind: 'oauth', accessToken: 'at' }, { clock: systemClock, random }, setup);
    expect(typeof oauth.tokens).toBe('function');
    expect(asked).toEqual([mailbox().id]);
  });

  it('builds an SMTP/IMAP connector from mailbox.settings and the vault credential, and it sends', async () => {
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
    const t = createConnector(mailbox({ settings: { smtp: { host: '127.0.0.1', port, security: 'none' } } }), deps({ credential: { kind: 'password', username: 'rep-login', password: 'pw' } }), ['send']);
    const id = '<r1@x.test>';
    const out = await t.send(Buffer.from(`Message-ID: ${id}\r\nSubject: hi\r\n\r\nhello\r\n`), { from: 'rep@x.test', to: ['lead@y.test'] }, { messageId: id });
    await t.close();
    expect(out).toMatchObject({ kind: 'accepted', providerId: 'ABC', sentCopy: 'server' });
    expect(got.join('')).toContain('hello');
  });
});
