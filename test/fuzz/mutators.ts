import type { Random } from '../../src/common/random.ts';

/**
 * Mutations of real mail for fuzzing the parsers. Each is pure: (bytes, random) → new bytes, so a
 * failure replays from its seed. Header edits work on the header block as Latin-1 text, which
 * round-trips every byte.
 */
export type Mutator = (raw: Uint8Array, rnd: Random) => Uint8Array;

const latin1 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));

/** [header block, separator + body]; the whole message is the header block when there is no empty line. */
function split(raw: Uint8Array): [string, string] {
  const s = latin1(raw);
  const m = /\r?\n\r?\n/.exec(s);
  return m ? [s.slice(0, m.index), s.slice(m.index)] : [s, ''];
}

function headerFields(head: string): string[] {
  return head.split(/\r?\n(?![ \t])/);
}

function pick<T>(rnd: Random, xs: readonly T[]): T {
  return xs[rnd.int(0, xs.length - 1)]!;
}

export const mutators: Record<string, Mutator> = {
  byteFlips(raw, rnd) {
    const out = raw.slice();
    const flips = rnd.int(1, Math.max(1, Math.min(64, out.length >> 4)));
    for (let i = 0; i < flips && out.length; i++) {
      const at = rnd.int(0, out.length - 1);
      out[at] = out[at]! ^ (1 << rnd.int(0, 7));
    }
    return out;
  },
  truncate(raw, rnd) {
    return raw.slice(0, rnd.int(0, raw.length));
  },
  duplicateHeaders(raw, rnd) {
    const [head, body] = split(raw);
    const fields = headerFields(head);
    const f = pick(rnd, fields);
    const times = rnd.int(1, rnd.next() < 0.1 ? 3000 : 5);
    fields.splice(rnd.int(0, fields.length), 0, ...new Array<string>(times).fill(f));
    return bytes(fields.join('\r\n') + body);
  },
  deleteHeaders(raw, rnd) {
    const [head, body] = split(raw);
    const fields = headerFields(head).filter(() => rnd.next() > 0.3);
    return bytes(fields.join('\r\n') + body);
  },
  refoldHeaders(raw, rnd) {
    const [head, body] = split(raw);
    const fields = headerFields(head).map((f) =>
      f.replace(/ /g, () => (rnd.next() < 0.3 ? pick(rnd, ['\r\n ', '\r\n\t', '\n ', '\r\n   \r\n ']) : ' ')),
    );
    return bytes(fields.join('\r\n') + body);
  },
  deepNesting(raw, rnd) {
    const depth = rnd.int(10, 400);
    let s = 'Content-Type: text/plain\r\n\r\nleaf\r\n';
    for (let d = depth; d > 0; d--) s = `Content-Type: multipart/mixed; boundary="n${d}"\r\n\r\n--n${d}\r\n${s}--n${d}--\r\n`;
    return bytes(`From: fuzz@example.com\r\nSubject: nest\r\nMIME-Version: 1.0\r\n${s}`);
  },
  enormousLine(raw, rnd) {
    const [head, body] = split(raw);
    const line = pick(rnd, ['x', 'a b ', ' ', '\t', '>', '=', '<', '<div>', '<div class=', '&amp;', 'On wrote: ', '-', '_']).repeat(rnd.int(100_000, 1_000_000));
    return rnd.next() < 0.5 ? bytes(`${head}\r\nX-Long: ${line}${body}`) : bytes(`${head}${body}\r\n${line}\r\n`);
  },
  brokenBase64(raw, rnd) {
    const [head, body] = split(raw);
    const junk = Array.from({ length: rnd.int(10, 5000) }, () => pick(rnd, ['QUJD', '====', '!!', '\r\n', 'A', '=\r\n', '\u00ff'])).join('');
    return bytes(`${head.replace(/\r?\nContent-Transfer-Encoding:[^\r\n]*/gi, '')}\r\nContent-Transfer-Encoding: base64${body.slice(0, 4)}${junk}`);
  },
  brokenQuotedPrintable(raw, rnd) {
    const [head, body] = split(raw);
    const junk = Array.from({ length: rnd.int(10, 5000) }, () => pick(rnd, ['=', '=Z', '=4', '=\r\n', '=3D', '==', 'abc', '=\n', '=FF'])).join('');
    return bytes(`${head.replace(/\r?\nContent-Transfer-Encoding:[^\r\n]*/gi, '')}\r\nContent-Transfer-Encoding: quoted-printable${body}${junk}`);
  },
  invalidCharset(raw, rnd) {
    const cs = pick(rnd, ['x-unknown', 'utf-7', 'utf-16', 'utf-32', 'iso-2022-kr', '"', '', 'iso-8859-99', 'ебать', 'hz-gb-2312', 'replacement']);
    const s = latin1(raw).replace(/charset\s*=\s*("?)[^";\s]*\1/gi, `charset=${cs}`);
    return bytes(s.includes('charset=') ? s : s.replace(/\r?\n\r?\n/, `\r\nContent-Type: text/plain; charset=${cs}\r\n\r\n`));
  },
  nulBytes(raw, rnd) {
    const out = Array.from(raw);
    for (let i = rnd.int(1, 20); i > 0; i--) out.splice(rnd.int(0, out.length), 0, 0);
    return Uint8Array.from(out);
  },
  hugeBody(raw, rnd) {
    const [head, body] = split(raw);
    const unit = pick(rnd, ['lorem ipsum dolor sit amet\r\n', '> quoted line\r\n', 'QUJDREVGR0g=\r\n', 'x']);
    return bytes(`${head}${body || '\r\n\r\n'}${unit.repeat(Math.ceil((10 * 1024 * 1024) / unit.length))}`);
  },
  boundaryConfusion(raw, rnd) {
    const b = latin1(raw).match(/boundary="?([^";\r\n]+)"?/i)?.[1] ?? 'b';
    const variants = [`--${b}\r\n`, `--${b}--\r\n`, `--${b.slice(0, -1)}\r\n`, `--${b}${b}\r\n`, `--${b} \r\n`, '--\r\n', `\r\n--${b}`];
    const s = latin1(raw);
    const parts: string[] = [];
    let at = 0;
    for (let i = rnd.int(1, 30); i > 0; i--) {
      const to = rnd.int(at, s.length);
      parts.push(s.slice(at, to), pick(rnd, variants));
      at = to;
    }
    parts.push(s.slice(at));
    return bytes(parts.join(''));
  },
};

export const mutatorNames = Object.keys(mutators);

export function mutate(raw: Uint8Array, names: readonly string[], rnd: Random): Uint8Array {
  let out = raw;
  for (const n of names) out = mutators[n]!(out, rnd.fork(n));
  return out;
}
