/**
 * Test messages for the transports, written out by hand so that a test states every header the
 * provider acts on (Message-ID, In-Reply-To, References, Subject, recipients).
 */
export interface TestMessage {
  from: string;
  to: string[];
  cc?: string[];
  subject: string;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  body?: string;
  date?: Date;
}

export function rawMessage(m: TestMessage): Buffer {
  const lines = [
    `From: ${m.from}`,
    `To: ${m.to.join(', ')}`,
    ...(m.cc?.length ? [`Cc: ${m.cc.join(', ')}`] : []),
    `Subject: ${m.subject}`,
    `Date: ${(m.date ?? new Date(Date.UTC(2026, 0, 15, 9, 30))).toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: ${m.messageId}`,
    ...(m.inReplyTo ? [`In-Reply-To: ${m.inReplyTo}`] : []),
    ...(m.references?.length ? [`References: ${m.references.join(' ')}`] : []),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    m.body ?? `Hello,\r\n\r\nthis is ${m.messageId}.\r\n`,
  ];
  return Buffer.from(lines.join('\r\n'), 'utf8');
}
