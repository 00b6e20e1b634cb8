/**
 * A streaming CSV tokenizer (RFC 4180, with the leniencies real exports need) that survives bad
 * input line by line.
 *
 * Why not csv-parse: with skip_records_with_error, csv-parse 6 loses good rows after a bad one.
 * After an invalid closing quote ('1,"x"y') it stays inside a quote and swallows the following
 * lines; past max_record_size it silently drops everything after; an unclosed quote takes the rest
 * of the file into one record; and its record-delimiter detection merges rows when a file mixes
 * CRLF and LF ('3,4\n5,6' became one record). Promise 8 (nothing lost, nothing crashes) needs a
 * reader that resynchronises on the next line, so this one does.
 *
 * Rules:
 * - Records end at CRLF, LF or a lone CR; a quoted field may hold any of them.
 * - '""' inside a quoted field is a quote. Blanks around a quoted field are allowed ('a, "b" ,c').
 *   A quote inside an unquoted field is literal ('5" screen').
 * - Blank lines, and rows whose fields are all blank, are skipped.
 * - A row may have extra fields if they are all empty (trailing delimiters from spreadsheets).
 * - Errors: text after a closing quote, a quote never closed, a wrong number of fields, a record
 *   past MAX_RECORD_CHARS / MAX_RECORD_LINES. A malformed record on one line is that line. A
 *   malformed record spanning several lines is taken to start with a stray quote: only its first
 *   line is rejected and reading resumes on the second, so the lines a stray quote would have
 *   swallowed are read as the rows they are.
 */
import { MAX_RAW_KEPT_CHARS, MAX_RECORD_CHARS, MAX_RECORD_LINES } from './limits.ts';

export type MalformedCode = 'text_after_quote' | 'unclosed_quote' | 'field_count' | 'record_too_long';

export type CsvItem =
  | { kind: 'record'; line: number; fields: string[] }
  | { kind: 'malformed'; line: number; code: MalformedCode; message: string; raw: string };

export interface TokenizerOptions {
  delimiter: string;
  maxRecordChars?: number;
  maxRecordLines?: number;
}

const CR = 13;
const LF = 10;
const QUOTE = 34;
const SPACE = 32;
const TAB = 9;

type Scan =
  | { t: 'more' }
  | { t: 'blank'; end: number }
  | { t: 'record'; fields: string[]; end: number; lines: number }
  | { t: 'error'; code: MalformedCode; message: string; lines: number };

export class CsvTokenizer {
  private readonly delim: number;
  private readonly maxChars: number;
  private readonly maxLines: number;
  private buf = '';
  /** Physical line number of buf[0]. */
  private line = 1;
  /** Field count of the header (the first record); rows are checked against it. */
  private width: number | null = null;
  /** Skipping the rest of an over-long line: what was kept of it so far. */
  private discarding: { line: number; head: string; chars: number } | null = null;

  constructor(opts: TokenizerOptions) {
    if (opts.delimiter.length !== 1 || '"\r\n'.includes(opts.delimiter)) throw new Error(`bad delimiter ${JSON.stringify(opts.delimiter)}`);
    this.delim = opts.delimiter.charCodeAt(0);
    this.maxChars = opts.maxRecordChars ?? MAX_RECORD_CHARS;
    this.maxLines = opts.maxRecordLines ?? MAX_RECORD_LINES;
  }

  /** Starts line numbering later (lines consumed before the tokenizer, such as Excel's 'sep=;'). */
  skipLines(n: number): void {
    this.line += n;
  }

  /** Feeds decoded text; returns the items it completed. */
  push(text: string): CsvItem[] {
    this.buf = this.buf === '' ? text : this.buf + text;
    return this.drain(false);
  }

  /** Ends the input; returns the last items. */
  end(): CsvItem[] {
    return this.drain(true);
  }

