import PostalMime from 'postal-mime';
import { cadenzaError } from '../../common/errors.ts';
import type { MailAddress, MailPart, ParsedMail } from '../types.ts';
import { fixC1Controls } from './c1-controls.ts';
import { htmlToText } from './html-to-text.ts';
import { defaultParseLimits, TEXT_LIMITS, type ParseLimits, type QuarantineReason } from './limits.ts';
import { parseMessageId, parseMessageIds } from './message-ids.ts';
import { repairedBoundary, unsplitBodyText } from './boundary-repair.ts';
import { installPostalMimeFixes } from './postal-mime-fixes.ts';
import { precheckRaw } from './precheck.ts';

installPostalMimeFixes();

export type ParseResult = { ok: true; mail: ParsedMail } | { ok: false; reason: QuarantineReason; detail: string };

/**
 * Raw RFC 5322 bytes → ParsedMail, or the reason the message is quarantined. Never throws on
 * input: the byte-level checks (precheck.ts) run first, then postal-mime (measured ~3x faster
 * than mailparser here) under its own nesting and header-size limits.
 * Report parts (message/delivery-status, message/rfc822, text/rfc822-headers,
 * message/feedback-report) are kept as text parts, not inlined, so that the bounce and feedback
 * rungs can read them.
 */
export async function parseMailSafe(raw: Uint8Array | string, limits: Partial<ParseLimits> = {}): Promise<ParseResult> {
  const lim = { ...defaultParseLimits, ...limits };
  let bytes: Uint8Array;
  try {
    bytes = typeof raw === 'string' ? new TextEncoder().encode(raw) : raw;
  } catch (e) {
    return { ok: false, reason: 'unparseable', detail: String(e) };
  }
  const pre = precheckRaw(bytes, lim);
  if (pre) return { ok: false, ...pre };
  const started = performance.now();
  let mail: ParsedMail;
  try {
    mail = await withDeadline(convert(bytes, lim), lim.maxParseMs);
    // A multipart that yielded nothing may declare a boundary its body does not use (boundary-repair.ts).
    // One that still yields nothing is read as plain text.
    if (yieldedNothing(mail)) {
      const mended = repairedBoundary(bytes, lim.maxHeaderBytes);
      if (mended) mail = { ...(await withDeadline(convert(mended, lim), lim.maxParseMs)), size: bytes.byteLength };
      if (yieldedNothing(mail)) mail = { ...mail, text: fixC1Controls(cap(unsplitBodyText(bytes, lim.maxHeaderBytes), TEXT_LIMITS.bodyChars)) };
    }
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg === DEADLINE) return { ok: false, reason: 'timeout', detail: `parse took over ${lim.maxParseMs} ms` };
    if (/nesting depth/i.test(msg)) return { ok: false, reason: 'nesting_too_deep', detail: msg };
    if (/header size/i.test(msg)) return { ok: false, reason: 'headers_too_long', detail: msg };
    return { ok: false, reason: 'unparseable', detail: msg };
  }
  // postal-mime rarely yields to the event loop, so a slow parse is mostly caught here, after it.
  const took = performance.now() - started;
  if (took > lim.maxParseMs) return { ok: false, reason: 'timeout', detail: `parse took ${Math.round(took)} ms` };
  if (mail.parts.length > lim.maxParts) return { ok: false, reason: 'too_many_parts', detail: `${mail.parts.length} parts (limit ${lim.maxParts})` };
  return { ok: true, mail };
}

/** As parseMailSafe, but throws MAIL_MALFORMED with the quarantine reason. */
export async function parseMail(raw: Uint8Array | string, limits: Partial<ParseLimits> = {}): Promise<ParsedMail> {
  const r = await parseMailSafe(raw, limits);
  if (!r.ok) throw cadenzaError('MAIL_MALFORMED', `${r.reason}: ${r.detail}`, { reason: r.reason });
  return r.mail;
}

const DEADLINE = 'parse deadline exceeded';

