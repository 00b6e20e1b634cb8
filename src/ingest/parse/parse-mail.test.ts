import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { parseMail, parseMailSafe } from './parse-mail.ts';
import { TEXT_LIMITS } from './limits.ts';

const enc = new TextEncoder();
const bytes = (...parts: Array<string | number[]>) => {
  const chunks = parts.map((p) => (typeof p === 'string' ? enc.encode(p) : Uint8Array.from(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};
const msg = (headers: string, body: string | number[]) => bytes(`From: a@example.com\r\nTo: b@example.com\r\nSubject: t\r\n${headers}\r\n`, body);

describe('parseMailSafe: charsets', () => {
  // Byte sequences written out by hand, so the test does not depend on an encoder.
  const cases: Array<[string, number[], string]> = [
    ['ISO-8859-1', [0x43, 0x61, 0x66, 0xe9], 'Café'],
    ['windows-1252', [0x80, 0x20, 0x93, 0x71, 0x94], '€ “q”'],
    ['ISO-2022-JP', [0x1b, 0x24, 0x42, 0x24, 0x33, 0x24, 0x73, 0x24, 0x4b, 0x24, 0x41, 0x24, 0x4f, 0x1b, 0x28, 0x42], 'こんにちは'],
    ['Shift_JIS', [0x82, 0xb1, 0x82, 0xf1, 0x82, 0xc9, 0x82, 0xbf, 0x82, 0xcd], 'こんにちは'],
    ['GB2312', [0xc4, 0xe3, 0xba, 0xc3], '你好'],
    ['KOI8-R', [0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4], 'Привет'],
  ];
  it.each(cases)('decodes a %s body', async (charset, body, expected) => {
    const r = await parseMailSafe(msg(`Content-Type: text/plain; charset=${charset}\r\nContent-Transfer-Encoding: 8bit\r\n`, body));
    expect(r.ok && r.mail.text.trim()).toBe(expected);
  });

  it('decodes encoded-word subjects (ISO-2022-JP base64, KOI8-R quoted-printable)', async () => {
    const jp = await parseMail(bytes('From: a@example.com\r\nSubject: =?ISO-2022-JP?B?GyRCJDMkcyRLJEEkTxsoQg==?=\r\n\r\nx'));
    expect(jp.subject).toBe('こんにちは');
    const ru = await parseMail(bytes('From: a@example.com\r\nSubject: =?KOI8-R?Q?=F0=D2=C9=D7=C5=D4?=\r\n\r\nx'));
    expect(ru.subject).toBe('Привет');
  });

  it('UTF-8 mislabelled as a legacy charset is decoded as UTF-8; real legacy text is not', async () => {
    const utf8 = Array.from(Buffer.from('您好！ 你今天好吗？', 'utf8'));
    const mislabelled = await parseMailSafe(msg('Content-Type: text/plain; charset=Big5\r\nContent-Transfer-Encoding: 8bit\r\n', utf8));
    expect(mislabelled.ok && mislabelled.mail.text.trim()).toBe('您好！ 你今天好吗？');
    const big5 = await parseMailSafe(msg('Content-Type: text/plain; charset=Big5\r\nContent-Transfer-Encoding: 8bit\r\n', [0xa7, 0x41, 0xa6, 0x6e]));
    expect(big5.ok && big5.mail.text.trim()).toBe('你好');
    const latin1 = await parseMailSafe(msg('Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n', [0x43, 0x61, 0x66, 0xe9]));
    expect(latin1.ok && latin1.mail.text.trim()).toBe('Café');
  });

  it('an unknown charset does not fail the parse', async () => {
    const r = await parseMailSafe(msg('Content-Type: text/plain; charset=x-no-such-charset\r\n', 'hello'));
    expect(r.ok && r.mail.text.trim()).toBe('hello');
  });
});

describe('parseMailSafe: HTML-only mail', () => {
  it('gets its text from the HTML: blocks to lines, entities decoded, style and script dropped', async () => {
    const html = '<html><head><style>p { color: red }</style></head><body><p>Hello&nbsp;there &amp; welcome</p><div>Second</div><script>x()</script></body></html>';
    const m = await parseMail(msg('Content-Type: text/html; charset=utf-8\r\n', html));
    expect(m.text).toBe('Hello there & welcome\n\nSecond');
    expect(m.html).toContain('<p>');
  });

  it('keeps the text/plain part when there is one', async () => {
    const raw = msg(
      'MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=b\r\n',
      '--b\r\nContent-Type: text/plain\r\n\r\nplain body\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>html body</p>\r\n--b--\r\n',
    );
    expect((await parseMail(raw)).text.trim()).toBe('plain body');
  });
});

describe('parseMailSafe: quarantine', () => {
  const reasons: Array<[string, Uint8Array | string, Record<string, number>?]> = [
    ['empty', ''],
    ['empty', ' \r\n\r\n '],
    ['too_large', msg('', 'x'.repeat(2000)), { maxBytes: 1000 }],
    ['no_separator', 'From: a@example.com\r\nSubject: x\r\nthis body is glued to the headers'],
    ['no_header', 'just some text\r\n\r\nand more'],
    ['binary', bytes('From: a@example.com\r\nSubject: x', [0], '\r\n\r\nbody')],
    ['binary', bytes('From: a@example.com\r\n\r\n', Array.from({ length: 4096 }, (_, i) => i % 7))],
    ['too_many_headers', `${'X-A: 1\r\n'.repeat(50)}\r\nbody`, { maxHeaders: 20 }],
    ['headers_too_long', `Subject: ${'x'.repeat(5000)}\r\n\r\nbody`, { maxHeaderBytes: 1000 }],
    ['too_many_parts', msg('Content-Type: multipart/mixed; boundary=b\r\n', `${'--b\r\nContent-Type: text/plain\r\n\r\nx\r\n'.repeat(30)}--b--\r\n`), { maxParts: 10, maxBoundaryLines: 20 }],
  ];
  it.each(reasons)('%s', async (reason, raw, limits) => {
    const r = await parseMailSafe(raw, limits);
    expect(r).toMatchObject({ ok: false, reason });
    await expect(parseMail(raw, limits)).rejects.toSatisfy((e) => isCadenzaError(e, 'MAIL_MALFORMED'));
  });

  it('too many parts after parsing', async () => {
    const raw = msg('Content-Type: multipart/mixed; boundary=b\r\n', `${'--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment\r\n\r\nx\r\n'.repeat(12)}--b--\r\n`);
    expect(await parseMailSafe(raw, { maxParts: 10 })).toMatchObject({ ok: false, reason: 'too_many_parts' });
    expect((await parseMailSafe(raw)).ok).toBe(true);
  });

  it('nesting too deep', async () => {
    let body = 'leaf\r\n';
    for (let d = 60; d > 0; d--) body = `--b${d}\r\nContent-Type: multipart/mixed; boundary=b${d + 1}\r\n\r\n${body}--b${d}--\r\n`;
    const r = await parseMailSafe(msg('Content-Type: multipart/mixed; boundary=b1\r\n', body));
    expect(r).toMatchObject({ ok: false, reason: 'nesting_too_deep' });
  });

  it('a parse over its time limit', async () => {
    const raw = msg('', 'x\r\n'.repeat(200_000));
    expect(await parseMailSafe(raw, { maxParseMs: 0 })).toMatchObject({ ok: false, reason: 'timeout' });
  });

  it('accepts a message of header fields only (the body is optional)', async () => {
    const r = await parseMailSafe('From: a@example.com\r\nAuto-Submitted: auto-generated\r\nSubject: x\r\n');
    expect(r.ok && r.mail.headers.find((h) => h.key === 'auto-submitted')?.value).toBe('auto-generated');
  });

  it('accepts an mbox "From " line and obsolete "Name :" headers', async () => {
    expect((await parseMailSafe('From a@example.com Mon Jan  1 00:00:00 2024\r\nFrom: a@example.com\r\n\r\nhi')).ok).toBe(true);
    expect((await parseMailSafe('Subject : x\r\n\r\nhi')).ok).toBe(true);
  });
});

describe('parseMail: Message-ID, In-Reply-To, References', () => {
  it('unfolds, drops comments, adds missing brackets, skips garbage', async () => {
    const m = await parseMail(
      'Message-ID: (generated) <abc@example.com> (by x)\r\n' +
        'In-Reply-To: parent@example.com\r\n' +
        'References: <one@example.com>\r\n <two@\r\n example.com> (comment <no@example.com>) garbage <>\r\n\t<three@example.com>\r\n\r\nbody',
    );
    expect(m.messageId).toBe('<abc@example.com>');
    expect(m.inReplyTo).toBe('<parent@example.com>');
    expect(m.references).toEqual(['<one@example.com>', '<two@example.com>', '<three@example.com>']);
  });

  it('null for absent or unusable ids', async () => {
    const m = await parseMail('From: a@example.com\r\nMessage-ID: <>\r\nIn-Reply-To: not an id\r\n\r\nbody');
    expect(m.messageId).toBeNull();
    expect(m.inReplyTo).toBeNull();
    expect(m.references).toEqual([]);
  });
});

describe('parseMailSafe: large bodies', () => {
  it('a 10 MB text part of 400,000 lines parses in bounded time, byte for byte up to the text cap', async () => {
    const line = 'lorem ipsum dolor sit amet';
    const raw = msg('Content-Type: multipart/mixed; boundary=b\r\n', `--b\r\nContent-Type: text/plain\r\n\r\n${`${line}\r\n`.repeat(400_000)}--b--\r\n`);
    const t0 = performance.now();
    const r = await parseMailSafe(raw);
    // postal-mime joined the lines through a Blob: 8.6 s here before the fix, ~1 s after.
    expect(performance.now() - t0).toBeLessThan(5_000);
    // The stages after the parser read the first TEXT_LIMITS.bodyChars characters, exactly as sent.
    expect(r.ok && r.mail.text).toBe(`${line}\n`.repeat(400_000).slice(0, TEXT_LIMITS.bodyChars));
  }, 30_000);

  it('format=flowed: a quoted flowed line is not joined with the answer under it (RFC 3676 §4.5)', async () => {
    const m = await parseMail(msg('Content-Type: text/plain; charset=us-ascii; format=flowed\r\n', 'On 04/02/2012 06:26 PM, Megan wrote:\r\n> Hi \r\nHello\r\n'));
    expect(m.text.split('\n').slice(0, 3)).toEqual(['On 04/02/2012 06:26 PM, Megan wrote:', '> Hi ', 'Hello']);
    const joined = await parseMail(msg('Content-Type: text/plain; format=flowed\r\n', 'one long \r\nparagraph\r\n> quoted \r\n> more\r\n'));
    expect(joined.text.split('\n').slice(0, 2)).toEqual(['one long paragraph', '> quoted more']);
  });
});
