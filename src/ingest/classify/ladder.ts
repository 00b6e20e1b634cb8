import type { Classification, ParsedMail } from '../types.ts';
import { detectBounce, PROSE_CONFIDENCE } from './bounce/index.ts';
import { classifyFeedback } from './feedback.ts';
import { classifyByHeaders } from './headers.ts';
import { classifyIntent, unsubscribeRequest } from './intent/index.ts';
import type { LlmClassifier } from './llm.ts';
import { detectOutOfOffice, statedReturnDate } from './out-of-office.ts';

/**
 * The classification ladder: each rung looks at the mail in turn and the first that recognises
 * it decides, with a confidence and a reason that are stored.
 *
 *   headers → feedback → bounce → out-of-office → unsubscribe phrase → intent model → LLM → human_reply
 *
 * A header verdict (Auto-Submitted, Precedence…) is held back until the report rungs have looked:
 * MTAs stamp bounces with the same headers, and a bounce must act as a bounce. Whatever the
 * optional rungs do, a mail that is none of bounce, report, automatic or challenge is a
 * human_reply: stopping a sequence on a reply never depends on the model or the LLM.
 */

export interface ClassifyOptions {
  /** The new text of the reply (quoted history and signature removed); the whole text otherwise. */
  newText?: string;
  /** Asked only about human replies whose intent the model is unsure of. Off by default. */
  llm?: LlmClassifier | null;
  /** Below this intent confidence the LLM is asked (and callers send the reply to review). */
  reviewBelow?: number;
}

export const DEFAULT_REVIEW_BELOW = 0.6;

/** A message that passed every automatic and report rung is a person's reply, whatever its intent. */
const HUMAN_REPLY_CONFIDENCE = 0.9;

export async function classify(mail: ParsedMail, opts: ClassifyOptions = {}): Promise<Classification> {
  const newText = opts.newText ?? mail.text;
  const byHeaders = classifyByHeaders(mail);
  if (byHeaders?.label === 'challenge') return byHeaders;

  const report = classifyFeedback(mail) ?? detectBounce(mail);
  const ooo = report && !isProseBounce(report) ? null : detectOutOfOffice(mail, newText);
  // An out-of-office note can read like a prose bounce ("your message will not be delivered to
  // me until…"); taken for a hard bounce it would suppress a good address. Headers saying it
  // is an automatic reply and the out-of-office rung agreeing outweigh prose evidence.
  if (report && !(isProseBounce(report) && byHeaders?.label === 'auto_reply' && ooo)) return report;

  if (byHeaders) {
    // The headers know it is automatic; the out-of-office rung knows until when.
    if (ooo) return { ...byHeaders, label: 'auto_reply', reason: `${byHeaders.reason}; ${ooo.reason}`, returnDate: ooo.returnDate };
    // An automatic reply whose words are not a recognised note may still say when its writer is back.
    if (byHeaders.label === 'auto_reply') {
      const back = statedReturnDate(mail, newText);
      if (back !== null) return { ...byHeaders, reason: `${byHeaders.reason}; back ${new Date(back).toISOString().slice(0, 10)}`, returnDate: back };
    }
    return byHeaders;
  }
  if (ooo) return { label: 'auto_reply', confidence: ooo.confidence, reason: ooo.reason, rung: 'out_of_office', returnDate: ooo.returnDate };

  const unsubscribe = unsubscribeRequest(newText);
  if (unsubscribe) {
    return { label: 'unsubscribe_request', confidence: unsubscribe.confidence, reason: unsubscribe.reason, rung: 'unsubscribe', intent: { intent: 'unsubscribe', ...unsubscribe } };
  }

  const intent = classifyIntent(newText);
  const reviewBelow = opts.reviewBelow ?? DEFAULT_REVIEW_BELOW;
  if (opts.llm && intent.confidence < reviewBelow) {
    const asked = await askLlm(opts.llm, mail, newText);
    if (asked) return asked;
  }
  if (intent.intent === 'unsubscribe' && intent.confidence >= reviewBelow) {
    return { label: 'unsubscribe_request', confidence: intent.confidence, reason: `model: ${intent.reason}`, rung: 'model', intent };
  }
  return { label: 'human_reply', confidence: HUMAN_REPLY_CONFIDENCE, reason: `no automatic or report signal; intent ${intent.intent} (${intent.reason})`, rung: 'model', intent };
}

function isProseBounce(c: Classification): boolean {
  return c.label === 'bounce' && c.confidence <= PROSE_CONFIDENCE;
}

/** The LLM's answer, or null when it declines or fails: the ladder then keeps its own verdict. */
async function askLlm(llm: LlmClassifier, mail: ParsedMail, newText: string): Promise<Classification | null> {
  let answer: Awaited<ReturnType<LlmClassifier['classify']>>;
  try {
    answer = await llm.classify({ subject: mail.subject, newText, from: mail.from?.address ?? '' });
  } catch {
    return null;
  }
  if (!answer) return null;
  // The LLM refines a human reply; it may not turn one into a bounce or a report. Its
  // confidence is about what it adds (the intent, or another label): that the message is a
  // person's reply, and stops the sequence, does not become less certain because the LLM is unsure.
  const label = answer.label === 'unsubscribe_request' || answer.label === 'auto_reply' ? answer.label : 'human_reply';
  return {
    label,
    confidence: label === 'human_reply' ? HUMAN_REPLY_CONFIDENCE : answer.confidence,
    reason: `llm: ${answer.reason}`,
    rung: 'llm',
    ...(answer.intent ? { intent: { intent: answer.intent, confidence: answer.confidence, reason: answer.reason } } : {}),
  };
}
