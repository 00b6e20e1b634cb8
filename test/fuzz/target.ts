import { classifyByHeaders } from '../../src/ingest/classify/headers.ts';
import { classifyFeedback } from '../../src/ingest/classify/feedback.ts';
import { detectBounce } from '../../src/ingest/classify/bounce/index.ts';
import { classify } from '../../src/ingest/classify/ladder.ts';
import { detectOutOfOffice } from '../../src/ingest/classify/out-of-office.ts';
import { parseMessageIds } from '../../src/ingest/parse/message-ids.ts';
import { parseMailSafe } from '../../src/ingest/parse/parse-mail.ts';
import { extractReplyText } from '../../src/ingest/reply-text/index.ts';

/**
 * What the fuzzer drives: everything ingestion runs on a message's bytes, as the worker runs it
 * (parse → reply text → the classifier's rungs → the ladder), plus the reply-text extractor and
 * the Message-ID parser fed the raw bytes directly. None of it may throw.
 */
export interface TargetResult {
  ms: number;
  quarantined: string | null;
}

export async function runTarget(raw: Uint8Array, now = Date.UTC(2026, 10, 29)): Promise<TargetResult> {
  const t0 = performance.now();
  const r = await parseMailSafe(raw);
  if (r.ok) {
    const mail = r.mail;
    const reply = extractReplyText({ text: mail.text, html: mail.html, from: mail.from?.address ?? null });
    classifyByHeaders(mail);
    classifyFeedback(mail);
    detectBounce(mail);
    detectOutOfOffice(mail, reply.text, now);
    await classify(mail, { newText: reply.text, llm: null });
  }
  // The extractors on the undecoded bytes: hostile text that never went through the parser.
  const asText = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, 2_000_000)).toString('latin1');
  extractReplyText({ text: asText, from: 'Fuzz Sender <fuzz@example.com>' });
  extractReplyText({ html: asText });
  parseMessageIds(asText.slice(0, 100_000));
  return { ms: performance.now() - t0, quarantined: r.ok ? null : r.reason };
}