/** Cut to `max` characters: every stage after the parser reads bounded text (TEXT_LIMITS). */
function cap(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) : s;
}
function yieldedNothing(mail: ParsedMail): boolean {
  return /^multipart\//.test(mail.contentType) && mail.parts.length === 0 && mail.text.trim() === '' && mail.html === null;
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(DEADLINE)), ms);
    timer.unref();
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

async function convert(bytes: Uint8Array, lim: ParseLimits): Promise<ParsedMail> {
  const parser = new PostalMime({
    rfc822Attachments: true,
    attachmentEncoding: 'utf8',
    maxNestingDepth: lim.maxNestingDepth,
    maxHeadersSize: lim.maxHeaderBytes * 4,
  });
  const m = await parser.parse(bytes);
  const headers = (m.headers ?? []).map((h) => ({ key: h.key.toLowerCase(), value: fixC1Controls(h.value) }));
  const first = (key: string) => headers.find((h) => h.key === key)?.value;
  const contentType = (first('content-type') ?? 'text/plain').toLowerCase();
  const parts: MailPart[] = (m.attachments ?? []).map((a) => {
    const mimeType = (a.mimeType ?? 'application/octet-stream').toLowerCase();
    const isText = mimeType.startsWith('text/') || mimeType.startsWith('message/');
    const content = a.content as unknown;
    const text = isText ? fixC1Controls(cap(typeof content === 'string' ? content : new TextDecoder().decode(content as ArrayBuffer), TEXT_LIMITS.bodyChars)) : null;
    const size = typeof content === 'string' ? Buffer.byteLength(content) : ((content as ArrayBuffer | undefined)?.byteLength ?? 0);
    return { mimeType, filename: a.filename ?? null, disposition: a.disposition ?? null, size, text };
  });
  // HTML-only mail: the text is made from the first 2 MB of HTML (what a reply says is at its top).
  const html = m.html === undefined ? null : fixC1Controls(cap(m.html, TEXT_LIMITS.htmlChars));
  return {
    messageId: parseMessageId(first('message-id')),
    inReplyTo: parseMessageIds(first('in-reply-to'))[0] ?? null,
    references: parseMessageIds(headers.filter((h) => h.key === 'references').map((h) => h.value).join(' ')),
    subject: fixC1Controls(cap(m.subject ?? '', TEXT_LIMITS.subjectChars)),
    from: address(m.from),
    to: addresses(m.to),
    cc: addresses(m.cc),
    replyTo: addresses(m.replyTo),
    returnPath: m.returnPath === undefined ? null : String(m.returnPath).replace(/[<>\s]/g, '').toLowerCase(),
    date: m.date ? Date.parse(m.date) || null : null,
    headers,
    contentType,
    text: cap(html !== null && !hadPlainText(parser) ? htmlToText(html) : fixC1Controls(cap(m.text ?? '', TEXT_LIMITS.bodyChars)), TEXT_LIMITS.bodyChars),
    html,
    parts,
    size: bytes.byteLength,
  };
}

/**
 * Whether the message had a text/plain body. postal-mime converts HTML to text itself when it
 * has none, but keeps <style> contents; it records the body types it saw on the instance.
 */
function hadPlainText(parser: PostalMime): boolean {
  const types = (parser as unknown as { textTypes?: unknown }).textTypes;
  return types instanceof Set ? types.has('plain') : true;
}

type PmAddress = { address?: string; name?: string; group?: PmAddress[] };

function address(a: PmAddress | undefined): MailAddress | null {
  return a ? (addresses([a])[0] ?? null) : null;
}

function addresses(list: PmAddress[] | undefined): MailAddress[] {
  const out: MailAddress[] = [];
  for (const a of list ?? []) {
    if (a.group) out.push(...addresses(a.group));
    else out.push({ address: (a.address ?? '').toLowerCase(), name: fixC1Controls(a.name ?? '') });
  }
  return out;
}
