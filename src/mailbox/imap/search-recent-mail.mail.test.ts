import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { createSmtpTransport } from '../connectors/smtp-imap/smtp-transport.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, mailBed, MAILBED_SCRIPT, resetMailBed } from '../../../test/mail/mailbed.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * The IMAP mailbox last look (SmtpTransport.recentMailFrom → search-recent-mail.ts on warm
 * connections) against the bed's Dovecot: what it finds, in INBOX and Junk, and the two server
 * behaviours it is built around: a folder already selected does not show mail delivered since
 * its last sync (hence the NOOP), and a connection the server dropped is replaced at once.
 */
const USER = 'sync56@inbox.test';
const PASS = 'pass';
const run = promisify(execFile);

describeMailBed('mailbox last look over IMAP on the bed', () => {
  const tag = randomBytes(4).toString('hex');
  const lead = `lead-${tag}@prospects.test`;
  const lmtp = nodemailer.createTransport({ host: mailBed.host, port: 10024, lmtp: true, secure: false, ignoreTLS: true } as Parameters<typeof nodemailer.createTransport>[0]);
  const transport = createSmtpTransport({ smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), username: USER, auth: { kind: 'password', password: PASS }, serverSavesSent: true }, { clock: systemClock });
  const deliver = (id: string, o: { from?: string; inReplyTo?: string } = {}) =>
    lmtp.sendMail({
      envelope: { from: o.from ?? lead, to: [USER] },
      raw: [`From: ${o.from ?? lead}`, `To: ${USER}`, `Subject: Re: hello ${tag}`, `Message-ID: ${id}`, ...(o.inReplyTo ? [`In-Reply-To: ${o.inReplyTo}`] : []), '', 'yes', ''].join('\r\n'),
    });

  beforeAll(async () => {
    await resetMailBed([USER]);
  }, 60_000);
  afterAll(async () => {
    await transport.close();
    lmtp.close();
  });

  it('finds mail from the lead delivered after the connections were warm (the NOOP syncs the view), and threaded mail from anyone', async () => {
    const since = Date.now() - 60_000;
    const ours = `<step1-${tag}@inbox.test>`;
    // Warm both connections: INBOX and Junk are now selected, with nothing from the lead.
    expect(await transport.recentMailFrom({ from: lead, threadedOn: [ours], since })).toEqual({ status: 'ok', messages: [] });
    await deliver(`<a-${tag}@prospects.test>`);
    await deliver(`<b-${tag}@else.test>`, { from: `colleague-${tag}@else.test`, inReplyTo: ours });
    await deliver(`<c-${tag}@else.test>`, { from: `stranger-${tag}@else.test` });
    const r = await transport.recentMailFrom({ from: lead, threadedOn: [ours], since });
    expect(r.status).toBe('ok');
    const got = r.status === 'ok' ? r.messages : [];
    expect(got.map((m) => m.messageId).sort()).toEqual([`<a-${tag}@prospects.test>`, `<b-${tag}@else.test>`]);
    for (const m of got) expect(m.key).toMatch(/^INBOX:\d+:\d+$/);
    // Mail received before `since` does not count.
    expect(await transport.recentMailFrom({ from: lead, threadedOn: [], since: Date.now() + 120_000 })).toEqual({ status: 'ok', messages: [] });
  }, 30_000);

  it('a connection the server dropped is replaced within the same look', async () => {
    await run('bash', [MAILBED_SCRIPT, 'doveadm', 'kick', USER], { timeout: 30_000 });
    const r = await transport.recentMailFrom({ from: lead, threadedOn: [], since: Date.now() - 60_000 });
    expect(r.status, JSON.stringify(r)).toBe('ok');
    expect(r.status === 'ok' && r.messages.length).toBe(1);
  }, 30_000);

  it('a server that cannot be reached is unavailable, never "nothing there"', async () => {
    const down = createSmtpTransport({ smtp: bedEndpoint('smtp', 'none'), imap: { ...bedEndpoint('imap'), port: 1 }, username: USER, auth: { kind: 'password', password: PASS }, serverSavesSent: true }, { clock: systemClock });
    const r = await down.recentMailFrom({ from: lead, threadedOn: [], since: Date.now() - 60_000 });
    expect(r.status).toBe('unavailable');
    await down.close();
  });
});
