import { parseMail } from './parse/parse-mail.ts';
import { classify, type ClassifyOptions } from './classify/ladder.ts';
import { extractReplyText } from './reply-text/index.ts';
import type { Classification, ParsedMail } from './types.ts';

/**
 * One message file to its classification row: the code path shared by `cadenza classify` and the
 * corpus tests, so that the figures the tests print are the command's figures.
 */

export interface ClassifyRow {
  file: string;
  label?: Classification['label'];
  confidence?: number;
  reason?: string;
  recipient?: string | null;
  status?: string | null;
  hard_soft?: 'hard' | 'soft';
  bounce_class?: string;
  return_date?: string;
  error?: string;
}

export interface ClassifiedFile {
  row: ClassifyRow;
  mail: ParsedMail | null;
  classification: Classification | null;
}

export async function classifyRaw(file: string, bytes: Uint8Array, opts: Omit<ClassifyOptions, 'newText'> = {}): Promise<ClassifiedFile> {
  let mail: ParsedMail;
  try {
    mail = await parseMail(bytes);
  } catch (e) {
    return { row: { file, error: `cannot parse: ${(e as Error).message}` }, mail: null, classification: null };
  }
  try {
    const reply = extractReplyText({ text: mail.text, html: mail.html, from: mail.from?.address ?? null });
    const c = await classify(mail, { ...opts, newText: reply.text });
    return { row: toRow(file, c), mail, classification: c };
  } catch (e) {
    return { row: { file, error: `cannot classify: ${(e as Error).message}` }, mail, classification: null };
  }
}

export function toRow(file: string, c: Classification): ClassifyRow {
  const row: ClassifyRow = { file, label: c.label, confidence: Math.round(c.confidence * 1000) / 1000, reason: c.reason };
  if (c.bounce) {
    row.recipient = c.bounce.recipient;
    row.status = c.bounce.status;
    row.hard_soft = c.bounce.hardSoft;
    row.bounce_class = c.bounce.bounceClass;
  }
  if (c.returnDate != null) row.return_date = new Date(c.returnDate).toISOString().slice(0, 10);
  return row;
}
