/**
 * Bounces written as prose instead of (or besides) an RFC 3464 report: qmail, Exim, Postfix and
 * Sendmail without DSN, Exchange NDRs, webmail providers. They share a shape, whatever the MTA:
 * a notice, then the failed address with the remote server's answer in the same paragraph, then
 * a copy of the original message below a marker. The reader relies on that shape, not on one MTA.
 */

/** Lines that start the returned copy of the original message (everything below is not the report). */
const ORIGINAL_MARKER = new RegExp(
  [
    String.raw`^[\s>]*-{2,}\s*(original message|original message follows|forwarded message|message original|ursprüngliche nachricht|ursprungliche nachricht|message d'origine|mensaje original|mensagem original|messaggio originale|originele bericht)`,
    String.raw`^[\s>]*-*\s*(this is a copy of|below this line is a copy|the (original|first \d+ lines of the) message|original message (header|text)s?|returned (mail|message)|unsent message)\b.*(follows|below|headers?|message)`,
    String.raw`^[\s>]*-{2,}\s*(the header of the original message|headers? of the original message|the original message was|a copy of the original message)`,
    String.raw`^[\s>]*-{3,}\s*(unsent message below|message text follows|rfc822 message|returned message)\b`,
    String.raw`^[\s>]*original message (headers?|follows)`,
    String.raw`^content-type:\s*message/(rfc822|partial)`,
    String.raw`^------ this is a copy of the message, including all the headers`,
    String.raw`^-{3,}\s*元のメッセージ`,
    String.raw`^[\s>]*(message )?headers? (of the original message )?follows?\.?\s*$`,
  ].join('|'),
  'im',
);

/** The report part of a bounce's text: up to the copy of the original message. */
export function reportText(text: string): string {
  const m = ORIGINAL_MARKER.exec(text);
  return m ? text.slice(0, m.index) : text;
}

/** What follows the original-message marker, if any. */
export function returnedText(text: string): string | null {
  const m = ORIGINAL_MARKER.exec(text);
  return m ? text.slice(m.index) : null;
}

