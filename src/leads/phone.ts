/**
 * A lead's phone number, as written, to E.164 (ITU-T E.164: '+', the country calling code and the
 * national significant number, at most 15 digits), with a verdict the import stores beside the
 * original: 'valid', or 'flagged' with a stable code and a reason in plain words. Pure; never
 * throws, whatever the string. The dialer dials and matches incoming calls by the E.164 form, so a
 * number it could not dial is found here, at import, with its reason, not at dial time.
 *
 * The country a national number is read in is the lead's (ISO 3166-1 alpha-2), failing that the
 * workspace's. A number written with '+' (or, when no country is known, with the 00 that most of
 * the world dials abroad with) carries its own.
 *
 * Verdicts, in the order they are decided:
 * - the text is empty, too long, holds no number or several          → flagged, no E.164
 * - a national number and no country to read it in                   → flagged 'no_country', no E.164
 * - a calling code no country uses (+0…, +999…)                      → flagged, no E.164
 * - a length no number of that country has (too short, too long)     → flagged, no E.164
 * - the right length, but in none of the country's number ranges     → flagged 'not_valid', E.164 kept
 * - otherwise                                                        → valid
 * A 'not_valid' number keeps its E.164 form: the metadata lags the regulators (a freshly assigned
 * range reads as not valid until it catches up), and an incoming call from that number should still
 * find its lead.
 */
import {
  findPhoneNumbersInText,
  isSupportedCountry,
  ParseError,
  parsePhoneNumberWithError,
  validatePhoneNumberLength,
  type CountryCode,
  type PhoneNumber,
} from 'libphonenumber-js/max';
import { MAX_FIELD_CHARS } from './limits.ts';

// Why 'max': the default ('min') metadata checks only a number's length, so isValid() is
// isPossible() there and getType() knows no types for most countries; 'max' carries each
// country's number ranges per type (about 145 kB instead of 80 kB), which the 'not_valid' verdict
// and the type need. The server loads it once.

/** What kind of line a valid number is, when the metadata says (libphonenumber-js getType()). */
export type PhoneType =
  | 'mobile'
  | 'fixed-line'
  | 'fixed-line-or-mobile'
  | 'toll-free'
  | 'premium-rate'
  | 'shared-cost'
  | 'voip'
  | 'personal-number'
  | 'pager'
  | 'uan'
  | 'voicemail';

/** Why a number is flagged: stable codes (the import's phonesFlaggedByReason), each with what it means. */
export const phoneFlagCodes = {
  empty: 'The field holds nothing but blanks or invisible characters.',
  text_too_long: `The field is longer than ${MAX_FIELD_CHARS.phone} characters: not one phone number.`,
  not_a_number: 'The field holds no phone number (no digits, or not in a form a number is written in).',
  several_numbers: 'The field holds more than one number: which one is the lead\'s is not ours to guess.',
  no_country: "A national number (no '+') and neither the lead nor the workspace has a country to read it in.",
  unknown_calling_code: "The number starts with '+' and a calling code no country uses.",
  too_short: 'Fewer digits than any number of its country.',
  too_long: 'More digits than any number of its country.',
  invalid_length: 'A length between two that its country uses, but not one of them.',
  not_valid: "The right length, but in none of its country's number ranges (a typo, a made-up number, or a range the metadata does not know yet).",
} as const;
export type PhoneFlagCode = keyof typeof phoneFlagCodes;

export type PhoneStatus = 'valid' | 'flagged';

export interface PhoneVerdict {
  /** '+' and digits, no extension; null when flagged before a possible number was found. */
  e164: string | null;
  /** The number's country (ISO 3166-1 alpha-2): 07624 369230 read in GB is IM. Null when not known. */
  country: string | null;
  /** The national significant number (digits, no national prefix), when one was found. */
  nationalNumber: string | null;
  /** The extension written after the number ('ext. 1234', 'x12'), kept apart from the E.164 form. */
  extension: string | null;
  type: PhoneType | null;
  status: PhoneStatus;
  /** Null when valid. */
  code: PhoneFlagCode | null;
  /** In plain words, naming the country; null when valid. */
  reason: string | null;
}

