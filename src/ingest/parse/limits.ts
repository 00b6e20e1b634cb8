/**
 * Limits on what the parser accepts. Mail over a limit is quarantined with the reason, not
 * parsed: the ingestion worker must never crash or stall on input (ARCHITECTURE promise 8).
 */
export interface ParseLimits {
  /** Raw message size. Providers cap mail at 25–35 MB; larger input is not mail we send replies to. */
  maxBytes: number;
  /** MIME parts (attachments and report parts) after parsing. */
  maxParts: number;
  /** Lines that can open a MIME boundary ("--…"), counted before parsing so a crafted message cannot make the parser build millions of nodes. */
  maxBoundaryLines: number;
  /** Size of the top-level header block. Real headers are a few KB; long Received chains reach ~100 KB. */
  maxHeaderBytes: number;
  /** Number of top-level header fields. */
  maxHeaders: number;
  /** MIME nesting depth (postal-mime rejects deeper messages itself; its default is 256). */
  maxNestingDepth: number;
  /** Wall-clock time for one parse. postal-mime does not yield often, so this is checked when it returns. */
  maxParseMs: number;
}

export const defaultParseLimits: ParseLimits = {
  maxBytes: 25 * 1024 * 1024,
  maxParts: 500,
  maxBoundaryLines: 5_000,
  maxHeaderBytes: 512 * 1024,
  maxHeaders: 2_000,
  maxNestingDepth: 50,
  maxParseMs: 5_000,
};

/** Why a message was quarantined: stable codes, stored with the message and listed in docs/parsing.md. */
export type QuarantineReason =
  | 'empty'
  | 'too_large'
  | 'binary'
  | 'no_header'
  | 'no_separator'
  | 'headers_too_long'
  | 'too_many_headers'
  | 'too_many_parts'
  | 'nesting_too_deep'
  | 'timeout'
  | 'unparseable';

/**
 * How much of a message's text each stage after the parser reads, in characters (UTF-16 code
 * units). A stage reads at most its cap whatever the message holds, and works in linear time on
 * it, so the cost of a message is bounded by these numbers, not by what a stranger sends
 * (ARCHITECTURE promise 8; the table is in docs/parsing.md). What a reply says is at its top, and
 * a report's fields at its start, so the caps cut nothing a verdict needs.
 */
export const TEXT_LIMITS = {
  /** `text` and each text part's `text` as the parser hands them on (a 25 MB mail keeps its first MB). */
  bodyChars: 1_000_000,
  /** `html` as the parser hands it on, and the HTML converted to text when there is no text/plain. */
  htmlChars: 2 * 1024 * 1024,
  /** The subject (threading normalises its first 1000). */
  subjectChars: 4_000,
  /** The out-of-office rung's fallback reading of HTML whose text came out empty. */
  oooHtmlChars: 256 * 1024,
  /** Return-date extraction: the subject and the opening of the note. */
  returnDateChars: 4_000,
  /** Unsubscribe phrases: the opening of the new text (an opt-out is not written below 20 000 characters of reply). */
  unsubscribeChars: 20_000,
} as const;
