import { DateTime } from 'luxon';
import { stripTags } from '../parse/html-to-text.ts';
import { TEXT_LIMITS } from '../parse/limits.ts';
import { headerValue, type ParsedMail } from '../types.ts';
import { analyseReply } from '../reply-text/index.ts';
import { isMobileSignature } from '../reply-text/signature.ts';
import { ABSENT, ABSENT_WEAK, AUTO, CONVERSATIONAL, EXPLICIT_AUTO, PERSONAL, QUESTION, SUBJECT } from './out-of-office/phrases.ts';
import { extractReturnDate, namesDay } from './out-of-office/return-date.ts';

/**
 * The out-of-office rung: is this mail a vacation / absence note, and when is the writer back?
 *
 * Evidence, strongest first: the subject autoresponders write ("Automatic reply: …",
 * "Abwesenheitsnotiz") at the start of the subject; an Auto-Submitted / X-Autoreply header; a
 * present-tense "I am out of the office" in the first lines together with words only a responder
 * writes ("limited access to email", "for urgent matters"); such a sentence alone.
 *
 * People write about their own absence in real replies too ("I will be out of the office
 * tomorrow, could we do Thursday?"). Without a responder's subject or header, a mail is no note
 * when it reads as a person talking to the reader: it quotes the conversation it answers, asks a
 * question, proposes a time or answers the pitch, or is signed from a phone; only a responder's
 * own words ("this is an automatic reply") outweigh that.
 */

export interface OutOfOffice {
  /** 0.5..0.99: fixed by the evidence found (see CONFIDENCE). */
  confidence: number;
  reason: string;
  /** Epoch ms of the start (UTC) of the day the writer is back; null when not stated. */
  returnDate: number | null;
}

const CONFIDENCE = {
  subjectAndBody: 0.97,
  subject: 0.92,
  subjectUnprefixedAndBody: 0.93,
  subjectUnprefixed: 0.75,
  subjectInReplyAndBody: 0.85,
  bodyAbsentAndAuto: 0.9,
  bodyAbsentAndDate: 0.85,
  bodyAbsent: 0.7,
  bodyAutoAndDate: 0.8,
  /** Below this the mail is not called out-of-office at all. */
  floor: 0.5,
} as const;

/** Only the opening of a note says "I am away"; a long human reply may mention it further down. */
const FIRST_LINES_CHARS = 600;
const SCAN_CHARS = 2000;
const REPLY_PREFIX = /^\s*(?:re|aw|sv|vs|antw|ref|réf|rif|r|wg|fw|fwd|tr|odp|rv|enc|回复|答复|返信)\s*:/iu;

function bodyOf(mail: ParsedMail, newText: string): string {
  if (newText.trim()) return newText;
  if (mail.text.trim()) return mail.text;
  // An HTML-only note whose text the parser left empty: tags off is enough to read phrases. Its
  // opening is enough too (only SCAN_CHARS of the result are read), and stripTags is linear.
  return stripTags((mail.html ?? '').slice(0, TEXT_LIMITS.oooHtmlChars));
}

