import { htmlToText, sanitizeEmailHtml } from '../common/email-html.ts';

/**
 * A mailbox's signature as stored: the HTML through the email allow-list (whatever the client
 * sent), the text as written or made from the HTML. Appended to every email the mailbox sends, at
 * compose time (common/email-html.ts withSignature), after the body: no placeholder to forget.
 */

export const MAX_SIGNATURE_HTML = 20_000;

export function signatureColumns(html: string | null, text: string | null): { signature_html: string | null; signature_text: string | null } {
  const clean = html ? sanitizeEmailHtml(html) : '';
  const plain = text && text.trim() !== '' ? text.trim() : clean ? htmlToText(clean) : '';
  if (!clean && !plain) return { signature_html: null, signature_text: null };
  return { signature_html: clean || null, signature_text: plain || null };
}

/**
 * The signature an email of a step carries: the sending mailbox's, unless the step says none
 * (definition `signature: false`). The sender (sending/send-context.ts), the editor's preview and
 * the content check all ask here, so what the rep previews is what goes out.
 */
export function stepSignature(step: { signature?: boolean | undefined }, m: { signature_html: string | null; signature_text: string | null } | undefined): { html: string; text: string } | null {
  return step.signature === false ? null : storedSignature(m);
}

/** The stored signature of a mailbox row, as withSignature takes it; null: none. */
export function storedSignature(m: { signature_html: string | null; signature_text: string | null } | undefined): { html: string; text: string } | null {
  return m && (m.signature_html || m.signature_text) ? { html: m.signature_html ?? '', text: m.signature_text ?? '' } : null;
}
