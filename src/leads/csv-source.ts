/**
 * From bytes to CSV items: the encoding (a UTF-16 byte-order mark, else UTF-8, whose BOM is
 * dropped), the delimiter (sniffed from the header line, or Excel's 'sep=;' first line), and the
 * tokenizer. Streams: it holds one chunk and at most one pending record, never the file.
 */
import { cadenzaError } from '../common/errors.ts';
import { CsvTokenizer, type CsvItem } from './csv-tokenizer.ts';
import { MAX_HEADER_CHARS } from './limits.ts';

export type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';
/**
 * What the caller knows of the encoding. A byte-order mark always wins. 'auto' reads UTF-8 unless
 * the first AUTO_SNIFF_BYTES are not valid UTF-8, and then Windows-1252: what Excel's "CSV" (not
 * "CSV UTF-8") writes on Western-European Windows, and a superset of Latin-1's printable range.
 */
export type EncodingChoice = 'auto' | 'utf-8' | 'windows-1252';

/** Bytes checked for UTF-8 validity before 'auto' settles: a few hundred rows of a lead export. */
export const AUTO_SNIFF_BYTES = 64 * 1024;

export interface CsvSource {
  delimiter: string;
  encoding: Encoding;
  /** The input began with a byte-order mark (the reject file then gets one too, for Excel). */
  hadBom: boolean;
  items: AsyncGenerator<CsvItem, void, undefined>;
  /** Bytes consumed from the input so far. */
  bytesRead(): number;
}

/** Delimiters tried, in order of preference when counts tie. */
const CANDIDATES = [',', ';', '\t', '|'];

export async function openCsv(input: AsyncIterable<Buffer | Uint8Array | string>, opts: { encoding?: EncodingChoice } = {}): Promise<CsvSource> {
  const choice = opts.encoding ?? 'utf-8';
  const it = input[Symbol.asyncIterator]();
  let bytes = 0;
  const next = async (): Promise<Buffer | string | null> => {
    let r: IteratorResult<Buffer | Uint8Array | string>;
    try {
      r = await it.next();
    } catch (e) {
      throw cadenzaError('INVALID_INPUT', `cannot read the input: ${(e as Error).message}`, { cause: (e as Error).message });
    }
    if (r.done) return null;
    const v = r.value;
    if (typeof v === 'string') {
      bytes += Buffer.byteLength(v);
      return v;
    }
    bytes += v.byteLength;
    return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  };

  // Enough bytes to see a byte-order mark, or to judge UTF-8 validity for 'auto'.
  const first: Array<Buffer | string> = [];
  let head = Buffer.alloc(0);
  let ended = false;
  const want = choice === 'auto' ? AUTO_SNIFF_BYTES : 3;
  while (head.length < want) {
    const c = await next();
    if (c === null) {
      ended = true;
      break;
    }
    first.push(c);
    if (typeof c === 'string') break;
    head = Buffer.concat([head, c]);
  }
  let encoding: Encoding = 'utf-8';
  let hadBom = false;
  if (typeof first[0] === 'string') {
    hadBom = first[0].startsWith('\ufeff');
  } else if (head[0] === 0xff && head[1] === 0xfe) {
    encoding = 'utf-16le';
    hadBom = true;
  } else if (head[0] === 0xfe && head[1] === 0xff) {
    encoding = 'utf-16be';
    hadBom = true;
  } else {
    hadBom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
    if (!hadBom && (choice === 'windows-1252' || (choice === 'auto' && !validUtf8Prefix(head)))) encoding = 'windows-1252';
  }
  // Not fatal: an invalid sequence becomes U+FFFD and the row holding it is rejected (invalid_encoding).
  const decoder = encoding === 'windows-1252' ? windows1252Decoder() : new TextDecoder(encoding, { fatal: false, ignoreBOM: false });
  let strippedStringBom = false;
  const decode = (c: Buffer | string): string => {
    if (typeof c !== 'string') return decoder.decode(c, { stream: true });
    if (!strippedStringBom) {
      strippedStringBom = true;
      return c.startsWith('\ufeff') ? c.slice(1) : c;
    }
    return c;
  };

  // Decoded text until the header line is complete.
  let text = first.map(decode).join('');
  if (ended) text += decoder.decode();
  let header = findHeaderLine(text, ended);
  while (header === null) {
    if (ended) break;
    if (text.length > MAX_HEADER_CHARS) {
      throw cadenzaError('INVALID_INPUT', `no header line within the first ${MAX_HEADER_CHARS} characters: is this a CSV file?`);
    }
    const c = await next();
    if (c === null) {
      ended = true;
      text += decoder.decode();
    } else {
      text += decode(c);
    }
    header = findHeaderLine(text, ended);
  }
  if (header === null) throw cadenzaError('INVALID_INPUT', 'the input is empty: a CSV file with a header line is needed');

  let delimiter: string;
  let firstLine = 1;
  const sep = /^sep=(.)$/i.exec(header.text);
  if (sep && !'"\r\n'.includes(sep[1]!)) {
    // Excel's delimiter hint; the header is on the next line.
    delimiter = sep[1]!;
    text = text.slice(header.next);
    firstLine = header.lineNo + 1;
  } else {
    delimiter = sniffDelimiter(header.text);
    firstLine = 1;
  }

  const tokenizer = new CsvTokenizer({ delimiter });
  tokenizer.skipLines(firstLine - 1);
  async function* items(): AsyncGenerator<CsvItem, void, undefined> {
    try {
      yield* tokenizer.push(text);
      text = '';
      if (!ended) {
        for (;;) {
          const c = await next();
          if (c === null) break;
          yield* tokenizer.push(decode(c));
        }
        yield* tokenizer.push(decoder.decode());
      }
      yield* tokenizer.end();
    } finally {
      // Stops and releases the source when the consumer stops early (an error, a break).
      await it.return?.().catch(() => undefined);
    }
  }
  return { delimiter, encoding, hadBom, items: items(), bytesRead: () => bytes };
}

