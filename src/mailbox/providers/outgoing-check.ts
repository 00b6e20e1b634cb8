import addressparser from 'nodemailer/lib/addressparser/index.js';
import { cadenzaError } from '../../common/errors.ts';

/**
 * What the HTTP transports check before handing a message to Gmail or Graph. Both send to the
 * recipients named in the message's headers (there is no separate envelope), so the envelope the
 * sender meant and the headers must name the same people, and the Message-ID that findSent will
 * look for must be the one in the bytes. A mismatch is a bug upstream (compose), so it throws
 * (connectors/outcomes.ts: programming errors throw) instead of sending to the wrong people or under an id
 * no one will find.
 */
export function checkOutgoing(raw: Buffer, envelope: { from: string; to: string[] }, messageId: string): void {
  if (envelope.to.length === 0) throw cadenzaError('INVALID_INPUT', 'envelope without recipients');
  if (raw.length === 0) throw cadenzaError('INVALID_INPUT', 'empty message');
  const headers = headerBlock(raw);
  const ids = headers.filter((h) => h.name === 'message-id').map((h) => h.value.trim());
  if (ids.length !== 1 || ids[0] !== messageId.trim()) {
    throw cadenzaError('INVALID_INPUT', 'the message does not carry the Message-ID the sender was given', {
      expected: messageId,
      found: ids,
    });
  }
  const inHeaders = new Set<string>();
  for (const h of headers) {
    if (h.name !== 'to' && h.name !== 'cc' && h.name !== 'bcc') continue;
    for (const a of addressparser(h.value, { flatten: true })) if (a.address) inHeaders.add(a.address.toLowerCase());
  }
  const inEnvelope = new Set(envelope.to.map((a) => a.trim().toLowerCase()));
  const missing = [...inEnvelope].filter((a) => !inHeaders.has(a));
  const extra = [...inHeaders].filter((a) => !inEnvelope.has(a));
  if (missing.length || extra.length) {
    throw cadenzaError('INVALID_INPUT', "the message's To/Cc/Bcc headers do not name the envelope's recipients", { missing, extra });
  }
}

/** The top-level header fields (RFC 5322 §2.2), unfolded, names lowercased. */
export function headerBlock(raw: Buffer): Array<{ name: string; value: string }> {
  // Headers end at the first empty line; 256 KiB is far beyond any real header block.
  const head = raw.subarray(0, Math.min(raw.length, 256 * 1024)).toString('latin1');
  const end = head.search(/\r?\n\r?\n/);
  const lines = (end >= 0 ? head.slice(0, end) : head).split(/\r?\n/);
  const out: Array<{ name: string; value: string }> = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && out.length) {
      out[out.length - 1]!.value += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() });
  }
  return out;
}
