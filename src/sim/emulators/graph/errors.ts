import type { EmulatorReply } from '../server.ts';

/**
 * Graph's error answers (concepts/errors.md): `{"error":{"code","message","innerError":{…}}}`.
 * The emulator adds request-id/date to innerError when it sends them (emulator.ts).
 * Texts are Microsoft's where known; codes marked unverified in the notes are kept as the notes give them.
 */
export function graphError(status: number, code: string, message: string, headers?: Record<string, string>, innerCode?: string): EmulatorReply {
  const error: Record<string, unknown> = { code, message };
  if (innerCode) error.innerError = { code: innerCode, status: String(status) };
  return { status, headers, body: { error } };
}

export const graphErrors = {
  /** concepts/throttling.md's sample; Retry-After in seconds, decimals seen ('2.128'). */
  tooManyRequests: (retryAfter: string | null = '10') =>
    graphError(429, 'TooManyRequests', 'Please retry again later.', retryAfter === null ? undefined : { 'retry-after': retryAfter }, '429'),
  /** The per-mailbox concurrency limit (client code; not in the docs read). */
  applicationThrottled: (retryAfter: string | null = '1') =>
    graphError(429, 'ApplicationThrottled', 'Application is over its MailboxConcurrency limit.', retryAfter === null ? undefined : { 'retry-after': retryAfter }),
  serviceUnavailable: (retryAfter?: string) =>
    graphError(503, 'serviceNotAvailable', 'The service is temporarily unavailable.', retryAfter === undefined ? undefined : { 'retry-after': retryAfter }),
  internalServerError: () => graphError(500, 'InternalServerError', 'An internal server error occurred. The operation failed.'),
  badGateway: () => graphError(502, 'BadGateway', 'Bad Gateway'),
  gatewayTimeout: () => graphError(504, 'GatewayTimeout', 'The gateway did not receive a timely response from the upstream server.'),
  invalidAuthenticationToken: (message = 'Lifetime validation failed, the token is expired.') =>
    graphError(401, 'InvalidAuthenticationToken', message, {
      'www-authenticate': 'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"',
    }),
  accessDenied: () => graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.'),
  sendAsDenied: () =>
    graphError(
      403,
      'ErrorSendAsDenied',
      'The user account which was used to submit this request does not have the right to send mail on behalf of the specified sending account.',
    ),
  messageSubmissionBlocked: () =>
    graphError(403, 'ErrorMessageSubmissionBlocked', "Cannot send mail: the user's account has been blocked from sending."),
  mailboxNotEnabled: () => graphError(404, 'MailboxNotEnabledForRESTAPI', 'The mailbox is either inactive, soft-deleted, or is hosted on-premise.'),
  itemNotFound: () => graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.'),
  mimeInvalidBase64: () => graphError(400, 'ErrorMimeContentInvalidBase64String', 'Invalid base64 string for MIME content.'),
  mimeInvalid: () => graphError(400, 'ErrorMimeContentInvalid', 'The MIME content is invalid.'),
  noRecipients: () => graphError(400, 'ErrorInvalidRecipients', 'At least one recipient is required, but none were found.'),
  invalidRecipient: (address: string) =>
    graphError(
      400,
      'ErrorInvalidRecipients',
      `At least one recipient isn't valid., Recipient '${address}' isn't resolved. All recipients must be resolved before a message can be submitted.`,
    ),
  badRequest: (message: string) => graphError(400, 'BadRequest', message),
  tooLarge: () => graphError(413, 'RequestEntityTooLarge', 'The request is larger than the 4 MB Graph accepts.'),
};