  private drain(final: boolean): CsvItem[] {
    const out: CsvItem[] = [];
    const buf = this.buf;
    let pos = 0;
    for (;;) {
      if (this.discarding) {
        const nl = nextLineEnd(buf, pos, final);
        const d = this.discarding;
        if (nl === null) {
          // The line goes on: keep nothing more of it than the head.
          d.chars += buf.length - pos;
          if (d.head.length < MAX_RAW_KEPT_CHARS) d.head += buf.slice(pos, pos + MAX_RAW_KEPT_CHARS - d.head.length);
          pos = buf.length;
          break;
        }
        d.chars += nl.textEnd - pos;
        if (d.head.length < MAX_RAW_KEPT_CHARS) d.head += buf.slice(pos, Math.min(nl.textEnd, pos + MAX_RAW_KEPT_CHARS - d.head.length));
        out.push({
          kind: 'malformed',
          line: d.line,
          code: 'record_too_long',
          message: `line is ${d.chars} characters long, more than ${this.maxChars}; the reject file keeps its first ${MAX_RAW_KEPT_CHARS}`,
          raw: d.head,
        });
        this.discarding = null;
        pos = nl.next;
        this.line++;
        continue;
      }
      if (pos >= buf.length) break;
      const s = this.scan(buf, pos, final);
      if (s.t === 'more') break;
      if (s.t === 'blank') {
        pos = s.end;
        this.line++;
        continue;
      }
      if (s.t === 'record') {
        const lines = s.lines;
        const fields = s.fields;
        if (fields.every(isBlank)) {
          pos = s.end;
          this.line += lines;
          continue;
        }
        if (this.width === null) this.width = fields.length;
        else if (fields.length !== this.width) {
          while (fields.length > this.width && isBlank(fields[fields.length - 1]!)) fields.pop();
          if (fields.length !== this.width) {
            const message = `has ${fields.length} fields where the header has ${this.width}`;
            if (lines === 1) {
              out.push({ kind: 'malformed', line: this.line, code: 'field_count', message, raw: stripLineEnd(buf.slice(pos, s.end)) });
              pos = s.end;
              this.line += 1;
              continue;
            }
            pos = this.rejectFirstLine(out, buf, pos, final, 'field_count', `${message} (a quoted field opened here spans ${lines} lines; reading resumes on the next line)`);
            if (pos === -1) break;
            continue;
          }
        }
        out.push({ kind: 'record', line: this.line, fields });
        pos = s.end;
        this.line += lines;
        continue;
      }
      // An error: reject the record's first physical line, resume on the next.
      const message =
        s.lines > 1 && s.code !== 'record_too_long' && s.code !== 'unclosed_quote'
          ? `a quoted field opened on this line runs over ${s.lines} lines, then ${s.message}; only this line is rejected, reading resumes on the next`
          : s.message;
      const p = this.rejectFirstLine(out, buf, pos, final, s.code, message);
      if (p === -1) break;
      pos = p;
    }
    this.buf = pos >= buf.length ? '' : buf.slice(pos);
    return out;
  }

  /**
   * Emits the physical line starting at pos as malformed and returns where the next line starts,
   * or -1 when that line has not fully arrived (pos is left for the next push), or switches to
   * discarding when the line alone is longer than the record limit.
   */
  private rejectFirstLine(out: CsvItem[], buf: string, pos: number, final: boolean, code: MalformedCode, message: string): number {
    const nl = nextLineEnd(buf, pos, final);
    if (nl === null || nl.textEnd - pos > this.maxChars) {
      // The line has not fully arrived (an error found before its end): wait for the rest.
      if (nl === null && buf.length - pos <= this.maxChars) return -1;
      this.discarding = { line: this.line, head: '', chars: 0 };
      // drain() continues in discard mode from pos.
      return pos;
    }
    out.push({ kind: 'malformed', line: this.line, code, message, raw: buf.slice(pos, nl.textEnd) });
    this.line++;
    return nl.next;
  }

