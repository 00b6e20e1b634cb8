import { htmlToText } from '../parse/html-to-text.ts';
import { TEXT_LIMITS } from '../parse/limits.ts';
import { htmlQuoteStart } from './html-quotes.ts';
import { fragments, linesOf, newText, replyWithSignature, segmentPlain, type Fragment } from './segment.ts';

/**
 * The new text of a reply: what the sender wrote, without the quoted history and the signature.
 * Plain text is used when the message has it; HTML only when it has nothing else (rules in
 * docs/parsing.md).
 */
export interface ReplyText {
  text: string;
  quoted: string;
  signature: string | null;
}

export interface ReplyInput {
  text?: string | null;
  html?: string | null;
  /** The sender ("Name <addr>", an address or a name): finds a signature that holds the sender's name. */
  from?: string | null;
}

export interface ReplyAnalysis extends ReplyText {
  /** The new text with its signature, lines as written: what quotation-only extractors return. */
  withSignature: string;
  fragments: Fragment[];
  source: 'text' | 'html' | 'none';
}

/** Bodies are cut here: a reply's new text sits at the top, and the rules scan line by line. */
const MAX_BODY_CHARS = TEXT_LIMITS.bodyChars;

export function analyseReply(input: ReplyInput): ReplyAnalysis {
  const plain = (input.text ?? '').slice(0, MAX_BODY_CHARS);
  const html = (input.html ?? '').slice(0, MAX_BODY_CHARS);
  let body = plain;
  let quotedHtml = '';
  let source: ReplyAnalysis['source'] = 'text';
  // The parser fills `text` from the HTML when a message has no text/plain part; the HTML's quote
  // markup is then the better guide.
  const textIsFromHtml = html.trim() !== '' && (plain.trim() === '' || plain === htmlToText(html));
  if (textIsFromHtml) {
    source = 'html';
    const cut = htmlQuoteStart(html);
    body = htmlToText(cut >= 0 ? html.slice(0, cut) : html);
    // An <hr> drawn above the cut history belongs to it.
    if (cut >= 0) body = dropTrailingRules(body);
    if (cut >= 0) quotedHtml = htmlToText(html.slice(cut));
  } else if (plain.trim() === '') source = 'none';
  const seg = segmentPlain(body, input.from);
  const quoted = [linesOf(seg, 'quoted'), quotedHtml].filter((s) => s.trim() !== '').join('\n');
  const signature = linesOf(seg, 'signature').trim();
  return {
    text: newText(seg),
    quoted,
    signature: signature === '' ? null : signature,
    withSignature: replyWithSignature(seg),
    fragments: fragments(seg),
    source,
  };
}

function dropTrailingRules(text: string): string {
  const lines = text.split('\n');
  while (lines.length && (lines[lines.length - 1]!.trim() === '' || /^[-_=*]{3,}$/.test(lines[lines.length - 1]!.trim()))) lines.pop();
  return lines.join('\n');
}

export function extractReplyText(input: ReplyInput): ReplyText {
  const { text, quoted, signature } = analyseReply(input);
  return { text, quoted, signature };
}
