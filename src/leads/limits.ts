/**
 * Every limit the lead import applies, each with why it is what it is. A row over a field limit is
 * rejected with 'too_long'; a file over a structural limit is refused with INVALID_INPUT.
 */

/** Rows per database round trip: one suppression query and one upsert per batch. */
export const DEFAULT_BATCH_SIZE = 1000;
/**
 * The upsert sends a batch as one array per column, so PostgreSQL's 65,535-parameter cap does not
 * bound it; this does, to keep one batch's rows, arrays and statement a few MiB at most.
 */
export const MAX_BATCH_SIZE = 10_000;

/** RFC 5321 §4.5.3.1.1: a local part is at most 64 octets. */
export const MAX_EMAIL_LOCAL_OCTETS = 64;
/**
 * RFC 5321 §4.5.3.1.3 limits a path to 256 octets including the angle brackets, so an address is at
 * most 254 (RFC 3696 erratum 1690).
 */
export const MAX_EMAIL_OCTETS = 254;
/** RFC 1035 §2.3.4: a label is at most 63 octets, a name at most 253 in text form. */
export const MAX_DOMAIN_LABEL_OCTETS = 63;
export const MAX_DOMAIN_OCTETS = 253;

/**
 * Lead fields, in characters. Generous for real names and titles (the longest personal names in
 * CRM exports stay far under 200), small enough that a wrong delimiter or a pasted paragraph is
 * caught rather than stored and later rendered into an email.
 */
export const MAX_FIELD_CHARS = {
  first_name: 256,
  last_name: 256,
  company: 256,
  title: 256,
  // E.164 is at most 15 digits; 64 leaves room for '+1 (555) 010-0000 ext. 1234' as written.
  phone: 64,
  // The longest country name in the table is under 60 characters.
  country: 64,
  region: 256,
  // The longest IANA zone name is 32 characters ('America/Argentina/ComodRivadavia').
  time_zone: 64,
} as const;

/** A custom field value: room for a personalised opening paragraph, not for a document. */
export const MAX_CUSTOM_VALUE_CHARS = 4096;
/** Custom field names are keys in templates ('{{custom.deal_size}}'). */
export const MAX_CUSTOM_NAME_CHARS = 63;

/** More columns than this is not a lead list but a wrong delimiter or a binary file. */
export const MAX_COLUMNS = 500;

/**
 * A quoted field may hold line breaks, but a record that runs past this many characters or physical
 * lines is taken to be an unbalanced quote: its first line is rejected and reading resumes on the
 * next line, so one stray quote cannot swallow the rest of the file (or all of memory).
 */
export const MAX_RECORD_CHARS = 1 << 20;
export const MAX_RECORD_LINES = 1000;
/** The header line must appear within this many characters (sniffing the delimiter reads that far). */
export const MAX_HEADER_CHARS = 1 << 16;
/** The raw text of a malformed line kept in the reject file, beyond which it is cut with a marker. */
export const MAX_RAW_KEPT_CHARS = 1 << 16;

/** How many issues (rejects and warnings) the result keeps as examples; onIssue sees all of them. */
export const MAX_ISSUE_SAMPLES = 100;
