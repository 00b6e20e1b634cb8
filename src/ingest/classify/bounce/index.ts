import { headerValue, type BounceDetails, type Classification, type ParsedMail } from '../../types.ts';
import { bounceEvidence, unquotedText } from './detect.ts';
import { parseDsn, type DsnRecipient } from './dsn.ts';
import { originalMessageId, originalRecipients } from './original.ts';
import { sesNotification } from './ses-notification.ts';
import { bounceClassOf, statusOfClass } from './reason.ts';
import { findReplyCode, findStatus, looksTemporary, preferStatus } from './status.ts';
import { addressesIn, bareLocalRecipients, reportText, squeeze, textRecipients } from './text.ts';

/**
 * Rung 2: bounces. An RFC 3464 report is read field by field; a prose bounce (most MTAs before
 * DSNs, and many still) is read from its shape (text.ts). Either way the failed recipient, the
 * status, the reply code and the diagnostic come out, and the status is inferred from the
 * diagnostic's words when the report states none.
 */

/** A bounce read from a report part (RFC 3464, SES JSON) versus one recognised from its prose. */
export const REPORT_CONFIDENCE = 0.99;
export const PROSE_CONFIDENCE = 0.9;

const REPORT = /multipart\/report/;
// text/delivery-status: what some MTAs labelled the report part before RFC 3464 settled on message/.
const DSN_PART = /^(?:message\/(?:delivery-status|global-delivery-status)|text\/delivery-status)$/;
const MDN = /report-type="?disposition-notification|^message\/disposition-notification/;

interface Failure {
  recipient: string | null;
  recipients: string[];
  diagnostic: string;
  dsnStatus: string | null;
  action: string;
}

export function detectBounce(mail: ParsedMail): Classification | null {
  if (MDN.test(mail.contentType) || mail.parts.some((p) => MDN.test(p.mimeType))) {
    return { label: 'auto_generated', confidence: 0.95, reason: 'disposition notification (RFC 8098 read receipt)', rung: 'bounce' };
  }
  const ses = sesNotification(mail.text);
  if (ses && ses.type !== 'Complaint' && ses.recipients.length) return fromSes(mail, ses);
  const body = unquotedText(mail);
  const report = reportText(body);
  const dsnText = mail.parts.filter((p) => DSN_PART.test(p.mimeType) && p.text).map((p) => p.text!).join('\n\n');
  const dsn = parseDsn(dsnText) ?? (/^[ \t]*(final|original)-recipient[ \t]*:/im.test(report) ? parseDsn(report) : null);
  const structural = (REPORT.test(mail.contentType) && /delivery-status/.test(mail.contentType)) || dsnText.length > 0;
  const evidence = bounceEvidence(mail, report);
  if (!structural && !dsn && !evidence.isBounce) return null;

  const f = failure(mail, dsn?.recipients ?? [], report);
  // Success-only reports are not failures. A delay notice is: the mail has not arrived and may
  // never; it is a soft bounce, which the retry policy turns hard if it persists.
  if (dsn && dsn.recipients.every((r) => ['delivered', 'relayed', 'expanded'].includes(r.action) || r.status?.startsWith('2.'))) {
    const what = dsn.recipients.map((r) => r.action).join(', ');
    return { label: 'delivery_report', confidence: 0.95, reason: `DSN reports ${what} for ${dsn.recipients[0]!.recipient ?? 'an unnamed recipient'}`, rung: 'bounce' };
  }
  const bounce = details(mail, f);
  const fromReport = structural || dsn !== null;
  return { label: 'bounce', confidence: fromReport ? REPORT_CONFIDENCE : PROSE_CONFIDENCE, reason: describe(f, bounce, fromReport ? 'DSN' : evidence.signals.join(' + ')), rung: 'bounce', bounce };
}

