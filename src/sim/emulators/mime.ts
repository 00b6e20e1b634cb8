import PostalMime, { type Address } from 'postal-mime';

/**
 * The parts of an RFC 5322 message the emulators act on (threading, recipients, Message-ID),
 * read with postal-mime: what the providers read from the bytes we hand them.
 */
export interface ParsedMessage {
  /** '<id@host>' as written, or null. */
  messageId: string | null;
  inReplyTo: string | null;
  /** Message-IDs in References, in order. */
  references: string[];
  subject: string;
  from: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  /** Raw header values of every address header, to tell an empty header from a bad one. */
  rawRecipientHeaders: { to: string[]; cc: string[]; bcc: string[] };
  date: string | null;
  /** Every header in order, names as written, values as postal-mime gives them. */
  headers: Array<{ name: string; value: string }>;
}

export async function parseMessage(raw: Buffer): Promise<ParsedMessage> {
  const email = await PostalMime.parse(raw);
  const addrs = (list: Address[] | undefined): string[] => {
    const out: string[] = [];
    for (const a of list ?? []) {
      if (a.group) for (const m of a.group) out.push(m.address);
      else out.push(a.address);
    }
    return out.filter((x) => x !== '');
  };
  const rawOf = (key: string) => email.headers.filter((h) => h.key === key).map((h) => h.value);
  const from = email.from && !email.from.group ? email.from.address : null;
  return {
    messageId: email.messageId?.trim() || null,
    inReplyTo: email.inReplyTo?.trim() || null,
    references: msgIds(email.references ?? ''),
    subject: email.subject ?? '',
    from: from || null,
    to: addrs(email.to),
    cc: addrs(email.cc),
    bcc: addrs(email.bcc),
    rawRecipientHeaders: { to: rawOf('to'), cc: rawOf('cc'), bcc: rawOf('bcc') },
    date: email.date ?? null,
    headers: email.headers.map((h) => ({ name: h.originalKey, value: h.value })),
  };
}

export function msgIds(s: string): string[] {
  return s.match(/<[^<>\s]+>/g) ?? [];
}

/** The subject as mail clients compare it for threading: without Re:/Fwd: prefixes, case or spacing. */
export function baseSubject(s: string): string {
  let t = s.replace(/\s+/g, ' ').trim();
  for (;;) {
    const next = t.replace(/^(re|fw|fwd|aw|sv|wg)\s*(\[\d+\])?\s*:\s*/i, '');
    if (next === t) break;
    t = next;
  }
  return t.toLowerCase();
}

/** The address syntax check the providers apply before sending (local@domain.tld, no spaces). */
export function plausibleAddress(a: string): boolean {
  return /^[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(a);
}
