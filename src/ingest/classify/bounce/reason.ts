import type { BounceClass } from '../../types.ts';

/**
 * Why a delivery failed, from the remote server's words first and the status code second: the
 * words are more specific ("mailbox full" under a generic 5.0.0; "user unknown" under 5.7.1 from
 * servers that hide unknown users behind a policy code).
 */

/** Phrases per class, lower-case text; checked in this order (the first match wins). */
const PHRASES: Array<[BounceClass, RegExp]> = [
  // The sender's address, not the recipient's, was refused: "Sender address rejected" must not
  // read as "address rejected" (user unknown) below.
  ['policy', /\b(sender (address |domain )?(rejected|denied|refused|verify failed|not allowed|is not allowed)|domain of sender address|bad sender|sender's (system )?address|sender verify|sender verification failed|mail from .{0,80}(rejected|refused|denied))/],
  [
    'mailbox_full',
    /\b(mail ?box (is )?full|mailbox exceeds allowed size|full mailbox|mailbox (size limit exceeded|over quota|exceeded|would exceed)|over (the )?(allowed )?quota|quota (exceeded|violation|exceed)|exceeded (its|their|the)? ?(mailbox |storage |disk )?(quota|storage allocation|disk space)|(is|are|user|account) (is )?over (disk )?quota|insufficient (disk|system) (space|storage)|not enough (disk |storage )?space|disk ?quota|no space left|mailfolder is full|too much mail data|has too many messages|boite du destinataire pleine|postfach voll|casella piena|buzón lleno|容量(が|を)?(超|オーバー)|quota)\b/,
  ],
  [
    'message_too_large',
    /\b(message (size |length )?(exceeds|is too (big|large)|too (big|large))|too (big|large) for|size (limit|exceeds)|exceeds (the )?(maximum|max|fixed|size|message size)|message size|mesg too big|maximum (message )?size|mail size|larger than the (current )?(system )?limit|maximum allowed size)/,
  ],
  [
    'user_disabled',
    /\b(account (has been |is |was )?(disabled|deactivated|suspended|inactive|expired|locked|closed|frozen|blocked|discontinued)|mailbox (is |has been |was )?(disabled|inactive|suspended|deactivated|closed|frozen)|user (account )?(is )?(disabled|suspended|inactive|deactivated|expired)|address (is )?(disabled|deactivated|inactive|no longer (active|in use|valid))|no longer (active|in use|available|accepts mail|valid|exists?)|mailbox currently suspended|has been disabled|not (an )?active|inactive (account|user|mailbox)|dormant|has moved|moved to|(deactivated|disabled|suspended|inactive|closed) (mail ?box|account|user|address)|mailbox unavailable.*disabled|is unavailable.*(disabled|locked))/,
  ],
  [
    'domain_not_found',
    /\b(host (or domain name )?(not found|unknown)|unknown (host|domain)|no such domain|domain (name )?(not found|does not exist|doesn't exist|unknown|must exist|is not reachable)|name or service not known|(unroutable|unrouteable) (mail )?(address|domain)|domain (lookup|resolution) failed|no mx|null mx|dns (error|failure|lookup)|mx (record )?(not found|lookup)|host not found|cannot resolve|could not resolve|non-?existent domain|nxdomain|domain name not found|not a registered domain|[a-z0-9-]+(\.[a-z0-9-]+)+\.? does ?n[o']t exist)/,
  ],
  [
    'user_unknown',
    /\b(user(name)? (is )?(unknown|not found|does ?n[o']t exist|not exist|not known|missing|invalid)|unknown (user|recipient|mailbox|local ?part|address|e-?mail address)|(no such|invalid|bad|unknown|nonexistent|non-existent) (user|recipient|mailbox|address|person|account|local)|(mailbox|recipient|address|account|addressee|user|e-?mail address|email account)( name)?( \S+)? (does ?n[o']t|did not|doesnt) exist|(mailbox|recipient|address|user|account) (is )?(not found|unknown|unavailable|invalid|not valid|not present|not registered)|no (mailbox|account|user)( by that name| here| found)?|not (a )?(valid|known|local) (user|recipient|mailbox|address)|is not a valid|user doesn't have|does not exist|not listed in|not in (my )?(validrcptto|list of valid)|badrcptto|address (rejected|unknown|not present)|unrecognized (user|address)|resolver\.adr\.recipnotfound|recipnotfound|user ?unknown|no existe|utilisateur inconnu|destinataire inconnu|unbekannt|nicht vorhanden|gibt es nicht|nessun utente|存在しない|not our customer|unknown or illegal alias|wasn't found|was not found|can't find|could not be found|isn't a valid|invalid mailbox|mailbox not found|no account|unknown in (virtual|local|relay) (mailbox|recipient|alias)|account is unavailable|recipient rejected|couldn't be found|invalid final delivery userid|no mail ?box|bad[_ ]recipient|check if (the )?address is correct|name is not recognized|not a registered (gateway )?user|unknown or invalid)/,
  ],
  [
    'relay_denied',
    /\b(as a relay|not been configured to (let|relay)|relay(ing)? (access )?(denied|not permitted|prohibited|not allowed)|not (permitted|allowed) to relay|unable to relay|we do not relay|relaying (is )?(denied|not allowed)|not a gateway|not in my list of allowed rcpthosts|no relaying|relay not permitted|isn't allowed to relay)/,
  ],
  [
    'blocked',
    /\b(spam|blacklist|black ?list|blocklist|block ?list|blocked|rbl|dnsbl|spamhaus|spamcop|barracuda|sorbs|junk ?mail|unsolicited|reputation|listed (at|in|on)|banned|rejected (due to|because of|for) (policy|spam)|bulk mail|content filter|reverse dns|ptr record|rdns|dynamic ip|too many (connections|messages|recipients|mails)|rate limit|throttl|try again later|refused to talk|connection refused|not accepting (mail|connections)|abuse|suspicious|uribl|surbl|junkmail|phish|malicious|virus|infected|malware|looks like spam|considered spam|classified as spam|marked as spam|high probability of being spam)/,
  ],
  [
    'policy',
    /\b(policy|dmarc|spf|dkim|authenticat|not authorized|unauthori[sz]ed|denied|prohibited|refused|rejected|not allowed|forbidden|restricted|security|tls|starttls|encryption|sender (address )?(rejected|verify|verification)|verification failed|content (rejected|not accepted)|attachment|mime|rfc ?5322|rfc ?2822|header|not compliant|syntax|message (has been )?rejected|delivery not authorized|senderid|sender id|filter)/,
  ],
  [
    'network',
    /\b(timed? ?out|time-?out|connection (timed out|lost|reset|dropped|closed)|could not connect|unable to connect|can't connect|no route to host|network (is )?unreachable|host unreachable|too many hops|mail loop|loop(s)? (back|detected)|routing loop|retry time(out)? (not reached|exceeded)|delivery time expired|could not be delivered (with|within)|has been delayed|expired|gave up|giving up|unable to deliver.*for \d+ (days|hours)|lost connection|transient failure|temporary failure|deferred|retry timeout exceeded|did not accept our requests to connect|will be retried|have been failing|failed \d+ attempts|not reachable)/,
  ],
];

/** RFC 3463 subject/detail → class, for text that names no reason. */
function classOfStatus(status: string): BounceClass | null {
  const [, subj, detail] = status.split('.');
  const sd = `${subj}.${detail}`;
  switch (sd) {
    case '1.1':
    case '1.0':
    case '1.3':
      return 'user_unknown';
    case '1.2':
    case '1.10':
    case '4.4':
      return 'domain_not_found';
    case '1.7':
    case '1.8':
      return 'policy';
    case '1.6':
    case '2.1':
    case '7.13':
    case '7.17':
      return 'user_disabled';
    case '2.2':
    case '3.1':
      return 'mailbox_full';
    case '2.3':
    case '3.4':
    case '7.16':
      return 'message_too_large';
    case '7.1':
      return 'blocked';
    case '4.1':
    case '4.2':
    case '4.0':
    case '4.6':
    case '4.7':
    case '4.8':
      return 'network';
  }
  if (subj === '7' || subj === '6') return 'policy';
  return null;
}

const SPECIFIC = new Set<BounceClass>(['user_unknown', 'user_disabled', 'mailbox_full', 'message_too_large', 'domain_not_found']);

export function bounceClassOf(diagnostic: string, status: string | null): BounceClass {
  // Addresses are not words: "userunknown@example.org" or "spam-filter@…" say nothing about why.
  const text = diagnostic.toLowerCase().replace(/[^\s<>"'(),;:[\]]{1,64}@[a-z0-9.-]{1,255}/g, ' ');
  // A specific detail in the code (5.1.1, 5.2.2) is trusted over generic words like "rejected".
  const fromStatus = status ? classOfStatus(status) : null;
  if (fromStatus && fromStatus !== 'blocked' && fromStatus !== 'policy' && fromStatus !== 'network') {
    const fromText = firstPhraseClass(text);
    // Servers answer 5.1.1 for a disabled account, 5.2.2 for an oversize message and 5.1.10
    // (null MX) for an unknown user: specific words decide.
    if (fromText && SPECIFIC.has(fromText)) return fromText;
    return fromStatus;
  }
  return firstPhraseClass(text) ?? fromStatus ?? 'other';
}

function firstPhraseClass(text: string): BounceClass | null {
  for (const [cls, re] of PHRASES) if (re.test(text)) return cls;
  return null;
}

/** The status a class implies when the report states none (RFC 3463 meanings). */
export function statusOfClass(cls: BounceClass, temporary: boolean): string {
  const c = temporary ? '4' : '5';
  switch (cls) {
    case 'user_unknown':
      return `${c}.1.1`;
    case 'domain_not_found':
      return `${c}.1.2`;
    case 'mailbox_full':
      return `${c}.2.2`;
    case 'message_too_large':
      return `${c}.3.4`;
    case 'user_disabled':
      return `${c}.2.1`;
    case 'relay_denied':
      return `${c}.7.1`;
    case 'blocked':
      return `${c}.7.1`;
    case 'policy':
      return `${c}.7.0`;
    case 'network':
      return `${c}.4.7`;
    case 'other':
      return `${c}.0.0`;
  }
}
