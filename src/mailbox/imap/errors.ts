import { cadenzaError, isCadenzaError, type CadenzaError } from '../../common/errors.ts';

/**
 * imapflow's errors, turned into Cadenza's codes. The server's words go into details (never the
 * credentials: imapflow does not put them in its errors, and we add none).
 */
export function imapError(e: unknown, doing: string): CadenzaError {
  if (isCadenzaError(e)) return e;
  const err = (e ?? {}) as {
    message?: string;
    code?: string;
    authenticationFailed?: boolean;
    serverResponseCode?: string;
    responseText?: string;
    responseStatus?: string;
    mailboxMissing?: boolean;
  };
  const details = {
    doing,
    code: err.code ?? null,
    serverResponseCode: err.serverResponseCode ?? null,
    response: err.responseText ?? null,
  };
  const text = err.responseText || err.message || String(e);
  if (err.authenticationFailed || err.serverResponseCode === 'AUTHENTICATIONFAILED') {
    return cadenzaError('MAILBOX_AUTH_FAILED', `IMAP ${doing}: the server refused the credentials (${text})`, details);
  }
  // imapflow flags a SELECT/EXAMINE of a missing folder (Dovecot: NO [NONEXISTENT], RFC 5530).
  if (err.mailboxMissing || err.serverResponseCode === 'NONEXISTENT') {
    return cadenzaError('MAILBOX_FOLDER_NOT_FOUND', `IMAP ${doing}: no such folder (${text})`, details);
  }
  return cadenzaError('MAILBOX_UNAVAILABLE', `IMAP ${doing}: ${text}`, details);
}
