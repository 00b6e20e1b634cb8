import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectBounce } from '../../../src/ingest/classify/bounce/index.ts';
import { parseDsn } from '../../../src/ingest/classify/bounce/dsn.ts';
import { classifyFeedback } from '../../../src/ingest/classify/feedback.ts';
import { classifyByHeaders } from '../../../src/ingest/classify/headers.ts';
import { unsubscribeRequest } from '../../../src/ingest/classify/intent/unsubscribe.ts';
import { detectOutOfOffice } from '../../../src/ingest/classify/out-of-office.ts';
import { parseMessageId, parseMessageIds } from '../../../src/ingest/parse/message-ids.ts';
import { parseMailSafe } from '../../../src/ingest/parse/parse-mail.ts';
import { extractReplyText } from '../../../src/ingest/reply-text/index.ts';
import { matchThread, normaliseSubject, referencedIds, type OutboundRef } from '../../../src/ingest/thread.ts';
import { gmailRetryAfter, parseGmailError } from '../../../src/mailbox/providers/gmail/errors.ts';
import { readHistoryPage } from '../../../src/mailbox/providers/gmail/history-list.ts';
import { readMessage } from '../../../src/mailbox/providers/gmail/message.ts';
import { readListPage } from '../../../src/mailbox/providers/gmail/messages-list.ts';
import { readProfile } from '../../../src/mailbox/providers/gmail/profile.ts';
import { readWatchAnswer } from '../../../src/mailbox/providers/gmail/watch.ts';
import { graphRetryAfter, parseGraphError } from '../../../src/mailbox/providers/graph/errors.ts';
import { messageAnswer } from '../../../src/mailbox/providers/graph/message.ts';
import { isDeltaExpired, readDeltaPage } from '../../../src/mailbox/providers/graph/messages-delta.ts';
import { readMessagePage } from '../../../src/mailbox/providers/graph/messages-list.ts';
import { readSubscription } from '../../../src/mailbox/providers/graph/subscriptions.ts';
import { jsonBody } from '../../../src/mailbox/providers/http.ts';
import { CORPORA, loadSeeds } from '../seeds.ts';
import { JSON_TOKENS, MAIL_TOKENS, TEXT_TOKENS } from './dictionary.ts';
import { GMAIL_ANSWERS, GRAPH_ANSWERS, RETRY_AFTER_VALUES } from './provider-answers.ts';

/**
 * What the coverage-guided fuzzer drives, one target per parser family. A target names its own
 * source files (`sources`: coverage elsewhere, in libraries or shared helpers, does not count as
 * new), its seeds, the kind of input (which mutators fit it) and a dictionary. `run` may throw
 * only a CadenzaError (a clear refusal); anything else thrown is a crash.
 */
export type InputKind = 'mail' | 'text' | 'json';

export interface Seed {
  name: string;
  bytes: Uint8Array;
}

export interface FuzzTarget {
  name: string;
  kind: InputKind;
  sources: readonly string[];
  dictionary: readonly string[];
  seeds(): Seed[];
  run(input: Uint8Array): unknown;
}

const NOW = Date.UTC(2026, 10, 29);
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src');
const src = (...parts: string[]) => path.join(SRC, ...parts);
const latin1 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
const utf8 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
const asBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
const fromText = (name: string, s: string): Seed => ({ name, bytes: new Uint8Array(Buffer.from(s, 'utf8')) });

/** Real mail from the corpora plus the built-in and generated hostile seeds (test/fuzz/seeds.ts). */
const mailSeeds = (): Seed[] => loadSeeds();

/** The header block of each mail seed: what threading reads, without megabytes of body. */
function headerSeeds(): Seed[] {
  return mailSeeds().map((s) => {
    const t = latin1(s.bytes);
    const end = t.search(/\r?\n\r?\n/);
    return { name: s.name, bytes: new Uint8Array(Buffer.from(`${end < 0 ? t.slice(0, 8192) : t.slice(0, end)}\r\n\r\n`, 'latin1')) };
  });
}

/** Reply texts: the intent model's training replies and the reply-parsing corpus. */
function replySeeds(): Seed[] {
  const out: Seed[] = [];
  const data = src('ingest', 'classify', 'intent', 'data', 'replies.jsonl');
  readFileSync(data, 'utf8')
    .split('\n')
    .filter(Boolean)
    .forEach((line, i) => out.push(fromText(`replies.jsonl:${i + 1}`, (JSON.parse(line) as { text: string }).text)));
  const corpus = path.join(CORPORA, 'replyparse');
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.txt')) out.push(fromText(path.relative(CORPORA, p), readFileSync(p, 'utf8')));
    }
  };
  walk(corpus);
  return out;
}