const ADDRESS = /(?:^|[\s<("'\[:;,=])((?:"[^"\s]+"|[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+)@(?:\[[0-9.]+\]|#?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+))(?=$|[\s>)"'\].:;,!?])/g;

/** Every address written in `text`, in order, lower-cased, trailing dot removed. */
export function addressesIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ADDRESS)) out.push(m[1]!.toLowerCase().replace(/\.+$/, ''));
  return out;
}

/** Mailboxes that report failures or belong to the sending side, never the failed recipient. */
const SYSTEM_LOCAL = /^(mailer-daemon|postmaster|mail-daemon|maildaemon|mailerdaemon|noreply|no-reply|abuse|bounces?|mdaemon|mail\.daemon)$/i;

export interface TextRecipient {
  recipient: string;
  /** The paragraph that names the recipient, whitespace squeezed. */
  diagnostic: string;
}

/**
 * Failed recipients named in the report text with the paragraph around each. `exclude` holds
 * the addresses of the bounce's own sender and addressee (the original sender), which reports
 * mention too ("your message to X from Y").
 */
export function textRecipients(report: string, exclude: Set<string>): TextRecipient[] {
  const paragraphs = report.replace(/\r/g, '').split(/\n[ \t]*\n/);
  // Rank 0: the paragraph carries the failure (an SMTP answer or failure words); 1: a plain
  // mention; 2: only in a header-like line ("To: x" of the summary of the original message).
  const best = new Map<string, { rank: number; order: number; diagnostic: string }>();
  let order = 0;
  for (let i = 0; i < paragraphs.length; i++) {
    const p = paragraphs[i]!;
    for (const address of addressesIn(p)) {
      const local = address.split('@')[0]!;
      if (exclude.has(address) || SYSTEM_LOCAL.test(local)) continue;
      if (isSenderLine(p, address)) continue;
      const diagnostic = withReason(paragraphs, i, address);
      const rank = isHeaderOnly(p, address) ? 2 : SMTP_ANSWER.test(diagnostic.replace(address, '')) || FAILURE_WORDS.test(diagnostic) ? 0 : 1;
      const known = best.get(address);
      if (!known) best.set(address, { rank, order: order++, diagnostic });
      else if (rank < known.rank) best.set(address, { rank, order: known.order, diagnostic });
    }
  }
  return [...best.entries()].sort(([, a], [, b]) => a.rank - b.rank || a.order - b.order).map(([recipient, { diagnostic }]) => ({ recipient, diagnostic }));
}

const FAILURE_WORDS = /\b(unknown|not (found|recognized|exist|reachable|delivered)|does ?n[o']t exist|invalid|rejected|refused|denied|full|quota|disabled|failed|failure|error|unable|couldn't|could not|can't|cannot|no such|unavailable|undeliverable|blocked)\b/i;

const SMTP_ANSWER = /(?<![\d.])[245]\d\d(?![\d.])|(?<![\d.])[245]\.\d{1,3}\.\d{1,3}(?![\d])/;

/**
 * The paragraph naming the recipient, and when it carries no SMTP answer, the following
 * paragraphs up to the first that does ("There was an error delivering your mail to <x>." then
 * the remote server's lines), stopping at a paragraph that names another address.
 */
function withReason(paragraphs: string[], i: number, address: string): string {
  const own = ownLines(paragraphs[i]!, address);
  if (SMTP_ANSWER.test(own.replace(address, ''))) return squeeze(own);
  const taken = [own];
  for (let j = i + 1; j < paragraphs.length && j <= i + 3; j++) {
    const p = paragraphs[j]!;
    if (addressesIn(p).some((a) => a !== address && !SYSTEM_LOCAL.test(a.split('@')[0]!))) break;
    taken.push(p);
    if (SMTP_ANSWER.test(p)) return squeeze(taken.join('\n'));
  }
  // No answer anywhere near: the address's paragraph, and the next when it holds only the address.
  const bare = own.replace(address, '').replace(/[<>:\s]/g, '').length < 12;
  return squeeze(bare && paragraphs[i + 1] ? `${own}\n${paragraphs[i + 1]}` : own);
}

/**
 * Webmail systems that reject for their own users list bare local parts under "the following
 * recipients:" ("exampleuser"); the domain is the reporting system's own.
 */
export function bareLocalRecipients(report: string, domain: string | null): TextRecipient[] {
  if (!domain) return [];
  const lines = report.replace(/\r/g, '').split('\n');
  const out: TextRecipient[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/following (recipients?|addresses|address\(es\)|users?)\b.*:\s*$/i.test(lines[i]!)) continue;
    for (let j = i + 1; j < lines.length && /^\s*[A-Za-z0-9._+-]{1,64}\s*$/.test(lines[j]!); j++) {
      out.push({ recipient: `${lines[j]!.trim().toLowerCase()}@${domain}`, diagnostic: squeeze(lines.slice(i, j + 1).join(' ')) });
    }
  }
  return out;
}

/**
 * Several recipients in one paragraph (Exim: each address, then its indented error): the lines
 * from this address's first line up to the line that names the next address.
 */
function ownLines(paragraph: string, address: string): string {
  const lines = paragraph.split('\n');
  // A line that starts with another address starts that address's entry; an address inside a
  // line ("after MAIL FROM:<x>", "generated from x") is part of this entry's text.
  const startsOther = (l: string) => {
    const a = /^[\s<"]*([^\s<>"@]+@[^\s<>":;,]+)/.exec(l)?.[1]?.toLowerCase().replace(/\.+$/, '');
    return a !== undefined && a !== address && a.includes('.') && !SYSTEM_LOCAL.test(a.split('@')[0]!);
  };
  if (!lines.some(startsOther)) return paragraph;
  const start = lines.findIndex((l) => l.toLowerCase().includes(address));
  if (start < 0) return paragraph;
  let end = start + 1;
  while (end < lines.length && !startsOther(lines[end]!)) end++;
  return lines.slice(start, end).join('\n');
}

/** The address belongs to the sending side: a From:/Reply-To:/Return-Path:/MAIL FROM line. */
function isSenderLine(paragraph: string, address: string): boolean {
  const lines = paragraph.split('\n').filter((l) => l.toLowerCase().includes(address));
  return lines.length > 0 && lines.every((l) => /^\s*(from|reply-to|return-path|sender|envelope-from|message-id|received)\s*:/i.test(l) || /\bmail from\s*:?\s*</i.test(l));
}

/** The address is only in header-like lines ("To: x", "Cc: x"), as in a summary of the original. */
function isHeaderOnly(paragraph: string, address: string): boolean {
  const lines = paragraph.split('\n').filter((l) => l.toLowerCase().includes(address));
  return lines.length > 0 && lines.every((l) => /^\s*(to|cc|bcc|x-[a-z-]+|subject|sent|date)\s*:/i.test(l));
}

export function squeeze(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