function failure(mail: ParsedMail, dsn: DsnRecipient[], report: string): Failure {
  const failed = dsn.filter((r) => r.action === 'failed' || r.action === '' || r.status?.startsWith('5') || r.status?.startsWith('4'));
  const own = new Set([...mail.to, ...mail.cc, ...(mail.from ? [mail.from] : [])].map((a) => a.address).filter(Boolean));
  const named = textRecipients(report, own);
  const inText = named.length ? named : bareLocalRecipients(report, mail.from?.address.split('@')[1] ?? null);
  if (failed.length) {
    const first = failed[0]!;
    // Postfix and others put the remote answer in the prose, not in Diagnostic-Code.
    const recipient = first.recipient ?? inText[0]?.recipient ?? null;
    const prose = inText.find((t) => t.recipient === recipient || t.recipient === first.originalRecipient)?.diagnostic ?? '';
    const recipients = unique(failed.map((r) => r.recipient).filter((r): r is string => r !== null));
    return { recipient, recipients: recipients.length ? recipients : recipient ? [recipient] : [], diagnostic: first.diagnostic ?? prose, dsnStatus: first.status, action: first.action };
  }
  const xfailed = headerValue(mail, 'x-failed-recipients');
  const listed = xfailed ? addressesIn(` ${xfailed.replace(/,/g, ' ')} `) : [];
  const candidates = listed.length ? listed : inText.length ? inText.map((t) => t.recipient) : originalRecipients(mail).filter((a) => !own.has(a));
  const recipient = candidates[0] ?? null;
  const paragraph = (recipient && inText.find((t) => t.recipient === recipient)?.diagnostic) || '';
  // The paragraph naming the address may carry no code while another paragraph of the notice
  // does ("Error message below: 550 - … no such user here", then "RCPT TO: x"): the report's
  // error lines then join it, so the code is read rather than inferred.
  const diagnostic = paragraph && (findReplyCode(paragraph) !== null || findStatus(paragraph, null, true) !== null) ? paragraph : squeeze(`${paragraph} ${errorLines(report)}`);
  return { recipient, recipients: unique(candidates), diagnostic, dsnStatus: null, action: dsn[0]?.action ?? '' };
}

/** Without a recipient paragraph: the lines of the report that carry an SMTP answer. */
function errorLines(report: string): string {
  const lines = report.split('\n').filter((l) => /\b[45]\d\d\b|\b[45]\.\d\.\d|error|fail|unknown|reject|denied|not exist|invalid|full|quota/i.test(l));
  return squeeze(lines.join(' ')).slice(0, 2000);
}

function details(mail: ParsedMail, f: Failure): BounceDetails {
  const diagnostic = squeeze(f.diagnostic).slice(0, 2000);
  const inText = findStatus(diagnostic, null, true);
  // The code in the text decides which reply code to look for (a 4.x.x DSN over "550 5.5.0 …").
  const replyCode = findReplyCode(diagnostic, (inText ?? f.dsnStatus)?.[0] ?? null);
  let status = preferStatus(f.dsnStatus, inText, replyCode);
  const bounceClass = bounceClassOf(`${diagnostic} ${f.dsnStatus ? '' : mail.subject}`, status);
  if (!status) {
    // Without a code, a report of a message the MTA gave up on is final (hard) unless its
    // words say the failure is temporary.
    const temporary = replyCode !== null && replyCode >= 400 ? replyCode < 500 : looksTemporary(diagnostic);
    status = statusOfClass(bounceClass, temporary);
  }
  return {
    recipient: f.recipient,
    recipients: f.recipients,
    status,
    replyCode,
    hardSoft: status.startsWith('4') ? 'soft' : 'hard',
    bounceClass,
    diagnostic: diagnostic || null,
    originalMessageId: originalMessageId(mail),
  };
}

function describe(f: Failure, d: BounceDetails, basis: string): string {
  const inferred = f.dsnStatus || (d.diagnostic && findStatus(d.diagnostic, null, true)) ? '' : ' (status inferred from the diagnostic)';
  return `${basis}: ${d.status}${inferred} ${d.bounceClass} for ${d.recipient ?? 'an unnamed recipient'}`;
}

function fromSes(mail: ParsedMail, ses: NonNullable<ReturnType<typeof sesNotification>>): Classification {
  const first = ses.recipients[0]!;
  if (ses.type === 'Delivery') return { label: 'delivery_report', confidence: 0.95, reason: `SES delivery notification for ${first.address}`, rung: 'bounce' };
  const f: Failure = { recipient: first.address, recipients: unique(ses.recipients.map((r) => r.address)), diagnostic: first.diagnostic ?? '', dsnStatus: first.status, action: first.action ?? 'failed' };
  const d = { ...details(mail, f), originalMessageId: ses.originalMessageId };
  return { label: 'bounce', confidence: REPORT_CONFIDENCE, reason: describe(f, d, `SES ${ses.subtype ?? ''} bounce notification`), rung: 'bounce', bounce: d };
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