/**
 * The longest text read. Above a field's own limit (64, limits.ts), so that nothing the import or
 * the API accepts is refused here; libphonenumber-js stops at 250 characters itself, and its
 * extraction is a few regular expressions over the text, so work stays bounded by this.
 */
export const MAX_PHONE_TEXT_CHARS = 128;

// Unicode format characters (category Cf): bidirectional marks (U+200E, U+202A–U+202E, U+2066–U+2069),
// zero-width spaces and joiners, U+2060, the BOM, the soft hyphen. Copied from web pages, address
// books and right-to-left documents, invisible, and not digits; a number with U+202C at its end
// would otherwise be read as ending in a letter.
const FORMAT_CHARS = /\p{Cf}/gu;
// '00' then a digit: the international prefix of most countries (ITU-T E.164 recommends it).
const LEADING_00 = /^(\s*)00(?=\s*[1-9])/;

const TYPES: Record<string, PhoneType> = {
  MOBILE: 'mobile',
  FIXED_LINE: 'fixed-line',
  FIXED_LINE_OR_MOBILE: 'fixed-line-or-mobile',
  TOLL_FREE: 'toll-free',
  PREMIUM_RATE: 'premium-rate',
  SHARED_COST: 'shared-cost',
  VOIP: 'voip',
  PERSONAL_NUMBER: 'personal-number',
  PAGER: 'pager',
  UAN: 'uan',
  VOICEMAIL: 'voicemail',
};

const flagged = (code: PhoneFlagCode, reason: string, found?: PhoneNumber, keepE164 = false): PhoneVerdict => ({
  e164: keepE164 && found ? found.number : null,
  country: found?.country ?? null,
  nationalNumber: found ? found.nationalNumber : null,
  extension: found?.ext ?? null,
  type: null,
  status: 'flagged',
  code,
  reason,
});

/** A country code libphonenumber-js has a numbering plan for (AQ, BV and a few others have none), else null. */
function plan(country: string | null | undefined): CountryCode | null {
  if (!country) return null;
  const c = country.toUpperCase();
  return isSupportedCountry(c) ? c : null;
}

/**
 * One number. `leadCountry` is the lead's country, `workspaceCountry` the workspace's (both ISO
 * 3166-1 alpha-2 or null); the first with a numbering plan reads a national number.
 */
export function normalizePhone(raw: string, leadCountry: string | null, workspaceCountry: string | null = null): PhoneVerdict {
  if (typeof raw !== 'string') return flagged('not_a_number', 'not text');
  if (raw.length > MAX_PHONE_TEXT_CHARS) return flagged('text_too_long', `longer than ${MAX_PHONE_TEXT_CHARS} characters: not one phone number`);
  let text = raw.replace(FORMAT_CHARS, '').trim();
  if (text === '') return flagged('empty', 'empty');
  const country = plan(leadCountry) ?? plan(workspaceCountry);
  // With a country, its own international prefix is the library's to read (00 in France, but 011
  // in the United States, where 00… is a national number and wrong). Without one, 00 is the best
  // guess there is, and better than refusing the number.
  if (country === null) text = text.replace(LEADING_00, '$1+');

  let found: PhoneNumber;
  try {
    found = parsePhoneNumberWithError(text, country ? { defaultCountry: country } : {});
  } catch (e) {
    if (!(e instanceof ParseError)) return flagged('not_a_number', 'not a phone number');
    return refused(e.message, text, leadCountry, country);
  }
  // The library reads one number from the text; a second one after it ('+44 20 7946 0958, mobile
  // +44 7911 123456') would be dropped without a word. Searched for only when the text has more
  // digits than the number found can account for (its calling code, a national or international
  // prefix, the extension), so the common case pays nothing.
  const accounted = found.countryCallingCode.length + found.nationalNumber.length + (found.ext?.length ?? 0) + SLACK_DIGITS;
  if (digitCount(text) > accounted) {
    const verdict = several(text, country);
    if (verdict) return verdict;
  }

  const where = found.country ?? country ?? `+${found.countryCallingCode}`;
  if (found.isValid()) {
    return {
      e164: found.number,
      country: found.country ?? null,
      nationalNumber: found.nationalNumber,
      extension: found.ext ?? null,
      type: TYPES[found.getType() ?? ''] ?? null,
      status: 'valid',
      code: null,
      reason: null,
    };
  }
  if (!found.isPossible()) {
    // The length verdict of the number found (strict parsing of its E.164 form, so the text around it plays no part).
    const length = validatePhoneNumberLength(found.number);
    // 0044… read in a country that does not dial abroad with 00 (the United States: 011) is a national number.
    const hint = found.nationalNumber.startsWith('00') ? ` (00 is not how ${where} dials abroad: write + and the country code)` : '';
    if (length === 'TOO_SHORT') return flagged('too_short', `too short for ${where}${hint}`, found);
    if (length === 'TOO_LONG') return flagged('too_long', `too long for ${where}${hint}`, found);
    return flagged('invalid_length', `not a valid number for ${where}: no number there has ${found.nationalNumber.length} digits${hint}`, found);
  }
  return flagged('not_valid', `possible but not valid: the right length for ${where}, but in none of its number ranges`, found, true);
}

