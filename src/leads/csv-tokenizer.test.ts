import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvTokenizer, type CsvItem, type TokenizerOptions } from './csv-tokenizer.ts';

function tokenize(text: string | string[], opts: Partial<TokenizerOptions> = {}): CsvItem[] {
  const t = new CsvTokenizer({ delimiter: ',', ...opts });
  const chunks = typeof text === 'string' ? [text] : text;
  return [...chunks.flatMap((c) => t.push(c)), ...t.end()];
}

const records = (items: CsvItem[]) => items.map((i) => (i.kind === 'record' ? i.fields : `${i.kind}:${i.line}:${i.code}`));
const lines = (items: CsvItem[]) => items.map((i) => i.line);

describe('CsvTokenizer: well-formed input', () => {
  it('reads fields, quoted fields, doubled quotes and every kind of line end', () => {
    const items = tokenize('a,b,c\r\n1,"x, y","say ""hi"""\n2,,\r3,"multi\r\nline",z');
    expect(records(items)).toEqual([
      ['a', 'b', 'c'],
      ['1', 'x, y', 'say "hi"'],
      ['2', '', ''],
      ['3', 'multi\r\nline', 'z'],
    ]);
    expect(lines(items)).toEqual([1, 2, 3, 4]);
  });

  it('skips blank lines and all-blank rows, counting their lines', () => {
    const items = tokenize('a,b\n\n\r\n1,2\n , \n,\n3,4\n');
    expect(records(items)).toEqual([['a', 'b'], ['1', '2'], ['3', '4']]);
    expect(lines(items)).toEqual([1, 4, 7]);
  });

  it('accepts trailing empty fields beyond the header (spreadsheet padding)', () => {
    expect(records(tokenize('a,b\n1,2,,\n'))).toEqual([['a', 'b'], ['1', '2']]);
  });

  it('keeps a quote inside an unquoted field literally, and allows blanks around a quoted field', () => {
    expect(records(tokenize('a,b\n5" screen,x"y\n "q" , "r"\n'))).toEqual([['a', 'b'], ['5" screen', 'x"y'], ['q', 'r']]);
  });

  it('reads ; and tab delimited text', () => {
    expect(records(tokenize('a;b\n"1;2";3\n', { delimiter: ';' }))).toEqual([['a', 'b'], ['1;2', '3']]);
    expect(records(tokenize('a\tb\n 1\t2 \n', { delimiter: '\t' }))).toEqual([['a', 'b'], [' 1', '2 ']]);
  });

  it('ends the last record at the end of input, with or without a final line break', () => {
    expect(records(tokenize('a,b\n1,2'))).toEqual([['a', 'b'], ['1', '2']]);
    expect(records(tokenize('a,b\n1,'))).toEqual([['a', 'b'], ['1', '']]);
    expect(records(tokenize('a,b\n1,"2"'))).toEqual([['a', 'b'], ['1', '2']]);
  });
});

