import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { createSmtpTransport } from '../connectors/smtp-imap/smtp-transport.ts';
import { PENDING_KEYWORD, type SentFolderCopy } from '../connectors/outcomes.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, resetMailBed } from '../../../test/mail/mailbed.ts';
import { appendToSent } from './append-to-sent.ts';
import { withImap } from './connect.ts';

/**
 * The Sent folder since an instant (SmtpTransport.sentSince → list-sent-since.ts), what
 * `cadenza reconcile-sent` reads after a restore, against the bed's Dovecot: only copies stored
 * since the instant (SINCE is a whole day wide on the server), a pending copy told apart, the
 * recipients and subject read from the envelope.
 */
const USER = 'sync66@inbox.test';
const PASS = 'pass';

describeMailBed('the Sent folder since an instant over IMAP on the bed', () => {
  const tag = randomBytes(4).toString('hex');
  const account = { endpoint: bedEndpoint('imap'), username: USER, auth: { kind: 'password' as const, password: PASS } };
  const transport = createSmtpTransport({ smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), username: USER, auth: { kind: 'password', password: PASS }, serverSavesSent: true }, { clock: systemClock });
  const raw = (id: string, to: string) => Buffer.from([`From: ${USER}`, `To: ${to}`, `Subject: Step ${tag}`, `Message-ID: ${id}`, '', 'hi', ''].join('\r\n'));

  beforeAll(async () => {
    await resetMailBed([USER]);
  }, 60_000);
  afterAll(async () => {
    await transport.close();
  });

  it('lists the copies stored since the instant, each with its Message-ID, recipients, subject and whether it is pending', async () => {
    const now = Date.now();
    await withImap(account, async (c) => {
      // Earlier today (the server's SINCE matches it, the INTERNALDATE filter does not).
      await appendToSent(c, raw(`<old-${tag}@inbox.test>`, 'a@prospects.test'), { sentAt: new Date(now - 10 * 60_000) });
      await appendToSent(c, raw(`<new-${tag}@inbox.test>`, 'b@prospects.test'), { sentAt: new Date(now) });
      await appendToSent(c, raw(`<pending-${tag}@inbox.test>`, 'c@prospects.test'), { sentAt: new Date(now), keywords: [PENDING_KEYWORD] });
    });
    const copies: SentFolderCopy[] = [];
    const r = await transport.sentSince!(now - 60_000, async (page) => void copies.push(...page));
    expect(r, JSON.stringify(r)).toEqual({ status: 'ok', copies: 2, withoutMessageId: 0 });
    expect(copies.map((c) => [c.messageId, c.to, c.subject, c.pending])).toEqual([
      [`<new-${tag}@inbox.test>`, ['b@prospects.test'], `Step ${tag}`, false],
      [`<pending-${tag}@inbox.test>`, ['c@prospects.test'], `Step ${tag}`, true],
    ]);
    for (const c of copies) expect(Math.abs(c.sentAt! - now)).toBeLessThan(2_000);
  }, 30_000);

  it('a server it cannot reach is an answer, never "nothing was sent"', async () => {
    // 5569: a loopback port nothing listens on (this test's own range).
    const t = createSmtpTransport({ smtp: bedEndpoint('smtp', 'none'), imap: { ...bedEndpoint('imap'), port: 5569 }, username: USER, auth: { kind: 'password', password: PASS }, serverSavesSent: true }, { clock: systemClock });
    try {
      expect(await t.sentSince!(Date.now() - 60_000, async () => undefined)).toMatchObject({ status: 'unavailable', copies: 0 });
    } finally {
      await t.close();
    }
  }, 30_000);
});