/** The verdict for a text the library found no number in, from its ParseError message. */
function refused(message: string, text: string, leadCountry: string | null, country: CountryCode | null): PhoneVerdict {
  switch (message) {
    case 'INVALID_COUNTRY':
      if (text.startsWith('+')) return flagged('unknown_calling_code', `no country has the calling code it starts with (${callingCodeOf(text)})`);
      if (leadCountry && !country) return flagged('no_country', `no numbering plan for ${leadCountry.toUpperCase()}: write it with +<country code>`);
      return flagged('no_country', 'no country: write it with +<country code>, or give the lead or the workspace a country');
    case 'TOO_SHORT':
      return flagged('too_short', 'too short: fewer digits than any phone number');
    case 'TOO_LONG':
      return flagged('too_long', 'too long: more digits than any phone number');
    default:
      return several(text, country) ?? flagged('not_a_number', 'not a phone number');
  }
}

/** Digits a number's text may hold beyond its E.164 digits and extension: a national prefix (0, 8, 06…) or an international one (00, 011). */
const SLACK_DIGITS = 3;

function digitCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/** Flagged 'several_numbers' when the text holds two numbers or more (libphonenumber-js's text search), else null. */
function several(text: string, country: CountryCode | null): PhoneVerdict | null {
  const n = findPhoneNumbersInText(text, country ? { defaultCountry: country } : {}).length;
  return n > 1 ? flagged('several_numbers', `holds ${n} numbers: keep one in the phone column (the others can go in a custom field)`) : null;
}

/** '+0123' → '+012', '+999 1234' → '+999': the calling code as written (1 to 3 digits), for the message. */
function callingCodeOf(text: string): string {
  return `+${text.slice(1).replace(/\D/g, '').slice(0, 3)}`;
}

/** The lead's three phone columns (migration 0048); all null when it has no number. */
export interface PhoneColumns {
  phone_e164: string | null;
  phone_status: PhoneStatus | null;
  phone_reason: string | null;
}

export const NO_PHONE: PhoneColumns = { phone_e164: null, phone_status: null, phone_reason: null };

/**
 * The columns for a lead's number as written (null or blank: no number), and the flag's code,
 * which the import counts by and the columns do not keep (the reason says it in words).
 */
export function phoneVerdict(phone: string | null, leadCountry: string | null, workspaceCountry: string | null): { columns: PhoneColumns; code: PhoneFlagCode | null } {
  if (phone === null || phone.trim() === '') return { columns: NO_PHONE, code: null };
  const v = normalizePhone(phone, leadCountry, workspaceCountry);
  return { columns: { phone_e164: v.e164, phone_status: v.status, phone_reason: v.reason }, code: v.code };
}
