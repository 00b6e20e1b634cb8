/**
 * RFC 3463 enhanced status codes and RFC 5321 reply codes found in free diagnostic text.
 *
 * Remote servers write both in many shapes ("550 5.1.1 <x@y>... User unknown", "550-5.7.1 …",
 * "#5.1.1", "(5.2.2)"), and the same text often holds several (a transcript, a version number,
 * an IP address). The choice between them follows the order of preference that bounce parsers
 * settled on in practice (sisimai's smtp/status Prefer): a detailed code beats X.0.0, and
 * vague codes (4.4.7 "expired", 5.3.x system, X.5.x protocol) give way to a specific one.
 */

const STATUS_IN_TEXT = /(?<![\d.vV])([245])\.([0-7])\.(\d{1,3})(?![\d])/g;
const IP_ADDRESS = /\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,7}\b/gi;

/** IP addresses hold digit groups that read like codes ("192.5.1.1", "2606:2800:220:…"). */
function withoutAddresses(text: string): string {
  return text.replace(IP_ADDRESS, ' ');
}

/**
 * The most telling enhanced status code in `text`; `classHint` ('4', '5') keeps only that class.
 * A failure report's 2.x.x codes are transcript noise ("250 2.1.5 Ok" before "451 4.3.0"), so
 * `failuresOnly` drops them.
 */
export function findStatus(text: string, classHint?: string | null, failuresOnly = false): string | null {
  if (text.length < 5) return null;
  const clean = withoutAddresses(text);
  const found: string[] = [];
  let vague: string | null = null;
  for (const m of clean.matchAll(STATUS_IN_TEXT)) {
    if (classHint && m[1] !== classHint) continue;
    if (failuresOnly && m[1] === '2') continue;
    const code = `${m[1]}.${m[2]}.${m[3]}`;
    // X.0.0 and 4.4.7 say almost nothing: used only when nothing better is written.
    if ((m[2] === '0' && m[3] === '0') || code === '4.4.7') {
      vague ??= code;
      continue;
    }
    found.push(code);
  }
  if (vague) found.push(vague);
  if (found.length === 0) return null;
  return found.reduce<string | null>((a, b) => preferStatus(a, b, null), null);
}

/**
 * Which of two codes describes the failure better: `given` (the DSN's Status field or the code
 * found first) or `inText` (found in the diagnostic). `replyCode` breaks a class disagreement.
 */
export function preferStatus(given: string | null, inText: string | null, replyCode: number | string | null): string | null {
  if (!given) return inText;
  if (!inText) return given;
  const r = replyCode === null ? '' : String(replyCode);
  if (r && given[0] !== inText[0]) {
    if (r[0] === given[0]) return given;
    if (r[0] === inText[0]) return inText;
  }
  if (given === inText) return given;
  const givenX00 = given.slice(1, 5) === '.0.0';
  const textX00 = inText.slice(1, 5) === '.0.0';
  if (givenX00) return textX00 ? given : inText;
  if (given.includes('.0') && !inText.includes('.0')) return inText;
  if (textX00) return given;
  if (given === '4.4.7' || given === '4.7.0') return inText;
  if (given.startsWith('5.3.')) return inText;
  if (/^.\.5\.[1245]$/.test(given)) return inText;
  if (given === '5.1.1') return inText.slice(1, 3) === '.0' || inText.startsWith('5.5.') ? given : inText;
  if (given === '5.1.3' && inText.startsWith('5.7.')) return inText;
  return given;
}

const REPLY_CODES: Record<string, number[]> = {
  '5': [550, 552, 553, 551, 521, 525, 502, 520, 523, 524, 530, 533, 534, 535, 538, 555, 556, 554, 557, 500, 501, 503, 504],
  '4': [421, 450, 451, 452, 422, 430, 432, 453, 454, 455, 456, 458, 459],
  '2': [211, 214, 220, 221, 235, 250, 251, 252, 253, 354],
};

/** An SMTP reply code written in `text` (not part of a longer number); `classHint` keeps one class. */
export function findReplyCode(text: string, classHint?: string | null): number | null {
  if (text.length < 3 || /x-unix/i.test(text)) return null;
  const classes = classHint && REPLY_CODES[classHint] ? [classHint] : ['5', '4', '2'];
  const padded = ` ${withoutAddresses(text)} `;
  for (const c of classes) {
    for (const code of REPLY_CODES[c]!) {
      const re = new RegExp(`(?<![\\d./])${code}(?![\\d./])`);
      if (re.test(padded)) return code;
    }
  }
  return null;
}

/** A 4xx/5xx class stated in words or codes, for a failure with no usable status. */
export function looksTemporary(text: string): boolean {
  const code = findReplyCode(text);
  const s = findStatus(text, null, true) ?? (code === null ? null : String(code));
  if (s?.startsWith('4')) return true;
  if (s?.startsWith('5')) return false;
  return /\b(temporar(y|ily)|persistent|try again later|will (be )?retr(y|ied))\b/i.test(text);
}
