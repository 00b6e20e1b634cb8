/**
 * Every error Cadenza raises on purpose has a stable code, listed here with what it means.
 * Domain code returns or throws these; only api/ maps them to HTTP statuses and cli/ to exit codes.
 */
export const errorCodes = {
  INVALID_INPUT: 'The input failed validation; details name each problem.',
  NOT_FOUND: 'The referenced object does not exist in this workspace.',
  CONFLICT: 'The change conflicts with the current state (already exists, already terminal).',
  SUPPRESSED: 'The address is suppressed in this workspace (hard bounce, unsubscribe, manual).',
  ALREADY_ENROLLED: 'The lead is already enrolled in this sequence.',
  INVALID_TRANSITION: 'The event does not apply to the enrollment in its current state.',
  UNKNOWN_TIME_ZONE: 'The IANA time zone is not known.',
  MIGRATION_FAILED: 'A database migration failed; the database is left at the previous version.',
  STORE_UNAVAILABLE: 'The database could not be reached.',
  CONFIG_INVALID: 'The configuration is invalid.',
  MAILBOX_UNAVAILABLE: "The mailbox's server could not be reached or did not answer as expected (connection, TLS, timeout, protocol).",
  MAILBOX_AUTH_FAILED: "The mailbox's server refused its credentials (password, app password or OAuth token).",
  CRM_AUTH_FAILED: 'Connecting a CRM with OAuth failed: the consent was refused, the sign-in (state) was unknown, used, expired or started by someone else, or the CRM refused the authorization code; the message says which in plain words.',
  MAIL_MALFORMED: 'The message could not be parsed safely (empty, too large, binary, too many parts or headers, too deep, too slow); it is quarantined with the reason.',
  UNAUTHENTICATED: 'The call needs a signed-in session or an API key, and has neither (or it expired).',
  FORBIDDEN: 'The caller is signed in but may not do this (role too low, or the CSRF token is missing or wrong).',
  RATE_LIMITED: 'Too many attempts; wait and try again.',
  MAILBOX_FOLDER_NOT_FOUND: 'The mailbox has no folder for this role (Sent, Junk, Trash), neither marked SPECIAL-USE nor by a known name.',
  SEND_REJECTED: "The mailbox's server (or its settings) refused the message permanently; it was not sent.",
  SEND_UNCONFIRMED: "The message was handed to the server and no answer came, and the Sent folder did not show it in time: details.sentFolder says whether it was searched, details.retrySafe whether sending again (with the same idempotency key) is safe.",
  TEMPLATE_FAILS_FOR_ALL: "A sequence's email template renders for none of the workspace's leads (details.failures: step, variant, reason); saving again with confirm: true saves it anyway.",
  ROLE_KEEPS_CRASHING: 'A role process supervised by `cadenza start --supervise` ended on its own again and again soon after each start; the supervisor stopped every role.',
  BACKUP_FAILED: 'pgBackRest refused or failed a backup, a restore or a listing of the backups; the message is its own reason (a running server, a missing stanza, an unreachable repository).',
  SENDER_UNAVAILABLE: 'What was asked needs a mailbox credential, opened only by the sender role (least privilege), and no sender process took it: none is running, or none took it in time. Nothing was done.',
  NOT_DIALLABLE: "The lead has no number that can be dialled (none, or none with an E.164 form); details.reason says why.",
  OUTSIDE_CALLING_HOURS: "It is night where the lead is (outside 08:00-21:00 in the lead's zone); details.local gives the lead's time. Dial with allowOutsideHours to call anyway.",
  WORKER_POOL_CLOSED: 'The ingestion worker pool was shut down (drain) while a message waited for it; the batch is not committed and is pulled again.',
  RECORDING_INVALID: 'A call recording could not be transcribed as given (not a WAV, an unsupported encoding or sample rate, truncated, too long or too large); details.reason says which. Retrying does not help.',
  CAPTURE_INVALID: "A call's packet capture (rtpengine's pcap and metadata) could not be turned into a recording: not a pcap, truncated, no G.711 audio, too long; details.reason says which. The spool files are quarantined, never retried.",
  TRANSCRIPTION_MODEL_INVALID: 'The configured speech model could not be loaded (a file missing, unreadable, or not a streaming transducer sherpa-onnx accepts); details name the file.',
} as const;

export type ErrorCode = keyof typeof errorCodes;

export class CadenzaError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CadenzaError';
    this.code = code;
    this.details = details;
  }
}

export function cadenzaError(code: ErrorCode, message: string, details?: Record<string, unknown>): CadenzaError {
  return new CadenzaError(code, message, details);
}

export function isCadenzaError(e: unknown, code?: ErrorCode): e is CadenzaError {
  return e instanceof CadenzaError && (code === undefined || e.code === code);
}
