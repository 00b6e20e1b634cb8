import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { CORPORA } from '../corpora/location.ts';
import { hostileMessages } from './hostile-corpus.ts';

/** The corpora folder (../shared/corpora from the repository root). */
export { CORPORA };

/** Built-in seeds, so the fuzzer also runs where the corpora are absent. */
const BUILT_IN = [
  'From: Ann <ann@example.com>\r\nTo: rep@vendor.test\r\nSubject: Re: hello\r\nMessage-ID: <a@example.com>\r\nIn-Reply-To: <b@vendor.test>\r\nReferences: <c@vendor.test> <b@vendor.test>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nYes, Thursday works.\r\n\r\nOn Mon, 2 Apr 2012 at 09:00, Rep <rep@vendor.test> wrote:\r\n> Hi Ann\r\n> Reply STOP to opt out\r\n',
  'From: MAILER-DAEMON@example.com\r\nTo: rep@vendor.test\r\nSubject: Undelivered Mail\r\nMIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="r"\r\n\r\n--r\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--r\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.com\r\n\r\nFinal-Recipient: rfc822; x@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n--r--\r\n',
  'From: a@example.com\r\nSubject: =?UTF-8?B?w7xiZXI=?=\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=E9 au lait\r\n--b\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\nPGRpdj5IaTwvZGl2PjxibG9ja3F1b3RlIHR5cGU9ImNpdGUiPm9sZDwvYmxvY2txdW90ZT4=\r\n--b--\r\n',
];

/** Generated hostile shapes (hostile-corpus.ts) are seeds too, at this fraction of their megabyte: mutations grow them. */
const HOSTILE_SCALE = 0.05;

/** Seeds named so are generated, not real mail (they may be quarantined). */
export const HOSTILE_PREFIX = 'hostile/';

/** Real mail from the corpora (.eml), up to `max` files, in a stable order; the built-in and hostile seeds after them. */
export function loadSeeds(max = Infinity): Array<{ name: string; bytes: Uint8Array }> {
  const out: Array<{ name: string; bytes: Uint8Array }> = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir).sort()) {
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.eml') && out.length < max) out.push({ name: path.relative(CORPORA, p), bytes: new Uint8Array(readFileSync(p)) });
    }
  };
  if (existsSync(CORPORA)) walk(CORPORA);
  BUILT_IN.forEach((s, i) => out.push({ name: `built-in-${i}`, bytes: new Uint8Array(Buffer.from(s, 'latin1')) }));
  for (const h of hostileMessages(HOSTILE_SCALE)) out.push({ name: `${HOSTILE_PREFIX}${h.name}`, bytes: h.raw });
  return out;
}
