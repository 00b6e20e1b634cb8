/**
 * From bytes to CSV items: the encoding (a UTF-16 byte-order mark, else UTF-8, whose BOM is
 * dropped), the delimiter (sniffed from the header line, or Excel's 'sep=;' first line), and the
 * tokenizer. Streams: it holds one chunk and at most one pending record, never the file.
 */
import { cadenzaError } from '../common/errors.ts';
import { CsvTokenizer, type CsvItem } from './csv-tokenizer.ts';
import { MAX_HEADER_CHARS } from './limits.ts';

export type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be';

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

export async function openCsv(input: AsyncIterable<Buffer | Uint8Array | string>): Promise<CsvSource> {
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

  // Enough bytes to see a byte-order mark.
  const first: Array<Buffer | string> = [];
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.length < 3) {
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
  }
  // Not fatal: an invalid sequence becomes U+FFFD and the row holding it is rejected (invalid_encoding).
  const decoder = new TextDecoder(encoding, { fatal: false, ignoreBOM: false });
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
