/**
 * One CSV row → the values of a lead, or the reason it is refused. Pure: the checks that need the
 * database (suppression, existing leads) and the file (duplicates) happen in import.ts.
 */
import { normalizeCountry } from './country.ts';
import { checkEmail } from './email.ts';
import type { LeadField, ResolvedColumn } from './headers.ts';
import { MAX_CUSTOM_VALUE_CHARS, MAX_FIELD_CHARS } from './limits.ts';
import { phoneVerdict, type PhoneColumns, type PhoneFlagCode } from './phone.ts';
import type { RejectReason, WarningReason } from './reasons.ts';
import { normalizeTimeZone } from './time-zone.ts';

export interface LeadValues {
  email: string;
  email_norm: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  title: string | null;
  phone: string | null;
  country: string | null;
  region: string | null;
  time_zone: string | null;
  custom: Record<string, string>;
}

/** A checked row: its lead's values, and the E.164 form and verdict of its number (phone.ts). */
export type LeadRow = LeadValues & PhoneColumns;

export type RowCheck =
  | {
      ok: true;
      lead: LeadRow;
      warnings: Array<{ reason: WarningReason; message: string }>;
      /** Why the number is flagged; the row is imported all the same. Null: valid, or no number. */
      phoneFlag: PhoneFlagCode | null;
    }
  | { ok: false; reason: RejectReason; message: string };

// C0 controls but tab and line breaks, DEL, C1 controls. PostgreSQL text cannot hold U+0000 at all.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const REPLACEMENT = '\ufffd';
/** One test for the common case: no control character and no U+FFFD. */
const SUSPECT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]/;
/** Whitespace that is not a single plain space: the only case that needs collapsing. */
const ODD_SPACE = /\s\s|[^\S ]/;
const NON_ASCII = /[^\x00-\x7f]/;

/** NFC, skipped for ASCII (already normal, and the common case). */
function nfc(s: string): string {
  return NON_ASCII.test(s) ? s.normalize('NFC') : s;
}

/** A value as it appears in a message: quoted, and cut when long. */
export function show(v: string): string {
  return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);
}

const reject = (reason: RejectReason, message: string): RowCheck => ({ ok: false, reason, message });

/**
 * `workspaceCountry` reads a national phone number on a row without a country of its own (phone.ts);
 * a number that cannot be read is flagged with its reason, never a reason to refuse the row.
 */
export function checkRow(fields: readonly string[], columns: readonly ResolvedColumn[], workspaceCountry: string | null = null): RowCheck {
  const values: Partial<Record<LeadField, string>> = {};
  const custom: Record<string, string> = {};
  const headerOf: Partial<Record<LeadField, string>> = {};

  for (let i = 0; i < columns.length; i++) {
    const col = columns[i]!;
    const target = col.target;
    if (target.kind === 'ignore') continue;
    const raw = fields[i] ?? '';
    if (raw === '') continue;
    if (SUSPECT.test(raw)) {
      if (raw.includes(REPLACEMENT)) {
        return reject('invalid_encoding', `column '${col.header}' is not valid UTF-8 text (save the file as "CSV UTF-8"): ${show(raw)}`);
      }
      const ctl = CONTROL.exec(raw);
      if (ctl) {
        const cp = ctl[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
        return reject('invalid_characters', `column '${col.header}' holds the control character U+${cp}`);
      }
    }
    if (target.kind === 'custom') {
      // Custom values keep their inner line breaks (a multi-line note stays one).
      const v = nfc(raw.trim());
      if (v.length > MAX_CUSTOM_VALUE_CHARS) {
        return reject('too_long', `column '${col.header}' is ${v.length} characters long, more than ${MAX_CUSTOM_VALUE_CHARS}`);
      }
      if (v !== '') custom[target.name] = v;
      continue;
    }
    // Lead fields are one line: runs of blanks, tabs and line breaks become one space.
    const v = nfc((ODD_SPACE.test(raw) ? raw.replace(/\s+/g, ' ') : raw).trim());
    if (v === '') continue;
    const field = target.field;
    if (field !== 'email') {
      const max = MAX_FIELD_CHARS[field];
      if (v.length > max) return reject('too_long', `column '${col.header}' (${field}) is ${v.length} characters long, more than ${max}`);
    }
    values[field] = v;
    headerOf[field] = col.header;
  }

  const emailRaw = values.email;
  if (emailRaw === undefined) return reject('missing_email', 'the email is empty');
  const email = checkEmail(emailRaw);
  if (!email.ok) return reject('invalid_email', `${show(emailRaw)}: ${email.message}`);

  let country: string | null = null;
  if (values.country !== undefined) {
    country = normalizeCountry(values.country);
    if (country === null) {
      return reject('invalid_country', `${show(values.country)} in column '${headerOf.country}' is neither an ISO 3166-1 alpha-2 code (like DE) nor a known country name`);
    }
  }

  const warnings: Array<{ reason: WarningReason; message: string }> = [];
  let timeZone: string | null = null;
  if (values.time_zone !== undefined) {
    timeZone = normalizeTimeZone(values.time_zone);
    if (timeZone === null) {
      warnings.push({
        reason: 'invalid_time_zone',
        message: `${show(values.time_zone)} in column '${headerOf.time_zone}' is not an IANA time zone (like America/New_York); imported without a zone`,
      });
    }
  }

  const phone = values.phone ?? null;
  const verdict = phoneVerdict(phone, country, workspaceCountry);

  return {
    ok: true,
    lead: {
      email: email.email,
      email_norm: email.norm,
      first_name: values.first_name ?? null,
      last_name: values.last_name ?? null,
      company: values.company ?? null,
      title: values.title ?? null,
      phone,
      country,
      region: values.region ?? null,
      time_zone: timeZone,
      custom,
      ...verdict.columns,
    },
    warnings,
    phoneFlag: verdict.code,
  };
}
