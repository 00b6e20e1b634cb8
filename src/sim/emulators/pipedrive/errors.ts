import type { EmulatorReply } from '../server.ts';

/**
 * Pipedrive's error answers. Two shapes:
 *
 *   v1 (/v1/…) and the gateway (auth, rate limits):
 *     {"success": false, "error": <text>, "errorCode": <status>, "error_info": <text>, "data": null, "additional_data": null}
 *   v2 (/api/v2/…) validation:
 *     {"success": false, "error": <text>, "code": "ERR_BAD_REQUEST"} (as a developer quoted a v2 400 on
 *     devcommunity.pipedrive.com: "'person_id' is a read-only field. Add a primary participant to set
 *     'person_id' instead.")
 *
 * The 401 text "unauthorized access" is Pipedrive's documented answer to a missing or wrong token;
 * the texts of the 429s, the 404s and the other 400s are unverified and say so.
 */
const errorInfo = 'Please check developers.pipedrive.com for more information about Pipedrive API.';

export function v1Error(status: number, error: string, headers?: Record<string, string>): EmulatorReply {
  return { status, headers, body: { success: false, error, errorCode: status, error_info: errorInfo, data: null, additional_data: null } };
}

export function v2Error(status: number, error: string, code: string): EmulatorReply {
  return { status, body: { success: false, error, code } };
}

export const pipedriveErrors = {
  unauthorized: () => v1Error(401, 'unauthorized access'),
  /** The burst limit per token per 2-second window (text unverified). */
  tooManyRequests: (headers: Record<string, string>) => v1Error(429, 'Request over limit', headers),
  /** The company's daily token budget is spent (text unverified). */
  dailyBudgetSpent: (headers: Record<string, string>) => v1Error(429, 'Daily rate limit exceeded. The token budget resets at the start of the next day.', headers),
  badRequestV2: (error: string) => v2Error(400, error, 'ERR_BAD_REQUEST'),
  badRequestV1: (error: string) => v1Error(400, error),
  notFoundV2: (what: string) => v2Error(404, `${what} not found`, 'ERR_NOT_FOUND'),
  /** What a test sees during outage(): the body Pipedrive's edge sends then is unverified. */
  unavailable: () => v1Error(503, 'Service unavailable'),
  internal: () => v1Error(500, 'Internal server error'),
  /** Not a Pipedrive answer: the emulator does not serve what was asked (a loud gap, never a wrong answer). */
  notImplemented: (what: string) => v1Error(400, `pipedrive emulator: ${what} is not implemented`),
};