  /** Scans one record starting at pos. */
  private scan(buf: string, pos: number, final: boolean): Scan {
    const n = buf.length;
    const delim = this.delim;
    const c0 = buf.charCodeAt(pos);
    if (c0 === LF) return { t: 'blank', end: pos + 1 };
    if (c0 === CR) {
      if (pos + 1 >= n && !final) return { t: 'more' };
      return { t: 'blank', end: buf.charCodeAt(pos + 1) === LF ? pos + 2 : pos + 1 };
    }
    const fields: string[] = [];
    let lines = 1;
    let i = pos;
    for (;;) {
      // One field starts at i.
      let q = i;
      while (q < n && (buf.charCodeAt(q) === SPACE || buf.charCodeAt(q) === TAB) && buf.charCodeAt(q) !== delim) q++;
      if (q < n && buf.charCodeAt(q) === QUOTE) {
        // Quoted field.
        let value = '';
        let j = q + 1;
        for (;;) {
          const k = buf.indexOf('"', j);
          if (k === -1 || (k + 1 >= n && !final)) {
            // The closing quote has not arrived: wait, unless the record is already past the limits.
            const end = k === -1 ? n : k;
            lines += countLineBreaks(buf, j, end);
            if (end - pos > this.maxChars || lines > this.maxLines) {
              return { t: 'error', code: 'record_too_long', message: `a quoted field opened here runs past ${this.maxLines} lines or ${this.maxChars} characters without closing; reading resumes on the next line`, lines };
            }
            if (!final) return { t: 'more' };
            return {
              t: 'error',
              code: 'unclosed_quote',
              message: lines > 1 ? 'a quote opened on this line is never closed; reading resumes on the next line' : 'a quote opened on this line is never closed',
              lines,
            };
          }
          lines += countLineBreaks(buf, j, k);
          if (buf.charCodeAt(k + 1) === QUOTE) {
            value += buf.slice(j, k + 1);
            j = k + 2;
            continue;
          }
          value += buf.slice(j, k);
          i = k + 1;
          break;
        }
        while (i < n && (buf.charCodeAt(i) === SPACE || buf.charCodeAt(i) === TAB) && buf.charCodeAt(i) !== delim) i++;
        if (i >= n) {
          if (!final) return { t: 'more' };
          fields.push(value);
          return { t: 'record', fields, end: n, lines };
        }
        const c = buf.charCodeAt(i);
        if (c === delim) {
          fields.push(value);
          i++;
          continue;
        }
        if (c === LF || c === CR) {
          if (c === CR && i + 1 >= n && !final) return { t: 'more' };
          fields.push(value);
          return { t: 'record', fields, end: c === CR && buf.charCodeAt(i + 1) === LF ? i + 2 : i + 1, lines };
        }
        return {
          t: 'error',
          code: 'text_after_quote',
          message: `field ${fields.length + 1} has text after its closing quote (write "" for a quote inside a quoted field)`,
          lines,
        };
      }
      // Unquoted field: up to the delimiter or the end of the line.
      let k = i;
      while (k < n) {
        const c = buf.charCodeAt(k);
        if (c === delim || c === LF || c === CR) break;
        k++;
      }
      if (k - pos > this.maxChars) {
        return { t: 'error', code: 'record_too_long', message: `line is longer than ${this.maxChars} characters`, lines };
      }
      if (k >= n) {
        if (!final) return { t: 'more' };
        fields.push(buf.slice(i, k));
        return { t: 'record', fields, end: n, lines };
      }
      fields.push(buf.slice(i, k));
      const c = buf.charCodeAt(k);
      if (c === delim) {
        i = k + 1;
        if (i >= n) {
          if (!final) return { t: 'more' };
          fields.push('');
          return { t: 'record', fields, end: n, lines };
        }
        continue;
      }
      if (c === CR && k + 1 >= n && !final) return { t: 'more' };
      return { t: 'record', fields, end: c === CR && buf.charCodeAt(k + 1) === LF ? k + 2 : k + 1, lines };
    }
  }
}

function isBlank(s: string): boolean {
  return s.trim() === '';
}

/** Line breaks (CRLF, LF, lone CR) in buf[from, to). */
function countLineBreaks(buf: string, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) {
    const c = buf.charCodeAt(i);
    if (c === LF) count++;
    else if (c === CR && buf.charCodeAt(i + 1) !== LF) count++;
  }
  return count;
}

/**
 * The end of the physical line starting at pos: textEnd (before the break) and next (after it),
 * or null when the break has not arrived yet. At the end of input the line ends there.
 */
function nextLineEnd(buf: string, pos: number, final: boolean): { textEnd: number; next: number } | null {
  for (let i = pos; i < buf.length; i++) {
    const c = buf.charCodeAt(i);
    if (c === LF) return { textEnd: i, next: i + 1 };
    if (c === CR) {
      if (i + 1 >= buf.length && !final) return null;
      return { textEnd: i, next: buf.charCodeAt(i + 1) === LF ? i + 2 : i + 1 };
    }
  }
  return final ? { textEnd: buf.length, next: buf.length } : null;
}

function stripLineEnd(s: string): string {
  return s.replace(/\r?\n$|\r$/, '');
}
