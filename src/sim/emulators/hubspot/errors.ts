import type { EmulatorReply } from '../server.ts';

/**
 * HubSpot's error answers. The shape is the one its error-handling page shows,
 * `{"status":"error","message","correlationId","category","errors":[{"message","in","code","context"}],"context","subCategory","links"}`
 * (every field optional to a client); the rate-limit answer is the one the usage-guidelines page and
 * HubSpot's own client (RetryDecorator in @hubspot/api-client) read: `errorType: "RATE_LIMIT"` and a
 * `policyName` of TEN_SECONDLY_ROLLING or SECONDLY. Message texts HubSpot's docs do not print are
 * marked unverified where they are built.
 */

let seq = 0;
/** A UUID-shaped correlationId, counted so that runs are repeatable. */
export const correlationId = () => `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;

export interface ErrorExtras {
  errors?: Array<Record<string, unknown>>;
  context?: Record<string, string[]>;
  subCategory?: string;
  links?: Record<string, string>;
  headers?: Record<string, string>;
}

export function hubspotError(status: number, category: string, message: string, extras: ErrorExtras = {}): EmulatorReply {
  const { headers, ...rest } = extras;
  return { status, headers, body: { status: 'error', message, correlationId: correlationId(), category, ...rest } };
}

/** One property's refusal, as HubSpot lists them inside "Property values were not valid: [...]". */
export interface PropertyProblem {
  name: string;
  error: 'PROPERTY_DOESNT_EXIST' | 'INVALID_OPTION' | 'INVALID_INTEGER' | 'INVALID_DATE' | 'READ_ONLY_VALUE' | 'INVALID_LENGTH';
  message: string;
}

function rateLimited(policyName: 'TEN_SECONDLY_ROLLING' | 'SECONDLY', message: string, app: string, headers: Record<string, string>): EmulatorReply {
  // groupName's format is unverified. category RATE_LIMITS is what the 2019 changelog on error
  // responses announced for rate-limit errors; errorType is what HubSpot's client reads.
  return {
    status: 429,
    headers,
    body: { status: 'error', message, errorType: 'RATE_LIMIT', correlationId: correlationId(), policyName, groupName: `publicapi:private-app:${app}`, category: 'RATE_LIMITS' },
  };
}

/** Builders for the documented answers, for the routes and for tests to inject (faults 'respond'). */
export const hubspotErrors = {
  /** Missing, unknown or revoked token. */
  invalidAuthentication: () =>
    hubspotError(
      401,
      'INVALID_AUTHENTICATION',
      'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
    ),
  /** An expired token (HubSpot words it for OAuth tokens; private app tokens are revoked, not expired: text unverified for them). */
  expiredAuthentication: () => hubspotError(401, 'EXPIRED_AUTHENTICATION', 'The OAuth token used to make this call expired.'),
  missingScopes: (scopes: readonly string[]) =>
    hubspotError(403, 'MISSING_SCOPES', "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.", {
      errors: [{ message: 'One or more of the following scopes are required.', context: { requiredGranularScopes: [...scopes] } }],
      links: { scopes: 'https://developers.hubspot.com/scopes' },
    }),
  validation: (message: string, extras: ErrorExtras = {}) => hubspotError(400, 'VALIDATION_ERROR', message, extras),
  /** The answer to values HubSpot refuses; the list is JSON inside the message, as HubSpot sends it. */
  propertyValues: (problems: readonly PropertyProblem[]) =>
    hubspotError(
      400,
      'VALIDATION_ERROR',
      `Property values were not valid: ${JSON.stringify(problems.map((p) => ({ isValid: false, message: p.message, error: p.error, name: p.name })))}`,
    ),
  /** A required property left out (engagements: hs_timestamp). Text unverified. */
  requiredMissing: (objectLabel: string, names: readonly string[]) =>
    hubspotError(400, 'VALIDATION_ERROR', `Error creating ${objectLabel}. Some required properties were not set.`, { context: { properties: [...names] } }),
  /** More inputs than a batch takes (100). Text unverified. */
  tooManyInputs: (got: number, max: number) => hubspotError(400, 'VALIDATION_ERROR', `Batch input limit of ${max} exceeded: got ${got} inputs.`),
  unknownObjectType: (name: string) => hubspotError(400, 'VALIDATION_ERROR', `Unable to infer object type from: ${name}`),
  contactExists: (existingId: string) => hubspotError(409, 'CONFLICT', `Contact already exists. Existing ID: ${existingId}`),
  /** Properties API: a property or group by that name exists. Text and category unverified. */
  alreadyExists: (what: 'Property' | 'Property group', name: string) => hubspotError(409, 'OBJECT_ALREADY_EXISTS', `${what} named '${name}' already exists.`),
  notFound: () => hubspotError(404, 'OBJECT_NOT_FOUND', 'resource not found'),
  /** The burst limit: `limit` requests per rolling `windowMs`; headers as on every non-search answer. */
  tenSecondly: (app: string, headers: Record<string, string>) => rateLimited('TEN_SECONDLY_ROLLING', 'You have reached your ten_secondly_rolling limit.', app, headers),
  /** The search endpoints' own per-second limit; search answers carry no rate-limit headers (documented). */
  secondly: (app: string) => rateLimited('SECONDLY', 'You have reached your secondly limit.', app, {}),
  /** A record being written by another request (documented 423: wait at least 2 s). Text unverified. */
  locked: () => hubspotError(423, 'LOCKED', 'The object is locked by another request.'),
  internal: () => hubspotError(500, 'INTERNAL_ERROR', 'internal error'),
  /**
   * What an outage looks like from outside: a 503 from the edge, not a JSON body (what HubSpot's
   * edge sends is unverified; a connector must not depend on the body of a 5xx).
   */
  unavailable: (): EmulatorReply => ({ status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>503 Service Unavailable</h1></body></html>' }),
};