const threadContext = (() => {
  const ref = (messageId: string, subject: string): OutboundRef => ({
    messageId, mailboxId: 'm1', enrollmentId: 'e1', sendRequestId: 's1', threadId: 't1', subject, toNorm: 'ann@example.com', at: NOW,
  });
  const a = ref('b@vendor.test', 'hello');
  return { byMessageId: new Map([[a.messageId, a]]), byThreadId: new Map([['t1', a]]), recentByAddress: new Map([['ann@example.com', [a]]]) };
})();

const MIME: FuzzTarget = {
  name: 'mime',
  kind: 'mail',
  sources: [src('ingest', 'parse') + path.sep],
  dictionary: MAIL_TOKENS,
  seeds: mailSeeds,
  async run(input) {
    await parseMailSafe(input);
  },
};

const DSN: FuzzTarget = {
  name: 'dsn',
  kind: 'mail',
  sources: [src('ingest', 'classify', 'bounce') + path.sep, src('ingest', 'classify', 'feedback.ts')],
  dictionary: MAIL_TOKENS,
  seeds: mailSeeds,
  async run(input) {
    // The field parser on the bytes as they come, then the whole rung on the parsed message.
    parseDsn(latin1(input).slice(0, 200_000));
    const r = await parseMailSafe(input);
    if (!r.ok) return;
    detectBounce(r.mail);
    classifyFeedback(r.mail);
  },
};

const OUT_OF_OFFICE: FuzzTarget = {
  name: 'ooo',
  kind: 'mail',
  sources: [src('ingest', 'classify', 'out-of-office'), src('ingest', 'classify', 'headers.ts')],
  dictionary: MAIL_TOKENS,
  seeds: mailSeeds,
  async run(input) {
    const r = await parseMailSafe(input);
    if (!r.ok) return;
    const reply = extractReplyText({ text: r.mail.text, html: r.mail.html, from: r.mail.from?.address ?? null });
    classifyByHeaders(r.mail);
    detectOutOfOffice(r.mail, reply.text, NOW);
  },
};

const UNSUBSCRIBE: FuzzTarget = {
  name: 'unsubscribe',
  kind: 'text',
  sources: [src('ingest', 'classify', 'intent', 'unsubscribe.ts')],
  dictionary: TEXT_TOKENS,
  seeds: replySeeds,
  run(input) {
    unsubscribeRequest(utf8(input));
  },
};

const THREADING: FuzzTarget = {
  name: 'threading',
  kind: 'mail',
  sources: [src('ingest', 'parse', 'message-ids.ts'), src('ingest', 'thread.ts'), src('leads', 'email.ts')],
  dictionary: MAIL_TOKENS,
  seeds: headerSeeds,
  async run(input) {
    const text = latin1(input).slice(0, 100_000);
    parseMessageIds(text);
    parseMessageId(text);
    const r = await parseMailSafe(input);
    if (!r.ok) return;
    referencedIds(r.mail);
    normaliseSubject(r.mail.subject);
    const bounce = detectBounce(r.mail);
    const classification = bounce ?? { label: 'human_reply' as const };
    matchThread({ mail: r.mail, threadId: 't1', classification }, threadContext);
  },
};

/** Every decoder of one provider's answers gets the same body, as a success and as an error. */
function providerTarget(name: string, answers: readonly string[], decoders: Array<(b: Buffer) => unknown>, onError: (b: Buffer, retryAfter: string) => void): FuzzTarget {
  return {
    name,
    kind: 'json',
    sources: [src('mailbox', 'providers') + path.sep],
    dictionary: JSON_TOKENS,
    seeds: () => answers.map((a, i) => fromText(`${name}-answer-${i}`, a)),
    run(input) {
      const body = asBuffer(input);
      for (const d of decoders) d(body);
      onError(body, RETRY_AFTER_VALUES[input.length % RETRY_AFTER_VALUES.length]!);
    },
  };
}

const GMAIL = providerTarget(
  'gmail',
  GMAIL_ANSWERS,
  [(b) => readMessage(jsonBody(b)), (b) => readHistoryPage(jsonBody(b)), readListPage, readProfile, readWatchAnswer],
  (b, retryAfter) => {
    const e = parseGmailError(429, b);
    gmailRetryAfter(429, { 'retry-after': retryAfter }, e, NOW);
    gmailRetryAfter(403, {}, e, NOW);
  },
);

const GRAPH = providerTarget(
  'graph',
  GRAPH_ANSWERS,
  [messageAnswer('message').bind(null, 200, {}), readMessagePage, readDeltaPage, readSubscription],
  (b, retryAfter) => {
    const e = parseGraphError(410, b);
    graphRetryAfter(429, { 'retry-after': retryAfter }, e, NOW);
    isDeltaExpired(400, e.codes);
  },
);

export const TARGETS: Record<string, FuzzTarget> = Object.fromEntries(
  [MIME, DSN, OUT_OF_OFFICE, UNSUBSCRIBE, THREADING, GMAIL, GRAPH].map((t) => [t.name, t]),
);
