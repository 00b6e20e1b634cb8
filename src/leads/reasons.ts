/**
 * Why a row was rejected or imported with a warning: stable codes (the reject file's 'reason'
 * column, ImportResult.rejectsByReason) with what each means. Each issue also carries a human
 * message naming the column and the value's problem.
 */
export const rejectReasons = {
  malformed_row: 'The line is not a well-formed CSV record (wrong number of fields, misplaced quote); its raw text is kept.',
  invalid_encoding: 'A field is not valid UTF-8 text (the file was probably saved in another encoding).',
  invalid_characters: 'A field holds control characters (NUL, escape…) that have no place in a lead.',
  too_long: 'A field is longer than its limit (see limits.ts).',
  missing_email: 'The email column is empty.',
  invalid_email: 'The email is not a deliverable address (syntax, lengths per RFC 5321, domain).',
  invalid_country: 'The country is neither an ISO 3166-1 alpha-2 code nor a country name Cadenza knows.',
  duplicate_in_file: 'An earlier valid row of the same file has the same email; the first one wins.',
  suppressed: 'The address is suppressed in this workspace (hard bounce, unsubscribe, complaint, manual).',
  erased: 'The address was erased from this workspace at its owner\'s request (its keyed hash is in the suppression list); the row is not kept, so the address is not stored again.',
  duplicate: 'A lead with this email already exists in the workspace (onDuplicate: skip).',
} as const;
export type RejectReason = keyof typeof rejectReasons;

/** The row is imported, but a value was dropped. */
export const warningReasons = {
  invalid_time_zone:
    'The time zone is not an IANA zone the tz data knows; the lead is imported without one, and due times fall back to the mailbox zone.',
} as const;
export type WarningReason = keyof typeof warningReasons;

export interface ImportIssue {
  kind: 'rejected' | 'warning';
  /** The physical line where the row starts (1 is the header). */
  line: number;
  reason: RejectReason | WarningReason;
  message: string;
}
