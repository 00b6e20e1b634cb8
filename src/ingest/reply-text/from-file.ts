import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseMailSafe } from '../parse/parse-mail.ts';
import { analyseReply, type ReplyAnalysis } from './index.ts';

/**
 * One file to its reply text: the code path shared by `cadenza reply-text` and the corpus test.
 * By extension: `.eml` (and `.mbox` holding one message) is parsed as a
 * whole message, `.html`/`.htm` is an HTML body, anything else a plain-text body (a body can start
 * with "Subject:" too, so the content is not sniffed).
 */
export interface ReplyTextRow {
  file: string;
  /** The new text: quoted history and signature removed. */
  text?: string;
  /** The new text with its signature kept, lines as written (what quotation-only extractors return). */
  withSignature?: string;
  error?: string;
}

export interface ReplyFromFile {
  row: ReplyTextRow;
  analysis: ReplyAnalysis | null;
}

export type BodyKind = 'message' | 'html' | 'text';

export function bodyKind(file: string): BodyKind {
  const ext = extname(file).toLowerCase();
  if (ext === '.eml' || ext === '.mbox') return 'message';
  if (ext === '.html' || ext === '.htm') return 'html';
  return 'text';
}

export async function replyTextFromBytes(file: string, bytes: Uint8Array, opts: { from?: string | null; kind?: BodyKind } = {}): Promise<ReplyFromFile> {
  const kind = opts.kind ?? bodyKind(file);
  try {
    if (kind === 'message') {
      const parsed = await parseMailSafe(bytes);
      if (!parsed.ok) return { row: { file, error: `cannot parse: ${parsed.reason}: ${parsed.detail}` }, analysis: null };
      const m = parsed.mail;
      const from = opts.from ?? (m.from ? (m.from.name ? `${m.from.name} <${m.from.address}>` : m.from.address) : null);
      const analysis = analyseReply({ text: m.text, html: m.html, from });
      return { row: { file, text: analysis.text, withSignature: analysis.withSignature }, analysis };
    }
    const body = new TextDecoder('utf-8').decode(bytes);
    const analysis = analyseReply(kind === 'html' ? { html: body, from: opts.from ?? null } : { text: body, from: opts.from ?? null });
    return { row: { file, text: analysis.text, withSignature: analysis.withSignature }, analysis };
  } catch (e) {
    // extractReplyText is pure and should not throw; if it ever does, the row says so.
    return { row: { file, error: `cannot extract: ${e instanceof Error ? e.message : String(e)}` }, analysis: null };
  }
}

export async function replyTextFromFile(file: string, opts: { from?: string | null } = {}): Promise<ReplyFromFile> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (e) {
    return { row: { file, error: `cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` }, analysis: null };
  }
  return replyTextFromBytes(file, bytes, opts);
}
