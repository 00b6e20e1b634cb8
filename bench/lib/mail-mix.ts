import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Random } from '../../src/common/random.ts';

/**
 * A realistic inbound mix for a rep's mailbox running sequences, built from the shared corpora
 * (real mail written by real clients and mailers) and shaped as it arrives: every message carries
 * a transport header block, replies come as HTML + text or text alone with the quoted history and
 * often a signature, and bounces and out-of-office notes are the corpora's own, rewritten to answer
 * one of our sends. The shares and the shapes are documented in docs/benchmarks.md ("Ingestion",
 * the mix) with the distributions they were measured from:
 *
 *   45%  human replies   body: a reply from the replyparse corpus (crisp, github, talon: new text,
 *                        quoted history, signatures, several languages; sizes 43 B to 750 KB);
 *                        65% multipart/alternative with an HTML part (Gmail/Outlook shape, the
 *                        quote in a blockquote), 35% text/plain (and any body over 64 KB: the
 *                        corpus's 750 KB reply is a plain-text mailing-list thread); our send quoted below when the body
 *                        quotes nothing; a signature on 70%; threaded by In-Reply-To/References
 *   15%  out-of-office   the corpora's auto-replies (sisimai autoreply, autoreply-ext), answering a send
 *   10%  bounces         the corpora's DSNs (sisimai, bounceparser), the original Message-ID and the
 *                        labelled recipient rewritten to one of our sends where the report has them
 *                        (a report that names neither threads to nothing, as in life)
 *   30%  other mail      notifications (3-6 KB) and newsletters (15-40 KB of table HTML) from
 *                        strangers: stored in the inbox, no enrollment
 *
 * Deterministic from the Random it is given.
 */

export type MixKind = 'reply' | 'ooo' | 'bounce' | 'other';

export const MIX_SHARES: Record<MixKind, number> = { reply: 45, ooo: 15, bounce: 10, other: 30 };

/** One of our sends the mix may answer. */
export interface MixSend {
  leadEmail: string;
  messageId: string;
  subject: string;
}

export interface MixMessage {
  kind: MixKind;
  raw: Uint8Array;
  /** The send it answers (null for other mail). */
  answers: MixSend | null;
}

interface CorpusFile {
  path: string;
  text: string;
  /** Labelled failed recipient (bounceparser), to rewrite to the lead's address. */
  recipient: string | null;
}

export interface MixSources {
  replies: string[];
  ooo: CorpusFile[];
  bounces: CorpusFile[];
}

/** Reads the corpora once. Null when they are absent (a clone without ../shared/corpora). */
export function loadMixSources(corpora: string): MixSources | null {
  if (!existsSync(join(corpora, 'replyparse'))) return null;
  const files = (dir: string): string[] => {
    const out: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d).sort()) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else out.push(p);
      }
    };
    if (existsSync(dir)) walk(dir);
    return out;
  };
  const read = (p: string) => readFileSync(p, 'latin1');
  // Reply bodies: the plain-text replies as written (the .eml and .html files are whole messages or
  // HTML fragments; the text ones are what a client puts in the body).
  const replies = files(join(corpora, 'replyparse'))
    .filter((p) => p.endsWith('.txt') || /stripped_/.test(p))
    .map((p) => readFileSync(p, 'utf8'));
  const labels = (name: string): Array<Record<string, unknown>> =>
    existsSync(join(corpora, name)) ? readFileSync(join(corpora, name), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
  const auto = new Set(labels('autoreply-ext-labels.jsonl').filter((l) => l.label === 'auto_reply').map((l) => l.file as string));
  const ooo = [
    ...files(join(corpora, 'sisimai', 'autoreply')).map((p) => ({ path: p, text: read(p), recipient: null })),
    ...files(join(corpora, 'autoreply-ext')).filter((p) => auto.has(p.slice(corpora.length + 1))).map((p) => ({ path: p, text: read(p), recipient: null })),
  ];
  const bpRecipient = new Map(labels('bounceparser-labels.jsonl').filter((l) => l.kind === 'bounce').map((l) => [l.file as string, (l.recipient as string | null) ?? null]));
  const bounces = [
    ...files(join(corpora, 'sisimai', 'bounce')).map((p) => ({ path: p, text: read(p), recipient: null })),
    ...files(join(corpora, 'bounceparser')).filter((p) => bpRecipient.has(p.slice(corpora.length + 1))).map((p) => ({ path: p, text: read(p), recipient: bpRecipient.get(p.slice(corpora.length + 1)) ?? null })),
  ];
  return { replies, ooo, bounces };
}

