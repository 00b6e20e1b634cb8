import type { EmulatorReply } from '../server.ts';

/**
 * Twenty's REST error answers. Every REST error goes through one handler
 * (twenty-server core-modules/exception-handler/http-exception-handler.service.ts), which answers
 * `{"statusCode": <status>, "error": <exception name or code>, "messages": [<message>]}`.
 * The authentication texts are those of Twenty's own integration tests
 * (test/integration/rest/suites/rest-api-core-authentication.integration-spec.ts). Where a text
 * below was not found in Twenty's documentation or source it says "unverified".
 */
export function twentyError(status: number, error: string, message: string, headers?: Record<string, string>): EmulatorReply {
  return { status, headers, body: { statusCode: status, error, messages: [message] } };
}

export const twentyErrors = {
  badRequest: (message: string) => twentyError(400, 'BadRequestException', message),
  /** No Authorization header at all: Twenty answers 403, not 401 (its integration test says so). */
  missingToken: () => twentyError(403, 'FORBIDDEN_EXCEPTION', 'Missing authentication token'),
  invalidToken: () => twentyError(401, 'UNAUTHENTICATED', 'Token invalid.'),
  /** A revoked or expired API key. Twenty's text for an expired one; a revoked one: unverified. */
  expiredToken: () => twentyError(401, 'UNAUTHENTICATED', 'Token has expired.'),
  /**
   * The throttler's refusal (core-modules/throttler: "Limit reached (<n> tokens per <ms> ms)",
   * turned into an HttpException 429 by throttler-to-rest-api-exception-handler.util.ts). Twenty's
   * source sets no Retry-After header; a test that wants one passes it (fault 'respond').
   */
  tooManyRequests: (limit: number, windowMs: number, headers?: Record<string, string>) =>
    twentyError(429, 'HttpException', `Limit reached (${limit} tokens per ${windowMs} ms)`, headers),
  /** What a test sees while the server is down (outage()): the body a proxy in front sends is unverified. */
  serviceUnavailable: () => twentyError(503, 'ServiceUnavailableException', 'Service Unavailable'),
  internal: (message = 'Internal server error') => twentyError(500, 'InternalServerErrorException', message),
  /** Not a Twenty answer: the emulator does not implement what was asked (a loud gap, never a wrong answer). */
  notImplemented: (what: string) => twentyError(400, 'BadRequestException', `twenty emulator: ${what} is not implemented`),
};