function subjectStrength(subject: string): { strength: 'start' | 'unprefixed' | 'in_reply'; words: string } | null {
  const m = SUBJECT.exec(subject);
  if (!m) return null;
  if (/^[\s[("'«*-]*$/u.test(subject.slice(0, m.index))) return { strength: 'start', words: m[0] };
  return { strength: REPLY_PREFIX.test(subject) ? 'in_reply' : 'unprefixed', words: m[0] };
}

function firstMatch(res: RegExp[], text: string): string | null {
  for (const re of res) {
    const m = re.exec(text);
    if (m) return m[0];
  }
  return null;
}

/** Auto-Submitted (RFC 3834) or the X-Autoreply family: not needed, but it settles a body-only case. */
function autoSubmitted(mail: ParsedMail): boolean {
  const as = headerValue(mail, 'auto-submitted');
  return (as !== null && /^\s*auto-replied/i.test(as)) || headerValue(mail, 'x-autoreply') !== null || headerValue(mail, 'x-autorespond') !== null;
}

/**
 * The writer's calendar day, from the Date header's own offset: "back on Monday" written on a
 * Sunday evening in California is already Monday in UTC. As midnight UTC of that day.
 */
function writersDay(mail: ParsedMail): number | null {
  const raw = headerValue(mail, 'date');
  if (!raw) return null;
  // A Date header is under 100 characters; the cut keeps the comment-stripping regex cheap on a
  // hostile one (it is quadratic in the header's length).
  const dt = DateTime.fromRFC2822(raw.slice(0, 200).replace(/\s*\([^)]*\)\s*$/, '').trim(), { setZone: true });
  return dt.isValid ? Date.UTC(dt.year, dt.month - 1, dt.day) : null;
}

function statedIn(mail: ParsedMail, body: string, now?: number) {
  const reference = writersDay(mail) ?? mail.date ?? now ?? null;
  return reference === null ? null : extractReturnDate(`${mail.subject}\n${body}`, reference);
}

/**
 * The return date an automatic reply states, for a reply the header rung recognised (Auto-Submitted,
 * X-Autoreply) whose words this rung does not take for a note ("I am attending the Web Summit and
 * will be back on November 9"). Epoch ms, or null.
 */
export function statedReturnDate(mail: ParsedMail, newText: string, now?: number): number | null {
  return statedIn(mail, bodyOf(mail, newText).slice(0, SCAN_CHARS), now)?.date ?? null;
}

/** Signs of a person writing to the reader (see the head of this file); the reply analysis is run only when the words do not settle it. */
function personalReply(mail: ParsedMail, body: string, opening: string): boolean {
  if (CONVERSATIONAL.test(body) || QUESTION.test(opening) || PERSONAL.some((re) => re.test(opening))) return true;
  const reply = analyseReply({ text: mail.text, html: mail.html });
  if (reply.quoted.trim() !== '') return true;
  return (reply.signature ?? '').split('\n').some((l) => isMobileSignature(l));
}

/** The sentence of `opening` that holds `phrase`, from the phrase to the sentence's end. */
function sentenceAt(opening: string, phrase: string): string {
  const at = opening.indexOf(phrase);
  if (at < 0) return '';
  const rest = opening.slice(at, at + 300);
  // A dot after a digit is part of a date ("am 2. und 3. November"), not the sentence's end.
  const end = rest.search(/[!?。\n]|(?<!\d)\.(?:\s|$)/u);
  return end < 0 ? rest : rest.slice(0, end);
}

export function detectOutOfOffice(mail: ParsedMail, newText: string, now?: number): OutOfOffice | null {
  const body = bodyOf(mail, newText).slice(0, SCAN_CHARS);
  const subject = subjectStrength(mail.subject);
  const opening = body.slice(0, FIRST_LINES_CHARS);
  const auto = firstMatch(AUTO, body);
  const strongAbsent = firstMatch(ABSENT, opening);
  const weakAbsent = strongAbsent ? null : firstMatch(ABSENT_WEAK, opening);
  if (!subject && !strongAbsent && !weakAbsent && !auto) return null;

  const stated = statedIn(mail, body, now);
  // "I'm away" / "I'm travelling" say it only with a responder's subject, wording or a return date.
  const absent = strongAbsent ?? (weakAbsent && (subject || auto || stated) ? weakAbsent : null);
  const bodySays = absent !== null || auto !== null;

  let confidence: number;
  if (subject?.strength === 'start') confidence = bodySays ? CONFIDENCE.subjectAndBody : CONFIDENCE.subject;
  else if (subject?.strength === 'unprefixed' && bodySays) confidence = CONFIDENCE.subjectUnprefixedAndBody;
  else if (subject?.strength === 'in_reply' && bodySays) confidence = CONFIDENCE.subjectInReplyAndBody;
  else if (absent && auto) confidence = CONFIDENCE.bodyAbsentAndAuto;
  else if (absent && stated) confidence = CONFIDENCE.bodyAbsentAndDate;
  else if (absent) confidence = CONFIDENCE.bodyAbsent;
  else if (auto && stated) confidence = CONFIDENCE.bodyAutoAndDate;
  else if (subject?.strength === 'unprefixed') confidence = CONFIDENCE.subjectUnprefixed;
  else return null;

  const responderSubject = subject !== null && subject.strength !== 'in_reply';
  const submitted = autoSubmitted(mail);
  if (!responderSubject && !submitted && !EXPLICIT_AUTO.test(body)) {
    if (personalReply(mail, body, opening)) return null;
    // "I will be out of the office tomorrow", "I am out of the office November 1st and 2nd": the
    // days of an absence announced ahead, no return and no responder wording. A responder is on
    // while its writer is away and says when they are back, or names no day at all.
    if (absent && !auto && !stated && namesDay(sentenceAt(opening, absent))) return null;
  }
  if (submitted) confidence = Math.min(0.99, Math.max(confidence, CONFIDENCE.bodyAbsentAndAuto) + 0.02);
  if (confidence < CONFIDENCE.floor) return null;

  const reasons: string[] = [];
  if (subject) reasons.push(`subject "${subject.words}"`);
  if (absent) reasons.push(`"${absent.replace(/\s+/g, ' ')}"`);
  if (auto) reasons.push(`"${auto.replace(/\s+/g, ' ')}"`);
  if (stated) reasons.push(`back ${DateTime.fromMillis(stated.date, { zone: 'utc' }).toISODate()} ("${stated.evidence}")`);
  return { confidence, reason: `out of office: ${reasons.join('; ')}`, returnDate: stated?.date ?? null };
}
