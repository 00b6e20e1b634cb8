import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../common/errors.ts';
import { openCsv, sniffDelimiter } from './csv-source.ts';
import type { CsvItem } from './csv-tokenizer.ts';

async function read(chunks: Array<Buffer | string>) {
  const src = await openCsv(Readable.from(chunks, { objectMode: true }));
  const items: CsvItem[] = [];
  for await (const i of src.items) items.push(i);
  return { src, items, fields: items.map((i) => (i.kind === 'record' ? i.fields : i.kind)) };
}

async function refused(chunks: Array<Buffer | string>): Promise<string> {
  try {
    await read(chunks);
  } catch (e) {
    if (isCadenzaError(e, 'INVALID_INPUT')) return e.message;
    throw e;
  }
  throw new Error('expected INVALID_INPUT');
}

describe('openCsv', () => {
  it('drops a UTF-8 BOM and says it was there', async () => {
    const r = await read([Buffer.from('\ufeffemail,name\r\na@b.co,Zoë\r\n')]);
    expect(r.fields).toEqual([['email', 'name'], ['a@b.co', 'Zoë']]);
    expect(r.src).toMatchObject({ hadBom: true, encoding: 'utf-8', delimiter: ',' });
  });

  it('reads UTF-16 with a BOM (Excel\'s "Unicode Text", tab-delimited)', async () => {
    const text = 'email\tname\r\na@b.co\tZoë\r\n';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect((await read([le])).fields).toEqual([['email', 'name'], ['a@b.co', 'Zoë']]);
    const be = Buffer.from(le);
    be.swap16();
    const r = await read([be]);
    expect(r.fields).toEqual([['email', 'name'], ['a@b.co', 'Zoë']]);
    expect(r.src).toMatchObject({ encoding: 'utf-16be', delimiter: '\t', hadBom: true });
  });

  it('decodes characters split across chunks, one byte at a time', async () => {
    const bytes = Buffer.from('\ufeffemail;name\na@b.co;"Zoë 😀\nÅ"\n');
    const r = await read([...bytes].map((b) => Buffer.from([b])));
    expect(r.fields).toEqual([['email', 'name'], ['a@b.co', 'Zoë 😀\nÅ']]);
    expect(r.src.bytesRead()).toBe(bytes.length);
    expect(r.src.delimiter).toBe(';');
  });

  it('turns invalid UTF-8 into U+FFFD, for the row check to reject', async () => {
    const r = await read([Buffer.concat([Buffer.from('email,name\na@b.co,J'), Buffer.from([0xe9]), Buffer.from('r\n')])]);
    expect(r.fields[1]).toEqual(['a@b.co', 'J\ufffdr']);
  });

  it('accepts a stream of strings', async () => {
    expect((await read(['\ufeffemail,n', 'ame\na@b.co,x\n'])).fields).toEqual([['email', 'name'], ['a@b.co', 'x']]);
  });

  it("follows Excel's sep= line, numbering lines from the file's first", async () => {
    const r = await read(['sep=;\nemail;a,b\nx@y.co;1,2\n']);
    expect(r.fields).toEqual([['email', 'a,b'], ['x@y.co', '1,2']]);
    expect(r.items.map((i) => i.line)).toEqual([2, 3]);
  });

  it('finds the header after blank lines, and a header with a quoted line break', async () => {
    expect((await read(['\n\r\n"e\nmail";x\n1;2\n'])).fields).toEqual([['e\nmail', 'x'], ['1', '2']]);
  });

  it('refuses empty input, and input with no line break in the first 64 KiB', async () => {
    expect(await refused([])).toMatch(/empty/);
    expect(await refused([Buffer.from('\ufeff \r\n\n')])).toMatch(/empty/);
    expect(await refused([Buffer.alloc(200_000, 0x61)])).toMatch(/no header line within/);
  });

  it('turns a read error into INVALID_INPUT', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('EIO: disk on fire'));
      },
    });
    await expect(openCsv(broken)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: /disk on fire/ });
  });
});

describe('sniffDelimiter', () => {
  it.each([
    ['email,first_name,last_name', ','],
    ['email;first_name;last_name', ';'],
    ['email\tfirst_name\tlast_name', '\t'],
    ['email|first_name|last_name', '|'],
    ['"a,b";c;d', ';'],
    ['email', ','],
    ['a,b;c', ','],
  ])('%j → %j', (line, d) => {
    expect(sniffDelimiter(line)).toBe(d);
  });
});
