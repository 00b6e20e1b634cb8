/**
 * Regular expressions the ReDoS scan (redos.test.ts) may not clear on its own, each with why it
 * is safe where it runs. `pattern` is how the expression starts in the file (a dynamic one's
 * expression), and covers it whatever recheck says; an entry without `pattern` covers the file's
 * "unknown" verdicts only (recheck gave up within its budget: large alternations of literal
 * words, no nested quantifiers).
 * Super-linear is fine only on input with a small proven bound; the bound is in the reason.
 */
export interface Allowed {
  file: string;
  pattern?: string;
  reason: string;
}

const PHRASES = 'alternations of literal phrases inside lookarounds, no nested quantifiers; built from word lists';

export const allowed: Allowed[] = [
  // Unknown verdicts: word alternations too large for recheck's budget.
  { file: 'src/ingest/classify/bounce/detect.ts', reason: 'word alternations on a sender (≤ 1000) or the report (≤ 20 000 characters)' },
  { file: 'src/ingest/classify/bounce/original.ts', reason: 'bounded repetitions {1,64}@{1,255}: linear per start' },
  { file: 'src/ingest/classify/bounce/reason.ts', reason: 'word alternations on a diagnostic cut to 2000 characters; addresses with bounded repetitions' },
  { file: 'src/ingest/classify/bounce/text.ts', reason: 'word alternations and bounded address repetitions on the report cut to MAX_REPORT (64 KB)' },
  { file: 'src/ingest/classify/intent/features.ts', reason: 'runs on normalise() of at most MAX_INTENT_CHARS (4000)' },
  { file: 'src/ingest/classify/out-of-office/return-date.ts', reason: 'numeric date shapes with bounded repetitions, on at most TEXT_LIMITS.returnDateChars (4000)' },
  { file: 'src/ingest/parse/html-to-text.ts', reason: 'sticky (y) tag-name match at one position, name bounded {0,63}' },
  { file: 'src/ingest/reply-text/html-quotes.ts', reason: 'attribute match inside one tag cut to MAX_TAG_CHARS (4000)' },
  { file: 'src/ingest/reply-text/quote-headers.ts', reason: 'anchored word alternations on one line of at most MAX_SIGNAL_LINE (1000)' },
  { file: 'src/ingest/reply-text/signature.ts', reason: 'anchored word alternations on one line of at most SIGNATURE_LINE_MAX_CHARS' },
  { file: 'src/ingest/thread.ts', reason: 'anchored reply-prefix alternation on a subject cut to 1000' },
  { file: 'src/ingest/classify/bounce/index.ts', reason: 'a line-anchored literal field name (m flag): linear' },
  { file: 'src/common/html.ts', reason: 'entity names and URLs with bounded or single-class repetitions, on a template text' },
  { file: 'src/sending/compose/dkim.ts', reason: 'literal markers on the operator’s own key (trusted input)' },

  { file: 'src/ingest/parse/boundary-repair.ts', reason: 'bounded repetitions ({1,70}, {0,76}) on one header field or line of a header cut to maxHeaderBytes: linear per start' },

  // Vulnerable verdicts (polynomial), each on input with a small bound.
  { file: 'src/ingest/reply-text/quote-headers.ts', pattern: '/^[-=]{2,}\\s*|\\s*[-=]{2,}$/g', reason: 'trims a header candidate of at most MAX_HEADER_CHARS (400)' },
  { file: 'src/ingest/classify/bounce/dsn.ts', pattern: '/<?([^\\s<>;"]+@', reason: 'a DSN field value cut to 1000 characters just above' },
  { file: 'src/ingest/classify/bounce/text.ts', pattern: '/\\.+$/', reason: 'on an address matched with bounded repetitions (≤ 320 characters)' },
  { file: 'src/ingest/classify/feedback.ts', pattern: '/([^\\s<>;:"]+@', reason: 'a report field value cut to 1000 characters' },
  { file: 'src/ingest/classify/intent/features.ts', pattern: '/\\b[\\w.+-]+@', reason: 'on normalise() of at most MAX_INTENT_CHARS (4000)' },
  { file: 'src/ingest/classify/llm.ts', pattern: '/```(?:json)?', reason: 'the answer of the operator’s own LLM endpoint (off by default), at most MAX_TOKENS (300) tokens: trusted input' },
  { file: 'src/ingest/classify/llm.ts', pattern: '/\\/+$/', reason: 'the operator’s configured LLM URL (trusted)' },
  { file: 'src/ingest/classify/out-of-office/return-date.ts', pattern: '/^\\s*(?:[(（][^)）]{1,4}', reason: 'anchored, on the few characters after a date in at most 4000' },
  { file: 'src/ingest/classify/out-of-office.ts', pattern: '/\\s*\\([^)]*\\)\\s*$/', reason: 'the Date header cut to 200 characters just before' },
  { file: 'src/ingest/parse/html-to-text.ts', pattern: '/^<\\s*\\/?\\s*[a-zA-Z]/', reason: 'on html.slice(lt, lt + 8): eight characters' },
  { file: 'src/ingest/reply-text/quote-headers.ts', pattern: '/\\d[:./-]?\\d|@|<[^>]*>/', reason: 'one line of at most MAX_SIGNAL_LINE (1000): longer lines are not tested' },
  { file: 'src/ingest/reply-text/quote-headers.ts', pattern: '/(?:<[^<>\\s@]+@', reason: 'one line of at most MAX_SIGNAL_LINE (1000)' },
  { file: 'src/ingest/reply-text/signature.ts', pattern: '/^(.*?)<([^>]*)>/', reason: 'the sender cut to 1000 characters just above' },
  { file: 'src/sending/compose/compose.ts', pattern: '/^[^\\s<>()[\\]\\\\,;:"@]+@', reason: 'an address validated on import (≤ 254 characters), sending side' },
  { file: 'src/common/html.ts', pattern: '/[.,;:!?)\\]}\'"]+$/', reason: 'on one URL of a template text written by a workspace member' },
  { file: 'src/common/html.ts', pattern: '/^\\n+|\\n+$/g', reason: 'paragraphs split on blank lines hold no run of two newlines: each run is one character' },
  { file: 'src/sequence/template/filters.ts', pattern: '/[,;:.!?]+$/u', reason: 'on the first word of a lead field' },
  { file: 'src/sending/compose/tracking.ts', pattern: '/\\/+$/', reason: 'the operator’s public URL setting (trusted)' },
  { file: 'src/mailbox/sync/push-settings.ts', pattern: '/\\/*$/', reason: 'the operator’s push URL setting (trusted)' },

  // Dynamic patterns (built at load time from word lists or constants).
  { file: 'src/ingest/classify/bounce/status.ts', pattern: '`(?<![\\\\d./])${code}', reason: 'a status code literal in lookarounds' },
  { file: 'src/ingest/classify/bounce/text.ts', pattern: '[', reason: 'ORIGINAL_MARKER: line-anchored literal markers (m flag), on the report cut to 64 KB' },
  { file: 'src/ingest/classify/feedback.ts', pattern: '`^${name}', reason: 'a literal field name, line-anchored, then (.+)$: linear' },
  { file: 'src/ingest/classify/intent/unsubscribe.ts', pattern: '`${L}(?:${p})${R}`', reason: `${PHRASES}; on at most TEXT_LIMITS.unsubscribeChars (20 000)` },
  { file: 'src/ingest/classify/out-of-office/phrases.ts', pattern: '`${L}', reason: `${PHRASES}; on the first SCAN_CHARS (2000) of the body` },
  { file: 'src/ingest/classify/out-of-office/return-date.ts', pattern: '`${L}', reason: `${PHRASES} and bounded date shapes; on at most 4000 characters` },
  { file: 'src/ingest/parse/html-to-text.ts', pattern: '`</${name}', reason: 'a literal closing tag name; searched once per position (no retry loop)' },
  { file: 'src/ingest/reply-text/signature.ts', pattern: '`(?:^|[^\\\\p{L}])(?:${tokens', reason: 'the sender’s name tokens, regex-escaped literals' },
  { file: 'src/sending/compose/unsubscribe.ts', pattern: '`\\\\bunsubscribe[\\\\s:]+', reason: 'a bounded token {40,N} after a literal word, on text cut to 10 000' },
  // Built at run time from a bounded app-name class; no quantifier nested in another.
  { file: 'src/ingest/reply-text/signature.ts', pattern: 'String.raw`^(?:Sent|SENT', reason: 'a trimmed line of at most 400 characters (isMobileSignature), name {0,60}' },
  { file: 'src/ingest/reply-text/signature.ts', pattern: 'String.raw`^Get ${APP_NAME}', reason: 'a trimmed line of at most 400 characters (isMobileSignature), name {0,60}' },
];
