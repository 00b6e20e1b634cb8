import { describe, expect, it } from 'vitest';
import { parseMail } from '../../parse/parse-mail.ts';
import { detectBounce } from './index.ts';

/** A message from header lines and a body, CRLF-free: what an MTA would hand us. */
const raw = (headers: string[], body: string) => `${headers.join('\n')}\n\n${body}`;
const bounceOf = async (text: string) => detectBounce(await parseMail(text));

const DSN = (status: string, action: string, diagnostic: string) =>
  raw(
    [
      'From: MAILER-DAEMON@mx.example.org (Mail Delivery System)',
      'To: rep@cadenza.test',
      'Subject: Undelivered Mail Returned to Sender',
      'Return-Path: <>',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
    ],
    [
      '--b1',
      'Content-Type: text/plain',
      '',
      'This is the mail system at host mx.example.org.',
      '',
      '--b1',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.org',
      '',
      'Final-Recipient: rfc822; Prospect@Example.com',
      `Action: ${action}`,
      `Status: ${status}`,
      `Diagnostic-Code: smtp; ${diagnostic}`,
      '',
      '--b1',
      'Content-Type: message/rfc822',
      '',
      'Message-ID: <step1.abc@cadenza.test>',
      'From: rep@cadenza.test',
      'To: prospect@example.com',
      'Subject: Quick question',
      '',
      'Hi',
      '--b1--',
      '',
    ].join('\n'),
  );

describe('RFC 3464 delivery status notifications', () => {
  it('reads recipient, status, reply code, class and the original Message-ID', async () => {
    const c = await bounceOf(DSN('5.1.1', 'failed', '550 5.1.1 <prospect@example.com>: Recipient address rejected: User unknown'));
    expect(c?.label).toBe('bounce');
    expect(c?.bounce).toMatchObject({
      recipient: 'prospect@example.com',
      status: '5.1.1',
      replyCode: 550,
      hardSoft: 'hard',
      bounceClass: 'user_unknown',
      originalMessageId: '<step1.abc@cadenza.test>',
    });
  });

  it('takes a mailbox-full 4.2.2 as soft', async () => {
    const c = await bounceOf(DSN('4.2.2', 'failed', '452 4.2.2 Mailbox full'));
    expect(c?.bounce).toMatchObject({ status: '4.2.2', hardSoft: 'soft', bounceClass: 'mailbox_full' });
  });

  it('reports a delay notice as a soft bounce and a delivered notice as a delivery report', async () => {
    const delayed = await bounceOf(DSN('4.4.1', 'delayed', '421 4.4.1 Connection timed out'));
    expect(delayed).toMatchObject({ label: 'bounce', bounce: { hardSoft: 'soft' } });
    const delivered = await bounceOf(DSN('2.0.0', 'delivered', '250 2.0.0 OK'));
    expect(delivered?.label).toBe('delivery_report');
    expect(delivered?.bounce).toBeUndefined();
  });

  it('prefers the detailed code in the diagnostic to a generic Status field', async () => {
    const c = await bounceOf(DSN('5.0.0', 'failed', '550 5.7.1 Message rejected as spam by Content Filtering'));
    expect(c?.bounce).toMatchObject({ status: '5.7.1', bounceClass: 'blocked' });
  });

  it('takes a read receipt (MDN) for automatic mail, not a bounce', async () => {
    const mdn = raw(
      ['From: prospect@example.com', 'To: rep@cadenza.test', 'Subject: Read: Quick question', 'Content-Type: multipart/report; report-type=disposition-notification; boundary="m"'],
      '--m\nContent-Type: text/plain\n\nYour message was displayed.\n--m\nContent-Type: message/disposition-notification\n\nFinal-Recipient: rfc822; prospect@example.com\nDisposition: manual-action/MDN-sent-manually; displayed\n--m--\n',
    );
    expect((await bounceOf(mdn))?.label).toBe('auto_generated');
  });
});

