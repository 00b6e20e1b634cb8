/**
 * Generated hostile mail: the shapes that once made a stage of ingestion quadratic or worse, each
 * about a megabyte (what a stranger can send as a reply). Used by the hostile-ingest test, the
 * fuzzer's seeds and bench/hostile-ingest.ts. Each entry is named after the case it exercises.
 *
 * Inbound only; the send side's hostile templates and spintax are in `hostileTemplates`.
 */

export interface HostileMessage {
  name: string;
  raw: Uint8Array;
}

const MB = 1024 * 1024;

function head(name: string, contentType: string, extra = ''): string {
  return `From: Stranger <stranger@hostile.example>\r\nTo: rep@cadenza.test\r\nSubject: Re: hello\r\nMessage-ID: <${name}@hostile.example>\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: ${contentType}\r\n${extra}\r\n`;
}

/** `unit` repeated to about `bytes` bytes. */
function fill(unit: string, bytes = MB): string {
  return unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));
}

const enc = (s: string) => new TextEncoder().encode(s);

function html(name: string, body: string, extra = ''): HostileMessage {
  return { name, raw: enc(head(name, 'text/html; charset=utf-8', extra) + body) };
}

function plain(name: string, body: string, extra = ''): HostileMessage {
  return { name, raw: enc(head(name, 'text/plain; charset=utf-8', extra) + body) };
}

/** The inbound corpus; `scale` shrinks every message (1 = about 1 MB each). */
export function hostileMessages(scale = 1): HostileMessage[] {
  const b = Math.max(4096, Math.floor(MB * scale));
  return [
    // HTML-only mail whose text comes out empty: the out-of-office rung once stripped tags with backtracking regexes.
    html('html-script-openers', fill('<script', b)),
    html('html-style-openers', fill('<style', b)),
    html('html-anchor-openers', fill('<a href="', b)),
    html('html-div-openers-no-gt', fill('<div ', b)),
    html('html-lt-run', fill('<', b)),
    html('html-unclosed-comment', `<p>hi</p><!--${fill('-- <!-- ', b)}`),
    html('html-comment-openers', fill('<!--', b)),
    html('html-deep-blockquote', `${fill('<blockquote type="cite">', b / 2)}x${fill('</blockquote>', b / 2)}`),
    html('html-entity-run', fill('&#x1F600;&amp&nbsp', b)),
    html('html-attribute-quote', `<div title="${fill('a\\"', b)}">hi</div>`),
    // Plain text.
    plain('plain-megabyte-line', fill('x', b)),
    plain('plain-megabyte-line-words', fill('word ', b)),
    plain('plain-deep-quote', `Thanks\r\n\r\n${fill('>', b / 2)} hi\r\n${fill('> ', b / 2)}\r\n`),
    plain('plain-quote-lines', fill('> > > > > > > > quoted line\r\n', b)),
    plain('plain-quote-headers', fill('On Mon, 2 Apr 2012 at 09:00, Rep <rep@cadenza.test> wrote:\r\n', b)),
    plain('plain-signature-dashes', fill('-- \r\n', b)),
    plain('plain-forward-headers', fill('-----Original Message-----\r\nFrom: a\r\nSent: b\r\n', b)),
    plain('plain-ooo-words', fill('out of the office until back on returning ', b)),
    plain('plain-date-words', fill('until 12/12/2026 Monday January 2 ', b)),
    plain('plain-bounce-words', fill('550 5.1.1 could not be delivered to <x@y ', b)),
    plain('plain-unsubscribe-words', fill('please please remove me stop ', b)),
    plain('plain-spaces', `${fill(' \t', b)}x`),
    plain('plain-at-signs', fill('a@', b)),
    plain('plain-newlines-then-text', `hi\r\n${fill('\r\n', b)}x\r\n`),
    plain('plain-history-marker-spaces', `hi\r\n\r\nPlease type your reply above this line${fill(' ', Math.min(b, 200_000))}x\r\n`),
    // Headers and threading.
    plain('date-header-parens', 'hi\r\n', `X-Pad: 1\r\nDate: ${fill('(', Math.min(b, 300_000))}\r\n`),
    plain('references-many', 'hi\r\n', `References: ${fill('<a@b> ', Math.min(b, 200_000))}\r\n`),
    plain('subject-re-chain', 'hi\r\n', `X-Pad: 1\r\nSubject: ${fill('Re: ', Math.min(b, 200_000))}x\r\n`),
    // Reports.
    {
      name: 'dsn-field-run',
      raw: enc(
        `${head('dsn-field-run', 'multipart/report; report-type=delivery-status; boundary="r"')}--r\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--r\r\nContent-Type: message/delivery-status\r\n\r\n${fill('Final-Recipient: rfc822; ', b)}\r\n--r--\r\n`,
      ),
    },
    {
      name: 'dsn-space-run',
      raw: enc(
        `${head('dsn-space-run', 'multipart/report; report-type=delivery-status; boundary="r"')}--r\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--r\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; x@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\nX-Pad: ${fill(' ', b)}x\r\n--r--\r\n`,
      ),
    },
    {
      name: 'bounce-mail-from-spaces',
      raw: enc(
        `From: MAILER-DAEMON@mx.example\r\nTo: rep@cadenza.test\r\nSubject: Undelivered Mail Returned to Sender\r\nReturn-Path: <>\r\nMessage-ID: <bounce-mail-from-spaces@mx.example>\r\n\r\nThis message could not be delivered.\r\n\r\n<x@example.com>: 550 5.1.1 User unknown\r\nmail from${fill(' ', Math.min(b, 60_000))}x\r\n`,
      ),
    },
    {
      name: 'arf-field-without-at',
      raw: enc(
        `${head('arf-field-without-at', 'multipart/report; report-type=feedback-report; boundary="f"')}--f\r\nContent-Type: text/plain\r\n\r\nabuse report\r\n--f\r\nContent-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\nOriginal-Rcpt-To: ${fill('a', b)}\r\n--f--\r\n`,
      ),
    },
  ];
}

/** Send-side hostile input: templates and spintax a workspace member could save. */
export function hostileTemplates(scale = 1): Array<{ name: string; text: string }> {
  const b = Math.max(4096, Math.floor(100_000 * scale));
  return [
    { name: 'spintax-deep', text: `${'{a|'.repeat(16)}x${'}'.repeat(16)}` },
    { name: 'spintax-too-deep', text: `${'{a|'.repeat(5000)}x${'}'.repeat(5000)}` },
    { name: 'spintax-wide', text: `{${fill('a|', b)}b}` },
    { name: 'spintax-many-groups', text: fill('{a|b|c} ', b) },
    { name: 'spintax-unclosed', text: fill('{a|', b) },
    { name: 'variable-openers', text: fill('{{', b) },
    { name: 'variable-unclosed', text: fill('{{first_name | default: "', b) },
    { name: 'filters-long', text: `{{first_name${fill(' | upper', b)}}}` },
    { name: 'escapes', text: fill('\\{\\|\\}\\\\', b) },
  ];
}

/** A 25 MB plain-text mail (it once blocked the event loop for about 6 s): kept apart, it is too big for the fuzzer's seeds. */
export function bigPlainMessage(bytes = 24.5 * MB): HostileMessage {
  const head = 'From: Big <big@hostile.example>\r\nTo: rep@cadenza.test\r\nSubject: Re: hello\r\nMessage-ID: <big-25mb@hostile.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n';
  return { name: 'plain-25mb', raw: enc(head + fill('lorem ipsum dolor sit amet, consectetur adipiscing\r\n', bytes)) };
}
