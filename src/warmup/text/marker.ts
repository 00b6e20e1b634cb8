/**
 * Writing and recognising warmup mail. The text is the keyed MAC of the message's own fields
 * (choices.ts): the sender writes it from the fields and the pool key, the receiver regenerates it
 * from the fields it reads in the headers (From, To, Message-ID, In-Reply-To, the display names)
 * and compares. There is no header, token or fixed phrase a filter could learn; a changed mail,
 * a human reply, or mail from anyone without the pool key does not verify.
 *
 * The comparison ignores whitespace (transports re-wrap and re-encode lines) and Unicode
 * composition; anything else changed (a word, the order, the subject) fails it. The text is
 * capped before any work, so verifying hostile mail costs a few regenerations at most.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../../common/secrets.ts';
import { canonicalFields, MacChoices, type WarmupFields } from './choices.ts';
import { generateWarmupText, warmupLanguages, type WarmupLanguage, type WarmupText } from './generate.ts';

/** Longer than any text the corpus writes; a longer body is not warmup mail and is not read further. */
export const WARMUP_TEXT_LIMIT = 8 * 1024;

/**
 * The key of a pool on this installation: derived from the master key (secrets.ts), so it is never
 * stored and rotates with it. A pool shared with another installation (federation) will hold a
 * key both sides agree on, sealed in the vault like a credential.
 */
export function warmupPoolKey(master: Buffer, poolId: string): Buffer {
  return deriveKey(master, `warmup-pool:${poolId}`);
}

/** The text of a warmup mail: a first mail when fields.inReplyTo is absent, else a reply (no subject). */
export function writeWarmup(key: Buffer, lang: WarmupLanguage, fields: WarmupFields): WarmupText {
  const kind = fields.inReplyTo ? 'reply' : 'first';
  return generateWarmupText(lang, kind, { to: fields.toName.trim(), from: fields.fromName.trim() }, new MacChoices(key, canonicalFields(fields)));
}

export type WarmupVerdict = { warmup: true; language: WarmupLanguage } | { warmup: false; reason: 'too-long' | 'no-match' };

/**
 * Whether a received mail is this pool's warmup mail. `subject` is compared for a first mail only
 * (a reply's subject is the first mail's with "Re: ", which its own fields do not decide).
 */
export function verifyWarmup(key: Buffer, mail: { subject?: string; body: string }, fields: WarmupFields): WarmupVerdict {
  if (mail.body.length > WARMUP_TEXT_LIMIT || (mail.subject?.length ?? 0) > WARMUP_TEXT_LIMIT) return { warmup: false, reason: 'too-long' };
  const got = digest(mail.body, fields.inReplyTo ? undefined : (mail.subject ?? ''));
  for (const lang of warmupLanguages) {
    const want = writeWarmup(key, lang, fields);
    if (timingSafeEqual(got, digest(want.body, want.subject))) return { warmup: true, language: lang };
  }
  return { warmup: false, reason: 'no-match' };
}

function digest(body: string, subject: string | undefined): Buffer {
  const norm = (s: string) => s.normalize('NFC').replace(/\s+/gu, ' ').trim();
  return createHash('sha256')
    .update(JSON.stringify([subject === undefined ? null : norm(subject), norm(body)]))
    .digest();
}