describe('bounces written as prose', () => {
  it('qmail: the address, then the remote answer', async () => {
    const c = await bounceOf(
      raw(
        ['From: MAILER-DAEMON@mail.example.net', 'To: rep@cadenza.test', 'Subject: failure notice'],
        "Hi. This is the qmail-send program at mail.example.net.\nI'm afraid I wasn't able to deliver your message to the following addresses.\nThis is a permanent error; I've given up. Sorry it didn't work out.\n\n<jane.doe@example.com>:\n192.0.2.1 does not like recipient.\nRemote host said: 550 5.1.1 <jane.doe@example.com>: Recipient address rejected: User unknown in virtual mailbox table\nGiving up on 192.0.2.1.\n\n--- Below this line is a copy of the message.\n\nTo: jane.doe@example.com\nFrom: rep@cadenza.test\n",
      ),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'jane.doe@example.com', status: '5.1.1', hardSoft: 'hard', bounceClass: 'user_unknown' });
  });

  it('Exim with two recipients: each gets its own answer', async () => {
    const c = await bounceOf(
      raw(
        ['From: Mail Delivery System <Mailer-Daemon@mx.example.org>', 'To: rep@cadenza.test', 'Subject: Mail delivery failed: returning message to sender', 'X-Failed-Recipients: full@example.jp, gone@example.jp'],
        'This message was created automatically by mail delivery software.\n\nA message that you sent could not be delivered to one or more of its\nrecipients. This is a permanent error. The following address(es) failed:\n\n  full@example.jp\n    SMTP error from remote mail server after RCPT TO:<full@example.jp>:\n    host mx.example.jp [192.0.2.153]: 552 5.2.2 <full@example.jp>... Mailbox full\n  gone@example.jp\n    SMTP error from remote mail server after RCPT TO:<gone@example.jp>:\n    host mx.example.jp [192.0.2.153]: 550 5.1.1 <gone@example.jp>... User Unknown\n\n------ This is a copy of the message, including all the headers. ------\n\nTo: full@example.jp, gone@example.jp\n',
      ),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'full@example.jp', recipients: ['full@example.jp', 'gone@example.jp'], status: '5.2.2', bounceClass: 'mailbox_full' });
  });

  it('infers the status from the words when the report has none (sisimai-style reason → code)', async () => {
    const c = await bounceOf(
      raw(
        ['From: postmaster@example.net', 'To: rep@cadenza.test', 'Subject: Returned mail: see transcript for details'],
        'The original message was received at Mon, 1 Jun 2026 10:00:00 GMT\n\n   ----- The following addresses had permanent fatal errors -----\n<someone@example.net>\n    (reason: Mailbox over quota)\n',
      ),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'someone@example.net', status: '5.2.2', hardSoft: 'hard', bounceClass: 'mailbox_full' });
    expect(c?.reason).toMatch(/inferred/);
  });

  it('Exchange NDR: the address paragraph, then the reason paragraph', async () => {
    const c = await bounceOf(
      raw(
        ['From: Microsoft Outlook <postmaster@example.onmicrosoft.com>', 'To: rep@cadenza.test', 'Subject: Undeliverable: Quick question'],
        "Delivery has failed to these recipients or groups:\n\nold.employee@example.com\n\nThe email address you entered couldn't be found. Please check the recipient's email address and try to resend the message.\n\nDiagnostic information for administrators:\n\nRemote Server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'\n",
      ),
    );
    expect(c?.bounce).toMatchObject({ recipient: 'old.employee@example.com', status: '5.1.10', hardSoft: 'hard', bounceClass: 'user_unknown' });
  });

  it('Amazon SES bounce notifications (JSON in an SNS envelope)', async () => {
    const inner = JSON.stringify({ notificationType: 'Bounce', bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'x@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }] }, mail: { messageId: 'abc-123' } });
    const c = await bounceOf(raw(['From: AWS Notifications <no-reply@sns.amazonaws.com>', 'To: rep@cadenza.test', 'Subject: AWS Notification Message'], JSON.stringify({ Type: 'Notification', Message: inner })));
    expect(c?.bounce).toMatchObject({ recipient: 'x@example.com', status: '5.1.1', hardSoft: 'hard', originalMessageId: '<abc-123>' });
  });
});

describe('not bounces (hard negatives)', () => {
  it('a person writing "Undeliverable" in the subject', async () => {
    const c = await bounceOf(raw(['From: Dana Prospect <dana@example.com>', 'To: rep@cadenza.test', 'Subject: Re: Undeliverable packages', 'In-Reply-To: <step1.abc@cadenza.test>'], 'Hi, our warehouse marks some parcels as undeliverable, can your tool help with that?\n\nDana'));
    expect(c).toBeNull();
  });

  it('a person quoting a bounce they received', async () => {
    const c = await bounceOf(
      raw(
        ['From: Dana Prospect <dana@example.com>', 'To: rep@cadenza.test', 'Subject: Re: Quick question'],
        'I tried to forward this to my colleague but got the message below, can you resend?\n\n> Delivery has failed to these recipients or groups:\n> colleague@example.com\n> The email address you entered couldn\'t be found.\n> Remote Server returned \'550 5.1.1 User unknown\'\n',
      ),
    );
    expect(c).toBeNull();
  });

  it('a person forwarding a bounce they received, pasted without quote marks', async () => {
    const c = await bounceOf(
      raw(
        ['From: Dana Prospect <dana@example.com>', 'To: rep@cadenza.test', 'Subject: FW: Undeliverable: Quick question'],
        "Is this you?\n\nFrom: Microsoft Outlook <postmaster@example.com>\nSent: Monday, June 1, 2026 10:00\nSubject: Undeliverable: Quick question\n\nDelivery has failed to these recipients or groups:\ncolleague@example.com\nThe email address you entered couldn't be found.\nRemote Server returned '550 5.1.1 User unknown'\n",
      ),
    );
    expect(c).toBeNull();
  });

  it('an ordinary notification from a no-reply sender', async () => {
    const c = await bounceOf(raw(['From: no-reply@calendar.example.com', 'To: rep@cadenza.test', 'Subject: Meeting accepted'], 'Dana accepted your invitation for Tuesday.'));
    expect(c).toBeNull();
  });
});