describe('CsvTokenizer: malformed input is rejected line by line, and reading goes on', () => {
  it('a wrong field count rejects that line, with its raw text', () => {
    const items = tokenize('a,b,c\n1,2\n3,4,5,6\n7,8,9\n');
    expect(records(items)).toEqual([['a', 'b', 'c'], 'malformed:2:field_count', 'malformed:3:field_count', ['7', '8', '9']]);
    expect(items[1]).toMatchObject({ raw: '1,2', message: 'has 2 fields where the header has 3' });
  });

  it('text after a closing quote rejects that line only', () => {
    const items = tokenize('a,b\n1,"x"y\n3,4\n');
    expect(records(items)).toEqual([['a', 'b'], 'malformed:2:text_after_quote', ['3', '4']]);
    expect(items[1]).toMatchObject({ raw: '1,"x"y' });
  });

  it('a stray quote does not swallow the lines after it: its line is rejected, the next ones are read', () => {
    // Line 2's quote is closed by line 4's, then text follows the "closing" quote.
    const items = tokenize('e,n\n1,"stray\n2,two\n3,"three"\n4,four\n');
    expect(records(items)).toEqual([['e', 'n'], 'malformed:2:text_after_quote', ['2', 'two'], ['3', 'three'], ['4', 'four']]);
    expect(lines(items)).toEqual([1, 2, 3, 4, 5]);
    expect(items[1]).toMatchObject({ raw: '1,"stray' });
    expect((items[1] as { message: string }).message).toMatch(/runs over 3 lines/);
  });

  it('a multi-line record with the wrong field count is read again from its second line', () => {
    // The stray quote on line 2 closes cleanly on line 3, leaving a record of 3 fields; read again
    // from line 3, the quote there is inside an unquoted field, so literal.
    const items = tokenize('e,n\n1,"stray\n2",x\n3,y\n');
    expect(records(items)).toEqual([['e', 'n'], 'malformed:2:field_count', ['2"', 'x'], ['3', 'y']]);
  });

  it('a quote never closed before the end rejects its line, then reads the rest', () => {
    expect(records(tokenize('e,n\n1,"open\n2,two\n3,three'))).toEqual([['e', 'n'], 'malformed:2:unclosed_quote', ['2', 'two'], ['3', 'three']]);
    expect(records(tokenize('e,n\n1,"open'))).toEqual([['e', 'n'], 'malformed:2:unclosed_quote']);
  });

  it('a quoted field past the line limit is a stray quote: rejected, reading resumes on the next line', () => {
    const body = Array.from({ length: 20 }, (_, i) => `${i},row${i}`).join('\n');
    const items = tokenize(['e,n\nx,"open\n', body, '\n'], { maxRecordLines: 5 });
    expect(records(items)[1]).toBe('malformed:2:record_too_long');
    expect(items.filter((i) => i.kind === 'record').length).toBe(21);
  });

  it('a line past the size limit is skipped without being held, its start kept for the reject file', () => {
    const t = new CsvTokenizer({ delimiter: ',', maxRecordChars: 100 });
    const out: CsvItem[] = [...t.push('e,n\n1,')];
    for (let i = 0; i < 50; i++) out.push(...t.push('x'.repeat(1000)));
    out.push(...t.push('\n2,two\n'), ...t.end());
    expect(records(out)).toEqual([['e', 'n'], 'malformed:2:record_too_long', ['2', 'two']]);
    const bad = out[1] as { raw: string; message: string };
    expect(bad.message).toMatch(/50002 characters long/);
    expect(bad.raw.startsWith('1,xxx')).toBe(true);
  });
});

/** A CSV writer for the properties: quotes a field only when it must. */
function writeCsv(rows: string[][], eol: string): string {
  const q = (f: string) => (/[",\r\n]/.test(f) || f !== f.trim() ? `"${f.replace(/"/g, '""')}"` : f);
  return rows.map((r) => r.map(q).join(',')).join(eol) + eol;
}

const field = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '"', '\n', '\r', 'é', '😀', ';'), maxLength: 8 });
const table = fc
  .integer({ min: 1, max: 5 })
  .chain((width) =>
    fc.array(
      fc.tuple(fc.stringMatching(/^[a-z0-9]{1,4}$/), fc.array(field, { minLength: width - 1, maxLength: width - 1 })).map(([k, rest]) => [k, ...rest]),
      { minLength: 1, maxLength: 12 },
    ),
  );

describe('CsvTokenizer properties', () => {
  it('reads back what a CSV writer wrote, for every line end', () => {
    fc.assert(
      fc.property(table, fc.constantFrom('\n', '\r\n', '\r'), (rows, eol) => {
        expect(records(tokenize(writeCsv(rows, eol)))).toEqual(rows);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with csv-parse on well-formed input', () => {
    fc.assert(
      fc.property(table, fc.constantFrom('\n', '\r\n'), (rows, eol) => {
        const text = writeCsv(rows, eol);
        expect(records(tokenize(text))).toEqual(parse(text, { record_delimiter: eol }));
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same items however the input is cut into chunks, even for garbage', () => {
    const text = fc.oneof(
      table.map((rows) => writeCsv(rows, '\r\n')),
      fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' '), maxLength: 60 }).map((s) => `h,i\n${s}`),
    );
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (s, cuts) => {
        const at = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((from, k) => s.slice(from, [...at, s.length][k]));
        expect(tokenize(chunks)).toEqual(tokenize(s));
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws, and accounts for every line of garbage', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', ' '), maxLength: 80 }), (s) => {
        const items = tokenize(`h,i\n${s}`, { maxRecordLines: 3 });
        // Lines are increasing: no item is reported twice or out of order.
        const ls = lines(items);
        expect([...ls].sort((a, b) => a - b)).toEqual(ls);
        expect(new Set(ls).size).toBe(ls.length);
      }),
      { numRuns: 1000 },
    );
  });
});
