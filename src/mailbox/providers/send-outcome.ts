import type { Envelope, SendOutcome } from '../connectors/outcomes.ts';
import type { ApiFailure } from './call.ts';

/**
 * The parts of turning a provider call into a transport outcome (connectors/outcomes.ts)
 * that Gmail and Graph share: what the network did, and the HTTP statuses whose meaning does not
 * depend on the provider. Each transport classifies its provider's error codes first and falls
 * back to these.
 */

/** A failure that is not an HTTP error answer: the token, the network, an unreadable 2xx. */
export function nonHttpOutcome(f: Exclude<ApiFailure, { kind: 'http' }>, provider: string): SendOutcome {
  switch (f.kind) {
    case 'token':
      return f.transient
        ? { kind: 'transient', phase: 'auth', reason: f.reason, responseCode: null, enhancedStatus: null, retryAfterMs: null }
        : { kind: 'auth_failed', phase: 'auth', reason: f.reason, responseCode: null };
    case 'malformed':
      // The status said yes; only the details are unreadable. A 2xx is an acceptance.
      return accepted(`${f.status} (unreadable answer: ${f.reason})`, null, null);
    case 'network': {
      const why = `${provider}: ${f.timedOut ? 'timeout: ' : f.aborted ? 'aborted: ' : ''}${f.reason}`;
      if (f.stage === 'response') {
        // The status line came and then the connection broke: a 2xx is still an acceptance.
        if (f.status !== null && f.status >= 200 && f.status < 300) return accepted(`${f.status} (answer cut off)`, null, null);
        if (f.status !== null) return byStatus(f.status, why, null);
        return { kind: 'ambiguous', phase: 'http_response', reason: why, sentCopy: 'server' };
      }
      return {
        kind: 'transient',
        phase: f.stage === 'connect' ? 'connect' : 'http_request',
        reason: why,
        responseCode: null,
        enhancedStatus: null,
        retryAfterMs: null,
      };
    }
  }
}

export function accepted(response: string, providerId: string | null, threadId: string | null): Extract<SendOutcome, { kind: 'accepted' }> {
  return { kind: 'accepted', response, providerId, bounced: [], sentCopy: 'server', threadId };
}

/**
 * What an HTTP status means on its own, for answers the provider-specific code did not recognise.
 * 502 and 504 are ambiguous, unlike other 5xx: they come from a front end that forwarded the whole
 * request and then lost the backend's answer (or gave up waiting for it), so the backend may have
 * sent the message. 500 and 503 are the service itself saying it failed or is unavailable.
 */
export function byStatus(status: number, reason: string, retryAfterMs: number | null): SendOutcome {
  if (status === 401) return { kind: 'auth_failed', phase: 'auth', reason, responseCode: status };
  if (status === 502 || status === 504) return { kind: 'ambiguous', phase: 'http_response', reason, sentCopy: 'server' };
  if (status === 408 || status === 429 || status >= 500) {
    return { kind: 'transient', phase: 'http_response', reason, responseCode: status, enhancedStatus: null, retryAfterMs };
  }
  return { kind: 'rejected', phase: 'http_response', reason, responseCode: status, enhancedStatus: null };
}

/**
 * A provider that refuses the recipient without saying which one (Gmail 'Invalid To header',
 * Graph ErrorInvalidRecipients): with a single recipient it can only be that one, a bounce with
 * RFC 3463 5.1.3 (bad destination mailbox address syntax); with several, no one can be blamed and
 * the message is rejected.
 */
export function recipientRefused(envelope: Envelope, status: number, diagnostic: string): SendOutcome {
  if (envelope.to.length === 1) {
    return { kind: 'bounce', recipients: [{ recipient: envelope.to[0]!, responseCode: null, enhancedStatus: '5.1.3', diagnostic }] };
  }
  return { kind: 'rejected', phase: 'http_response', reason: diagnostic, responseCode: status, enhancedStatus: null };
}

/**
 * A message over what the provider's send call takes is refused before any request: it could
 * never be accepted, so the request fails rather than retrying.
 */
export function oversize(rawBytes: number, maxBytes: number, what: string): Extract<SendOutcome, { kind: 'rejected' }> | null {
  if (rawBytes <= maxBytes) return null;
  return { kind: 'rejected', phase: 'http_request', reason: `message of ${rawBytes} bytes is over the ${maxBytes} bytes ${what}`, responseCode: null, enhancedStatus: null };
}
