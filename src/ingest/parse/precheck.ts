import type { ParseLimits, QuarantineReason } from './limits.ts';

/**
 * Byte-level checks before a message reaches the MIME parser: one linear pass, no decoding.
 * Returns the quarantine reason, or null when the message may be parsed.
 */
export function precheckRaw(bytes: Uint8Array, lim: ParseLimits): { reason: QuarantineReason; detail: string } | null {
  const n = bytes.byteLength;
  if (n === 0 || bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d)) return { reason: 'empty', detail: 'no bytes' };
  if (n > lim.maxBytes) return { reason: 'too_large', detail: `${n} bytes (limit ${lim.maxBytes})` };

  // Binary garbage first: it rarely has an empty line either, and "binary" is the better reason.
  const head = Math.min(n, 1024);
  let headControls = 0;
  for (let i = 0; i < head; i++) {
    const b = bytes[i]!;
    if (b === 0 || (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x1b)) headControls++;
  }
  if (headControls > Math.max(4, head / 20)) return { reason: 'binary', detail: `${headControls} NUL/control bytes in the first ${head} bytes` };

  // The header block ends at the first empty line (RFC 5322 §2.1).
  let sep = headerEnd(bytes, lim.maxHeaderBytes + 4);
  if (sep < 0) {
    if (n > lim.maxHeaderBytes) return { reason: 'headers_too_long', detail: `no end of headers within ${lim.maxHeaderBytes} bytes` };
    // A message of header fields only is valid (the body is optional, RFC 5322 §3.5); without
    // the empty line, anything else is a body glued to the headers, or not mail at all.
    if (!allHeaderFields(bytes)) return { reason: 'no_separator', detail: 'no empty line between headers and body' };
    sep = n;
  }
  let start = 0;
  while (start < sep && (bytes[start] === 0x0a || bytes[start] === 0x0d)) start++;
  if (!looksLikeHeaderField(bytes, start)) return { reason: 'no_header', detail: 'the message does not start with a header field' };

  let fields = 0;
  let controls = 0;
  for (let i = 0; i < sep; i++) {
    const b = bytes[i]!;
    if (b === 0) return { reason: 'binary', detail: 'NUL byte in the header block' };
    // ESC is allowed: raw ISO-2022-JP headers carry it.
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x1b) controls++;
    if (b === 0x0a && i + 1 < sep && bytes[i + 1] !== 0x20 && bytes[i + 1] !== 0x09) fields++;
  }
  if (controls > Math.max(8, sep / 50)) return { reason: 'binary', detail: `${controls} control bytes in the header block` };
  if (fields + 1 > lim.maxHeaders) return { reason: 'too_many_headers', detail: `${fields + 1} header fields (limit ${lim.maxHeaders})` };

  // The body: a sample at its start. Real bodies are 7bit/8bit text or base64; a run of NUL and
  // control bytes is a file or a corrupted spool, not mail.
  const end = Math.min(n, sep + 65536);
  let bad = 0;
  for (let i = sep; i < end; i++) {
    const b = bytes[i]!;
    if (b === 0 || (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b)) bad++;
  }
  if (end > sep && bad > Math.max(16, (end - sep) / 10)) return { reason: 'binary', detail: `${bad} NUL/control bytes in the first ${end - sep} body bytes` };

  let boundaryLines = 0;
  for (let i = 0; i + 2 < n; i++) {
    if (bytes[i] === 0x0a && bytes[i + 1] === 0x2d && bytes[i + 2] === 0x2d && ++boundaryLines > lim.maxBoundaryLines) {
      return { reason: 'too_many_parts', detail: `over ${lim.maxBoundaryLines} boundary-like lines` };
    }
  }
  return null;
}

/** Every line is a header field or the continuation of one. */
function allHeaderFields(bytes: Uint8Array): boolean {
  let at = 0;
  while (at < bytes.byteLength) {
    let end = bytes.indexOf(0x0a, at);
    if (end < 0) end = bytes.byteLength;
    const first = bytes[at];
    const blank = end === at || (end === at + 1 && first === 0x0d);
    if (!blank && first !== 0x20 && first !== 0x09 && !looksLikeHeaderField(bytes, at)) return false;
    at = end + 1;
  }
  return true;
}

/** Offset of the empty line that ends the header block, searching the first `max` bytes; -1 if none. */
function headerEnd(bytes: Uint8Array, max: number): number {
  const end = Math.min(bytes.byteLength, max);
  for (let i = 0; i < end; i++) {
    if (bytes[i] !== 0x0a) continue;
    if (bytes[i + 1] === 0x0a) return i + 1;
    if (bytes[i + 1] === 0x0d && bytes[i + 2] === 0x0a) return i + 1;
  }
  return -1;
}

/** "Name:" with printable US-ASCII name characters (RFC 5322 §2.2), or an mbox "From " line. */
function looksLikeHeaderField(bytes: Uint8Array, at: number): boolean {
  if (bytes[at] === 0x46 && bytes[at + 1] === 0x72 && bytes[at + 2] === 0x6f && bytes[at + 3] === 0x6d && bytes[at + 4] === 0x20) return true;
  let i = at;
  while (i < bytes.byteLength && i - at < 200) {
    const b = bytes[i]!;
    if (b === 0x3a) return i > at;
    if (b === 0x20 || b === 0x09) {
      // "Subject : x" (white space before the colon) is obsolete syntax, still seen.
      while (i < bytes.byteLength && (bytes[i] === 0x20 || bytes[i] === 0x09)) i++;
      return bytes[i] === 0x3a && i > at;
    }
    if (b < 0x21 || b > 0x7e) return false;
    i++;
  }
  return false;
}
