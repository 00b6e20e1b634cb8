import { headerValue, type ParsedMail } from '../../types.ts';

/**
 * Is this a non-delivery report at all? Structure answers first (an RFC 3464 report part);
 * without it, evidence from three places has to agree, because each alone is common in ordinary
 * mail: a system sender (MAILER-DAEMON, postmaster, "Mail Delivery Subsystem"), a failure
 * subject ("Undeliverable: …"), and failure phrases in the report's own text, not in quoted
 * history. A person forwarding or quoting a bounce has a personal sender and quotes it.
 */

// Mailboxes that exist to report delivery failures.
const REPORTING_SENDER = /^(mailer-daemon|mailer_daemon|maildaemon|mail-daemon|mailerdaemon|mdaemon|postmaster|post_master|mail\.?delivery(system|subsystem)?|mmdf)(\+[^@]*)?(@|$)/i;
const REPORTING_NAME = /\b(mail delivery (sub)?system|mail delivery service|mailer[- ]daemon|postmaster|mail administrator|internet mail delivery|mail delivery)\b/i;
// Machine senders that also send ordinary notifications: they count only with more evidence.
const MACHINE_SENDER = /^(no-?reply|donotreply|do-not-reply|bounces?|nobody|daemon|root|mail|smtp|returned|failure|notify|notifications?|mailadmin|mail-router|majordomo|mailman-bounces)(\+[^@]*)?@/i;
const MACHINE_NAME = /\b(mail system|mail transport|delivery (status )?notification|system administrator|microsoft outlook|mailer|administrator|mail gateway|mail server)\b/i;

const FAILURE_SUBJECT = /(undeliver|undelivered|non[- ]?deliver|returned mail|return(ed)? to sender|delivery (status )?notification|delivery (failure|failed|problem|report|error)|failure notice|fail(ed|ure)? (delivery|notice)|mail delivery (failed|failure|system)|could not (be )?(deliver|send)|not (been )?delivered|message (not delivered|delivery (failed|failure))|delivery has failed|warning: could not send|mail system error|nondeliverable|unzustellbar|nicht zustellbar|non recapitabile|non remis|no entregado|não entregue|niedostarczalna|returned|rejected|delayed mail|delivery delayed|mail error|bounce|unable to deliver|message you sent|ndr|error sending|problem delivering|mail failure|postmaster|mensaje no entregado|échec de la remise|zustellung fehlgeschlagen|配信不能|未達|エラー|メール|退信|系统退信)/i;

const FAILURE_PHRASE = /(could not be delivered|couldn't be delivered|was not delivered|wasn't delivered|cannot be delivered|can't be delivered|not be delivered|undeliverable|delivery (to the following|has failed|failed|failure|to the following recipient)|permanent(ly)? (fatal )?(error|failure)|permanent failure|fatal errors?|user unknown|unknown user|no such (user|mailbox|recipient)|mailbox (unavailable|not found|full|is full)|the following (addresses|recipients?)|message could not|failed to deliver|unable to deliver|i'm sorry to (have to )?inform you|this is the mail system at host|i wasn't able to deliver|remote host said|smtp error from remote|transcript of session|diagnostic-code|final-recipient|delivery status notification|returned to (you|the sender)|message you sent|bounced|rejected (your|the) message|was rejected|did not reach|couldn't deliver|could not deliver|hi\. this is the qmail-send program|not a member of|only members|not allowed to post|loop alert|mail loop|loop detected|duplicated message-id|is not a valid|address rejected|over quota|quota exceeded|recipient address rejected|unrouteable|unroutable|host unknown|could not be sent|retry timeout exceeded|has been delayed|delivery attempts will continue|giving up|not reachable|mail delivery failed|the original message was received|message not delivered|your (message|mail|e-?mail) (to \S+ )?(could not|couldn't|cannot|can't|was not|wasn't|did not|didn't|has not|hasn't) (be )?(been )?(deliver|reach|sent)|non remis|zustellung|nicht zugestellt|konnte nicht|non è stato|no se pudo|não foi possível|配信|送信できません|届きません|宛先|退信|失败)/i;

/** The body text a report is read from: the text without lines quoted with '>'. */
export function unquotedText(mail: ParsedMail): string {
  // Some MTAs put the notice in a text/plain attachment (and some write its type badly).
  const parts = mail.parts.filter((p) => /^text\/plain\b/.test(p.mimeType) && p.text).map((p) => p.text!);
  return [mail.text, ...parts]
    .join('\n\n')
    .split('\n')
    .filter((l) => !/^\s*>/.test(l))
    .join('\n');
}

export interface BounceEvidence {
  isBounce: boolean;
  /** Which signals agreed, for the stored reason. */
  signals: string[];
}

export function bounceEvidence(mail: ParsedMail, report: string): BounceEvidence {
  const signals: string[] = [];
  const from = mail.from?.address ?? '';
  const name = mail.from?.name ?? '';
  const returnPath = mail.returnPath ?? '';
  const nullSender = mail.returnPath === '' || /^[ \t]*<[ \t]*>[ \t]*$/.test(headerValue(mail, 'return-path') ?? '') || (mail.from !== null && from === '');
  // Mailing-list managers (fml, Mailman, Majordomo) answer from the list's -admin/-owner address.
  const listManager = /^(owner-[^@]+|[^@]+-(admin|owner|request|bounces))@/i.test(from);
  const reporting = nullSender || listManager || REPORTING_SENDER.test(from) || REPORTING_SENDER.test(returnPath) || REPORTING_NAME.test(name);
  const machine = !reporting && (MACHINE_SENDER.test(from) || MACHINE_SENDER.test(returnPath) || MACHINE_NAME.test(name));
  if (reporting) signals.push('system sender');
  if (machine) signals.push('machine sender');
  const subject = FAILURE_SUBJECT.test(mail.subject);
  if (subject) signals.push('failure subject');
  const phrases = new Set([...report.slice(0, 20_000).matchAll(new RegExp(FAILURE_PHRASE.source, 'gi'))].map((m) => m[0].toLowerCase()));
  if (phrases.size) signals.push(`failure phrases (${[...phrases].slice(0, 3).join(', ')})`);
  const xFailed = headerValue(mail, 'x-failed-recipients') !== null;
  if (xFailed) signals.push('X-Failed-Recipients');
  // A person answering or forwarding may talk about (or paste) a failed delivery; only a report
  // part would make their message a bounce.
  const answersOrForwards = mail.inReplyTo !== null || mail.references.length > 0 || /^\s*(re|aw|sv|vs|antw|fwd?|fw|tr|wg|rv|doorst)\s*:/i.test(mail.subject);
  const personalReply = !reporting && !machine && answersOrForwards;
  const isBounce =
    !personalReply &&
    (xFailed ||
      (reporting && (subject || phrases.size > 0)) ||
      (machine && ((subject && phrases.size > 0) || phrases.size >= 2)) ||
      (subject && phrases.size >= 2) ||
      phrases.size >= 4);
  return { isBounce, signals };
}
