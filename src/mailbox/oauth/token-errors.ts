import * as oauth from 'oauth4webapi';

/**
 * What a failed token request means for the mailbox, from what oauth4webapi threw:
 *
 *   revoked    400 invalid_grant: the refresh token is dead (revoked by the user or an admin,
 *              expired, unused for six months, password change on Google, rotated away). Only a
 *              new consent fixes it: pause the mailbox, never ask again with the same token.
 *   client     invalid_client, unauthorized_client, invalid_scope…: Cadenza's app registration or
 *              secret is refused. Asking again cannot help either.
 *   transient  no answer, a timeout, 5xx, 429, temporarily_unavailable: ask again later, with
 *              backoff.
 *   invalid    an answer that failed validation (the ID token's issuer, audience, nonce or
 *              expiry): refused, never used.
 *
 * Google: developers.google.com/identity/protocols/oauth2 (invalid_grant "Token has been expired
 * or revoked."); Microsoft: learn.microsoft.com/entra/identity-platform (400 invalid_grant with an
 * AADSTS code in error_description).
 */
export type TokenFailure = { kind: 'revoked' | 'client' | 'transient' | 'invalid'; error: string; status: number | null };

const transientErrors = new Set(['temporarily_unavailable', 'server_error']);

export function classifyTokenFailure(e: unknown): TokenFailure {
  if (e instanceof oauth.ResponseBodyError) {
    const status = e.status;
    if (status >= 500 || status === 429 || transientErrors.has(e.error)) return { kind: 'transient', error: e.error, status };
    if (e.error === 'invalid_grant') return { kind: 'revoked', error: e.error, status };
    return { kind: 'client', error: e.error, status };
  }
  if (e instanceof oauth.OperationProcessingError) {
    // A non-conforming answer: judge by its status when there was one (an HTML 503 page from a
    // proxy is transient; a 400 or 401 without a proper body still refuses the request).
    const res = (e as { cause?: unknown }).cause;
    if (res instanceof Response) {
      if (res.status === 400 || res.status === 401) return { kind: 'client', error: `http_${res.status}`, status: res.status };
      return { kind: 'transient', error: e.code ?? 'invalid_response', status: res.status };
    }
    // A well-formed answer that failed validation (ID token issuer, audience, nonce, expiry).
    return { kind: 'invalid', error: e.code ?? 'invalid_response', status: null };
  }
  // fetch's TypeError (refused, reset, DNS), an abort by our deadline.
  return { kind: 'transient', error: (e as Error)?.name === 'AbortError' ? 'timeout' : 'network', status: null };
}
