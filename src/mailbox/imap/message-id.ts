import { cadenzaError } from '../../common/errors.ts';

/**
 * A Message-ID as Cadenza writes and searches it: '<left@right>' (RFC 5322 msg-id), printable
 * ASCII without spaces, quotes or backslashes (they would need quoting in an IMAP string), at
 * most 998 bytes (the line limit). Anything else is refused before it reaches a server: a CR/LF
 * would end the IMAP command early, and a needle without its brackets could match other
 * messages' ids (IMAP SEARCH HEADER matches substrings).
 */
export function assertMessageId(messageId: string): void {
  if (typeof messageId !== 'string' || messageId.length > 998 || !/^<[\x21\x23-\x3b\x3d\x3f-\x5b\x5d-\x7e]+@[\x21\x23-\x3b\x3d\x3f-\x5b\x5d-\x7e]+>$/.test(messageId)) {
    throw cadenzaError('INVALID_INPUT', `not a Message-ID of the form <left@right>: ${JSON.stringify(String(messageId).slice(0, 100))}`);
  }
}

/** Message-IDs compare exactly, except for the surrounding white space a header may carry. */
export function sameMessageId(a: string | undefined | null, b: string): boolean {
  return typeof a === 'string' && a.trim() === b.trim();
}
