import type { ParsedMail } from '../../types.ts';
import { returnedText } from './text.ts';

/**
 * The Message-ID of the message that bounced, to thread the bounce to the send: from the
 * returned copy (message/rfc822 or text/rfc822-headers part, else the text below the
 * "original message" marker), else the bounce's own In-Reply-To/References, which some MTAs set.
 */
export function originalMessageId(mail: ParsedMail): string | null {
  const copies = mail.parts.filter((p) => /^(message\/rfc822|text\/rfc822-headers|message\/rfc822-headers|message\/global|message\/global-headers)$/.test(p.mimeType) && p.text).map((p) => p.text!);
  const below = returnedText(mail.text);
  if (below) copies.push(below);
  for (const copy of copies) {
    const m = /^message-id:\s*(<[^<>\s]+>)/im.exec(copy);
    if (m) return m[1]!;
  }
  return mail.inReplyTo ?? mail.references.at(-1) ?? null;
}

/** The To: addresses of the returned copy: the recipients when the report names none. */
export function originalRecipients(mail: ParsedMail): string[] {
  const copies = mail.parts.filter((p) => /rfc822|global/.test(p.mimeType) && p.text).map((p) => p.text!);
  const below = returnedText(mail.text);
  if (below) copies.push(below);
  for (const copy of copies) {
    const head = copy.split(/\r?\n\r?\n/)[0] ?? '';
    const m = /^[ \t]*to:[ \t]*((?:.*)(?:\r?\n[ \t].*)*)/im.exec(head);
    if (!m) continue;
    const found = [...m[1]!.matchAll(/[^\s<>,;:"()]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g)].map((x) => x[0].toLowerCase());
    if (found.length) return found;
  }
  return [];
}