/**
 * `n` messages in arrival order; those that answer a send take the next of `sends` (each send
 * answered at most once), other mail takes none. Returns fewer answering messages when sends run out.
 */
export function buildMix(src: MixSources, n: number, sends: readonly MixSend[], mailbox: string, random: Random): MixMessage[] {
  const out: MixMessage[] = [];
  let next = 0;
  const total = Object.values(MIX_SHARES).reduce((a, b) => a + b, 0);
  for (let i = 0; i < n; i++) {
    let x = random.next() * total;
    let kind: MixKind = 'other';
    for (const [k, share] of Object.entries(MIX_SHARES) as Array<[MixKind, number]>) {
      if ((x -= share) < 0) {
        kind = k;
        break;
      }
    }
    const send = kind === 'other' ? null : (sends[next++] ?? null);
    if (!send) kind = 'other';
    const id = `<mix-${i}-${Math.floor(random.next() * 1e9).toString(36)}@${send ? domainOf(send.leadEmail) : 'news.example'}>`;
    const raw =
      kind === 'reply' ? reply(src, send!, mailbox, id, random)
      : kind === 'ooo' ? rewritten(pick(src.ooo, random), send!, mailbox, id, random, false)
      : kind === 'bounce' ? rewritten(pick(src.bounces, random), send!, mailbox, id, random, true)
      : other(mailbox, id, random);
    out.push({ kind, raw: new TextEncoder().encode(raw), answers: kind === 'other' ? null : send });
  }
  return out;
}

