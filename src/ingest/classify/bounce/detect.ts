import { headerValue, type ParsedMail } from '../../types.ts';

/**
 * Is this a non-delivery report at all? Structure answers first (an RFC 3464 report part);
 * without it, evidence from three places has to agree, because each alone is common in ordinary
 * mail: a system sender (MAILER-DAEMON, postmaster, "Mail Delivery Subsystem"), a failure
 * subject ("Undeliverable: …"), and failure phrases in the report's own text, not in quoted
 * history. A person forwarding or quoting a bounce has a personal sender and quotes it.
 */

const SYSTEM_SENDER = /^(mailer-daemon|mailer_daemon|post_master|no-?reply|maildaemon|mail-daemon|mailerdaemon|postmaster|mail\.?delivery|mdaemon|bounces?|nobody|daemon|root|mail|smtp|returned|failure|notify|mailadmin|mail-router|mmdf|majordomo|mailman-bounces)(\+[^@]*)?@/i;
const SYSTEM_NAME = /\b(mail delivery (sub)?system|mail delivery service|mailer[- ]daemon|postmaster|mail administrator|mail system|mail transport|delivery (status )?notification|mail delivery|system administrator|microsoft outlook|mail delivery subsystem|internet mail delivery|mailer|administrator|mail gateway|mail server|postmaster@)\b/i;

const FAILURE_SUBJECT = /(undeliver|undelivered|non[- ]?deliver|returned mail|return(ed)? to sender|delivery (status )?notification|delivery (failure|failed|problem|report|error)|failure notice|fail(ed|ure)? (delivery|notice)|mail delivery (failed|failure|system)|could not (be )?(deliver|send)|not (been )?delivered|message (not delivered|delivery (failed|failure))|delivery has failed|warning: could not send|mail system error|nondeliverable|unzustellbar|nicht zustellbar|non recapitabile|non remis|no entregado|não entregue|niedostarczalna|returned|rejected|delayed mail|delivery delayed|mail error|bounce|unable to deliver|message you sent|ndr|error sending|problem delivering|mail failure|postmaster|mensaje no entregado|échec de la remise|zustellung fehlgeschlagen|配信不能|未達|エラー|メール|退信|系统退信)/i;

const FAILURE_PHRASE = /(could not be delivered|couldn't be delivered|was not delivered|wasn't delivered|cannot be delivered|can't be delivered|not be delivered|undeliverable|delivery (to the following|has failed|failed|failure|to the following recipient)|permanent(ly)? (fatal )?(error|failure)|permanent failure|fatal errors?|user unknown|unknown user|no such (user|mailbox|recipient)|mailbox (unavailable|not found|full|is full)|the following (addresses|recipients?|message)|message could not|failed to deliver|unable to deliver|i'm sorry to (have to )?inform you|this is the mail system at host|i wasn't able to deliver|remote host said|smtp error from remote|transcript of session|diagnostic-code|final-recipient|delivery status notification|returned to (you|the sender)|message you sent|bounced|rejected (your|the) message|was rejected|did not reach|couldn't deliver|could not deliver|hi\. this is the qmail-send program|not a member of|only members|not allowed to post|loop alert|mail loop|loop detected|duplicated message-id|is not a valid|address rejected|over quota|quota exceeded|recipient address rejected|unrouteable|unroutable|host unknown|could not be sent|retry timeout exceeded|has been delayed|delivery attempts will continue|giving up|not reachable|mail delivery failed|the original message was received|message not delivered|your message (to|was|has|could|did|cannot|wasn't|couldn't)|non remis|zustellung|nicht zugestellt|konnte nicht|non è stato|no se pudo|não foi possível|配信|送信できません|届きません|宛先|退信|失败)/i;

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
  const nullSender = mail.returnPath === '' || /^\s*<\s*>\s*$/.test(headerValue(mail, 'return-path') ?? '') || (mail.from !== null && from === '');
  // Mailing-list managers (fml, Mailman, Majordomo) answer from the list's -admin/-owner address.
  const listManager = /^(owner-[^@]+|[^@]+-(admin|owner|request|bounces))@/i.test(from);
  const sender = nullSender || listManager || SYSTEM_SENDER.test(from) || SYSTEM_SENDER.test(mail.returnPath ?? '') || SYSTEM_NAME.test(name);
  if (sender) signals.push('system sender');
  if (FAILURE_SUBJECT.test(mail.subject)) signals.push('failure subject');
  const phrases = new Set([...report.slice(0, 20_000).matchAll(new RegExp(FAILURE_PHRASE.source, 'gi'))].map((m) => m[0].toLowerCase()));
  if (phrases.size) signals.push(`failure phrases (${[...phrases].slice(0, 3).join(', ')})`);
  if (headerValue(mail, 'x-failed-recipients')) signals.push('X-Failed-Recipients');
  const has = (s: string) => signals.some((x) => x.startsWith(s));
  // A person answering in a thread may talk about failed deliveries; only a report part would
  // make their message a bounce.
  const personalReply = !sender && (mail.inReplyTo !== null || mail.references.length > 0);
  const isBounce =
    !personalReply &&
    (has('X-Failed-Recipients') ||
    (sender && (has('failure subject') || phrases.size > 0)) ||
    (has('failure subject') && phrases.size >= 2) ||
    phrases.size >= 4);
  return { isBounce, signals };
}
