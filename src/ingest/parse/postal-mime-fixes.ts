import PostalMime from 'postal-mime';
import { decodeFlowed } from './flowed.ts';

/**
 * Two corrections to postal-mime 4.0.0, installed on its internal classes (they are not
 * exported, so their prototypes are reached through a parser's root node). Each is applied only
 * when the class still has the shape it was written for; otherwise postal-mime's own code stays.
 *
 * 1. format=flowed is decoded by quote depth (see flowed.ts).
 * 2. A text part labelled with a legacy charset whose bytes are valid UTF-8 (with at least one
 *    non-ASCII sequence) is decoded as UTF-8. Mislabelled mail is common (a client writes UTF-8
 *    and keeps the account's default label); real Big5, Shift_JIS, GB2312 or Latin-1 text of any
 *    length is practically never valid UTF-8, and ISO-2022-JP is 7-bit, so it is left alone.
 * 3. Part bodies are joined with one copy instead of a Blob. Node 20 builds a Blob from many
 *    small parts very slowly (~12 µs a part), and the pass-through decoder stores two parts per
 *    line: a 10 MB text part of 400,000 lines took 8.6 s to parse, most of it in the Blob.
 */

type Chunk = Uint8Array | ArrayBuffer | string;
type Decoder = { chunks: Chunk[]; finalize(): Promise<ArrayBuffer>; flushRemainder?(): void; flushBuffer?(): void };
type Node = {
  setupContentDecoder?(encoding: string): void;
  contentDecoder?: Decoder;
  decodeFlowedText?: unknown;
  getTextContent?(): string;
  content?: ArrayBuffer | Uint8Array;
  contentType?: { parsed?: { params?: Record<string, string | undefined> } };
};

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Valid UTF-8 with at least one multi-byte sequence. */
export function isNonAsciiUtf8(bytes: Uint8Array): boolean {
  if (!bytes.some((b) => b >= 0x80)) return false;
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const encoder = new TextEncoder();

export function concatChunks(chunks: Chunk[]): ArrayBuffer {
  const parts = chunks.map((c) => (typeof c === 'string' ? (c === '\n' ? NEWLINE : encoder.encode(c)) : c instanceof Uint8Array ? c : new Uint8Array(c)));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out.buffer;
}
const NEWLINE = Uint8Array.of(0x0a);

let installed = false;

export function installPostalMimeFixes(): void {
  if (installed) return;
  installed = true;
  const root = (new PostalMime() as unknown as { root?: Node }).root;
  if (!root) return;
  const nodeProto = Object.getPrototypeOf(root) as Node;
  if (typeof nodeProto.decodeFlowedText === 'function') {
    nodeProto.decodeFlowedText = function (str: string, delSp: boolean) {
      return decodeFlowed(str, delSp);
    };
  }
  const getTextContent = nodeProto.getTextContent;
  if (typeof getTextContent === 'function') {
    nodeProto.getTextContent = function (this: Node) {
      const params = this.contentType?.parsed?.params;
      const charset = (params?.charset ?? '').toLowerCase().replace(/[^a-z0-9]/g, '');
      if (params && this.content && charset !== '' && charset !== 'utf8' && charset !== 'usascii') {
        const bytes = this.content instanceof Uint8Array ? this.content : new Uint8Array(this.content);
        if (isNonAsciiUtf8(bytes)) params.charset = 'utf-8';
      }
      return getTextContent.call(this);
    };
  }
  if (typeof root.setupContentDecoder !== 'function') return;
  for (const [encoding, flush] of [['7bit', null], ['base64', 'flushRemainder'], ['quoted-printable', 'flushBuffer']] as const) {
    root.setupContentDecoder.call(root, encoding);
    const decoder = root.contentDecoder;
    if (!decoder || !Array.isArray(decoder.chunks) || (flush && typeof decoder[flush] !== 'function')) continue;
    const proto = Object.getPrototypeOf(decoder) as Decoder;
    proto.finalize = function (this: Decoder) {
      if (flush) this[flush]!();
      return Promise.resolve(concatChunks(this.chunks));
    };
  }
  root.contentDecoder = undefined;
}