function pick<T>(xs: readonly T[], random: Random): T {
  return xs[Math.floor(random.next() * xs.length)]!;
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

/** What a message picks up on its way: relays, authentication results, a DKIM signature (1.5-3 KB). */
function transportHeaders(fromDomain: string, mailbox: string, random: Random): string[] {
  const hops = 3 + Math.floor(random.next() * 3);
  const h: string[] = [];
  const date = new Date(Date.UTC(2026, 5, 1, 9, Math.floor(random.next() * 60))).toUTCString();
  for (let i = 0; i < hops; i++) {
    h.push(`Received: from mx${i}.${fromDomain} (mx${i}.${fromDomain} [203.0.113.${10 + i}])\r\n\tby mx.${domainOf(mailbox)} with ESMTPS id ${Math.floor(random.next() * 1e12).toString(16)}\r\n\tfor <${mailbox}>; ${date}`);
  }
  const b64 = (len: number) => Array.from({ length: len }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[Math.floor(random.next() * 64)]).join('');
  h.push(`Authentication-Results: mx.${domainOf(mailbox)};\r\n\tdkim=pass header.i=@${fromDomain} header.s=s1 header.b=${b64(8)};\r\n\tspf=pass (domain of ${fromDomain} designates 203.0.113.10 as permitted sender) smtp.mailfrom=${fromDomain};\r\n\tdmarc=pass (p=NONE sp=NONE dis=NONE) header.from=${fromDomain}`);
  h.push(`DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${fromDomain}; s=s1; t=1780300000;\r\n\th=from:to:subject:date:message-id:in-reply-to:references:mime-version;\r\n\tbh=${b64(44)};\r\n\tb=${b64(76)}\r\n\t ${b64(76)}\r\n\t ${b64(76)}\r\n\t ${b64(112)}`);
  h.push(`X-Received: by 2002:a05:6402:${Math.floor(random.next() * 9999)} with SMTP id ${b64(24)}; ${date}`);
  return h;
}

const SIGNATURES = [
  'Best,\nJordan Reyes\nHead of Operations | Northwind Logistics\n+1 (415) 555-0134 | northwind.example',
  'Thanks,\nAnna\n\n--\nAnna Kowalski\nProcurement Lead, Contoso GmbH\nTel. +49 30 1234567\nwww.contoso.example\n\nThis e-mail may contain confidential information. If you are not the intended recipient, please notify the sender and delete it.',
  'Cheers,\nSam\n\nSent from my iPhone',
  '--\nPriya Natarajan | VP Engineering\nFabrikam Inc. | 500 Market St, San Francisco, CA\nM: +1 650 555 0199',
];

const OUR_BODY =
  "Hi Pat,\n\nI noticed your team is growing its outbound motion and wanted to share how teams like yours cut the time\nfrom reply to follow-up in half. Would a 15-minute call next week make sense?\n\nIf not, just let me know and I won't follow up.\n\nBest,\nRiley\nAccount Executive";

function reply(src: MixSources, send: MixSend, mailbox: string, id: string, random: Random): string {
  let body = pick(src.replies, random).replace(/\r?\n/g, '\n');
  const quotes = /wrote:|^>|Original Message|^From: /im.test(body);
  const sig = random.next() < 0.7 ? `\n\n${pick(SIGNATURES, random)}` : '';
  const quoted = quotes ? '' : `\n\nOn Mon, Jun 1, 2026 at 9:02 AM Riley <${mailbox}> wrote:\n${OUR_BODY.split('\n').map((l) => `> ${l}`).join('\n')}`;
  body = `${body.trimEnd()}${sig}${quoted}\n`;
  const domain = domainOf(send.leadEmail);
  const head = [
    ...transportHeaders(domain, mailbox, random),
    `From: Pat Prospect <${send.leadEmail}>`,
    `To: Riley <${mailbox}>`,
    `Subject: Re: ${send.subject}`,
    `Date: Mon, 1 Jun 2026 10:${String(Math.floor(random.next() * 60)).padStart(2, '0')}:00 +0000`,
    `Message-ID: ${id}`,
    `In-Reply-To: ${send.messageId}`,
    `References: ${send.messageId}`,
    'MIME-Version: 1.0',
  ];
  const text = body.replace(/\n/g, '\r\n');
  // A plain-text client's long thread (the corpus's 750 KB mailing-list reply) stays plain text.
  if (random.next() >= 0.65 || body.length > 64 * 1024) return [...head, 'Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: 8bit', '', text].join('\r\n');
  const boundary = `000000000000${Math.floor(random.next() * 1e12).toString(16)}`;
  return [...head, `Content-Type: multipart/alternative; boundary="${boundary}"`, '', `--${boundary}`, 'Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: 8bit', '', text, `--${boundary}`, 'Content-Type: text/html; charset="UTF-8"', 'Content-Transfer-Encoding: 8bit', '', html(body), `--${boundary}--`, ''].join('\r\n');
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A client's HTML of a plain reply: the new text in divs, the quoted history in a gmail_quote blockquote. */
function html(body: string): string {
  const at = body.search(/^On .*wrote:$|^>/m);
  const fresh = at > 0 ? body.slice(0, at) : body;
  const quote = at > 0 ? body.slice(at) : '';
  const divs = fresh.split('\n').map((l) => (l.trim() ? `<div>${esc(l)}</div>` : '<div><br></div>')).join('\r\n');
  const q = quote
    ? `<br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">${esc(quote.split('\n')[0]!)}<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">${quote.split('\n').slice(1).map((l) => esc(l.replace(/^> ?/, ''))).join('<br>\r\n')}</blockquote></div>`
    : '';
  return `<div dir="ltr"><div style="font-family:Arial,Helvetica,sans-serif;font-size:small">\r\n${divs}\r\n</div>${q}</div>\r\n`;
}

/** A corpus auto-reply or DSN, made to answer `send`: its own Message-ID, addressed to us, threading as far as the report allows. */
function rewritten(f: CorpusFile, send: MixSend, mailbox: string, id: string, random: Random, bounce: boolean): string {
  const text = f.text.replace(/\r?\n/g, '\r\n');
  const end = text.indexOf('\r\n\r\n');
  let head = end >= 0 ? text.slice(0, end) : text;
  let body = end >= 0 ? text.slice(end) : '\r\n\r\n';
  // The report's own Message-ID and threading headers go; ours come in.
  head = head.replace(/^From .*\r\n/, '').replace(/^(Message-ID|In-Reply-To|References|To|Delivered-To):.*(\r\n[ \t].*)*(\r\n|$)/gim, '');
  const threading = bounce ? [] : [`In-Reply-To: ${send.messageId}`, `References: ${send.messageId}`];
  if (bounce) {
    // The original message the report quotes becomes our send, its failed recipient our lead.
    const orig = /^Message-ID:\s*(<[^>\s]+>)/im.exec(body)?.[1];
    if (orig) body = body.split(orig).join(send.messageId);
    if (f.recipient) body = body.split(f.recipient).join(send.leadEmail);
  } else {
    head = head.replace(/^From:.*(\r\n[ \t].*)*/im, `From: Pat Prospect <${send.leadEmail}>`);
    head = head.replace(/^Subject:.*(\r\n[ \t].*)*/im, `Subject: Automatic reply: ${send.subject}`);
  }
  return [...transportHeaders(bounce ? 'mailer.example' : domainOf(send.leadEmail), mailbox, random), `Message-ID: ${id}`, `To: ${mailbox}`, ...threading, head].join('\r\n') + body;
}

/** A stranger's mail: a notification or a newsletter (table HTML with inline styles). */
function other(mailbox: string, id: string, random: Random): string {
  const newsletter = random.next() < 0.5;
  const domain = newsletter ? 'news.example' : 'notify.example';
  const items = newsletter ? 12 + Math.floor(random.next() * 20) : 2 + Math.floor(random.next() * 4);
  const rows: string[] = [];
  const texts: string[] = [];
  for (let i = 0; i < items; i++) {
    const title = `Story ${i + 1}: what changed in pipeline reviews this quarter`;
    const para = 'Teams that moved weekly reviews to a shared dashboard reported fewer surprises at quarter end, and the ones that kept notes with each deal saw faster handovers. '.repeat(newsletter ? 2 : 1);
    texts.push(`${title}\n${para}\nRead more: https://${domain}/r/${i}?utm_source=newsletter&utm_medium=email`);
    rows.push(`<tr><td style="padding:16px 24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:22px;color:#333333"><h2 style="margin:0 0 8px;font-size:18px;color:#111111">${title}</h2><p style="margin:0 0 12px">${para}</p><a href="https://${domain}/r/${i}?utm_source=newsletter&amp;utm_medium=email" style="color:#0b5cff;text-decoration:none;font-weight:bold">Read more &rarr;</a></td></tr>`);
  }
  const boundary = `b-${Math.floor(random.next() * 1e12).toString(16)}`;
  const htmlPart = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>@media only screen and (max-width:600px){.c{width:100%!important}}</style></head><body style="margin:0;padding:0;background:#f4f4f4"><table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td align="center"><table class="c" role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="background:#ffffff">\r\n${rows.join('\r\n')}\r\n<tr><td style="padding:24px;font-size:12px;color:#888888">You are receiving this because you signed up. <a href="https://${domain}/unsubscribe">Unsubscribe</a></td></tr></table></td></tr></table></body></html>`;
  return [
    ...transportHeaders(domain, mailbox, random),
    `From: ${newsletter ? 'The Weekly' : 'Notifications'} <${newsletter ? 'hello' : 'noreply'}@${domain}>`,
    `To: ${mailbox}`,
    `Subject: ${newsletter ? 'This week in revenue operations' : 'You have 3 new comments'}`,
    'Date: Mon, 1 Jun 2026 08:00:00 +0000',
    `Message-ID: ${id}`,
    ...(newsletter ? [`List-Unsubscribe: <https://${domain}/unsubscribe>`, 'Precedence: bulk'] : []),
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset="UTF-8"',
    '',
    texts.join('\r\n\r\n'),
    `--${boundary}`,
    'Content-Type: text/html; charset="UTF-8"',
    '',
    htmlPart,
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

/** Size and structure of a mix, for the benchmark's report. */
export function describeMix(mix: readonly MixMessage[]): Record<string, number> {
  const sizes = mix.map((m) => m.raw.byteLength).sort((a, b) => a - b);
  const at = (p: number) => sizes[Math.min(sizes.length - 1, Math.floor((p / 100) * sizes.length))] ?? 0;
  const count = (k: MixKind) => mix.filter((m) => m.kind === k).length;
  const dec = new TextDecoder();
  return {
    messages: mix.length,
    replies: count('reply'),
    out_of_office: count('ooo'),
    bounces: count('bounce'),
    other: count('other'),
    with_html: mix.filter((m) => /text\/html/i.test(dec.decode(m.raw.subarray(0, 200_000)))).length,
    bytes_p10: at(10),
    bytes_p50: at(50),
    bytes_p90: at(90),
    bytes_max: sizes.at(-1) ?? 0,
    bytes_mean: Math.round(sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length)),
  };
}
