import type { EmulatorReply } from '../server.ts';

/**
 * Gmail's error answers, shaped as developers.google.com/workspace/gmail/api/guides/handle-errors
 * shows them: `{"error":{"code","message","errors":[{"domain","reason","message"}],"status"}}`.
 * Message texts are the ones Google's servers send where known.
 */
export function gmailError(
  code: number,
  reason: string,
  message: string,
  opts: { domain?: string; status?: string; headers?: Record<string, string>; location?: string } = {},
): EmulatorReply {
  const item: Record<string, string> = { message, domain: opts.domain ?? 'global', reason };
  if (opts.location) {
    item.location = opts.location;
    item.locationType = 'header';
  }
  const error: Record<string, unknown> = { code, message, errors: [item] };
  if (opts.status) error.status = opts.status;
  return { status: code, headers: opts.headers, body: { error } };
}

/** Builders for the documented answers, for tests to inject (faults 'respond') and for the routes. */
export const gmailErrors = {
  badRequest: (message: string) => gmailError(400, 'badRequest', message, { status: 'INVALID_ARGUMENT' }),
  invalidArgument: (message: string) => gmailError(400, 'invalidArgument', message, { status: 'INVALID_ARGUMENT' }),
  authError: () =>
    gmailError(
      401,
      'authError',
      'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      {
        status: 'UNAUTHENTICATED',
        location: 'Authorization',
        headers: { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
      },
    ),
  userRateLimitExceeded: () => gmailError(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded', { domain: 'usageLimits' }),
  rateLimitExceeded403: () => gmailError(403, 'rateLimitExceeded', 'Rate Limit Exceeded', { domain: 'usageLimits' }),
  dailyLimitExceeded: () => gmailError(403, 'dailyLimitExceeded', 'Daily Limit Exceeded', { domain: 'usageLimits' }),
  domainPolicy: () =>
    gmailError(403, 'domainPolicy', 'The domain administrators have disabled Gmail apps.', { status: 'PERMISSION_DENIED' }),
  insufficientPermissions: () =>
    gmailError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', { status: 'PERMISSION_DENIED' }),
  delegationDenied: (user: string) => gmailError(403, 'forbidden', `Delegation denied for ${user}`, { status: 'PERMISSION_DENIED' }),
  mailServiceNotEnabled: () => gmailError(400, 'failedPrecondition', 'Mail service not enabled', { status: 'FAILED_PRECONDITION' }),
  notFound: () => gmailError(404, 'notFound', 'Requested entity was not found.', { status: 'NOT_FOUND' }),
  /** Per-user concurrency; with retryAfterSeconds, a Retry-After header too (whether Google sends one is unverified). */
  tooManyConcurrent: (retryAfterSeconds?: number) =>
    gmailError(429, 'rateLimitExceeded', 'Too many concurrent requests for user', {
      domain: 'usageLimits',
      status: 'RESOURCE_EXHAUSTED',
      headers: retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
    }),
  /** The daily sending cap: the time to retry is in the message text. */
  sendingLimit: (retryAt: Date) =>
    gmailError(429, 'rateLimitExceeded', `User-rate limit exceeded.  Retry after ${retryAt.toISOString()} (Mail sending)`, {
      domain: 'usageLimits',
      status: 'RESOURCE_EXHAUSTED',
    }),
  backendError: (code: 500 | 502 | 503 | 504 = 500) =>
    gmailError(code, 'backendError', code === 503 ? 'The service is currently unavailable.' : 'Backend Error', {
      status: code === 503 ? 'UNAVAILABLE' : 'INTERNAL',
    }),
};
