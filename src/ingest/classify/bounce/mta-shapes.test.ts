import { describe, expect, it } from 'vitest';
import { parseMail } from '../../parse/parse-mail.ts';
import { detectBounce } from './index.ts';
import { UNSPLIT_SMS_BOUNCE } from '../../../../test/fixtures/mail/unsplit-multipart.ts';

/**
 * Bounces as different MTAs write them, each written here for the shape it has (not copied from
 * a corpus): report blocks in unusual order or case, a report whose MIME boundary does not match
 * its header, and prose-only bounces whose one code is in a sentence.
 */

const raw = (headers: string[], body: string[]) => `${headers.join('\n')}\n\n${body.join('\n')}\n`;
const bounceOf = async (text: string) => detectBounce(await parseMail(text));
const DAEMON = ['From: Mail Delivery System <MAILER-DAEMON@mx1.example.net>', 'To: rep@cadenza.test', 'Return-Path: <>', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'];

const report = (boundaryInHeader: string, boundaryInBody: string, dsn: string[]) =>
  raw(
    [...DAEMON, 'Subject: Undelivered Mail Returned to Sender', `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundaryInHeader}"`, 'MIME-Version: 1.0'],
    [
      'This is a MIME-encapsulated message.',
      '',
      `--${boundaryInBody}`,
      'Content-Description: Notification',
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'This is the mail system at host mx1.example.net.',
      '',
      "I'm sorry to have to inform you that your message could not",
      'be delivered to one or more recipients.',
      '',
      `--${boundaryInBody}`,
      'Content-Description: Delivery report',
      'Content-Type: message/delivery-status',
      '',
      ...dsn,
      '',
      `--${boundaryInBody}`,
      'Content-Type: text/rfc822-headers',
      '',
      'Message-ID: <s1.42@cadenza.test>',
      'From: rep@cadenza.test',
      'To: dana.kim@example.com',
      'Subject: Quick question',
      '',
      `--${boundaryInBody}--`,
    ],
  );

const PER_MESSAGE = ['Reporting-MTA: dns; mx1.example.net', 'Arrival-Date: Tue, 3 Nov 2026 10:11:58 +0000', ''];

describe('delivery-status blocks in the shapes MTAs write', () => {
  it('reads a recipient block that starts with Action:', async () => {
    const c = await bounceOf(report('B1', 'B1', [...PER_MESSAGE, 'Action: failed', 'Final-Recipient: rfc822; dana.kim@example.com', 'Status: 5.2.2', 'Diagnostic-Code: smtp; 552 5.2.2 Mailbox full']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.2.2', bounceClass: 'mailbox_full' });
  });

  it('reads Action and Status split from Final-Recipient by a blank line', async () => {
    const c = await bounceOf(report('B1', 'B1', [...PER_MESSAGE, 'Final-Recipient: rfc822; dana.kim@example.com', '', 'Action: failed', 'Status: 5.1.1', 'Diagnostic-Code: smtp; 550 Requested action not taken: mailbox unavailable']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1', hardSoft: 'hard' });
    expect(c?.reason).not.toContain('inferred');
  });

  it('reads a block of Action and Status with no recipient field (the address in the notice)', async () => {
    const c = await bounceOf(report('B1', 'B1', ['Reporting-MTA: dns; mx1.example.net', 'Action: failed', 'Status: 4.2.2', 'Diagnostic-Code: smtp; 452 4.2.2 Over quota <dana.kim@example.com>']));
    expect(c?.bounce).toMatchObject({ status: '4.2.2', hardSoft: 'soft' });
  });

  it('reads lower-case field names', async () => {
    const c = await bounceOf(report('B1', 'B1', ['reporting-mta: dns; mx1.example.net', '', 'final-recipient: rfc822;Dana.Kim@example.com', 'action: failed', 'status: 5.1.1', 'diagnostic-code: smtp; 550 5.1.1 user unknown']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1', replyCode: 550 });
  });

  it('reads a Status whose code follows other words ("Status: smtp; 5.1.1 (unknown user)")', async () => {
    const c = await bounceOf(report('B1', 'B1', [...PER_MESSAGE, 'Final-Recipient: rfc822; dana.kim@example.com', 'Action: failed', 'Status: smtp; 5.1.1 (unknown user)']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1' });
  });

  it('reads a report whose fields are indented', async () => {
    const c = await bounceOf(report('B1', 'B1', ['   Reporting-MTA: dns; mx1.example.net', '', '   Final-Recipient: rfc822; dana.kim@example.com', '   Action: failed', '   Status: 5.1.1', '   Diagnostic-Code: smtp; 550 5.1.1 user unknown', '      (in reply to RCPT TO command)']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1' });
    expect(c?.bounce?.diagnostic).toContain('in reply to RCPT TO');
  });

  it('reads a report part labelled text/delivery-status', async () => {
    const text = report('B1', 'B1', [...PER_MESSAGE, 'Final-Recipient: rfc822; dana.kim@example.com', 'Action: failed', 'Status: 5.1.1']).replace('Content-Type: message/delivery-status', 'Content-Type: text/delivery-status');
    expect((await bounceOf(text))?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1' });
  });

  it('reads the report of a multipart whose boundary differs from its header (the Status is read, not inferred)', async () => {
    const c = await bounceOf(report('0F3A.1730628718/mx1.example.net', '0F3A.1730628000/mx1.example.net', [...PER_MESSAGE, 'Final-Recipient: rfc822; dana.kim@example.com', 'Action: failed', 'Status: 5.1.1', 'Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist.']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1', hardSoft: 'hard', bounceClass: 'user_unknown', originalMessageId: '<s1.42@cadenza.test>' });
    expect(c?.reason).not.toContain('inferred');
  });

  it('keeps a 4.0.0 Status of a report whose boundary differs (soft, not an inferred hard 5.0.0)', async () => {
    const c = await bounceOf(report('X.1', 'X.2', [...PER_MESSAGE, 'Final-Recipient: rfc822; dana.kim@example.com', 'Action: failed', 'Status: 4.0.0', 'Diagnostic-Code: smtp; 421 Service refused, please try later']));
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '4.0.0', hardSoft: 'soft' });
  });
});

describe('prose bounces whose only code is in a sentence', () => {
  it('qmail: the address, then "Remote host said: 550 5.1.1 User unknown"', async () => {
    const c = await bounceOf(
      raw(['From: MAILER-DAEMON@mail.example.org', 'To: rep@cadenza.test', 'Subject: failure notice', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        'Hi. This is the qmail-send program at mail.example.org.',
        "I'm afraid I wasn't able to deliver your message to the following addresses.",
        "This is a permanent error; I've given up. Sorry it didn't work out.",
        '',
        '<dana.kim@example.com>:',
        '198.51.100.7 does not like recipient.',
        'Remote host said: 550 5.1.1 User unknown',
        'Giving up on 198.51.100.7.',
        '',
        '--- Below this line is a copy of the message.',
        '',
        'Message-ID: <s1.42@cadenza.test>',
        'To: dana.kim@example.com',
      ]),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.com', status: '5.1.1', replyCode: 550, bounceClass: 'user_unknown' });
  });

  it('a gateway notice that names no address: the code in the sentence is the status', async () => {
    const c = await bounceOf(
      raw(['From: postmaster@relay.example.com', 'To: rep@cadenza.test', 'Subject: Delivery Status Notification (Failure)', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        'Your message could not be delivered.',
        '',
        'The remote server answered: 550 5.1.1 User unknown',
        '',
        'No further attempts will be made.',
      ]),
    );
    expect(c?.label).toBe('bounce');
    expect(c?.bounce).toMatchObject({ status: '5.1.1', replyCode: 550, hardSoft: 'hard', bounceClass: 'user_unknown' });
  });

  it('Exchange NDR in prose: "Remote Server returned \'550 5.1.10 RESOLVER.ADR.RecipientNotFound\'"', async () => {
    const c = await bounceOf(
      raw(['From: Microsoft Outlook <postmaster@contoso.example>', 'To: rep@cadenza.test', 'Subject: Undeliverable: Quick question', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        'Delivery has failed to these recipients or groups:',
        '',
        'Dana Kim (dana.kim@contoso.example)',
        "The email address you entered couldn't be found. Please check the recipient's email address and try to resend the message.",
        '',
        'Diagnostic information for administrators:',
        '',
        'Generating server: MBX01.contoso.example',
        '',
        'dana.kim@contoso.example',
        "Remote Server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'",
      ]),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@contoso.example', status: '5.1.10', hardSoft: 'hard', bounceClass: 'user_unknown' });
  });

  it('Exim: the address, then its indented SMTP error', async () => {
    const c = await bounceOf(
      raw(['From: Mail Delivery System <Mailer-Daemon@mx.example.co.uk>', 'To: rep@cadenza.test', 'Subject: Mail delivery failed: returning message to sender', 'X-Failed-Recipients: dana.kim@example.co.uk', 'Auto-Submitted: auto-replied', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        'This message was created automatically by mail delivery software.',
        '',
        'A message that you sent could not be delivered to one or more of its',
        'recipients. This is a permanent error. The following address(es) failed:',
        '',
        '  dana.kim@example.co.uk',
        '    host mx.example.co.uk [203.0.113.9]',
        '    SMTP error from remote mail server after RCPT TO:<dana.kim@example.co.uk>:',
        '    550 5.1.1 <dana.kim@example.co.uk>: Recipient address rejected: User unknown in virtual mailbox table',
      ]),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@example.co.uk', status: '5.1.1', replyCode: 550, bounceClass: 'user_unknown' });
  });

  it('Yahoo-like wording: "Sorry, we were unable to deliver your message"', async () => {
    const c = await bounceOf(
      raw(['From: MAILER-DAEMON@yahoo.example', 'To: rep@cadenza.test', 'Subject: Failure Notice', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        'Sorry, we were unable to deliver your message to the following address.',
        '',
        '<dana.kim@mail.example>:',
        '554: delivery error: dd This user doesn\'t have a mail.example account (dana.kim@mail.example) [0] - mta1003.mail.example',
        '',
        '--- Below this line is a copy of the message.',
      ]),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'dana.kim@mail.example', replyCode: 554, hardSoft: 'hard', bounceClass: 'user_unknown' });
  });

  it('French provider: "Votre message n\'a pas pu être remis" with the code in the sentence', async () => {
    const c = await bounceOf(
      raw(['From: Service de messagerie <MAILER-DAEMON@smtp.exemple.fr>', 'To: rep@cadenza.test', 'Subject: Message non remis', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        "Votre message n'a pas pu être remis au destinataire suivant :",
        '',
        'claire.martin@exemple.fr',
        'Le serveur distant a répondu : 550 5.1.1 Adresse inconnue / User unknown',
      ]),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'claire.martin@exemple.fr', status: '5.1.1', hardSoft: 'hard', bounceClass: 'user_unknown' });
  });

  it('German provider: "konnte nicht zugestellt werden", mailbox full as a 452 in prose', async () => {
    const c = await bounceOf(
      raw(['From: Mail Delivery System <MAILER-DAEMON@mx.beispiel.de>', 'To: rep@cadenza.test', 'Subject: Unzustellbar: Kurze Frage', 'Date: Tue, 3 Nov 2026 10:12:00 +0000'], [
        'Ihre Nachricht konnte nicht zugestellt werden an:',
        '',
        'jonas.weber@beispiel.de',
        'Grund: 452 4.2.2 Postfach voll / mailbox full',
      ]),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'jonas.weber@beispiel.de', status: '4.2.2', hardSoft: 'soft', bounceClass: 'mailbox_full' });
  });
  it('an SMS gateway in a multipart no boundary splits: "550 - Requested action not taken: no such user here"', async () => {
    const c = await bounceOf(UNSPLIT_SMS_BOUNCE);
    expect(c?.bounce).toMatchObject({ recipient: '5551234567@sms.example.net', replyCode: 550, hardSoft: 'hard', bounceClass: 'user_unknown', status: '5.1.1' });
  });
});

