import fc from 'fast-check';

/**
 * fast-check arbitraries for structured inputs the byte mutators rarely spell: MIME header fields
 * with parameters and encoded words, DSN per-recipient blocks, Message-ID lists, and provider
 * answers shaped like the real ones with wrong types in places. The fuzzer draws one value with a
 * seed from its own random stream (`draw`), so a run still replays from its seed.
 */
const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
const word = fc.oneof(token, fc.string({ maxLength: 12 }), fc.constantFrom('', ' ', '"', ';', '=', '\\', '\r\n', '\r\n ', 'é', '\u0000'));
const charset = fc.constantFrom('utf-8', 'UTF-8', 'iso-8859-1', 'windows-1252', 'iso-2022-jp', 'koi8-r', 'x-unknown', 'utf-7', '');
const domain = fc.oneof(fc.domain(), fc.constantFrom('[127.0.0.1]', 'localhost', '', 'example.com.'));
const local = fc.oneof(token, fc.constantFrom('"a b"', '"a\\"b"', '', '.', 'a..b'));
const address = fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`);

const encodedWord = fc
  .tuple(charset, fc.constantFrom('B', 'Q', 'b', 'q', 'X'), fc.string({ maxLength: 20 }))
  .map(([cs, enc, text]) => `=?${cs}?${enc}?${enc.toUpperCase() === 'B' ? Buffer.from(text).toString('base64') : text.replace(/ /g, '_')}?=`);

const param = fc
  .tuple(fc.constantFrom('charset', 'boundary', 'name', 'filename', 'report-type', 'format', 'delsp', 'name*', 'name*0', 'name*1*'), word, fc.boolean())
  .map(([k, v, quoted]) => `; ${k}=${quoted ? `"${v}"` : v}`);

const contentType = fc
  .tuple(
    fc.constantFrom('text/plain', 'text/html', 'multipart/mixed', 'multipart/report', 'message/rfc822', 'message/delivery-status', 'message/feedback-report', 'text/rfc822-headers', 'application/pdf', 'text', '/'),
    fc.array(param, { maxLength: 4 }),
  )
  .map(([t, ps]) => `Content-Type: ${t}${ps.join('')}`);

const status = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 999 })).map(([a, b, c]) => `${a}.${b}.${c}`),
  word,
);

const dsnBlock = fc
  .tuple(address, fc.constantFrom('failed', 'delayed', 'delivered', 'relayed', 'expanded', 'FAILED (permanent)', ''), status, fc.string({ maxLength: 60 }))
  .map(([rcpt, action, st, diag]) => `Final-Recipient: rfc822; ${rcpt}\r\nAction: ${action}\r\nStatus: ${st}\r\nDiagnostic-Code: smtp; ${diag}`);

const messageIdList = fc
  .array(fc.tuple(local, domain, fc.constantFrom(' ', '\r\n ', ',', '', ' (c) ')), { maxLength: 6 })
  .map((ids) => ids.map(([l, d, sep]) => `<${l}@${d}>${sep}`).join(''));

const headerField = fc.oneof(
  contentType,
  fc.tuple(fc.constantFrom('Subject', 'From', 'To', 'Reply-To'), fc.array(fc.oneof(encodedWord, word, address), { maxLength: 5 })).map(([n, parts]) => `${n}: ${parts.join(' ')}`),
  fc.tuple(fc.constantFrom('Message-ID', 'In-Reply-To', 'References'), messageIdList).map(([n, v]) => `${n}: ${v}`),
  fc.tuple(fc.constantFrom('Content-Transfer-Encoding', 'Auto-Submitted', 'Precedence', 'X-Autoreply', 'Feedback-Type'), word).map(([n, v]) => `${n}: ${v}`),
  dsnBlock,
);

/** A value of any JSON type, with the awkward numbers and strings. */
const jsonLeaf = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 16 }), fc.constantFrom('', '0', '12345678901234567890', '2026-11-29T10:00:00Z', 'not-a-date'));
const jsonAny: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, jsonLeaf, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('id', 'threadId', 'value', 'error', 'code', 'message', 'historyId', 'labelIds', 'raw'), tie('v'), { maxKeys: 3 })),
})).v;

export const arbitraries = { headerField, dsnBlock, messageIdList, encodedWord, jsonAny };

/** One value of `arb`, drawn with `seed`. */
export function draw<T>(arb: fc.Arbitrary<T>, seed: number): T {
  return fc.sample(arb, { seed, numRuns: 1 })[0]!;
}
