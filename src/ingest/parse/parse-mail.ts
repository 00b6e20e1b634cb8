import PostalMime from 'postal-mime';
import type { MailAddress, MailPart, ParsedMail } from '../types.ts';

/**
 * Raw RFC 5322 bytes → ParsedMail, with postal-mime (measured ~3x faster than mailparser here).
 * Report parts (message/delivery-status, message/rfc822, text/rfc822-headers,
 * message/feedback-report) are kept as text parts, not inlined, so that the bounce and feedback
 * rungs can read them.
 */
export async function parseMail(raw: Uint8Array | string): Promise<ParsedMail> {
  const bytes = typeof raw === 'string' ? new TextEncoder().encode(raw) : raw;
  const m = await PostalMime.parse(bytes, { rfc822Attachments: true, attachmentEncoding: 'utf8' });
  const headers = (m.headers ?? []).map((h) => ({ key: h.key.toLowerCase(), value: h.value }));
  const contentType = (headers.find((h) => h.key === 'content-type')?.value ?? 'text/plain').toLowerCase();
  const parts: MailPart[] = (m.attachments ?? []).map((a) => {
    const mimeType = (a.mimeType ?? 'application/octet-stream').toLowerCase();
    const isText = mimeType.startsWith('text/') || mimeType.startsWith('message/');
    const content = a.content as unknown;
    const text = isText ? (typeof content === 'string' ? content : new TextDecoder().decode(content as ArrayBuffer)) : null;
    const size = typeof content === 'string' ? Buffer.byteLength(content) : (content as ArrayBuffer | undefined)?.byteLength ?? 0;
    return { mimeType, filename: a.filename ?? null, disposition: a.disposition ?? null, size, text };
  });
  return {
    messageId: msgId(m.messageId),
    inReplyTo: msgIds(m.inReplyTo)[0] ?? null,
    references: msgIds(m.references),
    subject: m.subject ?? '',
    from: address(m.from),
    to: addresses(m.to),
    cc: addresses(m.cc),
    replyTo: addresses(m.replyTo),
    returnPath: m.returnPath === undefined ? null : String(m.returnPath).replace(/[<>\s]/g, '').toLowerCase(),
    date: m.date ? Date.parse(m.date) || null : null,
    headers,
    contentType,
    text: m.text ?? '',
    html: m.html ?? null,
    parts,
    size: bytes.byteLength,
  };
}

function msgIds(value: string | undefined): string[] {
  return value ? [...value.matchAll(/<[^<>\s]+>/g)].map((x) => x[0]) : [];
}

function msgId(value: string | undefined): string | null {
  return msgIds(value)[0] ?? null;
}

type PmAddress = { address?: string; name?: string; group?: PmAddress[] };

function address(a: PmAddress | undefined): MailAddress | null {
  return a ? (addresses([a])[0] ?? null) : null;
}

function addresses(list: PmAddress[] | undefined): MailAddress[] {
  const out: MailAddress[] = [];
  for (const a of list ?? []) {
    if (a.group) out.push(...addresses(a.group));
    else out.push({ address: (a.address ?? '').toLowerCase(), name: a.name ?? '' });
  }
  return out;
}