/**
 * Windows-1252 by table: Node's TextDecoder('windows-1252') decodes 0x80–0x9F as C1 controls
 * (Latin-1), which would turn Excel's € and curly quotes into invisible characters. Single-byte, so
 * no state between chunks.
 */
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
function windows1252Decoder(): { decode(b?: Uint8Array, o?: { stream: boolean }): string } {
  return {
    decode: (b) => (b ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1').replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!) : ''),
  };
}

/** True when the bytes are UTF-8, allowing a sequence cut at the end (the rest is in the next chunk). */
function validUtf8Prefix(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** The first non-blank line (a quoted line break does not end it): its text, line number and end. */
function findHeaderLine(text: string, final: boolean): { text: string; lineNo: number; next: number } | null {
  let lineNo = 1;
  let start = 0;
  let inQuotes = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (c === '\n' || c === '\r')) {
      if (c === '\r' && i + 1 >= text.length && !final) return null;
      const next = c === '\r' && text[i + 1] === '\n' ? i + 2 : i + 1;
      const line = text.slice(start, i);
      if (line.trim() !== '') return { text: line, lineNo, next };
      lineNo++;
      start = next;
      i = next - 1;
    }
  }
  if (final && text.slice(start).trim() !== '') return { text: text.slice(start), lineNo, next: text.length };
  return null;
}

/** The candidate that appears most often outside quotes in the header line; ',' when none does. */
export function sniffDelimiter(headerLine: string): string {
  const counts = new Map<string, number>(CANDIDATES.map((c) => [c, 0]));
  let inQuotes = false;
  for (const c of headerLine) {
    if (c === '"') inQuotes = !inQuotes;
    else if (!inQuotes && counts.has(c)) counts.set(c, counts.get(c)! + 1);
  }
  let best = ',';
  let bestCount = 0;
  for (const c of CANDIDATES) {
    if (counts.get(c)! > bestCount) {
      best = c;
      bestCount = counts.get(c)!;
    }
  }
  return best;
}
