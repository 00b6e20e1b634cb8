/**
 * Bounces written as prose instead of (or besides) an RFC 3464 report: qmail, Exim, Postfix and
 * Sendmail without DSN, Exchange NDRs, webmail providers. They share a shape, whatever the MTA:
 * a notice, then the failed address with the remote server's answer in the same paragraph, then
 * a copy of the original message below a marker. The reader relies on that shape, not on one MTA.
 */

/** Lines that start the returned copy of the original message (everything below is not the report). */
const ORIGINAL_MARKER = new RegExp(
  [
    String.raw`^[ \t>]*-{2,}[ \t]*(original message|original message follows|forwarded message|message original|ursprüngliche nachricht|ursprungliche nachricht|message d'origine|mensaje original|mensagem original|messaggio originale|originele bericht)`,
    String.raw`^[ \t>]*(?:-+[ \t]*)?(this is a copy of|below this line is a copy|the (original|first \d+ lines of the) message|original message (header|text)s?|returned (mail|message)|unsent message)\b.*(follows|below|headers?|message)`,
    String.raw`^[ \t>]*-{2,}[ \t]*(the header of the original message|headers? of the original message|the original message was|a copy of the original message)`,
    String.raw`^[ \t>]*-{3,}[ \t]*(unsent message below|message text follows|rfc822 message|returned message)\b`,
    String.raw`^[ \t>]*original message (headers?|follows)`,
    String.raw`^content-type:[ \t]*message/(rfc822|partial)`,
    String.raw`^------ this is a copy of the message, including all the headers`,
    String.raw`^-{3,}[ \t]*元のメッセージ`,
    String.raw`^[ \t>]*(message )?headers? (of the original message )?follows?\.?[ \t]*$`,
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

// Bounded parts (RFC 5321 limits: 64 octets local, 63 a label) keep the scan linear on hostile
// input such as a megabyte-long line of base64.
const ADDRESS = /(?:^|[\s<("'\[:;,=])((?:"[^"\s]{1,64}"|[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64})@(?:\[[0-9.]{7,15}\]|#?[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,10}))(?=$|[\s>)"'\].:;,!?])/g;

/** Every address written in `text`, in order, lower-cased, trailing dot removed. */
export function addressesIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ADDRESS)) out.push(m[1]!.toLowerCase().replace(/\.+$/, ''));
  return out;
}

/** Mailboxes that report failures or belong to the sending side, never the failed recipient. */
const SYSTEM_LOCAL = /^(mailer-daemon|postmaster|mail-daemon|maildaemon|mailerdaemon|noreply|no-reply|abuse|bounces?|mdaemon|mail\.daemon)$/i;

const MAX_REPORT = 64 * 1024;
const MAX_CANDIDATES = 100;

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
/** A paragraph of the report, split and indexed once: a report may name thousands of addresses. */
interface Paragraph {
  text: string;
  lines: string[];
  lower: string[];
  /** The address a line starts with (an entry of its own), else null. */
  leads: Array<string | null>;
  addresses: string[];
}

function paragraphOf(text: string): Paragraph {
  const lines = text.split('\n');
  const leads = lines.map((l) => {
    const a = /^[ \t<"]*([^\s<>"@]{1,64}@[^\s<>":;,]{1,255})/.exec(l)?.[1]?.toLowerCase().replace(/\.+$/, '');
    return a && a.includes('.') && !SYSTEM_LOCAL.test(a.split('@')[0]!) ? a : null;
  });
  return { text, lines, lower: lines.map((l) => l.toLowerCase()), leads, addresses: [...new Set(addressesIn(text))] };
}

export function textRecipients(report: string, exclude: Set<string>): TextRecipient[] {
  // Reports name their recipients near the top; a bounded prefix keeps hostile mail cheap.
  const paragraphs = report.slice(0, MAX_REPORT).replace(/\r/g, '').split(/\n[ \t]*\n/).map(paragraphOf);
  // Rank 0: the paragraph carries the failure (an SMTP answer or failure words); 1: a plain
  // mention; 2: only in a header-like line ("To: x" of the summary of the original message);
  // 3: a system mailbox (postmaster@…).
  const best = new Map<string, { rank: number; order: number; diagnostic: string }>();
  let order = 0;
  for (let i = 0; i < paragraphs.length; i++) {
    const p = paragraphs[i]!;
    for (const address of p.addresses) {
      if (exclude.has(address)) continue;
      const known = best.get(address);
      if ((!known && best.size >= MAX_CANDIDATES) || known?.rank === 0) continue;
      const mentions = p.lines.filter((_, k) => p.lower[k]!.includes(address));
      if (mentions.length && mentions.every(isSenderLine)) continue;
      const diagnostic = withReason(paragraphs, i, address);
      const headerOnly = mentions.length > 0 && mentions.every((l) => HEADER_LINE.test(l));
      // postmaster@ and friends are named as contacts far more often than they fail: last resort.
      const system = SYSTEM_LOCAL.test(address.split('@')[0]!);
      const rank = system ? 3 : headerOnly ? 2 : SMTP_ANSWER.test(diagnostic.replace(address, '')) || FAILURE_WORDS.test(diagnostic) ? 0 : 1;
      if (!known) best.set(address, { rank, order: order++, diagnostic });
      else if (rank < known.rank) best.set(address, { rank, order: known.order, diagnostic });
    }
  }
  return [...best.entries()].sort(([, a], [, b]) => a.rank - b.rank || a.order - b.order).map(([recipient, { diagnostic }]) => ({ recipient, diagnostic }));
}

const FAILURE_WORDS = /\b(unknown|not (found|recognized|exist|reachable|delivered)|does ?n[o']t exist|invalid|rejected|refused|denied|full|quota|disabled|failed|failure|error|unable|couldn't|could not|can't|cannot|no such|unavailable|undeliverable|blocked)\b/i;

const SMTP_ANSWER = /(?<![\d.])[245]\d\d(?![\d.])|(?<![\d.])[245]\.\d{1,3}\.\d{1,3}(?![\d])/;

/** The sending side: a From:/Reply-To:/Return-Path:/MAIL FROM line. */
function isSenderLine(line: string): boolean {
  return /^\s*(from|reply-to|return-path|sender|envelope-from|message-id|received)\s*:/i.test(line) || /\bmail from\s*(?::\s*)?</i.test(line);
}

/** A header-like line ("To: x", "Cc: x"), as in a summary of the original message. */
const HEADER_LINE = /^\s*(to|cc|bcc|x-[a-z-]+|subject|sent|date)\s*:/i;

/**
 * The paragraph naming the recipient, and when it carries no SMTP answer, the following
 * paragraphs up to the first that does ("There was an error delivering your mail to <x>." then
 * the remote server's lines), stopping at a paragraph that names another address.
 */
function withReason(paragraphs: Paragraph[], i: number, address: string): string {
  const own = ownLines(paragraphs[i]!, address);
  if (SMTP_ANSWER.test(own.replace(address, ''))) return squeeze(own);
  const taken = [own];
  for (let j = i + 1; j < paragraphs.length && j <= i + 3; j++) {
    const p = paragraphs[j]!;
    if (p.addresses.some((a) => a !== address && !SYSTEM_LOCAL.test(a.split('@')[0]!))) break;
    taken.push(p.text);
    if (SMTP_ANSWER.test(p.text)) return squeeze(taken.join('\n'));
  }
  // No answer anywhere near: the address's paragraph, and the next when it holds only the address.
  const bare = own.replace(address, '').replace(/[<>:\s]/g, '').length < 12;
  const next = paragraphs[i + 1]?.text;
  return squeeze(bare && next ? `${own}\n${next}` : own);
}

/**
 * Several recipients in one paragraph (Exim: each address, then its indented error): the lines
 * from this address's first line up to the line that starts with another address. An address
 * inside a line ("after MAIL FROM:<x>", "generated from x") is part of this entry's text.
 */
function ownLines(p: Paragraph, address: string): string {
  const startsOther = (k: number) => p.leads[k] !== null && p.leads[k] !== address;
  if (!p.leads.some((_, k) => startsOther(k))) return p.text;
  const start = p.lower.findIndex((l) => l.includes(address));
  if (start < 0) return p.text;
  let end = start + 1;
  while (end < p.lines.length && !startsOther(end)) end++;
  return p.lines.slice(start, end).join('\n');
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

export function squeeze(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
