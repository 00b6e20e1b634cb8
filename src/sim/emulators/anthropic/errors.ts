import type { EmulatorReply } from '../server.ts';

/**
 * Anthropic API error answers as documented: HTTP status, then a JSON body
 * {"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}; 429 carries
 * retry-after (seconds); 529 is overloaded_error (the API is busy for everyone, not a limit of yours).
 */

let seq = 0;
export const requestId = () => `req_emu${String(++seq).padStart(8, '0')}`;

function error(status: number, type: string, message: string, headers: Record<string, string> = {}): EmulatorReply {
  const id = requestId();
  return { status, headers: { 'request-id': id, ...headers }, body: { type: 'error', error: { type, message }, request_id: id } };
}

export const anthropicErrors = {
  invalidRequest: (message: string) => error(400, 'invalid_request_error', message),
  authentication: () => error(401, 'authentication_error', 'invalid x-api-key'),
  permission: () => error(403, 'permission_error', 'Your API key does not have permission to use the specified resource.'),
  notFound: () => error(404, 'not_found_error', 'The requested resource could not be found.'),
  requestTooLarge: () => error(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
  rateLimited: (retryAfterSeconds: number) =>
    error(429, 'rate_limit_error', 'This request would exceed your organization’s rate limit.', { 'retry-after': String(retryAfterSeconds) }),
  api: () => error(500, 'api_error', 'An unexpected error has occurred internal to Anthropic’s systems.'),
  overloaded: (retryAfterSeconds?: number) =>
    error(529, 'overloaded_error', 'Overloaded', retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
  /** Not an Anthropic answer: what a proxy in the way might send. */
  garbage: (): EmulatorReply => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>502 Bad Gateway</body></html>' }),
};
