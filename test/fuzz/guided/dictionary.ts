/**
 * Tokens the mutators insert (AFL's dictionaries): the words a parser branches on, which random
 * bytes almost never spell. One list per kind of input.
 */
export const MAIL_TOKENS: readonly string[] = [
  // structure
  '\r\n', '\n', '\r\n\r\n', '\r\n ', '\r\n\t', ': ', ';', '=', '"', '\\', '(', ')', '<', '>', '@', ',',
  '--', '--b', '--b--', 'boundary=b', 'boundary="b"', 'boundary=""', "boundary*0=b; boundary*1=c",
  'MIME-Version: 1.0', 'Content-Type: ', 'multipart/mixed', 'multipart/alternative', 'multipart/related',
  'multipart/report; report-type=delivery-status', 'multipart/report; report-type=feedback-report',
  'message/rfc822', 'message/delivery-status', 'message/global-delivery-status', 'message/feedback-report',
  'text/rfc822-headers', 'message/disposition-notification', 'text/plain', 'text/html', 'text/calendar',
  'application/octet-stream', 'Content-Disposition: attachment; filename=', 'format=flowed; delsp=yes',
  'Content-Transfer-Encoding: ', 'base64', 'quoted-printable', '7bit', '8bit', 'binary', 'x-uuencode',
  'charset=', 'utf-8', 'us-ascii', 'iso-8859-1', 'iso-8859-15', 'windows-1252', 'iso-2022-jp', 'shift_jis',
  'koi8-r', 'gb2312', 'big5', 'utf-7', 'utf-16', "utf-8''%C3%A9", '=?UTF-8?B?', '=?utf-8?Q?', '?=', '=?iso-8859-1?q?Caf=E9?=',
  '=?UTF-8?B?w7xiZXI=?=', '=?=', '=3D', '=\r\n', '=E9', '=C3=A9',
  // DSN (RFC 3464) and ARF (RFC 5965)
  'Reporting-MTA: dns; mx.example.com', 'Final-Recipient: rfc822; ', 'Original-Recipient: rfc822;', 'X-Actual-Recipient: ',
  'Action: failed', 'Action: delayed', 'Action: delivered', 'Action: relayed', 'Action: expanded',
  'Status: 5.1.1', 'Status: 4.2.2', 'Status: 5.7.1', 'Status: 2.0.0', 'Status: 5.0.910', 'Status: smtp; 550',
  'Diagnostic-Code: smtp; 550 5.1.1 ', 'Remote-MTA: dns; ', 'Last-Attempt-Date: ', 'Arrival-Date: ',
  'Feedback-Type: abuse', 'Feedback-Type: opt-out', 'User-Agent: ', 'Original-Mail-From: ', 'Original-Rcpt-To: ',
  '550 5.1.1 <user@example.com>... User unknown', '552 Mailbox full', '421 Try again later', 'Delivery has failed',
  'Undelivered Mail Returned to Sender', 'Mail delivery failed', 'MAILER-DAEMON', 'postmaster',
  // auto replies (RFC 3834) and lists
  'Auto-Submitted: auto-replied', 'Auto-Submitted: auto-generated', 'Auto-Submitted: no', 'Precedence: bulk',
  'Precedence: list', 'X-Autoreply: yes', 'X-Autorespond: ', 'X-Auto-Response-Suppress: All', 'List-Id: ', 'List-Unsubscribe: <mailto:',
  'Out of Office', 'Automatic reply: ', 'Abwesenheitsnotiz', 'I will be back on ', 'returning on Monday', 'until 12/03/2026',
  // threading
  'Message-ID: <', 'In-Reply-To: <', 'References: <', 'Thread-Index: ', 'Subject: Re: ', 'Subject: AW: ', 'Re[2]: ', 'Fwd: ',
  '<a@b>', '<"quoted local"@example.com>', '<a@[127.0.0.1]>', '(comment)', 'From: ', 'To: ', 'Date: ',
];

export const TEXT_TOKENS: readonly string[] = [
  ' ', '\n', '\n\n', '.', '!', '?', ',', "'", '"', '>', '-', 'please', 'pls', "don't", 'do not', 'never', 'not',
  'unsubscribe', 'unsub', 'opt out', 'opt-out', 'remove me', 'remove', 'stop', 'STOP', 'take me off', 'from your list',
  'stop emailing me', 'no more emails', 'leave me alone', 'delete my data', 'cease all communication',
  'abmelden', 'austragen', 'tragen Sie mich aus', 'keine weiteren E-Mails', 'désabonner', 'ne plus me contacter',
  'darme de baja', 'no me escribas más', 'cancellatemi', 'descadastrar', 'uitschrijven', 'avregistrera', 'wypisz mnie',
  'rates', 'page design', 'thanks', 'thank you', 'I have unsubscribed', 'non-stop', 'stop by our booth', '\u00a0', '\u200b', 'İ', 'ß',
];

export const JSON_TOKENS: readonly string[] = [
  '{', '}', '[', ']', ':', ',', '"', '\\"', '\\u0000', 'null', 'true', 'false', '0', '-1', '1e309', '18446744073709551616', '""',
  '"id"', '"threadId"', '"labelIds"', '"internalDate"', '"historyId"', '"raw"', '"payload"', '"headers"', '"name"', '"value"',
  '"messages"', '"nextPageToken"', '"resultSizeEstimate"', '"history"', '"messagesAdded"', '"message"', '"emailAddress"', '"expiration"',
  '"error"', '"errors"', '"reason"', '"status"', '"code"', '"innerError"', '"@odata.nextLink"', '"@odata.deltaLink"', '"@removed"',
  '"internetMessageId"', '"conversationId"', '"parentFolderId"', '"isDraft"', '"sentDateTime"', '"receivedDateTime"', '"subject"',
  '"expirationDateTime"', '"2026-11-29T10:00:00Z"', '"2026-13-45T99:99:99Z"', '"rateLimitExceeded"', '"TooManyRequests"',
  '"syncStateNotFound"', '"Retry after 2026-11-29T12:52:16.364Z"', '"UkVGRVJFTkNFUw"', '"__proto__"', '"constructor"',
];
