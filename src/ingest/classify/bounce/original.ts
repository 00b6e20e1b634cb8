import type { ParsedMail } from '../../types.ts';
import { returnedText } from './text.ts';

/**
 * The returned copy of the message that bounced (or was complained about): the message/rfc822
 * or text/rfc822-headers part, else the text below the "original message" marker.
 */
function returnedCopies(mail: ParsedMail): string[] {
  const copies = mail.parts.filter((p) => /^(message\/rfc822|text\/rfc822-headers|message\/rfc822-headers|message\/global|message\/global-headers)$/.test(p.mimeType) && p.text).map((p) => p.text!);
  const below = returnedText(mail.text);
  if (below) copies.push(below);
  return copies;
}

/**
 * The Message-ID of the returned message, to thread a bounce or a complaint to the send; else
 * the report's own In-Reply-To/References, which some MTAs set.
 */
export function originalMessageId(mail: ParsedMail): string | null {
  for (const copy of returnedCopies(mail)) {
    const m = /^message-id:[ \t]*(<[^<>\s]+>)/im.exec(copy);
    if (m) return m[1]!;
  }
  return mail.inReplyTo ?? mail.references.at(-1) ?? null;
}

/** The To: addresses of the returned copy: the recipients when the report names none. */
export function originalRecipients(mail: ParsedMail): string[] {
  for (const copy of returnedCopies(mail)) {
    const head = copy.split(/\r?\n\r?\n/)[0] ?? '';
    const m = /^[ \t]*to:[ \t]*((?:.*)(?:\r?\n[ \t].*)*)/im.exec(head);
    if (!m) continue;
    const found = [...m[1]!.matchAll(/[^\s<>,;:"()]{1,64}@[A-Za-z0-9.-]{1,255}\.[A-Za-z]{2,}/g)].map((x) => x[0].toLowerCase());
    if (found.length) return found;
  }
  return [];
}
